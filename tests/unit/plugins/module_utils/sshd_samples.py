# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Recorded answers of OpenSSH 9.2p1 (Debian bookworm test node) for the sshd_candidate tests.

Each SSHD_T_* is `sshd -T -f SCRATCH -C user=...,host=...,addr=...,laddr=...,lport=...` with
the candidate named in its comment, cut down to the keywords the evaluation reads."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# The default PubkeyAcceptedAlgorithms of OpenSSH 9.2p1, as sshd -T prints it.
PUBKEY_ACCEPTED_ALGORITHMS = (
    'ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,'
    'ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,'
    'sk-ssh-ed25519-cert-v01@openssh.com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,'
    'rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com,ssh-ed25519,'
    'ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@openssh.com,'
    'sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,rsa-sha2-256'
)

# the role's usual drop-in, root from the controller (10.89.1.1) to node0 (10.89.1.2:22)
SSHD_T_CONVERGED_ROOT = (
    'port 22\n'
    'listenaddress [::]:22\n'
    'listenaddress 0.0.0.0:22\n'
    'maxsessions 10\n'
    'permitrootlogin without-password\n'
    'pubkeyauthentication yes\n'
    'passwordauthentication no\n'
    'kbdinteractiveauthentication no\n'
    'usedns no\n'
    'forcecommand none\n'
    'pubkeyacceptedalgorithms ' + PUBKEY_ACCEPTED_ALGORITHMS + '\n'
    'authorizedkeysfile .ssh/authorized_keys .ssh/authorized_keys2\n'
    'authenticationmethods any\n'
)

# plus 'AllowUsers root@192.0.2.1 trainer' and 'DenyUsers root', same connection
SSHD_T_LOCKOUT_ROOT = (
    'port 22\n'
    'listenaddress [::]:22\n'
    'listenaddress 0.0.0.0:22\n'
    'maxsessions 10\n'
    'permitrootlogin without-password\n'
    'pubkeyauthentication yes\n'
    'passwordauthentication no\n'
    'kbdinteractiveauthentication no\n'
    'usedns no\n'
    'forcecommand none\n'
    'pubkeyacceptedalgorithms ' + PUBKEY_ACCEPTED_ALGORITHMS + '\n'
    'authorizedkeysfile .ssh/authorized_keys .ssh/authorized_keys2\n'
    'allowusers root@192.0.2.1\n'
    'allowusers trainer\n'
    'denyusers root\n'
    'authenticationmethods any\n'
)

# plus 'Port 2222' and 'PubkeyAuthentication no', trainer from node1 (10.89.1.3)
SSHD_T_PORT_PUBKEY_TRAINER = (
    'port 2222\n'
    'listenaddress [::]:2222\n'
    'listenaddress 0.0.0.0:2222\n'
    'maxsessions 10\n'
    'permitrootlogin without-password\n'
    'pubkeyauthentication no\n'
    'passwordauthentication no\n'
    'kbdinteractiveauthentication no\n'
    'usedns no\n'
    'forcecommand none\n'
    'pubkeyacceptedalgorithms ' + PUBKEY_ACCEPTED_ALGORITHMS + '\n'
    'authorizedkeysfile .ssh/authorized_keys .ssh/authorized_keys2\n'
    'authenticationmethods any\n'
)

# plus 'AllowUsers root trainer@!192.0.2.1,10.89.1.0/24' and a 'Match Address 10.89.1.0/24' block with
# 'DenyGroups train?r' and 'AuthorizedKeysFile /etc/ssh/keys/%u', trainer from node1
SSHD_T_MATCH_TRAINER = (
    'port 22\n'
    'listenaddress [::]:22\n'
    'listenaddress 0.0.0.0:22\n'
    'maxsessions 10\n'
    'permitrootlogin without-password\n'
    'pubkeyauthentication yes\n'
    'passwordauthentication no\n'
    'kbdinteractiveauthentication no\n'
    'usedns no\n'
    'forcecommand none\n'
    'pubkeyacceptedalgorithms ' + PUBKEY_ACCEPTED_ALGORITHMS + '\n'
    'authorizedkeysfile /etc/ssh/keys/%u\n'
    'allowusers root\n'
    'allowusers trainer@!192.0.2.1,10.89.1.0/24\n'
    'denygroups train?r\n'
    'authenticationmethods any\n'
)

# `sshd -t` (rc 255) for a drop-in with a keyword sshd does not know; SCRATCH is the scratch directory.
SSHD_BAD_KEYWORD_ERROR = (
    'SCRATCH/d/10-torchfleet.conf: line 6: Bad configuration option: NoSuchKeyword\n'
    'SCRATCH/d/10-torchfleet.conf: terminating, 1 bad configuration options\n'
)

# Debian bookworm's /etc/ssh/sshd_config, without its comments.
DEBIAN_SSHD_CONFIG = (
    'Include /etc/ssh/sshd_config.d/*.conf\n'
    'KbdInteractiveAuthentication no\n'
    'UsePAM yes\n'
    'X11Forwarding yes\n'
    'PrintMotd no\n'
    'AcceptEnv LANG LC_*\n'
    'Subsystem\tsftp\t/usr/lib/openssh/sftp-server\n'
)
