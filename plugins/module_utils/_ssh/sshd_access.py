# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether sshd lets a login in, decided from the configuration that login gets.

The input is what ``sshd -T -C user=...,host=...,addr=...,laddr=...,lport=...`` prints
(Match blocks already applied). The pattern rules follow OpenSSH's match.c and addrmatch.c,
the order of the user checks follows allowed_user() in auth.c:

* DenyUsers/AllowUsers entries are ``USER`` or ``USER@HOST``; USER is a glob (``*``, ``?``);
  HOST is a comma list matched against both the client address (CIDR, exact address or glob)
  and the client host name (glob, case-insensitive); a ``!`` entry that matches vetoes it.
* DenyGroups/AllowGroups entries are single globs over the user's group names.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import re

KEY_METHODS = frozenset(['publickey'])
PASSWORD_METHODS = frozenset(['password', 'keyboard-interactive'])
WILDCARD_LISTEN = {4: ipaddress.ip_address(u'0.0.0.0'), 6: ipaddress.ip_address(u'::')}


class PatternError(ValueError):
    """A pattern sshd itself rejects (it refuses to start with it)."""


def parse_effective(text):
    """``sshd -T`` output as keyword -> list of values; keywords such as allowusers repeat."""
    effective = {}
    for line in text.splitlines():
        keyword, dummy, value = line.strip().partition(' ')
        if keyword:
            effective.setdefault(keyword.lower(), []).append(value.strip())
    return effective


def first_value(effective, keyword, default=''):
    values = effective.get(keyword)
    return values[0] if values else default


def match_pattern(string, pattern):
    """sshd's match_pattern(): ``*`` and ``?`` over the whole string; nothing else is special."""
    regex = ''.join('.*' if char == '*' else '.' if char == '?' else re.escape(char) for char in pattern)
    return re.match('(?s)' + regex + r'\Z', string) is not None


def match_pattern_list(string, pattern_list, dolower=False):
    """1 when a plain entry of the comma list matches, -1 when a ``!`` entry does, else 0."""
    result = 0
    for entry in pattern_list.split(','):
        negated = entry.startswith('!')
        if negated:
            entry = entry[1:]
        if dolower:
            entry = entry.lower()
        if match_pattern(string, entry):
            if negated:
                return -1
            result = 1
    return result


def parse_cidr(text):
    """The network TEXT names (a bare address is a host network), or None when TEXT is no
    address at all, so sshd falls back to glob matching; PatternError where sshd errors."""
    address_text, slash, masklen_text = text.partition('/')
    if slash and not masklen_text.isdigit():
        return None
    try:
        address = ipaddress.ip_address(address_text)
    except ValueError:
        return None
    masklen = int(masklen_text) if slash else address.max_prefixlen
    try:
        return ipaddress.ip_network(u'%s/%d' % (address, masklen), strict=True)
    except ValueError:
        raise PatternError('%s: bad mask length or host bits set' % text)


def addr_match_list(addr, pattern_list):
    """sshd's addr_match_list(): 1 match, -1 negated match, 0 none (or ADDR is no address)."""
    try:
        client = ipaddress.ip_address(addr)
    except ValueError:
        return 0
    result = 0
    for entry in pattern_list.split(','):
        negated = entry.startswith('!')
        if negated:
            entry = entry[1:]
        if not entry:
            raise PatternError('empty entry in %s' % pattern_list)
        network = parse_cidr(entry)
        if network is None:
            matched = match_pattern(addr, entry)
        else:
            matched = client.version == network.version and client in network
        if matched:
            if negated:
                return -1
            result = 1
    return result


def match_host_and_ip(host, addr, pattern_list):
    """True when the host part of a USER@HOST entry admits a client with this name and address."""
    addr_match = addr_match_list(addr, pattern_list)
    if addr_match == -1:
        return False
    host_match = match_pattern_list(host.lower(), pattern_list, dolower=True)
    if host_match == -1:
        return False
    return host_match == 1 or addr_match == 1


def match_user(user, host, addr, pattern):
    """True when a DenyUsers/AllowUsers entry names this user connecting from HOST/ADDR."""
    user_pattern, at, host_patterns = pattern.rpartition('@')
    if not at:
        return match_pattern(user, pattern)
    return match_pattern(user, user_pattern) and match_host_and_ip(host, addr, host_patterns)


