# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""job_supervisor with real processes: detached jobs, the deadline, stop, replace and refusal.

The jobs are small shell scripts; one leaves a child in its own session (as torchrun's workers
are) and one leaves an orphan, which the supervisor must still end. A second start under a job's
name attaches only when it is the same start; what a job leaves on disk is private."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os
import socket
import stat
import subprocess
import sys
import time

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._jobs import job_supervisor

ENV = {'PATH': '/usr/bin:/bin'}
# a child in its own session and an orphan, told by their argv: durations unique to this test
# process, since parallel test workers run the same jobs
BASE = 100000 + os.getpid() * 3
SECONDS = [str(BASE + offset) for offset in range(3)]
SPREAD = 'echo started; setsid sleep %s & (sleep %s &); sleep %s' % tuple(SECONDS)


def wait_end(state_dir, name, limit=30):
    deadline = time.time() + limit
    while time.time() < deadline:
        record = job_supervisor.status(state_dir, name)
        if record['state'] != 'running':
            return record
        time.sleep(0.1)
    raise AssertionError('job %s still runs after %ss' % (name, limit))


def eventually(check, limit=15):
    """Poll instead of a fixed sleep: a loaded CI machine may take seconds to fork and exec."""
    deadline = time.time() + limit
    while not check():
        if time.time() > deadline:
            raise AssertionError('not true after %ss' % limit)
        time.sleep(0.05)


def sleepers():
    found = []
    for entry in os.listdir('/proc'):
        try:
            with open('/proc/%s/cmdline' % entry, 'rb') as handle:
                argv = handle.read().split(b'\0')
        except OSError:
            continue
        if argv[:1] == [b'sleep'] and argv[1:2] in [[seconds.encode()] for seconds in SECONDS]:
            found.append(int(entry))
    return found


@pytest.fixture
def state_dir(tmp_path):
    path = tmp_path / 'jobs'
    path.mkdir()
    yield str(path)
    # stop through the supervisor first: a job started just before the teardown may not have
    # exec'd its sleeps yet, and would leak them into the next test
    running = job_supervisor.current_job(str(path))
    if running:
        with job_supervisor.Lock(str(path)):
            job_supervisor.stop(str(path), running, 1, by='teardown')
    for pid in sleepers():
        os.kill(pid, 9)


def start(state_dir, name, shell, timeout=30, replace=False, user='nobody', **claim):
    return job_supervisor.start(state_dir, name, ['/bin/sh', '-c', shell], ENV, user, timeout, 1, replace, **claim)


def staged(tmp_path, folder, text):
    """A script waiting in a directory of its own, as the launch role stages it before the start."""
    directory = tmp_path / folder
    directory.mkdir(mode=0o700)
    path = directory / 'train.py'
    path.write_text(text)
    return str(path)


CASES = [
    # id, script, timeout, expected (state, rc, reason)
    ('succeeds', 'echo hello; exit 0', 30, ('succeeded', 0, 'exited')),
    ('fails', 'echo broken >&2; exit 3', 30, ('failed', 3, 'exited')),
    ('passes its deadline', SPREAD, 2, ('timed_out', 124, 'timed_out')),
    ('cannot start', None, 30, ('failed', 127, 'exited')),
]


@pytest.mark.parametrize('dummy, script, timeout, expected', CASES, ids=[case[0] for case in CASES])
def test_job_ends_with_its_state_and_leaves_nothing(state_dir, dummy, script, timeout, expected):
    if script is None:
        job_supervisor.start(state_dir, 'job', ['/nonexistent/torchrun'], ENV, 'nobody', timeout, 1, False)
    else:
        start(state_dir, 'job', script, timeout)
    record = wait_end(state_dir, 'job')
    assert (record['state'], record['rc'], record['reason']) == expected
    assert sleepers() == []
    # result.json is written just before the supervisor exits: the node is free once it is gone
    eventually(lambda: job_supervisor.current_job(state_dir) is None)
    with open(record['log']) as handle:
        log = handle.read()
    assert {'succeeds': 'hello', 'fails': 'broken', 'passes its deadline': 'started',
            'cannot start': 'could not start /nonexistent/torchrun'}[dummy] in log


def test_the_job_outlives_its_starter_and_a_second_start_is_refused(state_dir):
    record, replaced = start(state_dir, 'first', SPREAD)
    assert (record['state'], replaced) == ('running', None)
    with pytest.raises(job_supervisor.JobError, match='job first is still running on this node'):
        start(state_dir, 'second', SPREAD)
    assert job_supervisor.status(state_dir, 'second')['state'] == 'absent'
    assert job_supervisor.current_job(state_dir) == 'first'
    # starting the same run again changes nothing
    assert start(state_dir, 'first', SPREAD)[0]['started'] == record['started']


