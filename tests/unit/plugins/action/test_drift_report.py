# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drift_report action plugin: probe results → report, files, generations, check mode, failure."""

from __future__ import annotations

import hashlib
import json
import os
from unittest.mock import MagicMock

import pytest

from ansible.errors import AnsibleActionFail
from ansible.parsing.dataloader import DataLoader
from ansible.playbook.play_context import PlayContext

from ansible_collections.torchfleet.cluster.plugins.action import drift_report
from ansible_collections.torchfleet.cluster.tests.unit.plugins.plugin_utils.fleet import base_facts

SPEC_TEXT = """\
name: train
channels:
  - conda-forge
dependencies:
  - python=3.11
  - pip
  - numpy=2.4.6
  - pip:
      - torch==2.13.0
"""


def ok(facts):
    return {"changed": False, "ansible_facts": {"torch": facts}}


SPEC_SHA256 = hashlib.sha256(SPEC_TEXT.encode()).hexdigest()


def changed_numpy(version):
    """A node built from SPEC_TEXT (its stamp carries the spec's digest) with this numpy."""
    facts = base_facts()
    facts["env"]["packages"]["numpy"] = version
    facts["env"]["spec_sha256"] = SPEC_SHA256
    return facts


# (registered result, fallback ansible_facts.torch, expected outcome kind, message part)
OUTCOMES = [
    (ok({"version": "x"}), None, "facts", None),
    ({"unreachable": True, "msg": "ssh: connect to host node1 port 22: No route to host"}, None, "unreachable", "No route"),
    ({"failed": True, "msg": "torch_facts probe with interpreter /x/bin/python failed"}, None, "failed", "/x/bin/python"),
    ({"skipped": True, "skip_reason": "Conditional result was False"}, None, "failed", "skipped"),
    ({"changed": False, "ansible_facts": {"torch": None}, "warnings": ["torch is missing"]}, None, "failed", "torch is missing"),
    (None, {"version": "y"}, "facts", None),
    (None, None, "unreachable", "no probe result"),
]


@pytest.mark.parametrize("registered,fallback,kind,message", OUTCOMES)
def test_probe_outcome(registered, fallback, kind, message):
    got_kind, value = drift_report.probe_outcome(registered, fallback)
    assert got_kind == kind
    if message:
        assert message in value


def make_action(args, check_mode=False):
    task = MagicMock()
    task.args = args
    task.check_mode = check_mode
    task.async_val = 0
    task.action = "torchfleet.cluster.drift_report"
    return drift_report.ActionModule(task, MagicMock(), PlayContext(), DataLoader(), None, None)


def task_vars(results, **extra):
    hostvars = {host: {"drift_audit_probe": result} for host, result in results.items()}
    return dict({"hostvars": hostvars, "ansible_play_hosts_all": list(results)}, **extra)


def fleet_results(numpy_versions, unreachable=()):
    results = {}
    for index, version in enumerate(numpy_versions):
        host = f"node{index}"
        results[host] = {"unreachable": True, "msg": "gone"} if host in unreachable else ok(changed_numpy(version))
    return results


@pytest.fixture
def spec_file(tmp_path):
    path = tmp_path / "environment.yml"
    path.write_text(SPEC_TEXT)
    return str(path)


def run(args, results, check_mode=False, **extra):
    return make_action(args, check_mode).run(task_vars=task_vars(results, **extra))


def test_clean_fleet_writes_every_report(tmp_path, spec_file):
    out = tmp_path / "reports"
    result = run({"spec_file": spec_file, "report_dir": str(out)}, fleet_results(["2.4.6"] * 3))
    assert result["passed"] and result["consistent"] and not result.get("failed")
    assert result["verdict"] == "torchfleet drift audit: CONSISTENT (3/3 hosts compared)"
    names = sorted(os.listdir(out))
    latest = ["latest.json", "latest.junit.xml", "latest.md", "torchfleet_drift.prom"]
    assert [n for n in names if not n.startswith("drift-")] == latest
    assert len([n for n in names if n.startswith("drift-")]) == 1
    assert sorted(result["files"]) == ["generation", "json", "junit", "markdown", "prometheus", "pruned"]
    data = json.loads((out / "latest.json").read_text())
    assert data["spec"]["file"] == spec_file and data["spec"]["name"] == "train"
    assert data["summary"]["spec_fields"] == 6
    assert result["changed"] is True


