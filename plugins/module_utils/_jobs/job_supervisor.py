# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A detached job that outlives the Ansible connection, with a deadline and a real stop.

Layout under a root-owned state directory (every name below is root's; the job only gets
file descriptors). ``STATE/NAME`` is mode 0750 and every file in it 0640, in the group the
caller gives (the training user's), so that the job can read its script and nobody else can
read anything of it; the files directly in ``STATE`` are 0600:

``STATE/.lock``            flock taken while deciding to start or stop (two runs at once)
``STATE/current``          name of the job that holds the node, if any
``STATE/NAME/job.json``    argv, user, owner, script checksum, supervisor pid and start time, deadline
``STATE/NAME/node.log``    the job's stdout and stderr (opened by root, inherited by the job)
``STATE/NAME/SCRIPT``      the staged script, moved in once the start has claimed NAME
``STATE/NAME/result.json`` rc, reason (exited, timed_out, stopped), end time

A start under the name of a job that exists attaches to it only when it is the same start (argv,
user, owner and script checksum); any other is refused, so one operator never takes over or
writes into another's job.

The supervisor is a double-forked, session-leading child of the module that makes itself
the child subreaper (``PR_SET_CHILD_SUBREAPER``), so workers that torchrun starts in their
own sessions stay its descendants even when torchrun dies. It runs the job, enforces the
deadline, and on SIGTERM or at the deadline sends SIGTERM to every descendant, then SIGKILL
to what is left after the grace period; then it writes the result."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ctypes
import errno
import fcntl
import hashlib
import json
import os
import signal
import socket
import stat
import subprocess
import time

from ansible_collections.torchfleet.cluster.plugins.module_utils._files.atomic_file import replace_file

PR_SET_CHILD_SUBREAPER = 36
REASON_EXITED = 'exited'
REASON_TIMED_OUT = 'timed_out'
REASON_STOPPED = 'stopped'
TIMED_OUT_RC = 124
MAX_FD = 65536
JOB_DIR_MODE = 0o750
JOB_FILE_MODE = 0o640
STATE_FILE_MODE = 0o600
JOB_UMASK = 0o027


class JobError(Exception):
    """A job cannot be started, read or stopped; the message names the path or job."""


def job_dir(state_dir, name):
    return os.path.join(state_dir, name)


def read_json(path):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def set_mode(fd, mode, gid=None):
    """Mode (whatever the umask) and, when given, group of an open file."""
    if gid is not None and os.fstat(fd).st_gid != gid:
        os.fchown(fd, -1, gid)
    os.fchmod(fd, mode)


def write_text(path, text, mode=STATE_FILE_MODE, gid=None):
    replace_file(path, text, mode, gid)


def write_json(path, data, mode=STATE_FILE_MODE, gid=None):
    write_text(path, json.dumps(data, sort_keys=True) + '\n', mode, gid)


def write_job_json(directory, name, data):
    """A record in the job's directory, readable by the directory's group like the rest of the job."""
    write_json(os.path.join(directory, name), data, JOB_FILE_MODE, os.stat(directory).st_gid)


def process_start_time(pid):
    """Field 22 of /proc/PID/stat (start time in clock ticks), or None when pid is gone."""
    try:
        with open('/proc/%d/stat' % pid) as handle:
            stat = handle.read()
    except (OSError, ValueError):
        return None
    return int(stat.rsplit(')', 1)[1].split()[19])


def alive(pid, start_time):
    """The process that was started is still there (not a reused pid, not a zombie)."""
    if not pid or process_start_time(pid) != start_time:
        return False
    try:
        with open('/proc/%d/stat' % pid) as handle:
            return handle.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


def parent_map():
    """pid -> parent pid of every process."""
    parents = {}
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry) as handle:
                parents[int(entry)] = int(handle.read().rsplit(')', 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return parents


def descendants(root_pid):
    """Every process below root_pid."""
    parents = parent_map()
    found, frontier = [], [root_pid]
    while frontier:
        current = frontier.pop()
        children = [pid for pid, parent in parents.items() if parent == current]
        found.extend(children)
        frontier.extend(children)
    return found


def signal_all(pids, signum):
    for pid in pids:
        try:
            os.kill(pid, signum)
        except OSError:
            pass


class Lock(object):
    """flock on STATE/.lock, so that two starts or a start and a stop never interleave."""

    def __init__(self, state_dir):
        self.path = os.path.join(state_dir, '.lock')
        self.fd = None

    def __enter__(self):
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, STATE_FILE_MODE)
        os.fchmod(self.fd, STATE_FILE_MODE)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        os.close(self.fd)
        return False


def current_job(state_dir):
    """Name of the job holding the node: its supervisor still runs and has not written its result.
    The supervisor writes the result once nothing of the job is left, and exits a moment later."""
    try:
        with open(os.path.join(state_dir, 'current')) as handle:
            name = handle.read().strip()
    except OSError:
        return None
    directory = job_dir(state_dir, name) if name else None
    meta = read_json(os.path.join(directory, 'job.json')) if directory else None
    if meta and alive(meta.get('supervisor_pid'), meta.get('supervisor_start')) \
            and not os.path.exists(os.path.join(directory, 'result.json')):
        return name
    return None


def status(state_dir, name):
    """The job's record, merged with its result; state is absent, running, or the end reason."""
    directory = job_dir(state_dir, name)
    meta = read_json(os.path.join(directory, 'job.json'))
    if meta is None:
        return {'name': name, 'state': 'absent', 'rc': None, 'log': None}
    result = read_json(os.path.join(directory, 'result.json'))
    record = dict(meta, log=os.path.join(directory, 'node.log'), rc=None, ended=None, reason=None)
    if result is not None:
        record.update(result)
        record['state'] = 'succeeded' if result['reason'] == REASON_EXITED and result['rc'] == 0 else result['reason']
        if record['state'] == REASON_EXITED:
            record['state'] = 'failed'
    elif alive(meta.get('supervisor_pid'), meta.get('supervisor_start')):
        record['state'] = 'running'
    else:
        record.update(state='lost', reason='the supervisor (pid %s) ended without a result' % meta.get('supervisor_pid'))
    return record


def stop(state_dir, name, grace, by='stop requested'):
    """Ask the supervisor to stop the job and wait for its result; True when it was running."""
    meta = read_json(os.path.join(job_dir(state_dir, name), 'job.json'))
    if not meta or not alive(meta.get('supervisor_pid'), meta.get('supervisor_start')):
        return False
    write_job_json(job_dir(state_dir, name), 'stop.json', {'by': by, 'at': time.time()})
    os.kill(meta['supervisor_pid'], signal.SIGTERM)
    deadline = time.time() + grace + 10
    # Done when the supervisor is gone, so the caller may act on a finished record. Gone without
    # a result: status() reports the job lost.
    while time.time() < deadline:
        if not alive(meta.get('supervisor_pid'), meta.get('supervisor_start')):
            return True
        time.sleep(0.1)
    raise JobError('job %s: the supervisor (pid %s) did not stop within %s s' % (name, meta['supervisor_pid'], grace + 10))


class Supervisor(object):
    """Runs in the detached child: start the job, wait, enforce the deadline, record the end."""

    def __init__(self, directory, argv, env, deadline, grace):
        self.directory = directory
        self.argv = argv
        self.env = env
        self.deadline = deadline
        self.grace = grace
        self.stop_reason = None
        self.log_fd = None

    def on_term(self, signum, frame):
        self.stop_reason = REASON_STOPPED

    def terminate_tree(self):
        pids = descendants(os.getpid())
        signal_all(pids, signal.SIGTERM)
        until = time.time() + self.grace
        while time.time() < until and descendants(os.getpid()):
            self.reap()
            time.sleep(0.2)
        signal_all(descendants(os.getpid()), signal.SIGKILL)
        self.reap()

    def reap(self):
        while True:
            try:
                pid, dummy = os.waitpid(-1, os.WNOHANG)
            except OSError as exc:
                if exc.errno == errno.ECHILD:
                    return
                raise
            if pid == 0:
                return

    def run(self, log_fd):
        try:
            job = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=log_fd, stderr=log_fd,
                                   env=self.env, close_fds=True, start_new_session=True)
        except OSError as exc:
            os.write(log_fd, ('torchfleet: could not start %s: %s\n' % (self.argv[0], exc)).encode())
            return {'rc': 127, 'reason': REASON_EXITED, 'ended': time.time(), 'job_pid': None}
        self.log_fd = log_fd
        rc = None
        while rc is None and self.stop_reason is None:
            if time.time() >= self.deadline:
                self.stop_reason = REASON_TIMED_OUT
                break
            rc = job.poll()
            if rc is None:
                time.sleep(0.2)
        log_size = os.fstat(self.log_fd).st_size if self.log_fd is not None else None
        if self.stop_reason is not None:
            self.terminate_tree()
            rc = job.wait()
            rc = TIMED_OUT_RC if self.stop_reason == REASON_TIMED_OUT else rc
        else:
            self.terminate_tree()  # workers left behind by a launcher that exited
        os.close(self.log_fd)
        return {'rc': rc, 'reason': self.stop_reason or REASON_EXITED, 'ended': time.time(), 'job_pid': job.pid,
                'log_size_at_end': log_size}


