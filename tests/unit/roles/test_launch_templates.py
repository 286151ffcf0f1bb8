# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/launch/templates: cluster.env is sourced by torchfleet-run and every login shell, so each
value must reach the process verbatim and never run as shell code; torchfleet-run puts the
environment's bin/ first and runs the command with the settings, without activation."""

from __future__ import annotations

import os
import subprocess

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.torchfleet.cluster.tests.unit.roles.role_templar import load_plugins

TEMPLATES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "launch", "templates")

VALUES = [
    "eth0",
    "ib0.8001",
    "eth0;touch PWNED",
    "$(touch PWNED)",
    "`touch PWNED`",
    "x' ; touch PWNED; '",
]


@pytest.fixture(autouse=True, scope="module")
def plugins():
    load_plugins()


def render(name, variables):
    with open(os.path.join(TEMPLATES, name)) as handle:
        source = trust_as_template(handle.read())
    return Templar(loader=DataLoader(), variables=variables).template(source)


def settings(interface, prefix="/opt/miniconda3/envs/train"):
    return {"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "12355", "NNODES": "3", "NODE_RANK": "2",
            "TORCHFLEET_ENV_PREFIX": prefix, "NCCL_SOCKET_IFNAME": interface, "GLOO_SOCKET_IFNAME": interface}


def write_pair(tmp_path, interface, prefix="/opt/miniconda3/envs/train"):
    env_file = tmp_path / "cluster.env"
    env_file.write_text(render("cluster.env.j2", {"_launch_settings": settings(interface, prefix),
                                                  "_launch_settings_file": str(env_file), "inventory_hostname": "node2"}))
    wrapper = tmp_path / "torchfleet-run"
    wrapper.write_text(render("torchfleet-run.sh.j2", {"_launch_settings_file": str(env_file)}))
    wrapper.chmod(0o755)
    return env_file, wrapper


@pytest.mark.parametrize("interface", VALUES)
def test_values_are_data_not_code(tmp_path, interface):
    dummy, wrapper = write_pair(tmp_path, interface)
    shown = subprocess.run([str(wrapper), "sh", "-c", 'printf "%s\\n%s\\n%s" "$NCCL_SOCKET_IFNAME" "$GLOO_SOCKET_IFNAME" "$NODE_RANK"'],
                           cwd=str(tmp_path), capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin"})
    assert shown.stdout.split("\n") == [interface, interface, "2"]
    assert not (tmp_path / "PWNED").exists()


def test_wrapper_runs_the_environments_commands_first(tmp_path):
    env_bin = tmp_path / "env" / "bin"
    env_bin.mkdir(parents=True)
    python = env_bin / "python"
    python.write_text('#!/bin/sh\necho "env python: $MASTER_ADDR $NODE_RANK"\n')
    python.chmod(0o755)
    dummy, wrapper = write_pair(tmp_path, "eth0", prefix=str(tmp_path / "env"))
    shown = subprocess.run([str(wrapper), "python"], capture_output=True, text=True, check=True,
                           env={"PATH": "/usr/bin:/bin"})
    assert shown.stdout == "env python: 10.0.0.1 2\n"


def test_wrapper_without_a_command_says_how_to_use_it(tmp_path):
    dummy, wrapper = write_pair(tmp_path, "eth0")
    shown = subprocess.run([str(wrapper)], capture_output=True, text=True, check=False)
    assert shown.returncode == 2 and "usage: torchfleet-run CMD" in shown.stderr


def test_profile_loads_the_settings_into_login_shells(tmp_path):
    env_file, dummy = write_pair(tmp_path, "eth0;touch PWNED")
    profile = tmp_path / "profile.sh"
    profile.write_text(render("profile.sh.j2", {"_launch_settings_file": str(env_file)}))
    shown = subprocess.run(["sh", "-c", '. ./profile.sh && sh -c \'echo "$GLOO_SOCKET_IFNAME $MASTER_PORT"\''],
                           cwd=str(tmp_path), capture_output=True, text=True, check=True)
    assert shown.stdout == "eth0;touch PWNED 12355\n"
    assert not (tmp_path / "PWNED").exists()
