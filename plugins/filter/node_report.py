# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller's one check of what nodes report about themselves (plugin_utils/node_report),
for the roles that write one node's names, addresses or host keys onto the other nodes.

Documentation lives beside this file, one YAML file per filter.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible.utils.display import Display

from ansible_collections.torchfleet.cluster.plugins.plugin_utils import node_report
from ansible_collections.torchfleet.cluster.plugins.plugin_utils.plain import plain

display = Display()


def _members(members):
    members = plain(members)
    if isinstance(members, str):
        return [members]
    return list(members or [])


def ssh_host_reports(members, hostvars, key_facts):
    """{names: {member: [...]}, host_keys: {member: [{type, key}]}, refused: {member: [...]}} from
    each member's facts and inventory; every name left out is shown as a warning."""
    tables = {"names": {}, "host_keys": {}, "refused": {}}
    for member in _members(members):
        report = node_report.ssh_host_report(member, hostvars[member], _members(key_facts))
        for message in report["dropped"]:
            display.warning(message)
        for table in tables:
            tables[table][member] = report[table]
    return tables


def node_addresses(members, hostvars):
    """{member: address} for each member that has one (torch_node_address, else its default IPv4
    address); fails naming the member and the field when that value is not valid."""
    addresses = {}
    for member in _members(members):
        try:
            address = node_report.node_address(member, hostvars[member])
        except node_report.NodeReportError as error:
            raise AnsibleFilterError(str(error)) from None
        if address is not None:
            addresses[member] = address
    return addresses


class FilterModule:
    def filters(self):
        return {
            "ssh_host_reports": ssh_host_reports,
            "node_addresses": node_addresses,
        }
