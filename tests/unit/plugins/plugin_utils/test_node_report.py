# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/node_report: what a node reports about itself reaches other nodes' known_hosts,
ssh_config, /etc/hosts and hostfile only when it cannot be read as a pattern, an option or a new
entry there. Host keys are real ssh-keygen keys; the bad ones are built from them."""

from __future__ import annotations

import base64
import struct
import subprocess

import pytest

from ansible_collections.torchfleet.cluster.plugins.plugin_utils import node_report
from ansible_collections.torchfleet.cluster.plugins.plugin_utils.node_report import NodeReportError

KEY_SPECS = {
    "ssh-ed25519": ["-t", "ed25519"],
    "ecdsa-sha2-nistp256": ["-t", "ecdsa", "-b", "256"],
    "ecdsa-sha2-nistp384": ["-t", "ecdsa", "-b", "384"],
    "ecdsa-sha2-nistp521": ["-t", "ecdsa", "-b", "521"],
    "ssh-rsa": ["-t", "rsa", "-b", "2048"],
}


@pytest.fixture(name="keys", scope="module")
def fixture_keys(tmp_path_factory):
    """{key type: base64 key} of fresh keys, as /etc/ssh/ssh_host_*_key.pub holds them."""
    directory = tmp_path_factory.mktemp("keys")
    keys = {}
    for key_type, options in KEY_SPECS.items():
        path = directory / key_type
        subprocess.run(["ssh-keygen", "-q", "-N", "", "-C", "root@node0", "-f", str(path)] + options, check=True)
        written_type, material = path.with_suffix(".pub").read_text().split()[:2]
        assert written_type == key_type
        keys[key_type] = material
    return keys


def wire(*fields):
    return base64.b64encode(b"".join(struct.pack(">I", len(f)) + f for f in fields)).decode()


def decoded(material):
    return base64.b64decode(material)


VALID_NAMES = [
    "node0",
    "node-1.cluster.example",
    "Node1.Cluster.Example",  # kept as reported, not folded
    "0node",
    "a",
    "a" * 63 + ".example",
    ".".join(["a" * 63] * 3 + ["b" * 61]),  # 253 characters
]

BAD_NAMES = [
    "*",
    "?",
    "node?",
    "node*.example",
    "node0,*",
    "node0,node1",
    "[10.0.0.1]:22",
    "[node0]:2222",
    "node0\n10.0.0.9 ssh-ed25519 AAAA",
    "node0\n",
    "\nnode0",
    "node0\r",
    "!node0",
    "node0 node1",
    " node0",
    "node0\t",
    "node0\x00",
    "node0\x1b[2J",
    "|1|c2FsdA==|aGFzaA==",
    "@cert-authority",
    "-node0",
    ".node0",
    "node0.",
    "node0..example",
    "node0-",
    "node_0",
    "nöde0",
    "10.0.0.300",
    "1.2.3",
    "a" * 64,
    ".".join(["a" * 63] * 3 + ["b" * 62]),  # 254 characters
    "",
    None,
    7,
    ["node0"],
]

VALID_ADDRESSES = ["10.0.0.1", "192.0.2.11", "fd42::1", "2001:db8::1", "FD42:0:0::1", "::ffff:10.0.0.1"]

BAD_ADDRESSES = [
    "[10.0.0.1]:22",
    "10.0.0.1:22",
    "[fd42::1]",
    "10.0.0.1\n",
    "10.0.0.1\n10.0.0.9 node0",
    " 10.0.0.1",
    "10.0.0.1,*",
    "fe80::1%eth0",
    "10.0.0.1/24",
    "010.0.0.1",
    "10.0.0.256",
    "node0",
    "*",
    "",
    None,
    167772161,
]


@pytest.mark.parametrize("name", VALID_NAMES)
def test_valid_names_pass_unchanged(name):
    assert node_report.host_name(name) == name
    assert node_report.address_or_name(name) == name


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_names_are_refused(name):
    with pytest.raises(NodeReportError):
        node_report.host_name(name)
    with pytest.raises(NodeReportError):
        node_report.address_or_name(name)


@pytest.mark.parametrize("address", VALID_ADDRESSES)
def test_valid_addresses_pass_unchanged(address):
    assert node_report.ip_address(address) == address
    assert node_report.address_or_name(address) == address


@pytest.mark.parametrize("address", BAD_ADDRESSES)
def test_bad_addresses_are_refused(address):
    with pytest.raises(NodeReportError):
        node_report.ip_address(address)


@pytest.mark.parametrize("address, accepted", [
    ("fe80::1%eth0", True),
    ("fe80::1%3", True),
    ("fe80::1%eth0\n", False),
    ("fe80::1%eth0 node0", False),
    ("fe80::1%", False),
    ("10.0.0.1%eth0", False),
])
def test_scopes_only_when_asked_for(address, accepted):
    with pytest.raises(NodeReportError, match="scope"):
        node_report.ip_address(address)
    if accepted:
        assert node_report.ip_address(address, allow_scope=True) == address
    else:
        with pytest.raises(NodeReportError):
            node_report.ip_address(address, allow_scope=True)


@pytest.mark.parametrize("key_type", list(KEY_SPECS))
def test_valid_host_keys_pass_unchanged(keys, key_type):
    assert node_report.host_key(key_type, keys[key_type]) == (key_type, keys[key_type])


# (declared type, how the key is made from the real ones, what the refusal says)
BAD_KEYS = [
    ("ssh-dss", lambda k: k["ssh-rsa"], "not one of"),
    ("ssh-ed25519-cert-v01@openssh.com", lambda k: k["ssh-ed25519"], "not one of"),
    ("ssh-ed25519 ", lambda k: k["ssh-ed25519"], "not one of"),
    ("", lambda k: k["ssh-ed25519"], "empty"),
    (None, lambda k: k["ssh-ed25519"], "must be a string"),
    ("ssh-rsa", lambda k: k["ssh-ed25519"], "says 'ssh-ed25519', not 'ssh-rsa'"),
    ("ssh-ed25519", lambda k: k["ecdsa-sha2-nistp256"], "says 'ecdsa-sha2-nistp256'"),
    ("ecdsa-sha2-nistp384", lambda k: k["ecdsa-sha2-nistp256"], "not 'ecdsa-sha2-nistp384'"),
    ("ssh-ed25519", lambda k: k["ssh-ed25519"] + " root@node0", "strict base64"),
    ("ssh-ed25519", lambda k: k["ssh-ed25519"] + "\n", "strict base64"),
    ("ssh-ed25519", lambda k: k["ssh-ed25519"] + "\n* ssh-ed25519 " + k["ssh-ed25519"], "strict base64"),
    ("ssh-ed25519", lambda k: k["ssh-ed25519"][:-1], "strict base64"),
    ("ecdsa-sha2-nistp256", lambda k: k["ecdsa-sha2-nistp256"].rstrip("="), "strict base64"),
    ("ssh-ed25519", lambda k: k["ssh-ed25519"][:20] + " " + k["ssh-ed25519"][21:], "strict base64"),
    ("ssh-ed25519", lambda k: base64.urlsafe_b64encode(b"\xfb\xff" + decoded(k["ssh-ed25519"])).decode(), "strict base64"),
    ("ssh-ed25519", lambda k: "not base64!", "strict base64"),
    ("ssh-ed25519", lambda k: "====", "strict base64"),
    ("ssh-ed25519", lambda k: "A" * 9000, "strict base64"),
    ("ssh-ed25519", lambda k: "", "empty"),
    ("ssh-ed25519", lambda k: None, "must be a string"),
    ("ssh-ed25519", lambda k: base64.b64encode(decoded(k["ssh-ed25519"])[:-4]).decode(), "ends inside a field"),
    ("ssh-ed25519", lambda k: base64.b64encode(decoded(k["ssh-ed25519"]) + b"\x00\x00").decode(), "ends inside a length"),
    ("ssh-ed25519", lambda k: base64.b64encode(decoded(k["ssh-ed25519"]) + struct.pack(">I", 1) + b"x").decode(),
     "nothing else"),
    ("ssh-ed25519", lambda k: wire(b"ssh-ed25519"), "nothing else"),
    ("ssh-ed25519", lambda k: wire(b"ssh-ed25519", b"\x01" * 31), "32 bytes"),
    ("ssh-ed25519", lambda k: base64.b64encode(b"ssh-ed25519 AAAA").decode(), "ends inside a field"),
    ("ssh-rsa", lambda k: wire(b"ssh-rsa", b"\x01\x00\x01", b""), "nothing empty"),
    ("ecdsa-sha2-nistp256", lambda k: wire(b"ecdsa-sha2-nistp256", b"nistp384", b"\x04" + b"\x01" * 64), "curve 'nistp384'"),
]


@pytest.mark.parametrize("key_type, make, reason", BAD_KEYS)
def test_bad_host_keys_are_refused(keys, key_type, make, reason):
    with pytest.raises(NodeReportError) as refusal:
        node_report.host_key(key_type, make(keys))
    assert reason in str(refusal.value)


def member_vars(keys, **facts):
    """A hostvars entry of a member with an ed25519 and an RSA host key and the given facts."""
    host_facts = {
        "hostname": "node1", "fqdn": "node1.cluster.example", "default_ipv4": {"address": "10.0.0.11"},
        "ssh_host_key_ed25519_public": keys["ssh-ed25519"], "ssh_host_key_ed25519_public_keytype": "ssh-ed25519",
        "ssh_host_key_rsa_public": keys["ssh-rsa"], "ssh_host_key_rsa_public_keytype": "ssh-rsa",
    }
    host_facts.update(facts)
    return {"ansible_host": "192.0.2.11", "ansible_facts": host_facts}


KEY_FACTS = ["ssh_host_key_ed25519_public", "ssh_host_key_ecdsa_public", "ssh_host_key_rsa_public"]

# (facts that differ from member_vars, the names other nodes get, what is said about the left-out ones)
SSH_REPORTS = [
    ({}, ["node1", "node1.cluster.example", "192.0.2.11", "10.0.0.11"], []),
    ({"fqdn": "*"}, ["node1", "192.0.2.11", "10.0.0.11"],
     ["node1: ansible_facts.fqdn '*' left out of the names other nodes know it by: not an RFC 1123 host name"]),
    ({"hostname": "node0,*"}, ["node1", "node1.cluster.example", "192.0.2.11", "10.0.0.11"],
     ["node1: ansible_facts.hostname 'node0,*' left out"]),
    ({"fqdn": "!node0"}, ["node1", "192.0.2.11", "10.0.0.11"], ["node1: ansible_facts.fqdn '!node0' left out"]),
    ({"fqdn": "node1\n* ssh-ed25519 AAAA"}, ["node1", "192.0.2.11", "10.0.0.11"],
     ["node1: ansible_facts.fqdn 'node1\\n* ssh-ed25519 AAAA' left out"]),
    ({"default_ipv4": {"address": "[10.0.0.1]:22"}}, ["node1", "node1.cluster.example", "192.0.2.11"],
     ["node1: ansible_facts.default_ipv4.address '[10.0.0.1]:22' left out of the names other nodes know it by: "
      "not an IPv4 or IPv6 address"]),
    ({"default_ipv4": {"address": "fd42::11"}}, ["node1", "node1.cluster.example", "192.0.2.11", "fd42::11"], []),
    # Case-insensitive duplicates go, as Jinja's unique drops them; the first spelling stays.
    ({"hostname": "NODE1", "fqdn": "Node1.Cluster.Example"}, ["node1", "Node1.Cluster.Example", "192.0.2.11", "10.0.0.11"],
     []),
    ({"hostname": "", "fqdn": None, "default_ipv4": {}}, ["node1", "192.0.2.11"], []),
    ({"fqdn": "x" * 200}, ["node1", "192.0.2.11", "10.0.0.11"], ["node1: ansible_facts.fqdn 'xxxxxxxx"]),
]


@pytest.mark.parametrize("facts, names, dropped", SSH_REPORTS)
def test_ssh_host_report_names(keys, facts, names, dropped):
    report = node_report.ssh_host_report("node1", member_vars(keys, **facts), KEY_FACTS)
    assert report["names"] == names
    assert len(report["dropped"]) == len(dropped)
    for message, expected in zip(report["dropped"], dropped):
        assert message.startswith(expected)
        assert "\n" not in message and len(message) < 250
    assert report["host_keys"] == [{"type": "ssh-ed25519", "key": keys["ssh-ed25519"]},
                                   {"type": "ssh-rsa", "key": keys["ssh-rsa"]}]
    assert report["refused"] == []


def test_ssh_host_report_inventory_values_are_checked_too(keys):
    host_vars = dict(member_vars(keys), ansible_host="*", torch_node_address="10.10.0.11")
    report = node_report.ssh_host_report("node1", host_vars, KEY_FACTS)
    assert report["names"] == ["node1", "node1.cluster.example", "10.10.0.11", "10.0.0.11"]
    assert report["dropped"] == ["node1: ansible_host '*' left out of the names other nodes know it by: "
                                 "neither an IP address nor an RFC 1123 host name"]


# (host key facts that differ from member_vars, the keys other nodes get, the refusals)
SSH_KEY_REPORTS = [
    ({"ssh_host_key_rsa_public": "bm90IGEga2V5"}, ["ssh-ed25519"],
     ["node1: ansible_facts.ssh_host_key_rsa_public ('ssh-rsa') refused: the key data ends inside a field"]),
    ({"ssh_host_key_rsa_public_keytype": "ssh-ed25519"}, ["ssh-ed25519"],
     ["node1: ansible_facts.ssh_host_key_rsa_public ('ssh-ed25519') refused: the key's data says 'ssh-rsa'"]),
    ({"ssh_host_key_ed25519_public_keytype": "*"}, ["ssh-rsa"],
     ["node1: ansible_facts.ssh_host_key_ed25519_public ('*') refused: key type '*' is not one of"]),
    ({"ssh_host_key_ed25519_public": "AAAA\n* ssh-rsa AAAA"}, ["ssh-rsa"],
     ["node1: ansible_facts.ssh_host_key_ed25519_public ('ssh-ed25519') refused: the key is not strict base64"]),
    ({"ssh_host_key_ed25519_public": ""}, ["ssh-rsa"], []),
]


@pytest.mark.parametrize("facts, types, refused", SSH_KEY_REPORTS)
def test_ssh_host_report_keys(keys, facts, types, refused):
    report = node_report.ssh_host_report("node1", member_vars(keys, **facts), KEY_FACTS)
    assert [key["type"] for key in report["host_keys"]] == types
    assert all(key["key"] == keys[key["type"]] for key in report["host_keys"])
    assert len(report["refused"]) == len(refused)
    for message, expected in zip(report["refused"], refused):
        assert message.startswith(expected)


def test_ssh_host_report_without_facts():
    assert node_report.ssh_host_report("node1", {}, KEY_FACTS) == {"names": ["node1"], "host_keys": [], "dropped": [], "refused": []}


# (hostvars entry, the address, or the refusal)
NODE_ADDRESSES = [
    ({"ansible_facts": {"default_ipv4": {"address": "10.0.0.11"}}}, "10.0.0.11"),
    ({"ansible_facts": {"default_ipv4": {"address": "fd42::11"}}}, "fd42::11"),
    ({"torch_node_address": "10.10.0.11", "ansible_facts": {"default_ipv4": {"address": "*"}}}, "10.10.0.11"),
    ({"torch_node_address": "node3", "ansible_facts": {}}, "node3"),
    ({"ansible_facts": {}}, None),
    ({}, None),
    ({"ansible_facts": {"default_ipv4": {"address": "10.0.0.11\n10.0.0.11 node0"}}},
     "node1: ansible_facts.default_ipv4.address '10.0.0.11\\n10.0.0.11 node0' refused: not an IPv4 or IPv6 address"),
    ({"ansible_facts": {"default_ipv4": {"address": "node0"}}},
     "node1: ansible_facts.default_ipv4.address 'node0' refused: not an IPv4 or IPv6 address"),
    ({"ansible_facts": {"default_ipv4": {"address": "fe80::1%eth0"}}},
     "node1: ansible_facts.default_ipv4.address 'fe80::1%eth0' refused: an address with a scope"),
    ({"torch_node_address": "node0 slots=64", "ansible_facts": {"default_ipv4": {"address": "10.0.0.11"}}},
     "node1: torch_node_address 'node0 slots=64' refused: neither an IP address nor an RFC 1123 host name"),
    ({"torch_node_address": ["10.0.0.1"]}, "node1: torch_node_address ['10.0.0.1'] refused: neither"),
]


@pytest.mark.parametrize("host_vars, expected", NODE_ADDRESSES)
def test_node_address(host_vars, expected):
    if expected is None or not expected.startswith("node1: "):
        assert node_report.node_address("node1", host_vars) == expected
    else:
        with pytest.raises(NodeReportError) as refusal:
            node_report.node_address("node1", host_vars)
        assert str(refusal.value).startswith(expected)
