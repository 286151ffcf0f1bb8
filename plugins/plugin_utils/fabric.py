# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric check's verdict, on the controller: the node-reported measurements validated once,
then judged against the fleet.

What rank 0 of the fabric job prints is data from a node: it must be one JSON object with the
expected shape, finite numbers in sane ranges, and node names that are exactly the inventory
members the job ran on, in rank order. Anything else raises ``FabricReportError`` naming the
reporting host and the field, before any report is written.

The verdict (pure functions of the validated result):

- each node's bandwidth is the best it reached with any measured peer (what its NIC can do), its
  latency the lowest; the fleet's are the medians over the nodes. Medians over nodes rather than
  over links: at three nodes one slow node touches two of the three links, and a median over the
  links would be the slow value;
- a directed link fails when its bandwidth is below ``bandwidth_fraction`` x the fleet's (or below
  ``bandwidth_floor_gbs``), or its latency above ``latency_factor`` x the fleet's (or above
  ``latency_ceiling_us``);
- a node with at least two measured peers whose every pair has a failing direction is reported as
  the node, not as its links; the other failing pairs are reported as links;
- the all-reduce bus bandwidth at the largest size fails below ``busbw_floor_gbs``.
"""

from __future__ import annotations

import json
import math
import statistics

from ansible_collections.torchfleet.cluster.plugins.plugin_utils.plain import plain

RESULT_PREFIX = "TORCHFLEET_FABRIC_RESULT "
FORMAT_VERSION = 1
BACKENDS = ("gloo", "nccl")
MAX_GBS = 1e5          # 100 TB/s: no link or bus measures more
MAX_LATENCY_US = 1e8   # 100 s
MAX_TEXT = 256
MAX_ENVIRONMENT = 16
MAX_ALLREDUCE_SIZES = 64


class FabricReportError(Exception):
    """The node-reported result is unusable; the message names the host and the field."""


def find_result(lines):
    """The last result line of a log (a list of lines), or None."""
    for line in reversed([str(line) for line in lines or ()]):
        if line.startswith(RESULT_PREFIX):
            return line[len(RESULT_PREFIX):]
    return None


# Validation -----------------------------------------------------------------------------------

def _fail(host, field, problem):
    raise FabricReportError(f"fabric: the result reported by {host} is unusable: {field} {problem}")


def _number(host, field, value, low, high, integer=False):
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds):
        _fail(host, field, f"must be {'an integer' if integer else 'a number'}, got {json.dumps(value)[:80]}")
    if not math.isfinite(value) or not low <= value <= high:
        _fail(host, field, f"must be between {low} and {high}, got {value!r}")
    return value if integer else float(value)


def _text(host, field, value):
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        _fail(host, field, f"must be a string of at most {MAX_TEXT} characters")
    return value


def _member(host, field, value, members):
    if not isinstance(value, str) or value not in members:
        _fail(host, field, f"{json.dumps(value)[:80]} is not a member of the job ({', '.join(members)})")
    return value


def _mapping(host, field, value):
    if not isinstance(value, dict):
        _fail(host, field, "must be an object")
    return value


def _list(host, field, value, limit):
    if not isinstance(value, list) or len(value) > limit:
        _fail(host, field, f"must be a list of at most {limit} entries")
    return value


def _links(host, raw, members):
    links, seen = [], set()
    for index, link in enumerate(_list(host, "links", raw, len(members) * (len(members) - 1))):
        where = f"links[{index}]"
        link = _mapping(host, where, link)
        src = _member(host, where + ".src", link.get("src"), members)
        dst = _member(host, where + ".dst", link.get("dst"), members)
        if src == dst or (src, dst) in seen:
            _fail(host, where, f"repeats the link {src} -> {dst} or joins a node with itself")
        seen.add((src, dst))
        clean = {"src": src, "dst": dst,
                 "bandwidth_gbs": _number(host, where + ".bandwidth_gbs", link.get("bandwidth_gbs"), 1e-9, MAX_GBS),
                 "latency_us": _number(host, where + ".latency_us", link.get("latency_us"), 1e-3, MAX_LATENCY_US)}
        for key, high in (("mean_bandwidth_gbs", MAX_GBS), ("median_latency_us", MAX_LATENCY_US)):
            if key in link:
                clean[key] = _number(host, f"{where}.{key}", link[key], 0, high)
        links.append(clean)
    return links


def _allreduce(host, raw):
    rows = []
    for index, row in enumerate(_list(host, "allreduce", raw, MAX_ALLREDUCE_SIZES)):
        where = f"allreduce[{index}]"
        row = _mapping(host, where, row)
        rows.append({"bytes": _number(host, where + ".bytes", row.get("bytes"), 4, 1 << 40, integer=True),
                     "seconds": _number(host, where + ".seconds", row.get("seconds"), 1e-9, 1e6),
                     "algbw_gbs": _number(host, where + ".algbw_gbs", row.get("algbw_gbs"), 0, MAX_GBS),
                     "busbw_gbs": _number(host, where + ".busbw_gbs", row.get("busbw_gbs"), 0, MAX_GBS)})
    return rows


def _settings(host, raw):
    raw = _mapping(host, "settings", raw)
    backend = raw.get("backend")
    if backend not in BACKENDS:
        _fail(host, "settings.backend", f"must be one of {', '.join(BACKENDS)}")
    clean = {"backend": backend,
             "procs_per_node": _number(host, "settings.procs_per_node", raw.get("procs_per_node"), 1, 1024, integer=True)}
    for key in ("p2p_bytes", "p2p_iters", "latency_iters", "allreduce_iters", "random_peers", "seed", "rounds"):
        if key in raw:
            clean[key] = _number(host, "settings." + key, raw[key], 0, 1 << 40, integer=True)
    environment = _mapping(host, "settings.environment", raw.get("environment", {}))
    if len(environment) > MAX_ENVIRONMENT:
        _fail(host, "settings.environment", f"has more than {MAX_ENVIRONMENT} entries")
    clean["environment"] = {_text(host, "settings.environment key", key): _text(host, f"settings.environment.{key}", value)
                            for key, value in environment.items()}
    return clean


def validate_result(text, host, members):
    """The JSON text a node reported, as a clean dict; ``members`` are the job's nodes in rank order."""
    members = [str(member) for member in plain(members)]
    if text is None:
        raise FabricReportError(f"fabric: {host} reported no result line ({RESULT_PREFIX.strip()})")
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise FabricReportError(f"fabric: the result reported by {host} is not JSON: {exc}") from None
    raw = _mapping(host, "the result", raw)
    if raw.get("format") != FORMAT_VERSION:
        _fail(host, "format", f"must be {FORMAT_VERSION} (the program and the collection differ)")
    nodes = _list(host, "nodes", raw.get("nodes"), len(members))
    if nodes != members:
        _fail(host, "nodes", f"must be the job's members in rank order ({', '.join(members)})")
    settings = _settings(host, raw.get("settings"))
    world = _number(host, "world_size", raw.get("world_size"), 1, 1 << 20, integer=True)
    if world != len(members) * settings["procs_per_node"]:
        _fail(host, "world_size", f"must be {len(members)} nodes x {settings['procs_per_node']} processes")
    return {"nodes": members, "world_size": world, "settings": settings,
            "torch": _text(host, "torch", raw.get("torch")),
            "pairs": _number(host, "pairs", raw.get("pairs", 0), 0, len(members) ** 2, integer=True),
            "links": _links(host, raw.get("links"), members),
            "allreduce": _allreduce(host, raw.get("allreduce")),
            "seconds": _number(host, "seconds", raw.get("seconds", 0.0), 0, 1e6)}