def test_stop_ends_every_process_of_the_job(state_dir):
    start(state_dir, 'job', SPREAD)
    eventually(lambda: len(sleepers()) == 3)
    with job_supervisor.Lock(state_dir):
        assert job_supervisor.stop(state_dir, 'job', 1, by='test') is True
    record = job_supervisor.status(state_dir, 'job')
    assert (record['state'], record['stopped_by']) == ('stopped', 'test')
    assert sleepers() == []


def test_a_stop_right_after_the_start_is_not_lost(state_dir):
    """The supervisor catches SIGTERM from the moment its pid is known (a replace may follow a start at once)."""
    for attempt in range(5):
        name = 'job%d' % attempt
        start(state_dir, name, SPREAD)
        with job_supervisor.Lock(state_dir):
            assert job_supervisor.stop(state_dir, name, 1, by='at once') is True
        # the node is free when stop returns: the next start must not find this job still holding it
        assert job_supervisor.current_job(state_dir) is None
        record = job_supervisor.status(state_dir, name)
        assert (record['state'], record['stopped_by']) == ('stopped', 'at once'), record
    eventually(lambda: sleepers() == [])


def test_stop_returns_once_the_supervisor_is_gone(state_dir):
    """stop() waits for the supervisor itself, not only for its result."""
    # stands in for a supervisor that has written result.json and not yet exited
    lingering = subprocess.Popen([sys.executable, '-c', 'import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); '
                                  'print("ready", flush=True); time.sleep(1)'], stdout=subprocess.PIPE, text=True)
    try:
        assert lingering.stdout.readline().strip() == 'ready'
        directory = job_supervisor.job_dir(state_dir, 'job')
        os.mkdir(directory)
        job_supervisor.write_json(os.path.join(directory, 'job.json'), {
            'name': 'job', 'supervisor_pid': lingering.pid, 'supervisor_start': job_supervisor.process_start_time(lingering.pid)})
        job_supervisor.write_json(os.path.join(directory, 'result.json'), {'rc': 0, 'reason': 'stopped', 'ended': time.time()})
        job_supervisor.write_text(os.path.join(state_dir, 'current'), 'job\n')
        assert job_supervisor.current_job(state_dir) is None  # the result is written: the job holds nothing
        with job_supervisor.Lock(state_dir):
            assert job_supervisor.stop(state_dir, 'job', 1, by='test') is True
        assert lingering.poll() is not None
        assert job_supervisor.current_job(state_dir) is None
    finally:
        lingering.kill()
        lingering.wait()


def test_replace_stops_the_holder_first(state_dir):
    start(state_dir, 'old', SPREAD)
    eventually(lambda: len(sleepers()) == 3)
    record, replaced = start(state_dir, 'new', 'sleep %s' % SECONDS[2], replace=True)
    assert replaced == 'old'
    old = job_supervisor.status(state_dir, 'old')
    assert (old['state'], old['stopped_by']) == ('stopped', 'replaced by job new')
    assert job_supervisor.current_job(state_dir) == 'new'


def test_a_name_runs_once(state_dir):
    start(state_dir, 'job', 'exit 0')
    wait_end(state_dir, 'job')
    with pytest.raises(job_supervisor.JobError, match='job job already ran on this node'):
        start(state_dir, 'job', 'exit 0')


def test_an_ended_job_holds_nothing_while_its_supervisor_is_exiting(state_dir, monkeypatch):
    """The moment between the supervisor's result and its exit: the job has ended, so the name is
    spent and the node is free for another job."""
    start(state_dir, 'job', 'exit 0')
    wait_end(state_dir, 'job')
    monkeypatch.setattr(job_supervisor, 'alive', lambda pid, start_time: True)
    assert job_supervisor.current_job(state_dir) is None
    with pytest.raises(job_supervisor.JobError, match='job job already ran on this node'):
        start(state_dir, 'job', 'exit 0')
    record, replaced = start(state_dir, 'next', 'exit 0')
    assert record['name'] == 'next' and replaced is None
    assert wait_end(state_dir, 'next')['state'] == 'succeeded'


def test_a_supervisor_that_died_is_reported_lost(state_dir):
    record, dummy = start(state_dir, 'job', 'sleep %s' % SECONDS[2])
    os.kill(record['supervisor_pid'], 9)
    eventually(lambda: job_supervisor.status(state_dir, 'job')['state'] == 'lost')
    assert job_supervisor.current_job(state_dir) is None


FIRST = {'shell': 'sleep %s' % SECONDS[2], 'user': 'nobody', 'owner': 'alice', 'staged': 'print(1)\n'}
SECOND_STARTS = [
    # id, what the second start under the same name changes, what its refusal says (None: it attaches)
    ('identical', {}, None),
    ('other command', {'shell': 'sleep 7'}, "its command differs: 'sleep %s' in the job, 'sleep 7' in this start" % SECONDS[2]),
    ('other owner', {'owner': 'bob'}, 'it was started by alice, this start is by bob'),
    ('other user', {'user': 'daemon'}, 'it runs as nobody, this start as daemon'),
    ('other script', {'staged': 'print(2)\n'}, 'its script has SHA-256 '),
]


