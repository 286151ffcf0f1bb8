#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: sshd_candidate
short_description: Check that a candidate sshd drop-in keeps the logins that must keep working
version_added: 0.1.0
description:
  - Copies the main sshd configuration and every file beside O(dropin) into a private scratch
    directory, puts O(content) there in place of O(dropin), and validates the result with C(sshd -t),
    the way sshd would read it after a reload.
  - Checks that each keyword of O(expect) has that effective value in C(sshd -T); sshd keeps the
    first value it reads, so a file read earlier can override the candidate.
  - For each entry of O(logins), asks C(sshd -T -C) for the configuration that connection would get
    (C(Match) blocks applied) and evaluates it as sshd does, that is C(DenyUsers) and C(AllowUsers)
    (C(user@host) patterns, C(*) and C(?) globs, C(!) negation, CIDR addresses), C(DenyGroups) and
    C(AllowGroups), public key or password authentication, C(AuthenticationMethods),
    C(PermitRootLogin), the address and port sshd listens on, C(AuthorizedKeysFile),
    C(ForceCommand) and C(MaxSessions).
  - Fails, naming the login, the user, the client address and the keyword, when sshd would refuse
    one of them. Nothing on the node changes; the scratch directory is removed again.
author:
  - torchfleet developers (@torchfleet)
extends_documentation_fragment:
  - torchfleet.cluster.attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
