# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""AnsibleModule.exit_json/fail_json replaced by exceptions that carry the result."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils import basic


class ExitJson(Exception):
    pass


class FailJson(Exception):
    pass


def exit_json(self, **kwargs):
    kwargs.setdefault('changed', False)
    raise ExitJson(kwargs)


def fail_json(self, **kwargs):
    kwargs['failed'] = True
    raise FailJson(kwargs)


def patch_module_exits(monkeypatch):
    monkeypatch.setattr(basic.AnsibleModule, 'exit_json', exit_json)
    monkeypatch.setattr(basic.AnsibleModule, 'fail_json', fail_json)
