# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a node says about itself (its host name, FQDN, addresses and SSH host keys), judged on the
controller before any other node or file uses it.

A node's facts are whatever its root chooses to report. The values end up in other nodes'
``/etc/ssh/ssh_known_hosts``, ``~/.ssh/config``, ``/etc/hosts`` and MPI hostfile, where a ``*``
or a ``,`` is a pattern, a newline is a new entry and ``!`` negates one. So only these pass:

- host names: RFC 1123 (dot-separated labels of ASCII letters, digits and inner hyphens), never
  all digits and dots (that is an address or nothing);
- addresses: what ``ipaddress`` parses, as a string, without a ``%scope`` unless asked for;
- host keys: a type from ``HOST_KEY_TYPES`` and strict base64 whose decoded blob is an SSH public
  key of that same type, field by field with nothing left over.

Valid values come back unchanged (no case folding, no address normalisation), so files rendered
from them stay byte-identical. Invalid ones raise ``NodeReportError`` with the reason; callers
name the host and the field.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
import struct
from collections.abc import Mapping

from ansible_collections.torchfleet.cluster.plugins.plugin_utils.plain import plain

HOST_KEY_TYPES = ("ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "ssh-rsa")

# Wire format of each type's public key blob (RFC 4253 6.6, RFC 5656 3.1, RFC 8709 4): the
# length-prefixed fields after the type string.
_KEY_FIELDS = {
    "ssh-ed25519": ("public key",),
    "ecdsa-sha2-nistp256": ("curve", "point"),
    "ecdsa-sha2-nistp384": ("curve", "point"),
    "ecdsa-sha2-nistp521": ("curve", "point"),
    "ssh-rsa": ("exponent", "modulus"),
}
_ED25519_KEY_BYTES = 32
# A 16384-bit RSA key is about 2.8 KB of base64; anything far beyond is not a host key.
_MAX_KEY_CHARS = 8192

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*", re.ASCII)
_DIGITS_AND_DOTS = re.compile(r"[0-9.]+", re.ASCII)
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?", re.ASCII)
_SCOPE = re.compile(r"[A-Za-z0-9_.-]{1,64}", re.ASCII)
_SHOWN_CHARS = 80


class NodeReportError(ValueError):
    """A reported value that must not be used; the message says why."""


def shown(value):
    """The value as a message may quote it: repr (control characters escaped), at most 80 characters."""
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS - 3] + "..."


def _text(value, what):
    if not isinstance(value, str):
        raise NodeReportError(f"{what} must be a string, not {type(value).__name__}")
    if not value:
        raise NodeReportError(f"{what} is empty")
    return value


def host_name(value):
    """``value`` when it is an RFC 1123 host name, else NodeReportError."""
    _text(value, "a host name")
    if len(value) > 253 or not _HOST_NAME.fullmatch(value):
        raise NodeReportError("not an RFC 1123 host name (ASCII letters, digits and inner '-' in dot-separated labels)")
    if _DIGITS_AND_DOTS.fullmatch(value):
        raise NodeReportError("only digits and dots, yet not an IP address")
    return value


def ip_address(value, allow_scope=False):
    """``value`` when ``ipaddress`` parses it as an IPv4 or IPv6 address, else NodeReportError.
    An IPv6 ``%scope`` passes only with ``allow_scope``, and then only letters, digits, '_', '.', '-'."""
    _text(value, "an address")
    bare, percent, scope = value.partition("%")
    if percent and not allow_scope:
        raise NodeReportError("an address with a scope (%...) names no host for other nodes")
    if percent and not _SCOPE.fullmatch(scope):
        raise NodeReportError("the scope after '%' is not an interface name or number")
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        raise NodeReportError("not an IPv4 or IPv6 address") from None
    if percent and address.version != 6:
        raise NodeReportError("only an IPv6 address has a scope")
    return value


def address_or_name(value):
    """``value`` when it is an IP address (no scope) or a host name, else NodeReportError."""
    try:
        return ip_address(value)
    except NodeReportError:
        pass
    try:
        return host_name(value)
    except NodeReportError:
        raise NodeReportError("neither an IP address nor an RFC 1123 host name") from None


def _fields(blob):
    """The length-prefixed strings of an SSH wire-format blob; NodeReportError when it does not split into them."""
    fields = []
    offset = 0
    while offset < len(blob):
        if len(blob) - offset < 4:
            raise NodeReportError("the key data ends inside a length field")
        (length,) = struct.unpack(">I", blob[offset:offset + 4])
        offset += 4
        if length > len(blob) - offset:
            raise NodeReportError("the key data ends inside a field")
        fields.append(blob[offset:offset + length])
        offset += length
    return fields


