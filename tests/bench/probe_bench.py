# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark (not a test): the torch_facts probe against a bare ``python -c "import torch"``.

Runs the two commands alternately (import, probe, import, probe, ...) in the same
interpreter, after a warm-up round, and prints the medians, the ratio probe/import and the
probe's own breakdown (its ``timings``: import torch, torch facts, packages, waiting for the
GPU query). Exits 0 whatever the figures are.

    python tests/bench/probe_bench.py [--python PATH] [--runs 7] [--probe-cuda] [--json]

PATH defaults to $TORCHFLEET_TEST_TORCH_PYTHON, else the repository's .venv/bin/python.
"""

from __future__ import absolute_import, division, print_function

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_torch_probe():
    """The collection's probe module, from the checkout (.ansible/collections links to it)."""
    sys.path.insert(0, os.path.join(ROOT, '.ansible', 'collections'))
    from ansible_collections.torchfleet.cluster.plugins.module_utils._probe import torch_probe
    return torch_probe


def child_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(argv):
    cpu, started = child_cpu(), time.monotonic()
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    return time.monotonic() - started, child_cpu() - cpu, proc


def measure(torch_probe, jobs, runs, warmup):
    """{name: {'wall': [s], 'cpu': [s]}} with the jobs interleaved, and the probe's own timings."""
    samples = dict((name, {'wall': [], 'cpu': []}) for name, dummy in jobs)
    inner = []
    for index in range(warmup + runs):
        for name, argv in jobs:
            wall, cpu, proc = run_once(argv)
            if proc.returncode != 0:
                raise SystemExit('%s failed (rc %s): %s' % (name, proc.returncode, proc.stderr[-2000:]))
            if index < warmup:
                continue
            samples[name]['wall'].append(wall)
            samples[name]['cpu'].append(cpu)
            if name == 'probe':
                inner.append(torch_probe.parse_output(proc.stdout).get('timings') or {})
    return samples, inner


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--python', default=os.environ.get('TORCHFLEET_TEST_TORCH_PYTHON')
                        or os.path.join(ROOT, '.venv', 'bin', 'python'))
    parser.add_argument('--runs', type=int, default=7)
    parser.add_argument('--warmup', type=int, default=1)
    parser.add_argument('--probe-cuda', action='store_true')
    parser.add_argument('--json', action='store_true', help='print the raw samples as JSON as well')
    args = parser.parse_args()
    torch_probe = load_torch_probe()

    jobs = [('import torch', [args.python, '-c', 'import torch']),
            ('probe', torch_probe.probe_command(args.python, probe_cuda=args.probe_cuda))]
    samples, inner = measure(torch_probe, jobs, args.runs, args.warmup)
    ratios = dict((kind, statistics.median(samples['probe'][kind]) / statistics.median(samples['import torch'][kind]))
                  for kind in ('wall', 'cpu'))
    print('interpreter: %s   runs: %d (alternating, after %d warm-up)' % (args.python, args.runs, args.warmup))
    print('%-26s %11s %9s %9s %11s' % ('command', 'median wall', 'min wall', 'max wall', 'median cpu'))
    for name, label in (('import torch', 'python -c "import torch"'), ('probe', 'torch_facts probe')):
        wall, cpu = samples[name]['wall'], samples[name]['cpu']
        row = (label, statistics.median(wall), min(wall), max(wall), statistics.median(cpu))
        print('%-26s %10.3fs %8.3fs %8.3fs %10.3fs' % row)
    print('ratio probe / import torch: wall %.3f, cpu %.3f' % (ratios['wall'], ratios['cpu']))
    if inner:
        print('probe breakdown (medians, s): ' + ', '.join(
            '%s %.3f' % (key, statistics.median(t.get(key, 0.0) for t in inner))
            for key in ('import_torch', 'torch_facts', 'packages', 'gpu_wait', 'total')))
        print('probe work besides import torch (median, s): %.3f' % statistics.median(
            t.get('total', 0.0) - t.get('import_torch', 0.0) for t in inner))
    if args.json:
        print(json.dumps({'samples': samples, 'probe_timings': inner, 'ratios': ratios}, sort_keys=True))
    return 0


if __name__ == '__main__':
    sys.exit(main())
