# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether an inventory host is the machine Ansible runs on: the roles that change sshd or the
firewall refuse it unless told otherwise, since a mistake there cuts the operator off.

Documentation lives beside this file, one YAML file per filter.
"""

from __future__ import annotations

import re

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
LOCAL_CONNECTION = re.compile(r"(^|\.)local$")
CONTROLLER_MACHINE_ID = "/etc/machine-id"


def controller_machine_id():
    """This machine's systemd machine id, or '' where it has none."""
    try:
        with open(CONTROLLER_MACHINE_ID, encoding="ascii") as handle:
            return handle.read().strip()
    except (OSError, UnicodeDecodeError):
        return ""


def is_controller(host, connection="ssh", machine_id=""):
    """True when ``host`` is a loopback name, is reached with the local connection, or reports
    (``machine_id``, from its facts) the same machine id as the controller."""
    if str(host) in LOOPBACK_NAMES or LOCAL_CONNECTION.search(str(connection or "ssh")):
        return True
    own = controller_machine_id()
    return bool(own) and str(machine_id or "").strip() == own


class FilterModule:
    def filters(self):
        return {"is_controller": is_controller}
