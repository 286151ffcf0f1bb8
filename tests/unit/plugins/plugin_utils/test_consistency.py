# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Data-driven tests of the consistency engine: synthetic fleets, each case a list of planted changes."""

from __future__ import annotations

import json
import random

import pytest

from ansible_collections.torchfleet.cluster.plugins.plugin_utils import consistency, cuda_driver
from ansible_collections.torchfleet.cluster.plugins.plugin_utils.consistency import build_report
from ansible_collections.torchfleet.cluster.tests.unit.plugins.plugin_utils.fleet import (
    DELETE, SPEC_SHA, UNREACHABLE, base_facts, fleet,
)

SPEC = {"env.name": "train", "env.spec_sha256": SPEC_SHA, "env.packages.numpy": "==2.4.6", "env.packages.torch": "==2.13.0"}


def drift_of(report):
    """Drift entries as comparable tuples: (field, source, expected, tie, hosts)."""
    return [(d["field"], d["source"], d["expected"], d["tie"], d["hosts"]) for d in report["drift"]]


# Each case: id, hosts, changes (host index, field, value), build_report kwargs, expected drift tuples,
# and expected (unreachable, consistent, passed).
CASES = [
    ("identical", 3, [], {}, [], ([], True, True)),
    ("identical with spec", 3, [], {"expected": SPEC}, [], ([], True, True)),
    ("one package changed", 3, [(2, "env.packages.numpy", "2.4.5")], {},
     [("env.packages.numpy", "majority", "2.4.6", False, {"node2": "2.4.5"})], ([], False, False)),
    ("one package changed, spec knows it", 3, [(2, "env.packages.numpy", "2.4.5")], {"expected": SPEC},
     [("env.packages.numpy", "spec", "2.4.6", False, {"node2": "2.4.5"})], ([], False, False)),
    ("package removed on one node is null there", 3, [(1, "env.packages.sympy", DELETE)], {},
     [("env.packages.sympy", "majority", "1.13.3", False, {"node1": None})], ([], False, False)),
    ("package added on one node", 3, [(0, "env.packages.rich", "13.9.4")], {},
     [("env.packages.rich", "majority", None, False, {"node0": "13.9.4"})], ([], False, False)),
    ("uniform drift only the spec sees", 3,
     [(i, "env.packages.numpy", "2.4.5") for i in range(3)], {"expected": SPEC},
     [("env.packages.numpy", "spec", "2.4.6", False, {"node0": "2.4.5", "node1": "2.4.5", "node2": "2.4.5"})],
     ([], False, False)),
    ("uniform drift is invisible without a spec", 3, [(i, "env.packages.numpy", "2.4.5") for i in range(3)], {},
     [], ([], True, True)),
    ("stale build stamp on every node", 2, [(i, "env.spec_sha256", "0" * 64) for i in range(2)], {"expected": SPEC},
     [("env.spec_sha256", "spec", SPEC_SHA, False, {"node0": "0" * 64, "node1": "0" * 64})], ([], False, False)),
    ("unreachable host is left out and listed", 3, [(1, None, UNREACHABLE)], {}, [], (["node1"], True, False)),
    ("unreachable plus drift", 4, [(0, None, UNREACHABLE), (3, "python", "3.11.9")], {},
     [("python", "majority", "3.11.14", False, {"node3": "3.11.9"})], (["node0"], False, False)),
    ("tie goes to the reference (first) host", 2, [(1, "env.packages.numpy", "2.4.5")], {},
     [("env.packages.numpy", "majority", "2.4.6", True, {"node1": "2.4.5"})], ([], False, False)),
    ("tie goes to torch_master", 2, [(1, "env.packages.numpy", "2.4.5")], {"reference_host": "node1"},
     [("env.packages.numpy", "majority", "2.4.5", True, {"node0": "2.4.6"})], ([], False, False)),
    ("tie without the reference host goes to the earliest host", 5,
     [(0, None, UNREACHABLE), (1, "cuda", "12.1"), (2, "cuda", "12.1"), (3, "cuda", "12.4"), (4, "cuda", "12.4")],
     {"reference_host": "node0"},
     [("cuda", "majority", "12.1", True, {"node3": "12.4", "node4": "12.4"})], (["node0"], False, False)),
    ("three-way split: plurality wins", 6,
     [(3, "env.packages.numpy", "2.4.5"), (4, "env.packages.numpy", "2.4.5"), (5, "env.packages.numpy", "2.3.0")], {},
     [("env.packages.numpy", "majority", "2.4.6", False, {"node3": "2.4.5", "node4": "2.4.5", "node5": "2.3.0"})],
     ([], False, False)),
    ("ignore glob", 3, [(2, "env.packages.pip", "24.0")], {"ignore": ["env.packages.pip"]}, [], ([], True, True)),
    ("ignore rule", 3, [(2, "env.stamp.spec_file", "other.yml")], {"rules": {"env.stamp.*": "ignore"}}, [],
     ([], True, True)),
    ("explicit minimum version", 3, [(1, "driver", "535.104.05")], {"rules": {"driver": {"min": "550.54"}}},
     [("driver", "spec", ">=550.54", False, {"node0": None, "node1": "535.104.05", "node2": None})],
     ([], False, False)),
    ("booleans are not integers", 3, [(2, "gpu_count", False)], {},
     [("gpu_count", "majority", 0, False, {"node2": False})], ([], False, False)),
    ("a list entry differs", 3, [(1, "distributed.gloo", False)], {},
     [("distributed.gloo", "majority", True, False, {"node1": False})], ([], False, False)),
    ("spec names a package with another spelling", 3, [(1, "env.packages.typing-extensions", "4.0.0")],
     {"expected": {"env.packages.typing_extensions": "==4.12.2"}},
     [("env.packages.typing-extensions", "spec", "4.12.2", False, {"node1": "4.0.0"})], ([], False, False)),
    ("spec field no node reports", 2, [], {"expected": {"env.packages.rich": "*"}},
     [("env.packages.rich", "spec", "*", False, {"node0": None, "node1": None})], ([], False, False)),
    ("majority deviants and spec failures are reported once", 5,
     [(3, "env.packages.numpy", "2.4.5"), (4, "env.packages.numpy", "2.5.0")],
     {"expected": {"env.packages.numpy": ">=2.4.6"}},
     [("env.packages.numpy", "spec", ">=2.4.6", False, {"node3": "2.4.5"}),
      ("env.packages.numpy", "majority", "2.4.6", False, {"node4": "2.5.0"})], ([], False, False)),
]


