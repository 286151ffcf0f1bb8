# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drift against what was built (source build), provenance as information, probe failures
in the change summary, pip/conda mix warnings: cases as data."""

from __future__ import annotations

import json

import pytest

from ansible_collections.torchfleet.cluster.plugins.plugin_utils import reports
from ansible_collections.torchfleet.cluster.plugins.plugin_utils.consistency import build_report
from ansible_collections.torchfleet.cluster.tests.unit.plugins.plugin_utils.fleet import fleet

SIX = {"six": {"built": None, "live": {"version": "1.17.0", "build": "pypi_0"}}}
GONE = {"sympy": {"built": {"version": "1.13.3", "build": "pyh_0"}, "live": None}}
REBUILT = {"numpy": {"built": {"version": "2.4.6", "build": "py311_cpu_0"}, "live": {"version": "2.4.6", "build": "py311_cuda_0"}}}
UPGRADED = {"numpy": {"built": {"version": "2.4.6", "build": "py311_0"}, "live": {"version": "2.5.0", "build": "py311_0"}}}


def with_changes(count, per_host, package_edits=()):
    """A fleet whose hosts report ``build_changes`` (per_host: {index: changes}, others: {})."""
    hosts = fleet(count, package_edits)
    for index, host in enumerate(hosts):
        hosts[host]["env"]["build_changes"] = per_host.get(index, {})
    return hosts


def rows(report, source="build"):
    return [(d["field"], d["expected"], d["hosts"]) for d in report["drift"] if d["source"] == source]


# (id, hosts, build_report kwargs, build rows, consistent)
BUILD_CASES = [
    ("nothing changed since the build", with_changes(3, {}), {}, [], True),
    ("six added by hand on every node", with_changes(3, {i: SIX for i in range(3)}, [(i, "env.packages.six", "1.17.0") for i in range(3)]),
     {}, [("env.packages.six", None, {"node0": "1.17.0", "node1": "1.17.0", "node2": "1.17.0"})], False),
    ("removed by hand on every node", with_changes(3, {i: GONE for i in range(3)}, [(i, "env.packages.sympy", None) for i in range(3)]),
     {}, [("env.packages.sympy", "1.13.3", {"node0": None, "node1": None, "node2": None})], False),
    ("another build string of the same version names the package", with_changes(2, {0: REBUILT, 1: REBUILT}), {},
     [("env.builds.numpy", "py311_cpu_0", {"node0": "py311_cuda_0", "node1": "py311_cuda_0"})], False),
    ("build strings not compared (mixed architectures)", with_changes(2, {0: REBUILT, 1: REBUILT}), {"compare_builds": False},
     [], True),
    ("a version change is still drift without build strings", with_changes(2, {0: UPGRADED, 1: UPGRADED},
                                                                           [(i, "env.packages.numpy", "2.5.0") for i in range(2)]),
     {"compare_builds": False}, [("env.packages.numpy", "2.4.6", {"node0": "2.5.0", "node1": "2.5.0"})], False),
    # node1 alone: the majority names it; the build source does not repeat it
    ("one node: reported once, by the majority", with_changes(3, {1: SIX}, [(1, "env.packages.six", "1.17.0")]), {}, [], False),
]


@pytest.mark.parametrize("name,hosts,kwargs,expected,consistent", BUILD_CASES, ids=[c[0] for c in BUILD_CASES])
def test_drift_against_the_build(name, hosts, kwargs, expected, consistent):
    report = build_report(hosts, **kwargs)
    assert rows(report) == expected
    assert report["consistent"] is consistent
    assert report["summary"]["build_entries"] == len(expected)
    assert not any(f.startswith(("env.build_changes", "env.duplicates")) for f in report["baseline"])


def test_one_node_added_package_is_named_once():
    report = build_report(with_changes(3, {1: SIX}, [(1, "env.packages.six", "1.17.0")]))
    assert [(d["field"], d["source"], d["hosts"]) for d in report["drift"]] == [("env.packages.six", "majority", {"node1": "1.17.0"})]


def test_hosts_without_a_build_record_are_listed():
    hosts = fleet(2)
    hosts["node0"]["env"]["build_changes"] = {}
    hosts["node1"]["env"]["build_changes"] = None
    assert build_report(hosts)["build"] == {"compare_builds": True, "unrecorded": ["node1"], "entries": 0}


def test_build_string_differences_between_nodes_name_the_package():
    hosts = fleet(3)
    for index, host in enumerate(hosts):
        hosts[host]["env"]["builds"] = {"numpy": "py311_cuda_0" if index == 2 else "py311_cpu_0"}
    report = build_report(hosts)
    assert [(d["field"], d["hosts"]) for d in report["drift"]] == [("env.builds.numpy", {"node2": "py311_cuda_0"})]
    assert build_report(hosts, compare_builds=False)["consistent"]


# --- provenance ---------------------------------------------------------------------------------

UPGRADE = [(2, "env.stamp.collection_version", "0.2.0"), (2, "env.stamp.spec_file", "/other/checkout/environment.yml")]


def test_provenance_is_information_not_drift():
    report = build_report(fleet(3, UPGRADE))
    assert report["consistent"] and report["drift"] == []
    assert report["provenance"]["env.stamp.collection_version"] == [
        {"value": "0.1.0", "hosts": ["node0", "node1"]}, {"value": "0.2.0", "hosts": ["node2"]}]
    assert "provenance (not drift): env.stamp.spec_file: environment.yml on node0, node1; " \
           "/other/checkout/environment.yml on node2" in reports.to_table(report)


def test_provenance_is_drift_when_asked():
    report = build_report(fleet(3, UPGRADE), provenance_is_drift=True)
    assert sorted(d["field"] for d in report["drift"]) == ["env.stamp.collection_version", "env.stamp.spec_file"]
    assert report["provenance"] == {}


def test_the_info_rule_applies_to_any_field():
    report = build_report(fleet(3, [(0, "python", "3.11.15")]), rules={"python": "info"})
    assert report["consistent"] and report["provenance"]["python"][1] == {"value": "3.11.15", "hosts": ["node0"]}


# --- a failed probe says it failed, and why -------------------------------------------------------

def test_a_failed_probe_is_not_reported_as_unreachable():
    previous = json.loads(json.dumps(build_report(fleet(3))))
    why = "torch cannot be imported by /opt/miniconda3/envs/train/bin/python: ModuleNotFoundError; rc=1"
    report = build_report(fleet(3) | {"node1": None}, failed={"node1": why}, previous=previous)
    changed = report["changed_since"]
    assert changed["became_unreachable"] == [] and changed["became_failed"] == {"node1": why}
    summary = reports.to_table(report)[-1]
    assert "now unreachable" not in summary and f"probe failed on node1: {why}" in summary


# --- pip mixed into conda -------------------------------------------------------------------------

def test_mix_warnings_are_reported_not_failed():
    hosts = fleet(2)
    for host in hosts:
        env = hosts[host]["env"]
        env["builds"] = {"numpy": "pypi_0", "python": "h_cpython", "six": "pypi_0", "torch": "pypi_0"}
        env["packages"]["six"] = "1.17.0"
        env["duplicates"] = {"six": {"conda": "1.16.0", "pip": "1.17.0"}}
    report = build_report(hosts)
    assert report["consistent"]
    assert [(w["package"], w["kind"], w["hosts"]) for w in report["warnings"]] == [
        ("numpy", "pip_over_conda", ["node0", "node1"]), ("six", "two_copies", ["node0", "node1"])]
    assert "BLAS" in report["warnings"][0]["reason"]
    assert any(line.startswith("warning: six (conda 1.16.0, pip 1.17.0) on node0, node1") for line in reports.to_table(report))
    assert "### Warnings (pip and conda)" in reports.to_markdown(report)
