# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a node has of a Miniconda installation, read-only."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import glob
import grp
import hashlib
import os
import re

from ansible_collections.torchfleet.cluster.plugins.module_utils._files import trusted_exec

_VERSION = re.compile(r'conda ([0-9]+\.[0-9]+\.[0-9]+)')
_PARSE_FAILURE = re.compile(r'ParserError|ParseError|ScannerError|Unable to parse|could not parse', re.IGNORECASE)
ROOT = (0,)


def untrusted_entry(path, st):
    """Why someone other than root can change this entry, or None."""
    if st.st_uid != 0:
        return 'is owned by %s' % trusted_exec.user_name(st.st_uid)
    if st.st_gid != 0:
        return 'belongs to group id %d' % st.st_gid
    if st.st_mode & 0o002 and not os.path.islink(path):
        return 'is writable by every user'
    return None


def skipped(prefix, path, patterns):
    relative = os.path.relpath(path, prefix)
    return any(fnmatch.fnmatchcase(relative, pattern) for pattern in patterns)


def untrusted_in_tree(prefix, skip):
    """The first entry of the tree at ``prefix`` (links not followed) that is not root's alone, as a dict."""
    for here, dirs, files in os.walk(prefix, followlinks=False):
        entries = [here] if here == prefix else []
        dirs[:] = [d for d in sorted(dirs) if not skipped(prefix, os.path.join(here, d), skip)]
        entries += [os.path.join(here, name) for name in dirs + sorted(files)
                    if not skipped(prefix, os.path.join(here, name), skip)]
        for path in entries:
            reason = untrusted_entry(path, os.lstat(path))
            if reason:
                return {'path': path, 'reason': reason}
    return None


def untrusted_above(prefix):
    finding = trusted_exec.untrusted_writer(os.path.dirname(os.path.abspath(prefix)), trusted=ROOT)
    return None if finding is None else {'path': finding.path, 'reason': finding.reason}


def condarc_report(prefix):
    path = os.path.join(prefix, '.condarc')
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not os.path.isfile(path) or os.path.islink(path):
        return None
    with open(path, 'rb') as handle:
        digest = hashlib.sha256(handle.read()).hexdigest()
    return {'owner': trusted_exec.user_name(st.st_uid), 'group': _group_name(st.st_gid),
            'mode': '%o' % (st.st_mode & 0o7777), 'sha256': digest}


def _group_name(gid):
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def other_condarc(prefix):
    candidates = ['/etc/conda/.condarc', '/etc/conda/condarc', os.path.join(prefix, 'condarc')]
    candidates += glob.glob('/etc/conda/condarc.d/*.y*ml') + glob.glob(os.path.join(prefix, 'condarc.d', '*.y*ml'))
    return any(os.path.isfile(path) for path in candidates)


def conda_version(module, prefix):
    """(version or '', output, whether a .condarc parse failure stopped it)."""
    conda = os.path.join(prefix, 'bin', 'conda')
    if not os.access(conda, os.X_OK):
        return '', '', False
    rc, out, err = module.run_command([conda, '--version'], cwd='/')
    output = (out or '') + (err or '')
    found = _VERSION.search(output) if rc == 0 else None
    if found:
        return found.group(1), output, False
    return '', output, rc != 0 and _PARSE_FAILURE.search(output) is not None


def probe(module):
    prefix = module.params['prefix']
    snippet = module.params['snippet']
    result = {'changed': False, 'arch': os.uname()[4], 'prefix_exists': os.path.lexists(prefix),
              'snippet_exists': bool(snippet) and os.path.lexists(snippet), 'untrusted': None, 'condarc': None,
              'other_condarc': False, 'conda_version': '', 'conda_output': '', 'condarc_unparsable': False}
    if result['prefix_exists']:
        result['untrusted'] = untrusted_above(prefix) or untrusted_in_tree(prefix, module.params['skip'])
    if result['untrusted'] is None and result['prefix_exists']:
        result['condarc'] = condarc_report(prefix)
        result['other_condarc'] = other_condarc(prefix)
        version, output, unparsable = conda_version(module, prefix)
        result.update(conda_version=version, conda_output=output, condarc_unparsable=unparsable)
    return result


ARGUMENT_SPEC = dict(
    prefix=dict(type='path', required=True),
    snippet=dict(type='path'),
    skip=dict(type='list', elements='str', default=['envs/*', '.torchfleet-*']),
)
MODULE_OPTIONS = dict()


def run(module):
    """Exit with what the node has of a Miniconda installation at prefix (changes nothing)."""
    if not os.path.isabs(module.params['prefix']) or module.params['prefix'] == '/':
        module.fail_json(msg='prefix must be an absolute path other than /, got %r' % module.params['prefix'])
    module.exit_json(**probe(module))