@pytest.mark.parametrize("name,count,changes,kwargs,drift,state", CASES, ids=[c[0] for c in CASES])
def test_cases(name, count, changes, kwargs, drift, state):
    report = build_report(fleet(count, changes), generated_at="2026-01-01T00:00:00Z", **kwargs)
    assert drift_of(report) == drift
    assert (report["unreachable"], report["consistent"], report["passed"]) == state
    assert report["hosts"] == [f"node{i}" for i in range(count)]


# GPU nodes: (changes, kwargs, drift). UUIDs differ on every node and are ignored by default.
GPU_CASES = [
    ([], {}, []),
    ([(2, "gpus.3.name", "NVIDIA H100")], {}, [("gpus.3.name", "majority", "NVIDIA H200", False, {"node2": "NVIDIA H100"})]),
    ([(1, "driver", "580.65.06")], {}, []),
    ([(1, "driver", "535.104.05")], {}, [("driver", "majority", ">=570.124.06", False, {"node1": "535.104.05"}),
                                         ("cuda_driver", "spec", ">=570.26 (CUDA 12.8)", False, {"node1": "535.104.05 (CUDA 12.8)"})]),
    ([(1, "gpu_count", 7), (1, "gpus", [{"name": "NVIDIA H200", "capability": "9.0", "uuid": "x"}] * 7)], {},
     [("gpu_count", "majority", 8, False, {"node1": 7}), ("gpus.7.capability", "majority", "9.0", False, {"node1": None}),
      ("gpus.7.name", "majority", "NVIDIA H200", False, {"node1": None})]),
]


@pytest.mark.parametrize("changes,kwargs,drift", GPU_CASES)
def test_gpu_fleet(changes, kwargs, drift):
    report = build_report(fleet(4, changes, gpus=8), **kwargs)
    assert drift_of(report) == drift


