# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric reports: what they say, and that nothing a node reports can add a line, a tag or a sample."""

from __future__ import annotations

import json
from xml.etree import ElementTree

from ansible_collections.torchfleet.cluster.plugins.plugin_utils import fabric, fabric_reports

NODES = ["node0", "node1", "node2"]
LINKS = [("node0", "node1", 2.0, 60), ("node1", "node0", 2.2, 62), ("node0", "node2", 1.8, 58),
         ("node2", "node0", 0.02, 61), ("node1", "node2", 2.1, 70), ("node2", "node1", 0.03, 66)]
EVIL = 'eth0\n# HELP injected\n<testcase name="x"/>\r\x1b[2J| **bold** `tick`"quote"\\'


def report(links=None, environment=None, previous=None):
    links = LINKS if links is None else links
    raw = {"format": 1, "torch": "2.13.0+cpu", "nodes": NODES, "world_size": 3, "pairs": 3,
           "settings": {"backend": "gloo", "procs_per_node": 1, "environment": environment or {"GLOO_SOCKET_IFNAME": "eth0"}},
           "links": [{"src": s, "dst": d, "bandwidth_gbs": bw, "latency_us": lat} for s, d, bw, lat in links],
           "allreduce": [{"bytes": 8, "seconds": 1e-4, "algbw_gbs": 8e-5, "busbw_gbs": 1.1e-4},
                         {"bytes": 16777216, "seconds": 0.02, "algbw_gbs": 0.84, "busbw_gbs": 1.12}], "seconds": 2.0}
    result = fabric.validate_result(json.dumps(raw), "node0", NODES)
    verdict = fabric.judge(result)
    degraded = fabric.degraded_links(previous, verdict["links"], 0.8)
    return fabric_reports.build(result, verdict, "node0", "2026-12-07T22:00:00Z", 1796680800.0, degraded=degraded,
                                previous_generated_at=(previous or {}).get("generated_at"))


def test_summary_names_the_slowest_link_and_the_largest_allreduce():
    line = fabric_reports.lines(report())[0]
    assert line.startswith("torchfleet fabric: FAIL (3 nodes, 6 directed links (gloo); slowest link node2 -> node0 0.020 GB/s")
    assert "all-reduce busbw 1.120 GB/s at 16777216 B" in line


def test_junit_fails_the_slow_node_only():
    root = ElementTree.fromstring(fabric_reports.to_junit(report()))
    cases = {case.get("name"): case.find("failure") for case in root.iter("testcase")}
    assert sorted(cases) == ["allreduce", "node0", "node1", "node2"]
    assert cases["node2"] is not None and "node node2 is slow" in cases["node2"].get("message")
    assert cases["node0"] is None and cases["node1"] is None and cases["allreduce"] is None


def test_prometheus_link_gauges():
    text = fabric_reports.to_prometheus(report())
    assert 'torchfleet_fabric_link_bandwidth_bytes_per_second{src="node2",dst="node0"} 20000000.0' in text
    assert 'torchfleet_fabric_node_slow{host="node2"} 1' in text
    assert 'torchfleet_fabric_passed 0' in text


def test_node_reported_text_is_escaped_in_every_format():
    rendered = report(environment={"NCCL_SOCKET_IFNAME": EVIL})
    markdown = fabric_reports.to_markdown(rendered)
    assert "\n# HELP" not in markdown and "<testcase" not in markdown and "\x1b" not in markdown
    ElementTree.fromstring(fabric_reports.to_junit(rendered))
    json.loads(fabric_reports.to_json(rendered))
    assert all("\n" not in line and "\x1b" not in line for line in fabric_reports.lines(rendered))


def test_degraded_links_are_reported():
    healthy = [(s, d, 2.0, 60) for s, d, _bw, _lat in LINKS]
    previous = report(links=healthy)
    now = report(previous=previous)
    assert [(entry["src"], entry["dst"]) for entry in now["degraded"]] == [("node2", "node0"), ("node2", "node1")]
    assert any(line.startswith("degraded since 2026-12-07T22:00:00Z: node2 -> node0 bandwidth 2 -> 0.02")
               for line in fabric_reports.lines(now))