# Verdict --------------------------------------------------------------------------------------

def node_bests(links):
    """Each node's best bandwidth and lowest latency over the directed links it takes part in."""
    best = {}
    for link in links:
        for node in (link["src"], link["dst"]):
            bandwidth, latency = best.get(node, (0.0, math.inf))
            best[node] = (max(bandwidth, link["bandwidth_gbs"]), min(latency, link["latency_us"]))
    return best


def fleet_medians(links):
    """(bandwidth in GB/s, latency in us): the medians over the nodes of each node's best; None without links."""
    best = node_bests(links)
    if not best:
        return None, None
    return statistics.median(b for b, _l in best.values()), statistics.median(l for _b, l in best.values())


def limits(links, thresholds):
    """The fleet's medians and the values a link must reach: {fleet_*, expected_bandwidth_gbs, latency_limit_us}."""
    bandwidth, latency = fleet_medians(links)
    out = {"fleet_bandwidth_gbs": bandwidth, "fleet_latency_us": latency,
           "expected_bandwidth_gbs": None, "latency_limit_us": None}
    if bandwidth is not None:
        out["expected_bandwidth_gbs"] = max(thresholds["bandwidth_fraction"] * bandwidth,
                                            thresholds["bandwidth_floor_gbs"] or 0.0)
        limit = thresholds["latency_factor"] * latency
        if thresholds["latency_ceiling_us"]:
            limit = min(limit, thresholds["latency_ceiling_us"])
        out["latency_limit_us"] = limit
    return out