def start_staged(state_dir, tmp_path, folder, start_args):
    return start(state_dir, 'run', start_args['shell'], user=start_args['user'], owner=start_args['owner'],
                 script=staged(tmp_path, folder, start_args['staged']))


@pytest.mark.parametrize('dummy, change, refusal', SECOND_STARTS, ids=[case[0] for case in SECOND_STARTS])
def test_a_start_under_a_running_jobs_name_attaches_only_when_identical(state_dir, tmp_path, dummy, change, refusal):
    record, dummy = start_staged(state_dir, tmp_path, 'first', FIRST)
    if refusal is None:
        again, replaced = start_staged(state_dir, tmp_path, 'second', dict(FIRST, **change))
        assert (again['state'], again['started'], again['owner'], replaced) == ('running', record['started'], 'alice', None)
    else:
        with pytest.raises(job_supervisor.JobError) as caught:
            start_staged(state_dir, tmp_path, 'second', dict(FIRST, **change))
        message = str(caught.value)
        assert message.startswith('job run on node %s is running and was started differently: ' % socket.gethostname())
        assert refusal in message
    # neither attaching nor a refusal touches the running job's script; the second one stays staged
    with open(os.path.join(job_supervisor.job_dir(state_dir, 'run'), 'train.py')) as handle:
        assert handle.read() == 'print(1)\n'
    assert os.path.exists(str(tmp_path / 'second' / 'train.py'))
    assert job_supervisor.current_job(state_dir) == 'run'
    assert job_supervisor.status(state_dir, 'run')['started'] == record['started']


def test_a_start_under_an_ended_jobs_name_says_what_differs(state_dir):
    start(state_dir, 'job', 'exit 0', owner='alice')
    wait_end(state_dir, 'job')
    with pytest.raises(job_supervisor.JobError, match='job job on node .* already ran and was started differently: '
                                                      'it was started by alice, this start is by bob'):
        start(state_dir, 'job', 'exit 0', owner='bob')


def test_the_staged_script_moves_into_the_job_only_when_the_start_claims_the_name(state_dir, tmp_path):
    first = staged(tmp_path, 'first', 'print(1)\n')
    record, dummy = start(state_dir, 'run', 'sleep %s' % SECONDS[2], script=first)
    assert not os.path.exists(first)
    assert record['script_sha256'] == hashlib.sha256(b'print(1)\n').hexdigest()
    with open(os.path.join(job_supervisor.job_dir(state_dir, 'run'), 'train.py')) as handle:
        assert handle.read() == 'print(1)\n'


def job_group():
    """A group other than the caller's where the test may give files away (as root), else the caller's."""
    return 65534 if os.geteuid() == 0 else os.getgid()


PRIVATE = [
    # id, path under the state directory, mode, group (None: not the job's)
    ('job directory', 'job', 0o750, 'job'),
    ('job record', 'job/job.json', 0o640, 'job'),
    ('log', 'job/node.log', 0o640, 'job'),
    ('script', 'job/train.py', 0o640, 'job'),
    ('stop request', 'job/stop.json', 0o640, 'job'),
    ('result', 'job/result.json', 0o640, 'job'),
    ('node holder', 'current', 0o600, None),
    ('lock', '.lock', 0o600, None),
]


@pytest.mark.parametrize('dummy, relative, mode, group', PRIVATE, ids=[case[0] for case in PRIVATE])
def test_what_a_job_leaves_is_private_to_root_and_the_jobs_group(state_dir, tmp_path, dummy, relative, mode, group):
    old_umask = os.umask(0)  # the modes must not depend on the caller's umask
    try:
        start(state_dir, 'job', 'sleep %s' % SECONDS[2], script=staged(tmp_path, 'stage', 'print(1)\n'), gid=job_group())
        with job_supervisor.Lock(state_dir):
            job_supervisor.stop(state_dir, 'job', 1, by='test')
    finally:
        os.umask(old_umask)
    eventually(lambda: os.path.exists(os.path.join(state_dir, 'job', 'result.json')))
    found = os.lstat(os.path.join(state_dir, relative))
    assert stat.S_IMODE(found.st_mode) == mode
    if group is not None:
        assert found.st_gid == job_group()


@pytest.mark.parametrize('umask, shown', [(None, '0027'), (0o077, '0077')], ids=['default', 'given'])
def test_the_job_runs_with_a_umask_that_keeps_its_files_from_other_users(state_dir, umask, shown):
    claim = {} if umask is None else {'umask': umask}
    start(state_dir, 'job', 'umask', **claim)
    record = wait_end(state_dir, 'job')
    with open(record['log']) as handle:
        assert handle.read().split() == [shown]
