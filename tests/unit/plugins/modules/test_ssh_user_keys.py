# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Data-driven tests of torchfleet.cluster.ssh_user_keys on a real home directory in a tmp dir.

The training user is uid 65534 (the tests run as root and hand it the home directory). Every
attack case plants what the user could plant, runs the module and proves that it failed
naming the path, that the root-owned canary is byte-identical with its owner and mode, and
that nothing in the home directory changed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import pwd
import stat
import time

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.torchfleet.cluster.plugins.module_utils._files import safepath
from ansible_collections.torchfleet.cluster.plugins.module_utils._files.file_state import replace_block
from ansible_collections.torchfleet.cluster.plugins.modules import ssh_user_keys
from ansible_collections.torchfleet.cluster.tests.unit.plugins.modules.module_exits import ExitJson, FailJson

USER = 65534
STRANGER = 65533
# A throw-away ed25519 pair made with `ssh-keygen -t ed25519 -N '' -C torchfleet-cluster`.
PRIVATE_KEY = (
    '-----BEGIN OPENSSH PRIVATE KEY-----\n'
    'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n'
    'QyNTUxOQAAACDWcJ1vJ8qUMmjtfNq+Zw7mJxf7bMX1hCuG7r6d3H0rGgAAAJjEzXqixM16\n'
    'ogAAAAtzc2gtZWQyNTUxOQAAACDWcJ1vJ8qUMmjtfNq+Zw7mJxf7bMX1hCuG7r6d3H0rGg\n'
    'AAAEBtorchfleetunittestkeymaterialonlyDWcJ1vJ8qUMmjtfNq+Zw7mJxf7bMX1hC\n'
    'uG7r6d3H0rGgAAAAEnRvcmNoZmxlZXQtY2x1c3RlcgECAw==\n'
    '-----END OPENSSH PRIVATE KEY-----\n')
PUBLIC_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINZwnW8nypQyaO182r5nDuYnF/tsxfWEK4buvp3cfSsa'
OLD_PUBLIC_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOldKeyOldKeyOldKeyOldKeyOldKeyOldKeyOldKey0'
KEY_NAME = 'id_ed25519_torchfleet'
SSH_CONFIG = 'Host node0 node1\n    IdentityFile ~/.ssh/id_ed25519_torchfleet\n    StrictHostKeyChecking yes'
CANARY = b'root:$y$j9T$secret-hash:19000:0:99999:7:::\n'
USER_KEY = 'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ user@laptop\n'

AUTH_BLOCK = ('# BEGIN torchfleet.cluster ssh_mesh cluster key\n'
              '%s torchfleet-cluster\n'
              '# END torchfleet.cluster ssh_mesh cluster key\n')
CONFIG_BLOCK = ('# BEGIN torchfleet.cluster ssh_mesh cluster nodes\n%s\n'
                '# END torchfleet.cluster ssh_mesh cluster nodes\n' % SSH_CONFIG)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='needs root to give files to other users')


pytestmark = pytest.mark.usefixtures('module_exits')


@pytest.fixture
def world(tmp_path, monkeypatch):
    root_dir = tmp_path / 'root-only'
    root_dir.mkdir(mode=0o700)
    canary = root_dir / 'shadow'
    canary.write_bytes(CANARY)
    canary.chmod(0o600)
    (root_dir / 'secrets').mkdir(mode=0o700)
    (root_dir / 'secrets' / 'keep').write_bytes(b'root only\n')
    home = tmp_path / 'home'
    home.mkdir(mode=0o755)
    os.chown(str(home), USER, USER)
    account = pwd.struct_passwd(('trainer', 'x', USER, USER, '', str(home), '/bin/bash'))

    def getpwnam(name):
        if name == 'trainer':
            return account
        raise KeyError(name)

    monkeypatch.setattr(ssh_user_keys.pwd, 'getpwnam', getpwnam)
    return dict(tmp=tmp_path, home=home, ssh=home / '.ssh', canary=canary, canary_dir=root_dir / 'secrets')


