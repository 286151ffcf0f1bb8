# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The role_deprecations action plugin: one deprecation warning per variable that is set."""

from __future__ import annotations

from unittest.mock import MagicMock

from ansible.parsing.dataloader import DataLoader
from ansible.playbook.play_context import PlayContext

from ansible_collections.torchfleet.cluster.plugins.action import role_deprecations


def make_action(args):
    task = MagicMock()
    task.args = args
    task.check_mode = False
    task.async_val = 0
    task.action = "torchfleet.cluster.role_deprecations"
    return role_deprecations.ActionModule(task, MagicMock(), PlayContext(), DataLoader(), None, None)


def test_each_variable_that_is_set_is_warned_about(monkeypatch):
    calls = []
    monkeypatch.setattr(role_deprecations.display, "deprecated", lambda msg, **kwargs: calls.append((msg, kwargs)))
    result = make_action({"role": "smoke", "version": "1.0.0",
                          "variables": {"smoke_tmp_parent": "is ignored", "smoke_other": "is ignored too"}}).run(task_vars={})
    assert result["deprecated"] == ["smoke_other", "smoke_tmp_parent"]
    assert result["changed"] is False and not result.get("failed")
    assert calls == [
        ("smoke: the variable smoke_other is deprecated and is ignored too",
         {"version": "1.0.0", "collection_name": "torchfleet.cluster"}),
        ("smoke: the variable smoke_tmp_parent is deprecated and is ignored",
         {"version": "1.0.0", "collection_name": "torchfleet.cluster"}),
    ]


def test_nothing_set_warns_nothing(monkeypatch):
    calls = []
    monkeypatch.setattr(role_deprecations.display, "deprecated", lambda msg, **kwargs: calls.append(msg))
    result = make_action({"role": "smoke", "version": "1.0.0"}).run(task_vars={})
    assert (result["deprecated"], calls) == ([], [])


def test_a_deprecated_entry_point_is_warned_about_before_the_variables(monkeypatch):
    calls = []
    monkeypatch.setattr(role_deprecations.display, "deprecated", lambda msg, **kwargs: calls.append(msg))
    result = make_action({"role": "drift_audit", "version": "1.0.0", "entry_points": {"main": "applies audit_schedule"},
                          "variables": {"drift_audit_on_calendar": "is audit_schedule_on_calendar"}}).run(task_vars={})
    assert result["deprecated"] == ["main", "drift_audit_on_calendar"]
    assert calls == ["drift_audit: the entry point main is deprecated and applies audit_schedule",
                     "drift_audit: the variable drift_audit_on_calendar is deprecated and is audit_schedule_on_calendar"]
