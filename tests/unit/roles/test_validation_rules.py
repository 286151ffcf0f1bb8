# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles' one-assert-per-stage checks: each broken rule, and only that one, gives its message.

Each case evaluates the task's own rule list (its `vars`) with Ansible's templar over the role's
defaults and vars, the case's variables, and the facts of a Debian node."""

from __future__ import annotations

import os

import pytest

from ansible.errors import AnsibleError
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.torchfleet.cluster.tests.unit.roles.role_templar import load_plugins

ROLES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles")

DEBIAN = {"distribution": "Debian", "os_family": "Debian", "machine_id": "not-the-controller",
          "interfaces": ["lo", "eth0"], "default_ipv4": {"interface": "eth0", "address": "10.89.0.2"}}
NODE = {"inventory_hostname": "node0", "groups": {"torch_nodes": ["node0", "node1"]}, "ansible_facts": DEBIAN,
        "ansible_connection": "ssh", "cluster_facts": {"interface": "eth0"}}


@pytest.fixture(autouse=True, scope="module")
def plugins():
    load_plugins()


def _find(entries, name):
    for entry in entries:
        if entry.get("name") == name:
            return entry
        found = _find(entry.get("block", []) + entry.get("rescue", []) + entry.get("always", []), name)
        if found is not None:
            return found
    return None


def task(role, tasks_file, name):
    """The task named ``name`` in the file, inside blocks too."""
    found = _find(DataLoader().load_from_file(os.path.join(ROLES, role, "tasks", tasks_file), trusted_as_template=True), name)
    if found is None:
        raise AssertionError("%s/tasks/%s has no task %r" % (role, tasks_file, name))
    return found


def broken(role, tasks_file, name, variables):
    """The messages of the rules the task finds broken for these variables."""
    loader = DataLoader()
    scope = dict(loader.load_from_file(os.path.join(ROLES, role, "defaults", "main.yml"), trusted_as_template=True))
    scope.update(loader.load_from_file(os.path.join(ROLES, role, "vars", "main.yml"), trusted_as_template=True))
    scope.update(task(role, tasks_file, name)["vars"])
    scope.update(NODE)
    scope.update(variables)
    rules = Templar(loader=loader, variables=scope).template(trust_as_template("{{ __broken }}"))
    return [" ".join(rule["msg"].split()) for rule in rules]


def check(messages, expected):
    """One message per expected part, in order, each containing its part."""
    assert len(messages) == len(expected), messages
    for message, part in zip(messages, expected):
        assert part in message, messages


FIREWALL_PREFLIGHT = [
    # id, variables, a part of each message expected, in order
    ("defaults", {}, []),
    ("not a member", {"inventory_hostname": "node7"}, ["the host is not in group 'torch_nodes'"]),
    ("the controller", {"ansible_connection": "local"}, ["it is the machine Ansible runs on"]),
    ("the controller, connection by its full name", {"ansible_connection": "ansible.builtin.local"},
     ["it is the machine Ansible runs on"]),
    ("controller allowed", {"ansible_connection": "local", "firewall_allow_controller": True}, []),
    ("unknown system", {"ansible_facts": dict(DEBIAN, distribution="Alpine", os_family="Alpine")},
     ["no backend is known for Alpine"]),
    ("backend named", {"ansible_facts": dict(DEBIAN, distribution="Alpine", os_family="Alpine"),
                       "firewall_backend": "nftables"}, []),
    ("duplicate port", {"firewall_rendezvous_ports": [29500, 29500]}, ["firewall_rendezvous_ports must be distinct"]),
    ("privileged range", {"firewall_peer_port_range": "100 200"}, ["firewall_peer_port_range \"LOW HIGH\""]),
    ("bad open port", {"firewall_open_ports": [{"port": "80-x"}, {"port": 9100, "proto": "tcp"}]}, ["these do not fit: [\"80-x\"]"]),
    ("open port range", {"firewall_open_ports": [{"port": "8000-8100", "proto": "udp", "sources": ["10.0.0.0/8"]}]}, []),
]


@pytest.mark.parametrize("dummy, variables, expected", FIREWALL_PREFLIGHT, ids=[case[0] for case in FIREWALL_PREFLIGHT])
def test_firewall_preflight(dummy, variables, expected):
    check(broken("firewall", "preflight.yml", "Check the target, the backend and the inputs", variables), expected)


