# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Data-driven tests of torchfleet.cluster.state_check on real files in a tmp dir.

The module is the converged check the roles trust to skip their own tasks, so the case that
matters most is the false "converged": every layout a user could plant (a symlink or hard link
to a root file holding exactly the wanted content, a FIFO, a directory they own) must come back
as a difference, never followed, with the root-owned canary untouched. The ssh_user_keys half
runs on the home directory layouts of test_ssh_user_keys."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import pwd

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.torchfleet.cluster.plugins.module_utils._files.file_state import replace_block
from ansible_collections.torchfleet.cluster.plugins.module_utils._files import state_compare
from ansible_collections.torchfleet.cluster.plugins.modules import state_check
from ansible_collections.torchfleet.cluster.tests.unit.plugins.modules import test_ssh_user_keys as keys_case
from ansible_collections.torchfleet.cluster.tests.unit.plugins.modules.module_exits import ExitJson, FailJson

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='needs root to give files to other users')

CANARY = b'root:$y$j9T$secret-hash:19000:0:99999:7:::\n'
MARKER = '# {mark} torchfleet.cluster firewall'
BLOCK = 'include "/etc/nftables.d/torchfleet.nft"'
SYSCTL = 'net.ipv4.ip_local_port_range = 32768 60999\n'
world = keys_case.world


pytestmark = pytest.mark.usefixtures('module_exits')


@pytest.fixture
def etc(tmp_path):
    """A root-only directory with a canary, and a directory the user (uid 65534) owns."""
    top = tmp_path / 'etc'
    top.mkdir(mode=0o755)
    canary = top / 'shadow'
    canary.write_bytes(CANARY)
    canary.chmod(0o600)
    user_dir = tmp_path / 'user-owned'
    user_dir.mkdir(mode=0o755)
    os.chown(str(user_dir), keys_case.USER, keys_case.USER)
    return dict(top=top, canary=canary, user_dir=user_dir)


def run_module(params):
    args = dict(params, _ansible_check_mode=False)
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as caught:
            state_check.main()
    return caught.value.args[0]


def plant(etc, name, spec):
    """Put ``spec`` at ``etc/name``: text (root's, 0644), or a dict naming what to plant."""
    path = etc['top'] / name
    spec = spec if isinstance(spec, dict) else dict(text=spec)
    if spec.get('dir'):
        path.mkdir()
    elif 'symlink' in spec:
        os.symlink(str(etc[spec['symlink']]), str(path))
    elif 'hardlink' in spec:
        os.link(str(etc[spec['hardlink']]), str(path))
    elif spec.get('fifo'):
        os.mkfifo(str(path))
    else:
        path.write_text(spec['text'])
        path.chmod(spec.get('mode', 0o644))
        os.chown(str(path), spec.get('owner', 0), spec.get('owner', 0))
    return path


