# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures every unit test directory shares."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.torchfleet.cluster.tests.unit.plugins.modules.module_exits import patch_module_exits


@pytest.fixture
def module_exits(monkeypatch):
    """AnsibleModule's exit_json/fail_json raise ExitJson/FailJson carrying the result."""
    patch_module_exits(monkeypatch)
