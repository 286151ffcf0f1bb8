# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ansible's own cost of a task on this machine, and what a run's task profile costs at the least.

Five playbooks of do-nothing tasks run alternately on the bench cluster: an empty play (start-up),
one remote no-op (`ping`, which also opens each node's connection), K remote no-ops, K `set_fact`
and K skipped tasks. From their controller CPU and the node containers' CPU come the costs of one
task on one node. A run's task profile (bench_stats: remote, controller, delegated and skipped
results per node) priced at those costs is the CPU it needs even if none of its tasks did any work.
"""

from __future__ import annotations

import os

TASKS = 10
KINDS = {
    "remote": "ansible.builtin.ping:",
    "set_fact": "ansible.builtin.set_fact:\n        unit_cost: \"{{ inventory_hostname | upper }}\"",
    "skipped": "ansible.builtin.debug:\n        msg: never shown\n      when: false",
}


def write_playbooks(directory):
    """The playbooks as {variant: path}: empty, remote-1, and K tasks of each kind."""
    os.makedirs(directory, exist_ok=True)
    variants = {"empty": [], "remote-1": [KINDS["remote"]]}
    variants.update(("%s-%d" % (kind, TASKS), [task] * TASKS) for kind, task in KINDS.items())
    paths = {}
    for name, tasks in variants.items():
        lines = ["---", "- name: Unit cost, %s" % name, "  hosts: torch_nodes", "  gather_facts: false", "  become: false"]
        if tasks:
            lines.append("  tasks:")
            for index, task in enumerate(tasks):
                lines += ["    - name: Task %d" % index, "      " + task]
        else:
            lines.append("  tasks: []")
        paths[name] = os.path.join(directory, name + ".yml")
        with open(paths[name], "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
    return paths


def unit_costs(samples, nodes):
    """Costs in CPU seconds from the variants' medians ({variant: {"cpu", "node_cpu", ...}}, as bench.alternate gives)."""
    empty = samples["empty"]["cpu"]
    per_task = nodes * TASKS

    def controller(kind):
        return (samples["%s-%d" % (kind, TASKS)]["cpu"] - empty) / per_task

    remote_ctl = (samples["remote-%d" % TASKS]["cpu"] - samples["remote-1"]["cpu"]) / (nodes * (TASKS - 1))
    remote_node = (samples["remote-%d" % TASKS]["node_cpu"] - samples["remote-1"]["node_cpu"]) / (nodes * (TASKS - 1))
    first = (samples["remote-1"]["cpu"] - empty + samples["remote-1"]["node_cpu"]) / nodes
    return {"startup": empty, "set_fact": controller("set_fact"), "skipped": controller("skipped"),
            "remote_controller": remote_ctl, "remote_node": remote_node,
            "connection": first - remote_ctl - remote_node, "nodes": nodes, "tasks": TASKS}


def profile_cost(costs, hosts):
    """The least CPU (controller + nodes) a run with these per-host task counts needs."""
    total = costs["startup"]
    for counts in hosts.values():
        total += counts.get("remote", 0) * (costs["remote_controller"] + costs["remote_node"])
        total += (counts.get("controller", 0) + counts.get("delegated_local", 0)) * costs["set_fact"]
        total += counts.get("skipped", 0) * costs["skipped"]
        total += costs["connection"] if counts.get("remote", 0) else 0.0
    return total
