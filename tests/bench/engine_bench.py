#!/usr/bin/env python
# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark of the consistency engine on synthetic fleets (not a test: it never fails on speed).

    python tests/bench/engine_bench.py [--hosts 1000,10000,100000] [--repeat 3] [--json FILE]

Each host's facts are decoded from JSON separately, as Ansible hands them over, so
identical hosts are equal but distinct objects. Two fleet shapes:

* ``cpu``: CPU nodes, 160 packages, identical except planted drift;
* ``gpu``: 8 GPUs per node with a unique UUID each (so no two fact sets are equal),
  plus the same planted drift.

Planted drift: 1 % of hosts have one package at another version, 0.1 % are
unreachable, two hosts run an older driver. Time is the median wall time of
``build_report`` alone (process CPU time beside it, less sensitive to a busy
machine); peak memory is tracemalloc's peak during one separate run
(tracemalloc slows Python down, so it is never measured in the timed runs). The
render column times JSON + Markdown + JUnit + Prometheus on the same report.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import tracemalloc


def _import_engine():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    try:
        from ansible_collections.torchfleet.cluster.plugins.plugin_utils import consistency, reports
    except ImportError:
        # Run from a checkout: make the repository importable as the collection.
        parent = os.path.join(root, ".ansible", "collections")
        sys.path.insert(0, parent)
        from ansible_collections.torchfleet.cluster.plugins.plugin_utils import consistency, reports
    return consistency, reports


PACKAGES = {f"pkg{i:03d}": f"1.{i % 17}.{i % 5}" for i in range(156)}
PACKAGES.update({"numpy": "2.4.6", "torch": "2.13.0", "python": "3.11.14", "pip": "25.3"})


def host_json(index, shape):
    packages = dict(PACKAGES)
    if index % 100 == 37:
        packages[f"pkg{index % 156:03d}"] = "9.9.9"
    gpu = shape == "gpu"
    facts = {
        "version": "2.13.0+cu128" if gpu else "2.13.0+cpu",
        "cuda": "12.8" if gpu else None,
        "cudnn": "91002" if gpu else None,
        "nccl": "2.27.3" if gpu else None,
        "cuda_available": gpu,
        "gpu_count": 8 if gpu else 0,
        "gpus": [{"name": "NVIDIA H100 80GB HBM3", "capability": "9.0", "uuid": f"GPU-{index:08x}-{g}"}
                 for g in range(8)] if gpu else [],
        "driver": ("550.54.15" if index not in (5, 6) else "535.104.05") if gpu else None,
        "python": "3.11.14",
        "distributed": {"available": True, "gloo": True, "nccl": gpu, "mpi": False},
        "env": {"name": "train", "prefix": "/opt/miniconda3/envs/train", "spec_sha256": "a" * 64,
                "packages_sha256": "b" * 64 if index % 100 != 37 else "c" * 64, "packages": packages},
    }
    return json.dumps(facts)


def fleet(count, shape):
    facts = {}
    for index in range(count):
        name = f"node{index:06d}"
        facts[name] = None if index % 1000 == 999 else json.loads(host_json(index, shape))
    return facts


def expectations():
    return {"env.name": "train", "env.packages.numpy": "==2.4.6", "env.packages.torch": ">=2.13,<2.14"}


def run_once(consistency, facts):
    start, cpu = time.perf_counter(), time.process_time()
    report = consistency.build_report(facts, expected=expectations(), generated_at=0)
    return time.perf_counter() - start, time.process_time() - cpu, report


def render_time(reports, report):
    start = time.perf_counter()
    json.dumps(report)
    reports.to_markdown(report)
    reports.to_junit(report)
    reports.to_prometheus(report)
    return time.perf_counter() - start


def peak_memory(consistency, facts):
    tracemalloc.start()
    try:
        consistency.build_report(facts, expected=expectations(), generated_at=0)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def measure(consistency, reports, count, shape, repeat):
    facts = fleet(count, shape)
    times, cpu_times = [], []
    report = None
    for _run in range(repeat):
        elapsed, cpu, report = run_once(consistency, facts)
        times.append(elapsed)
        cpu_times.append(cpu)
    median = statistics.median(times)
    return {
        "hosts": count, "shape": shape, "median_s": median, "min_s": min(times),
        "cpu_median_s": statistics.median(cpu_times),
        "per_host_us": median / count * 1e6, "peak_mib": peak_memory(consistency, facts) / 2 ** 20,
        "render_s": render_time(reports, report), "drift_entries": len(report["drift"]),
        "drifted_hosts": report["summary"]["drifted_hosts"], "unreachable": len(report["unreachable"]),
    }


def table(rows):
    head = (f"{'hosts':>7} {'shape':>5} {'wall s (median)':>16} {'cpu s':>7} {'us/host':>8} {'peak MiB':>9} "
            f"{'render s':>9} {'drift':>6} {'drifted':>8} {'unreach':>8}")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['hosts']:>7} {r['shape']:>5} {r['median_s']:>16.3f} {r['cpu_median_s']:>7.3f} {r['per_host_us']:>8.1f} {r['peak_mib']:>9.1f} "
                     f"{r['render_s']:>9.3f} {r['drift_entries']:>6} {r['drifted_hosts']:>8} {r['unreachable']:>8}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", default="1000,10000,100000")
    parser.add_argument("--shapes", default="cpu,gpu")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    consistency, reports = _import_engine()
    rows = [measure(consistency, reports, int(n), shape, args.repeat)
            for n in args.hosts.split(",") for shape in args.shapes.split(",")]
    print(table(rows))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(rows, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
