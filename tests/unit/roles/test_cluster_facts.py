# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/cluster: the one place that reads the shared inventory variables. Each case evaluates the
role's own tasks (its set_fact values and its checks) with Ansible's templar over its defaults and
vars, an inventory, and a caller's explicit inputs."""

from __future__ import annotations

import os

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.torchfleet.cluster.tests.unit.roles.role_templar import load_plugins

ROLES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles")
TASKS = DataLoader().load_from_file(os.path.join(ROLES, "cluster", "tasks", "facts.yml"), trusted_as_template=True)
FACTS = {"interfaces": ["lo", "eth0"], "default_ipv4": {"interface": "eth0", "address": "10.89.0.2"}}
INVENTORY = {"inventory_hostname": "node1", "groups": {"torch_nodes": ["node0", "node1", "node2"]},
             "ansible_play_hosts": ["node0", "node1", "node2"], "ansible_facts": FACTS}


@pytest.fixture(autouse=True, scope="module")
def plugins():
    load_plugins()


@pytest.fixture
def spec(tmp_path):
    def write(name="train", file_name="environment.yml"):
        path = tmp_path / file_name
        path.write_text("name: %s\ndependencies: [python=3.11]\n" % name)
        return str(path)
    return write


def task(name):
    return next(entry for entry in TASKS if entry["name"] == name)


def scope(variables):
    loader = DataLoader()
    merged = dict(loader.load_from_file(os.path.join(ROLES, "cluster", "defaults", "main.yml"), trusted_as_template=True))
    merged.update(loader.load_from_file(os.path.join(ROLES, "cluster", "vars", "main.yml"), trusted_as_template=True))
    merged.update(INVENTORY)
    merged.update(variables)
    return loader, merged


SHARED = "Work out the facts every member shares (with each member's address where the caller needs them)"
RECORD = "Record the shared facts with this member's rank and training interface"
CHECK = "Check the members, the master, the spec and lock files and the environment's name"


def facts(**variables):
    """cluster_facts as the role sets it on this host (without addresses: no caller here needs them)."""
    loader, merged = scope(variables)
    shared = task(SHARED)
    merged.update(shared["vars"])
    merged["_cluster_shared"] = Templar(loader=loader, variables=merged).template(shared["ansible.builtin.set_fact"]["_cluster_shared"])
    record = task(RECORD)
    return Templar(loader=loader, variables=merged).template(record["ansible.builtin.set_fact"]["cluster_facts"])


def passes(**variables):
    """Whether the role's check passes."""
    loader, merged = scope(variables)
    check = task(CHECK)
    merged.update(check.get("vars", {}))
    templar = Templar(loader=loader, variables=merged)
    # Ansible takes only booleans as conditionals, and stops at the first false one.
    for rule in check["ansible.builtin.assert"]["that"]:
        result = templar.template(trust_as_template("{{ %s }}" % rule))
        assert isinstance(result, bool), (rule, result)
        if not result:
            return False
    return True


def test_an_empty_inventory_gets_the_owning_roles_defaults():
    got = facts()
    assert got["members"] == ["node0", "node1", "node2"]
    assert got["master"] == "node0"
    assert got["ranks"] == ["node0", "node1", "node2"]
    assert got["node_rank"] == 1
    assert got["ports"] == {"rpc": 29500, "ddp": 12355, "rendezvous": 29400}
    assert got["user"] == "trainer"
    assert got["conda_prefix"] == "/opt/miniconda3"
    assert (got["spec_file"], got["env_name"], got["env_prefix"], got["python"]) == ("", "", "", "")
    assert got["interface"] == "eth0"


def test_the_shared_inventory_variables_reach_every_fact(spec):
    got = facts(torch_master="node2", miniconda_prefix="/srv/conda", conda_env_file=spec("ml"),
                firewall_rendezvous_ports=[1001, 1002, 1003], ssh_mesh_user="alice", conda_env_lock_file="/l.lock",
                firewall_training_interface="ib0")
    assert got["ranks"] == ["node2", "node0", "node1"]
    assert got["node_rank"] == 2
    assert got["ports"] == {"rpc": 1001, "ddp": 1002, "rendezvous": 1003}
    assert got["user"] == "alice"
    assert got["lock_file"] == "/l.lock"
    assert got["env_prefix"] == "/srv/conda/envs/ml"
    assert got["python"] == "/srv/conda/envs/ml/bin/python"
    assert got["interface"] == "ib0"


