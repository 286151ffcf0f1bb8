# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Data-driven tests of torchfleet.cluster.sshd_candidate.

The sshd configuration lives in real files under tmp_path; ``run_command`` answers with
recorded outputs of OpenSSH 9.2p1 (sshd_samples) and records what the scratch copy held."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tempfile

import pytest

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.torchfleet.cluster.plugins.modules import sshd_candidate
from ansible_collections.torchfleet.cluster.tests.unit.plugins.module_utils import sshd_samples
from ansible_collections.torchfleet.cluster.tests.unit.plugins.modules.module_exits import ExitJson, FailJson

LIVE_DROPIN = 'PasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n'
CANDIDATE = LIVE_DROPIN + 'MaxAuthTries 3\n'
OTHER_DROPIN = 'X11Forwarding no\n'

ROOT_LOGIN = dict(label="Ansible's own login to node0", user='root', groups=['root'], addr='10.89.1.1', laddr='10.89.1.2', lport=22)
MESH_LOGIN = dict(label='the mesh login from node1 to node0', user='trainer', groups=['trainer'], addr='10.89.1.3',
                  laddr='10.89.1.2', lport=22, key_type='ssh-ed25519')

CASES = [
    dict(
        id='accepted',
        logins=[ROOT_LOGIN, MESH_LOGIN],
        answers={'-C': sshd_samples.SSHD_T_CONVERGED_ROOT},
        refusals=[[], []],
    ),
    dict(
        id='accepted in check mode',
        check_mode=True,
        logins=[MESH_LOGIN],
        answers={'-C': sshd_samples.SSHD_T_CONVERGED_ROOT},
        refusals=[[]],
    ),
    dict(
        id='unknown keyword',
        logins=[ROOT_LOGIN],
        answers={'-t': (255, '', sshd_samples.SSHD_BAD_KEYWORD_ERROR)},
        failed=['failed to validate within', '(sshd -t)', 'Bad configuration option: NoSuchKeyword', 'Nothing was changed.'],
    ),
    dict(
        id='DenyUsers locks out Ansible, the mesh stays',
        logins=[ROOT_LOGIN, MESH_LOGIN],
        answers={'-C': sshd_samples.SSHD_T_LOCKOUT_ROOT},
        refusals=[["DenyUsers pattern 'root' matches it"], []],
        failed=["would cut off Ansible's own login to node0: sshd would refuse user 'root' from 10.89.1.1 (to 10.89.1.2 port 22): "
                "DenyUsers pattern 'root' matches it", 'Nothing was changed.'],
        not_in_msg=['mesh login'],
    ),
    dict(
        id='Port and PubkeyAuthentication lock out the mesh',
        logins=[MESH_LOGIN],
        answers={'-C': sshd_samples.SSHD_T_PORT_PUBKEY_TRAINER},
        refusals=[['sshd would no longer listen on 10.89.1.2 port 22 (ListenAddress/Port give [::]:2222 0.0.0.0:2222)',
                   'PubkeyAuthentication is no and it logs in with a key']],
        failed=["would cut off the mesh login from node1 to node0: sshd would refuse user 'trainer' from 10.89.1.3"],
    ),
    dict(
        id='a Match block denies the group and moves the keys file away from the mesh key',
        logins=[dict(MESH_LOGIN, authorized_keys='HOME/.ssh/authorized_keys')],
        answers={'-C': sshd_samples.SSHD_T_MATCH_TRAINER},
        refusals=[["its group 'trainer' matches DenyGroups pattern 'train?r'",
                   'AuthorizedKeysFile /etc/ssh/keys/%u no longer reads HOME/.ssh/authorized_keys, where its key is']],
        failed=['DenyGroups', 'AuthorizedKeysFile'],
    ),
    dict(
        id='without a named keys file, the files the live sshd reads must stay',
        logins=[dict(MESH_LOGIN, groups=['users'])],
        keys_files=['.ssh/authorized_keys'],
        answers={'-C': sshd_samples.SSHD_T_MATCH_TRAINER, 'live': sshd_samples.SSHD_T_CONVERGED_ROOT},
        refusals=[['AuthorizedKeysFile /etc/ssh/keys/%u no longer reads HOME/.ssh/authorized_keys, where its key is']],
        failed=['AuthorizedKeysFile'],
    ),
    dict(
        id='the live keys files that exist are kept',
        logins=[dict(MESH_LOGIN, groups=['users'])],
        keys_files=['.ssh/authorized_keys'],
        answers={'-C': sshd_samples.SSHD_T_CONVERGED_ROOT, 'live': sshd_samples.SSHD_T_CONVERGED_ROOT},
        refusals=[[]],
    ),
    dict(
        id='an earlier drop-in overrides an expected value',
        params={'expect': {'permitrootlogin': 'no'}},
        logins=[],
        answers={},
        failed=["effective setting is 'permitrootlogin without-password', not 'permitrootlogin no': a file read before 10-torchfleet.conf"],
    ),
    dict(
        id='main config without the Include',
        main_config='PermitRootLogin no\n',
        logins=[],
        answers={},
        failed=["does not Include", "add 'Include"],
        no_sshd=True,
    ),
]


