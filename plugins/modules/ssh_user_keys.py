#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: ssh_user_keys
short_description: Install or read a user's SSH key pair, authorized key and client block without following the user's links
version_added: 0.1.0
description:
  - Runs as root and manages, for one user, C(~/.ssh) (mode C(0700), owned by the user), a private key
    (C(0600)) and its public key (C(0644)), a marked block in C(~/.ssh/authorized_keys) (the user's other
    lines are kept) and, optionally, a marked block in C(~/.ssh/config); all in one call.
  - The user controls their home directory, so nothing there is trusted. Every path is walked from C(/)
    through directory file descriptors with C(O_NOFOLLOW); files are read only when they are regular files
    owned by root or the user with a single hard link, and are replaced by renaming a new file over them, so
    a symlink or hard link planted under any of these names is refused or replaced, never followed.
  - A refusal fails the task with a message naming the path and the reason, before anything is changed.
  - With O(state=read) the module changes nothing and returns the key pair it finds. Use C(no_log) on
    that task, since the private key is in the result.
author:
  - torchfleet developers (@torchfleet)
extends_documentation_fragment:
  - torchfleet.cluster.attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details:
      - The private key is never shown; its diff only says that it changes.
options:
  user:
    description:
      - Name of the user whose C(~/.ssh) is managed.
    type: str
    required: true
  home:
    description:
      - Home directory of the user. Defaults to the one in the password database.
    type: path
  state:
    description:
      - V(present) installs the key pair and the blocks.
      - V(read) changes nothing and returns the public key found in C(~/.ssh) (and the private key with
        O(return_private_key)), checked the same way.
    type: str
    choices: [present, read]
    default: present
  key_name:
    description:
      - File name of the private key in C(~/.ssh); the public key is the same name plus C(.pub).
    type: str
    default: id_ed25519
  return_private_key:
    description:
      - With O(state=read), also return the private key's content in RV(private_key).
      - Off by default, so that a caller that only needs to know which hosts hold a key pair reads no private
        key onto the controller; ask for it only from the one host whose key is to be distributed.
    type: bool
    default: false
  private_key:
    description:
      - Content of the private key file. Required with O(state=present).
    type: str
  public_key:
    description:
      - The public key as C(TYPE BASE64) (a comment after it is kept). Required with O(state=present).
    type: str
  comment:
    description:
      - Comment put after the public key in the C(.pub) file and in C(authorized_keys).
    type: str
    default: ''
  authorized_key_options:
    description:
      - Options put before the key in C(authorized_keys), for example C(from="10.0.0.0/8").
    type: str
    default: ''
  authorized_keys_marker:
    description:
      - Marker line of the block in C(authorized_keys); C({mark}) becomes C(BEGIN) and C(END).
    type: str
    default: '# {mark} torchfleet.cluster ssh_mesh cluster key'
  ssh_config:
    description:
      - Lines of the block in C(~/.ssh/config). When omitted, C(~/.ssh/config) is left alone; an empty
        string removes the block.
    type: str
  ssh_config_marker:
    description:
      - Marker line of the block in C(~/.ssh/config); C({mark}) becomes C(BEGIN) and C(END).
    type: str
    default: '# {mark} torchfleet.cluster ssh_mesh cluster nodes'
notes:
  - The files are written with the user's primary group. An existing C(~/.ssh) owned by root is given to the
    user; one owned by anybody else, or a symlink, is refused.
  - Two runs at once on the same node serialize on an exclusive lock of C(~/.ssh).
seealso:
  - module: ansible.posix.authorized_key
  - module: ansible.builtin.blockinfile
'''

EXAMPLES = r'''
- name: Give the training user the cluster key pair and authorize it
  torchfleet.cluster.ssh_user_keys:
    user: trainer
    key_name: id_ed25519_torchfleet
    private_key: "{{ cluster_private_key }}"
    public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBmHfXO3ZcxVxcz3Bq1dM0rO0cJmM8UHSvZgRbUsNL1f
    comment: torchfleet-cluster
    authorized_key_options: from="10.0.0.0/8"
    ssh_config: |
      Host node0 node1
          IdentityFile ~/.ssh/id_ed25519_torchfleet

