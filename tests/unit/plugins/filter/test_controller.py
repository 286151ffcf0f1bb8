# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""is_controller: what ssh_mesh and firewall take for the machine Ansible runs on."""

from __future__ import annotations

import pytest

from ansible_collections.torchfleet.cluster.plugins.filter import controller
from ansible_collections.torchfleet.cluster.plugins.filter.controller import FilterModule

OWN_ID = "0123456789abcdef0123456789abcdef"

# (inventory name, connection, the host's machine_id fact, the controller's /etc/machine-id, expected)
CASES = [
    ("localhost", "ssh", "", OWN_ID, True),
    ("127.0.0.1", "ssh", "", OWN_ID, True),
    ("::1", "ssh", "", OWN_ID, True),
    ("node0", "local", "", OWN_ID, True),
    ("node0", "ansible.builtin.local", "", OWN_ID, True),
    ("node0", "ssh", OWN_ID, OWN_ID, True),
    ("node0", "ssh", OWN_ID + "\n", OWN_ID, True),
    ("node0", "ssh", "fedcba9876543210fedcba9876543210", OWN_ID, False),
    ("node0", "ansible.builtin.ssh", "", OWN_ID, False),
    ("node0", "community.general.lxd", "", OWN_ID, False),
    ("node0", None, "", OWN_ID, False),
    # A controller without a machine id matches nobody's, not every host without the fact.
    ("node0", "ssh", "", None, False),
    ("localhost-like", "ssh", "", None, False),
]


@pytest.mark.parametrize("host,connection,machine_id,own_id,expected", CASES)
def test_is_controller(tmp_path, monkeypatch, host, connection, machine_id, own_id, expected):
    path = tmp_path / "machine-id"
    if own_id is not None:
        path.write_text(own_id + "\n", encoding="ascii")
    monkeypatch.setattr(controller, "CONTROLLER_MACHINE_ID", str(path))
    assert FilterModule().filters()["is_controller"](host, connection, machine_id) is expected
