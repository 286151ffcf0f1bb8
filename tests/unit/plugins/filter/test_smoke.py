# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""smoke_node_result: one node's smoke-test result from what the job runner returned."""

from __future__ import annotations

import json

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.torchfleet.cluster.plugins.filter.smoke import FilterModule, rank_reports, smoke_node_result

PREFIX = "TORCHFLEET_SMOKE_RESULT "


def report(rank, ok=True, phase=None, uid=1000):
    phases = [{"name": "import", "ok": True, "seconds": 1.0, "cause": None, "detail": None}]
    if phase:
        phases.append({"name": phase, "ok": False, "seconds": 120.0, "cause": "timeout", "detail": "no progress"})
    return PREFIX + json.dumps({"ok": ok, "rank": rank, "host": "node1", "uid": uid, "torch": "2.13.0",
                                "backend": "gloo", "seconds": 3.5, "phases": phases})


def answer(state, lines, **job):
    record = {"state": state, "rc": job.pop("rc", 0), "log_tail": lines, "started": 100.0, "ended": 109.25}
    record.update(job)
    return {"changed": False, "job": record}


def test_a_node_passes_when_every_rank_reported_success():
    result = smoke_node_result(answer("succeeded", ["noise", report(3), report(2)]), 1, 2, 600)
    assert result["ok"] is True
    assert (result["rank"], result["ranks"], result["failed_rank"], result["seconds"]) == (1, [2, 3], None, 9.25)
    assert (result["uid"], result["backend"], result["killed"]) == (1000, "gloo", False)
    assert "detail" not in result


def test_the_first_failing_rank_is_shown_with_its_phase():
    result = smoke_node_result(answer("failed", [report(2), report(3, ok=False, phase="rpc")], rc=1), 1, 2, 600)
    assert result["ok"] is False
    assert result["failed_rank"] == 3
    assert [phase["name"] for phase in result["phases"] if not phase["ok"]] == ["rpc"]


def test_a_missing_rank_fails_the_node_even_when_the_job_succeeded():
    result = smoke_node_result(answer("succeeded", [report(0)]), 0, 2, 600)
    assert result["ok"] is False
    assert result["detail"] == "only 1 of 2 rank(s) reported"


def test_a_node_killed_at_the_hard_limit_says_so():
    result = smoke_node_result(answer("timed_out", ["still waiting"], rc=124), 2, 2, 600)
    assert (result["ok"], result["killed"], result["ranks"]) == (False, True, [])
    assert result["detail"].startswith("killed by the hard limit of 600 s (smoke_timeout)")


def test_a_node_stopped_for_another_names_it():
    result = smoke_node_result(answer("stopped", [], stopped_by="peer node1 failed first", rc=-15), 0, 2, 600)
    assert result["detail"] == "stopped (peer node1 failed first)"


def test_a_job_that_failed_without_a_report_shows_its_failure():
    failure = {"error": "RendezvousTimeoutError", "cause": "timeout", "hint": "a port is blocked"}
    result = smoke_node_result(answer("failed", ["x"], rc=1, failure=failure), 0, 2, 600)
    assert result["detail"] == "no report (failed, exit code 1): RendezvousTimeoutError (timeout: a port is blocked)"


def test_no_answer_from_the_node():
    result = smoke_node_result({"failed": True, "msg": "unreachable"}, 0, 2, 600)
    assert (result["ok"], result["seconds"], result["detail"]) == (False, None, "no answer: unreachable")


def test_reports_are_found_behind_a_prefix_and_bad_lines_are_skipped():
    lines = ["[default0]:" + report(1), PREFIX + "{not json", PREFIX + "[1]", PREFIX + json.dumps({"rank": "0"}), report(0)]
    assert [item["rank"] for item in rank_reports(lines)] == [0, 1]


def test_anything_but_a_registered_result_is_refused():
    with pytest.raises(AnsibleFilterError):
        smoke_node_result(["not", "a", "result"], 0, 2, 600)


def test_the_filter_is_registered():
    assert FilterModule().filters() == {"smoke_node_result": smoke_node_result}