def detach(directory, argv, env, timeout, grace, umask=JOB_UMASK):
    """Start the supervisor as a grandchild in its own session; return (pid, start time)."""
    reader, writer = os.pipe()
    first = os.fork()
    if first:
        os.close(writer)
        os.waitpid(first, 0)
        with os.fdopen(reader) as handle:
            reply = handle.read()
        try:
            pid = int(reply)
        except ValueError:
            raise JobError('job in %s: the supervisor did not start: %s' % (directory, reply or 'no reply'))
        return pid, process_start_time(pid)
    try:
        os.close(reader)
        os.setsid()
        if os.fork():
            os._exit(0)
        _become_supervisor(directory, argv, env, timeout, grace, umask, writer)
    finally:
        os._exit(1)


def _become_supervisor(directory, argv, env, timeout, grace, umask, writer):
    """The grandchild: cut every tie to the Ansible connection, then supervise."""
    # Inherited by the job: what it writes (torchrun's per-rank logs among it) is not for other users.
    os.umask(umask)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    # Inherited descriptors would keep the caller's flock (STATE/.lock) and its pipes held.
    os.closerange(3, writer)
    os.closerange(writer + 1, MAX_FD)
    os.chdir('/')
    log_fd = os.open(os.path.join(directory, 'node.log'), os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, JOB_FILE_MODE)
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    supervisor = Supervisor(directory, argv, env, time.time() + timeout, grace)
    # Before the caller learns the pid: a stop sent right after the start must find the handler.
    signal.signal(signal.SIGTERM, supervisor.on_term)
    os.write(writer, str(os.getpid()).encode())
    os.close(writer)
    result = supervisor.run(log_fd)
    stop_request = read_json(os.path.join(directory, 'stop.json'))
    if result['reason'] == REASON_STOPPED and stop_request:
        result['stopped_by'] = stop_request.get('by')
    write_job_json(directory, 'result.json', result)
    os._exit(0)


