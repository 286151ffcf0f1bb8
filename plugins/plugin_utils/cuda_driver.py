# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Consistency rule: the NVIDIA driver of a node must be new enough for the CUDA build of torch.

A node whose driver is uniform with the others but too old for ``torch.version.cuda`` passes
the majority comparison and then fails at the first CUDA call ("The NVIDIA driver on your
system is too old", "CUDA driver version is insufficient for CUDA runtime version"). This
rule compares each node with a fixed table instead, and with the newest CUDA version the
driver itself says it supports (``driver_cuda``: ``cuDriverGetVersion`` / NVML
``nvmlSystemGetCudaDriverVersion`` / the "CUDA Version" of ``nvidia-smi``), when known.

MIN_DRIVER: CUDA major.minor -> minimum Linux x86_64 driver of that toolkit's first release
(GA), from NVIDIA's CUDA Toolkit Release Notes, Table 3 "CUDA Toolkit and Corresponding
Driver Versions" (TABLE_URL); the comment on each row names the row of that table. Every row
was checked on 2026-12-07 against a stored copy of the table as published with CUDA 13.2
Update 2 (TABLE_CHECKED_IN). There is no CUDA 12.7. Newer updates of a release may list a newer driver; the GA value is the
floor. NVIDIA's "minor version compatibility" lets some applications run on an older driver
of the same major (12.x from 525.60.13) with limitations (no PTX JIT); torch builds that need
their kernels JIT-compiled fail there, so the rule keeps the GA floor.
A CUDA version newer than the table is checked against ``driver_cuda`` only.

Findings are drift entries of field ``cuda_driver`` with ``source: spec``; list
``cuda_driver`` in the engine's ignore patterns to switch the rule off.
"""

from __future__ import annotations

import re

FIELD = "cuda_driver"
TABLE_URL = "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html"
TABLE_CHECKED_IN = "https://docs.nvidia.com/cuda/archive/13.2.2/cuda-toolkit-release-notes/index.html"
TABLE_SOURCE = "CUDA Toolkit Release Notes, 'CUDA Toolkit and Corresponding Driver Versions' (as of CUDA 13.2 Update 2)"

# Each comment is the row of NVIDIA's Table 3 the value comes from (Linux x86_64 column).
MIN_DRIVER = {
    "11.0": "450.51.05",   # CUDA 11.0.2 GA
    "11.1": "455.23",      # CUDA 11.1 GA
    "11.2": "460.27.03",   # CUDA 11.2.0 GA
    "11.3": "465.19.01",   # CUDA 11.3.0 GA
    "11.4": "470.42.01",   # CUDA 11.4.0 GA
    "11.5": "495.29.05",   # CUDA 11.5 GA
    "11.6": "510.39.01",   # CUDA 11.6 GA
    "11.7": "515.43.04",   # CUDA 11.7 GA
    "11.8": "520.61.05",   # CUDA 11.8 GA
    "12.0": "525.60.13",   # CUDA 12.0 GA
    "12.1": "530.30.02",   # CUDA 12.1 GA
    "12.2": "535.54.03",   # CUDA 12.2 GA
    "12.3": "545.23.06",   # CUDA 12.3 GA
    "12.4": "550.54.14",   # CUDA 12.4 GA
    "12.5": "555.42.02",   # CUDA 12.5 GA
    "12.6": "560.28.03",   # CUDA 12.6 GA
    "12.8": "570.26",      # CUDA 12.8 GA
    "12.9": "575.51.03",   # CUDA 12.9 GA
    "13.0": "580.65.06",   # CUDA 13.0 GA
    "13.1": "590.44.01",   # CUDA 13.1 GA
}

_NUMBERS = re.compile(r"^\d+(\.\d+)*$")


def version_tuple(text):
    """'535.104.05' -> (535, 104, 5); None for anything that is not dotted numbers."""
    text = str(text or "").strip()
    if not _NUMBERS.match(text):
        return None
    return tuple(int(part) for part in text.split("."))


def major_minor(cuda):
    """'12.8' or '12.8.1' -> '12.8'; None when not a CUDA version."""
    parts = version_tuple(cuda)
    if parts is None or len(parts) < 2:
        return None
    return "%d.%d" % parts[:2]


def required_driver(cuda):
    """Minimum driver for CUDA major.minor from the table, or None when the table lacks it."""
    key = major_minor(cuda)
    return MIN_DRIVER.get(key) if key else None


def problem(facts):
    """Why this node's driver cannot run its torch's CUDA build, or None.

    Only a node that has a driver and a CUDA build of torch is judged; a CPU node or a node
    without a driver is not this rule's business (cuda_available says so).
    """
    facts = facts or {}
    cuda, driver, driver_cuda = facts.get("cuda"), facts.get("driver"), facts.get("driver_cuda")
    wanted = major_minor(cuda)
    if not wanted or not driver:
        return None
    floor = required_driver(cuda)
    have = version_tuple(driver)
    if floor and have is not None and have < version_tuple(floor):
        return {"expected": ">=%s (CUDA %s)" % (floor, wanted),
                "detail": "driver %s is older than %s, the minimum for CUDA %s (%s)" % (driver, floor, wanted, TABLE_SOURCE)}
    supported = major_minor(driver_cuda)
    if supported and version_tuple(supported) < version_tuple(wanted):
        return {"expected": "driver supporting CUDA >=%s" % wanted,
                "detail": "driver %s supports CUDA up to %s, torch is built for CUDA %s" % (driver, supported, wanted)}
    return None


def entries(facts_by_host, ignored=lambda field: False):
    """Drift entries (consistency report shape) for nodes whose driver is too old; one per expectation."""
    if ignored(FIELD):
        return []
    grouped = {}
    for host, facts in facts_by_host.items():
        found = problem(facts)
        if found is not None:
            entry = grouped.setdefault(found["expected"], {
                "field": FIELD, "expected": found["expected"], "source": "spec", "rule": "min_version",
                "tie": False, "hosts": {}, "details": {}})
            entry["hosts"][host] = "%s (CUDA %s)" % (facts.get("driver"), facts.get("cuda"))
            entry["details"][host] = found["detail"]
    return list(grouped.values())
