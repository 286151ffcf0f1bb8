# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""job_supervisor with real processes: detached jobs, the deadline, stop, replace and refusal.

The jobs are small shell scripts; one leaves a child in its own session (as torchrun's workers
are) and one leaves an orphan, which the supervisor must still end."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys
import time

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils import job_supervisor

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


def start(state_dir, name, script, timeout=30, replace=False):
    return job_supervisor.start(state_dir, name, ['/bin/sh', '-c', script], ENV, 'nobody', timeout, 1, replace)


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
