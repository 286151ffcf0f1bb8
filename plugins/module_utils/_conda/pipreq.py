# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One line of an environment.yml ``pip:`` section, read as pip reads a requirements file.

conda hands the section to ``pip install -r`` as a requirements file, so every line is
one of pip's requirement-file lines: an option (``--index-url URL``, ``-r FILE``,
``-e PATH|URL``, ...), a URL or local path (a directory or an archive), or a PEP 508
requirement (``name[extras] specifiers ; marker``, ``name @ URL``), optionally followed
by per-requirement options (``--hash=sha256:...``).

The requirement itself is parsed with ``packaging.requirements`` (the library pip
vendors) when it is importable, always on the controller; on a node without it a
conservative regular grammar is the lenient fallback.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

try:
    from packaging.requirements import InvalidRequirement, Requirement
    HAS_PACKAGING = True
except ImportError:  # pragma: no cover - exercised on nodes without packaging
    HAS_PACKAGING = False
    InvalidRequirement = Requirement = None

# pip's requirement-file options (pip/_internal/req/req_file.py), and whether each takes a value.
LINE_OPTIONS = {
    '-i': True, '--index-url': True, '--extra-index-url': True, '--no-index': False,
    '-c': True, '--constraint': True, '-r': True, '--requirement': True,
    '-e': True, '--editable': True, '-f': True, '--find-links': True,
    '--no-binary': True, '--only-binary': True, '--prefer-binary': False, '--require-hashes': False,
    '--pre': False, '--trusted-host': True, '--use-feature': True,
}
REQUIREMENT_OPTIONS = ('--hash', '--config-settings', '--global-option')
# pip accepts only these hash algorithms (pip/_internal/utils/hashes.py STRONG_HASHES).
HASH_LENGTHS = {'sha256': 64, 'sha384': 96, 'sha512': 128}
ARCHIVE_SUFFIXES = ('.whl', '.zip', '.tar.gz', '.tgz', '.tar.bz2', '.tbz', '.tar.xz', '.txz', '.tar')
_COMMENT_RE = re.compile(r'(^|\s+)#.*$')
_URL_RE = re.compile(r'^(?:(?:git|hg|svn|bzr)\+)?(?:https?|file|ssh|git)://\S+$')
_EGG_RE = re.compile(r'[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)')
_HASH_RE = re.compile(r'^([a-z0-9]+):([0-9a-fA-F]+)$')
_WHEEL_NAME_RE = re.compile(r'^([A-Za-z0-9][A-Za-z0-9._]*)-[0-9]')
# The lenient grammar (no packaging): name, extras, specifiers, marker, or name @ URL.
_NAME_RE = re.compile(r'^(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?P<rest>.*)$')
_EXTRAS_RE = re.compile(r'^\[\s*[A-Za-z0-9._-]+(?:\s*,\s*[A-Za-z0-9._-]+)*\s*\]')
_SPEC_RE = re.compile(
    r'^\(?\s*(?:===|==|!=|<=|>=|~=|<|>)\s*[A-Za-z0-9_.*+!-]+'
    r'(?:\s*,\s*(?:===|==|!=|<=|>=|~=|<|>)\s*[A-Za-z0-9_.*+!-]+)*\s*\)?$'
)


class PipLineError(ValueError):
    """A line pip would refuse; the message says why."""


def _entry(kind, line, name=None, op='', version=None, **extra):
    entry = {'kind': kind, 'name': name, 'op': op, 'version': version, 'line': line, 'manager': 'pip',
             'extras': [], 'marker': None, 'url': None, 'hashes': []}
    entry.update(extra)
    return entry


def strip_comment(line):
    return _COMMENT_RE.sub('', line).strip()


def parse_line(text, strict=None):
    """The parsed line (a dict), or PipLineError. ``strict`` (packaging's parser) needs packaging importable;
    without it, or with ``strict=False``, the lenient grammar is used."""
    strict = HAS_PACKAGING if strict is None else (strict and HAS_PACKAGING)
    if not isinstance(text, str):
        raise PipLineError('not a string')
    line = strip_comment(text)
    if not line:
        raise PipLineError('empty requirement')
    if line.startswith('-'):
        return _option_line(line)
    requirement, options = _split_options(line)
    hashes = _hashes(options)
    found = _location(requirement, line)
    if found is None:
        found = _requirement(requirement, line, strict)
    found['hashes'] = hashes
    return found


def _option_value(text):
    """``--opt=value`` or ``--opt value`` -> (option, value)."""
    match = re.match(r'^(-{1,2}[A-Za-z][A-Za-z-]*)(?:=|\s+|$)(.*)$', text)
    if match is None:
        raise PipLineError('malformed option %r' % text)
    return match.group(1), match.group(2).strip()


