#!/usr/bin/env python
"""Example DDP job for torchrun (torchfleet.cluster): every rank joins, an all-reduce of the
global ranks must give 0 + 1 + ... + (WORLD_SIZE - 1), then a few DDP steps must leave every
rank with the same parameters.

    torchrun --nnodes=N --nproc-per-node=P ... ddp_allreduce.py [--fail-rank R] [--hang-rank R]

--fail-rank R makes rank R exit 1 after joining, --hang-rank R makes it stop making progress
(both repeatable, to test the launcher). Prints one line per step and rank, and PASS on rank 0.
"""

import argparse
import datetime
import os
import pwd
import socket
import sys
import time

import torch
import torch.distributed as dist


def say(rank, text):
    print("ddp_allreduce rank %d on %s: %s" % (rank, socket.gethostname(), text), flush=True)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fail-rank", type=int, action="append", default=[], help="rank that exits 1 (repeatable)")
    parser.add_argument("--hang-rank", type=int, action="append", default=[], help="rank that hangs (repeatable)")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds a collective may wait")
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    use_cuda = torch.cuda.is_available() and dist.is_nccl_available()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local_rank) if use_cuda else torch.device("cpu")
    if use_cuda:
        torch.cuda.set_device(device)
    dist.init_process_group("nccl" if use_cuda else "gloo", timeout=datetime.timedelta(seconds=args.timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    say(rank, "joined (world size %d, local rank %d, backend %s, user %s)"
        % (world, local_rank, dist.get_backend(), pwd.getpwuid(os.getuid()).pw_name))
    if rank in args.fail_rank:
        say(rank, "exits 1 on purpose (--fail-rank)")
        return 1
    if rank in args.hang_rank:
        say(rank, "stops making progress on purpose (--hang-rank)")
        while True:
            time.sleep(60)
    value = torch.tensor([float(rank)], device=device)
    dist.all_reduce(value)
    expected = world * (world - 1) / 2.0
    if float(value) != expected:
        say(rank, "FAIL all_reduce gave %s, expected %s" % (float(value), expected))
        return 2
    say(rank, "all_reduce ok (sum %g)" % float(value))
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(
        torch.nn.Linear(8, 1).to(device), device_ids=[local_rank] if use_cuda else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    generator = torch.Generator().manual_seed(rank)
    for dummy in range(args.steps):
        inputs = torch.randn(16, 8, generator=generator).to(device)
        optimizer.zero_grad()
        model(inputs).pow(2).mean().backward()
        optimizer.step()
    params = torch.cat([p.detach().flatten() for p in model.parameters()])
    gathered = [torch.empty_like(params) for dummy in range(world)]
    dist.all_gather(gathered, params)
    if any(not torch.equal(other, gathered[0]) for other in gathered):
        say(rank, "FAIL parameters differ between ranks after DDP steps")
        return 3
    say(rank, "ddp steps ok")
    # Tear down in order: every rank is done with the group before any leaves, and DDP (whose
    # reducer holds the group) goes first; else gloo can abort at exit ("terminate called without
    # an active exception").
    dist.barrier()
    del model, optimizer
    dist.destroy_process_group()
    if rank == 0:
        say(rank, "PASS world_size=%d sum=%g" % (world, expected))
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    # Every outcome leaves here, without the interpreter's own teardown: torch's C++ threads can
    # abort it (SIGABRT, "terminate called without an active exception"), even after a clean
    # destroy_process_group, and torchrun would report that instead of the rank's exit code.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
