# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The firewall's address filters judge entries with the ipaddress module, not a regex."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.torchfleet.cluster.plugins.filter.addresses import FilterModule

FILTERS = FilterModule().filters()

IP_NETWORKS_OK = [
    (["10.0.0.1"], ["10.0.0.1"]),
    (["10.0.0.1/32", "10.0.0.7/24"], ["10.0.0.1", "10.0.0.0/24"]),
    (["fd42::2", "FD42::2/128", "fd42::/64"], ["fd42::2", "fd42::/64"]),
    ("192.168.1.0/24", ["192.168.1.0/24"]),
    ([], []),
]

IP_NETWORKS_BAD = [
    ["999.999.999.999/99"],   # passed the old regex
    [":"],                     # passed the old regex
    ["10.0.0.1/33"],
    ["fd42::/129"],
    ["node0"],
    [""],
    [None],
]


@pytest.mark.parametrize("entries,expected", IP_NETWORKS_OK)
def test_ip_networks_normalises(entries, expected):
    assert FILTERS["ip_networks"](entries, "firewall_admin_cidrs") == expected


@pytest.mark.parametrize("entries", IP_NETWORKS_BAD)
def test_ip_networks_refuses_naming_the_variable(entries):
    with pytest.raises(AnsibleFilterError, match="firewall_admin_cidrs entry"):
        FILTERS["ip_networks"](entries, "firewall_admin_cidrs")


IP_OR_NAME_OK = [
    ("10.0.0.5", {"addresses": ["10.0.0.5"], "names": []}),
    (["node0.example.internal", "fd42::5"], {"addresses": ["fd42::5"], "names": ["node0.example.internal"]}),
    (["gpu-01", "10.0.0.5", "10.0.1.5"], {"addresses": ["10.0.0.5", "10.0.1.5"], "names": ["gpu-01"]}),
]

IP_OR_NAME_BAD = ["999.999.999.999", ":", "10.0.0.0/24", "-node", "node_0", "a..b", ""]


@pytest.mark.parametrize("entries,expected", IP_OR_NAME_OK)
def test_ip_or_name_splits(entries, expected):
    assert FILTERS["ip_or_name"](entries, "torch_node_address") == expected


@pytest.mark.parametrize("entry", IP_OR_NAME_BAD)
def test_ip_or_name_refuses(entry):
    with pytest.raises(AnsibleFilterError, match="torch_node_address entry"):
        FILTERS["ip_or_name"]([entry], "torch_node_address")


USABLE = [
    # ansible_facts all_ipv4_addresses + all_ipv6_addresses of a dual-stack podman node (recorded
    # with `ansible -m setup -a gather_subset=network` on a tests/harness/cluster.sh node)
    (["10.89.1.2", "fd42:429d:950:e017::2", "fe80::cae:dfff:fe04:88ea"], ["10.89.1.2", "fd42:429d:950:e017::2"]),
    (["fd42::2", "10.0.0.2", "10.0.0.200", "10.0.0.2"], ["10.0.0.2", "10.0.0.200", "fd42::2"]),
    (["127.0.1.1", "::1", "0.0.0.0", "224.0.0.1", "fe80::1%eth0"], []),
    (["not-an-address", "10.0.0.3"], ["10.0.0.3"]),
]


@pytest.mark.parametrize("addresses,expected", USABLE)
def test_usable_addresses(addresses, expected):
    assert FILTERS["usable_addresses"](addresses) == expected


FACTS = [
    # the network facts of a node on a dual-stack podman network (ansible-core 2.19, bookworm)
    ({"all_ipv4_addresses": ["10.89.1.3"], "all_ipv6_addresses": ["fd42:429d:950:e017::3", "fe80::a8c1:abff:fe12:3456"]},
     ["10.89.1.3", "fd42:429d:950:e017::3"]),
    ({"all_ipv4_addresses": ["10.89.1.3", "127.0.0.1"]}, ["10.89.1.3"]),
    ({"hostname": "node1"}, []),
    ({}, []),
]


@pytest.mark.parametrize("facts,expected", FACTS)
def test_facts_addresses(facts, expected):
    assert FILTERS["facts_addresses"](facts) == expected


GETENT = [
    # `getent ahosts node1` on a node of a dual-stack podman network (glibc 2.36, bookworm)
    ("fd42:429d:950:e017::3 STREAM node1.dns.podman\nfd42:429d:950:e017::3 DGRAM  \n"
     "fd42:429d:950:e017::3 RAW    \n10.89.1.3       STREAM \n10.89.1.3       DGRAM  \n10.89.1.3       RAW    \n",
     ["fd42:429d:950:e017::3", "10.89.1.3"]),
    ("", []),
]


