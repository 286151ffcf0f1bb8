# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node_report filters: what ssh_mesh and launch let through from each member's report, the
warning for every name left out and the failure for an address that is not one."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.torchfleet.cluster.plugins.filter import node_report as node_report_filter
from ansible_collections.torchfleet.cluster.plugins.filter.node_report import FilterModule

FILTERS = FilterModule().filters()

ED25519 = "AAAAC3NzaC1lZDI1NTE5AAAAIPJCmLuvS6zCGhJ7mvs4Rcm8WKheGywN5iWOUf8XE0/+"
KEY_FACTS = ["ssh_host_key_ed25519_public", "ssh_host_key_ecdsa_public", "ssh_host_key_rsa_public"]


class HostVars(Mapping):
    """Read-only like Ansible's hostvars (a Mapping, not a dict)."""

    def __init__(self, data):
        self._data = data

    def __getitem__(self, key):
        value = self._data[key]
        return HostVars(value) if isinstance(value, dict) else value

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)


def facts(name, address, fqdn=None, key=ED25519, keytype="ssh-ed25519"):
    return {"hostname": name, "fqdn": fqdn or name + ".cluster.example", "default_ipv4": {"address": address},
            "ssh_host_key_ed25519_public": key, "ssh_host_key_ed25519_public_keytype": keytype}


@pytest.fixture(name="warnings")
def fixture_warnings(monkeypatch):
    shown = []
    monkeypatch.setattr(node_report_filter.display, "warning", shown.append)
    return shown


# (node1's facts, the names of node1, the warnings, the refusals for node1)
MESH_CASES = [
    (facts("node1", "10.0.0.11"), ["node1", "node1.cluster.example", "10.0.0.11"], [], []),
    (facts("node1", "10.0.0.11", fqdn="*"), ["node1", "10.0.0.11"],
     ["node1: ansible_facts.fqdn '*' left out of the names other nodes know it by: not an RFC 1123 host name "
      "(ASCII letters, digits and inner '-' in dot-separated labels)"], []),
    (facts("node0,*", "[10.0.0.1]:22"), ["node1"],
     ["node1: ansible_facts.hostname 'node0,*' left out of the names other nodes know it by: not an RFC 1123 host name "
      "(ASCII letters, digits and inner '-' in dot-separated labels)",
      "node1: ansible_facts.fqdn 'node0,*.cluster.example' left out of the names other nodes know it by: "
      "not an RFC 1123 host name (ASCII letters, digits and inner '-' in dot-separated labels)",
      "node1: ansible_facts.default_ipv4.address '[10.0.0.1]:22' left out of the names other nodes know it by: "
      "not an IPv4 or IPv6 address"], []),
    (facts("node1", "10.0.0.11", key=ED25519[:-4]), ["node1", "node1.cluster.example", "10.0.0.11"], [],
     ["node1: ansible_facts.ssh_host_key_ed25519_public ('ssh-ed25519') refused: the key data ends inside a field"]),
]


@pytest.mark.parametrize("node1_facts, names, warned, refused", MESH_CASES)
def test_ssh_host_reports(warnings, node1_facts, names, warned, refused):
    hostvars = HostVars({"node0": {"ansible_facts": facts("node0", "10.0.0.10")}, "node1": {"ansible_facts": node1_facts}})
    reports = FILTERS["ssh_host_reports"](["node0", "node1"], hostvars, KEY_FACTS)
    assert reports["names"] == {"node0": ["node0", "node0.cluster.example", "10.0.0.10"], "node1": names}
    assert reports["refused"] == {"node0": [], "node1": refused}
    assert reports["host_keys"]["node0"] == [{"type": "ssh-ed25519", "key": ED25519}]
    assert reports["host_keys"]["node1"] == ([] if refused else [{"type": "ssh-ed25519", "key": ED25519}])
    assert warnings == warned


# (hostvars of the nodes, the addresses, or the failure)
ADDRESS_CASES = [
    ({"node0": {"ansible_facts": facts("node0", "10.0.0.10")}, "node1": {"torch_node_address": "10.10.0.11"}},
     {"node0": "10.0.0.10", "node1": "10.10.0.11"}),
    ({"node0": {"ansible_facts": facts("node0", "fd42::10")}, "node1": {"ansible_facts": {}}}, {"node0": "fd42::10"}),
    ({"node0": {"ansible_facts": facts("node0", "10.0.0.10")}, "node1": {"ansible_facts": facts("node1", "10.0.0.11\n10.0.0.11 node0")}},
     "node1: ansible_facts.default_ipv4.address '10.0.0.11\\n10.0.0.11 node0' refused: not an IPv4 or IPv6 address"),
    ({"node0": {"torch_node_address": "*"}, "node1": {"ansible_facts": facts("node1", "10.0.0.11")}},
     "node0: torch_node_address '*' refused: neither an IP address nor an RFC 1123 host name"),
]


@pytest.mark.parametrize("hostvars, expected", ADDRESS_CASES)
def test_node_addresses(hostvars, expected):
    if isinstance(expected, dict):
        assert FILTERS["node_addresses"](["node0", "node1"], HostVars(hostvars)) == expected
    else:
        with pytest.raises(AnsibleFilterError) as failure:
            FILTERS["node_addresses"](["node0", "node1"], HostVars(hostvars))
        assert str(failure.value) == expected
