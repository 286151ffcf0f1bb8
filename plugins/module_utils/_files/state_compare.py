# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The converged check of the roles: whether files, commands, accounts and a key pair are as wanted."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pwd

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


ARGUMENT_SPEC = dict(
    files=dict(type='list', elements='dict', default=[], options=FILE_OPTIONS),
    commands=dict(type='list', elements='dict', default=[], options=COMMAND_OPTIONS),
    users=dict(type='list', elements='dict', default=[], options=USER_OPTIONS),
    ssh_user_keys=dict(type='dict', options=KEY_OPTIONS, no_log=False),
)
MODULE_OPTIONS = dict()


def run(module):
    """Exit with whether every user, file, command and key pair is as wanted (changes nothing)."""
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
