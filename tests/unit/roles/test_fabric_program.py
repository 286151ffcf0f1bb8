# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/fabric/files/torchfleet_fabric.py: which pairs it measures (O(N), every node with two peers or more),
the all-reduce sizes, bus bandwidth, and a real run of three gloo processes on loopback when torch is there."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys

import pytest

PROGRAM = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "fabric", "files", "torchfleet_fabric.py")


def load_program():
    spec = importlib.util.spec_from_file_location("torchfleet_fabric", PROGRAM)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fabric = load_program()


@pytest.mark.parametrize("count", [2, 3, 4, 5])
def test_small_clusters_measure_every_pair(count):
    assert fabric.pair_schedule(count, 2, 0) == [(a, b) for a in range(count) for b in range(a + 1, count)]


@pytest.mark.parametrize("count", [6, 7, 16, 100, 500])
def test_large_clusters_measure_a_ring_and_random_peers(count):
    pairs = fabric.pair_schedule(count, 2, 0)
    assert len(pairs) == len(set(pairs))
    assert all(a < b for a, b in pairs)
    assert all(tuple(sorted((i, (i + 1) % count))) in pairs for i in range(count))
    assert len(pairs) <= count * 3
    peers = {node: 0 for node in range(count)}
    for a, b in pairs:
        peers[a] += 1
        peers[b] += 1
    assert min(peers.values()) >= 2


def test_the_seed_fixes_the_pairs():
    assert fabric.pair_schedule(50, 2, 7) == fabric.pair_schedule(50, 2, 7)
    assert fabric.pair_schedule(50, 2, 7) != fabric.pair_schedule(50, 2, 8)


def test_no_pairs_for_one_node():
    assert fabric.pair_schedule(1, 2, 0) == []


def test_allreduce_sizes_and_bus_bandwidth():
    assert fabric.allreduce_sizes(16 << 20) == [8, 64, 512, 4096, 32768, 262144, 2097152, 16777216]
    assert fabric.allreduce_sizes(1000) == [8, 64, 512, 1000]
    assert fabric.allreduce_sizes(8) == [8]
    assert fabric.bus_bandwidth(3.0, 4) == pytest.approx(4.5)
    assert fabric.bus_bandwidth(3.0, 1) == 3.0


def test_the_best_round_counts():
    first = {"src": "a", "dst": "b", "bandwidth_gbs": 1.0, "mean_bandwidth_gbs": 0.5, "latency_us": 90.0,
             "median_latency_us": 120.0}
    second = dict(first, bandwidth_gbs=2.0, latency_us=100.0, median_latency_us=80.0)
    best = fabric.better(fabric.better(None, first), second)
    assert (best["bandwidth_gbs"], best["latency_us"], best["median_latency_us"]) == (2.0, 90.0, 80.0)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_three_gloo_nodes_on_loopback():
    pytest.importorskip("torch")
    port, nodes = free_port(), ["node0", "node1", "node2"]
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE="3", LOCAL_WORLD_SIZE="1",
               LOCAL_RANK="0", OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME="lo")
    args = [sys.executable, PROGRAM, "--nodes=" + json.dumps(nodes), "--p2p-bytes=65536", "--p2p-iters=2",
            "--latency-iters=5", "--rounds=1", "--allreduce-max-bytes=4096", "--allreduce-iters=2", "--timeout=60"]
    procs = [subprocess.Popen(args, env=dict(env, RANK=str(rank)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for rank in range(3)]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0], outputs
    lines = [line for line in outputs[0][0].splitlines() if line.startswith(fabric.RESULT_PREFIX)]
    result = json.loads(lines[-1][len(fabric.RESULT_PREFIX):])
    assert result["nodes"] == nodes and result["world_size"] == 3 and result["pairs"] == 3
    assert sorted((link["src"], link["dst"]) for link in result["links"]) == sorted(
        (a, b) for a in nodes for b in nodes if a != b)
    assert [row["bytes"] for row in result["allreduce"]] == [8, 64, 512, 4096]
    assert not any(line.startswith(fabric.RESULT_PREFIX) for out in outputs[1:] for line in out[0].splitlines())