def link_problems(link, bounds, thresholds):
    """What is wrong with one directed link: a list of {metric, measured, expected, rule}."""
    problems = []
    if link["bandwidth_gbs"] < bounds["expected_bandwidth_gbs"]:
        floor = thresholds["bandwidth_floor_gbs"] or 0.0
        rule = ("absolute floor" if floor >= thresholds["bandwidth_fraction"] * bounds["fleet_bandwidth_gbs"]
                else f"{thresholds['bandwidth_fraction']:g} x fleet median {bounds['fleet_bandwidth_gbs']:.3g} GB/s")
        problems.append({"metric": "bandwidth_gbs", "measured": link["bandwidth_gbs"],
                         "expected": bounds["expected_bandwidth_gbs"], "rule": rule})
    if link["latency_us"] > bounds["latency_limit_us"]:
        ceiling = thresholds["latency_ceiling_us"]
        rule = ("absolute ceiling" if ceiling and ceiling <= thresholds["latency_factor"] * bounds["fleet_latency_us"]
                else f"{thresholds['latency_factor']:g} x fleet median {bounds['fleet_latency_us']:.3g} us")
        problems.append({"metric": "latency_us", "measured": link["latency_us"],
                         "expected": bounds["latency_limit_us"], "rule": rule})
    return problems


def _pair(link):
    return tuple(sorted((link["src"], link["dst"])))


def slow_nodes(nodes, links, bad_pairs):
    """Nodes with at least two measured peers whose every measured pair failed."""
    peers = {node: set() for node in nodes}
    for link in links:
        peers[link["src"]].add(link["dst"])
        peers[link["dst"]].add(link["src"])
    return [node for node in nodes
            if len(peers[node]) >= 2 and all(tuple(sorted((node, peer))) in bad_pairs for peer in peers[node])]


DEFAULT_THRESHOLDS = {"bandwidth_fraction": 0.5, "bandwidth_floor_gbs": 0.0, "latency_factor": 3.0,
                      "latency_ceiling_us": 0.0, "busbw_floor_gbs": 0.0}


def check_thresholds(thresholds):
    merged = dict(DEFAULT_THRESHOLDS, **{k: v for k, v in plain(thresholds or {}).items() if v is not None})
    unknown = sorted(set(merged) - set(DEFAULT_THRESHOLDS))
    if unknown:
        raise FabricReportError(f"fabric: unknown threshold(s): {', '.join(unknown)}")
    for key, value in merged.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise FabricReportError(f"fabric: threshold {key} must be a number >= 0, got {value!r}")
        merged[key] = float(value)
    if not 0 < merged["bandwidth_fraction"] <= 1:
        raise FabricReportError("fabric: bandwidth_fraction must be above 0 and at most 1")
    if merged["latency_factor"] < 1:
        raise FabricReportError("fabric: latency_factor must be at least 1")
    return merged