def staged_sha256(path):
    """SHA-256 of a staged script: a regular file of the caller's, with one link, in a directory
    that only the caller can write (nobody can swap it before it is moved into the job)."""
    parent = os.lstat(os.path.dirname(os.path.abspath(path)))
    if parent.st_uid != os.geteuid() or parent.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise JobError('the staged script %s must be in a directory that only uid %d can write' % (path, os.geteuid()))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise JobError('the staged script %s cannot be opened: %s' % (path, exc.strerror))
    with os.fdopen(fd, 'rb') as handle:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode) or found.st_uid != os.geteuid() or found.st_nlink != 1:
            raise JobError('the staged script %s must be a regular file of uid %d with one link' % (path, os.geteuid()))
        return hashlib.sha256(handle.read()).hexdigest()


def argv_difference(theirs, ours):
    for their, our in zip(theirs, ours):
        if their != our:
            return 'its command differs: %r in the job, %r in this start' % (their, our)
    return 'its command has %d arguments, this start\'s %d' % (len(theirs), len(ours))


def claim_differences(meta, claim):
    """What makes a start differ from the job recorded under its name, in words; empty when it is the same start."""
    differences = []
    if meta.get('owner') != claim['owner']:
        owners = (meta.get('owner') or 'an unnamed owner', claim['owner'] or 'an unnamed owner')
        differences.append('it was started by %s, this start is by %s' % owners)
    if meta.get('user') != claim['user']:
        differences.append('it runs as %s, this start as %s' % (meta.get('user'), claim['user']))
    if meta.get('argv') != claim['argv']:
        differences.append(argv_difference(meta.get('argv') or [], claim['argv']))
    if meta.get('script_sha256') != claim['script_sha256']:
        differences.append("its script has SHA-256 %s, this start's %s" % (meta.get('script_sha256') or 'none',
                                                                           claim['script_sha256'] or 'none'))
    return differences


