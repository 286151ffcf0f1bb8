#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: miniconda_probe
short_description: Read what a node has of a conda installation, changing nothing
version_added: 0.1.0
description:
  - Reports the node's architecture, whether the installation prefix and a shell snippet exist, the first path
    of the installation that a user other than root could change, the system-scope C(PREFIX/.condarc), and the
    version of the installed conda.
  - Runs C(PREFIX/bin/conda --version) only when no one but root can change the installation, so that root never
    runs code a node user can change. Every file and directory of the prefix is looked at (not following links),
    except what O(skip) names, and so is every directory above it.
  - A C(conda --version) that fails because conda cannot parse C(PREFIX/.condarc) is reported as
    RV(condarc_unparsable); conda 25.11 refuses to start then, conda 26 does not.
author:
  - torchfleet developers (@torchfleet)
extends_documentation_fragment:
  - torchfleet.cluster.attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
options:
  prefix:
    description:
      - Root prefix of the conda installation, for example C(/opt/miniconda3).
    type: path
    required: true
  snippet:
    description:
      - A file whose presence to report, for example the C(/etc/profile.d) snippet of a shell integration.
    type: path
  skip:
    description:
      - Shell patterns of entries directly in the prefix, or directly in its C(envs/), whose trees are not looked at.
      - The default leaves out the environments (managed, and checked, by C(torchfleet.cluster.conda_env)) and the
        collection's own scratch directories.
    type: list
    elements: str
    default: ['envs/*', '.torchfleet-*']
seealso:
  - module: torchfleet.cluster.conda_config
'''

EXAMPLES = r'''
- name: Probe the installation
  torchfleet.cluster.miniconda_probe:
    prefix: /opt/miniconda3
    snippet: /etc/profile.d/torchfleet-conda.sh
  register: probe
'''

RETURN = r'''
arch:
  description: The machine's architecture as C(uname -m) prints it.
  returned: always
  type: str
  sample: x86_64
prefix_exists:
  description: Whether O(prefix) exists.
  returned: always
  type: bool
snippet_exists:
  description: Whether O(snippet) exists.
  returned: always
  type: bool
untrusted:
  description:
    - The first path in or above the prefix that a user other than root owns, that belongs to another group than
      root's (in the prefix), or that others may write; null when there is none.
  returned: always
  type: dict
  contains:
    path:
      description: The path.
      type: str
    reason:
      description: Why it is not root's alone.
      type: str
  sample: {"path": "/opt/miniconda3/bin", "reason": "is owned by trainer"}
condarc:
  description:
    - C(PREFIX/.condarc) as a regular file (owner, group, octal mode, SHA-256 of its content); null when there is
      none, it is not a regular file, or the installation is untrusted.
  returned: always
  type: dict
  sample: {"owner": "root", "group": "root", "mode": "644", "sha256": "5f1c..."}
other_condarc:
  description: Whether conda also reads another system-wide configuration file (C(/etc/conda), C(PREFIX/condarc.d)).
  returned: always
  type: bool
conda_version:
  description: The version C(PREFIX/bin/conda --version) printed, or an empty string when it did not run or failed.
  returned: always
  type: str
  sample: 26.7.1
conda_output:
  description: What C(PREFIX/bin/conda --version) printed (stdout, then stderr), when it ran.
  returned: always
  type: str
condarc_unparsable:
  description: Whether C(conda --version) failed because conda could not parse C(PREFIX/.condarc).
  returned: always
  type: bool
'''

import fnmatch
import glob
import grp
import hashlib
import os
import re

from ansible.module_utils.basic import AnsibleModule
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


def main():
    module = AnsibleModule(
        argument_spec=dict(
            prefix=dict(type='path', required=True),
            snippet=dict(type='path'),
            skip=dict(type='list', elements='str', default=['envs/*', '.torchfleet-*']),
        ),
        supports_check_mode=True,
    )
    if not os.path.isabs(module.params['prefix']) or module.params['prefix'] == '/':
        module.fail_json(msg='prefix must be an absolute path other than /, got %r' % module.params['prefix'])
    module.exit_json(**probe(module))


if __name__ == '__main__':
    main()
