# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Addresses and networks of the firewall role, parsed and judged with the ipaddress module.

Documentation lives beside this file, one YAML file per filter.
"""

from __future__ import annotations

import ipaddress
import re

from ansible.errors import AnsibleFilterError
from ansible_collections.torchfleet.cluster.plugins.plugin_utils.plain import plain

# RFC 1123 host names: dot-separated labels of letters, digits and inner hyphens.
_HOSTNAME_RE = re.compile(r"^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$")


def _as_list(value):
    value = plain(value)
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _network(entry):
    """An ip_network for an address or CIDR (host bits allowed), None when it is neither."""
    if not isinstance(entry, str) or not entry.strip():
        return None
    try:
        return ipaddress.ip_network(entry.strip(), strict=False)
    except ValueError:
        return None


def _text(network):
    """A host network as its bare address, any other network in CIDR form."""
    if network.prefixlen == network.max_prefixlen:
        return str(network.network_address)
    return str(network)


def ip_networks(entries, what="address"):
    """Normalised addresses/networks; fails naming ``what`` and the first bad entry."""
    result = []
    for entry in _as_list(entries):
        network = _network(entry)
        if network is None:
            raise AnsibleFilterError(f"{what} entry {entry!r} is not an IPv4/IPv6 address or network (CIDR)")
        if _text(network) not in result:
            result.append(_text(network))
    return result


def ip_or_name(entries, what="address"):
    """Split entries into IP literals and host names; fails on anything that is neither."""
    split = {"addresses": [], "names": []}
    for entry in _as_list(entries):
        network = _network(entry)
        if network is not None and network.prefixlen == network.max_prefixlen:
            split["addresses"].append(_text(network))
        elif isinstance(entry, str) and _network(entry) is None and _HOSTNAME_RE.match(entry.strip()) \
                and not entry.strip().replace(".", "").isdigit():
            split["names"].append(entry.strip())
        else:
            raise AnsibleFilterError(f"{what} entry {entry!r} is neither an IPv4/IPv6 address nor a host name")
    return split


def usable_addresses(addresses):
    """The addresses a peer can come from: no loopback, link-local, multicast or unspecified; deduplicated."""
    result = []
    for entry in _as_list(addresses):
        try:
            address = ipaddress.ip_address(str(entry).split("%", maxsplit=1)[0])
        except ValueError:
            continue
        if address.is_loopback or address.is_link_local or address.is_multicast or address.is_unspecified:
            continue
        if str(address) not in result:
            result.append(str(address))
    return sorted(result, key=lambda text: ipaddress.ip_address(text).version)


def facts_addresses(facts):
    """The usable addresses in a host's gathered network facts, IPv4 and IPv6."""
    facts = plain(facts) or {}
    return usable_addresses(list(facts.get("all_ipv4_addresses", [])) + list(facts.get("all_ipv6_addresses", [])))


def getent_addresses(stdout):
    """The addresses in ``getent ahosts NAME`` output (first column), in order, deduplicated."""
    found = []
    for line in str(stdout).splitlines():
        fields = line.split()
        if fields and _network(fields[0]) is not None and fields[0] not in found:
            found.append(fields[0])
    return found


def ip_family(entries, version):
    """The entries of one IP version (4 or 6)."""
    return [entry for entry in ip_networks(entries) if ipaddress.ip_network(entry).version == int(version)]


def ip_admits(networks, address):
    """Whether ``address`` lies in one of ``networks``."""
    try:
        client = ipaddress.ip_address(str(address).split("%", maxsplit=1)[0])
    except ValueError:
        return False
    return any(client in ipaddress.ip_network(entry) for entry in ip_networks(networks)
               if ipaddress.ip_network(entry).version == client.version)


def ip_outside(addresses, networks):
    """The ``addresses`` that none of ``networks`` admits."""
    return [address for address in _as_list(addresses) if not ip_admits(networks, address)]


def member_addresses(members, hostvars):
    """{member: [addresses]} for the firewall role: what each member recorded for itself in this
    play (``_firewall_self_addresses``), else, for members outside the play (--limit), the literal
    addresses of its ``torch_node_address``, else every usable address in its facts."""
    table = {}
    for member in _as_list(members):
        host = hostvars[member]
        if "_firewall_self_addresses" in host:
            table[member] = usable_addresses(host["_firewall_self_addresses"])
        elif "torch_node_address" in host:
            table[member] = usable_addresses(ip_or_name(host["torch_node_address"], f"torch_node_address of {member}")["addresses"])
        else:
            table[member] = facts_addresses(host.get("ansible_facts", {}))
    return table


def _split_endpoint(endpoint):
    """('10.0.0.1', 22) from '10.0.0.1:22' or '[fd42::1]:22' as ss prints them."""
    host, dummy, port = endpoint.rpartition(":")
    return host.strip("[]").split("%", maxsplit=1)[0], int(port) if port.isdigit() else None


def ss_peers(stdout, ports):
    """Peer addresses of the TCP connections in ``ss -Htn state established`` output whose local port is one of ``ports``."""
    wanted = {int(port) for port in _as_list(ports)}
    peers = []
    for line in str(stdout).splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        local_port = _split_endpoint(fields[2])[1]
        peer = _split_endpoint(fields[3])[0]
        if local_port in wanted and peer not in peers:
            peers.append(peer)
    return peers


class FilterModule:
    def filters(self):
        return {
            "ip_networks": ip_networks,
            "ip_or_name": ip_or_name,
            "usable_addresses": usable_addresses,
            "facts_addresses": facts_addresses,
            "getent_addresses": getent_addresses,
            "ip_family": ip_family,
            "ip_admits": ip_admits,
            "ip_outside": ip_outside,
            "member_addresses": member_addresses,
            "ss_peers": ss_peers,
        }
