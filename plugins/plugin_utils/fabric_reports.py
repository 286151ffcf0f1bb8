# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric report and its renderers, in the audit's formats: console lines, JSON, Markdown,
JUnit XML (a test case per node and one for the all-reduce) and a Prometheus textfile.

Host names come from the inventory, but the environment settings come from a node: every string
goes through the escaping of ``reports`` for its format, like the drift audit's."""

from __future__ import annotations

from ansible_collections.torchfleet.cluster.plugins.plugin_utils import reports
# The audit's escaping, one function per format, shared so that both reports escape alike.
from ansible_collections.torchfleet.cluster.plugins.plugin_utils.reports import (
    _console, _md, _md_code, _xml_attr, _xml_text)

to_json = reports.to_json


def build(result, verdict, master, generated_at, timestamp, degraded=None, previous_generated_at=None):
    """The report dict written as fabric-latest.json."""
    return {"passed": verdict["passed"], "generated_at": generated_at, "timestamp": timestamp,
            "hosts": result["nodes"], "master": master, "backend": result["settings"]["backend"],
            "torch": result["torch"], "world_size": result["world_size"], "settings": result["settings"],
            "pairs": result["pairs"], "seconds": result["seconds"], "thresholds": verdict["thresholds"],
            "limits": verdict["limits"], "slow_nodes": verdict["slow_nodes"], "findings": verdict["findings"],
            "links": verdict["links"], "allreduce": result["allreduce"],
            "largest_allreduce": verdict["largest_allreduce"], "slowest_link": verdict["slowest_link"],
            "degraded": degraded or [], "previous_generated_at": previous_generated_at}


def _gbs(value):
    return "-" if value is None else f"{value:.3f}"


def _us(value):
    return "-" if value is None else f"{value:.1f}"


def summary(report):
    """One line: pass or fail, the slowest link and the all-reduce bus bandwidth at the largest size."""
    state = "PASS" if report["passed"] else "FAIL"
    parts = [f"{len(report['hosts'])} nodes, {len(report['links'])} directed links ({report['backend']})"]
    slowest = report.get("slowest_link")
    if slowest:
        parts.append(f"slowest link {slowest['src']} -> {slowest['dst']} {_gbs(slowest['bandwidth_gbs'])} GB/s, "
                     f"{_us(slowest['latency_us'])} us")
    largest = report.get("largest_allreduce")
    if largest:
        parts.append(f"all-reduce busbw {_gbs(largest['busbw_gbs'])} GB/s at {largest['bytes']} B")
    limits = report["limits"]
    if limits.get("fleet_bandwidth_gbs") is not None:
        parts.append(f"fleet median {_gbs(limits['fleet_bandwidth_gbs'])} GB/s, {_us(limits['fleet_latency_us'])} us")
    return f"torchfleet fabric: {state} ({'; '.join(parts)})"


def lines(report, max_rows=50):
    """Console lines: the summary, each finding, each degraded link, then the link table."""
    out = [summary(report)] + [finding["message"] for finding in report["findings"]]
    out += [f"degraded since {report['previous_generated_at']}: {_degraded_text(entry)}" for entry in report["degraded"]]
    out.append(f"{'SOURCE':<16} {'DESTINATION':<16} {'GB/s':>10} {'LATENCY us':>12}  VERDICT")
    for link in report["links"][:max_rows]:
        out.append(f"{link['src']:<16} {link['dst']:<16} {_gbs(link['bandwidth_gbs']):>10} "
                   f"{_us(link['latency_us']):>12}  {'FAIL' if link['problems'] else 'ok'}")
    if len(report["links"]) > max_rows:
        out.append(f"... {len(report['links']) - max_rows} more link(s) in fabric-latest.json")
    return [_console(line) for line in out]


def _degraded_text(entry):
    changes = ", ".join(f"{'bandwidth' if c['metric'] == 'bandwidth_gbs' else 'latency'} "
                        f"{c['before']:.4g} -> {c['after']:.4g}" for c in entry["changes"])
    return f"{entry['src']} -> {entry['dst']} {changes}"