def _node_finding(node, links):
    mine = [link for link in links if node in (link["src"], link["dst"]) and link["problems"]]
    peers = sorted({link["dst"] if link["src"] == node else link["src"] for link in links
                    if node in (link["src"], link["dst"])})
    return {"kind": "node", "node": node, "peers": peers, "links": mine,
            "message": f"node {node} is slow towards all {len(peers)} measured peers: " + "; ".join(
                describe_link(link) for link in mine)}


def describe_problem(problem):
    unit = "GB/s" if problem["metric"] == "bandwidth_gbs" else "us"
    relation = "at least" if problem["metric"] == "bandwidth_gbs" else "at most"
    what = "bandwidth" if problem["metric"] == "bandwidth_gbs" else "latency"
    return (f"{what} {problem['measured']:.4g} {unit} (expected {relation} {problem['expected']:.4g} {unit}, "
            f"{problem['rule']})")


def describe_link(link):
    return f"{link['src']} -> {link['dst']} " + ", ".join(describe_problem(p) for p in link["problems"])


def judge(result, thresholds=None):
    """The verdict on a validated result: judged links, slow nodes, slow links, all-reduce, passed."""
    thresholds = check_thresholds(thresholds)
    bounds = limits(result["links"], thresholds)
    links = [dict(link, problems=link_problems(link, bounds, thresholds) if bounds["fleet_bandwidth_gbs"] else [])
             for link in result["links"]]
    bad_pairs = {_pair(link) for link in links if link["problems"]}
    nodes = slow_nodes(result["nodes"], links, bad_pairs)
    findings = [_node_finding(node, links) for node in nodes]
    for link in links:
        if link["problems"] and link["src"] not in nodes and link["dst"] not in nodes:
            findings.append({"kind": "link", "src": link["src"], "dst": link["dst"], "problems": link["problems"],
                             "message": "link " + describe_link(link)})
    findings += _allreduce_findings(result["allreduce"], thresholds)
    if len(result["nodes"]) > 1 and not result["links"]:
        findings.append({"kind": "fleet", "message": "no link between the nodes was measured"})
    largest = max(result["allreduce"], key=lambda row: row["bytes"]) if result["allreduce"] else None
    return {"passed": not findings, "thresholds": thresholds, "limits": bounds, "links": links,
            "slow_nodes": nodes, "findings": findings, "largest_allreduce": largest,
            "slowest_link": min(links, key=lambda link: link["bandwidth_gbs"]) if links else None}


def _allreduce_findings(rows, thresholds):
    floor = thresholds["busbw_floor_gbs"]
    if not rows or not floor:
        return []
    largest = max(rows, key=lambda row: row["bytes"])
    if largest["busbw_gbs"] >= floor:
        return []
    return [{"kind": "allreduce", "bytes": largest["bytes"], "measured": largest["busbw_gbs"], "expected": floor,
             "message": f"all-reduce bus bandwidth at {largest['bytes']} B is {largest['busbw_gbs']:.4g} GB/s "
                        f"(expected at least {floor:.4g} GB/s, absolute floor)"}]


# History --------------------------------------------------------------------------------------

def degraded_links(previous, links, fraction):
    """Directed links worse than in the previous report: bandwidth below fraction x before, latency above before / fraction.

    ``previous`` is the controller's own last report; anything in it that is not as written is skipped."""
    before = {}
    for link in (previous or {}).get("links") or ():
        if isinstance(link, dict) and isinstance(link.get("src"), str) and isinstance(link.get("dst"), str):
            before[(link["src"], link["dst"])] = link
    out = []
    for link in links:
        old = before.get((link["src"], link["dst"]))
        if not old:
            continue
        changes = []
        old_bw, old_lat = old.get("bandwidth_gbs"), old.get("latency_us")
        if _positive(old_bw) and link["bandwidth_gbs"] < fraction * old_bw:
            changes.append({"metric": "bandwidth_gbs", "before": old_bw, "after": link["bandwidth_gbs"]})
        if _positive(old_lat) and link["latency_us"] > old_lat / fraction:
            changes.append({"metric": "latency_us", "before": old_lat, "after": link["latency_us"]})
        if changes:
            out.append({"src": link["src"], "dst": link["dst"], "changes": changes})
    return out


def _positive(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
