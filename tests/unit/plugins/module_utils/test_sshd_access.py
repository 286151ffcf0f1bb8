# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Data-driven tests of sshd_access: sshd's pattern rules and login checks.

The expected answers are what OpenSSH's match.c/addrmatch.c/auth.c decide for the same input;
the effective configurations are recorded `sshd -T -C` answers (sshd_samples)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._ssh import sshd_access
from ansible_collections.torchfleet.cluster.tests.unit.plugins.module_utils import sshd_samples

GLOB_CASES = [
    # (string, pattern, matches)
    ('trainer', 'trainer', True),
    ('trainer', 'train*', True),
    ('trainer', '*', True),
    ('trainer', 'train?r', True),
    ('trainer', 'train?', False),
    ('trainer', 'Trainer', False),
    ('trainer', 'trainer2', False),
    ('', '*', True),
    ('a.b', 'a?b', True),
    ('axb', 'a.b', False),
    ('tr[a]iner', 'tr[a]iner', True),
    ('trainer', 'tr[a]iner', False),
    ('10.89.1.3', '10.89.1.*', True),
    ('10.89.10.3', '10.89.1.*', False),
]

PATTERN_LIST_CASES = [
    # (string, comma list, dolower, result)
    ('node1', 'node0,node1', False, 1),
    ('node1', 'node*,!node1', False, -1),
    ('node1', '!node1,node*', False, -1),
    ('node2', 'node*,!node1', False, 1),
    ('node2', '!node1', False, 0),
    ('node1', 'NODE1', False, 0),
    ('node1', 'NODE1', True, 1),
]

ADDR_CASES = [
    # (address, comma list, result) as addr_match_list() answers
    ('10.89.1.3', '10.89.1.0/24', 1),
    ('10.89.1.3', '10.89.0.0/16', 1),
    ('10.89.1.3', '10.89.2.0/24', 0),
    ('10.89.1.3', '10.89.1.3', 1),
    ('10.89.1.3', '10.89.1.30', 0),
    ('10.89.1.3', '10.89.1.*', 1),
    ('10.89.1.3', '10.89.1.?', 1),
    ('10.89.1.3', '!10.89.1.3,10.89.1.0/24', -1),
    ('10.89.1.3', '10.89.1.0/24,!10.89.1.3', -1),
    ('10.89.1.4', '!10.89.1.3,10.89.1.0/24', 1),
    ('10.89.1.4', '!10.89.1.3', 0),
    ('10.89.1.3', '0.0.0.0/0', 1),
    ('10.89.1.3', '::/0', 0),
    ('fd00::5', 'fd00::/64', 1),
    ('fd00:0:0:1::5', 'fd00::/64', 0),
    ('fd00::5', '10.0.0.0/8', 0),
    ('10.89.1.3', 'node1', 0),
    ('node1', '10.0.0.0/8', 0),
    ('10.89.1.3', '10.89.1.3/abc', 0),
]

BAD_ADDR_PATTERNS = [
    # sshd refuses to start with these: host bits set, mask too long for the family, empty entry
    '10.89.1.3/24',
    '10.0.0.0/33',
    '10.0.0.0/8,',
    '!',
]

USER_CASES = [
    # (user, host, addr, pattern, match_user())
    ('trainer', '10.89.1.3', '10.89.1.3', 'trainer', True),
    ('trainer', '10.89.1.3', '10.89.1.3', 'train*', True),
    ('trainer', '10.89.1.3', '10.89.1.3', 'root', False),
    ('trainer', '10.89.1.3', '10.89.1.3', 'trainer@10.89.1.3', True),
    ('trainer', '10.89.1.3', '10.89.1.3', 'trainer@192.0.2.1', False),
    ('trainer', '10.89.1.3', '10.89.1.3', 'trainer@10.89.1.0/24', True),
    ('trainer', '10.89.1.3', '10.89.1.3', 'trainer@10.89.1.*', True),
    ('trainer', '10.89.1.3', '10.89.1.3', '*@10.89.1.0/24', True),
    ('trainer', '10.89.1.3', '10.89.1.3', 'root@10.89.1.0/24', False),
    ('trainer', '10.89.1.3', '10.89.1.3', 'trainer@!10.89.1.3,10.89.1.0/24', False),
    ('trainer', '10.89.1.4', '10.89.1.4', 'trainer@!10.89.1.3,10.89.1.0/24', True),
    # With UseDNS off the host is the address, so a name never matches.
    ('trainer', '10.89.1.3', '10.89.1.3', 'trainer@node1', False),
    ('trainer', 'node1.cluster', '10.89.1.3', 'trainer@node1.*', True),
    ('trainer', 'node1.cluster', '10.89.1.3', 'trainer@NODE1.CLUSTER', True),
    ('trainer', 'node1.cluster', '10.89.1.3', 'trainer@*.cluster,!node1.cluster', False),
    # The last '@' splits user from host.
    ('a@b', '10.89.1.3', '10.89.1.3', 'a@b@10.89.1.3', True),
]

