# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""environment.yml and lock-file parsing and validation.

Pure functions shared by the controller-side validation (action plugin
``conda_env_spec``) and the ``conda_env`` module.  YAML is parsed with PyYAML when it
is importable (always on the controller); the module on a node without PyYAML gets the
controller's parsed results passed in by the role instead.

The accepted keys follow conda's own schema (``conda/env/env.py``: ``name``,
``channels``, ``dependencies``, ``prefix``, ``variables``) plus ``platforms``, which
conda-lock reads from the same file.  Requirement strings are checked with a
conservative grammar for conda MatchSpecs and PEP 508 pip requirements.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import re

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import matchspec
from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import pipmix
from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import pipreq

try:
    import yaml
    HAS_YAML = True
except ImportError:  # pragma: no cover - exercised on nodes without PyYAML
    yaml = None
    HAS_YAML = False

SPEC_KEYS = ('name', 'channels', 'dependencies', 'prefix', 'variables', 'platforms')
EXPLICIT_MARKER = '@EXPLICIT'
LOCK_EXPLICIT = 'explicit'
LOCK_CONDA_LOCK = 'conda-lock'

# conda refuses these characters in environment names (PrefixData.validate_name).
_ENV_NAME_RE = re.compile(r'^[A-Za-z0-9_][A-Za-z0-9_.+-]*$')
_PKG_NAME = r'[A-Za-z0-9_][A-Za-z0-9_.+-]*'
_CONDA_VERSION = r'[A-Za-z0-9_.*+!,|<>=~-]+'
_CONDA_BUILD = r'[A-Za-z0-9_.*+-]+'
# [channel[/subdir]::]name[ version[ build]] | name=version[=build] | name<op>version | name[key=value,...]
_CONDA_DEP_RE = re.compile(
    r'^(?:(?P<channel>[A-Za-z0-9_./:-]+?)::)?'
    r'(?P<name>' + _PKG_NAME + r')'
    r'(?:'
    r'(?:\s+(?=[<>=!~]*[A-Za-z0-9*])(?P<sver>' + _CONDA_VERSION + r')(?:\s+(?P<sbuild>' + _CONDA_BUILD + r'))?)'
    r'|(?:\s*(?P<op>==|=|>=|<=|!=|~=|>|<)\s*(?P<ver>[A-Za-z0-9_.*+!]+(?:\s*[,|]\s*(?:==|>=|<=|!=|~=|>|<)?\s*[A-Za-z0-9_.*+!]+)*)'
    r'(?:=(?P<build>' + _CONDA_BUILD + r'))?)'
    r')?'
    r'(?P<brackets>\[[^\]]+\])?$'
)
_EXACT_RE = re.compile(r'^[A-Za-z0-9_.+!]+$')
# Mirrors conda.misc's explicit URL pattern: .../<name>-<version>-<build>.(conda|tar.bz2)[#md5|#sha256:...]
_EXPLICIT_URL_RE = re.compile(
    r'^(?P<url>\S*?/?(?P<fn>(?P<dist>[^/\\#\s]+)(?:\.conda|\.tar\.bz2)))'
    r'(?:#(?:(?P<md5>[0-9a-f]{32})|(?:sha256:)?(?P<sha256>[0-9a-f]{64})))?$'
)
_PLATFORM_LINE_RE = re.compile(r'^#\s*platform:\s*(\S+)\s*$')
# The digests of zero bytes: no package file has them, so a lock carrying one was not made
# from real packages (conda would fail the download's checksum on every node).
EMPTY_FILE_DIGESTS = frozenset(('d41d8cd98f00b204e9800998ecf8427e',
                                'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'))


class SpecError(Exception):
    """A spec or lock problem; ``str()`` names the file and, where known, the line."""

    def __init__(self, message, source=None, line=None):
        self.message = message
        self.source = source
        self.line = line
        super(SpecError, self).__init__(self.__str__())

    def __str__(self):
        where = self.source or '<spec>'
        if self.line:
            where = '%s:%d' % (where, self.line)
        return '%s: %s' % (where, self.message)


