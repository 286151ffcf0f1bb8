# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A role's state is described once: the list its converged check (state_check) compares is the
list its writing tasks write. Each case renders the role's own list with Ansible's templar (every
kind of entry present) and runs the writing tasks' loops over it: every entry must be written by
exactly one task, and a task may take nothing but the entry's own values."""

from __future__ import annotations

import os
import re

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.torchfleet.cluster.tests.unit.roles.role_templar import load_plugins

ROLES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles")
# What a writing task may set without taking it from the entry: how the module writes, not what.
HOW = {"state", "unsafe_writes", "validate", "insertafter", "sysctl_set", "reload", "create"}
# Entries the check only observes: a kernel value that a written setting puts in place.
OBSERVED = ("words",)
LAUNCH = {
    "inventory_hostname": "node1",
    "cluster_facts": {"master": "node0", "ranks": ["node0", "node1"], "node_rank": 1, "interface": "eth0",
                      "user": "trainer", "ports": {"rpc": 29500, "ddp": 12355, "rendezvous": 29400},
                      "addresses": {"node0": "10.0.0.1", "node1": "10.0.0.2"}, "master_address": "10.0.0.1"},
    "_launch_master_address": "10.0.0.1",
    "_launch_prefix": "/opt/miniconda3/envs/train",
    "_launch_nproc": 2,
    "hostvars": {"node0": {"_launch_nproc": 2}, "node1": {"_launch_nproc": 2}},
    "launch_manage_etc_hosts": True,
}
SSH_MESH = {
    "inventory_hostname": "node1",
    "ansible_facts": {"os_family": "Debian", "service_mgr": "systemd"},
    "_ssh_mesh_members": ["node0", "node1"],
    "_ssh_mesh_reports": {"names": {"node0": ["node0", "10.0.0.1"], "node1": ["node1", "10.0.0.2"]},
                          "host_keys": {"node0": [{"type": "ssh-ed25519", "key": "AAAA0"}],
                                        "node1": [{"type": "ssh-ed25519", "key": "AAAA1"}]}},
}
FIREWALL = {
    "inventory_hostname": "node1",
    "ansible_facts": {"service_mgr": "systemd"},
    "_firewall_member_table": {"node0": ["10.0.0.1"], "node1": ["10.0.0.2"]},
    "_firewall_ssh_ports": [22],
    "_firewall_admin": ["10.0.0.100"],
    "_firewall_peer_range": [40000, 59999],
}


@pytest.fixture(autouse=True, scope="module")
def plugins():
    load_plugins()


def load(role, *parts):
    return DataLoader().load_from_file(os.path.join(ROLES, role, *parts), trusted_as_template=True)


def tasks_of(entries):
    for entry in entries:
        if "block" in entry and isinstance(entry["block"], list):
            yield from tasks_of(entry["block"])
        else:
            yield entry


def module_args(task):
    (name,) = [key for key in task if key.count(".") == 2]
    return name, task[name]


def wanted(role, variable, variables):
    loader = DataLoader()
    scope = dict(load(role, "defaults", "main.yml"))
    scope.update(load(role, "vars", "main.yml"))
    scope.update(variables)
    scope["ansible_search_path"] = [os.path.join(ROLES, role)]
    return loader, scope, Templar(loader=loader, variables=scope).template(trust_as_template("{{ %s }}" % variable))


def writing_tasks(role, files, variable):
    """The tasks of those files (blocks included) that loop over the role's list or a selection of it
    (a variable of vars/main.yml defined from it)."""
    selections = [name for name, value in load(role, "vars", "main.yml").items()
                  if name != variable and variable in str(value)]
    for tasks_file in files:
        for task in tasks_of(load(role, "tasks", tasks_file)):
            if any(name in str(task.get("loop", "")) for name in [variable] + selections):
                yield task


def checked_files(role, args):
    """What the check's files argument names, through the role's check arguments where it takes them from there."""
    through = re.fullmatch(r"\{\{ (_\w+_check)\.files \}\}", args["files"])
    return load(role, "vars", "main.yml")[through.group(1)]["files"] if through else args["files"]