@pytest.mark.parametrize("stdout,expected", GETENT)
def test_getent_addresses(stdout, expected):
    assert FILTERS["getent_addresses"](stdout) == expected


FAMILY = [
    (["10.0.0.1", "fd42::/64", "10.1.0.0/16"], 4, ["10.0.0.1", "10.1.0.0/16"]),
    (["10.0.0.1", "fd42::/64", "10.1.0.0/16"], 6, ["fd42::/64"]),
    ([], 6, []),
]


@pytest.mark.parametrize("entries,version,expected", FAMILY)
def test_ip_family(entries, version, expected):
    assert FILTERS["ip_family"](entries, version) == expected


ADMITS = [
    (["10.89.1.1"], "10.89.1.1", True),
    (["10.89.0.0/16"], "10.89.1.1", True),
    (["10.89.1.0/24"], "10.89.2.1", False),
    (["fd42::/64"], "fd42::1", True),
    (["fd42::/64"], "10.89.1.1", False),
    (["10.0.0.0/8"], "fe80::1%eth0", False),
    ([], "10.89.1.1", False),
    (["10.0.0.0/8"], "", False),
]


@pytest.mark.parametrize("networks,address,expected", ADMITS)
def test_ip_admits(networks, address, expected):
    assert FILTERS["ip_admits"](networks, address) is expected


# `ss -Htn state established` on a dual-stack node (iproute2 6.1.0, bookworm): two connections to
# sshd from node0 (IPv4 and IPv6) and Ansible's own from the podman gateway.
SS_RECORDED = (
    "0      0                    10.89.1.3:22               10.89.1.2:40334\n"
    "0      0      [fd42:429d:950:e017::3]:22 [fd42:429d:950:e017::2]:40930\n"
    "0      68     10.89.1.3:22 10.89.1.1:54322\n"
    "0      0      10.89.1.3:29500 10.89.1.4:40001\n"
)

SS = [
    (SS_RECORDED, [22], ["10.89.1.2", "fd42:429d:950:e017::2", "10.89.1.1"]),
    (SS_RECORDED, ["29500"], ["10.89.1.4"]),
    (SS_RECORDED, [2222], []),
    ("", [22], []),
]


@pytest.mark.parametrize("stdout,ports,expected", SS)
def test_ss_peers(stdout, ports, expected):
    assert FILTERS["ss_peers"](stdout, ports) == expected


OUTSIDE = [
    (["10.89.1.2", "fd42:429d:950:e017::2", "10.89.1.1"], ["10.89.1.0/30"], ["fd42:429d:950:e017::2"]),
    (["10.89.1.2", "fd42:429d:950:e017::2"], ["10.89.1.2", "fd42:429d:950:e017::/64"], []),
    (["192.0.2.7"], [], ["192.0.2.7"]),
]


@pytest.mark.parametrize("addresses,networks,expected", OUTSIDE)
def test_ip_outside(addresses, networks, expected):
    assert FILTERS["ip_outside"](addresses, networks) == expected


HOSTVARS = {
    # in the play: what the role recorded for the host itself
    "node0": {"_firewall_self_addresses": ["10.89.1.2", "fd42::2"], "torch_node_address": "node0"},
    # outside the play (--limit), with a literal torch_node_address list
    "node1": {"torch_node_address": ["10.0.0.1", "10.0.1.1"], "ansible_facts": {"all_ipv4_addresses": ["10.89.1.3"]}},
    # outside the play, facts only (gathered by delegation)
    "node2": {"ansible_facts": {"all_ipv4_addresses": ["10.89.1.4", "10.89.1.200"], "all_ipv6_addresses": ["fe80::1", "fd42::4"]}},
    # outside the play, a host name only: no address can be known without running there
    "node3": {"torch_node_address": "node3.example.internal"},
    # nothing known
    "node4": {},
}

MEMBERS = [
    (["node0"], {"node0": ["10.89.1.2", "fd42::2"]}),
    (["node1", "node2"], {"node1": ["10.0.0.1", "10.0.1.1"], "node2": ["10.89.1.4", "10.89.1.200", "fd42::4"]}),
    (["node3", "node4"], {"node3": [], "node4": []}),
]


@pytest.mark.parametrize("members,expected", MEMBERS)
def test_member_addresses(members, expected):
    assert FILTERS["member_addresses"](members, HOSTVARS) == expected
