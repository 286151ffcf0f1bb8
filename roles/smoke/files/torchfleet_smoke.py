#!/usr/bin/env python
"""Multi-node torch.distributed smoke test, several processes per node (torchfleet.cluster).

Run the same command on every node at about the same time, with its own node rank:

    python torchfleet_smoke.py --rank R --world-size W --master-addr ADDR --procs-per-node P

With P > 1 the node's process starts P rank processes (global ranks R*P .. R*P+P-1 of a world
of W*P), so the collectives run between processes of one node and between nodes, and prints
one report for the node: the first failing rank's phases, else those of its first rank.

Phases: resolve the master's address; torch RPC over TensorPipe (rank 0 calls
add_tensors on every other worker with rpc_sync, rendezvous on --rpc-port); DDP
(init_process_group on --ddp-port, a numerically checked all_reduce, a few training
steps of a small model, then every rank's parameters compared through all_gather).

Prints one JSON object on stdout: {"ok", "rank", "host", "torch", "backend",
"seconds", "phases": [{"name", "ok", "seconds", "cause", "detail"}]}. A phase that
hangs is stopped by a watchdog, so even a blocked port yields a report, never a
raw traceback. `--probe` prints the versions only.
"""

import argparse
import datetime
import json
import os
import platform
import socket
import subprocess
import sys
import signal
import threading
import time
import warnings

RESULT = {"ok": False, "rank": None, "host": socket.gethostname(), "uid": os.geteuid(), "torch": None,
          "backend": None, "seconds": 0.0, "phases": []}
START = time.monotonic()
EMIT_LOCK = threading.Lock()

# (cause, words in the error text that point to it), first match wins.
CAUSES = (
    ("name resolution", ("name or service not known", "temporary failure in name resolution",
                         "nodename nor servname", "no address associated", "getaddrinfo",
                         "gaierror")),
    ("port in use", ("address already in use", "eaddrinuse")),
    ("connection refused", ("connection refused", "econnrefused")),
    ("timeout", ("timed out", "timeout", "deadline")),
    ("version mismatch", ("version", "mismatch", "unpickl", "has no attribute")),
    ("connection reset", ("connection reset", "broken pipe", "connection closed", "eof")),
)

HINTS = {
    "name resolution": "the master address does not resolve on this node; use an IP or fix DNS/hosts",
    "port in use": "a port is taken, often by a stray smoke or training process",
    "connection refused": "nothing listens on the master's port, or a firewall rejects it",
    "timeout": "a port is blocked (rendezvous port or the peer-link range) or a node did not start",
    "version mismatch": "torch differs between nodes",
    "connection reset": "a peer went away mid-run (crashed, killed or timed out)",
    "wrong result": "the numbers differ from what they must be",
    "error": "unexpected error",
}


def classify(text):
    """Map an error message to a likely cause."""
    low = text.lower()
    for cause, words in CAUSES:
        if any(word in low for word in words):
            return cause
    return "error"


