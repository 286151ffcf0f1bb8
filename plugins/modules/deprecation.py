#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: deprecation
short_description: Warn that a role's entry point or variable of this collection is deprecated
version_added: 0.1.0
description:
  - Shows Ansible's deprecation warning for C(torchfleet.cluster) with O(msg) and the release O(version) that
    removes what it names. The collection's roles use it where they keep an old name working.
  - Runs on the controller only (an action plugin) and changes nothing.
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
  msg:
    description:
      - What is deprecated and what to use instead.
    type: str
    required: true
  version:
    description:
      - The collection release that removes it.
    type: str
    required: true
'''

EXAMPLES = r'''
- name: Say that the old entry point goes in 2.0.0
  torchfleet.cluster.deprecation:
    msg: "torchfleet.cluster.drift_audit's main entry point is deprecated; use torchfleet.cluster.audit_schedule."
    version: 2.0.0
'''

RETURN = r'''
msg:
  description: The warning's text.
  returned: always
  type: str
'''
