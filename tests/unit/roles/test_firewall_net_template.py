# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/firewall/templates/torchfleet-net.sh.j2 is sourced by every login shell and every conda
activation: an interface name must reach the backends verbatim and never run as shell code."""

from __future__ import annotations

import os
import subprocess

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.torchfleet.cluster.tests.unit.roles.role_templar import load_plugins

TEMPLATE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "firewall", "templates", "torchfleet-net.sh.j2")

NAMES = [
    "eth0",
    "ens5f0np0",
    "ib0.8001",
    "eth0;touch PWNED",
    "$(touch PWNED)",
    "`touch PWNED`",
    "x' ; touch PWNED; '",
]


@pytest.fixture(autouse=True, scope="module")
def plugins():
    load_plugins()


def render(interface):
    with open(TEMPLATE) as handle:
        source = trust_as_template(handle.read())
    return Templar(loader=DataLoader(), variables={"firewall_training_interface": interface}).template(source)


@pytest.mark.parametrize("interface", NAMES)
def test_interface_name_is_data_not_code(tmp_path, interface):
    script = tmp_path / "torchfleet-net.sh"
    script.write_text(render(interface))
    shown = subprocess.run(
        ["sh", "-c", '. ./torchfleet-net.sh && printf "%s\\n%s\\n%s" "$NCCL_SOCKET_IFNAME" "$GLOO_SOCKET_IFNAME" "$TP_SOCKET_IFNAME"'],
        cwd=str(tmp_path), capture_output=True, text=True, check=True)
    assert shown.stdout.split("\n") == [interface] * 3
    assert not (tmp_path / "PWNED").exists()
