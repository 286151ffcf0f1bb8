#!/usr/bin/env python
"""Measure the cluster's fabric with torch.distributed (torchfleet.cluster).

Started by torchrun on every node (static rendezvous, node rank = inventory rank order), one
process per node with gloo, one per GPU with NCCL:

    torchrun --nnodes=N --nproc-per-node=P --node-rank=R --rdzv-backend=static \
        --rdzv-endpoint=MASTER:PORT torchfleet_fabric.py --nodes='["node0", "node1"]'

What it measures, one thing at a time with a barrier in between, so that no measurement shares
the network with another, every link in ``--rounds`` rounds (the best round counts: a stall of a
busy node hits one round, a slow link every one):

- for each measured pair of nodes, in both directions: bandwidth (SRC sends ``--p2p-bytes``
  ``--p2p-iters`` times, DST acknowledges each message; the best message and the mean) and latency
  (half the shortest and half the median round trip of an 8-byte ping-pong); between the first
  process of each node;
- all-reduce of float32 buffers from 8 B to ``--allreduce-max-bytes`` (x8 per step) over every
  process, with algbw = bytes / time and busbw = algbw * 2(n-1)/n as nccl-tests define them.

The pairs: every pair when that is at most a ring plus ``--random-peers`` per node, else the ring
(node i with node i+1) and ``--random-peers`` random other peers per node: O(N) pairs, so the time
grows linearly with the nodes, and every node has at least two peers (a node slow towards all of
them is told apart from one slow link).

Rank 0 prints one line, ``TORCHFLEET_FABRIC_RESULT <json>``; the controller validates it.
"""

import argparse
import datetime
import json
import os
import random
import statistics
import sys
import time

RESULT_PREFIX = "TORCHFLEET_FABRIC_RESULT "
FORMAT_VERSION = 1
LATENCY_WARMUP = 5
BANDWIDTH_WARMUP = 2


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--nodes", required=True, help="JSON list of the nodes' inventory names, in node-rank order")
    parser.add_argument("--backend", choices=("gloo", "nccl"), default="gloo")
    parser.add_argument("--p2p-bytes", type=int, default=4 << 20)
    parser.add_argument("--p2p-iters", type=int, default=8)
    parser.add_argument("--latency-iters", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3, help="times every link is measured; the best counts")
    parser.add_argument("--random-peers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--allreduce-max-bytes", type=int, default=16 << 20)
    parser.add_argument("--allreduce-iters", type=int, default=5)
    parser.add_argument("--timeout", type=int, default=300, help="seconds a collective may block")
    args = parser.parse_args(argv)
    args.nodes = json.loads(args.nodes)
    if not isinstance(args.nodes, list) or not all(isinstance(name, str) for name in args.nodes):
        parser.error("--nodes must be a JSON list of names")
    if args.p2p_bytes < 8 or args.p2p_iters < 1 or args.latency_iters < 1 or args.allreduce_iters < 1 or args.rounds < 1:
        parser.error("sizes and iteration counts must be positive (--p2p-bytes at least 8)")
    return args


def pair_schedule(count, random_peers, seed):
    """The unordered node pairs to measure, sorted: all of them while that is O(N), else a ring plus random peers."""
    if count < 2:
        return []
    every = [(a, b) for a in range(count) for b in range(a + 1, count)]
    if len(every) <= count * (1 + random_peers):
        return every
    pairs = {tuple(sorted((i, (i + 1) % count))) for i in range(count)}
    rng = random.Random(seed)
    for node in range(count):
        others = [peer for peer in range(count) if peer != node and tuple(sorted((node, peer))) not in pairs]
        for peer in rng.sample(others, min(random_peers, len(others))):
            pairs.add(tuple(sorted((node, peer))))
    return sorted(pairs)


def allreduce_sizes(max_bytes):
    """8 B, then x8 per step, up to and including max_bytes (rounded down to whole float32 elements)."""
    sizes, size = [], 8
    while size < max_bytes:
        sizes.append(size)
        size *= 8
    sizes.append(max(8, max_bytes - max_bytes % 4))
    return sizes


def bus_bandwidth(algbw, world):
    return algbw * 2 * (world - 1) / world if world > 1 else algbw