def sha256_bytes(data):
    if not isinstance(data, bytes):
        data = data.encode('utf-8')
    return hashlib.sha256(data).hexdigest()


def sha256_file(path, chunk=1 << 20):
    digest = hashlib.sha256()
    with open(path, 'rb') as handle:
        for block in iter(lambda: handle.read(chunk), b''):
            digest.update(block)
    return digest.hexdigest()


def to_text(data, source=None):
    """UTF-8 bytes as text; anything else is a SpecError naming ``source`` and the byte offset."""
    if isinstance(data, bytes):
        try:
            return data.decode('utf-8')
        except UnicodeDecodeError as exc:
            raise SpecError('not UTF-8 text (byte 0x%02x at offset %d); save the file as UTF-8'
                            % (bytearray(data[exc.start:exc.start + 1])[0], exc.start), source)
    return data


# ---------------------------------------------------------------- requirements


def parse_conda_dep(text):
    """Split a conda MatchSpec string into a dict, or return None when it is malformed."""
    if not isinstance(text, str) or not text.strip():
        return None
    match = _CONDA_DEP_RE.match(text.strip())
    if not match:
        return None
    parts = match.groupdict()
    op, version = parts['op'], parts['ver']
    if parts['sver'] is not None:
        # "numpy 2.4.6" is conda's exact form; "numpy >=2" or "numpy 2.4.*" are ranges.
        op, version = ('==' if _EXACT_RE.match(parts['sver']) else ''), parts['sver']
    if parts['brackets']:
        bracket = _bracket_fields(parts['brackets'])
        if bracket is None:
            return None
        if version is None and bracket.get('version'):
            version = bracket['version']
            op = '==' if _EXACT_RE.match(version) else ''
    return {
        'name': parts['name'],
        'channel': parts['channel'],
        'op': op or '',
        'version': version,
        'build': parts['build'] or parts['sbuild'],
        'manager': 'conda',
    }


def _bracket_fields(text):
    fields = {}
    for item in text[1:-1].split(','):
        if '=' not in item:
            return None
        key, value = item.split('=', 1)
        key = key.strip()
        value = value.strip().strip('"\'')
        if not re.match(r'^[a-z_]+$', key) or not value:
            return None
        fields[key] = value
    return fields


def parse_pip_req(text, strict=None):
    """A pip requirement line as pip reads it (see module_utils.pipreq), or None when pip would refuse it.

    ``name`` is None for option, include and unnamed URL/path lines."""
    try:
        return pipreq.parse_line(text, strict)
    except pipreq.PipLineError:
        return None


def exact_version(dep):
    """The version a requirement pins exactly (``numpy=2.4.6``, ``torch==2.13.0``), or None."""
    version = dep.get('version')
    if not version or dep.get('op') not in ('=', '==', '==='):
        return None
    if not _EXACT_RE.match(version) or '*' in version:
        return None
    return version


def requirement_constraint(dep):
    """The version constraint of a parsed requirement in match-spec form (module_utils.matchspec):
    ``""`` when it is unpinned. conda's ``=1.2`` becomes ``1.2*``, ``==1.2`` and ``1.2`` stay exact."""
    op, version = dep.get('op') or '', dep.get('version')
    if not version:
        return ''
    version = re.sub(r'\s+', '', str(version))
    if dep.get('manager') == 'pip':
        if op == 'range':
            return version.strip('()')
        return op + version
    return matchspec.conda_constraint(op, version, dep.get('build'))


def requirement_pin(dep):
    """What the build's pin check and the audit require of one requirement: None when unpinned,
    the constraint text, or ``{'version', 'build'}`` when a conda build string is named."""
    constraint = requirement_constraint(dep) or None
    build = dep.get('build') if dep.get('manager') != 'pip' else None
    if build and build != '*':
        return {'version': constraint, 'build': build}
    return constraint