def refusal(name, running, differences):
    return ('job %s on node %s %s and was started differently: %s; only the same start (argv, user, owner, script) '
            'attaches to it - give this run another name, or stop that job first'
            % (name, socket.gethostname(), 'is running' if running else 'already ran', '; '.join(differences)))


def make_job_dir(directory, gid):
    """The job's directory, private to root and gid; one left by a start that never ran is taken over."""
    try:
        os.mkdir(directory, JOB_DIR_MODE)
    except OSError as exc:
        if exc.errno != errno.EEXIST:
            raise
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        set_mode(fd, JOB_DIR_MODE, gid)
        return os.fstat(fd).st_gid
    finally:
        os.close(fd)


def make_job_file(directory, name, gid):
    fd = os.open(os.path.join(directory, name), os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, JOB_FILE_MODE)
    try:
        set_mode(fd, JOB_FILE_MODE, gid)
    finally:
        os.close(fd)


def adopt_script(script, directory, gid):
    """Move the staged script into the job's directory (same file system, one rename)."""
    target = os.path.join(directory, os.path.basename(script))
    try:
        os.rename(script, target)
    except OSError as exc:
        raise JobError('the staged script %s cannot be moved to %s: %s' % (script, target, exc.strerror))
    make_job_file(directory, os.path.basename(script), gid)


def start(state_dir, name, argv, env, user, timeout, grace, replace, owner=None, script=None, gid=None, umask=JOB_UMASK):
    """Start the job unless another holds the node; returns (record, replaced job name or None).

    A job already recorded under name is this start when argv, user, owner and the checksum of the
    staged script match (a running one is returned, an ended one is refused as spent); otherwise
    the start is refused naming what differs. script, a staged file, is moved into the job's
    directory only once this start has claimed the name; gid is the group of the job's files."""
    directory = job_dir(state_dir, name)
    claim = {'argv': argv, 'user': user, 'owner': owner, 'script_sha256': staged_sha256(script) if script else None}
    with Lock(state_dir):
        holder = current_job(state_dir)
        meta = read_json(os.path.join(directory, 'job.json'))
        if meta is not None:
            differences = claim_differences(meta, claim)
            if differences:
                raise JobError(refusal(name, holder == name, differences))
            if holder == name:
                return status(state_dir, name), None
            raise JobError('job %s already ran on this node (%s); give the run another name' % (name, directory))
        replaced = None
        if holder is not None:
            if not replace:
                raise JobError('job %s is still running on this node (started %s); stop it first or set replace'
                               % (holder, time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(
                                   (read_json(os.path.join(job_dir(state_dir, holder), 'job.json')) or {}).get('started', 0)))))
            stop(state_dir, holder, grace, by='replaced by job %s' % name)
            replaced = holder
        gid = make_job_dir(directory, gid)
        if script:
            adopt_script(script, directory, gid)
        make_job_file(directory, 'node.log', gid)
        started = time.time()
        pid, start_time = detach(directory, argv, env, timeout, grace, umask)
        write_job_json(directory, 'job.json', dict(claim, name=name, supervisor_pid=pid, supervisor_start=start_time,
                                                   started=started, deadline=started + timeout))
        write_text(os.path.join(state_dir, 'current'), name + '\n')
        return status(state_dir, name), replaced
