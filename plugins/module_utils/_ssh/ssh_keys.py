# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A user's ~/.ssh as torchfleet.cluster.ssh_user_keys leaves it, and how far a node's copy is from that.

``wanted_files`` describes the key pair, the authorized_keys block and the client block;
``file_change`` and ``dir_diff`` compare one file or ``~/.ssh`` with it. ``pair_state`` is the
read-only form the ssh_mesh role's converged check uses: it takes the key pair the node holds as
the wanted one and says whether installing it again would change anything, returning only the
public key and a digest of the private key, never the private key itself.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os
import stat

from ansible.module_utils.common.text.converters import to_bytes, to_text

from ansible_collections.torchfleet.cluster.plugins.module_utils._files.file_state import replace_block
from ansible_collections.torchfleet.cluster.plugins.module_utils._files.safepath import (
    closing,
    join,
    open_child_dir,
    open_dir,
    read_file,
)

SSH_DIR_MODE = 0o700
KEY_MAX_SIZE = 64 * 1024
SECRET_BEFORE = '(the current private key, not shown)\n'
SECRET_AFTER = '(the new private key, not shown)\n'


class Wanted(object):
    """One file of ~/.ssh as it should be; ``merge`` builds its content from the current one."""

    def __init__(self, name, mode, merge, secret=False):
        self.name = name
        self.mode = mode
        self.merge = merge
        self.secret = secret


def public_line(params):
    words = [params['public_key'].strip()] + ([params['comment']] if params['comment'] else [])
    return ' '.join(words)


def wanted_files(params):
    key_line = public_line(params)
    private = to_bytes(params['private_key'].rstrip('\r\n') + '\n')
    authorized = ' '.join(([params['authorized_key_options']] if params['authorized_key_options'] else []) + [key_line])
    files = [
        Wanted(params['key_name'], 0o600, lambda current: private, secret=True),
        Wanted(params['key_name'] + '.pub', 0o644, lambda current: to_bytes(key_line + '\n')),
        Wanted('authorized_keys', 0o600,
               lambda current: replace_block(current, params['authorized_keys_marker'], authorized)),
    ]
    if params['ssh_config'] is not None:
        files.append(Wanted('config', 0o600,
                            lambda current: replace_block(current, params['ssh_config_marker'], params['ssh_config'])))
    return files


def mode_text(mode):
    return '%04o' % mode


def attribute_diff(header, st, account, mode):
    """The file module's style of diff for owner, group and mode; [] when they are right."""
    before, after = {}, {}
    if st.st_uid != account.pw_uid:
        before['owner'], after['owner'] = st.st_uid, account.pw_uid
    if st.st_gid != account.pw_gid:
        before['group'], after['group'] = st.st_gid, account.pw_gid
    if stat.S_IMODE(st.st_mode) != mode:
        before['mode'], after['mode'] = mode_text(stat.S_IMODE(st.st_mode)), mode_text(mode)
    return [dict(before_header=header, after_header=header, before=before, after=after)] if before else []


def content_diff(path, wanted, current, data):
    if wanted.secret:
        before, after = (SECRET_BEFORE if current else ''), SECRET_AFTER
    else:
        before = to_text(current.data, errors='surrogate_or_replace') if current else ''
        after = to_text(data, errors='surrogate_or_replace')
    return [dict(before_header=path, after_header=path, before=before, after=after)]


def file_change(ssh_path, wanted, current, account):
    """(new content, diffs) for one file; new content is None when nothing changes."""
    path = join(ssh_path, wanted.name)
    data = wanted.merge(current.data if current else None)
    diffs = []
    if current is None or current.data != data:
        diffs.extend(content_diff(path, wanted, current, data))
    if current is not None:
        diffs.extend(attribute_diff('%s (file attributes)' % path, current.st, account, wanted.mode))
    # Owner or mode alone are fixed by writing the same content anew: no fchown by name.
    return (data if diffs else None), diffs


def dir_diff(ssh_path, st, account):
    header = '%s (directory)' % ssh_path
    if st is None:
        return [dict(before_header=header, after_header=header, before=dict(path=ssh_path, state='absent'),
                     after=dict(path=ssh_path, state='directory', owner=account.pw_uid, group=account.pw_gid,
                                mode=mode_text(SSH_DIR_MODE)))]
    return attribute_diff(header, st, account, SSH_DIR_MODE)


def read_current(ssh_fd, ssh_path, names, trusted):
    """Every file the run will touch, read and checked before anything is written."""
    if ssh_fd is None:
        return dict((name, None) for name in names)
    return dict((name, read_file(ssh_fd, name, join(ssh_path, name), trusted)) for name in names)


def _read_pair(ssh_fd, ssh_path, key_name, trusted):
    private = read_file(ssh_fd, key_name, join(ssh_path, key_name), trusted, KEY_MAX_SIZE)
    public = read_file(ssh_fd, key_name + '.pub', join(ssh_path, key_name + '.pub'), trusted, KEY_MAX_SIZE)
    return private, public


def pair_state(account, home, params):
    """{differences, public_key, private_key_sha256} of the pair in ``home``/.ssh, installed again with ``params``.

    ``params`` holds the options of ssh_user_keys other than the key pair. Raises UnsafePathError
    where ssh_user_keys would refuse a path.
    """
    ssh_path = join(home, '.ssh')
    state = dict(differences=[], public_key=None, private_key_sha256=None)
    trusted = (account.pw_uid,)
    try:
        home_fd = open_dir(home, trusted)
    except FileNotFoundError:
        state['differences'].append('%s: is missing' % home)
        return state
    with closing(home_fd):
        with closing(open_child_dir(home_fd, '.ssh', ssh_path, trusted)) as ssh_fd:
            if ssh_fd is None:
                state['differences'].append('%s: is missing' % ssh_path)
                return state
            private, public = _read_pair(ssh_fd, ssh_path, params['key_name'], trusted)
            if private is None or public is None or len(public.data.split()) < 2:
                state['differences'].append('%s: holds no key pair %s' % (ssh_path, params['key_name']))
                return state
            state['public_key'] = to_text(b' '.join(public.data.split()[:2]))
            state['private_key_sha256'] = hashlib.sha256(private.data).hexdigest()
            wanted = wanted_files(dict(params, private_key=to_text(private.data), public_key=state['public_key']))
            current = read_current(ssh_fd, ssh_path, [item.name for item in wanted], trusted)
            diffs = dir_diff(ssh_path, os.fstat(ssh_fd), account)
            for item in wanted:
                diffs.extend(file_change(ssh_path, item, current[item.name], account)[1])
    state['differences'] = ['%s: differs' % diff['before_header'] for diff in diffs]
    return state
