#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: node_plan
short_description: Run the converged checks of several roles on a node in one call
version_added: 0.1.0
description:
  - The plan step of C(site.yml). Every role hands over the arguments of its own read-only check (a
    M(torchfleet.cluster.state_check), M(torchfleet.cluster.miniconda_probe), a check-mode
    M(torchfleet.cluster.conda_env), a M(torchfleet.cluster.torch_facts) probe or a
    M(torchfleet.cluster.rdma_ports) reading), and one call per node answers them all, so a converged node
    costs one round trip for every role instead of one per role.
  - The facts a successful check returns (C(ansible_facts.torch) of a torch_facts check) become the node's facts,
    as the check's own module would set them.
  - Each check runs the code of its own module, with its parameters validated against that module's argument
    spec, in check mode and without a diff, so that its answer is the one the role's own task would get.
  - A check that fails does not stop the others; its answer carries C(failed) and C(msg), and the role runs its
    own task instead, which fails with the same message.
  - Changes nothing; runs the same in check mode.
author:
  - torchfleet developers (@torchfleet)
extends_documentation_fragment:
  - torchfleet.cluster.attributes
attributes:
  check_mode:
    support: full
    details:
      - Every check runs in check mode whatever the play's mode.
  diff_mode:
    support: none
    details:
      - The roles' own tasks show the diff where something differs.
options:
  checks:
    description:
      - The checks by the name their answers get. Each is a dictionary with C(module), the module whose check it
        is (C(conda_env), C(miniconda_probe), C(rdma_ports), C(state_check) or C(torch_facts)), and C(params),
        that module's own parameters.
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Check every role's state on each node in one call
  torchfleet.cluster.node_plan:
    checks:
      miniconda:
        module: miniconda_probe
        params:
          prefix: /opt/miniconda3
      firewall:
        module: state_check
        params:
          files:
            - path: /etc/nftables.d/torchfleet.nft
              content: "{{ rules }}"
  register: plan
'''

RETURN = r'''
answers:
  description:
    - Each check's answer by its name, as the check's own module returns it (its C(changed) is always false),
      or C(failed) and C(msg) when the check failed.
  returned: always
  type: dict
  sample: {"firewall": {"changed": false, "converged": true, "differences": []}}
ansible_facts:
  description: The facts the successful checks returned, merged (C(torch) from a torch_facts check).
  returned: always
  type: dict
  sample: {}
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.torchfleet.cluster.plugins.module_utils._plan import checks as plan_checks


def main():
    module = AnsibleModule(argument_spec=dict(checks=dict(type='dict', required=True)), supports_check_mode=True)
    answers = dict((name, plan_checks.run_check(module, name, check)) for name, check in module.params['checks'].items())
    module.exit_json(changed=False, answers=answers, ansible_facts=plan_checks.answered_facts(answers))


if __name__ == '__main__':
    main()