def snapshot(top):
    """Every entry under ``top`` (links not followed): type, owner, mode, links, content or target."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(str(top)):
        for name in [''] + dirnames + filenames:
            path = os.path.join(dirpath, name) if name else dirpath
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode):
                content = open(path, 'rb').read()
            elif stat.S_ISLNK(st.st_mode):
                content = os.readlink(path)
            else:
                content = None
            found[path] = (stat.S_IFMT(st.st_mode), st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode), st.st_nlink,
                           st.st_ino, content)
    return found


def canary_state(world):
    return snapshot(world['canary'].parent)


def lay_out(world, layout):
    """Build ~/.ssh from data: {relative path: spec}; spec is text, or a dict saying what to plant."""
    for relative, spec in layout:
        path = world['home'] / relative
        spec = spec if isinstance(spec, dict) else dict(text=spec)
        owner = spec.get('owner', USER)
        if spec.get('dir'):
            path.mkdir(mode=spec.get('mode', 0o700))
            path.chmod(spec.get('mode', 0o700))
        elif 'symlink' in spec:
            os.symlink(str(world[spec['symlink']]), str(path))
        elif 'hardlink' in spec:
            os.link(str(world[spec['hardlink']]), str(path))
            continue
        elif spec.get('fifo'):
            os.mkfifo(str(path))
        else:
            path.write_text(spec['text'])
            path.chmod(spec.get('mode', 0o600))
        os.chown(str(path), owner, owner, follow_symlinks=False)


def run_module(params, check_mode=False, diff=True):
    args = dict(params)
    args['_ansible_check_mode'] = check_mode
    args['_ansible_diff'] = diff
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as caught:
            ssh_user_keys.main()
    return caught.value.args[0]


def present_params(**extra):
    params = dict(user='trainer', key_name=KEY_NAME, private_key=PRIVATE_KEY, public_key=PUBLIC_KEY,
                  comment='torchfleet-cluster', ssh_config=SSH_CONFIG)
    params.update(extra)
    return params


def read_params(**extra):
    return dict(dict(user='trainer', key_name=KEY_NAME, state='read'), **extra)


def expect_file(path, text, mode, owner=USER):
    st = os.lstat(str(path))
    assert stat.S_ISREG(st.st_mode) and st.st_nlink == 1, path
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (owner, owner, mode), path
    assert path.read_text() == text, path


CONVERGED = [
    ('.ssh', dict(dir=True)),
    ('.ssh/' + KEY_NAME, PRIVATE_KEY),
    ('.ssh/' + KEY_NAME + '.pub', dict(text=PUBLIC_KEY + ' torchfleet-cluster\n', mode=0o644)),
    ('.ssh/authorized_keys', USER_KEY + AUTH_BLOCK % PUBLIC_KEY),
    ('.ssh/config', 'Host *\n    ServerAliveInterval 30\n' + CONFIG_BLOCK),
]

PRESENT_CASES = [
    dict(id='fresh-home-gets-everything', layout=[], changed=True,
         changed_names=['.ssh', KEY_NAME, KEY_NAME + '.pub', 'authorized_keys', 'config'],
         files={'authorized_keys': AUTH_BLOCK % PUBLIC_KEY, 'config': CONFIG_BLOCK}),
    dict(id='converged-is-unchanged', layout=CONVERGED, changed=False, changed_names=[],
         files={'authorized_keys': USER_KEY + AUTH_BLOCK % PUBLIC_KEY,
                'config': 'Host *\n    ServerAliveInterval 30\n' + CONFIG_BLOCK}),
    dict(id='user-keys-kept-and-no-newline-at-end-fixed',
         layout=[('.ssh', dict(dir=True)), ('.ssh/authorized_keys', USER_KEY.rstrip('\n'))],
         changed=True, changed_names=[KEY_NAME, KEY_NAME + '.pub', 'authorized_keys', 'config'],
         files={'authorized_keys': USER_KEY + AUTH_BLOCK % PUBLIC_KEY}),
    dict(id='rotation-replaces-the-marked-block-only',
         layout=[('.ssh', dict(dir=True)), ('.ssh/' + KEY_NAME, 'old private\n'),
                 ('.ssh/' + KEY_NAME + '.pub', dict(text=OLD_PUBLIC_KEY + ' torchfleet-cluster\n', mode=0o644)),
                 ('.ssh/authorized_keys', AUTH_BLOCK % OLD_PUBLIC_KEY + USER_KEY)],
         changed=True, changed_names=[KEY_NAME, KEY_NAME + '.pub', 'authorized_keys', 'config'],
         files={'authorized_keys': AUTH_BLOCK % PUBLIC_KEY + USER_KEY}),
    dict(id='options-before-the-key', params=dict(authorized_key_options='from="10.0.0.0/8"'),
         layout=CONVERGED, changed=True, changed_names=['authorized_keys'],
         files={'authorized_keys': USER_KEY + AUTH_BLOCK % ('from="10.0.0.0/8" ' + PUBLIC_KEY)}),
    dict(id='wrong-modes-and-owners-are-fixed',
         layout=[('.ssh', dict(dir=True, mode=0o755, owner=0))] + CONVERGED[1:3]
         + [('.ssh/authorized_keys', dict(text=USER_KEY + AUTH_BLOCK % PUBLIC_KEY, mode=0o644, owner=0)),
            CONVERGED[4]],
         changed=True, changed_names=['.ssh', 'authorized_keys'],
         files={'authorized_keys': USER_KEY + AUTH_BLOCK % PUBLIC_KEY}),
    dict(id='no-ssh-config-leaves-config-alone-even-a-symlink',
         params=dict(ssh_config=None), layout=CONVERGED[:4] + [('.ssh/config', dict(symlink='canary'))],
         changed=False, changed_names=[], files={}),
    dict(id='empty-ssh-config-removes-the-block', params=dict(ssh_config=''), layout=CONVERGED,
         changed=True, changed_names=['config'], files={'config': 'Host *\n    ServerAliveInterval 30\n'}),
]


def names_of(world, paths):
    return [os.path.basename(path) if path != str(world['ssh']) else '.ssh' for path in paths]


@pytest.mark.parametrize('case', PRESENT_CASES, ids=[case['id'] for case in PRESENT_CASES])
def test_present(world, case):
    lay_out(world, case['layout'])
    canary = canary_state(world)
    result = run_module(present_params(**case.get('params', {})))
    assert not result.get('failed'), result
    assert result['changed'] is case['changed']
    assert names_of(world, result['changed_files']) == case['changed_names']
    assert bool(result['diff']) is case['changed']
    st = os.lstat(str(world['ssh']))
    assert (stat.S_ISDIR(st.st_mode), st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (True, USER, USER, 0o700)
    if case.get('params', {}).get('ssh_config', '') is not None:
        expect_file(world['ssh'] / KEY_NAME, PRIVATE_KEY, 0o600)
        expect_file(world['ssh'] / (KEY_NAME + '.pub'), PUBLIC_KEY + ' torchfleet-cluster\n', 0o644)
    for name, text in case['files'].items():
        expect_file(world['ssh'] / name, text, 0o600)
    assert canary_state(world) == canary
    assert PRIVATE_KEY not in json.dumps(result)
    assert not [name for name in os.listdir(str(world['ssh'])) if 'torchfleet-' in name]


@pytest.mark.parametrize('case', PRESENT_CASES, ids=[case['id'] for case in PRESENT_CASES])
def test_second_run_is_unchanged(world, case):
    lay_out(world, case['layout'])
    run_module(present_params(**case.get('params', {})))
    before = snapshot(world['home'])
    result = run_module(present_params(**case.get('params', {})))
    assert result['changed'] is False and result['changed_files'] == [] and result['diff'] == []
    assert snapshot(world['home']) == before


@pytest.mark.parametrize('case', PRESENT_CASES, ids=[case['id'] for case in PRESENT_CASES])
def test_check_mode_predicts_and_changes_nothing(world, case):
    lay_out(world, case['layout'])
    before = snapshot(world['home'])
    result = run_module(present_params(**case.get('params', {})), check_mode=True)
    assert result['changed'] is case['changed']
    assert names_of(world, result['changed_files']) == case['changed_names']
    assert snapshot(world['home']) == before


def test_diff_shows_the_changes_but_never_the_private_key(world):
    lay_out(world, [('.ssh', dict(dir=True)), ('.ssh/' + KEY_NAME, 'old private\n'),
                    ('.ssh/authorized_keys', dict(text=USER_KEY, mode=0o644))])
    result = run_module(present_params(), check_mode=True)
    by_header = dict((entry['before_header'], entry) for entry in result['diff'])
    ssh = str(world['ssh'])
    assert by_header[ssh + '/' + KEY_NAME]['before'] == '(the current private key, not shown)\n'
    assert by_header[ssh + '/' + KEY_NAME]['after'] == '(the new private key, not shown)\n'
    assert by_header[ssh + '/authorized_keys']['before'] == USER_KEY
    assert by_header[ssh + '/authorized_keys']['after'] == USER_KEY + AUTH_BLOCK % PUBLIC_KEY
    assert by_header[ssh + '/authorized_keys (file attributes)']['before'] == {'mode': '0644'}
    assert by_header[ssh + '/authorized_keys (file attributes)']['after'] == {'mode': '0600'}
    assert by_header[ssh + '/config']['before'] == ''
    assert 'old private' not in json.dumps(result) and PRIVATE_KEY not in json.dumps(result)


def test_diff_of_a_new_ssh_dir(world):
    result = run_module(present_params(), check_mode=True)
    first = result['diff'][0]
    assert first['before'] == dict(path=str(world['ssh']), state='absent')
    assert first['after'] == dict(path=str(world['ssh']), state='directory', owner=USER, group=USER, mode='0700')
    assert not world['ssh'].exists()


def test_no_diff_without_diff_mode(world):
    result = run_module(present_params(), diff=False)
    assert result['changed'] is True and 'diff' not in result


def test_files_written_by_the_old_tasks_are_taken_over_unchanged(world):
    """copy + blockinfile output of the previous role version: upgrading changes nothing."""
    lay_out(world, CONVERGED[:3] + [('.ssh/authorized_keys', AUTH_BLOCK % PUBLIC_KEY), ('.ssh/config', CONFIG_BLOCK)])
    result = run_module(present_params())
    assert result['changed'] is False, result['diff']


# What the training user can plant; each must fail naming the path and leave everything as it was.
ATTACKS = [
    dict(id='authorized_keys-symlink-to-root-file', layout=[('.ssh', dict(dir=True)),
         ('.ssh/authorized_keys', dict(symlink='canary'))],
         path='.ssh/authorized_keys', reason='is a symlink; refusing to follow it as root'),
    dict(id='config-symlink-to-root-file', layout=[('.ssh', dict(dir=True)), ('.ssh/config', dict(symlink='canary'))],
         path='.ssh/config', reason='is a symlink; refusing to follow it as root'),
    dict(id='private-key-symlink-to-root-file', layout=[('.ssh', dict(dir=True)),
         ('.ssh/' + KEY_NAME, dict(symlink='canary'))],
         path='.ssh/' + KEY_NAME, reason='is a symlink; refusing to follow it as root'),
    dict(id='public-key-symlink-to-root-file', layout=[('.ssh', dict(dir=True)),
         ('.ssh/' + KEY_NAME + '.pub', dict(symlink='canary'))],
         path='.ssh/' + KEY_NAME + '.pub', reason='is a symlink'),
    dict(id='private-key-hard-link-to-root-file', layout=[('.ssh', dict(dir=True)),
         ('.ssh/' + KEY_NAME, dict(hardlink='canary'))],
         path='.ssh/' + KEY_NAME, reason='has 2 hard links'),
    dict(id='authorized_keys-hard-link-to-root-file', layout=[('.ssh', dict(dir=True)),
         ('.ssh/authorized_keys', dict(hardlink='canary'))],
         path='.ssh/authorized_keys', reason='has 2 hard links'),
    dict(id='ssh-dir-symlink-to-root-dir', layout=[('.ssh', dict(symlink='canary_dir'))],
         path='.ssh', reason='is a symlink; refusing to follow it as root'),
    dict(id='ssh-dir-is-a-file', layout=[('.ssh', 'not a dir')], path='.ssh', reason='is not a directory'),
    dict(id='authorized_keys-is-a-fifo', layout=[('.ssh', dict(dir=True)), ('.ssh/authorized_keys', dict(fifo=True))],
         path='.ssh/authorized_keys', reason='is a FIFO'),
    dict(id='ssh-dir-owned-by-another-user', layout=[('.ssh', dict(dir=True, owner=STRANGER))],
         path='.ssh', reason='is owned by uid 65533'),
    dict(id='authorized_keys-owned-by-another-user',
         layout=[('.ssh', dict(dir=True)), ('.ssh/authorized_keys', dict(text=USER_KEY, owner=STRANGER))],
         path='.ssh/authorized_keys', reason='is owned by uid 65533'),
    dict(id='home-writable-by-everybody', home_mode=0o777, layout=[], path='', reason='is writable by every user'),
]


def run_attack(world, case, params, check_mode=False):
    if 'home_mode' in case:
        world['home'].chmod(case['home_mode'])
    lay_out(world, case['layout'])
    canary = canary_state(world)
    home = snapshot(world['home'])
    result = run_module(params, check_mode=check_mode)
    path = str(world['home'] / case['path']) if case['path'] else str(world['home'])
    assert result.get('failed'), result
    assert result['msg'].startswith(path + ' ') and case['reason'] in result['msg'], result['msg']
    assert result['path'] == path
    assert canary_state(world) == canary
    assert snapshot(world['home']) == home
    assert CANARY.decode() not in json.dumps(result)
    return result


@pytest.mark.parametrize('check_mode', [False, True], ids=['run', 'check-mode'])
@pytest.mark.parametrize('case', ATTACKS, ids=[case['id'] for case in ATTACKS])
def test_present_refuses(world, case, check_mode):
    run_attack(world, case, present_params(), check_mode)


READ_ATTACKS = [case for case in ATTACKS if case['id'].startswith(('private-key', 'public-key', 'ssh-dir', 'home'))]


@pytest.mark.parametrize('case', READ_ATTACKS, ids=[case['id'] for case in READ_ATTACKS])
def test_read_refuses(world, case):
    run_attack(world, case, read_params())


def test_home_that_is_a_symlink_the_user_controls(world):
    """~trainer -> a root directory, placed in a directory the user may write."""
    users = world['tmp'] / 'users'
    users.mkdir(mode=0o755)
    os.chown(str(users), USER, USER)
    os.symlink(str(world['canary_dir']), str(users / 'trainer'))
    canary = canary_state(world)
    for params in (present_params(home=str(users / 'trainer')), read_params(home=str(users / 'trainer'))):
        result = run_module(params)
        assert result['failed'] and result['msg'] == '%s is a symlink; refusing to follow it as root' % (users / 'trainer')
    assert canary_state(world) == canary


READ_CASES = [
    dict(id='pair-found', layout=CONVERGED, exists=True, private=PRIVATE_KEY,
         public=PUBLIC_KEY + ' torchfleet-cluster'),
    dict(id='no-ssh-dir', layout=[], exists=False, private=None, public=None),
    dict(id='only-the-private-key', layout=CONVERGED[:2], exists=False, private=PRIVATE_KEY, public=None),
    dict(id='unknown-user', layout=[], params=dict(user='nobody-here'), exists=False, private=None, public=None),
    dict(id='missing-home', layout=[], params=dict(home='/nonexistent/trainer'), exists=False, private=None,
         public=None),
]


@pytest.mark.parametrize('case', READ_CASES, ids=[case['id'] for case in READ_CASES])
def test_read(world, case):
    lay_out(world, case['layout'])
    before = snapshot(world['home'])
    result = run_module(read_params(return_private_key=True, **case.get('params', {})))
    assert not result.get('failed'), result
    assert result['changed'] is False
    assert (result['exists'], result['private_key'], result['public_key']) == (case['exists'], case['private'], case['public'])
    assert snapshot(world['home']) == before


@pytest.mark.parametrize('case', READ_CASES, ids=[case['id'] for case in READ_CASES])
def test_read_without_asking_returns_no_private_key(world, case):
    lay_out(world, case['layout'])
    result = run_module(read_params(**case.get('params', {})))
    assert not result.get('failed'), result
    assert 'private_key' not in result
    assert (result['exists'], result['public_key']) == (case['exists'], case['public'])


BAD_PARAMS = [
    dict(id='key-name-with-a-slash', params=dict(key_name='../../etc/x'), msg='must be a plain file name'),
    dict(id='key-name-authorized_keys', params=dict(key_name='authorized_keys'), msg='must be a plain file name'),
    dict(id='marker-without-mark', params=dict(authorized_keys_marker='# cluster key'), msg='contains {mark}'),
    dict(id='public-key-on-two-lines', params=dict(public_key=PUBLIC_KEY + '\n' + PUBLIC_KEY), msg='one line'),
    dict(id='empty-private-key', params=dict(private_key='\n'), msg='private_key is empty'),
    dict(id='missing-private-key', params=dict(private_key=None), msg='private_key'),
    dict(id='unknown-user', params=dict(user='nobody-here'), msg='user nobody-here does not exist'),
    dict(id='missing-home', params=dict(home='/nonexistent/trainer'), msg='/nonexistent: No such file'),
]


@pytest.mark.parametrize('case', BAD_PARAMS, ids=[case['id'] for case in BAD_PARAMS])
def test_bad_params_fail_and_change_nothing(world, case):
    params = present_params(**case['params'])
    result = run_module(dict((key, value) for key, value in params.items() if value is not None))
    assert result['failed'] and case['msg'] in result['msg'], result['msg']
    assert not world['ssh'].exists()


REPLACE_BLOCK = [
    dict(id='new-file', current=None, block='a', after=b'# BEGIN m\na\n# END m\n'),
    dict(id='appended-after-a-line-without-newline', current=b'x', block='a\nb\n',
         after=b'x\n# BEGIN m\na\nb\n# END m\n'),
    dict(id='replaced-in-place', current=b'x\n# BEGIN m\nold\n# END m\ny\n', block='a',
         after=b'x\n# BEGIN m\na\n# END m\ny\n'),
    dict(id='the-last-block-is-the-one', current=b'# BEGIN m\n1\n# END m\nx\n# BEGIN m\n2\n# END m\n', block='a',
         after=b'# BEGIN m\n1\n# END m\nx\n# BEGIN m\na\n# END m\n'),
    dict(id='reversed-markers-keep-the-lines-between', current=b'# END m\nx\n# BEGIN m\n', block='a',
         after=b'# END m\nx\n# BEGIN m\n# BEGIN m\na\n# END m\n'),
    dict(id='empty-block-removes-it', current=b'x\n# BEGIN m\nold\n# END m\ny\n', block='', after=b'x\ny\n'),
    dict(id='empty-block-and-no-block', current=b'x\n', block='', after=b'x\n'),
    dict(id='crlf-lines-are-kept', current=b'x\r\n', block='a', after=b'x\r\n# BEGIN m\na\n# END m\n'),
]


@pytest.mark.parametrize('case', REPLACE_BLOCK, ids=[case['id'] for case in REPLACE_BLOCK])
def test_replace_block(case):
    assert replace_block(case['current'], '# {mark} m', case['block']) == case['after']


def test_a_second_run_waits_for_the_first_and_keeps_its_change(world):
    """Another run holds ~/.ssh and adds its own block; this run starts meanwhile and must keep it."""
    lay_out(world, CONVERGED)
    other_block = '# BEGIN other\nssh-ed25519 AAAA other-run\n# END other\n'
    with closing_dir(world['ssh']) as held:
        safepath.lock_dir(held, 'x')
        pid = os.fork()
        if pid == 0:  # the second run, as its own process
            try:
                os.close(held)  # the inherited copy would keep the first run's lock alive
                result = run_module(present_params(authorized_key_options='no-pty'), diff=False)
                os._exit(0 if result['changed'] and not result.get('failed') else 3)
            except BaseException:
                os._exit(4)
        time.sleep(0.5)
        assert os.waitpid(pid, os.WNOHANG) == (0, 0), 'the second run did not wait for the lock'
        path = world['ssh'] / 'authorized_keys'
        path.write_text(path.read_text() + other_block)
    assert os.waitpid(pid, 0)[1] == 0
    assert (world['ssh'] / 'authorized_keys').read_text() == (
        USER_KEY + AUTH_BLOCK % ('no-pty ' + PUBLIC_KEY) + other_block)


def closing_dir(path):
    return safepath.closing(safepath.open_dir(str(path), (USER,)))
