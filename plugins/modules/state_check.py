#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: state_check
short_description: Say in one call whether a role's files, commands and accounts on a node are already as the role would leave them
version_added: 0.1.0
description:
  - The converged check of the collection's roles. A role hands over everything its tasks would write or
    verify on a node (whole files, marked blocks, lines, kernel values, the output of read-only commands,
    an account, a user's cluster key files) and learns, in one round trip, whether any of those tasks would
    change anything. Only when something differs do the role's own tasks run, one by one, with their exact
    check mode and C(--diff).
  - Changes nothing, on any path; runs the same in check mode.
  - Every file is reached from C(/) through directories only root can write, without following a symlink in a
    directory another user could write, and read only when it is a regular file owned by root (or by O(files[].owner))
    with one hard link. Anything else is reported as a difference, so the role's own tasks (which refuse it with
    their own message) run instead; a difference is never an error.
author:
  - torchfleet developers (@torchfleet)
extends_documentation_fragment:
  - torchfleet.cluster.attributes
attributes:
  check_mode:
    support: full
    details:
      - The module never changes anything.
  diff_mode:
    support: none
    details:
      - The role's own tasks show the diff when something differs.
options:
  files:
    description:
      - Files, directories and marked blocks as the role's tasks would leave them.
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description: Absolute path.
        type: path
        required: true
      state:
        description: What the path must be.
        type: str
        choices: [file, directory, absent]
        default: file
      content:
        description: The whole content, as C(ansible.builtin.copy) or C(ansible.builtin.template) writes it.
        type: str
      block:
        description: A block between O(files[].marker) lines, as C(ansible.builtin.blockinfile) writes it.
        type: str
      marker:
        description: Marker line of O(files[].block); C({mark}) becomes C(BEGIN) and C(END).
        type: str
      line:
        description: A line the file must hold, as C(ansible.builtin.lineinfile) without a regexp adds it.
        type: str
      words:
        description: The content compared word by word (a value under C(/proc/sys)).
        type: str
      setting:
        description: Name of a C(name = value) line of a sysctl file; the last one counts.
        type: str
      value:
        description: The value O(files[].setting) must have, white space inside it ignored.
        type: str
      owner:
        description: Owner name; unchecked when omitted. Files owned by this user (besides root) are read.
        type: str
      group:
        description: Group name; unchecked when omitted.
        type: str
      mode:
        description: Octal mode such as C(0644); unchecked when omitted.
        type: str
      missing_ok:
        description: A missing file is no difference (for a task that only edits a file that exists).
        type: bool
        default: false
      when_writable:
        description: Compare only when this path is writable (a sysctl file where C(/proc/sys) is read-only).
        type: path
  commands:
    description:
      - Read-only commands and what they must answer, run without a shell.
    type: list
    elements: dict
    default: []
    suboptions:
      argv:
        description: The command and its arguments.
        type: list
        elements: str
        required: true
      rc:
        description: Exit status it must return.
        type: int
        default: 0
      stdout:
        description: What its output must be, leading and trailing white space ignored.
        type: str
      contains:
        description: Text its output must contain.
        type: str
  users:
    description:
      - Accounts that must exist, and the login shell they must have where O(users[].shell) is set.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Account name.
        type: str
        required: true
      shell:
        description: Login shell; unchecked when omitted.
        type: str
  ssh_user_keys:
    description:
      - A user's cluster key pair, C(authorized_keys) block and client block, compared with what
        M(torchfleet.cluster.ssh_user_keys) would write when given the pair that node holds.
      - The result has the public key and a SHA-256 of the private key file, so that the caller can check that
        every node holds the same pair; the private key never leaves the node.
    type: dict
    suboptions:
      user:
        description: Name of the user.
        type: str
        required: true
      key_name:
        description: File name of the private key in C(~/.ssh).
        type: str
        default: id_ed25519
      comment:
        description: Comment after the public key.
        type: str
        default: ''
      authorized_key_options:
        description: Options before the key in C(authorized_keys).
        type: str
        default: ''
      authorized_keys_marker:
        description: Marker line of the block in C(authorized_keys).
        type: str
        default: '# {mark} torchfleet.cluster ssh_mesh cluster key'
      ssh_config:
        description: Lines of the block in C(~/.ssh/config); the file is not compared when omitted.
        type: str
      ssh_config_marker:
        description: Marker line of the block in C(~/.ssh/config).
        type: str
        default: '# {mark} torchfleet.cluster ssh_mesh cluster nodes'
seealso:
  - module: torchfleet.cluster.ssh_user_keys
'''

EXAMPLES = r'''
- name: Find out whether the firewall role has anything to do on this node
  torchfleet.cluster.state_check:
    files:
      - path: /etc/nftables.d/torchfleet.nft
        content: "{{ lookup('ansible.builtin.template', 'torchfleet.nft.j2') }}"
        owner: root
        group: root
        mode: "0644"
      - path: /proc/sys/net/ipv4/ip_local_port_range
        words: "32768 60999"
    commands:
      - argv: [nft, list, table, inet, torchfleet]
        contains: "rules-sha256 0123abcd"
  register: firewall_state

- name: Apply the firewall only where something differs
  ansible.builtin.include_tasks: apply.yml
  when: not firewall_state.converged
'''

RETURN = r'''
converged:
  description: Whether nothing differs, so that the role's tasks would all report C(ok).
  returned: always
  type: bool
  sample: true
differences:
  description: What differs, one sentence each, naming the path, command or account.
  returned: always
  type: list
  elements: str
  sample: ["/etc/nftables.d/torchfleet.nft: content differs"]
