"""Every role's tasks carry the role's name as a tag, so `--tags firewall` runs the firewall alone.

`ansible-playbook --list-tasks --tags TAG` lists what a run with that tag would start; the
argument-spec validation Ansible adds to each role is tagged `always` by Ansible itself."""

import os
import re
import subprocess

import pytest

from conftest import ROOT

TASK_LINE = re.compile(r"^ {6}(?:(?P<role>[\w.]+) : )?(?P<name>.+?)\tTAGS: \[(?P<tags>[^\]]*)\]$")
VALIDATION = "Validating arguments against arg spec"
SHARED_FACTS = "Work out the shared facts about the cluster"

CASES = [
    ("playbooks/site.yml", "miniconda", "torchfleet.cluster.miniconda"),
    ("playbooks/site.yml", "conda_env", "torchfleet.cluster.conda_env"),
    ("playbooks/site.yml", "ssh_mesh", "torchfleet.cluster.ssh_mesh"),
    ("playbooks/site.yml", "firewall", "torchfleet.cluster.firewall"),
    ("playbooks/site.yml", "consistency", "torchfleet.cluster.drift_audit"),
    ("playbooks/site.yml", "launch", "torchfleet.cluster.launch"),
    ("playbooks/launch.yml", "launch", "torchfleet.cluster.launch"),
    ("site.yml", "firewall", "torchfleet.cluster.firewall"),
    ("playbooks/audit.yml", "audit", "torchfleet.cluster.drift_audit"),
    ("playbooks/smoke.yml", "smoke", "torchfleet.cluster.smoke"),
]


def listed_tasks(playbook, *args):
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"))
    result = subprocess.run(["ansible-playbook", "-i", str(ROOT / "inventories" / "example"), "--list-tasks",
                             str(ROOT / playbook)] + list(args), cwd=ROOT, env=env, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    tasks = []
    for line in result.stdout.splitlines():
        match = TASK_LINE.match(line)
        if match:
            tags = {tag.strip() for tag in match.group("tags").split(",") if tag.strip()}
            tasks.append((match.group("role"), match.group("name"), tags))
    return tasks


def shared_facts(role, name):
    """The internal role with the shared facts, and a role's include of it (listed without a role)."""
    return role == "torchfleet.cluster.cluster" or (role is None and name.startswith(SHARED_FACTS))


@pytest.mark.parametrize("playbook, tag, role", CASES)
def test_tag_selects_the_role_alone(playbook, tag, role):
    tasks = listed_tasks(playbook, "--tags", tag)
    work = [(r, name) for r, name, tags in tasks
            if not name.startswith(VALIDATION) and "always" not in tags and not shared_facts(r, name)]
    assert work, "--tags %s selects no task of %s" % (tag, playbook)
    assert {r for r, _name in work} == {role}


def test_every_task_of_site_carries_a_role_tag():
    untagged = [(r, name) for r, name, tags in listed_tasks("playbooks/site.yml")
                if not tags & {"miniconda", "conda_env", "ssh_mesh", "firewall", "launch", "consistency", "always"}]
    assert untagged == []