- name: Find out whether a node holds the key pair (its public key only)
  torchfleet.cluster.ssh_user_keys:
    user: trainer
    key_name: id_ed25519_torchfleet
    state: read
  register: found_pair

- name: Read the key pair, private key included, from the node chosen to hand it out
  torchfleet.cluster.ssh_user_keys:
    user: trainer
    key_name: id_ed25519_torchfleet
    state: read
    return_private_key: true
  register: source_pair
  no_log: true
'''

RETURN = r'''
ssh_dir:
  description: The user's C(~/.ssh).
  returned: always
  type: str
  sample: /home/trainer/.ssh
changed_files:
  description: The paths that were (or in check mode would be) created or changed.
  returned: when O(state=present)
  type: list
  elements: str
  sample: [/home/trainer/.ssh/id_ed25519_torchfleet, /home/trainer/.ssh/authorized_keys]
exists:
  description: Whether both the private and the public key file exist.
  returned: when O(state=read)
  type: bool
  sample: true
private_key:
  description: Content of the private key file, or null when there is none.
  returned: when O(state=read) and O(return_private_key=true)
  type: str
  sample: null
public_key:
  description: Content of the public key file without its line end, or null when there is none.
  returned: when O(state=read)
  type: str
  sample: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBmHfXO3ZcxVxcz3Bq1dM0rO0cJmM8UHSvZgRbUsNL1f torchfleet-cluster