pytestmark = pytest.mark.usefixtures('module_exits')


def make_config(tmp_path, case):
    dropin_dir = tmp_path / 'etc' / 'sshd_config.d'
    dropin_dir.mkdir(parents=True)
    (dropin_dir / '10-torchfleet.conf').write_text(LIVE_DROPIN)
    (dropin_dir / '50-other.conf').write_text(OTHER_DROPIN)
    main = tmp_path / 'etc' / 'sshd_config'
    main.write_text(case.get('main_config', sshd_samples.DEBIAN_SSHD_CONFIG.replace('/etc/ssh/sshd_config.d', str(dropin_dir))))
    home = tmp_path / 'home' / 'trainer'
    (home / '.ssh').mkdir(parents=True)
    for name in case.get('keys_files', ()):
        (home / name).write_text('ssh-ed25519 AAAA torchfleet-cluster\n')
    return main, dropin_dir / '10-torchfleet.conf', home


def run_module(monkeypatch, tmp_path, case):
    main, dropin, home = make_config(tmp_path, case)
    scratch_parent = tmp_path / 'scratch'
    scratch_parent.mkdir()
    monkeypatch.setattr(tempfile, 'tempdir', str(scratch_parent))
    seen = []
    answers = case['answers']

    def run_command(self, args, **kwargs):
        config = args[args.index('-f') + 1]
        if config == str(main):
            seen.append(dict(args=args))
            return 0, answers.get('live', sshd_samples.SSHD_T_CONVERGED_ROOT), ''
        scratch = os.path.dirname(config)
        copies = dict((name, (tmp_path / scratch / 'd' / name).read_text()) for name in os.listdir(os.path.join(scratch, 'd')))
        seen.append(dict(args=args, main=(tmp_path / config).read_text(), copies=copies, scratch=scratch))
        if '-t' in args:
            return answers.get('-t', (0, '', ''))
        return 0, answers['-C'] if '-C' in args else sshd_samples.SSHD_T_CONVERGED_ROOT, ''

    monkeypatch.setattr(basic.AnsibleModule, 'run_command', run_command)
    logins = [dict(login, home=str(home)) for login in case['logins']]
    for login in logins:
        if 'authorized_keys' in login:
            login['authorized_keys'] = login['authorized_keys'].replace('HOME', str(home))
    args = dict(case.get('params', {}), content=CANDIDATE, dropin=str(dropin), main_config=str(main), sshd='/usr/sbin/sshd', logins=logins)
    if case.get('check_mode'):
        args['_ansible_check_mode'] = True
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as caught:
            sshd_candidate.main()
    return caught, seen, dropin, home, scratch_parent


@pytest.mark.parametrize('case', CASES, ids=[case['id'] for case in CASES])
def test_sshd_candidate(monkeypatch, tmp_path, case):
    caught, seen, dropin, home, scratch_parent = run_module(monkeypatch, tmp_path, case)
    result = caught.value.args[0]

    assert dropin.read_text() == LIVE_DROPIN
    assert os.listdir(str(scratch_parent)) == []
    assert not result.get('changed')
    if case.get('failed'):
        assert caught.type is FailJson, result
        for text in case['failed']:
            assert text.replace('HOME', str(home)) in result['msg']
        for text in case.get('not_in_msg', ()):
            assert text not in result['msg']
    else:
        assert caught.type is ExitJson, result
    if 'refusals' in case:
        expected = [[text.replace('HOME', str(home)) for text in refusals] for refusals in case['refusals']]
        assert [verdict['refusals'] for verdict in result['logins']] == expected
    if case.get('no_sshd'):
        assert seen == []
        return

    scratch_calls = [call for call in seen if 'scratch' in call]
    first = scratch_calls[0]
    assert first['args'][:2] == ['/usr/sbin/sshd', '-t']
    assert first['copies'] == {'10-torchfleet.conf': CANDIDATE, '50-other.conf': OTHER_DROPIN}
    assert first['main'].startswith('Include %s/d/*.conf\n' % first['scratch'])
    connection_calls = [call for call in scratch_calls if '-C' in call['args']]
    if 'refusals' in case:
        assert len(connection_calls) == len(case['logins'])
    for call, login in zip(connection_calls, case['logins']):
        spec = call['args'][call['args'].index('-C') + 1]
        assert spec == 'user=%s,host=%s,addr=%s,laddr=%s,lport=%d' % (login['user'], login['addr'], login['addr'], login['laddr'], login['lport'])