def short(text, limit=300):
    """Last non-empty line of an error, shortened."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    line = lines[-1] if lines else str(text)
    return line if len(line) <= limit else line[:limit] + "..."


def emit(code):
    """Print the report once and leave at once (threads of torch may still hang)."""
    with EMIT_LOCK:
        RESULT["seconds"] = round(time.monotonic() - START, 3)
        RESULT["ok"] = code == 0 and all(p["ok"] for p in RESULT["phases"])
        sys.stdout.write(json.dumps(RESULT, sort_keys=True) + "\n")
        sys.stdout.flush()
        os._exit(code)


class Phase:
    """Time one phase, record its outcome, and stop the process if it hangs."""

    def __init__(self, name, timeout):
        self.name = name
        self.timeout = timeout
        self.step = "starting"
        self.record = {"name": name, "ok": False, "seconds": 0.0, "cause": None, "detail": None}
        self.started = None
        self.timer = None

    def __enter__(self):
        RESULT["phases"].append(self.record)
        self.started = time.monotonic()
        self.timer = threading.Timer(self.timeout, self.expire)
        self.timer.daemon = True
        self.timer.start()
        return self

    def expire(self):
        self.fail("timeout", "no progress for %ss in %s" % (self.timeout, self.step))
        emit(3)

    def fail(self, cause, detail):
        self.record.update(ok=False, cause=cause, detail="%s (%s)" % (detail, HINTS.get(cause, "")))
        self.record["seconds"] = round(time.monotonic() - self.started, 3)

    def __exit__(self, exc_type, exc, tb):
        self.timer.cancel()
        if exc is None:
            self.record.update(ok=True, seconds=round(time.monotonic() - self.started, 3))
            return False
        text = "%s: %s" % (exc_type.__name__, exc)
        cause = "wrong result" if isinstance(exc, CheckFailed) else classify(text)
        self.fail(cause, "%s: %s" % (self.step, short(text)))
        emit(1)
        return True


class CheckFailed(Exception):
    """A result differs from the value it must have."""


def add_tensors(first, second):
    """Called by rank 0 on the other workers over RPC."""
    import torch
    return torch.add(first, second), socket.gethostname()


def phase_resolve(args):
    with Phase("resolve", args.phase_timeout) as phase:
        phase.step = "resolving %s" % args.master_addr
        socket.getaddrinfo(args.master_addr, args.rpc_port, proto=socket.IPPROTO_TCP)


def phase_rpc(args, torch):
    from torch.distributed import rpc
    with Phase("rpc", args.phase_timeout) as phase:
        options = rpc.TensorPipeRpcBackendOptions(
            init_method="tcp://%s:%d" % (args.master_addr, args.rpc_port),
            rpc_timeout=args.phase_timeout)
        phase.step = "init_rpc (rendezvous on %s:%d)" % (args.master_addr, args.rpc_port)
        rpc.init_rpc("worker%d" % args.rank, rank=args.rank, world_size=args.world_size,
                     rpc_backend_options=options)
        if args.rank == 0:
            targets = range(1, args.world_size) if args.world_size > 1 else [0]
            for peer in targets:
                phase.step = "rpc_sync(worker%d, add_tensors)" % peer
                value, host = rpc.rpc_sync("worker%d" % peer, add_tensors,
                                           args=(torch.ones(2) * peer, torch.ones(2)))
                if not torch.equal(value, torch.ones(2) * (peer + 1)):
                    raise CheckFailed("worker%d (%s) returned %s" % (peer, host, value.tolist()))
        phase.step = "rpc shutdown (waits for every worker)"
        rpc.shutdown()


def pick_backend(args, torch):
    if args.backend != "auto":
        return args.backend
    if torch.cuda.is_available() and torch.distributed.is_nccl_available():
        return "nccl"
    return "gloo"


def train_steps(torch, model, device, rank, steps):
    """A few SGD steps on data that differs per rank, so DDP must average gradients."""
    generator = torch.Generator().manual_seed(1000 + rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for dummy in range(steps):
        inputs = torch.randn(32, 16, generator=generator).to(device)
        target = inputs.sum(dim=1, keepdim=True)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(inputs), target)
        loss.backward()
        optimizer.step()
    return float(loss.detach())


def phase_ddp(args, torch):
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    backend = pick_backend(args, torch)
    RESULT["backend"] = backend
    device = torch.device("cuda", args.local_rank) if backend == "nccl" else torch.device("cpu")
    with Phase("ddp", args.phase_timeout) as phase:
        os.environ["MASTER_ADDR"] = args.master_addr
        os.environ["MASTER_PORT"] = str(args.ddp_port)
        phase.step = "init_process_group(%s, rendezvous on %s:%d)" % (backend, args.master_addr, args.ddp_port)
        dist.init_process_group(backend, init_method="env://", rank=args.rank, world_size=args.world_size,
                                timeout=datetime.timedelta(seconds=args.phase_timeout))
        phase.step = "all_reduce"
        value = torch.tensor([float(args.rank + 1)], device=device)
        dist.all_reduce(value)
        expected = args.world_size * (args.world_size + 1) / 2.0
        if float(value) != expected:
            raise CheckFailed("all_reduce gave %s, expected %s" % (float(value), expected))

        phase.step = "DDP training steps"
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)).to(device)
        initial = torch.cat([p.detach().flatten() for p in model.parameters()]).clone()
        ddp = DistributedDataParallel(model, device_ids=[args.local_rank] if backend == "nccl" else None)
        RESULT["loss"] = train_steps(torch, ddp, device, args.rank, args.steps)

        phase.step = "all_gather of the parameters"
        params = torch.cat([p.detach().flatten() for p in model.parameters()])
        if torch.equal(params, initial):
            raise CheckFailed("parameters did not change during training")
        gathered = [torch.empty_like(params) for dummy in range(args.world_size)]
        dist.all_gather(gathered, params)
        differing = [rank for rank, other in enumerate(gathered) if not torch.equal(other, gathered[0])]
        if differing:
            raise CheckFailed("parameters of rank(s) %s differ from rank 0 after training" % differing)
        phase.step = "destroy_process_group"
        dist.destroy_process_group()


def probe():
    import torch
    import torch.distributed as dist
    print(json.dumps({
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cuda_available": torch.cuda.is_available(),
        "gpu_count": torch.cuda.device_count() if torch.cuda.is_available() else 0,
        "distributed": dist.is_available(),
        "gloo": dist.is_available() and dist.is_gloo_available(),
        "nccl": dist.is_available() and dist.is_nccl_available(),
    }, sort_keys=True))


def children_of(pid):
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % entry) as handle:
                if entry.isdigit() and int(handle.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return found


def rank_argv(args, argv, local):
    """The command line of one rank process of this node."""
    keep = [a for a in argv if not a.startswith(("--rank", "--world-size", "--procs-per-node", "--pidfile"))]
    return [sys.executable, os.path.abspath(__file__)] + keep + [
        "--rank=%d" % (args.rank * args.procs_per_node + local),
        "--world-size=%d" % (args.world_size * args.procs_per_node), "--local-rank=%d" % local]


def run_node(args, argv):
    """Start this node's rank processes, wait for all, print one report for the node."""
    procs = [subprocess.Popen(rank_argv(args, argv, local), stdout=subprocess.PIPE, universal_newlines=True)
             for local in range(args.procs_per_node)]
    reports = []
    for local, proc in enumerate(procs):
        out, dummy = proc.communicate()
        lines = [line for line in out.splitlines() if line.startswith("{")]
        try:
            reports.append(json.loads(lines[-1]))
        except (IndexError, ValueError):
            reports.append({"ok": False, "rank": args.rank * args.procs_per_node + local, "phases": [],
                            "detail": "rank process exited %s without a report" % proc.returncode})
    failed = [report for report in reports if not report.get("ok")]
    node = dict(failed[0] if failed else reports[0])
    node.update(ok=not failed, rank=args.rank, ranks=[report.get("rank") for report in reports],
                failed_rank=failed[0].get("rank") if failed else None,
                procs_per_node=args.procs_per_node,
                seconds=round(time.monotonic() - START, 3), uid=os.geteuid())
    if failed and not node.get("phases"):
        node["detail"] = "rank %s: %s" % (failed[0].get("rank"), failed[0].get("detail"))
    sys.stdout.write(json.dumps(node, sort_keys=True) + "\n")
    return 0 if not failed else 1