EFFECTIVE_USERS = {
    'none': {},
    'allow_user_host': {'allowusers': ['root@192.0.2.1', 'trainer']},
    'allow_cidr': {'allowusers': ['root', 'trainer@10.89.1.0/24']},
    'deny_root': {'denyusers': ['root'], 'allowusers': ['root', 'trainer']},
    'deny_glob_groups': {'denygroups': ['whe?l', 'adm*']},
    'allow_groups': {'allowgroups': ['root', 'train*']},
    'allow_groups_root': {'allowgroups': ['root']},
}

REFUSAL_CASES = [
    # (effective, user, groups, addr, expected reason or None)
    ('none', 'root', ['root'], '10.89.1.1', None),
    ('allow_user_host', 'root', ['root'], '10.89.1.1', 'no AllowUsers pattern matches it (AllowUsers root@192.0.2.1 trainer)'),
    ('allow_user_host', 'root', ['root'], '192.0.2.1', None),
    ('allow_user_host', 'trainer', ['trainer'], '10.89.1.3', None),
    ('allow_cidr', 'trainer', ['trainer'], '10.89.1.3', None),
    ('allow_cidr', 'trainer', ['trainer'], '10.89.2.3', 'no AllowUsers pattern matches it (AllowUsers root trainer@10.89.1.0/24)'),
    ('deny_root', 'root', ['root'], '10.89.1.1', "DenyUsers pattern 'root' matches it"),
    ('deny_root', 'trainer', ['trainer'], '10.89.1.1', None),
    ('deny_glob_groups', 'trainer', ['trainer', 'wheel'], '10.89.1.3', "its group 'wheel' matches DenyGroups pattern 'whe?l'"),
    ('deny_glob_groups', 'trainer', ['trainer', 'admins'], '10.89.1.3', "its group 'admins' matches DenyGroups pattern 'adm*'"),
    ('deny_glob_groups', 'trainer', ['trainer'], '10.89.1.3', None),
    ('allow_groups', 'trainer', ['trainer'], '10.89.1.3', None),
    ('allow_groups', 'root', ['root'], '10.89.1.1', None),
    ('allow_groups_root', 'trainer', ['trainer', 'users'], '10.89.1.3', 'none of its groups (trainer users) matches AllowGroups root'),
    ('allow_groups_root', 'nobody', [], '10.89.1.3', 'none of its groups (none) matches AllowGroups root'),
]

LISTEN_CASES = [
    # (listenaddress values, laddr, lport, refused)
    (['[::]:22', '0.0.0.0:22'], '10.89.1.2', 22, False),
    (['[::]:2222', '0.0.0.0:2222'], '10.89.1.2', 22, True),
    (['10.89.1.2:22'], '10.89.1.2', 22, False),
    (['10.89.1.9:22'], '10.89.1.2', 22, True),
    (['[::]:22'], '10.89.1.2', 22, True),
    (['[::]:22'], 'fd00::2', 22, False),
    (['0.0.0.0:22'], 'fd00::2', 22, True),
    (['[fd00::2]:22 rdomain 3'], 'fd00::2', 22, False),
    (['0.0.0.0:22', '0.0.0.0:2222'], '10.89.1.2', 2222, False),
]

ROOT_EFFECTIVE = sshd_access.parse_effective(sshd_samples.SSHD_T_CONVERGED_ROOT)

