# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Synthetic torch fact sets for the consistency tests (shape of DESIGN.md's facts contract)."""

from __future__ import annotations

import copy
import json

DELETE = object()
UNREACHABLE = object()

SPEC_SHA = "3f2a1c0d9b8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a"


def base_facts(gpus=0, index=0):
    """One node's facts; with GPUs each device has a node-unique UUID, as real hardware does."""
    packages = {"numpy": "2.4.6", "torch": "2.13.0+cpu", "python": "3.11.14", "pip": "25.3",
                "typing-extensions": "4.12.2", "filelock": "3.16.1", "sympy": "1.13.3"}
    return {
        "version": "2.13.0+cpu" if not gpus else "2.13.0+cu128",
        "cuda": None if not gpus else "12.8",
        "cudnn": None if not gpus else "9.10.2",
        "nccl": None if not gpus else "2.27.3",
        "cuda_available": bool(gpus),
        "gpu_count": gpus,
        "gpus": [{"name": "NVIDIA H200", "capability": "9.0", "uuid": f"GPU-{index:04d}-{g}"} for g in range(gpus)],
        "driver": None if not gpus else "570.124.06",
        "python": "3.11.14",
        "distributed": {"available": True, "gloo": True, "nccl": bool(gpus), "mpi": False},
        "env": {
            "name": "train",
            "prefix": "/opt/miniconda3/envs/.torchfleet/train-3f2a1c0d9b8e",
            "spec_sha256": SPEC_SHA,
            "packages_sha256": "8c1e" * 16,
            "packages": packages,
            "stamp": {"name": "train", "spec_sha256": SPEC_SHA, "lock_sha256": None,
                      "collection_version": "0.1.0", "spec_file": "environment.yml"},
        },
    }


def set_path(facts, dotted, value):
    """Set (or with DELETE remove) a dotted field; the last two parts of env.packages.X name a package."""
    parts = dotted.split(".")
    if parts[:2] == ["env", "packages"]:
        parts = parts[:2] + [".".join(parts[2:])]
    node = facts
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = value
    elif value is DELETE:
        node.pop(last, None)
    else:
        node[last] = value


def fleet(count, changes=(), gpus=0, prefix="node"):
    """``{host: facts}`` in order; changes are (host index, field or None, value or DELETE/UNREACHABLE).

    Each host's facts are decoded from JSON on their own, like Ansible hands them over."""
    hosts = {}
    for index in range(count):
        hosts[f"{prefix}{index}"] = json.loads(json.dumps(base_facts(gpus, index)))
    names = list(hosts)
    for index, field, value in changes:
        host = names[index]
        if value is UNREACHABLE:
            hosts[host] = None
        else:
            set_path(hosts[host], field, value if value is DELETE else copy.deepcopy(value))
    return hosts