def kill_stray(pidfile):
    """Stop a smoke process left by an earlier or failed run (only if it is one)."""
    try:
        with open(pidfile) as handle:
            pid = int(handle.read().strip())
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            cmdline = handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except (OSError, ValueError):
        cmdline = ""
        pid = None
    killed = bool(pid) and os.path.basename(__file__) in cmdline and "--pidfile" in cmdline
    if killed:
        # the node's rank processes are its children: end them with it
        for child in children_of(pid):
            os.kill(child, signal.SIGKILL)
        os.kill(pid, signal.SIGKILL)
    if os.path.exists(pidfile):
        os.unlink(pidfile)
    print(json.dumps({"killed": killed, "pid": pid if killed else None}))


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probe", action="store_true", help="print versions as JSON and exit")
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--world-size", type=int, default=1)
    parser.add_argument("--master-addr", default="127.0.0.1")
    parser.add_argument("--rpc-port", type=int, default=29500)
    parser.add_argument("--ddp-port", type=int, default=12355)
    parser.add_argument("--backend", choices=["auto", "gloo", "nccl"], default="auto")
    parser.add_argument("--phase-timeout", type=float, default=60.0)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--pidfile", default="")
    parser.add_argument("--procs-per-node", type=int, default=1,
                        help="rank processes this node starts; --rank and --world-size count nodes then")
    parser.add_argument("--local-rank", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--kill", metavar="PIDFILE", help="stop the smoke process recorded in PIDFILE and exit")
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    if args.probe:
        probe()
        return 0
    if args.kill:
        kill_stray(args.kill)
        return 0
    # torch's own deprecation notes would bury the report in the job's output.
    warnings.filterwarnings("ignore", category=UserWarning)
    if args.pidfile:
        with open(args.pidfile, "w") as handle:
            handle.write("%d\n" % os.getpid())
    if args.procs_per_node > 1:
        return run_node(args, argv)
    RESULT["rank"] = args.rank
    with Phase("import", args.phase_timeout) as phase:
        phase.step = "import torch"
        import torch
        RESULT["torch"] = torch.__version__
    phase_resolve(args)
    phase_rpc(args, torch)
    phase_ddp(args, torch)
    emit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