def test_uuids_compared_without_defaults():
    report = build_report(fleet(3, gpus=1), use_defaults=False)
    assert {d["field"] for d in report["drift"]} == {"gpus.0.uuid"}


def test_newer_driver_is_tolerated_and_recorded():
    report = build_report(fleet(3, [(2, "driver", "580.65.06")], gpus=2))
    assert report["consistent"] and report["tolerated"] == {"driver": {"node2": "580.65.06"}}


def test_min_majority_without_a_driver_anywhere():
    report = build_report(fleet(3), rules={"driver": "min"})
    assert report["consistent"]


def test_failed_probe_is_inconsistent():
    facts = fleet(3)
    facts["node1"] = None
    report = build_report(facts, failed={"node1": "torch is not installed"})
    assert report["failed"] == {"node1": "torch is not installed"}
    assert report["unreachable"] == [] and not report["consistent"]
    assert report["per_host"]["node1"] == {"status": "failed", "drift_fields": 0}


def test_nobody_reachable_is_not_consistent():
    report = build_report({"a": None, "b": None})
    assert not report["consistent"] and report["drift"] == [] and report["reference_host"] is None


def test_summary_and_per_host():
    report = build_report(fleet(4, [(1, None, UNREACHABLE), (2, "python", "3.12.0"), (2, "cuda", "12.8")]),
                          expected=SPEC)
    assert report["summary"] == {
        "hosts": 4, "compared": 3, "unreachable": 1, "failed": 0, "drifted_hosts": 1, "consistent_hosts": 2,
        "fields_checked": len(report["baseline"]), "drifted_fields": 2, "drift_entries": 2, "spec_fields": 4,
        "ignored_fields": 0, "build_entries": 0,
    }
    assert report["per_host"]["node2"] == {"status": "drift", "drift_fields": 2}
    assert report["per_host"]["node1"]["status"] == "unreachable"


def test_fields_are_naturally_sorted():
    facts = fleet(3, [(2, f"gpus.{i}.name", "X") for i in range(12)], gpus=12)
    fields = [d["field"] for d in build_report(facts)["drift"]]
    assert fields == [f"gpus.{i}.name" for i in range(12)]


@pytest.mark.parametrize("rules,match", [
    ({"driver": {"min": ["x"]}}, "driver"),
    ({"env.*": "sometimes"}, "env"),
    ({"x": {"max": 1}}, "'x'"),
])
def test_bad_rules(rules, match):
    with pytest.raises(consistency.RuleError, match=match):
        build_report(fleet(2), rules=rules)


def test_bad_facts_type():
    with pytest.raises(consistency.RuleError, match="node0"):
        build_report({"node0": ["not", "a", "mapping"]})


def test_bad_expectation():
    with pytest.raises(consistency.RuleError, match="env.packages.numpy"):
        build_report(fleet(2), expected={"env.packages.numpy": "~=2.*"})


def test_deterministic_and_json_ready():
    changes = [(3, "env.packages.numpy", "2.4.5"), (5, None, UNREACHABLE), (7, "env.packages.rich", "1")]
    first = build_report(fleet(9, changes), expected=SPEC, generated_at=0)
    second = build_report(fleet(9, changes), expected=SPEC, generated_at=0)
    assert json.dumps(first) == json.dumps(second)
    assert first["generated_at"] == "1970-01-01T00:00:00Z" and first["timestamp"] == 0


def test_key_order_inside_facts_does_not_matter():
    facts = fleet(3, [(1, "env.packages.numpy", "2.4.5")])
    reordered = {h: dict(reversed(list(f.items()))) for h, f in facts.items()}
    assert drift_of(build_report(facts)) == drift_of(build_report(reordered))


# --- thousands of hosts -------------------------------------------------------------------------

SCALE_CASES = [
    # (hosts, gpus, changes)
    (5000, 0, [(17, "env.packages.numpy", "2.4.5"), (4321, "env.packages.sympy", DELETE), (99, None, UNREACHABLE)]),
    (3000, 8, [(2999, "gpus.5.name", "NVIDIA H100"), (1500, "driver", "535.104.05"), (0, None, UNREACHABLE)]),
    (2000, 0, [(i, "env.packages.numpy", f"2.4.{i % 300}") for i in range(0, 2000, 3)]),
]