def user_refusal(effective, user, groups, host, addr):
    """Why allowed_user() would turn USER from HOST/ADDR away, or None when it lets them in."""
    for pattern in effective.get('denyusers', []):
        if match_user(user, host, addr, pattern):
            return "DenyUsers pattern '%s' matches it" % pattern
    allow_users = effective.get('allowusers', [])
    if allow_users and not any(match_user(user, host, addr, pattern) for pattern in allow_users):
        return "no AllowUsers pattern matches it (AllowUsers %s)" % ' '.join(allow_users)
    for pattern in effective.get('denygroups', []):
        denied = [group for group in groups if match_pattern(group, pattern)]
        if denied:
            return "its group '%s' matches DenyGroups pattern '%s'" % (denied[0], pattern)
    allow_groups = effective.get('allowgroups', [])
    if allow_groups and not any(match_pattern(group, pattern) for group in groups for pattern in allow_groups):
        return "none of its groups (%s) matches AllowGroups %s" % (' '.join(groups) or 'none', ' '.join(allow_groups))
    return None


def listen_refusal(effective, laddr, lport):
    """Why sshd would no longer accept connections on LADDR port LPORT, or None."""
    listening = [entry.split()[0] for entry in effective.get('listenaddress', [])]
    try:
        local = ipaddress.ip_address(laddr)
    except ValueError:
        return None
    for entry in listening:
        host, dummy, port = entry.rpartition(':')
        try:
            address = ipaddress.ip_address(host.strip('[]'))
        except ValueError:
            continue
        if port == str(lport) and address in (local, WILDCARD_LISTEN[local.version]):
            return None
    if not listening:
        return None
    return 'sshd would no longer listen on %s port %s (ListenAddress/Port give %s)' % (laddr, lport, ' '.join(listening))


def method_refusals(effective, user, method, key_type=None):
    """Why the authentication method the login uses would no longer be offered to it."""
    refusals = []
    if method == 'publickey':
        if first_value(effective, 'pubkeyauthentication') != 'yes':
            refusals.append('PubkeyAuthentication is no and it logs in with a key')
        accepted = first_value(effective, 'pubkeyacceptedalgorithms').split(',')
        if key_type and key_type not in accepted:
            refusals.append('PubkeyAcceptedAlgorithms does not include %s, the type of its key' % key_type)
    elif 'yes' not in (first_value(effective, 'passwordauthentication'), first_value(effective, 'kbdinteractiveauthentication')):
        refusals.append('PasswordAuthentication and KbdInteractiveAuthentication are no and it logs in with a password')
    usable = KEY_METHODS if method == 'publickey' else PASSWORD_METHODS
    required = first_value(effective, 'authenticationmethods', 'any')
    if required != 'any' and not any(
            all(step.split(':')[0] in usable for step in methods.split(',')) for methods in required.split()):
        refusals.append('AuthenticationMethods %s asks for more than %s' % (required, method))
    if user == 'root':
        permit = first_value(effective, 'permitrootlogin')
        if permit != 'yes' and not (permit in ('without-password', 'prohibit-password') and method == 'publickey'):
            refusals.append('PermitRootLogin %s refuses root logging in with %s' % (permit, method))
    return refusals


def session_refusals(effective):
    """Settings that let the login authenticate but not run the commands it came for."""
    refusals = []
    force_command = first_value(effective, 'forcecommand', 'none')
    if force_command != 'none':
        refusals.append("ForceCommand '%s' would replace every command it runs" % force_command)
    if first_value(effective, 'maxsessions') == '0':
        refusals.append('MaxSessions 0 allows no sessions')
    return refusals


def authorized_keys_files(effective, user, home, uid=None):
    """Absolute paths of the authorized-keys files sshd reads for USER (tokens expanded)."""
    files = []
    for template in first_value(effective, 'authorizedkeysfile', 'none').split():
        if template == 'none':
            continue
        path = re.sub(r'%([%hUu])', lambda token: {
            '%': '%', 'h': home, 'u': user, 'U': str(uid) if uid is not None else token.group(0)}[token.group(1)], template)
        files.append(path if path.startswith('/') else '%s/%s' % (home.rstrip('/'), path))
    return files


def keys_file_refusals(effective, user, home, required_files, uid=None):
    """Why sshd would no longer read the authorized-keys files the login's key is in."""
    reading = authorized_keys_files(effective, user, home, uid)
    missing = [path for path in required_files if path not in reading]
    if not missing:
        return []
    return ['AuthorizedKeysFile %s no longer reads %s, where its key is' % (
        first_value(effective, 'authorizedkeysfile', 'none'), ' '.join(missing))]


def login_refusals(effective, login):
    """Every reason sshd, configured as EFFECTIVE for this connection, would refuse LOGIN.

    LOGIN holds user, groups, host, addr, laddr, lport, method and optionally key_type.
    """
    refusals = []
    listen = listen_refusal(effective, login['laddr'], login['lport'])
    if listen:
        refusals.append(listen)
    refusal = user_refusal(effective, login['user'], login.get('groups') or [], login['host'], login['addr'])
    if refusal:
        refusals.append(refusal)
    refusals.extend(method_refusals(effective, login['user'], login['method'], login.get('key_type')))
    refusals.extend(session_refusals(effective))
    return refusals