def test_planted_drift_is_named_everywhere(tmp_path, spec_file):
    out = tmp_path / "reports"
    result = run({"spec_file": spec_file, "report_dir": str(out)}, fleet_results(["2.4.6", "2.4.6", "2.4.5"]))
    assert not result["passed"]
    assert result["lines"][2].split() == ["env.packages.numpy", "node2", "2.4.5", "=2.4.6", "spec"]
    data = json.loads((out / "latest.json").read_text())
    assert data["drift"] == [{"field": "env.packages.numpy", "expected": "=2.4.6", "source": "spec", "rule": "constraint",
                              "tie": False, "hosts": {"node2": "2.4.5"}}]
    for name in ("latest.md", "latest.junit.xml"):
        text = (out / name).read_text()
        assert "node2" in text and "env.packages.numpy" in text and "2.4.5" in text
    assert 'torchfleet_drift_fields{host="node2"} 1' in (out / "torchfleet_drift.prom").read_text()


def test_uniform_drift_against_the_spec(spec_file):
    result = run({"spec_file": spec_file}, fleet_results(["2.5.0"] * 3))
    (entry,) = result["report"]["drift"]
    assert entry["source"] == "spec" and list(entry["hosts"]) == ["node0", "node1", "node2"]


def test_unreachable_host_is_reported_not_fatal(spec_file):
    result = run({"spec_file": spec_file}, fleet_results(["2.4.6"] * 3, unreachable={"node1"}))
    assert result["report"]["unreachable"] == ["node1"]
    assert result["consistent"] and not result["passed"] and not result.get("failed")


def test_hosts_are_named_by_inventory_name_then_address(spec_file):
    """torch_node_address first, else ansible_host; the JSON keys stay inventory names."""
    results = fleet_results(["2.4.6", "2.4.5", "2.4.6"], unreachable={"node2"})
    variables = task_vars(results)
    variables["hostvars"]["node1"].update(ansible_host="192.0.2.11", torch_node_address="10.10.0.11")
    variables["hostvars"]["node2"].update(ansible_host="192.0.2.12")
    result = make_action({"spec_file": spec_file}).run(task_vars=variables)
    assert result["report"]["addresses"] == {"node1": "10.10.0.11", "node2": "192.0.2.12"}
    assert result["report"]["unreachable"] == ["node2"] and list(result["report"]["drift"][0]["hosts"]) == ["node1"]
    assert "unreachable: node2 (192.0.2.12)" in result["verdict"]
    assert any(line.split()[:2] == ["env.packages.numpy", "node1"] and "(10.10.0.11)" in line for line in result["lines"])


def test_fail_on_drift(spec_file):
    result = run({"spec_file": spec_file, "fail_on_drift": True}, fleet_results(["2.4.6", "1.0"]))
    assert result["failed"] and "env.packages.numpy" in result["msg"] and "node1" in result["msg"]


def test_second_identical_run_is_ok_and_keeps_generations(tmp_path, spec_file):
    out = tmp_path / "reports"
    args = {"spec_file": spec_file, "report_dir": str(out), "keep": 2}
    results = fleet_results(["2.4.6"] * 2)
    stamps = []
    for _run in range(4):
        result = run(args, results)
        stamps.append(result["changed"])
    assert stamps == [True, False, False, False]
    assert len([n for n in os.listdir(out) if n.startswith("drift-")]) == 2
    report = json.loads((out / "latest.json").read_text())
    assert report["changed_since"]["changed"] is False
    drifted = run(args, fleet_results(["2.4.6", "2.4.7"]))
    assert drifted["changed"] is True
    assert drifted["report"]["changed_since"]["changes"][0]["hosts"] == ["node1"]