METHOD_CASES = [
    # (changes to the converged root configuration, user, method, key_type, expected refusals)
    ({}, 'root', 'publickey', None, []),
    ({}, 'root', 'password', None, [
        'PasswordAuthentication and KbdInteractiveAuthentication are no and it logs in with a password',
        'PermitRootLogin without-password refuses root logging in with password']),
    ({'passwordauthentication': ['yes'], 'permitrootlogin': ['yes']}, 'root', 'password', None, []),
    ({'passwordauthentication': ['yes']}, 'trainer', 'password', None, []),
    ({'kbdinteractiveauthentication': ['yes']}, 'trainer', 'password', None, []),
    ({'pubkeyauthentication': ['no']}, 'trainer', 'publickey', None, ['PubkeyAuthentication is no and it logs in with a key']),
    ({'permitrootlogin': ['no']}, 'root', 'publickey', None, ['PermitRootLogin no refuses root logging in with publickey']),
    ({'permitrootlogin': ['forced-commands-only']}, 'root', 'publickey', None,
     ['PermitRootLogin forced-commands-only refuses root logging in with publickey']),
    ({'permitrootlogin': ['no']}, 'trainer', 'publickey', None, []),
    ({}, 'trainer', 'publickey', 'ssh-ed25519', []),
    ({'pubkeyacceptedalgorithms': ['rsa-sha2-512,rsa-sha2-256']}, 'trainer', 'publickey', 'ssh-ed25519',
     ['PubkeyAcceptedAlgorithms does not include ssh-ed25519, the type of its key']),
    ({'authenticationmethods': ['publickey,password']}, 'trainer', 'publickey', None,
     ['AuthenticationMethods publickey,password asks for more than publickey']),
    ({'authenticationmethods': ['publickey,password publickey']}, 'trainer', 'publickey', None, []),
    ({'authenticationmethods': ['keyboard-interactive:pam'], 'kbdinteractiveauthentication': ['yes']}, 'trainer', 'password', None, []),
]

KEYS_FILE_CASES = [
    # (authorizedkeysfile value, user, home, uid, files sshd reads)
    ('.ssh/authorized_keys .ssh/authorized_keys2', 'trainer', '/home/trainer', 1000,
     ['/home/trainer/.ssh/authorized_keys', '/home/trainer/.ssh/authorized_keys2']),
    ('/etc/ssh/keys/%u %h/.ssh/keys %%h', 'trainer', '/home/trainer/', 1000,
     ['/etc/ssh/keys/trainer', '/home/trainer//.ssh/keys', '/home/trainer/%h']),
    ('/etc/ssh/keys/%U', 'trainer', '/home/trainer', 1000, ['/etc/ssh/keys/1000']),
    ('/etc/ssh/keys/%U', 'trainer', '/home/trainer', None, ['/etc/ssh/keys/%U']),
    ('none', 'trainer', '/home/trainer', 1000, []),
]


@pytest.mark.parametrize('string, pattern, matches', GLOB_CASES)
def test_match_pattern(string, pattern, matches):
    assert sshd_access.match_pattern(string, pattern) is matches


@pytest.mark.parametrize('string, pattern_list, dolower, result', PATTERN_LIST_CASES)
def test_match_pattern_list(string, pattern_list, dolower, result):
    assert sshd_access.match_pattern_list(string, pattern_list, dolower) == result


@pytest.mark.parametrize('addr, pattern_list, result', ADDR_CASES)
def test_addr_match_list(addr, pattern_list, result):
    assert sshd_access.addr_match_list(addr, pattern_list) == result


@pytest.mark.parametrize('pattern_list', BAD_ADDR_PATTERNS)
def test_addr_patterns_sshd_rejects(pattern_list):
    with pytest.raises(sshd_access.PatternError):
        sshd_access.addr_match_list('10.89.1.3', pattern_list)


@pytest.mark.parametrize('user, host, addr, pattern, matches', USER_CASES)
def test_match_user(user, host, addr, pattern, matches):
    assert sshd_access.match_user(user, host, addr, pattern) is matches


@pytest.mark.parametrize('effective, user, groups, addr, reason', REFUSAL_CASES)
def test_user_refusal(effective, user, groups, addr, reason):
    assert sshd_access.user_refusal(EFFECTIVE_USERS[effective], user, groups, addr, addr) == reason


@pytest.mark.parametrize('listening, laddr, lport, refused', LISTEN_CASES)
def test_listen_refusal(listening, laddr, lport, refused):
    refusal = sshd_access.listen_refusal({'listenaddress': listening}, laddr, lport)
    assert (refusal is not None) is refused
    if refused:
        assert refusal.startswith('sshd would no longer listen on %s port %s' % (laddr, lport))


