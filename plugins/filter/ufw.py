# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ufw rules the firewall role owns, as ``ufw show added`` prints them, and the plan that
turns the rules on a node into those: ufw has no table of our own, so the collection's rules are
the ones whose comment starts with a marker.

Documentation lives beside this file, one YAML file per filter.
"""

from __future__ import annotations

import shlex

from ansible.errors import AnsibleFilterError
from ansible_collections.torchfleet.cluster.plugins.plugin_utils.plain import plain

_ACTIONS = ("allow", "deny", "reject")


def _line(rule):
    """One rule {action, port, proto, from, comment} in the form of ``ufw show added``."""
    if rule.get("port") is None:
        raise AnsibleFilterError(f"ufw rule {rule!r} has no port")
    action, port, proto = rule.get("action", "allow"), str(rule["port"]).replace("-", ":"), rule.get("proto", "tcp")
    if action not in _ACTIONS or proto not in ("tcp", "udp"):
        raise AnsibleFilterError(f"ufw rule {rule!r}: action must be one of {', '.join(_ACTIONS)} and proto tcp or udp")
    source = rule.get("from", "any")
    comment = shlex.quote(rule["comment"]) if rule.get("comment") else ""
    if source == "any":
        text = f"ufw {action} {port}/{proto}"
    else:
        text = f"ufw {action} from {source} to any port {port} proto {proto}"
    return f"{text} comment {comment}" if comment else text


def _lines(rules):
    lines = []
    for rule in rules:
        line = _line(rule)
        if line not in lines:
            lines.append(line)
    return lines


def _port_start(port):
    return int(str(port).replace("-", ":").split(":", maxsplit=1)[0])


def _port_lists(ports):
    """Ports sorted as ufw prints them, in comma lists of at most 15 slots (a range takes two)."""
    lists, current, slots = [], [], 0
    for port in sorted(dict.fromkeys(str(port).replace("-", ":") for port in ports), key=_port_start):
        cost = 2 if ":" in port else 1
        if slots + cost > 15:
            lists.append(",".join(current))
            current, slots = [], 0
        current.append(port)
        slots += cost
    return lists + ([",".join(current)] if current else [])


def ufw_wanted(settings):
    """The collection's rules as ``ufw show added`` lines, allows first: one rule per source
    (multiport), so a run makes a few ufw calls per member instead of one per port.

    ``settings``: admin, members (addresses/networks), ssh_ports, cluster_ports ("29500", "40000:40999"),
    open_ports (firewall_open_ports), input_policy (drop|accept), blocked_action (drop|reject).
    """
    settings = plain(settings)
    members = list(dict.fromkeys(settings["members"]))
    admins = [source for source in dict.fromkeys(settings["admin"]) if source not in members]
    rules = [{"from": source, "port": ports, "comment": "torchfleet ssh"}
             for source in admins for ports in _port_lists(settings["ssh_ports"])]
    rules += [{"from": source, "port": ports, "comment": "torchfleet cluster"}
              for source in members for ports in _port_lists(settings["ssh_ports"] + settings["cluster_ports"])]
    for opened in settings["open_ports"]:
        for source in opened.get("sources") or ["any"]:
            rules.append({"from": source, "port": opened.get("port"), "proto": opened.get("proto", "tcp"), "comment": "torchfleet open"})
    if settings["input_policy"] == "accept":
        action = "reject" if settings["blocked_action"] == "reject" else "deny"
        rules += [{"action": action, "port": port, "comment": "torchfleet refuse"}
                  for port in settings["ssh_ports"] + settings["cluster_ports"]]
    return _lines(rules)


def _owned(stdout, marker):
    return [line.strip() for line in str(stdout).splitlines()
            if line.startswith("ufw ") and f"comment '{marker}" in line]


def _argv(line):
    return shlex.split(line)[1:]


def _is_refusal(line):
    return _argv(line)[0] in ("deny", "reject")


def ufw_plan(show_added, wanted, marker="torchfleet"):
    """What to run so the owned rules on the node (``ufw show added`` output) become ``wanted`` lines.

    Returns ``{"delete": [argv, ...], "add": [argv, ...]}`` (argv without the leading ``ufw``).
    ufw matches the first rule that fits, so refusals must follow every allow: when an allow is
    added while owned refusals exist, those refusals are deleted and added again after it.
    """
    current = _owned(show_added, marker)
    wanted = list(plain(wanted))
    delete = [line for line in current if line not in wanted]
    add = [line for line in wanted if line not in current]
    if any(not _is_refusal(line) for line in add):
        kept_refusals = [line for line in current if _is_refusal(line) and line in wanted]
        delete += kept_refusals
        add = [line for line in add if not _is_refusal(line)] + [line for line in wanted if _is_refusal(line)]
    return {"delete": [["delete"] + _argv(line) for line in delete], "add": [_argv(line) for line in add]}


class FilterModule:
    def filters(self):
        return {"ufw_wanted": ufw_wanted, "ufw_plan": ufw_plan}