ssh_user_keys:
  description: The pair the user holds, when O(ssh_user_keys) is set.
  returned: when O(ssh_user_keys) is set
  type: dict
  contains:
    public_key:
      description: C(TYPE BASE64) of the public key file, or null when there is no pair.
      type: str
      sample: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBmHfXO3ZcxVxcz3Bq1dM0rO0cJmM8UHSvZgRbUsNL1f
    private_key_sha256:
      description: SHA-256 of the private key file, or null when there is no pair.
      type: str
      sample: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
'''

import pwd

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.torchfleet.cluster.plugins.module_utils._files.file_state import file_differences
from ansible_collections.torchfleet.cluster.plugins.module_utils._files.safepath import UnsafePathError
from ansible_collections.torchfleet.cluster.plugins.module_utils._ssh.ssh_keys import pair_state

FILE_OPTIONS = dict(
    path=dict(type='path', required=True),
    state=dict(type='str', choices=['file', 'directory', 'absent'], default='file'),
    content=dict(type='str'),
    block=dict(type='str'),
    marker=dict(type='str'),
    line=dict(type='str'),
    words=dict(type='str'),
    setting=dict(type='str'),
    value=dict(type='str'),
    owner=dict(type='str'),
    group=dict(type='str'),
    mode=dict(type='str'),
    missing_ok=dict(type='bool', default=False),
    when_writable=dict(type='path'),
)

COMMAND_OPTIONS = dict(
    argv=dict(type='list', elements='str', required=True),
    rc=dict(type='int', default=0),
    stdout=dict(type='str'),
    contains=dict(type='str'),
)

USER_OPTIONS = dict(
    name=dict(type='str', required=True),
    shell=dict(type='str'),
)

KEY_OPTIONS = dict(
    user=dict(type='str', required=True),
    key_name=dict(type='str', default='id_ed25519'),
    comment=dict(type='str', default=''),
    authorized_key_options=dict(type='str', default='', no_log=False),
    authorized_keys_marker=dict(type='str', default='# {mark} torchfleet.cluster ssh_mesh cluster key', no_log=False),
    ssh_config=dict(type='str'),
    ssh_config_marker=dict(type='str', default='# {mark} torchfleet.cluster ssh_mesh cluster nodes'),
)


def check_file_params(module):
    for wanted in module.params['files']:
        if not wanted['path'].startswith('/'):
            module.fail_json(msg='files: path %s is not absolute' % wanted['path'])
        if (wanted['block'] is None) != (wanted['marker'] is None):
            module.fail_json(msg='files: %s: block and marker go together' % wanted['path'])
        if wanted['marker'] is not None and '{mark}' not in wanted['marker']:
            module.fail_json(msg='files: %s: marker must contain {mark}' % wanted['path'])
        if (wanted['setting'] is None) != (wanted['value'] is None):
            module.fail_json(msg='files: %s: setting and value go together' % wanted['path'])


def command_differences(module, wanted):
    name = ' '.join(wanted['argv'])
    try:
        rc, out, err = module.run_command(wanted['argv'], handle_exceptions=False)
    except (IOError, OSError) as exc:
        return ['%s: %s' % (name, to_native(exc))]
    if rc != wanted['rc']:
        return ['%s: exit status %d, not %d (%s)' % (name, rc, wanted['rc'], (err or out).strip()[:200])]
    if wanted['stdout'] is not None and out.strip() != wanted['stdout'].strip():
        return ['%s: answers %r, not %r' % (name, out.strip()[:200], wanted['stdout'].strip())]
    if wanted['contains'] is not None and wanted['contains'] not in out:
        return ['%s: the output lacks %r' % (name, wanted['contains'])]
    return []


def lookup_account(name):
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def user_differences(wanted):
    account = lookup_account(wanted['name'])
    if account is None:
        return ['user %s: does not exist' % wanted['name']]
    if wanted['shell'] is not None and account.pw_shell != wanted['shell']:
        return ['user %s: shell is %s, not %s' % (wanted['name'], account.pw_shell, wanted['shell'])]
    return []


def key_state(params):
    account = lookup_account(params['user'])
    if account is None:
        return dict(differences=['user %s: does not exist' % params['user']], public_key=None, private_key_sha256=None)
    try:
        return pair_state(account, account.pw_dir, params)
    except UnsafePathError as exc:
        return dict(differences=[str(exc)], public_key=None, private_key_sha256=None)
    except (IOError, OSError) as exc:
        return dict(differences=['%s: %s' % (exc.filename or account.pw_dir, exc.strerror or to_native(exc))],
                    public_key=None, private_key_sha256=None)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            files=dict(type='list', elements='dict', default=[], options=FILE_OPTIONS),
            commands=dict(type='list', elements='dict', default=[], options=COMMAND_OPTIONS),
            users=dict(type='list', elements='dict', default=[], options=USER_OPTIONS),
            ssh_user_keys=dict(type='dict', options=KEY_OPTIONS, no_log=False),
        ),
        supports_check_mode=True,
    )
    check_file_params(module)
    differences = []
    for wanted in module.params['users']:
        differences.extend(user_differences(wanted))
    for wanted in module.params['files']:
        differences.extend(file_differences(wanted))
    for wanted in module.params['commands']:
        differences.extend(command_differences(module, wanted))
    result = dict(changed=False)
    if module.params['ssh_user_keys'] is not None:
        keys = key_state(module.params['ssh_user_keys'])
        differences.extend(keys.pop('differences'))
        result['ssh_user_keys'] = keys
    module.exit_json(converged=not differences, differences=differences, **result)


if __name__ == '__main__':
    main()