# Each case: what is on disk, what the role wants there, and the differences the module must report
# (each a fragment of one sentence, in order); [] means converged.
FILE_CASES = [
    dict(id='content-matches', disk='a = 1\n', wanted=dict(content='a = 1\n', owner='root', group='root', mode='0644'),
         differences=[]),
    dict(id='content-differs', disk='a = 2\n', wanted=dict(content='a = 1\n'), differences=['content differs']),
    dict(id='mode-differs', disk=dict(text='a\n', mode=0o666), wanted=dict(content='a\n', mode='0644'),
         differences=['mode is 0666, not 0644']),
    dict(id='owner-and-mode-differ', disk=dict(text='a\n', owner=keys_case.USER, mode=0o600),
         wanted=dict(content='a\n', owner='root', mode='0644'),
         differences=['(uid 65534), not by root']),
    dict(id='file-owned-by-the-named-owner-is-read', disk=dict(text='a\n', owner=keys_case.USER),
         wanted=dict(content='a\n', owner='65534'), differences=[]),
    dict(id='missing', disk=None, wanted=dict(content='a\n'), differences=['is missing']),
    dict(id='missing-is-fine-for-an-edit-only-task', disk=None, wanted=dict(line='a', missing_ok=True), differences=[]),
    dict(id='absent-and-missing', disk=None, wanted=dict(state='absent'), differences=[]),
    dict(id='absent-but-present', disk='old\n', wanted=dict(state='absent'), differences=['exists']),
    dict(id='absent-but-a-symlink', disk=dict(symlink='canary'), wanted=dict(state='absent'), differences=['exists']),
    dict(id='directory', disk=dict(dir=True), wanted=dict(state='directory'), differences=[]),
    dict(id='directory-but-a-file', disk='a\n', wanted=dict(state='directory'), differences=['is not a directory']),
    dict(id='block-present', disk='table inet filter {}\n' + replace_block(None, MARKER, BLOCK).decode(),
         wanted=dict(block=BLOCK, marker=MARKER), differences=[]),
    dict(id='block-missing', disk='table inet filter {}\n', wanted=dict(block=BLOCK, marker=MARKER),
         differences=['the block %r differs or is missing' % MARKER]),
    dict(id='block-with-other-lines', disk=replace_block(None, MARKER, BLOCK + '\nextra').decode(),
         wanted=dict(block=BLOCK, marker=MARKER), differences=['differs or is missing']),
    dict(id='line-present', disk='x\ninclude "/etc/nftables.d/*.nft"\ny\n',
         wanted=dict(line='include "/etc/nftables.d/*.nft"'), differences=[]),
    dict(id='line-only-as-part-of-another', disk='# include "/etc/nftables.d/*.nft"\n',
         wanted=dict(line='include "/etc/nftables.d/*.nft"'), differences=['is missing']),
    dict(id='words-ignore-white-space', disk='32768\t60999\n', wanted=dict(words='32768 60999'), differences=[]),
    dict(id='words-differ', disk='32768\t61000\n', wanted=dict(words='32768 60999'),
         differences=["holds '32768 61000', not '32768 60999'"]),
    dict(id='sysctl-setting', disk='# ports\n' + SYSCTL,
         wanted=dict(setting='net.ipv4.ip_local_port_range', value='32768   60999'), differences=[]),
    dict(id='sysctl-last-setting-wins', disk=SYSCTL + 'net.ipv4.ip_local_port_range=1024 65535\n',
         wanted=dict(setting='net.ipv4.ip_local_port_range', value='32768 60999'),
         differences=["net.ipv4.ip_local_port_range is '1024 65535', not '32768 60999'"]),
    dict(id='sysctl-setting-missing', disk='# nothing\n',
         wanted=dict(setting='net.ipv4.ip_local_port_range', value='32768 60999'),
         differences=['net.ipv4.ip_local_port_range is None']),
    dict(id='not-compared-where-the-target-is-read-only', disk='other\n',
         wanted=dict(content='a\n', when_writable='/nonexistent/proc/sys/net'), differences=[]),
]


def file_params(etc, case):
    wanted = dict(case['wanted'], path=str(etc['top'] / 'target'))
    return dict(files=[wanted])


@pytest.mark.parametrize('case', FILE_CASES, ids=[case['id'] for case in FILE_CASES])
def test_files(etc, case):
    if case['disk'] is not None:
        plant(etc, 'target', case['disk'])
    result = run_module(file_params(etc, case))
    assert result['changed'] is False
    assert result['converged'] is (not case['differences'])
    assert len(result['differences']) == len(case['differences']), result['differences']
    for found, fragment in zip(result['differences'], case['differences']):
        assert found.startswith(str(etc['top'] / 'target')) and fragment in found, found


# What a user could plant where a root file is read; the wanted content is the canary's own, so
# following the planted entry would wrongly come back "converged".
FILE_ATTACKS = [
    dict(id='symlink-to-a-root-file', disk=dict(symlink='canary'), reason='is a symlink'),
    dict(id='hard-link-to-a-root-file', disk=dict(hardlink='canary'), reason='has 2 hard links'),
    dict(id='fifo', disk=dict(fifo=True), reason='is a FIFO'),
    dict(id='file-owned-by-the-user', disk=dict(text=CANARY.decode(), owner=keys_case.USER), reason='(uid 65534), not by root'),
]