def host_key(key_type, material):
    """``(key_type, material)`` when ``key_type`` is an accepted host key type and ``material`` is
    strict base64 of a public key blob of that type, else NodeReportError."""
    _text(key_type, "the key type")
    if key_type not in HOST_KEY_TYPES:
        raise NodeReportError(f"key type {shown(key_type)} is not one of {', '.join(HOST_KEY_TYPES)}")
    _text(material, "the key")
    if len(material) > _MAX_KEY_CHARS or not _BASE64.fullmatch(material):
        raise NodeReportError("the key is not strict base64")
    try:
        blob = base64.b64decode(material, validate=True)
    except (binascii.Error, ValueError):
        raise NodeReportError("the key is not strict base64") from None
    fields = _fields(blob)
    if not fields or fields[0] != key_type.encode("ascii"):
        embedded = shown(fields[0].decode("ascii", "replace")) if fields else "nothing"
        raise NodeReportError(f"the key's data says {embedded}, not {shown(key_type)}")
    wanted = _KEY_FIELDS[key_type]
    if len(fields) - 1 != len(wanted) or not all(fields[1:]):
        raise NodeReportError(f"a {key_type} key holds {' and '.join(wanted)}, nothing else and nothing empty")
    if key_type == "ssh-ed25519" and len(fields[1]) != _ED25519_KEY_BYTES:
        raise NodeReportError(f"an ssh-ed25519 key is {_ED25519_KEY_BYTES} bytes, this one {len(fields[1])}")
    if key_type.startswith("ecdsa-sha2-") and fields[1] != key_type[len("ecdsa-sha2-"):].encode("ascii"):
        raise NodeReportError(f"the key's curve {shown(fields[1].decode('ascii', 'replace'))} is not that of {key_type}")
    return key_type, material


def _dig(mapping, path):
    """mapping[a][b]... for path 'a.b...', None where any step is missing."""
    for step in path.split("."):
        if not isinstance(mapping, Mapping) or step not in mapping:
            return None
        mapping = mapping[step]
    return mapping


# Where a member's names come from, in the order they are written. "facts." fields are what the
# node reports; the others are the controller's inventory. Each with the check it must pass.
SSH_NAME_SOURCES = (
    ("facts.hostname", host_name),
    ("facts.fqdn", host_name),
    ("ansible_host", address_or_name),
    ("torch_node_address", address_or_name),
    ("facts.default_ipv4.address", ip_address),
)


def _field_label(source):
    return source.replace("facts.", "ansible_facts.", 1)


def ssh_host_report(member, host_vars, key_facts):
    """What other nodes may record about ``member`` (its inventory name and the ``hostvars`` entry
    ``host_vars``): ``names`` (the inventory name first, then every valid name of SSH_NAME_SOURCES,
    duplicates dropped ignoring case), ``host_keys`` ([{type, key}] for each of ``key_facts`` the
    node reports and that is valid), ``dropped`` (a message per name left out) and ``refused``
    (a message per host key that is not valid)."""
    host_vars = host_vars if isinstance(host_vars, Mapping) else {}
    facts = host_vars.get("ansible_facts") if isinstance(host_vars.get("ansible_facts"), Mapping) else {}
    member = str(member)
    report = {"names": [member], "host_keys": [], "dropped": [], "refused": []}
    seen = {member.lower()}
    for source, check in SSH_NAME_SOURCES:
        value = plain(_dig(facts, source[len("facts."):]) if source.startswith("facts.") else host_vars.get(source))
        if value is None or value == "":
            continue
        try:
            name = check(value)
        except NodeReportError as error:
            report["dropped"].append(f"{member}: {_field_label(source)} {shown(value)} left out of the names other nodes know it by: {error}")
            continue
        if name.lower() not in seen:
            seen.add(name.lower())
            report["names"].append(name)
    for fact in key_facts:
        material = plain(facts.get(fact))
        if material is None or material == "":
            continue
        key_type = plain(facts.get(fact + "_keytype"))
        try:
            host_key(key_type, material)
        except NodeReportError as error:
            report["refused"].append(f"{member}: ansible_facts.{fact} ({shown(key_type)}) refused: {error}")
            continue
        report["host_keys"].append({"type": key_type, "key": material})
    return report


def node_address(member, host_vars):
    """The address ``member`` is reached by: its inventory ``torch_node_address`` (an address or a
    host name), else the ``default_ipv4`` address it reports; None when it has neither.
    NodeReportError, naming the host and the field, when the one it has is not valid."""
    host_vars = host_vars if isinstance(host_vars, Mapping) else {}
    if "torch_node_address" in host_vars:
        source, value, check = "torch_node_address", plain(host_vars["torch_node_address"]), address_or_name
    else:
        source, check = "ansible_facts.default_ipv4.address", ip_address
        value = plain(_dig(host_vars, "ansible_facts.default_ipv4.address"))
        if value is None:
            return None
    try:
        return check(value)
    except NodeReportError as error:
        raise NodeReportError(f"{member}: {source} {shown(value)} refused: {error}") from None
