#!/usr/bin/env python
"""Multi-node torch.distributed smoke test, one torchrun worker per rank (torchfleet.cluster).

Started by torchrun on every node (static rendezvous on the master's DDP port, node rank =
inventory rank order), P processes per node (global ranks node * P + i):

    torchrun --nnodes=N --nproc-per-node=P --node-rank=R --rdzv-backend=static \
        --rdzv-endpoint=MASTER:DDP_PORT torchfleet_smoke.py --master-addr=MASTER --rpc-port=RPC_PORT

Phases: import torch; resolve the master's address; torch RPC over TensorPipe (rank 0 calls
add_tensors on every other worker with rpc_sync, rendezvous on --rpc-port, where rank 0 hosts
the store); DDP (init_process_group through torchrun's store on the DDP port, a numerically
checked all_reduce, a few training steps of a small model, then every rank's parameters compared
through all_gather).

Every rank prints one line, ``TORCHFLEET_SMOKE_RESULT <json>``: {"ok", "rank", "node",
"local_rank", "host", "uid", "torch", "backend", "seconds", "phases": [{"name", "ok",
"seconds", "cause", "detail"}]}. A phase that hangs is stopped by a watchdog, so even a blocked
port yields a report, never a raw traceback; the controller reads one report per node.
"""

import argparse
import contextlib
import datetime
import json
import os
import socket
import sys
import threading
import time
import warnings

RESULT_PREFIX = "TORCHFLEET_SMOKE_RESULT "
SOCKET_IFNAME_VARIABLES = ("GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME")
# torchrun makes every store of its workers a client of its own store; the RPC rendezvous has its own port.
AGENT_STORE_VARIABLE = "TORCHELASTIC_USE_AGENT_STORE"

RESULT = {"ok": False, "rank": None, "node": None, "local_rank": None, "host": socket.gethostname(),
          "uid": os.geteuid(), "torch": None, "backend": None, "seconds": 0.0, "phases": []}
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
    """Print this rank's report once and leave at once (threads of torch may still hang)."""
    with EMIT_LOCK:
        RESULT["seconds"] = round(time.monotonic() - START, 3)
        RESULT["ok"] = code == 0 and all(p["ok"] for p in RESULT["phases"])
        sys.stdout.write(RESULT_PREFIX + json.dumps(RESULT, sort_keys=True) + "\n")
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


@contextlib.contextmanager
def own_store():
    """Rendezvous through a store that rank 0 hosts, not through torchrun's."""
    saved = os.environ.pop(AGENT_STORE_VARIABLE, None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ[AGENT_STORE_VARIABLE] = saved


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
        with own_store():
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
    RESULT["backend"] = args.backend
    device = torch.device("cuda", args.local_rank) if args.backend == "nccl" else torch.device("cpu")
    with Phase("ddp", args.phase_timeout) as phase:
        if args.backend == "nccl":
            torch.cuda.set_device(args.local_rank)
        phase.step = "init_process_group(%s, rendezvous on %s:%s)" % (
            args.backend, os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT"))
        dist.init_process_group(args.backend, init_method="env://", rank=args.rank, world_size=args.world_size,
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
        ddp = DistributedDataParallel(model, device_ids=[args.local_rank] if args.backend == "nccl" else None)
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


def use_socket_ifname(ifname):
    """The NIC the backends bind to: one name for all three, or (empty) their own choice."""
    for variable in SOCKET_IFNAME_VARIABLES:
        if ifname:
            os.environ[variable] = ifname
        else:
            os.environ.pop(variable, None)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--master-addr", required=True)
    parser.add_argument("--rpc-port", type=int, required=True)
    parser.add_argument("--backend", choices=["gloo", "nccl"], default="gloo")
    parser.add_argument("--phase-timeout", type=float, default=60.0)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--socket-ifname", help="the NIC of the backends; empty lets them choose, unset keeps the environment's")
    args = parser.parse_args(argv)
    args.rank = int(os.environ["RANK"])
    args.world_size = int(os.environ["WORLD_SIZE"])
    args.local_rank = int(os.environ["LOCAL_RANK"])
    args.node = int(os.environ["GROUP_RANK"])
    return args


def main(argv):
    args = parse_args(argv)
    # torch's own deprecation notes would bury the report in the job's output.
    warnings.filterwarnings("ignore", category=UserWarning)
    if args.socket_ifname is not None:
        use_socket_ifname(args.socket_ifname)
    RESULT.update(rank=args.rank, node=args.node, local_rank=args.local_rank)
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