def version_matches(pin, actual):
    """Whether an installed version satisfies a pin from ``expected_pins`` (see module_utils.matchspec)."""
    if isinstance(pin, dict):
        pin = pin.get('version')
    try:
        return matchspec.version_satisfies(pin, actual)
    except matchspec.InvalidSpec:
        return False


def normalize_name(name, manager='conda'):
    """Package names as the facts report them: lower case; pip's ``_``/``.`` runs become ``-``."""
    name = name.lower()
    if manager == 'pip':
        name = re.sub(r'[-_.]+', '-', name)
    return name


# ---------------------------------------------------------------- YAML with lines


def _require_yaml():
    if not HAS_YAML:
        raise SpecError('PyYAML is needed to parse this file here; '
                        'let the conda_env role parse it on the controller')


def _compose(text, source):
    _require_yaml()
    loader_cls = getattr(yaml, 'CSafeLoader', None) or yaml.SafeLoader
    try:
        node = yaml.compose(text, Loader=loader_cls)
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None) or getattr(exc, 'context_mark', None)
        problem = getattr(exc, 'problem', None) or str(exc)
        line = mark.line + 1 if mark is not None else None
        if mark is not None:
            problem = '%s (column %d)' % (problem, mark.column + 1)
        raise SpecError('YAML syntax error: %s' % problem, source, line)
    return node


def _line(node):
    return node.start_mark.line + 1 if node is not None else None


def _scalar(node):
    """Construct a scalar node with YAML 1.1 safe-loader typing (so ``3.10`` is a float)."""
    loader = yaml.SafeLoader('')
    try:
        return loader.construct_object(node, deep=True)
    finally:
        loader.dispose()


def _mapping_items(node, source, what):
    if not isinstance(node, yaml.MappingNode):
        raise SpecError('%s must be a mapping' % what, source, _line(node))
    seen = {}
    items = []
    for key_node, value_node in node.value:
        key = _scalar(key_node) if isinstance(key_node, yaml.ScalarNode) else None
        if not isinstance(key, str):
            raise SpecError('%s has a non-string key' % what, source, _line(key_node))
        if key in seen:
            raise SpecError('duplicate key %r (first at line %d)' % (key, seen[key]), source, _line(key_node))
        seen[key] = _line(key_node)
        items.append((key, key_node, value_node))
    return items


def _string_list(node, source, what):
    if not isinstance(node, yaml.SequenceNode):
        raise SpecError('%s must be a list' % what, source, _line(node))
    values = []
    for item in node.value:
        value = _scalar(item) if isinstance(item, yaml.ScalarNode) else None
        if not isinstance(value, str) or not value.strip():
            raise SpecError('%s entries must be non-empty strings' % what, source, _line(item))
        values.append(value)
    return values


# ---------------------------------------------------------------- environment.yml


