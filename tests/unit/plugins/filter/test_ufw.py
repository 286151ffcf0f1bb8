# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ufw rules in ``ufw show added`` form, and the plan from the node's rules to the wanted ones."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.torchfleet.cluster.plugins.filter.ufw import FilterModule

FILTERS = FilterModule().filters()

# `ufw show added` of ufw 0.36.2 (Debian bookworm) after adding these rules by hand on a test node.
SHOW_ADDED = """Added user rules (see 'ufw status' for running firewall):
ufw allow from 10.89.1.2 to any port 22 proto tcp comment 'torchfleet ssh'
ufw deny 29500/tcp comment 'torchfleet refuse'
ufw allow 9100/udp comment 'torchfleet open'
ufw allow 80/tcp comment 'web (operator)'
ufw allow from fd42::2 to any port 40000:40999 proto tcp comment 'torchfleet cluster'
"""
# `ufw show added` with no rule at all (a fresh node, ufw inactive).
SHOW_EMPTY = "Added user rules (see 'ufw status' for running firewall):\n"

BASE = {"admin": ["10.89.1.1"], "members": ["10.89.1.2", "fd42::2"], "ssh_ports": [22],
        "cluster_ports": ["29500", "40000:40999"], "open_ports": [], "input_policy": "drop", "blocked_action": "drop"}

WANTED = [
    # one multiport rule per member, ports sorted as ufw prints them (`ufw show added`, 0.36.2)
    (BASE, [
        "ufw allow from 10.89.1.1 to any port 22 proto tcp comment 'torchfleet ssh'",
        "ufw allow from 10.89.1.2 to any port 22,29500,40000:40999 proto tcp comment 'torchfleet cluster'",
        "ufw allow from fd42::2 to any port 22,29500,40000:40999 proto tcp comment 'torchfleet cluster'"]),
    # an admin that is also a member needs no SSH rule of its own; open ports to sources and to anyone
    (dict(BASE, admin=["10.89.1.2"], members=["10.89.1.2"], cluster_ports=["29500", "12355"],
          open_ports=[{"port": 9100, "sources": ["192.0.2.0/24"]}, {"port": "8000-8100", "proto": "udp"}]), [
        "ufw allow from 10.89.1.2 to any port 22,12355,29500 proto tcp comment 'torchfleet cluster'",
        "ufw allow from 192.0.2.0/24 to any port 9100 proto tcp comment 'torchfleet open'",
        "ufw allow 8000:8100/udp comment 'torchfleet open'"]),
    # ufw takes at most 15 ports per rule, a range counting two: longer lists are split
    (dict(BASE, admin=[], members=["10.0.0.1"], cluster_ports=[str(port) for port in range(29500, 29514)] + ["40000:40999"]), [
        "ufw allow from 10.0.0.1 to any port " + ",".join(["22"] + [str(port) for port in range(29500, 29514)])
        + " proto tcp comment 'torchfleet cluster'",
        "ufw allow from 10.0.0.1 to any port 40000:40999 proto tcp comment 'torchfleet cluster'"]),
    # input policy accept: the ports are refused to everyone else, after the allows
    (dict(BASE, admin=[], members=["10.89.1.2"], cluster_ports=["29500"], input_policy="accept", blocked_action="reject"), [
        "ufw allow from 10.89.1.2 to any port 22,29500 proto tcp comment 'torchfleet cluster'",
        "ufw reject 22/tcp comment 'torchfleet refuse'",
        "ufw reject 29500/tcp comment 'torchfleet refuse'"]),
]


@pytest.mark.parametrize("settings,expected", WANTED)
def test_ufw_wanted(settings, expected):
    assert FILTERS["ufw_wanted"](settings) == expected


@pytest.mark.parametrize("opened", [{"port": 22, "proto": "sctp"}, {"proto": "tcp"}])
def test_ufw_wanted_refuses(opened):
    with pytest.raises(AnsibleFilterError, match="ufw rule"):
        FILTERS["ufw_wanted"](dict(BASE, open_ports=[opened]))


SSH_2 = "ufw allow from 10.89.1.2 to any port 22 proto tcp comment 'torchfleet ssh'"
SSH_3 = "ufw allow from 10.89.1.3 to any port 22 proto tcp comment 'torchfleet ssh'"
REFUSE = "ufw deny 29500/tcp comment 'torchfleet refuse'"
OPEN = "ufw allow 9100/udp comment 'torchfleet open'"
PEER = "ufw allow from fd42::2 to any port 40000:40999 proto tcp comment 'torchfleet cluster'"

PLANS = [
    # empty ruleset: everything appended in order (no insert position, which ufw refuses there)
    (SHOW_EMPTY, [SSH_2, REFUSE],
     {"delete": [], "add": [["allow", "from", "10.89.1.2", "to", "any", "port", "22", "proto", "tcp", "comment", "torchfleet ssh"],
                            ["deny", "29500/tcp", "comment", "torchfleet refuse"]]}),
    # converged: nothing to do; the operator's own rule is never touched
    (SHOW_ADDED, [SSH_2, REFUSE, OPEN, PEER], {"delete": [], "add": []}),
    # a member left (fd42::2) and the open port was dropped: their rules are deleted
    (SHOW_ADDED, [SSH_2, REFUSE],
     {"delete": [["delete", "allow", "9100/udp", "comment", "torchfleet open"],
                 ["delete", "allow", "from", "fd42::2", "to", "any", "port", "40000:40999", "proto", "tcp", "comment", "torchfleet cluster"]],
      "add": []}),
    # a member joined: its allow must come before the refusal, so the refusal moves behind it
    (SHOW_ADDED, [SSH_2, SSH_3, REFUSE, OPEN, PEER],
     {"delete": [["delete", "deny", "29500/tcp", "comment", "torchfleet refuse"]],
      "add": [["allow", "from", "10.89.1.3", "to", "any", "port", "22", "proto", "tcp", "comment", "torchfleet ssh"],
              ["deny", "29500/tcp", "comment", "torchfleet refuse"]]}),
]


@pytest.mark.parametrize("show_added,wanted,expected", PLANS)
def test_ufw_plan(show_added, wanted, expected):
    assert FILTERS["ufw_plan"](show_added, wanted) == expected
