# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""torchrun_job: bad input fails early naming it; a real job runs as the user, never as root."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.torchfleet.cluster.plugins.modules import torchrun_job
from ansible_collections.torchfleet.cluster.tests.unit.plugins.modules.module_exits import ExitJson, FailJson, patch_module_exits


@pytest.fixture(autouse=True)
def exits(monkeypatch):
    patch_module_exits(monkeypatch)


def run(args):
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as caught:
            torchrun_job.main()
    return caught.value.args[0]


def state(tmp_path):
    path = tmp_path / 'jobs'
    path.mkdir(mode=0o755, exist_ok=True)
    os.chmod(str(path), 0o755)
    return str(path)


FAILURES = [
    ('bad name', {'name': '../x', 'state': 'status'}, 'job name'),
    ('argv missing', {'name': 'run', 'state': 'started', 'user': 'nobody'}, 'argv'),
    ('root refused', {'name': 'run', 'state': 'started', 'user': 'root', 'argv': ['/bin/true']}, 'must not run as root'),
    ('unknown user', {'name': 'run', 'state': 'started', 'user': 'no-such-user-x', 'argv': ['/bin/true']},
     'user no-such-user-x does not exist'),
    ('zero timeout', {'name': 'run', 'state': 'started', 'user': 'nobody', 'argv': ['/bin/true'], 'timeout': 0}, 'timeout'),
]


@pytest.mark.parametrize('dummy, args, message', FAILURES, ids=[case[0] for case in FAILURES])
def test_bad_input_fails_naming_it(tmp_path, dummy, args, message):
    result = run(dict(args, state_dir=state(tmp_path)))
    assert result.get('failed') and message in result['msg']


def test_a_state_directory_others_can_write_is_refused(tmp_path):
    path = state(tmp_path)
    os.chmod(path, 0o777)
    result = run({'name': 'run', 'state': 'status', 'state_dir': path})
    assert result.get('failed') and path in result['msg']


def test_check_mode_starts_nothing(tmp_path):
    path = state(tmp_path)
    result = run({'name': 'run', 'state': 'started', 'user': 'nobody', 'argv': ['/bin/true'], 'state_dir': path,
                  '_ansible_check_mode': True})
    assert result['changed'] and result['job']['state'] == 'absent'
    assert os.listdir(path) == []


@pytest.mark.skipif(os.geteuid() != 0, reason='dropping to another user needs root')
def test_a_job_runs_as_the_user_in_its_home_and_is_read_back(tmp_path):
    path = state(tmp_path)
    args = {'name': 'run', 'state_dir': path, 'user': 'nobody', 'environment': {'TORCHFLEET_TEST': 'yes'},
            'argv': ['/bin/sh', '-c', 'id -u; pwd; echo "$TORCHFLEET_TEST $HOME"; exit 4'], 'chdir': '/'}
    started = run(dict(args, state='started'))
    assert started['changed'] and started['active'] in ('run', None)
    again = run(dict(args, state='started'))
    assert not again['changed']
    ended = run({'name': 'run', 'state_dir': path, 'wait': True, 'poll_interval': 1})
    job = ended['job']
    assert (job['state'], job['rc'], job['user']) == ('failed', 4, 'nobody')
    assert job['log_tail'][:3] == ['65534', '/', 'yes /nonexistent']
    assert job['failure']['error'] == 'yes /nonexistent'
    assert ended['active'] is None


@pytest.mark.skipif(os.geteuid() != 0, reason='dropping to another user needs root')
def test_stop_is_real(tmp_path):
    path = state(tmp_path)
    run({'name': 'run', 'state': 'started', 'state_dir': path, 'user': 'nobody', 'argv': ['/bin/sleep', '304'], 'chdir': '/',
         'stop_grace': 1})
    time.sleep(0.3)
    stopped = run({'name': 'run', 'state': 'stopped', 'state_dir': path, 'stop_grace': 1, 'stop_reason': 'unit test'})
    assert stopped['changed'] and (stopped['job']['state'], stopped['job']['stopped_by']) == ('stopped', 'unit test')
    assert run({'name': 'run', 'state': 'stopped', 'state_dir': path})['changed'] is False
