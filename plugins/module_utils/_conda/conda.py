# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A thin wrapper around the conda CLI and parsers for its ``--json`` output.

Shapes handled (all from conda's own source):
- ``conda info --json``: the ``info_dict`` of ``conda/cli/main_info.py``
  (``conda_version``, ``platform``, ``root_prefix``, ``envs_dirs``, ``channels`` …).
- ``conda env list --json``: ``{"envs": [...]}``; 24.7-25.9 print the whole info dict
  (``env list`` became an alias of ``info --envs``), 25.11 adds ``envs_details``. As root
  the list includes every user's registered environments (conda/core/envs_manager.py).
- ``conda list --json``: a list of ``PackageRecord.dist_fields_dump()`` dicts
  (``name``, ``version``, ``build_string``, ``build_number``, ``channel``, ``platform`` …);
  pip-installed packages have ``channel`` "pypi" and ``build_string`` "pypi_0".
- errors under ``--json``: ``CondaError.dump_map()`` printed to stdout
  (``exception_name``, ``message``, ``error``, ``packages``, ``channel_urls`` …),
  possibly after NUL-separated progress records.
- ``CondaMultiError`` (failed package fetches, e.g. of an explicit lock): no ``message``, the
  text "Multiple Errors Encountered." and ``errors``, one ``dump_map()`` per failure:
  ``PathNotFoundError`` (``path``, a ``file://`` package that is missing),
  ``CondaHTTPError`` (``url``, ``status_code``, ``reason``), ``ChecksumMismatchError``
  (``url``, ``checksum_type``, ``expected_checksum``, ``actual_checksum``).
- an exception that is not a CondaError (ruamel's ``ParserError`` for an unparsable
  ``.condarc``): the error report, ``error`` (a repr), ``exception_name``, ``traceback`` and
  ``conda_info``, no ``message``; without ``--json`` the same report on stderr, indented.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import platform
import re

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import condarc
from ansible_collections.torchfleet.cluster.plugins.module_utils._conda.envspec import normalize_name

_VERSION_RE = re.compile(r'(\d+)\.(\d+)(?:\.(\d+))?')
_TEXT_PACKAGES_RE = re.compile(
    r'PackagesNotFound(?:InChannels|InPrefix)?Error: The following packages are '
    r'(?:not available from current channels|missing from the target environment):\s*\n'
    r'((?:\s*(?:prefix:.*|-\s+\S.*)\n?)+)')
_PIP_NOT_FOUND_RE = re.compile(r'No matching distribution found for ([^\s(]+)')
_PIP_NO_VERSION_RE = re.compile(r'Could not find a version that satisfies the requirement ([^\s(]+)')
# A module path may precede the name, as in a Python traceback ("conda.common.configuration.MultipleKeysError: ...").
_EXCEPTION_LINE_RE = re.compile(r'^(?:[a-z_][a-z0-9_]*\.)*([A-Z][A-Za-z]+(?:Error|Exception|NotFound)):[ \t]*(.*)$', re.M)
# The classic solver's ResolvePackageNotFound: a dash list of dependency chains ("a -> b").
_RESOLVE_CHAINS_RE = re.compile(r'ResolvePackageNotFound:[ \t]*\n((?:[ \t]*-[ \t]+\S.*\n?)+)')
# conda's exception handler crashing while it prints an error (MultipleKeysError under --json in
# 25.11/26.7: its keys are a frozenset) leaves a chained traceback on stderr and nothing on stdout.
_CHAINED_MARKER = 'During handling of the above exception, another exception occurred'
# Where a YAML parser stopped: ruamel and PyYAML write each mark as '  in "FILE", line L, column C'.
_YAML_MARK_RE = re.compile(r'^\s*in "([^"]*)", line (\d+), column (\d+):?\s*$')
# conda's report of an unexpected error without --json: the traceback indented by four spaces.
_ERROR_REPORT_MARKER = '>>>>>>>>>>>>>>>>>>>>>> ERROR REPORT <<<<<<<<<<<<<<<<<<<<<<'


class CondaCommandError(Exception):
    def __init__(self, msg, cmd=None, rc=None, stdout='', stderr='', error=None):
        super(CondaCommandError, self).__init__(msg)
        self.msg = msg
        self.cmd = cmd
        self.rc = rc
        self.stdout = stdout or ''
        self.stderr = stderr or ''
        self.error = error or {}


# ---------------------------------------------------------------- version and config key


def parse_version(text):
    """``(25, 5, 1)`` from "conda 25.5.1", "25.5.1" or an info dict's ``conda_version``."""
    if not text:
        return None
    match = _VERSION_RE.search(str(text))
    if not match:
        return None
    return tuple(int(part or 0) for part in match.groups())


def auto_activate_key(version):
    """The one auto-activation key a conda of ``version`` (tuple or text) must be given; the cut-over
    version is condarc.AUTO_ACTIVATE_SINCE, defined there only."""
    if isinstance(version, str):
        version = parse_version(version)
    return condarc.auto_activate_key(version)


_SUBDIRS = {'x86_64': 'linux-64', 'amd64': 'linux-64', 'aarch64': 'linux-aarch64', 'arm64': 'linux-aarch64',
            'ppc64le': 'linux-ppc64le', 's390x': 'linux-s390x'}


def local_subdir(machine=None, system=None):
    """conda's platform name (``context.subdir``) for this machine, e.g. ``linux-64``."""
    machine = (machine or platform.machine()).lower()
    system = (system or platform.system()).lower()
    if system == 'darwin':
        return 'osx-arm64' if machine in ('arm64', 'aarch64') else 'osx-64'
    return _SUBDIRS.get(machine, '%s-%s' % (system, machine))


# ---------------------------------------------------------------- JSON output


def parse_json_output(text):
    """The last JSON document in conda's stdout, or None.

    Under ``--json`` conda may emit progress records separated by NUL bytes before the
    final document, and pip's own output can precede it during ``env create``."""
    if not text or not text.strip():
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    found = None
    for chunk in text.split('\0'):
        for match in re.finditer(r'^[ \t]*[{\[]', chunk, re.M):
            start = match.end() - 1
            try:
                value, end = decoder.raw_decode(chunk, start)
            except ValueError:
                continue
            if not chunk[end:].strip() or isinstance(value, dict) and ('exception_name' in value or 'success' in value):
                found = value
    return found


def parse_info(text):
    data = parse_json_output(text)
    if not isinstance(data, dict) or 'conda_version' not in data:
        raise ValueError('not the output of `conda info --json`')
    return {
        'conda_version': data.get('conda_version'),
        'version': parse_version(data.get('conda_version')),
        'platform': data.get('platform'),
        'root_prefix': data.get('root_prefix'),
        'envs_dirs': list(data.get('envs_dirs') or ()),
        'pkgs_dirs': list(data.get('pkgs_dirs') or ()),
        'channels': list(data.get('channels') or ()),
        'python_version': data.get('python_version'),
    }


def parse_env_list(text):
    data = parse_json_output(text)
    if not isinstance(data, dict) or not isinstance(data.get('envs'), list):
        raise ValueError('not the output of `conda env list --json`')
    return list(data['envs'])


def envs_of_installation(envs, root_prefix):
    """The listed environments that belong to the installation at ``root_prefix``: the base
    itself and what lies under ``root_prefix/envs``.

    As root, ``conda env list`` and ``conda info --json`` also list what every user registered
    in their own ``~/.conda/environments.txt``; those entries are another user's data, never
    paths to act on, so they are dropped here (compared as text, no link is followed)."""
    root = os.path.normpath(root_prefix)
    envs_dir = os.path.join(root, 'envs') + os.sep
    owned = []
    for env in envs:
        path = os.path.normpath(str(env))
        if path == root or path.startswith(envs_dir):
            owned.append(path)
    return owned


def package_record(raw):
    """One ``conda list --json`` entry, reduced to the fields the collection compares."""
    channel = raw.get('channel') or ''
    manager = 'pip' if channel == 'pypi' or raw.get('platform') == 'pypi' else 'conda'
    return {
        'name': raw.get('name'),
        'version': str(raw.get('version')),
        'build': raw.get('build_string', raw.get('build')),
        'channel': channel,
        'manager': manager,
    }


def parse_list(text):
    """``{normalized name: record}`` from ``conda list --json``."""
    data = parse_json_output(text)
    if not isinstance(data, list):
        raise ValueError('not the output of `conda list --json`')
    packages = {}
    for raw in data:
        if isinstance(raw, dict) and raw.get('name'):
            record = package_record(raw)
            packages[normalize_name(record['name'], record['manager'])] = record
    return packages


# ---------------------------------------------------------------- errors


def parse_error(stdout, stderr=''):
    """What went wrong, from conda's JSON error document or, failing that, its text."""
    data = parse_json_output(stdout)
    if isinstance(data, dict) and data.get('exception_name'):
        failures = _nested_failures(data)
        return {
            'exception_name': data['exception_name'],
            'message': '; '.join(failures) if failures else _json_error_message(data),
            'failures': failures,
            'packages': _json_error_packages(data),
            'channels': [_channel_text(c) for c in (data.get('channel_urls') or ())],
            'pip': _pip_failures(stdout + '\n' + (stderr or '')),
        }
    text = '%s\n%s' % (stdout or '', stderr or '')
    error = {'exception_name': None, 'message': '', 'failures': [], 'packages': [], 'channels': [], 'pip': _pip_failures(text)}
    report = _error_report_traceback(text)
    if report:
        name, reason = _raised_exception(report)
        if name:
            error.update(exception_name=name, message=reason)
            return error
    match = _TEXT_PACKAGES_RE.search(text)
    if match:
        error['exception_name'] = 'PackagesNotFoundError'
        error['packages'] = [line.strip()[1:].strip() for line in match.group(1).splitlines()
                             if line.strip().startswith('-')]
    chains = _RESOLVE_CHAINS_RE.search(text)
    if chains:
        error['packages'] = [_missing_in_chain(line.strip()[1:]) for line in chains.group(1).splitlines()
                             if line.strip().startswith('-')]
    exc = _reported_exception(text)
    if exc is not None:
        error['exception_name'] = error['exception_name'] or exc.group(1)
        error['message'] = exc.group(2).strip() or exc.group(1)
    return error


def _json_error_message(data):
    """The message of a JSON error document on one readable line where conda's is not.

    An error that is not a CondaError has no ``message`` and an ``error`` that is a repr
    (ruamel's ParserError shows "<ruamel.yaml.error.FileMark object at 0x...>"): its reason is
    the end of the ``traceback``. ConfigurationLoadError spreads the file and the reason over
    lines ("Unable to load configuration file.", "  path: ...", "  reason: ...")."""
    message = (data.get('message') or '').strip()
    if not message and data.get('traceback'):
        reason = _raised_exception(data['traceback'])[1]
        if reason:
            return reason
    if data.get('exception_name') == 'ConfigurationLoadError':
        return ' '.join(line.strip() for line in message.splitlines() if line.strip())
    return message or (data.get('error') or '').strip()


def _nested_failures(data):
    """One line per distinct failure of a CondaMultiError, in conda's order (a failed fetch is
    listed twice: once by its own callback, once when the executor collects it)."""
    if data.get('exception_name') != 'CondaMultiError':
        return []
    failures = []
    for nested in data.get('errors') or ():
        line = _failure_line(nested) if isinstance(nested, dict) else str(nested).strip()
        if line and line not in failures:
            failures.append(line)
    return failures


def _failure_line(error):
    """A CondaMultiError member as "<reason> <URL or path>", from the fields conda/exceptions.py gives it."""
    name = error.get('exception_name') or ''
    if name == 'ChecksumMismatchError' and error.get('url'):
        return '%s mismatch for %s: expected %s, got %s' % (
            error.get('checksum_type') or 'checksum', error['url'], error.get('expected_checksum'), error.get('actual_checksum'))
    if name == 'CondaHTTPError' and error.get('url'):
        return 'HTTP %s %s for %s' % (error.get('status_code'), error.get('reason') or '', error['url'])
    if name == 'PathNotFoundError' and error.get('path'):
        return 'file not found: %s' % error['path']
    if name == 'CondaMultiError':
        return '; '.join(_nested_failures(error))
    lines = _json_error_message(error).splitlines()
    return ': '.join(part for part in (name, lines[0] if lines else '') if part)


def _error_report_traceback(text):
    """The traceback of conda's plain-text error report, dedented; '' when there is none."""
    if _ERROR_REPORT_MARKER not in text:
        return ''
    lines = []
    for line in text.split(_ERROR_REPORT_MARKER, 1)[1].splitlines():
        if line.startswith('    '):
            lines.append(line[4:])
        elif lines and not line.strip():
            break
    return '\n'.join(lines)


def _raised_exception(trace):
    """(name, reason on one line) of the exception a Python traceback ends with; (None, '') when
    there is none. A YAML error names its file once: "cannot parse FILE: problem (line L, column C); ..."."""
    lines = trace.splitlines()
    raised = [index for index, line in enumerate(lines) if _EXCEPTION_LINE_RE.match(line)]
    if not raised:
        return None, ''
    first = _EXCEPTION_LINE_RE.match(lines[raised[-1]])
    name = first.group(1)
    parts, files = [], []
    for line in [first.group(2)] + lines[raised[-1] + 1:]:
        mark = _YAML_MARK_RE.match(line)
        if mark:
            if not mark.group(1).startswith('<') and mark.group(1) not in files:
                files.append(mark.group(1))
            where = '(line %s, column %s)' % (mark.group(2), mark.group(3))
            parts[-1:] = ['%s %s' % (parts[-1], where)] if parts else [where]
        elif line.strip() and not line.startswith('    '):  # PyYAML quotes the source, indented, under a mark
            parts.append(line.strip())
    reason = '; '.join(parts)
    if files:
        reason = 'cannot parse %s: %s' % (', '.join(files), reason)
    return name, reason


def _reported_exception(text):
    """The exception conda reported: the last one named, or the original one when conda's
    own error handler crashed while printing it (a chained traceback)."""
    searched = text.split(_CHAINED_MARKER, 1)[0] if _CHAINED_MARKER in text else text
    found = None
    for found in _EXCEPTION_LINE_RE.finditer(searched):
        pass
    return found


def _json_error_packages(data):
    """Package specs of a not-found error: PackagesNotFoundError's ``packages``, an older
    ``package_name``, or ResolvePackageNotFound's ``bad_deps`` (the classic solver)."""
    packages = [str(p) for p in (data.get('packages') or ())]
    if not packages and data.get('package_name'):
        name = data['package_name']
        packages = [name] if isinstance(name, str) else [str(p) for p in name]
    if not packages and data.get('bad_deps'):
        packages = [_missing_in_chain(str(dep)) for dep in data['bad_deps']]
    return packages


def _missing_in_chain(chain):
    """"torch -> nosuchdep" -> "nosuchdep": the end of a dependency chain is what is missing."""
    return chain.split(' -> ')[-1].strip()


def _channel_text(channel):
    """A channel URL; rattler and libmamba may put Channel objects (dumped as mappings) in channel_urls."""
    if not isinstance(channel, dict):
        return str(channel)
    if channel.get('channels'):  # a MultiChannel such as "defaults"
        return ', '.join(_channel_text(c) for c in channel['channels'])
    path = '/'.join(str(part).strip('/') for part in (channel.get('location'), channel.get('name'), channel.get('platform'))
                    if part)
    if channel.get('scheme'):
        return '%s://%s%s' % (channel['scheme'], '/' if channel['scheme'] == 'file' else '', path)
    return path or str(channel.get('name') or channel)


def _pip_failures(text):
    found = []
    for regex in (_PIP_NOT_FOUND_RE, _PIP_NO_VERSION_RE):
        for match in regex.finditer(text or ''):
            if match.group(1) not in found:
                found.append(match.group(1))
    return found


def describe_error(action, error, rc):
    """One sentence naming the failed step and the packages at fault."""
    parts = ['%s failed (rc=%s)' % (action, rc)]
    if error.get('packages'):
        parts.append('package(s) not available: %s' % ', '.join(error['packages']))
    if error.get('pip'):
        parts.append('pip could not install: %s' % ', '.join(error['pip']))
    if error.get('failures'):
        parts.append('; '.join(error['failures']))
    elif error.get('exception_name'):
        first = error.get('message', '').strip().splitlines()
        detail = first[0] if first else ''
        parts.append('%s%s' % (error['exception_name'], (': ' + detail) if detail and not error.get('packages') else ''))
    if error.get('channels'):
        parts.append('channels searched: %s' % ', '.join(error['channels']))
    return '; '.join(parts)


# ---------------------------------------------------------------- the CLI


class CondaCli:
    """Runs one conda executable through ``module.run_command``; every call uses ``--json``."""

    def __init__(self, module, executable, environ=None, commands=None):
        self.module = module
        self.executable = executable
        self.environ = dict(environ or {})
        self.commands = commands if commands is not None else []

    def run(self, args, action, check=True):
        cmd = [self.executable] + list(args)
        self.commands.append(cmd)
        rc, out, err = self.module.run_command(cmd, environ_update=self.environ)
        if check and rc != 0:
            error = parse_error(out, err)
            raise CondaCommandError(describe_error(action, error, rc), cmd, rc, out, err, error)
        return rc, out, err

    def info(self):
        _rc, out, _err = self.run(['info', '--json'], 'conda info')
        return parse_info(out)

    def env_list(self, root_prefix):
        """Environments of the installation at ``root_prefix`` (see envs_of_installation)."""
        _rc, out, _err = self.run(['env', 'list', '--json'], 'conda env list')
        return envs_of_installation(parse_env_list(out), root_prefix)

    def list_packages(self, prefix):
        _rc, out, _err = self.run(['list', '--json', '--prefix', prefix], 'conda list')
        return parse_list(out)

    def env_create(self, spec_path, prefix):
        # The target never exists beforehand: recent conda deletes an existing env at the
        # target without asking, so the caller always builds into a fresh directory.
        return self.run(['env', 'create', '--json', '--file', spec_path, '--prefix', prefix],
                        'conda env create')

    def create_explicit(self, lock_path, prefix):
        return self.run(['create', '--json', '--yes', '--prefix', prefix, '--file', lock_path],
                        'conda create from the explicit lock')
