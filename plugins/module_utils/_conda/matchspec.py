# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""conda's version ordering and match-spec version/build semantics, in one place.

The build's pin check (module conda_env, on the node) and the drift audit (on the
controller) both decide with this module, so a pin means the same thing to both.

Versions order as conda's ``VersionOrder`` documents it: epoch ``N!``, components split
at ``.`` and ``_`` and into runs of digits and letters, a missing component is ``0``
(``1.1 == 1.1.0``), ``dev`` sorts below other words, words below numbers, ``post``
above everything. Constraints follow conda's ``VersionSpec``:

* ``1.2.3`` and ``==1.2.3``: equal versions (``torch==2.13`` is not 2.13.1);
* ``=1.2``, ``1.2*``, ``1.2.*``: the version starts with those components;
* ``*``: anything; ``1.*.3``: a glob over the version text;
* ``>=``, ``<=``, ``>``, ``<``, ``!=`` (``!=1.2.*`` excludes a prefix), ``~=``;
  ``,`` is and, ``|`` is or, parentheses group.

One deviation, for pip-installed wheels (PEP 440): a local label on the installed version
(``2.13.0+cpu``) is ignored when the constraint names none, as pip does; ``===`` is pip's
exact text match. Build strings match exactly or as a ``*`` glob (``py311*``, ``*cuda*``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_COMPONENT_RE = re.compile(r'([0-9]+|[*]+|[^0-9*]+)')
_VERSION_TEXT_RE = re.compile(r'^[*.+!_0-9a-z]+$')
_RELATION_RE = re.compile(r'^(===|==|!=|<=|>=|~=|<|>|=)(?![=<>!~])(\S+)$')
_POST = float('inf')


class InvalidSpec(ValueError):
    """A version or constraint conda would refuse."""


# ---------------------------------------------------------------- ordering


def _components(parts):
    out = []
    for part in parts:
        runs = _COMPONENT_RE.findall(part)
        if not runs:
            raise InvalidSpec('empty version component')
        converted = []
        for run in runs:
            if run.isdigit():
                converted.append(int(run))
            elif run == 'post':
                converted.append(_POST)
            elif run == 'dev':
                converted.append('DEV')  # upper case sorts below every other (lower-case) word
            else:
                converted.append(run)
        if not part[0].isdigit():
            converted.insert(0, 0)  # keep numbers and words in phase
        out.append(converted)
    return out


class Version:
    """A version as conda orders it."""

    __slots__ = ('text', 'release', 'local')

    def __init__(self, text):
        version = str(text).strip().lower()
        if not version:
            raise InvalidSpec('empty version')
        if not _VERSION_TEXT_RE.match(version) and '-' in version and '_' not in version:
            version = version.replace('-', '_')
        if not _VERSION_TEXT_RE.match(version):
            raise InvalidSpec('invalid character(s) in version %r' % (text,))
        self.text = version
        epoch, sep, rest = version.rpartition('!')
        if sep and not epoch.isdigit():
            raise InvalidSpec('the epoch of %r must be an integer' % (text,))
        main, sep, local = rest.partition('+')
        if not main or '+' in local:
            raise InvalidSpec('malformed version %r' % (text,))
        if main.endswith('_'):
            parts = main[:-1].replace('_', '.').split('.')
            parts[-1] += '_'
        else:
            parts = main.replace('_', '.').split('.')
        self.release = _components([epoch or '0'] + parts)
        self.local = _components(local.replace('_', '.').split('.')) if sep else []

    def __repr__(self):
        return 'Version(%r)' % self.text

    def without_local(self):
        twin = Version.__new__(Version)
        twin.text, twin.release, twin.local = self.text.split('+', 1)[0], self.release, []
        return twin

    def __eq__(self, other):
        return _compare(self.release, other.release) == 0 and _compare(self.local, other.local) == 0

    def __ne__(self, other):
        return not self == other

    def __lt__(self, other):
        order = _compare(self.release, other.release)
        return order < 0 if order else _compare(self.local, other.local) < 0

    def __le__(self, other):
        return self == other or self < other

    def __gt__(self, other):
        return not self <= other

    def __ge__(self, other):
        return not self < other

    __hash__ = None

    def startswith(self, prefix):
        """Whether this version begins with ``prefix``'s components (``1.2.3`` begins with ``1.2``)."""
        mine, theirs = (self.local, prefix.local) if prefix.local else (self.release, prefix.release)
        if prefix.local and _compare(self.release, prefix.release) != 0:
            return False
        last = len(theirs) - 1
        if _compare(mine[:last], theirs[:last]) != 0:
            return False
        head = mine[last] if len(mine) > last else []
        want = theirs[last]
        if _compare([head[:len(want) - 1]], [want[:-1]]) != 0:
            return False
        got = head[len(want) - 1] if len(head) >= len(want) else 0
        if isinstance(want[-1], str):
            return isinstance(got, str) and got.startswith(want[-1])
        return got == want[-1]


def _compare_atoms(left, right):
    if left == right:
        return 0
    left_word, right_word = isinstance(left, str), isinstance(right, str)
    if left_word != right_word:
        return -1 if left_word else 1  # a word (pre-release) sorts below a number
    return -1 if left < right else 1


def _compare(left, right):
    """conda's component-wise comparison; a missing component or run counts as 0."""
    for index in range(max(len(left), len(right))):
        a = left[index] if index < len(left) else []
        b = right[index] if index < len(right) else []
        for pos in range(max(len(a), len(b))):
            order = _compare_atoms(a[pos] if pos < len(a) else 0, b[pos] if pos < len(b) else 0)
            if order:
                return order
    return 0


def version(text):
    return Version(text)


# ---------------------------------------------------------------- constraints


def _split_top(text, separator):
    """Split at ``separator`` outside parentheses."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char == '(':
            depth += 1
        elif char == ')':
            depth -= 1
            if depth < 0:
                raise InvalidSpec('unbalanced parentheses in %r' % text)
        elif char == separator and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    if depth:
        raise InvalidSpec('unbalanced parentheses in %r' % text)
    parts.append(text[start:])
    return parts


def _balanced(text):
    depth = 0
    for char in text:
        depth += {'(': 1, ')': -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def _ignoring_local(wanted, test):
    """PEP 440's rule: a local label on the installed version is ignored unless the constraint names one."""
    if wanted.local:
        return test
    return lambda v: test(v.without_local())


def _relation(op, text):
    if text.endswith('.*') or (text.endswith('*') and op in ('=', '==', '!=')):
        base = text.rstrip('*').rstrip('.')
        if op in ('=', '==', '>='):
            prefix = Version(base)
            if op == '>=':
                return lambda v: v >= prefix
            return _ignoring_local(prefix, lambda v: v.startswith(prefix))
        if op == '!=':
            prefix = Version(base)
            return _ignoring_local(prefix, lambda v: not v.startswith(prefix))
        if op == '~=':
            raise InvalidSpec("'~=' cannot take a '.*' version (%s)" % text)
        text = base  # conda ignores a superfluous .* after <, <=, >
    if op == '===':
        return lambda v: v.text == text.lower()
    wanted = Version(text)
    if op == '=':
        return _ignoring_local(wanted, lambda v: v.startswith(wanted))
    if op == '~=':
        if len(wanted.release) < 3:
            raise InvalidSpec("'~=%s' needs at least two version components" % text)
        head = Version('.'.join(text.split('+', 1)[0].split('.')[:-1]))
        return lambda v: v >= wanted and v.without_local().startswith(head)
    tests = {
        '==': lambda v: v == wanted, '!=': lambda v: v != wanted,
        '<=': lambda v: v <= wanted, '>=': lambda v: v >= wanted,
        '<': lambda v: v < wanted, '>': lambda v: v > wanted,
    }
    return _ignoring_local(wanted, tests[op])


def _glob(text):
    pattern = re.compile('^(?:%s)$' % re.escape(text.lower()).replace(r'\*', '.*'))
    return lambda v: bool(pattern.match(v.text))


def _term(text):
    text = text.strip()
    if not text:
        raise InvalidSpec('empty version constraint')
    if text.startswith('(') and text.endswith(')') and _balanced(text[1:-1]):
        return _compile(text[1:-1])
    if text == '*':
        return lambda v: True
    if text[0] in '=<>!~':
        match = _RELATION_RE.match(text)
        if match is None:
            raise InvalidSpec('invalid operator in %r' % text)
        return _relation(match.group(1), match.group(2))
    if '*' in text.rstrip('*'):
        return _glob(text)
    if text.endswith('*'):
        return _relation('=', text.rstrip('*').rstrip('.'))
    return _relation('==', text)


def _compile(text):
    alternatives = []
    for alternative in _split_top(text, '|'):
        clauses = [_term(clause) for clause in _split_top(alternative, ',')]
        alternatives.append(clauses)
    return lambda v: any(all(test(v) for test in clauses) for clauses in alternatives)


def version_test(constraint):
    """A predicate ``f(version text) -> bool`` for a version constraint; raises InvalidSpec."""
    text = re.sub(r'\s+', '', str(constraint or ''))
    if text in ('', '*'):
        return lambda value: value is not None
    test = _compile(text)

    def matches(value):
        if value is None:
            return False
        try:
            return test(Version(value))
        except InvalidSpec:
            return False
    return matches


def version_satisfies(constraint, value):
    """Whether an installed version meets a constraint (``None`` means: any version, but present)."""
    return version_test(constraint)(value)


def build_test(pattern):
    """A predicate for a build string: exact, or a ``*`` glob (``py311*``, ``*cuda*``)."""
    if pattern in (None, '', '*'):
        return lambda value: True
    regex = re.compile('^%s$' % re.escape(str(pattern)).replace(r'\*', '.*'))
    return lambda value: value is not None and bool(regex.match(str(value)))


# ---------------------------------------------------------------- requirement forms


def conda_constraint(op, version_text, build=None):
    """The version constraint of a conda requirement as conda reads it.

    ``name=1.2`` is fuzzy (``=1.2``, i.e. ``1.2*``) unless a build is given (``name=1.2=py_0``
    pins 1.2 exactly); ``name==1.2`` and ``name 1.2`` are exact (``==1.2``)."""
    if not version_text:
        return ''
    version_text = re.sub(r'\s+', '', version_text)
    if not op:
        return version_text  # "numpy >=2", "python 3.11.*": the text is the constraint
    if any(c in version_text for c in ',|') or version_text.endswith('*'):
        return version_text if op in ('=', '==', '') else op + version_text
    if op == '=':
        return version_text if build else '=' + version_text
    return (op or '==') + version_text


def satisfied(pin, record):
    """Whether an installed record (``version``, ``build``) meets a pin.

    A pin is a version constraint text, None (present in any version), or a mapping with
    ``version`` and ``build``."""
    if record is None:
        return False
    if isinstance(pin, dict):
        return version_satisfies(pin.get('version'), record.get('version')) and \
            build_test(pin.get('build'))(record.get('build'))
    return version_satisfies(pin, record.get('version'))


def describe(pin):
    if isinstance(pin, dict):
        return ' '.join(str(part) for part in (pin.get('version') or '*', pin.get('build')) if part)
    return str(pin)