def parse_spec(content, source=None):
    """Parse and validate environment.yml text; return the normalized spec dict.

    Raises SpecError naming ``source`` and the line of the first problem found."""
    text = to_text(content, source)
    root = _compose(text, source)
    if root is None:
        raise SpecError('the file is empty', source, 1)
    spec = {'name': None, 'channels': [], 'dependencies': [], 'pip': [], 'variables': {},
            'platforms': [], 'warnings': []}
    name_line = None
    for key, key_node, value_node in _mapping_items(root, source, 'the top level'):
        if key not in SPEC_KEYS:
            # conda warns (EnvironmentSectionNotValid) and ignores the section; so do we.
            spec['warnings'].append('%s: unknown key %r at line %d is ignored, as conda ignores it (conda reads: %s)'
                                    % (source or '<spec>', key, _line(key_node), ', '.join(SPEC_KEYS)))
            continue
        if key == 'name':
            spec['name'], name_line = _spec_name(value_node, source), _line(value_node)
        elif key == 'channels':
            spec['channels'] = _string_list(value_node, source, 'channels')
        elif key == 'platforms':
            spec['platforms'] = _string_list(value_node, source, 'platforms')
        elif key == 'dependencies':
            _spec_dependencies(value_node, source, spec)
        elif key == 'variables':
            spec['variables'] = _spec_variables(value_node, source)
        elif key == 'prefix':
            spec['warnings'].append("%s: 'prefix' is ignored; the environment is built under the Miniconda root" % (source or '<spec>'))
    if spec['name'] is None:
        raise SpecError("missing required key 'name' (the environment's name)", source, 1)
    if not spec['dependencies']:
        ignored = ''.join(' (%s)' % w.split(': ', 1)[1] for w in spec['warnings'] if 'unknown key' in w)
        raise SpecError("missing or empty 'dependencies'" + ignored, source, name_line or 1)
    if spec['pip'] and not any(dep['name'].lower() == 'pip' for dep in spec['dependencies'] if dep['manager'] == 'conda'):
        raise SpecError("a 'pip:' section needs 'pip' itself among the conda dependencies", source, spec['pip_line'])
    spec.pop('pip_line', None)
    spec['warnings'].extend(pipmix.spec_warnings(spec, source or '<spec>'))
    return spec


def _spec_name(node, source):
    value = _scalar(node) if isinstance(node, yaml.ScalarNode) else None
    if not isinstance(value, str) or not _ENV_NAME_RE.match(value):
        raise SpecError("'name' must be a plain environment name (letters, digits, . _ + -), got %r" % (value,), source, _line(node))
    if value == 'base':
        raise SpecError("'name' must not be 'base' (that is the Miniconda root itself)", source, _line(node))
    return value


def _spec_variables(node, source):
    variables = {}
    for key, key_node, value_node in _mapping_items(node, source, "'variables'"):
        value = _scalar(value_node) if isinstance(value_node, yaml.ScalarNode) else None
        if value is None or isinstance(value, (list, dict)):
            raise SpecError('variable %r must have a scalar value' % key, source, _line(value_node))
        variables[key] = str(value)
    return variables


def _spec_dependencies(node, source, spec):
    if not isinstance(node, yaml.SequenceNode):
        raise SpecError("'dependencies' must be a list", source, _line(node))
    for item in node.value:
        if isinstance(item, yaml.MappingNode):
            _spec_pip_section(item, source, spec)
            continue
        value = _scalar(item) if isinstance(item, yaml.ScalarNode) else None
        if not isinstance(value, str):
            raise SpecError('malformed dependency %r: write it as a string such as "numpy=2.4.6" '
                            '(quote versions like 3.10)' % (value,), source, _line(item))
        dep = parse_conda_dep(value)
        if dep is None:
            raise SpecError('malformed dependency %r (expected name, name=version, name>=version '
                            'or channel::name)' % value, source, _line(item))
        dep['lineno'] = _line(item)
        dep['spec'] = value.strip()
        spec['dependencies'].append(dep)


def _spec_pip_section(node, source, spec):
    for key, key_node, value_node in _mapping_items(node, source, 'a dependency mapping'):
        if key != 'pip':
            raise SpecError("unknown dependency section %r (only 'pip:' is allowed)" % key, source, _line(key_node))
        if not isinstance(value_node, yaml.SequenceNode):
            raise SpecError("'pip' must be a list of requirements", source, _line(value_node))
        spec['pip_line'] = _line(key_node)
        for item in value_node.value:
            value = _scalar(item) if isinstance(item, yaml.ScalarNode) else None
            if not isinstance(value, str):
                raise SpecError('malformed pip requirement %r: write it as a string' % (value,), source, _line(item))
            try:
                req = pipreq.parse_line(value)
            except pipreq.PipLineError as exc:
                raise SpecError('pip would refuse the requirement %r: %s' % (value, exc), source, _line(item))
            req['lineno'] = _line(item)
            spec['pip'].append(req)


