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

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import install_probe


def main():
    module = AnsibleModule(argument_spec=install_probe.ARGUMENT_SPEC, supports_check_mode=True,
                           **install_probe.MODULE_OPTIONS)
    install_probe.run(module)


if __name__ == '__main__':
    main()
