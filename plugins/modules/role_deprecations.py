#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

# The work is done by the action plugin plugins/action/role_deprecations.py, on the controller.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: role_deprecations
short_description: Warn that a role's deprecated entry point is used or its deprecated variables are set
version_added: 0.1.0
author:
  - torchfleet developers (@torchfleet)
description:
  - Runs on the controller only (an action plugin); it never contacts a node.
  - Shows one deprecation warning per entry point in O(entry_points) and per variable in O(variables), saying what
    the role does with it now. The role passes only the variables that the play sets, so a play that leaves them
    alone sees no warning, and an entry point only where it runs.
  - Changes nothing and never fails because of a variable.
options:
  role:
    description: The role whose variables these are, named in each warning.
    type: str
    required: true
  variables:
    description: Each deprecated variable that is set, with what the role does with it now.
    type: dict
    default: {}
  entry_points:
    description: The deprecated entry point that runs, with what to use instead.
    type: dict
    default: {}
  version:
    description: The collection version that removes the variables.
    type: str
    required: true
extends_documentation_fragment:
  - torchfleet.cluster.attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
'''

EXAMPLES = r'''
- name: Warn about the deprecated variables that are set
  torchfleet.cluster.role_deprecations:
    role: smoke
    version: 1.0.0
    variables: "{{ {'smoke_tmp_parent': 'ignored: the job runner keeps the program'} if smoke_tmp_parent | length > 0 else {} }}"
  run_once: true

- name: Say that this entry point is deprecated
  torchfleet.cluster.role_deprecations:
    role: drift_audit
    version: 1.0.0
    entry_points:
      main: "applies torchfleet.cluster.audit_schedule; use that role"
  run_once: true
'''

RETURN = r'''
deprecated:
  description: The entry points, then the variables, warned about, each sorted.
  returned: always
  type: list
  elements: str
  sample: [smoke_tmp_parent]
'''