@pytest.mark.parametrize('case', FILE_ATTACKS, ids=[case['id'] for case in FILE_ATTACKS])
def test_planted_files_are_differences_never_followed(etc, case):
    plant(etc, 'target', case['disk'])
    before = keys_case.snapshot(etc['top'])
    result = run_module(dict(files=[dict(path=str(etc['top'] / 'target'), content=CANARY.decode())]))
    assert result['converged'] is False and not result.get('failed'), result
    assert result['differences'] == [result['differences'][0]] and case['reason'] in result['differences'][0]
    assert keys_case.snapshot(etc['top']) == before
    assert CANARY.decode() not in json.dumps(result)


def test_a_directory_the_user_owns_on_the_way_is_not_entered(etc):
    inner = etc['user_dir'] / 'conf'
    inner.write_bytes(CANARY)
    result = run_module(dict(files=[dict(path=str(inner), content=CANARY.decode())]))
    assert result['converged'] is False
    assert result['differences'][0].startswith(str(etc['user_dir'])) and 'uid 65534' in result['differences'][0]


def test_every_file_is_reported_not_only_the_first(etc):
    plant(etc, 'one', 'a\n')
    result = run_module(dict(files=[dict(path=str(etc['top'] / name), content='b\n') for name in ('one', 'two')]))
    assert [found.split(':')[0] for found in result['differences']] == [str(etc['top'] / 'one'), str(etc['top'] / 'two')]


COMMAND_CASES = [
    dict(id='exit-status-matches', command=dict(argv=['true']), differences=[]),
    dict(id='exit-status-differs', command=dict(argv=['false']), differences=['false: exit status 1, not 0']),
    dict(id='expected-failure', command=dict(argv=['false'], rc=1), differences=[]),
    dict(id='stdout-matches-trimmed', command=dict(argv=['echo', ' ok '], stdout='ok'), differences=[]),
    dict(id='stdout-differs', command=dict(argv=['echo', 'on'], stdout='off'), differences=["echo on: answers 'on', not 'off'"]),
    dict(id='contains', command=dict(argv=['echo', 'table inet torchfleet # rules-sha256 ab12'], contains='rules-sha256 ab12'),
         differences=[]),
    dict(id='lacks', command=dict(argv=['echo', 'table inet torchfleet'], contains='rules-sha256 ab12'),
         differences=["the output lacks 'rules-sha256 ab12'"]),
    dict(id='missing-command', command=dict(argv=['/nonexistent/nft', 'list', 'ruleset']),
         differences=['/nonexistent/nft list ruleset: ']),
]


@pytest.mark.parametrize('case', COMMAND_CASES, ids=[case['id'] for case in COMMAND_CASES])
def test_commands(case):
    result = run_module(dict(commands=[case['command']]))
    assert not result.get('failed'), result
    assert result['converged'] is (not case['differences'])
    assert len(result['differences']) == len(case['differences'])
    for found, fragment in zip(result['differences'], case['differences']):
        assert fragment in found, found


ACCOUNTS = {'trainer': pwd.struct_passwd(('trainer', 'x', 1000, 1000, '', '/home/trainer', '/bin/bash'))}
USER_CASES = [
    dict(id='exists', user=dict(name='trainer'), differences=[]),
    dict(id='shell-matches', user=dict(name='trainer', shell='/bin/bash'), differences=[]),
    dict(id='shell-differs', user=dict(name='trainer', shell='/bin/zsh'), differences=['user trainer: shell is /bin/bash, not /bin/zsh']),
    dict(id='missing', user=dict(name='nobody-here'), differences=['user nobody-here: does not exist']),
]


@pytest.mark.parametrize('case', USER_CASES, ids=[case['id'] for case in USER_CASES])
def test_users(monkeypatch, case):
    monkeypatch.setattr(state_compare.pwd, 'getpwnam', lambda name: ACCOUNTS[name])
    result = run_module(dict(users=[case['user']]))
    assert result['differences'] == case['differences']