def test_firewall_preflight_names_a_bad_network():
    with pytest.raises(AnsibleError, match="firewall_admin_cidrs entry '10.0.0.0/33'"):
        broken("firewall", "preflight.yml", "Check the target, the backend and the inputs",
               {"firewall_admin_cidrs": ["10.0.0.0/33"]})


AFTER_RULES = {"_firewall_ssh_ports": [22], "_firewall_peer_range": [40000, 59999]}
FIREWALL_POSTFLIGHT = [
    ("defaults", {}, []),
    ("port in the range", {"firewall_rendezvous_ports": [29500, 45000]}, ["port(s) 45000 lie inside the peer-link range 40000-59999"]),
    ("ssh port in the range", {"_firewall_ssh_ports": [22, 50022]}, ["port(s) 50022 lie inside"]),
    ("no such interface", {"firewall_training_interface": "ib0"}, ["training interface \"ib0\" is not a Linux interface name"]),
    ("not an interface name", {"firewall_training_interface": "eth0;reboot"}, ["training interface \"eth0;reboot\""]),
    ("no interface chosen", {"firewall_training_interface": ""}, []),
    ("both", {"firewall_rendezvous_ports": [41000], "firewall_training_interface": "ib0"}, ["port(s) 41000", "training interface"]),
]


@pytest.mark.parametrize("dummy, variables, expected", FIREWALL_POSTFLIGHT, ids=[case[0] for case in FIREWALL_POSTFLIGHT])
def test_firewall_postflight(dummy, variables, expected):
    name = "Check that the cluster ports lie outside the peer-link range and that the training interface exists"
    check(broken("firewall", "postflight.yml", name, dict(AFTER_RULES, **variables)), expected)


CONNECTED = {"_firewall_connection": ["10.89.0.1", "40000", "10.89.0.2", "22"], "_firewall_ssh_ports": [22],
             "_firewall_admin": ["10.89.0.1"], "_firewall_member_table": {"node0": ["10.89.0.2"], "node1": ["10.89.0.3"]}}
FIREWALL_LOCKOUT = [
    ("admitted", {}, []),
    ("member without an address", {"_firewall_member_table": {"node0": ["10.89.0.2"], "node1": []}},
     ["no usable address for node1"]),
    ("controller not admitted", {"_firewall_admin": []}, ["would cut this run's own SSH connection (from 10.89.0.1 to port 22)"]),
    ("controller is a member", {"_firewall_admin": [], "_firewall_connection": ["10.89.0.3", "40000", "10.89.0.2", "22"]}, []),
    ("no SSH_CONNECTION", {"_firewall_connection": []}, ["SSH_CONNECTION is not set"]),
    ("local connection", {"_firewall_connection": [], "ansible_connection": "local"}, []),
]


@pytest.mark.parametrize("dummy, variables, expected", FIREWALL_LOCKOUT, ids=[case[0] for case in FIREWALL_LOCKOUT])
def test_firewall_lockout(dummy, variables, expected):
    name = "Refuse a member without an address, or a ruleset that would cut the connection Ansible uses"
    check(broken("firewall", "lockout.yml", name, dict(CONNECTED, **variables)), expected)


MINICONDA_VALIDATE = [
    ("defaults", {}, []),
    ("root prefix", {"miniconda_prefix": "/"}, ["miniconda_prefix must be an absolute path other than / (got \"/\")"]),
    ("short checksum", {"miniconda_installer_checksum": "sha256:abc"}, ["miniconda_installer_checksum must be empty"]),
    ("no channel", {"miniconda_channels": []}, ["miniconda_channels must be a non-empty list"]),
    ("conda_init without users", {"miniconda_shell_integration": "conda_init"}, ["conda_init needs miniconda_init_users"]),
    ("Anaconda's channels", {"miniconda_channels": ["defaults"]}, ["Set miniconda_accept_tos: true"]),
    ("terms accepted", {"miniconda_channels": ["defaults"], "miniconda_accept_tos": True}, []),
    ("readable credentials", {"miniconda_condarc_extra": {"proxy_servers": {"https": "http://user:secret@proxy:3128"}}},
     ["miniconda_condarc_extra carries credentials"]),
    ("credentials kept private", {"miniconda_condarc_extra": {"proxy_servers": {"https": "http://user:secret@proxy:3128"}},
                                  "miniconda_condarc_mode": "0640"}, []),
]


@pytest.mark.parametrize("dummy, variables, expected", MINICONDA_VALIDATE, ids=[case[0] for case in MINICONDA_VALIDATE])
def test_miniconda_validate(dummy, variables, expected):
    check(broken("miniconda", "validate.yml", "Check the variables before touching any node", variables), expected)