def test_keep_zero_keeps_all(tmp_path):
    out = tmp_path / "r"
    for _run in range(3):
        run({"report_dir": str(out), "keep": 0}, fleet_results(["1"]))
    assert len([n for n in os.listdir(out) if n.startswith("drift-")]) == 3


def test_check_mode_still_writes_unless_told(tmp_path):
    out = tmp_path / "r"
    run({"report_dir": str(out)}, fleet_results(["1"]), check_mode=True)
    assert (out / "latest.json").exists()
    other = tmp_path / "s"
    result = run({"report_dir": str(other), "write_in_check_mode": False}, fleet_results(["1"]), check_mode=True)
    assert not other.exists() and result["files"] == {}


def test_textfile_dir(tmp_path):
    out, textfiles = tmp_path / "r", tmp_path / "node_exporter"
    textfiles.mkdir()
    result = run({"report_dir": str(out), "textfile_dir": str(textfiles)}, fleet_results(["1", "1"]))
    assert (textfiles / "torchfleet_drift.prom").read_text() == (out / "torchfleet_drift.prom").read_text()
    assert result["files"]["textfile"] == str(textfiles / "torchfleet_drift.prom")


def test_corrupt_previous_report_warns(tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    (out / "latest.json").write_text("{not json")
    result = run({"report_dir": str(out)}, fleet_results(["1"]))
    assert "ignoring the previous report" in result["warnings"][0]


def test_explicit_facts_and_rules():
    facts = {"a": base_facts(1, 0), "b": base_facts(1, 1), "c": None}
    facts["b"]["driver"] = "535.1"
    result = run({"facts": facts, "rules": {"driver": {"min": "550"}}}, {})
    assert result["report"]["unreachable"] == ["c"]
    assert result["report"]["drift"][0]["hosts"] == {"b": "535.1"}


def test_reference_host_from_torch_master():
    result = run({}, fleet_results(["1", "2"]), torch_master="node1")
    assert result["report"]["reference_host"] == "node1"
    assert result["report"]["drift"][0]["hosts"] == {"node0": "1"}


def test_lock_file(tmp_path):
    lock = tmp_path / "lock.txt"
    lock.write_text("@EXPLICIT\nhttps://x.invalid/linux-64/numpy-2.4.7-py311_0.conda\n")
    result = run({"lock_file": str(lock)}, fleet_results(["2.4.6", "2.4.6"]))
    assert result["report"]["drift"][0]["expected"] == "2.4.7"
    assert result["report"]["spec"]["lock_file"] == str(lock)


@pytest.mark.parametrize("args,match", [
    ({"spec_file": "/nonexistent/environment.yml"}, "cannot read the environment spec"),
    ({"rules": {"driver": "sometimes"}}, "driver"),
    ({"hosts": ["ghost"]}, "not in the inventory"),
])
def test_errors_name_the_problem(args, match):
    with pytest.raises(AnsibleActionFail, match=match):
        run(args, fleet_results(["1"]))


def test_invalid_spec_names_file_and_line(tmp_path):
    bad = tmp_path / "environment.yml"
    bad.write_text(SPEC_TEXT.replace("numpy=2.4.6", "numpy==="))
    with pytest.raises(AnsibleActionFail, match=r"environment.yml:7"):
        run({"spec_file": str(bad)}, fleet_results(["1"]))


def test_unknown_option():
    with pytest.raises(AnsibleActionFail):
        run({"bogus": 1}, fleet_results(["1"]))


def test_generation_names_sort_by_time(tmp_path):
    writer = drift_report.ReportWriter(str(tmp_path), keep=0)
    for name in ("drift-20260101T000000Z.json", "drift-20260101T000000Z.2.json", "drift-20251231T235959Z.json",
                 "drift-20260101T000000Z.10.json", "latest.json", "drift-bogus.json"):
        (tmp_path / name).write_text("{}")
    assert [os.path.basename(p) for p in writer.generations()] == [
        "drift-20251231T235959Z.json", "drift-20260101T000000Z.json", "drift-20260101T000000Z.2.json",
        "drift-20260101T000000Z.10.json"]
