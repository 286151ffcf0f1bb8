# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""torchrun_job: bad input fails early naming it; a real job runs as the user, never as root; a name
is a claim that only the same start may attach to; nothing of a job is readable by other users."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import socket
import stat
import subprocess
import tempfile
import time

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.torchfleet.cluster.plugins.modules import torchrun_job
from ansible_collections.torchfleet.cluster.tests.unit.plugins.modules.module_exits import ExitJson, FailJson, patch_module_exits


pytestmark = pytest.mark.usefixtures('module_exits')


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
    ('umask not octal', {'name': 'run', 'state': 'started', 'user': 'nobody', 'argv': ['/bin/true'], 'umask': '0o27'},
     "umask '0o27' of job run must be octal"),
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


def staged(directory, text):
    """A script waiting in a root-only directory of its own, as the launch role stages it."""
    directory.mkdir(mode=0o700)
    path = directory / 'train.py'
    path.write_text(text)
    return str(path)


FIRST = {'name': 'run', 'state': 'started', 'user': 'nobody', 'argv': ['/bin/sleep', '304'], 'chdir': '/', 'stop_grace': 1}
SECOND_STARTS = [
    # id, what the second start changes, what the refusal says (None: it attaches)
    ('identical', {}, None),
    ('other argv', {'argv': ['/bin/sleep', '305']}, "its command differs: '304' in the job, '305' in this start"),
    ('other owner', {'owner': 'bob'}, 'it was started by alice, this start is by bob'),
    ('other script', {'staged': 'print(2)\n'}, "its script has SHA-256 "),
]


@pytest.mark.skipif(os.geteuid() != 0, reason='dropping to another user needs root')
@pytest.mark.parametrize('dummy, change, refusal', SECOND_STARTS, ids=[case[0] for case in SECOND_STARTS])
def test_a_second_start_under_a_running_jobs_name_attaches_only_when_identical(tmp_path, monkeypatch, dummy, change, refusal):
    path = state(tmp_path)
    # the first start names no owner: it is the account that logged in, as sudo tells it
    monkeypatch.setenv('SUDO_USER', 'alice')
    first = run(dict(FIRST, state_dir=path, script=staged(tmp_path / 'first', 'print(1)\n')))
    try:
        assert first['changed'] and first['job']['owner'] == 'alice'
        second_args = dict(FIRST, state_dir=path, script=staged(tmp_path / 'second', change.get('staged', 'print(1)\n')))
        second_args.update((key, value) for key, value in change.items() if key != 'staged')
        second = run(second_args)
        if refusal is None:
            assert (second.get('failed'), second['changed'], second['job']['started']) == (None, False, first['job']['started'])
        else:
            assert second['failed'] and refusal in second['msg']
            assert second['msg'].startswith('torchrun_job: job run on node %s is running and was started differently: '
                                            % socket.gethostname())
        with open(os.path.join(path, 'run', 'train.py')) as handle:
            assert handle.read() == 'print(1)\n'
        assert (tmp_path / 'second' / 'train.py').exists()
        assert run({'name': 'run', 'state_dir': path})['job']['started'] == first['job']['started']
    finally:
        run({'name': 'run', 'state': 'stopped', 'state_dir': path, 'stop_grace': 1})


@pytest.fixture(scope='module')
def ended_job():
    """A job that ran its staged script as nobody, under a state directory the module made in a
    directory every user can pass through (as /var/lib is)."""
    if os.geteuid() != 0:
        pytest.skip('dropping to another user needs root')
    top = tempfile.mkdtemp(prefix='torchfleet-modes-')
    os.chmod(top, 0o711)
    path = os.path.join(top, 'jobs')
    stage = os.path.join(top, 'stage')
    os.mkdir(stage, 0o700)
    with open(os.path.join(stage, 'job.sh'), 'w') as handle:
        handle.write('umask; echo "API_KEY=secret"\n')
    try:
        with pytest.MonkeyPatch.context() as monkeypatch:
            patch_module_exits(monkeypatch)
            run({'name': 'run', 'state': 'started', 'state_dir': path, 'user': 'nobody', 'chdir': '/',
                 'script': os.path.join(stage, 'job.sh'), 'argv': ['/bin/sh', os.path.join(path, 'run', 'job.sh')]})
            ended = run({'name': 'run', 'state_dir': path, 'wait': True, 'poll_interval': 1})
        yield path, ended['job']
    finally:
        shutil.rmtree(top)


MODES = [
    # id, path under the state directory, mode, group
    ('state directory', '', 0o711, 0),
    ('job directory', 'run', 0o750, 65534),
    ('script', 'run/job.sh', 0o640, 65534),
    ('log', 'run/node.log', 0o640, 65534),
    ('record', 'run/job.json', 0o640, 65534),
    ('result', 'run/result.json', 0o640, 65534),
    ('node holder', 'current', 0o600, 0),
]


@pytest.mark.parametrize('dummy, relative, mode, group', MODES, ids=[case[0] for case in MODES])
def test_the_jobs_files_are_root_s_and_only_the_training_users_group_reads_them(ended_job, dummy, relative, mode, group):
    path, job = ended_job
    assert (job['state'], job['log_tail']) == ('succeeded', ['0027', 'API_KEY=secret'])
    found = os.lstat(os.path.join(path, relative))
    assert (found.st_uid, found.st_gid, stat.S_IMODE(found.st_mode)) == (0, group, mode)


STRANGER = [
    # id, what another local user (not in the training user's group) tries, on what
    ('list the run names', ['ls'], ''),
    ('read the log', ['cat'], 'run/node.log'),
    ('read the record', ['cat'], 'run/job.json'),
    ('read the script', ['cat'], 'run/job.sh'),
]


@pytest.mark.parametrize('dummy, command, relative', STRANGER, ids=[case[0] for case in STRANGER])
def test_another_local_user_reads_nothing_of_the_job(ended_job, dummy, command, relative):
    path, dummy_job = ended_job
    tried = subprocess.run(['setpriv', '--reuid=65533', '--regid=65533', '--clear-groups', '--'] + command
                           + [os.path.join(path, relative)], capture_output=True, text=True, check=False)
    assert tried.returncode != 0 and 'Permission denied' in tried.stderr and 'secret' not in tried.stdout