SSH_MESH_PREFLIGHT = [
    ("member", {}, []),
    ("not a member", {"inventory_hostname": "node7"}, ["node7 must be a member of group 'torch_nodes'"]),
    ("the controller", {"inventory_hostname": "localhost", "groups": {"torch_nodes": ["localhost"]}},
     ["localhost is the machine Ansible runs on"]),
    ("the controller, connection by its full name", {"ansible_connection": "ansible.builtin.local"},
     ["node0 is the machine Ansible runs on"]),
]


@pytest.mark.parametrize("dummy, variables, expected", SSH_MESH_PREFLIGHT, ids=[case[0] for case in SSH_MESH_PREFLIGHT])
def test_ssh_mesh_preflight(dummy, variables, expected):
    name = "Check that this host belongs to the mesh group and is not the control host"
    check(broken("ssh_mesh", "preflight.yml", name, variables), expected)


LAUNCH_NODE = [
    ("defaults", {"_launch_nproc": 4}, []),
    ("no processes", {"_launch_nproc": 0, "launch_nproc_per_node": 0}, ["launch_nproc_per_node must be auto or a positive number, got 0"]),
    ("interface", {"_launch_nproc": 1, "launch_socket_ifname": "eth0"}, []),
    ("no such interface", {"_launch_nproc": 1, "launch_socket_ifname": "ib0"},
     ["training interface \"ib0\" (launch_socket_ifname) is not a Linux interface name or does not exist (interfaces: lo, eth0)"]),
    ("not an interface name", {"_launch_nproc": 1, "launch_socket_ifname": "eth0 lo",
                               "ansible_facts": dict(DEBIAN, interfaces=["eth0 lo"])}, ["training interface \"eth0 lo\""]),
    ("interfaces not gathered", {"_launch_nproc": 1, "launch_socket_ifname": "ib0", "ansible_facts": {}}, []),
    ("both", {"_launch_nproc": 0, "launch_socket_ifname": "ib0"}, ["launch_nproc_per_node", "training interface"]),
    ("rdma ports read", {"_launch_nproc": 1, "_launch_rdma_read": {"nccl_ib_hca": "=mlx5_0:1,mlx5_1:1", "nccl_ib_gid_index": 3}}, []),
    ("a node's hostile reading", {"_launch_nproc": 1,
                                  "_launch_rdma_read": {"nccl_ib_hca": "=mlx5_0:1\nLD_PRELOAD=/tmp/x.so", "nccl_ib_gid_index": "3; id"}},
     ['NCCL_IB_HCA "=mlx5_0:1\\nLD_PRELOAD=/tmp/x.so" (read from /sys/class/infiniband) is not a list of RDMA devices',
      'NCCL_IB_GID_INDEX "3; id" (read from /sys/class/infiniband) is not a GID index']),
    ("override", {"_launch_nproc": 1, "launch_nccl_ib_hca": "mlx5_0 mlx5_1"},
     ['NCCL_IB_HCA "mlx5_0 mlx5_1" (launch_nccl_ib_hca) is not a list of RDMA devices']),
]


@pytest.mark.parametrize("dummy, variables, expected", LAUNCH_NODE, ids=[case[0] for case in LAUNCH_NODE])
def test_launch_node(dummy, variables, expected):
    check(broken("launch", "common.yml", "Check the processes per node, the training interface and the NCCL_IB_* settings",
                 variables), expected)


BUNDLE_AGE = [
    ("default", {}, True),
    ("zero keeps every bundle", {"conda_env_pip_bundle_max_age_hours": 0}, True),
    ("a week", {"conda_env_pip_bundle_max_age_hours": 168}, True),
    ("negative", {"conda_env_pip_bundle_max_age_hours": -1}, False),
]


@pytest.mark.parametrize("dummy, variables, expected", BUNDLE_AGE, ids=[case[0] for case in BUNDLE_AGE])
def test_conda_env_bundle_age(dummy, variables, expected):
    loader = DataLoader()
    scope = dict(loader.load_from_file(os.path.join(ROLES, "conda_env", "defaults", "main.yml"), trusted_as_template=True))
    scope.update(NODE)
    scope.update(variables)
    age_check = task("conda_env", "fanout.yml", "Check conda_env_pip_bundle_max_age_hours before anything is downloaded")
    that = age_check["ansible.builtin.assert"]["that"]
    assert Templar(loader=loader, variables=scope).template(trust_as_template("{{ %s }}" % that)) is expected