options:
  content:
    description:
      - The candidate text of O(dropin).
    type: str
    required: true
  dropin:
    description:
      - Path of the drop-in the candidate would replace (or create). Every other file in its
        directory is read as it is.
    type: path
    required: true
  main_config:
    description:
      - Main sshd configuration. It must C(Include) the directory of O(dropin).
    type: path
    default: /etc/ssh/sshd_config
  sshd:
    description:
      - The sshd binary.
    type: path
    default: /usr/sbin/sshd
  expect:
    description:
      - Keywords (lower case, as C(sshd -T) prints them) and the value each must have once the
        candidate is in place, for example C(passwordauthentication=no).
    type: dict
    default: {}
  logins:
    description:
      - The connections sshd must still accept with the candidate.
    type: list
    elements: dict
    default: []
    suboptions:
      label:
        description:
          - What the login is, for messages, for example C(Ansible's own login to node0).
        type: str
        required: true
      user:
        description:
          - The user that logs in.
        type: str
        required: true
      groups:
        description:
          - The user's group names (C(id -Gn)), for C(AllowGroups) and C(DenyGroups).
        type: list
        elements: str
        default: []
      addr:
        description:
          - The client address sshd sees.
        type: str
        required: true
      host:
        description:
          - The client host name sshd sees.
          - Defaults to the name the address resolves back to when C(UseDNS) is on, else the address.
        type: str
      laddr:
        description:
          - The local address the client connects to.
        type: str
        required: true
      lport:
        description:
          - The local port the client connects to.
        type: int
        required: true
      method:
        description:
          - How the login authenticates.
        type: str
        choices: [publickey, password]
        default: publickey
      key_type:
        description:
          - Algorithm of the login's key, for example C(ssh-ed25519); checked against C(PubkeyAcceptedAlgorithms).
        type: str
      authorized_keys:
        description:
          - The file the login's public key is authorized in; C(AuthorizedKeysFile) must still name it.
          - When omitted for a key login, every existing file the live configuration reads for that
            login must still be read.
        type: path
      home:
        description:
          - Home directory of O(logins[].user), for C(AuthorizedKeysFile); defaults to the passwd entry.
        type: path
notes:
  - Runs C(sshd -t) and C(sshd -T), which read the host keys, so it needs root.
  - Settings that depend on the client (C(Ciphers), C(KexAlgorithms), C(MACs)) are only validated,
    not matched against what the client offers.
seealso:
  - name: sshd_config(5)
    description: The keywords, C(Match) and the pattern syntax evaluated here.
    link: https://man.openbsd.org/sshd_config
'''

EXAMPLES = r'''
- name: Refuse a drop-in that would lock out the training user from the other nodes
  torchfleet.cluster.sshd_candidate:
    dropin: /etc/ssh/sshd_config.d/10-torchfleet.conf
    content: "{{ lookup('ansible.builtin.template', 'sshd_dropin.conf.j2') }}"
    expect:
      passwordauthentication: "no"
    logins:
      - label: the mesh login from node1
        user: trainer
        groups: [trainer]
        addr: 10.89.0.3
        laddr: 10.89.0.2
        lport: 22
        key_type: ssh-ed25519
        authorized_keys: /home/trainer/.ssh/authorized_keys
'''

RETURN = r'''
logins:
  description: The verdict for each login, in the order given.
  returned: success or when a login would be refused
  type: list
  elements: dict
  contains:
    label:
      description: The login's label.
      type: str
    user:
      description: The user.
      type: str
    addr:
      description: The client address.
      type: str
    host:
      description: The client host name the evaluation used.
      type: str
    refusals:
      description: Why sshd would refuse the login; empty when it lets it in.
      type: list
      elements: str
  sample:
    - label: Ansible's own login to node0
      user: root
      addr: 10.89.0.1
      host: 10.89.0.1
      refusals: ["DenyUsers pattern 'root' matches it"]
'''

import os
import pwd
import shutil
import socket
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.torchfleet.cluster.plugins.module_utils._ssh import sshd_access

SCRATCH_CONFIG = 'sshd_config'
SCRATCH_DROPINS = 'd'


def read_text(path):
    with open(path) as handle:
        return handle.read()


def write_text(path, text):
    with open(path, 'w') as handle:
        handle.write(text)


def build_scratch_config(module, scratch):
    """Copy the main config and the drop-in directory into SCRATCH with the candidate in place."""
    main_config = module.params['main_config']
    dropin = module.params['dropin']
    dropin_dir = os.path.dirname(dropin)
    copy_dir = os.path.join(scratch, SCRATCH_DROPINS)
    os.mkdir(copy_dir)
    try:
        names = sorted(os.listdir(dropin_dir))
        main_text = read_text(main_config)
    except (IOError, OSError) as exc:
        module.fail_json(msg='cannot read the sshd configuration around %s: %s' % (dropin, to_native(exc)))
    for name in names:
        source = os.path.join(dropin_dir, name)
        if os.path.isfile(source):
            write_text(os.path.join(copy_dir, name), read_text(source))
    write_text(os.path.join(copy_dir, os.path.basename(dropin)), module.params['content'])
    scratch_main = main_text.replace(dropin_dir + '/', copy_dir + '/')
    if scratch_main == main_text:
        module.fail_json(msg="%s does not Include %s/, so %s would be ignored; add 'Include %s/*.conf' at its top"
                             % (main_config, dropin_dir, dropin, dropin_dir))
    config = os.path.join(scratch, SCRATCH_CONFIG)
    write_text(config, scratch_main)
    return config


def run_sshd(module, args, what):
    rc, out, err = module.run_command([module.params['sshd']] + args)
    if rc != 0:
        module.fail_json(msg='the candidate for %s failed to validate within %s (%s): %s. Nothing was changed.'
                             % (module.params['dropin'], module.params['main_config'], what, (err or out).strip()))
    return out


def expectation_errors(module, effective):
    errors = []
    for keyword, value in sorted(module.params['expect'].items()):
        actual = effective.get(keyword.lower(), ['<unset>'])
        if [str(value).lower()] != [item.lower() for item in actual]:
            errors.append("effective setting is '%s %s', not '%s %s': a file read before %s sets it (sshd keeps the first value)"
                          % (keyword, ' '.join(actual), keyword, value, os.path.basename(module.params['dropin'])))
    return errors


def client_host(login, effective):
    """The host name sshd matches USER@HOST against: the address unless UseDNS resolves it."""
    if login.get('host'):
        return login['host']
    if sshd_access.first_value(effective, 'usedns') != 'yes':
        return login['addr']
    try:
        name = socket.gethostbyaddr(login['addr'])[0]
        forward = set(info[4][0] for info in socket.getaddrinfo(name, None))
    except (socket.error, socket.herror, socket.gaierror):
        return login['addr']
    return name.lower() if login['addr'] in forward else login['addr']


def connection_spec(login, host):
    return ['-C', 'user=%s,host=%s,addr=%s,laddr=%s,lport=%d' % (login['user'], host, login['addr'], login['laddr'], login['lport'])]


def passwd_entry(user):
    try:
        return pwd.getpwnam(user)
    except KeyError:
        return None


def live_keys_files(module, login, host, home, uid):
    """The existing authorized-keys files the live configuration reads for LOGIN."""
    rc, out, dummy = module.run_command([module.params['sshd'], '-T', '-f', module.params['main_config']] + connection_spec(login, host))
    if rc != 0:
        module.warn('could not read the live sshd configuration for %s; its authorized-keys files are not compared' % login['label'])
        return []
    files = sshd_access.authorized_keys_files(sshd_access.parse_effective(out), login['user'], home, uid)
    return [path for path in files if os.path.isfile(path)]


def evaluate_login(module, config, login, global_effective):
    host = client_host(login, global_effective)
    effective = sshd_access.parse_effective(run_sshd(module, ['-T', '-f', config] + connection_spec(login, host), 'sshd -T -C'))
    facts = dict(login, host=host)
    try:
        refusals = sshd_access.login_refusals(effective, facts)
    except sshd_access.PatternError as exc:
        refusals = ['sshd rejects a pattern: %s' % to_native(exc)]
    entry = passwd_entry(login['user'])
    home = login.get('home') or (entry.pw_dir if entry else None)
    uid = entry.pw_uid if entry else None
    if home and login['method'] == 'publickey':
        required = [login['authorized_keys']] if login.get('authorized_keys') else live_keys_files(module, login, host, home, uid)
        refusals.extend(sshd_access.keys_file_refusals(effective, login['user'], home, required, uid))
    return dict(label=login['label'], user=login['user'], addr=login['addr'], host=host, refusals=refusals)


def refusal_message(verdict, login):
    return "would cut off %s: sshd would refuse user '%s' from %s (to %s port %d): %s" % (
        verdict['label'], verdict['user'], verdict['addr'], login['laddr'], login['lport'], '; '.join(verdict['refusals']))


def main():
    login_spec = dict(
        label=dict(type='str', required=True),
        user=dict(type='str', required=True),
        groups=dict(type='list', elements='str', default=[]),
        addr=dict(type='str', required=True),
        host=dict(type='str'),
        laddr=dict(type='str', required=True),
        lport=dict(type='int', required=True),
        method=dict(type='str', choices=['publickey', 'password'], default='publickey'),
        key_type=dict(type='str'),
        authorized_keys=dict(type='path'),
        home=dict(type='path'),
    )
    module = AnsibleModule(
        argument_spec=dict(
            content=dict(type='str', required=True),
            dropin=dict(type='path', required=True),
            main_config=dict(type='path', default='/etc/ssh/sshd_config'),
            sshd=dict(type='path', default='/usr/sbin/sshd'),
            expect=dict(type='dict', default={}),
            logins=dict(type='list', elements='dict', default=[], options=login_spec),
        ),
        supports_check_mode=True,
    )
    scratch = tempfile.mkdtemp(prefix='torchfleet-sshd-')
    try:
        config = build_scratch_config(module, scratch)
        run_sshd(module, ['-t', '-f', config], 'sshd -t')
        global_effective = sshd_access.parse_effective(run_sshd(module, ['-T', '-f', config], 'sshd -T'))
        errors = expectation_errors(module, global_effective)
        verdicts = [evaluate_login(module, config, login, global_effective) for login in module.params['logins']]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    errors.extend(refusal_message(verdict, login) for verdict, login in zip(verdicts, module.params['logins']) if verdict['refusals'])
    if errors:
        module.fail_json(msg='the candidate for %s %s. Nothing was changed.' % (module.params['dropin'], '; '.join(errors)), logins=verdicts)
    module.exit_json(changed=False, logins=verdicts)


if __name__ == '__main__':
    main()