@pytest.mark.parametrize("role, check, module", [
    ("miniconda", "_miniconda_check", "torchfleet.cluster.miniconda_probe"),
    ("ssh_mesh", "_ssh_mesh_check", "torchfleet.cluster.state_check"),
    ("firewall", "_firewall_check", "torchfleet.cluster.state_check"),
])
def test_the_plan_and_the_roles_own_check_ask_the_same(role, check, module):
    """The arguments the role hands to the plan step are the ones its own check passes, key for key."""
    handed = [task["vars"]["cluster_checks"] for task in tasks_of(load(role, "tasks", "prepare.yml"))
              if task.get("ansible.builtin.import_role", {}).get("tasks_from") == "hand_over"]
    assert handed == [{role: {"module": module.split(".")[-1], "params": "{{ %s }}" % check}}]
    own = [module_args(task)[1] for task in tasks_of(load(role, "tasks", "converge.yml") + converged_tasks(role))
           if module in task]
    assert len(own) == 1
    assert own[0] == {key: "{{ %s.%s }}" % (check, key) for key in load(role, "vars", "main.yml")[check]}


def test_launch_reads_the_rdma_ports_as_the_plan_asked():
    """The RDMA reading handed to the plan, the one launch asks where there is no answer, and the guard that
    takes the plan's answer only when it was asked the same, all use one description."""
    handed = [task["vars"]["cluster_checks"] for task in tasks_of(load("launch", "tasks", "prepare.yml"))
              if task.get("ansible.builtin.import_role", {}).get("tasks_from") == "hand_over"]
    assert handed == [{"launch_rdma": {"module": "rdma_ports", "params": "{{ _launch_rdma_check }}"}}]
    own = [task for task in tasks_of(load("launch", "tasks", "common.yml")) if "torchfleet.cluster.rdma_ports" in task]
    assert [task["torchfleet.cluster.rdma_ports"] for task in own] == [
        {key: "{{ _launch_rdma_check.%s }}" % key for key in load("launch", "vars", "main.yml")["_launch_rdma_check"]}]
    assert "launch_rdma.params | default(none) == _launch_rdma_check" in load("launch", "vars", "main.yml")["_launch_rdma_planned"]


def converged_tasks(role):
    """The tasks of the file converge.yml imports first (the converged check), where it imports one."""
    first = load(role, "tasks", "converge.yml")[0]
    imported = first.get("ansible.builtin.import_tasks")
    return load(role, "tasks", imported) if imported else []


@pytest.mark.parametrize("role, variable, check_file, write_files, variables, kinds", [
    ("launch", "_launch_wanted_files", "setup.yml", ["settings.yml"], LAUNCH, {"state", "content", "block"}),
    ("ssh_mesh", "_ssh_mesh_wanted_files", "converged.yml", ["trust.yml", "sshd.yml"], SSH_MESH, {"block", "content"}),
    ("firewall", "_firewall_wanted_files", "converged.yml", ["nftables.yml", "port_range.yml"], FIREWALL,
     {"state", "content", "words", "setting", "line"}),
])
def test_the_writing_tasks_write_exactly_what_the_check_compares(role, variable, check_file, write_files, variables, kinds):
    checks = [module_args(task) for task in tasks_of(load(role, "tasks", check_file))
              if "torchfleet.cluster.state_check" in task]
    assert [checked_files(role, args) for dummy, args in checks] == ["{{ %s }}" % variable]

    loader, scope, entries = wanted(role, variable, variables)
    assert {next(key for key in ("state", "content", "block", "words", "setting", "line") if key in entry)
            for entry in entries} == kinds, "the case must render every kind of entry"

    written = []
    for task in writing_tasks(role, write_files, variable):
        name, args = module_args(task)
        selected = Templar(loader=loader, variables=scope).template(task["loop"])
        for key, value in args.items():
            if key not in HOW:
                assert re.fullmatch(r"\{\{ item\.\w+ \}\}", str(value)), "%s: %s takes %r" % (task["name"], key, value)
                assert all(str(value)[8:-3] in entry for entry in selected), "%s: %s" % (task["name"], key)
        written.extend(entry["path"] for entry in selected)
    expected = [entry["path"] for entry in entries if not any(key in entry for key in OBSERVED)]
    assert sorted(written) == sorted(expected)
    assert all(entry["path"].startswith("/proc/sys/") for entry in entries if any(key in entry for key in OBSERVED))
