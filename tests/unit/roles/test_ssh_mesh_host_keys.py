# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ssh_mesh trusts the host key types a node's sshd offers, not only ed25519 (FIPS mode on EL has none).

Host keys are made by the real ssh-keygen and read by Ansible's own ssh_pub_keys fact collector (its
file reads redirected to the test's directory); the known_hosts block the role writes is checked with
`ssh-keygen -F`, the lookup ssh itself does, and the preflight assertion is the task's own expression."""

from __future__ import annotations

import os
import subprocess

import pytest

from ansible.module_utils.facts.system import ssh_pub_keys
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.torchfleet.cluster.plugins.filter import node_report
from ansible_collections.torchfleet.cluster.tests.unit.roles.role_templar import load_plugins

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "ssh_mesh")

# Which host keys each node has in /etc/ssh (what `ssh-keygen -A` made, or what FIPS mode allows).
NODES = {
    "node0": ["ed25519", "ecdsa", "rsa"],  # Debian, Ubuntu, EL outside FIPS mode
    "node1": ["ecdsa", "rsa"],  # EL 9 in FIPS mode
    "node2": ["rsa"],
}
KEYTYPES = {"ed25519": "ssh-ed25519", "ecdsa": "ecdsa-sha2-nistp256", "rsa": "ssh-rsa"}


@pytest.fixture(autouse=True, scope="module")
def plugins():
    load_plugins()


def node_facts(tmp_path, monkeypatch, name, algos):
    """The ssh_pub_keys facts of a node whose /etc/ssh holds fresh host keys of these types."""
    etc = tmp_path / name
    etc.mkdir()
    for algo in algos:
        subprocess.run(["ssh-keygen", "-q", "-t", algo, "-N", "", "-C", "root@" + name,
                        "-f", str(etc / ("ssh_host_%s_key" % algo))], check=True)
    real_read = ssh_pub_keys.get_file_content
    monkeypatch.setattr(ssh_pub_keys, "get_file_content",
                        lambda path: real_read(str(etc / os.path.basename(path))) if path.startswith("/etc/ssh/") else None)
    facts = ssh_pub_keys.SshPubKeyFactCollector().collect()
    monkeypatch.setattr(ssh_pub_keys, "get_file_content", real_read)
    return facts


def role_vars(loader, cluster, **reported):
    """The role's variables for members with these host key facts, each reporting its names as
    ``reported[member]`` (hostname, fqdn, default_ipv4) says, else ``h``, ``h.cluster.example``,
    ``10.0.0.i``; the names and keys pass through preflight.yml's filter as in a run."""
    variables = loader.load_from_file(os.path.join(ROLE, "vars", "main.yml"), trusted_as_template=True)
    hostvars = {}
    for index, (name, facts) in enumerate(cluster.items()):
        names = dict({"hostname": name, "fqdn": name + ".cluster.example", "default_ipv4": {"address": "10.0.0.%d" % index}},
                     **reported.get(name, {}))
        hostvars[name] = {"ansible_facts": dict(facts, **names)}
    reports = node_report.ssh_host_reports(list(hostvars), hostvars, variables["_ssh_mesh_host_key_facts"])
    return dict(variables, hostvars=hostvars, _ssh_mesh_members=list(hostvars), _ssh_mesh_reports=reports)


def render(loader, variables, template):
    with open(os.path.join(ROLE, "templates", template), encoding="utf-8") as handle:
        source = trust_as_template(handle.read())
    return Templar(loader=loader, variables=variables).template(source)


def preflight_task(name):
    loader = DataLoader()
    for task in loader.load_from_file(os.path.join(ROLE, "tasks", "preflight.yml")):
        if task["name"] == name:
            return task
    raise AssertionError("preflight.yml has no task %r" % name)


@pytest.fixture(name="cluster")
def fixture_cluster(tmp_path, monkeypatch):
    return {name: node_facts(tmp_path, monkeypatch, name, algos) for name, algos in NODES.items()}


@pytest.fixture(name="shared_cluster", scope="module")
def fixture_shared_cluster(tmp_path_factory):
    """The same cluster, made once for the tests that only read it."""
    tmp_path = tmp_path_factory.mktemp("cluster")
    with pytest.MonkeyPatch.context() as monkeypatch:
        return {name: node_facts(tmp_path, monkeypatch, name, algos) for name, algos in NODES.items()}