KEY_PARAMS = dict(user='trainer', key_name=keys_case.KEY_NAME, comment='torchfleet-cluster', ssh_config=keys_case.SSH_CONFIG)
KEY_CASES = [
    dict(id='converged', layout=keys_case.CONVERGED, params={}, differences=[]),
    dict(id='no-client-block-wanted-leaves-config-unread', layout=keys_case.CONVERGED[:4] + [('.ssh/config', dict(symlink='canary'))],
         params=dict(ssh_config=None), differences=[]),
    dict(id='authorized-keys-block-missing', layout=keys_case.CONVERGED[:3] + [('.ssh/authorized_keys', keys_case.USER_KEY)]
         + keys_case.CONVERGED[4:], params={}, differences=['authorized_keys: differs']),
    dict(id='options-changed', layout=keys_case.CONVERGED, params=dict(authorized_key_options='from="10.0.0.0/8"'),
         differences=['authorized_keys: differs']),
    dict(id='ssh-dir-mode', layout=[('.ssh', dict(dir=True, mode=0o755))] + keys_case.CONVERGED[1:], params={},
         differences=['.ssh (directory): differs']),
    dict(id='no-pair-yet', layout=[('.ssh', dict(dir=True))], params={}, differences=['holds no key pair']),
    dict(id='no-ssh-dir', layout=[], params={}, differences=['.ssh: is missing']),
]


@pytest.mark.parametrize('case', KEY_CASES, ids=[case['id'] for case in KEY_CASES])
def test_ssh_user_keys(world, case):
    keys_case.lay_out(world, case['layout'])
    before = keys_case.snapshot(world['home'])
    result = run_module(dict(ssh_user_keys=dict(KEY_PARAMS, **case['params'])))
    assert len(result['differences']) == len(case['differences']), result['differences']
    for found, fragment in zip(result['differences'], case['differences']):
        assert fragment in found, found
    if case['layout'] == keys_case.CONVERGED or case['id'] == 'options-changed':
        assert result['ssh_user_keys']['public_key'] == keys_case.PUBLIC_KEY
        assert len(result['ssh_user_keys']['private_key_sha256']) == 64
    assert keys_case.snapshot(world['home']) == before
    assert keys_case.PRIVATE_KEY.splitlines()[1] not in json.dumps(result)


def with_converged_pair(layout):
    """The attack's layout, completed with the converged files it does not replace (so the pair is there)."""
    if not layout:
        return keys_case.CONVERGED
    first = layout[0][1]
    if not (isinstance(first, dict) and first.get('dir')):
        return layout
    planted = [relative for relative, spec in layout]
    return layout + [entry for entry in keys_case.CONVERGED[1:] if entry[0] not in planted]


@pytest.mark.parametrize('case', keys_case.ATTACKS, ids=[case['id'] for case in keys_case.ATTACKS])
def test_ssh_user_keys_attacks_are_differences(world, case):
    """Every layout ssh_user_keys refuses: a difference naming the path, nothing followed or changed."""
    if 'home_mode' in case:
        world['home'].chmod(case['home_mode'])
    keys_case.lay_out(world, with_converged_pair(case['layout']))
    canary, home = keys_case.canary_state(world), keys_case.snapshot(world['home'])
    result = run_module(dict(ssh_user_keys=KEY_PARAMS))
    path = str(world['home'] / case['path']) if case['path'] else str(world['home'])
    assert result['converged'] is False and not result.get('failed'), result
    assert any(found.startswith(path) and case['reason'] in found for found in result['differences']), result['differences']
    assert keys_case.canary_state(world) == canary
    assert keys_case.snapshot(world['home']) == home
    assert keys_case.CANARY.decode() not in json.dumps(result)


BAD_PARAMS = [
    dict(id='relative-path', files=[dict(path='etc/x', content='')], msg='is not absolute'),
    dict(id='block-without-marker', files=[dict(path='/etc/x', block='a')], msg='block and marker go together'),
    dict(id='marker-without-mark', files=[dict(path='/etc/x', block='a', marker='# torchfleet')], msg='must contain {mark}'),
    dict(id='setting-without-value', files=[dict(path='/etc/x', setting='a')], msg='setting and value go together'),
]


@pytest.mark.parametrize('case', BAD_PARAMS, ids=[case['id'] for case in BAD_PARAMS])
def test_bad_params_fail(case):
    result = run_module(dict(files=case['files']))
    assert result['failed'] and case['msg'] in result['msg'], result