@pytest.mark.parametrize("count,gpus,changes", SCALE_CASES)
def test_thousands_of_hosts_match_the_reference(count, gpus, changes):
    facts = fleet(count, changes, gpus=gpus)
    assert drift_of(build_report(facts, expected=SPEC)) == reference_drift(facts, SPEC, gpus=gpus)


def test_uniform_drift_across_thousands():
    facts = fleet(4000, [(i, "env.packages.torch", "2.12.0") for i in range(4000)])
    (entry,) = build_report(facts, expected=SPEC)["drift"]
    assert entry["source"] == "spec" and len(entry["hosts"]) == 4000 and list(entry["hosts"])[:2] == ["node0", "node1"]


# --- the optimised collector against a naive reference ------------------------------------------

def _flatten(value, prefix, out):
    if isinstance(value, dict):
        for key, child in value.items():
            _flatten(child, f"{prefix}{key}.", out)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            _flatten(child, f"{prefix}{index}.", out)
    else:
        out[prefix[:-1]] = value


def _key(value):
    return (isinstance(value, bool), value)


def reference_drift(facts, expected=None, gpus=0, reference=None):
    """Straightforward flatten-everything comparison with the same documented rules."""
    ignored = consistency.Rules(use_defaults=True).ignored
    hosts = [h for h, f in facts.items() if f is not None]
    flat = {}
    for host in hosts:
        flat[host] = {}
        _flatten(facts[host], "", flat[host])
    expectations = {f: consistency.coerce_expectation(v) for f, v in (expected or {}).items()}
    fields = {f for h in hosts for f in flat[h] if not ignored(f)} | set(expectations)
    ref = reference if reference in hosts else hosts[0]
    out = []
    for field in sorted(fields, key=consistency.natural_key):
        values = {h: flat[h].get(field) for h in hosts}
        counts = {}
        for host in hosts:
            counts.setdefault(_key(values[host]), []).append(host)
        best = max(len(v) for v in counts.values())
        tied = [k for k, v in counts.items() if len(v) == best]
        tie = len(tied) > 1
        if _key(values[ref]) in tied:
            majority = _key(values[ref])
        else:
            majority = min(tied, key=lambda k: hosts.index(counts[k][0]))
        exp = expectations.get(field)
        spec_bad = [h for h in hosts if exp is not None and not exp.satisfied(values[h])]
        if spec_bad:
            out.append((field, "spec", exp.display, False, {h: values[h] for h in spec_bad}))
        if field == "driver":
            floor = majority[1]
            low = [] if floor is None else [
                h for h in hosts if h not in spec_bad and _key(values[h]) != majority
                and (values[h] is None or consistency.version_key(values[h]) < consistency.version_key(floor))]
            if low:
                out.append((field, "majority", f">={floor}", False, {h: values[h] for h in low}))
            continue
        others = [h for h in hosts if h not in spec_bad and _key(values[h]) != majority]
        if others:
            out.append((field, "majority", majority[1], tie, {h: values[h] for h in others}))
    return out + reference_cuda_driver(facts, hosts)


def reference_cuda_driver(facts, hosts):
    """The driver/CUDA rule done by hand: one entry per CUDA version whose driver floor a node misses."""
    low = {}
    for host in hosts:
        cuda, driver = facts[host].get("cuda"), facts[host].get("driver")
        floor = cuda_driver.MIN_DRIVER.get(".".join(str(cuda).split(".")[:2])) if cuda and driver else None
        if floor and [int(p) for p in driver.split(".")] < [int(p) for p in floor.split(".")]:
            low.setdefault(f">={floor} (CUDA {cuda})", {})[host] = f"{driver} (CUDA {cuda})"
    return [("cuda_driver", "spec", expected, False, bad) for expected, bad in low.items()]


