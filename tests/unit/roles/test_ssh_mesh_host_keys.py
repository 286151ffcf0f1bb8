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


def role_vars(loader, hostvars):
    variables = loader.load_from_file(os.path.join(ROLE, "vars", "main.yml"))
    return dict(variables, hostvars={h: {"ansible_facts": f} for h, f in hostvars.items()},
                _ssh_mesh_members=list(hostvars),
                _ssh_mesh_names={h: [h, h + ".cluster.example", "10.0.0.%d" % i] for i, h in enumerate(hostvars)})


def preflight_task(name):
    loader = DataLoader()
    for task in loader.load_from_file(os.path.join(ROLE, "tasks", "preflight.yml")):
        if task["name"] == name:
            return task
    raise AssertionError("preflight.yml has no task %r" % name)


@pytest.fixture(name="cluster")
def fixture_cluster(tmp_path, monkeypatch):
    return {name: node_facts(tmp_path, monkeypatch, name, algos) for name, algos in NODES.items()}


def test_known_hosts_records_every_offered_host_key(tmp_path, cluster):
    loader = DataLoader()
    with open(os.path.join(ROLE, "templates", "known_hosts.j2"), encoding="utf-8") as handle:
        source = trust_as_template(handle.read())
    known_hosts = tmp_path / "ssh_known_hosts"
    known_hosts.write_text(Templar(loader=loader, variables=role_vars(loader, cluster)).template(source))
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