def spec_requirements(spec):
    """Every named requirement of a parsed spec: list of (normalized name, pin, manager), the pin as
    ``requirement_pin`` gives it. A pip line with an environment marker is left out (whether pip
    installs it depends on the node's interpreter)."""
    found = []
    for dep in spec.get('dependencies', ()):
        found.append((normalize_name(dep['name']), requirement_pin(dep), 'conda'))
    for req in spec.get('pip', ()):
        if req.get('name') and not req.get('marker'):
            found.append((normalize_name(req['name'], 'pip'), requirement_pin(req), 'pip'))
    return found


def expected_pins(spec):
    """``{name: pin|None}`` for the build's pin check: match-spec constraints, None where unpinned.

    A pip pin wins over a conda requirement of the same package (pip installs last)."""
    pins = {}
    for name, version, manager in spec_requirements(spec):
        if manager == 'pip' or name not in pins or pins[name] is None:
            pins[name] = version
    return pins


def needs_torch(pins):
    return any(name in ('torch', 'pytorch', 'pytorch-gpu', 'pytorch-cpu') for name in pins)


def default_smoke_test(pins):
    """``import torch`` when the spec asks for PyTorch, else an interpreter check."""
    return ['import torch'] if needs_torch(pins) else ['import sys']


# ---------------------------------------------------------------- locks


def lock_kind(content, source=None):
    """'explicit' for ``conda list --explicit`` files, 'conda-lock' for conda-lock YAML/JSON, else None."""
    text = to_text(content, source)
    for line in text.splitlines():
        if line.strip() == EXPLICIT_MARKER:
            return LOCK_EXPLICIT
    if re.search(r'^(package|"package")\s*:', text, re.M) and re.search(r'^(metadata|"metadata")\s*:', text, re.M):
        return LOCK_CONDA_LOCK
    stripped = text.lstrip()
    if stripped.startswith('{') and '"package"' in text and '"metadata"' in text:
        return LOCK_CONDA_LOCK
    return None


def _check_digests(name, digests, source, line=None):
    for digest in digests:
        if digest and digest.lower() in EMPTY_FILE_DIGESTS:
            raise SpecError('package %s carries the digest of an empty file (%s); the lock was not made from '
                            'real package files' % (name, digest), source, line)


def parse_explicit(content, source=None):
    """Parse an ``@EXPLICIT`` file into {'kind', 'platform', 'packages'}."""
    text = to_text(content, source)
    platform = None
    packages = []
    seen_marker = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith('#'):
            match = _PLATFORM_LINE_RE.match(line)
            if match:
                platform = match.group(1)
            continue
        if line == EXPLICIT_MARKER:
            seen_marker = True
            continue
        if not seen_marker:
            raise SpecError('package line before the %s marker' % EXPLICIT_MARKER, source, number)
        match = _EXPLICIT_URL_RE.match(line)
        if not match or match.group('dist').count('-') < 2:
            raise SpecError('not a package URL (…/<name>-<version>-<build>.conda[#md5]): %r' % line, source, number)
        name, version, build = match.group('dist').rsplit('-', 2)
        _check_digests(name, (match.group('md5'), match.group('sha256')), source, number)
        packages.append({'name': name, 'version': version, 'build': build, 'url': match.group('url'),
                         'md5': match.group('md5'), 'sha256': match.group('sha256'), 'manager': 'conda',
                         'platform': platform})
    if not seen_marker:
        raise SpecError('missing the %s marker line' % EXPLICIT_MARKER, source, 1)
    if not packages:
        raise SpecError('the explicit lock lists no packages', source, 1)
    return {'kind': LOCK_EXPLICIT, 'platforms': [platform] if platform else [], 'packages': packages}