@pytest.mark.parametrize('changes, user, method, key_type, refusals', METHOD_CASES)
def test_method_refusals(changes, user, method, key_type, refusals):
    effective = dict(ROOT_EFFECTIVE, **changes)
    assert sshd_access.method_refusals(effective, user, method, key_type) == refusals


@pytest.mark.parametrize('value, user, home, uid, files', KEYS_FILE_CASES)
def test_authorized_keys_files(value, user, home, uid, files):
    assert sshd_access.authorized_keys_files({'authorizedkeysfile': [value]}, user, home, uid) == files


def test_parse_effective_keeps_repeated_keywords():
    effective = sshd_access.parse_effective(sshd_samples.SSHD_T_LOCKOUT_ROOT)
    assert effective['allowusers'] == ['root@192.0.2.1', 'trainer']
    assert effective['listenaddress'] == ['[::]:22', '0.0.0.0:22']
    assert effective['permitrootlogin'] == ['without-password']


RECORDED_LOGIN_CASES = [
    # (recorded sshd -T -C answer, login, refusals)
    ('SSHD_T_CONVERGED_ROOT', dict(user='root', groups=['root'], addr='10.89.1.1', laddr='10.89.1.2', lport=22), []),
    ('SSHD_T_LOCKOUT_ROOT', dict(user='root', groups=['root'], addr='10.89.1.1', laddr='10.89.1.2', lport=22),
     ["DenyUsers pattern 'root' matches it"]),
    ('SSHD_T_LOCKOUT_ROOT', dict(user='trainer', groups=['trainer'], addr='10.89.1.3', laddr='10.89.1.2', lport=22), []),
    ('SSHD_T_PORT_PUBKEY_TRAINER', dict(user='trainer', groups=['trainer'], addr='10.89.1.3', laddr='10.89.1.2', lport=22),
     ['sshd would no longer listen on 10.89.1.2 port 22 (ListenAddress/Port give [::]:2222 0.0.0.0:2222)',
      'PubkeyAuthentication is no and it logs in with a key']),
    ('SSHD_T_MATCH_TRAINER', dict(user='trainer', groups=['trainer'], addr='10.89.1.3', laddr='10.89.1.2', lport=22),
     ["its group 'trainer' matches DenyGroups pattern 'train?r'"]),
    ('SSHD_T_MATCH_TRAINER', dict(user='trainer', groups=['users'], addr='10.89.1.3', laddr='10.89.1.2', lport=22), []),
    ('SSHD_T_MATCH_TRAINER', dict(user='trainer', groups=['users'], addr='192.0.2.1', laddr='10.89.1.2', lport=22),
     ['no AllowUsers pattern matches it (AllowUsers root trainer@!192.0.2.1,10.89.1.0/24)']),
]


@pytest.mark.parametrize('sample, login, refusals', RECORDED_LOGIN_CASES)
def test_login_refusals_on_recorded_configurations(sample, login, refusals):
    effective = sshd_access.parse_effective(getattr(sshd_samples, sample))
    login = dict(login, host=login['addr'], method='publickey', key_type='ssh-ed25519')
    assert sshd_access.login_refusals(effective, login) == refusals


def test_session_refusals():
    effective = dict(ROOT_EFFECTIVE, forcecommand=['/bin/false'], maxsessions=['0'])
    assert sshd_access.session_refusals(effective) == [
        "ForceCommand '/bin/false' would replace every command it runs", 'MaxSessions 0 allows no sessions']
    assert sshd_access.session_refusals(ROOT_EFFECTIVE) == []


def test_keys_file_refusals():
    effective = sshd_access.parse_effective(sshd_samples.SSHD_T_MATCH_TRAINER)
    assert sshd_access.keys_file_refusals(effective, 'trainer', '/home/trainer', ['/home/trainer/.ssh/authorized_keys']) == [
        'AuthorizedKeysFile /etc/ssh/keys/%u no longer reads /home/trainer/.ssh/authorized_keys, where its key is']
    assert sshd_access.keys_file_refusals(effective, 'trainer', '/home/trainer', ['/etc/ssh/keys/trainer']) == []