class Fabric:
    """One process of the job: its rank, device and the primitives the measurements share."""

    def __init__(self, torch, dist, args):
        self.torch, self.dist, self.args = torch, dist, args
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.local_world = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
        if args.backend == "nccl":
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
            self.device = torch.device("cuda", torch.cuda.current_device())
        else:
            self.device = torch.device("cpu")

    def sync(self):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize()

    def node_leader(self, node):
        """Global rank of a node's first process (node ranks are torchrun's --node-rank)."""
        return node * self.local_world

    def buffer(self, nbytes):
        return self.torch.zeros(max(1, nbytes // 4), dtype=self.torch.float32, device=self.device)

    def bandwidth(self, peer, role):
        """SRC: the seconds of each of p2p_iters messages, each acknowledged; DST: answers them."""
        data, ack = self.buffer(self.args.p2p_bytes), self.buffer(4)
        dist = self.dist
        times = []
        for step in range(self.args.p2p_iters + BANDWIDTH_WARMUP):
            self.sync()
            started = time.perf_counter()
            if role == "src":
                dist.send(data, peer)
                dist.recv(ack, peer)
            else:
                dist.recv(data, peer)
                dist.send(ack, peer)
            self.sync()
            if step >= BANDWIDTH_WARMUP:
                times.append(time.perf_counter() - started)
        return times

    def latency(self, peer, role):
        """SRC: the round trips of an 8-byte message, in seconds; DST: echoes."""
        ping = self.buffer(8)
        trips = []
        for step in range(self.args.latency_iters + LATENCY_WARMUP):
            started = time.perf_counter()
            if role == "src":
                self.dist.send(ping, peer)
                self.dist.recv(ping, peer)
            else:
                self.dist.recv(ping, peer)
                self.dist.send(ping, peer)
            self.sync()
            if step >= LATENCY_WARMUP:
                trips.append(time.perf_counter() - started)
        return trips

    def warm_up(self):
        """Every connection carries traffic once before anything is timed (lazy setup, TCP slow start)."""
        buf = self.buffer(self.args.p2p_bytes)
        for _step in range(2):
            self.dist.all_reduce(buf)
        self.sync()

    def measure_direction(self, src, dst):
        """One directed link, measured from its source; None on the ranks that take no part."""
        self.dist.barrier()
        src_rank, dst_rank = self.node_leader(src), self.node_leader(dst)
        if self.rank not in (src_rank, dst_rank):
            return None
        role, peer = ("src", dst_rank) if self.rank == src_rank else ("dst", src_rank)
        times = self.bandwidth(peer, role)
        trips = self.latency(peer, role)
        if role == "dst":
            return None
        nbytes = self.args.p2p_bytes - self.args.p2p_bytes % 4
        # Judged: the best message and the shortest round trip. Other work on a node only ever slows a
        # sample down, while a slow link or an added delay slows every one of them.
        return {"src": self.args.nodes[src], "dst": self.args.nodes[dst],
                "bandwidth_gbs": nbytes / min(times) / 1e9, "latency_us": min(trips) / 2 * 1e6,
                "mean_bandwidth_gbs": nbytes * len(times) / sum(times) / 1e9,
                "median_latency_us": statistics.median(trips) / 2 * 1e6}

    def allreduce(self, nbytes):
        """One size: checked once (every element must equal the world size), then timed."""
        buf = self.buffer(nbytes)
        buf.fill_(1.0)
        self.dist.all_reduce(buf)
        self.sync()
        if not bool((buf == float(self.world)).all()):
            raise RuntimeError("all-reduce of %d bytes gave a wrong sum on rank %d" % (nbytes, self.rank))
        buf.zero_()
        self.dist.barrier()
        started = time.perf_counter()
        for _step in range(self.args.allreduce_iters):
            self.dist.all_reduce(buf)
        self.sync()
        elapsed = self.torch.tensor([time.perf_counter() - started], dtype=self.torch.float64, device=self.device)
        self.dist.all_reduce(elapsed, op=self.dist.ReduceOp.MAX)  # the op ends when the slowest rank has it
        seconds = float(elapsed.item()) / self.args.allreduce_iters
        algbw = (buf.numel() * 4) / seconds / 1e9
        return {"bytes": buf.numel() * 4, "seconds": seconds, "algbw_gbs": algbw,
                "busbw_gbs": bus_bandwidth(algbw, self.world)}


def better(old, new):
    """The best of two measurements of one directed link: a stall on a node hits one round, a slow link every round."""
    if old is None:
        return new
    merged = dict(old)
    for key in ("bandwidth_gbs", "mean_bandwidth_gbs"):
        merged[key] = max(old[key], new[key])
    for key in ("latency_us", "median_latency_us"):
        merged[key] = min(old[key], new[key])
    return merged


def settings(args, local_world):
    keys = ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_NET")
    return {"backend": args.backend, "procs_per_node": local_world, "p2p_bytes": args.p2p_bytes,
            "p2p_iters": args.p2p_iters, "latency_iters": args.latency_iters, "allreduce_iters": args.allreduce_iters,
            "random_peers": args.random_peers, "seed": args.seed, "rounds": args.rounds,
            "environment": {key: os.environ[key] for key in keys if key in os.environ}}


def run(torch, dist, args):
    started = time.monotonic()
    fabric = Fabric(torch, dist, args)
    if fabric.world != len(args.nodes) * fabric.local_world:
        raise RuntimeError("world size %d is not %d nodes x %d processes" % (fabric.world, len(args.nodes), fabric.local_world))
    pairs = pair_schedule(len(args.nodes), args.random_peers, args.seed)
    fabric.warm_up()
    best = {}
    for _round in range(args.rounds):
        for a, b in pairs:
            for src, dst in ((a, b), (b, a)):
                link = fabric.measure_direction(src, dst)
                if link is not None:
                    best[(src, dst)] = better(best.get((src, dst)), link)
    links = list(best.values())
    allreduce = [fabric.allreduce(size) for size in allreduce_sizes(args.allreduce_max_bytes)]
    gathered = [None] * fabric.world if fabric.rank == 0 else None
    dist.gather_object(links, gathered, dst=0)
    if fabric.rank != 0:
        return None
    return {"format": FORMAT_VERSION, "torch": torch.__version__, "nodes": args.nodes, "world_size": fabric.world,
            "settings": settings(args, fabric.local_world), "pairs": len(pairs),
            "links": [link for part in gathered for link in part], "allreduce": allreduce,
            "seconds": time.monotonic() - started}


def main(argv=None):
    args = parse_args(argv)
    import torch  # pylint: disable=import-outside-toplevel
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel

    dist.init_process_group(args.backend, timeout=datetime.timedelta(seconds=args.timeout))
    try:
        result = run(torch, dist, args)
    finally:
        dist.destroy_process_group()
    if result is not None:
        sys.stdout.write(RESULT_PREFIX + json.dumps(result, sort_keys=True) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