def to_markdown(report, max_rows=500):
    out = [f"## {_md(summary(report))}", "",
           f"Generated {_md(report['generated_at'])}; master {_md_code(report['master'])}; backend "
           f"{_md_code(report['backend'])}; torch {_md_code(report['torch'])}; {_md(report['pairs'])} pairs measured "
           f"in {_md(round(report['seconds'], 1))} s.", ""]
    if report["findings"]:
        out += ["### Findings", ""] + [f"- {_md(finding['message'])}" for finding in report["findings"]] + [""]
    out += ["### Links", "", "| Source | Destination | Bandwidth GB/s | Latency us | Verdict |", "|---|---|---:|---:|---|"]
    for link in report["links"][:max_rows]:
        out.append(f"| {_md_code(link['src'])} | {_md_code(link['dst'])} | {_gbs(link['bandwidth_gbs'])} "
                   f"| {_us(link['latency_us'])} | {'FAIL' if link['problems'] else 'ok'} |")
    out += ["", "### All-reduce", "", "| Bytes | Time us | algbw GB/s | busbw GB/s |", "|---:|---:|---:|---:|"]
    for row in report["allreduce"]:
        out.append(f"| {row['bytes']} | {_us(row['seconds'] * 1e6)} | {_gbs(row['algbw_gbs'])} | {_gbs(row['busbw_gbs'])} |")
    if report["degraded"]:
        out += ["", f"### Degraded since {_md(report['previous_generated_at'])}", ""]
        out += [f"- {_md(_degraded_text(entry))}" for entry in report["degraded"]]
    environment = report["settings"].get("environment") or {}
    if environment:
        out += ["", "### Settings", ""] + [f"- {_md_code(k)} = {_md_code(v)}" for k, v in sorted(environment.items())]
    return "\n".join(out).rstrip() + "\n"


def _node_messages(report):
    """Per node, the findings that concern it (its own, or a failing link it is an end of)."""
    messages = {host: [] for host in report["hosts"]}
    for finding in report["findings"]:
        if finding["kind"] == "node":
            messages[finding["node"]].append(finding["message"])
        elif finding["kind"] == "link":
            for host in (finding["src"], finding["dst"]):
                messages[host].append(finding["message"])
    return messages


def to_junit(report):
    """A test suite with a test case per node and one for the all-reduce."""
    cases, failures = [], 0
    stamp = _xml_attr(report["generated_at"])
    for host, messages in _node_messages(report).items():
        cases.append(_case(host, messages))
        failures += bool(messages)
    allreduce = [f["message"] for f in report["findings"] if f["kind"] in ("allreduce", "fleet")]
    cases.append(_case("allreduce", allreduce))
    failures += bool(allreduce)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuites name="torchfleet fabric" timestamp={stamp} tests="{len(cases)}" failures="{failures}">\n'
            f'  <testsuite name="fabric" timestamp={stamp} tests="{len(cases)}" failures="{failures}" errors="0" skipped="0">\n'
            + "".join(cases) + "  </testsuite>\n</testsuites>\n")


def _case(name, messages):
    head = f'    <testcase classname="torchfleet.fabric" name={_xml_attr(name)} time="0"'
    if not messages:
        return head + " />\n"
    text = "\n".join(messages)
    return f'{head}>\n      <failure message={_xml_attr("; ".join(messages))} type="fabric">{_xml_text(text)}</failure>\n    </testcase>\n'


def _gauge(name, help_text, samples):
    return reports.metric_family(name, "gauge", help_text, samples)


def to_prometheus(report):
    """A node_exporter textfile with the ``torchfleet_fabric_*`` gauges (base units: bytes/s and seconds)."""
    links = report["links"]
    ends = [(("src", link["src"]), ("dst", link["dst"])) for link in links]
    out = _gauge("torchfleet_fabric_passed", "1 when the last fabric check passed.", [((), report["passed"])])
    out += _gauge("torchfleet_fabric_last_run_timestamp_seconds", "Unix time the last fabric check finished.",
                  [((), float(report["timestamp"]))])
    out += _gauge("torchfleet_fabric_link_bandwidth_bytes_per_second", "Point-to-point bandwidth from src to dst.",
                  [(labels, link["bandwidth_gbs"] * 1e9) for labels, link in zip(ends, links)])
    out += _gauge("torchfleet_fabric_link_latency_seconds", "Half the median round trip of an 8-byte message from src to dst.",
                  [(labels, link["latency_us"] / 1e6) for labels, link in zip(ends, links)])
    out += _gauge("torchfleet_fabric_link_ok", "1 when the link met the fleet's limits.",
                  [(labels, not link["problems"]) for labels, link in zip(ends, links)])
    out += _gauge("torchfleet_fabric_node_slow", "1 when the node was slow towards every measured peer.",
                  [((("host", host),), host in report["slow_nodes"]) for host in report["hosts"]])
    out += _gauge("torchfleet_fabric_allreduce_busbw_bytes_per_second", "All-reduce bus bandwidth, 2(n-1)/n x algbw.",
                  [((("bytes", row["bytes"]),), row["busbw_gbs"] * 1e9) for row in report["allreduce"]])
    out += _gauge("torchfleet_fabric_allreduce_algbw_bytes_per_second", "All-reduce algorithm bandwidth, bytes / time.",
                  [((("bytes", row["bytes"]),), row["algbw_gbs"] * 1e9) for row in report["allreduce"]])
    median = report["limits"].get("fleet_bandwidth_gbs")
    if median is not None:
        out += _gauge("torchfleet_fabric_fleet_bandwidth_bytes_per_second",
                      "Median over the nodes of each node's best link bandwidth.", [((), median * 1e9)])
    return "\n".join(out) + "\n"
