# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Times commands inside a node, with no SSH in the measurement.

The benchmark sends this file's source to a node's system python3 on stdin, followed by a
call ``main(SPEC)``; SPEC = {"repeats": R, "warmup": W, "jobs": [{"name", "argv"}]}.  The
jobs run alternately (job A, job B, job A, ...) so that a noisy neighbour hurts all of
them alike; it prints one JSON line: {name: {"wall": [...], "cpu": [...], "rc": [...],
"stderr": "..."}}.
"""

import json
import resource
import subprocess
import time


def child_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(argv):
    cpu0, wall0 = child_cpu(), time.monotonic()
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, check=False)
    wall, cpu = time.monotonic() - wall0, child_cpu() - cpu0
    return wall, cpu, proc.returncode, proc.stderr.decode("utf-8", "replace")[-2000:]


def main(spec):
    results = {}
    for job in spec["jobs"]:
        results[job["name"]] = {"wall": [], "cpu": [], "rc": [], "stderr": ""}
    for index in range(spec.get("warmup", 1) + spec["repeats"]):
        for job in spec["jobs"]:
            wall, cpu, rc, stderr = run_once(job["argv"])
            entry = results[job["name"]]
            if rc != 0:
                entry["stderr"] = stderr
            if index < spec.get("warmup", 1):
                continue
            entry["wall"].append(round(wall, 4))
            entry["cpu"].append(round(cpu, 4))
            entry["rc"].append(rc)
    print(json.dumps(results, sort_keys=True))