def random_fleet(seed):
    rng = random.Random(seed)
    count = rng.choice([1, 2, 3, 7, 40, 150, 700])
    gpus = rng.choice([0, 0, 2, 8])
    rate = rng.choice([0.0, 0.02, 0.3, 1.0])
    values = {
        "env.packages.numpy": ["2.4.6", "2.4.5", "2.5.0", DELETE],
        "env.packages.rich": ["13.9.4", "14.0.0"],
        "python": ["3.11.14", "3.11.9"],
        "distributed.mpi": [False, True, 0],
        "env.spec_sha256": [SPEC_SHA, None, "0" * 64],
        "cuda": [None, "12.8", "12.4"],
        "gpu_count": [0, 1, False],
        "env.stamp.lock_sha256": [None, "1" * 64],
    }
    if gpus:
        values["gpus.1.name"] = ["NVIDIA H200", "NVIDIA H100", DELETE]
        values["driver"] = ["570.124.06", "535.104.05", "580.65.06"]
    changes = []
    for index in range(count):
        if rng.random() < 0.05:
            changes.append((index, None, UNREACHABLE))
            continue
        for field, choices in values.items():
            if rng.random() < rate:
                changes.append((index, field, rng.choice(choices)))
    return fleet(count, changes, gpus=gpus), rng.choice([None, "node1", "node0"])


@pytest.mark.parametrize("seed", range(60))
def test_random_fleets_match_the_reference(seed):
    facts, reference = random_fleet(seed)
    if all(f is None for f in facts.values()):
        pytest.skip("every host unreachable")
    expected = SPEC if seed % 2 else None
    report = build_report(facts, expected=expected, reference_host=reference)
    assert drift_of(report) == reference_drift(facts, expected, reference=reference)


# --- changed since the previous report ------------------------------------------------------------

CHANGE_CASES = [
    ("nothing", [], [], {"changed": False, "changes": []}),
    ("one node upgraded a package", [], [(1, "env.packages.numpy", "2.5.0")],
     {"changed": True, "changes": [{"field": "env.packages.numpy", "before": "2.4.6", "after": "2.5.0", "hosts": ["node1"]}]}),
    ("drift repaired", [(1, "env.packages.numpy", "2.5.0")], [],
     {"changed": True, "changes": [{"field": "env.packages.numpy", "before": "2.5.0", "after": "2.4.6", "hosts": ["node1"]}]}),
    ("fleet-wide upgrade", [], [(i, "env.packages.torch", "2.13.1") for i in range(4)],
     {"changed": True, "changes": [{"field": "env.packages.torch", "before": "2.13.0+cpu", "after": "2.13.1",
                                    "hosts": ["node0", "node1", "node2", "node3"]}]}),
    ("node went down", [], [(3, None, UNREACHABLE)], {"changed": True, "changes": [], "became_unreachable": ["node3"]}),
    ("node came back", [(3, None, UNREACHABLE)], [], {"changed": True, "changes": [], "became_reachable": ["node3"]}),
    ("package added", [], [(0, "env.packages.rich", "1.0")],
     {"changed": True, "changes": [{"field": "env.packages.rich", "before": None, "after": "1.0", "hosts": ["node0"]}]}),
]


@pytest.mark.parametrize("name,before,after,expected", CHANGE_CASES, ids=[c[0] for c in CHANGE_CASES])
def test_changed_since(name, before, after, expected):
    previous = json.loads(json.dumps(build_report(fleet(4, before), generated_at="2026-01-01T00:00:00Z")))
    report = build_report(fleet(4, after), previous=previous)
    changed = report["changed_since"]
    assert changed["previous_generated_at"] == "2026-01-01T00:00:00Z"
    for key, value in expected.items():
        assert changed[key] == value, key


def test_changed_since_hosts_added_and_removed():
    previous = build_report(fleet(3))
    report = build_report(fleet(4, prefix="node") | {}, previous=dict(previous, hosts=["node0", "node1", "node2", "old"]))
    assert report["changed_since"]["hosts_added"] == ["node3"]
    assert report["changed_since"]["hosts_removed"] == ["old"]


def test_changed_since_ignores_foreign_previous():
    assert build_report(fleet(2), previous={"something": "else"})["changed_since"] is None


def test_host_values_reconstruct_every_host():
    facts = fleet(5, [(1, "python", "3.12.0"), (4, "env.packages.rich", "1")], gpus=2)
    report = build_report(facts)
    overrides = consistency.host_values(report)
    assert overrides == {"node1": {"python": "3.12.0"}, "node4": {"env.packages.rich": "1"}}
    assert report["baseline"]["gpus.1.name"] == base_facts(2)["gpus"][1]["name"]