def test_the_first_listed_environment_is_the_training_one(spec):
    first, second = spec("first", "a.yml"), spec("second", "b.yml")
    got = facts(conda_env_list=[{"file": first}, {"file": second}])
    assert (got["spec_file"], got["env_name"]) == (first, "first")


def test_the_callers_inputs_win_over_the_shared_variables(spec):
    got = facts(conda_env_file=spec("shared", "shared.yml"), miniconda_prefix="/srv/conda",
                cluster_spec_file=spec("mine", "mine.yml"), cluster_conda_prefix="/opt/other")
    assert got["python"] == "/opt/other/envs/mine/bin/python"
    assert facts(conda_env_file=spec("shared"), cluster_env_name="named")["env_name"] == "named"


def test_an_empty_training_interface_lets_the_backends_choose():
    assert facts(firewall_training_interface="")["interface"] == ""
    assert facts(ansible_facts={})["interface"] == ""


def test_a_short_port_list_leaves_the_missing_ports_unset():
    assert facts(firewall_rendezvous_ports=[29500, 12355])["ports"]["rendezvous"] is None


CHECKS = [
    # id, variables, whether the first check passes
    ("nothing asked", {}, True),
    ("a job, everyone here", {"cluster_require_every_member": True}, True),
    ("a job, a member missing", {"cluster_require_every_member": True, "ansible_play_hosts": ["node0", "node1"]}, False),
    ("no job, a member missing", {"ansible_play_hosts": ["node0", "node1"]}, True),
    ("a job on an empty group", {"cluster_require_every_member": True, "groups": {"torch_nodes": []}}, False),
    ("addresses of an empty group", {"cluster_need_addresses": True, "groups": {"torch_nodes": []}}, False),
    ("no job on an empty group", {"groups": {"torch_nodes": []}}, True),
    ("the master is not a member", {"cluster_need_addresses": True, "torch_master": "node7"}, False),
    ("a spec file that is not there", {"conda_env_file": "/nonexistent/environment.yml"}, False),
    ("a lock file that is not there", {"cluster_lock_file": "/nonexistent/conda.lock"}, False),
]


@pytest.mark.parametrize("dummy, variables, expected", CHECKS, ids=[case[0] for case in CHECKS])
def test_members_master_and_files_are_checked(dummy, variables, expected):
    assert passes(**variables) is expected


@pytest.mark.parametrize("name, expected", [("train", True), ("../../etc", False), ("a b", False), ("..", False),
                                            ("", True), ("1", True)])
def test_the_environment_name_must_be_plain(spec, name, expected):
    assert passes(conda_env_file=spec(name)) is expected


def test_the_fallbacks_are_the_owning_roles_defaults():
    loader = DataLoader()
    fallback = loader.load_from_file(os.path.join(ROLES, "cluster", "vars", "main.yml"))["_cluster_fallback"]
    documented = loader.load_from_file(os.path.join(ROLES, "cluster", "meta", "argument_specs.yml"))
    options = documented["argument_specs"]["main"]["options"]
    for variable, value in fallback.items():
        owner = variable.split("_")[0] if not variable.startswith("ssh_mesh") else "ssh_mesh"
        owned = loader.load_from_file(os.path.join(ROLES, owner, "defaults", "main.yml"))
        assert owned[variable] == value, variable
        assert options[variable]["default"] == value, variable


def test_a_spec_without_a_name_or_with_a_number_gives_a_string(spec):
    assert facts(conda_env_file=spec(""))["env_name"] == ""
    assert facts(conda_env_file=spec("7", "seven.yml"))["python"] == "/opt/miniconda3/envs/7/bin/python"
