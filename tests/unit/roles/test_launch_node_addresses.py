# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/launch: the /etc/hosts block and the hostfile name each node at the address common.yml
judged (torch_node_address, else the default IPv4 address the node reports), in the format they
have always had; an address a node's root made up stops the run instead of adding entries."""

from __future__ import annotations

import os

import pytest

from ansible.errors import AnsibleFilterError
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.torchfleet.cluster.plugins.filter import node_report
from ansible_collections.torchfleet.cluster.tests.unit.roles.role_templar import load_plugins

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "launch")


@pytest.fixture(autouse=True, scope="module")
def plugins():
    load_plugins()


def cluster(**node1_vars):
    hostvars = {
        "node0": {"ansible_facts": {"default_ipv4": {"address": "10.89.0.10"}}, "_launch_nproc": 2},
        "node1": {"ansible_facts": {"default_ipv4": {"address": "10.89.0.11"}}, "_launch_nproc": 2},
        "node2": {"torch_node_address": "fd42::12", "ansible_facts": {"default_ipv4": {"address": "10.89.0.12"}}, "_launch_nproc": 1},
    }
    hostvars["node1"].update(node1_vars)
    return hostvars


def variables(hostvars, **extra):
    loader = DataLoader()
    role_vars = loader.load_from_file(os.path.join(ROLE, "vars", "main.yml"), trusted_as_template=True)
    ranks = list(hostvars)
    return loader, dict(role_vars, hostvars=hostvars, _launch_ranks=ranks,
                        _launch_addresses=node_report.node_addresses(ranks, hostvars), **extra)


def render(loader, template_vars, source):
    return Templar(loader=loader, variables=template_vars).template(trust_as_template(source))


def test_etc_hosts_block_is_written_as_before():
    loader, template_vars = variables(cluster())
    assert render(loader, template_vars, "{{ _launch_etc_hosts_block }}") == (
        "10.89.0.10 node0\n10.89.0.11 node1\nfd42::12 node2\n")


@pytest.mark.parametrize("names, lines", [
    ("inventory", ["node0 slots=2", "node1 slots=2", "node2 slots=1"]),
    ("address", ["10.89.0.10 slots=2", "10.89.0.11 slots=2", "fd42::12 slots=1"]),
])
def test_hostfile_is_written_as_before(names, lines):
    loader, template_vars = variables(cluster(), launch_hostfile_names=names)
    with open(os.path.join(ROLE, "templates", "hostfile.j2"), encoding="utf-8") as handle:
        hostfile = render(loader, template_vars, handle.read())
    assert hostfile.splitlines()[1:] == lines


@pytest.mark.parametrize("node1_vars, refusal", [
    ({"ansible_facts": {"default_ipv4": {"address": "10.89.0.11\n10.89.0.11 node0"}}},
     "node1: ansible_facts.default_ipv4.address '10.89.0.11\\n10.89.0.11 node0' refused"),
    ({"ansible_facts": {"default_ipv4": {"address": "10.89.0.11 node0"}}},
     "node1: ansible_facts.default_ipv4.address '10.89.0.11 node0' refused"),
    ({"torch_node_address": "node0 slots=64"}, "node1: torch_node_address 'node0 slots=64' refused"),
])
def test_a_made_up_address_stops_the_run(node1_vars, refusal):
    with pytest.raises(AnsibleFilterError, match="^" + refusal.replace("\\", "\\\\")):
        variables(cluster(**node1_vars))