def parse_conda_lock(content, source=None):
    """Parse a conda-lock (version 1) lock file, YAML or the JSON the role converts it to."""
    text = to_text(content, source)
    data = None
    if text.lstrip().startswith('{'):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise SpecError('invalid JSON: %s' % exc, source)
    else:
        _compose(text, source)
        data = yaml.safe_load(text)
    if not isinstance(data, dict) or not isinstance(data.get('package'), list) or not isinstance(data.get('metadata'), dict):
        raise SpecError("not a conda-lock file (needs 'metadata' and a 'package' list)", source, 1)
    if data.get('version', 1) != 1:
        raise SpecError('unsupported conda-lock file version %r (only version 1)' % data.get('version'), source, 1)
    packages = []
    for index, pkg in enumerate(data['package']):
        if not isinstance(pkg, dict) or not all(pkg.get(k) for k in ('name', 'version', 'manager', 'platform', 'url')):
            raise SpecError('package entry %d lacks name/version/manager/platform/url' % (index + 1), source)
        if pkg['manager'] not in ('conda', 'pip'):
            raise SpecError('package %s: unknown manager %r' % (pkg['name'], pkg['manager']), source)
        hashes = dict((k, str(v)) for k, v in (pkg.get('hash') or {}).items() if v is not None)
        _check_digests(pkg['name'], (hashes.get('md5'), hashes.get('sha256')), source)
        packages.append({'name': str(pkg['name']), 'version': str(pkg['version']), 'manager': pkg['manager'],
                         'platform': pkg['platform'], 'url': pkg['url'], 'md5': hashes.get('md5'),
                         'sha256': hashes.get('sha256'), 'category': pkg.get('category', 'main'),
                         'optional': bool(pkg.get('optional', False))})
    platforms = data['metadata'].get('platforms') or sorted(set(p['platform'] for p in packages))
    return {'kind': LOCK_CONDA_LOCK, 'platforms': list(platforms), 'packages': packages}


def parse_lock(content, source=None):
    kind = lock_kind(content, source)
    if kind == LOCK_EXPLICIT:
        return parse_explicit(content, source)
    if kind == LOCK_CONDA_LOCK:
        return parse_conda_lock(content, source)
    raise SpecError('neither an explicit lock (%s) nor a conda-lock file' % EXPLICIT_MARKER, source, 1)


def lock_packages(lock, platform=None):
    """The lock's packages for one platform (an explicit lock has only one)."""
    if lock['kind'] == LOCK_EXPLICIT or platform is None:
        return [p for p in lock['packages'] if not p.get('optional')]
    return [p for p in lock['packages'] if p['platform'] == platform and not p.get('optional')]


def lock_pins(lock, platform=None):
    pins = {}
    for pkg in lock_packages(lock, platform):
        pins[normalize_name(pkg['name'], pkg['manager'])] = pkg['version']
    return pins


def render_explicit(lock, platform):
    """The conda part of a lock as an ``@EXPLICIT`` file for ``conda create --file``."""
    lines = ['# platform: %s' % platform, EXPLICIT_MARKER]
    for pkg in lock_packages(lock, platform):
        if pkg['manager'] != 'conda':
            continue
        # conda matches a cached package, and checks a download, by the one digest its line carries.
        if pkg.get('sha256'):
            lines.append('%s#sha256:%s' % (pkg['url'], pkg['sha256']))
        elif pkg.get('md5'):
            lines.append('%s#%s' % (pkg['url'], pkg['md5']))
        else:
            lines.append(pkg['url'])
    return '\n'.join(lines) + '\n'


def pip_lock_lines(lock, platform):
    """pip requirement lines (URL with hash) for a conda-lock file's pip packages."""
    lines = []
    for pkg in lock_packages(lock, platform):
        if pkg['manager'] != 'pip':
            continue
        url = pkg['url']
        if pkg.get('sha256'):
            url = '%s#sha256=%s' % (url.split('#', 1)[0], pkg['sha256'])
        lines.append('%s @ %s' % (pkg['name'], url))
    return lines
