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

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.torchfleet.cluster.plugins.module_utils._files import state_compare


def main():
    module = AnsibleModule(argument_spec=state_compare.ARGUMENT_SPEC, supports_check_mode=True,
                           **state_compare.MODULE_OPTIONS)
    state_compare.run(module)


if __name__ == '__main__':
    main()
