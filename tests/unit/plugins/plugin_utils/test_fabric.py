# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric verdict and the validation of what a node reports, as data (fixtures/fabric_*.yml)."""

from __future__ import annotations

import copy
import json
import os

import pytest
import yaml

from ansible_collections.torchfleet.cluster.plugins.plugin_utils import fabric

HERE = os.path.dirname(__file__)


def load(name):
    with open(os.path.join(HERE, "fixtures", name), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


VERDICTS = load("fabric_verdict.yml")
MALFORMED = load("fabric_malformed.yml")
MEMBERS = ["node0", "node1", "node2"]


def raw_result(nodes, links, allreduce=None):
    return {"format": 1, "torch": "2.13.0+cpu", "nodes": list(nodes), "world_size": len(nodes), "pairs": 3,
            "settings": {"backend": "gloo", "procs_per_node": 1, "environment": {"GLOO_SOCKET_IFNAME": "eth0"}},
            "links": [{"src": s, "dst": d, "bandwidth_gbs": bw, "latency_us": lat} for s, d, bw, lat in links],
            "allreduce": allreduce if allreduce is not None else
            [{"bytes": 8, "seconds": 1e-4, "algbw_gbs": 8e-5, "busbw_gbs": 1e-4}], "seconds": 1.5}


def verdict_of(case):
    raw = raw_result(case["nodes"], case["links"], case.get("allreduce"))
    result = fabric.validate_result(json.dumps(raw), case["nodes"][0], case["nodes"])
    return fabric.judge(result, case.get("thresholds"))


@pytest.mark.parametrize("case", VERDICTS, ids=[case["name"] for case in VERDICTS])
def test_verdict(case):
    verdict = verdict_of(case)
    expect = case["expect"]
    assert verdict["passed"] is expect["passed"]
    for key in ("fleet_bandwidth_gbs", "fleet_latency_us", "expected_bandwidth_gbs", "latency_limit_us"):
        if key in expect:
            assert verdict["limits"][key] == pytest.approx(expect[key]), key
    if "slow_nodes" in expect:
        assert verdict["slow_nodes"] == expect["slow_nodes"]
    if "slow_links" in expect:
        found = [[f["src"], f["dst"]] for f in verdict["findings"] if f["kind"] == "link"]
        assert found == expect["slow_links"]
    if "slowest_link" in expect:
        assert [verdict["slowest_link"]["src"], verdict["slowest_link"]["dst"]] == expect["slowest_link"]
    messages = " | ".join(f["message"] for f in verdict["findings"])
    for text in expect.get("messages", ()):
        assert text in messages


def test_a_slow_node_is_one_finding_and_names_no_healthy_peer():
    case = next(c for c in VERDICTS if c["name"].startswith("one slow node"))
    findings = verdict_of(case)["findings"]
    assert [f["kind"] for f in findings] == ["node"]
    assert findings[0]["node"] == "node2" and findings[0]["peers"] == ["node0", "node1"]
    assert "node node0 is slow" not in findings[0]["message"] and "node node1" not in findings[0]["message"]


@pytest.mark.parametrize("case", MALFORMED, ids=[case["name"] for case in MALFORMED])
def test_malformed_results_are_refused(case):
    if "text" in case:
        text = case["text"]
    else:
        raw = raw_result(MEMBERS, [("node0", "node1", 1.0, 10.0)])
        raw.update(copy.deepcopy(case["result"]))
        text = json.dumps(raw)
    with pytest.raises(fabric.FabricReportError) as info:
        fabric.validate_result(text, "node0", MEMBERS)
    assert case["error"] in str(info.value)
    assert "node0" in str(info.value)


def test_nan_and_infinity_are_refused():
    raw = raw_result(MEMBERS, [("node0", "node1", 1.0, 10.0)])
    for bad in ("NaN", "Infinity"):
        text = json.dumps(raw).replace('"latency_us": 10.0', '"latency_us": ' + bad)
        with pytest.raises(fabric.FabricReportError, match="links.0..latency_us must be between"):
            fabric.validate_result(text, "node0", MEMBERS)


def test_find_result_takes_the_last_result_line():
    lines = ["noise", fabric.RESULT_PREFIX + '{"a": 1}', "more", fabric.RESULT_PREFIX + '{"a": 2}', "tail"]
    assert fabric.find_result(lines) == '{"a": 2}'
    assert fabric.find_result(["nothing"]) is None


@pytest.mark.parametrize("thresholds, error", [
    ({"bandwidth_fraction": 0}, "bandwidth_fraction must be above 0"),
    ({"bandwidth_fraction": 1.5}, "bandwidth_fraction must be above 0"),
    ({"latency_factor": 0.5}, "latency_factor must be at least 1"),
    ({"bandwidth_floor_gbs": -1}, "must be a number >= 0"),
    ({"bandwidth_floor_gbs": "1"}, "must be a number >= 0"),
    ({"typo": 1}, "unknown threshold"),
])
def test_bad_thresholds(thresholds, error):
    with pytest.raises(fabric.FabricReportError, match=error):
        fabric.check_thresholds(thresholds)


def test_degraded_links_against_the_previous_report():
    links = [{"src": "node0", "dst": "node1", "bandwidth_gbs": 1.0, "latency_us": 100.0},
             {"src": "node1", "dst": "node0", "bandwidth_gbs": 2.0, "latency_us": 50.0},
             {"src": "node1", "dst": "node2", "bandwidth_gbs": 2.0, "latency_us": 50.0}]
    previous = {"links": [{"src": "node0", "dst": "node1", "bandwidth_gbs": 2.0, "latency_us": 50.0},
                          {"src": "node1", "dst": "node0", "bandwidth_gbs": 2.1, "latency_us": 49.0},
                          {"src": "node1", "dst": "node2", "bandwidth_gbs": "garbage"}, "not a link"]}
    degraded = fabric.degraded_links(previous, links, 0.8)
    assert [(d["src"], d["dst"], [c["metric"] for c in d["changes"]]) for d in degraded] == [
        ("node0", "node1", ["bandwidth_gbs", "latency_us"])]
    assert fabric.degraded_links(None, links, 0.8) == []