def test_known_hosts_records_every_offered_host_key(tmp_path, cluster):
    loader = DataLoader()
    known_hosts = tmp_path / "ssh_known_hosts"
    known_hosts.write_text(render(loader, role_vars(loader, cluster), "known_hosts.j2"))
    for index, (name, algos) in enumerate(NODES.items()):
        for host in (name, name + ".cluster.example", "10.0.0.%d" % index):
            found = subprocess.run(["ssh-keygen", "-F", host, "-f", str(known_hosts)],
                                   capture_output=True, text=True, check=False)
            assert found.returncode == 0, "%s not in known_hosts" % host
            lines = [line.split() for line in found.stdout.splitlines() if not line.startswith("#")]
            assert [line[1] for line in lines] == [KEYTYPES[a] for a in algos]
            assert [line[2] for line in lines] == [cluster[name]["ssh_host_key_%s_public" % a] for a in algos]


@pytest.mark.parametrize("algos, accepted", [
    (["ed25519", "ecdsa", "rsa"], True),
    (["ecdsa", "rsa"], True),
    (["rsa"], True),
    (["dsa"], False),
    ([], False),
])
def test_preflight_accepts_any_offered_type(tmp_path, monkeypatch, algos, accepted):
    task = preflight_task("Check that every member has a host key the others can verify")
    loader = DataLoader()
    facts = node_facts(tmp_path, monkeypatch, "node", algos) if "dsa" not in algos else {
        "ssh_host_key_dsa_public": "AAAAB3NzaC1kc3MAAACBAP", "ssh_host_key_dsa_public_keytype": "ssh-dss"}
    variables = dict(role_vars(loader, {"node": facts}), item="node")
    templar = Templar(loader=loader, variables=variables)
    assert templar.evaluate_conditional(trust_as_template(task["ansible.builtin.assert"]["that"])) is accepted


def test_known_hosts_and_ssh_config_keep_their_format(shared_cluster):
    """Valid reports give the lines the role has always written: the names joined by ',', the key
    type and the key, per host key fact; a changed byte would make every converged node change."""
    loader = DataLoader()
    cluster = shared_cluster
    variables = role_vars(loader, cluster)
    expected = "".join(
        "%s,%s.cluster.example,10.0.0.%d %s %s\n" % (name, name, index, facts[fact + "_keytype"], facts[fact])
        for index, (name, facts) in enumerate(cluster.items())
        for fact in variables["_ssh_mesh_host_key_facts"] if facts.get(fact))
    assert render(loader, variables, "known_hosts.j2") == expected
    assert render(loader, dict(variables, ssh_mesh_key_name="id_ed25519_torchfleet"), "ssh_config.j2").splitlines()[0] == (
        "Host node0 node0.cluster.example 10.0.0.0 node1 node1.cluster.example 10.0.0.1 node2 node2.cluster.example 10.0.0.2")


# What a node's root can make its facts say (its FQDN is socket.getfqdn(), its hostname uname -n).
ATTACKS = [
    {"fqdn": "*"},
    {"fqdn": "*.cluster.example"},
    {"hostname": "node0,*"},
    {"fqdn": "!node0,*"},
    {"fqdn": "node1\n* ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPJCmLuvS6zCGhJ7mvs4Rcm8WKheGywN5iWOUf8XE0/+"},
    {"hostname": "node?", "fqdn": "[node0]:22"},
    {"default_ipv4": {"address": "10.0.0.0,node0"}},
]


@pytest.mark.parametrize("reported", ATTACKS)
def test_a_node_cannot_vouch_for_other_names(tmp_path, shared_cluster, reported):
    cluster = shared_cluster
    loader = DataLoader()
    variables = role_vars(loader, cluster, node1=reported)
    known_hosts = tmp_path / "ssh_known_hosts"
    known_hosts.write_text(render(loader, variables, "known_hosts.j2"))
    node1_keys = {cluster["node1"][fact] for fact in variables["_ssh_mesh_host_key_facts"] if cluster["node1"].get(fact)}
    for host in ("node0", "node2", "10.0.0.0", "evil.example", "node1x", "[node0]:22"):
        found = subprocess.run(["ssh-keygen", "-F", host, "-f", str(known_hosts)], capture_output=True, text=True, check=False)
        vouched = {line.split()[2] for line in found.stdout.splitlines() if line and not line.startswith("#")}
        assert not vouched & node1_keys, "node1's host key is accepted for %s" % host
    found = subprocess.run(["ssh-keygen", "-F", "node1", "-f", str(known_hosts)], capture_output=True, text=True, check=False)
    assert found.returncode == 0
    for line in known_hosts.read_text().splitlines():
        for pattern in line.split(" ")[0].split(","):
            assert pattern and not set(pattern) & set("*?![]\t"), line
    config = render(loader, dict(variables, ssh_mesh_key_name="id_ed25519_torchfleet"), "ssh_config.j2")
    assert not set(config.splitlines()[0][len("Host "):]) & set("*?![],\t"), config