def _option_line(line):
    option, value = _option_value(line)
    if option not in LINE_OPTIONS:
        raise PipLineError('unknown pip option %s (requirement files accept: %s)' % (option, ', '.join(sorted(LINE_OPTIONS))))
    if LINE_OPTIONS[option] and not value:
        raise PipLineError('pip option %s needs a value' % option)
    if not LINE_OPTIONS[option] and value:
        raise PipLineError('pip option %s takes no value, got %r' % (option, value))
    if option in ('-r', '--requirement', '-c', '--constraint'):
        return _entry('include', line, url=value)
    if option in ('-e', '--editable'):
        found = _location(value, line, editable=True)
        if found is None:
            raise PipLineError('-e needs a local directory or a VCS URL, got %r' % value)
        return found
    return _entry('option', line)


def _split_options(line):
    """``req --hash=sha256:... --hash ...`` -> (req, [(option, value)])."""
    parts = re.split(r'\s+(?=--)', line)
    options = []
    for part in parts[1:]:
        option, value = _option_value(part)
        if option not in REQUIREMENT_OPTIONS:
            raise PipLineError('%s is not an option a requirement line accepts (%s)' % (option, ', '.join(REQUIREMENT_OPTIONS)))
        if not value:
            raise PipLineError('%s needs a value' % option)
        options.append((option, value))
    return parts[0].strip(), options


def _hashes(options):
    hashes = []
    for option, value in options:
        if option != '--hash':
            continue
        match = _HASH_RE.match(value)
        if not match or match.group(1) not in HASH_LENGTHS:
            raise PipLineError('--hash=%s: write it as ALGORITHM:HEX with ALGORITHM one of %s'
                               % (value, ', '.join(sorted(HASH_LENGTHS))))
        if len(match.group(2)) != HASH_LENGTHS[match.group(1)]:
            raise PipLineError('--hash=%s: a %s digest has %d hex digits, this one %d'
                               % (value, match.group(1), HASH_LENGTHS[match.group(1)], len(match.group(2))))
        hashes.append(value.lower())
    return hashes


def _looks_like_path(text):
    return text.startswith(('.', '/', '~')) or '/' in text or text.lower().endswith(ARCHIVE_SUFFIXES)


def _location(text, line, editable=False):
    """A URL or local path line (pip's install_req_from_line), or None when ``text`` is neither."""
    target = text.split(';', 1)[0].strip() if ' ;' in text or '; ' in text else text.strip()
    if re.match(r'^[A-Za-z][A-Za-z0-9+.-]*://', target):
        if not _URL_RE.match(target):
            raise PipLineError('not a URL pip can fetch: %r' % target)
        kind = 'url'
    elif _looks_like_path(target) and ' ' not in target and '@' not in target.split('/', 1)[0]:
        kind = 'path'
    else:
        return None
    egg = _EGG_RE.search(target)
    name = egg.group(1) if egg else _archive_name(target)
    return _entry('editable' if editable else kind, line, name=name, url=target)


def _archive_name(target):
    leaf = target.rstrip('/').rsplit('/', 1)[-1].split('#', 1)[0]
    if leaf.lower().endswith('.whl'):
        match = _WHEEL_NAME_RE.match(leaf)
        return match.group(1) if match else None
    return None


def _requirement(text, line, strict):
    if strict:
        return _strict_requirement(text, line)
    return _lenient_requirement(text, line)


def _strict_requirement(text, line):
    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        raise PipLineError('not a valid requirement: %s' % str(exc).splitlines()[0])
    if req.url is not None and not _URL_RE.match(req.url):
        raise PipLineError('%s @ %s: not a URL pip can fetch' % (req.name, req.url))
    specs = list(req.specifier)
    op, version = '', None
    if len(specs) == 1 and specs[0].operator in ('==', '===') and '*' not in specs[0].version:
        op, version = specs[0].operator, specs[0].version
    elif specs:
        op, version = 'range', ','.join(sorted(str(s) for s in specs))
    return _entry('requirement', line, name=req.name, op=op, version=version, extras=sorted(req.extras),
                  marker=str(req.marker) if req.marker else None, url=req.url)


def _lenient_requirement(text, line):
    requirement, _sep, marker = text.partition(';')
    match = _NAME_RE.match(requirement.strip())
    if not match:
        raise PipLineError('not a valid requirement')
    name, rest = match.group('name'), match.group('rest').strip()
    extras = _EXTRAS_RE.match(rest)
    if extras:
        rest = rest[extras.end():].strip()
    op, version, url = '', None, None
    if rest.startswith('@'):
        url = rest[1:].strip()
        if not _URL_RE.match(url):
            raise PipLineError('%s @ %s: not a URL pip can fetch' % (name, url))
    elif rest:
        if not _SPEC_RE.match(rest):
            raise PipLineError('not a valid version specifier: %r' % rest)
        single = re.match(r'^\(?\s*(===|==)\s*([A-Za-z0-9_.+!-]+)\s*\)?$', rest)
        if single:
            op, version = single.group(1), single.group(2)
        else:
            op, version = 'range', re.sub(r'[\s()]', '', rest)
    return _entry('requirement', line, name=name, op=op, version=version, url=url,
                  marker=marker.strip() or None)