'''

import os
import pwd

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native, to_text

from ansible_collections.torchfleet.cluster.plugins.module_utils._files.safepath import (
    UnsafePathError,
    closing,
    join,
    lock_dir,
    make_dir,
    open_child_dir,
    open_dir,
    read_file,
    set_owner_mode,
    write_file,
)
from ansible_collections.torchfleet.cluster.plugins.module_utils._ssh.ssh_keys import (
    KEY_MAX_SIZE,
    SSH_DIR_MODE,
    dir_diff,
    file_change,
    read_current,
    wanted_files,
)


def open_ssh_dir(module, home_fd, ssh_path, trusted):
    """(fd of ~/.ssh, its stat before this run); created unless in check mode, (None, None) then."""
    fd = open_child_dir(home_fd, '.ssh', ssh_path, trusted)
    if fd is not None:
        return fd, os.fstat(fd)
    if module.check_mode:
        return None, None
    return make_dir(home_fd, '.ssh', ssh_path, trusted, SSH_DIR_MODE), None


def ensure_present(module, account, home):
    ssh_path = join(home, '.ssh')
    trusted = (account.pw_uid,)
    wanted = wanted_files(module.params)
    with closing(open_dir(home, trusted)) as home_fd:
        ssh_fd, ssh_st = open_ssh_dir(module, home_fd, ssh_path, trusted)
        with closing(ssh_fd):
            if ssh_fd is not None:
                lock_dir(ssh_fd, ssh_path)
            diffs = dir_diff(ssh_path, ssh_st, account)
            changed_files = [ssh_path] if diffs else []
            current = read_current(ssh_fd, ssh_path, [item.name for item in wanted], trusted)
            writes = []
            for item in wanted:
                data, item_diffs = file_change(ssh_path, item, current[item.name], account)
                if data is not None:
                    writes.append((item, data))
                    changed_files.append(join(ssh_path, item.name))
                diffs.extend(item_diffs)
            if not module.check_mode:
                for item, data in writes:
                    write_file(ssh_fd, item.name, join(ssh_path, item.name), data,
                               account.pw_uid, account.pw_gid, item.mode)
                # Given to the user last: until then the user cannot add anything to a new ~/.ssh.
                set_owner_mode(ssh_fd, account.pw_uid, account.pw_gid, SSH_DIR_MODE)
    return dict(changed=bool(changed_files), ssh_dir=ssh_path, changed_files=changed_files, diff=diffs)


def read_pair(module, account, home):
    ssh_path = join(home, '.ssh')
    absent = dict(changed=False, ssh_dir=ssh_path, exists=False, private_key=None, public_key=None)
    if account is None:
        return absent
    trusted = (account.pw_uid,)
    name = module.params['key_name']
    try:
        home_fd = open_dir(home, trusted)
    except FileNotFoundError:
        return absent
    with closing(home_fd):
        with closing(open_child_dir(home_fd, '.ssh', ssh_path, trusted)) as ssh_fd:
            if ssh_fd is None:
                return absent
            private = read_file(ssh_fd, name, join(ssh_path, name), trusted, KEY_MAX_SIZE)
            public = read_file(ssh_fd, name + '.pub', join(ssh_path, name + '.pub'), trusted, KEY_MAX_SIZE)
    return dict(absent,
                exists=private is not None and public is not None,
                private_key=to_text(private.data) if private else None,
                public_key=to_text(public.data).rstrip('\r\n') if public else None)


def read_result(module, account, home):
    result = read_pair(module, account, home)
    if not module.params['return_private_key']:
        del result['private_key']
    return result


def check_params(module):
    params = module.params
    name = params['key_name']
    if not name or '/' in name or name in ('.', '..', 'authorized_keys', 'config'):
        module.fail_json(msg='key_name %r must be a plain file name in ~/.ssh other than authorized_keys and config' % name)
    for option in ('authorized_keys_marker', 'ssh_config_marker'):
        if '\n' in params[option] or '{mark}' not in params[option]:
            module.fail_json(msg='%s must be one line that contains {mark}' % option)
    if params['state'] == 'present':
        if not params['private_key'].strip():
            module.fail_json(msg='private_key is empty')
        if '\n' in params['public_key'].strip() or len(params['public_key'].split()) < 2:
            module.fail_json(msg='public_key must be one line "TYPE BASE64 [COMMENT]"')


def lookup_account(module):
    try:
        return pwd.getpwnam(module.params['user'])
    except KeyError:
        if module.params['state'] == 'read':
            return None
        module.fail_json(msg='user %s does not exist' % module.params['user'])


def main():
    module = AnsibleModule(
        argument_spec=dict(
            user=dict(type='str', required=True),
            home=dict(type='path'),
            state=dict(type='str', choices=['present', 'read'], default='present'),
            key_name=dict(type='str', default='id_ed25519'),
            return_private_key=dict(type='bool', default=False),
            private_key=dict(type='str', no_log=True),
            public_key=dict(type='str'),
            comment=dict(type='str', default=''),
            authorized_key_options=dict(type='str', default='', no_log=False),
            authorized_keys_marker=dict(type='str', default='# {mark} torchfleet.cluster ssh_mesh cluster key', no_log=False),
            ssh_config=dict(type='str'),
            ssh_config_marker=dict(type='str', default='# {mark} torchfleet.cluster ssh_mesh cluster nodes'),
        ),
        required_if=[('state', 'present', ('private_key', 'public_key'))],
        supports_check_mode=True,
    )
    check_params(module)
    account = lookup_account(module)
    home = module.params['home'] or (account.pw_dir if account else '/home/' + module.params['user'])
    if not home.startswith('/'):
        module.fail_json(msg='home %s of user %s is not an absolute path' % (home, module.params['user']))
    try:
        if module.params['state'] == 'read':
            result = read_result(module, account, home)
        else:
            result = ensure_present(module, account, home)
    except UnsafePathError as exc:
        module.fail_json(msg=to_native(exc), path=exc.path)
    except (IOError, OSError) as exc:
        module.fail_json(msg='%s: %s' % (exc.filename or home, exc.strerror or to_native(exc)), path=exc.filename or home)
    if not module._diff:
        result.pop('diff', None)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
