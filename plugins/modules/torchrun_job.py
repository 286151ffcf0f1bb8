#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: torchrun_job
short_description: Start, watch and stop a detached training job (torchrun) on a node as an unprivileged user
version_added: 0.1.0
author:
  - torchfleet developers (@torchfleet)
description:
  - Starts O(argv) as O(user) (through C(setpriv), never as root) under a supervisor that is detached from the
    Ansible connection, so the job keeps running between tasks and after the play.
  - The supervisor writes the job's stdout and stderr to C(STATE_DIR/NAME/node.log), kills every process of
    the job (also workers that torchrun started in their own sessions) when the job passes O(timeout) or is
    stopped, and records the exit code and the reason.
  - C(STATE_DIR/NAME) is root's with mode 0750 and every file in it 0640, in the primary group of O(user), so
    the job can read its script and no other user can read its log (secrets a job prints) or its record
    (O(argv)). O(state_dir) is created with mode 0711, so other users cannot list the run names.
  - One job holds a node at a time. Starting another while one runs fails naming the running job, unless
    O(replace=true), which stops the running one first.
  - A name is a claim. A start under the name of a job that exists on the node (running or ended) is the same
    start only when O(argv), O(user), O(owner) and the content of O(script) match - then nothing changes. Any
    other start under that name fails naming the job, the node and what differs, and touches nothing of the job.
  - O(state=status) reads the job's state and the end of its log; for a failed torchrun job it names the
    global rank, local rank and exit code of the first worker that failed on the node and a likely cause.
  - Used as a task, the action plugin of the same name adds O(wait) across nodes. With O(peers_dir) it waits
    until the job ends, and also stops it when the job of another node of the same run failed; nodes
    report to each other through files in O(peers_dir) on the controller.
options:
  name:
    description:
      - Name of the job (the run id). Letters, digits, C(.), C(_) and C(-).
    type: str
    required: true
  state:
    description:
      - V(started) starts the job unless the same start already made it (then nothing changes).
      - V(stopped) stops it when it runs.
      - V(status) changes nothing.
    type: str
    choices: [started, stopped, status]
    default: status
  argv:
    description:
      - The command, for example C([/opt/miniconda3/envs/train/bin/torchrun, --nnodes=3, train.py]).
      - Required with O(state=started). Its directory comes first in E(PATH).
    type: list
    elements: str
  user:
    description:
      - Account the job runs as; not V(root). Required with O(state=started).
      - Its primary group is the group of the job's directory and files.
    type: str
  owner:
    description:
      - Who starts the job (the operator), recorded as C(owner) in RV(job). A start by another owner under the name
        of an existing job is refused (O(state=started)).
      - Default the account that logged in to the node - E(SUDO_USER) when the module runs through sudo, else the
        user of the login uid (C(/proc/self/loginuid)), else the module's own user.
    type: str
  script:
    description:
      - A file on the node that the job runs, staged in a directory that only root can write (a regular file of root's,
        one link, on the file system of O(state_dir)). When O(state=started) claims the name, it is moved to
        C(STATE_DIR/NAME/) under its base name, and its SHA-256 is recorded as C(script_sha256) in RV(job).
      - A start that finds the same job, or is refused, leaves it where it is; it never replaces the file of a job.
      - O(argv) names it at its place in the job's directory.
    type: path
  umask:
    description:
      - umask of the job (octal), so that what it writes - torchrun's per-rank logs, checkpoints - is not readable by
        other users.
    type: str
    default: '0027'
  environment:
    description:
      - Variables the job gets, besides E(PATH), E(HOME), E(USER), E(LOGNAME) and E(LANG). Nothing else of
        the module's environment is passed on.
    type: dict
    default: {}
  chdir:
    description:
      - Working directory of the job, entered after the privilege drop. Default the user's home directory.
    type: path
  timeout:
    description:
      - Seconds after which the supervisor stops the job (exit code 124, state V(timed_out)).
    type: int
    default: 3600
  stop_grace:
    description:
      - Seconds between SIGTERM and SIGKILL to the job's processes when it is stopped or timed out.
    type: int
    default: 10
  replace:
    description:
      - Stop a different job that holds the node before starting this one.
    type: bool
    default: false
  wait:
    description:
      - Wait until the job has ended (at most its timeout plus the grace period) before returning.
    type: bool
    default: false
  poll_interval:
    description:
      - Seconds between looks at the job while waiting.
    type: int
    default: 2
  peers_dir:
    description:
      - Directory on the controller shared by the nodes of one run (action plugin only). With O(wait), a node
        whose job fails or times out writes C(HOST.json) there, and the others stop their job when they see it.
      - Ignored by the module itself.
    type: path
  stop_reason:
    description:
      - Why the job is stopped, recorded as C(stopped_by) in RV(job) (O(state=stopped) and O(replace)).
    type: str
    default: stop requested
  state_dir:
    description:
      - Root-owned directory that keeps the jobs' records and logs.
    type: path
    default: /var/lib/torchfleet/jobs
  log_lines:
    description:
      - Number of lines from the end of the log returned in C(log_tail) of RV(job).
    type: int
    default: 40
extends_documentation_fragment:
  - torchfleet.cluster.attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
notes:
  - Linux only (C(/proc), C(PR_SET_CHILD_SUBREAPER), C(setpriv) from util-linux, C(env --chdir) from coreutils).
  - O(state_dir) and everything in it belong to root; the job gets its log as an open file descriptor only.
seealso:
  - name: torchrun (Elastic Launch)
    description: The launcher this module is made for, and its failure report.
    link: https://pytorch.org/docs/stable/elastic/run.html
'''

EXAMPLES = r'''
- name: Start the job on every node
  torchfleet.cluster.torchrun_job:
    name: run-20260101-1200
    state: started
    user: trainer
    argv: [/opt/miniconda3/envs/train/bin/torchrun, --nnodes=2, --nproc-per-node=4,
           --rdzv-backend=c10d, --rdzv-endpoint=10.0.0.1:29400, --rdzv-id=run-20260101-1200, /srv/train.py]
    timeout: 7200

- name: Wait for the end; a node that fails stops the others
  torchfleet.cluster.torchrun_job:
    name: run-20260101-1200
    state: status
    wait: true
    peers_dir: /tmp/launch/run-20260101-1200
  register: job

- name: Stop it
  torchfleet.cluster.torchrun_job:
    name: run-20260101-1200
    state: stopped
'''

RETURN = r'''
job:
  description: The job's record.
  returned: always
  type: dict
  contains:
    name:
      description: The job's name.
      type: str
      returned: always
    argv:
      description: The command as the supervisor runs it (the privilege drop, then O(argv)).
      type: list
      elements: str
      returned: when the job exists
    user:
      description: The account the job runs as.
      type: str
      returned: when the job exists
    owner:
      description: Who started the job (O(owner)).
      type: str
      returned: when the job exists
      sample: alice
    script_sha256:
      description: SHA-256 of O(script) as the job got it, null without one.
      type: str
      returned: when the job exists
    state:
      description: V(absent), V(running), V(succeeded), V(failed), V(timed_out), V(stopped) or V(lost) (the supervisor died).
      type: str
      returned: always
      sample: failed
    rc:
      description: Exit code of the job, null while it runs; 124 when it timed out.
      type: int
      returned: always
      sample: 1
    log:
      description: Path of the job's log on the node.
      type: str
      returned: always
      sample: /var/lib/torchfleet/jobs/run-20260101-1200/node.log
    log_tail:
      description: The last O(log_lines) lines of the log.
      type: list
      elements: str
      returned: always
    started:
      description: Start time (seconds since the epoch).
      type: float
      returned: when the job exists
    ended:
      description: End time (seconds since the epoch), null while it runs.
      type: float
      returned: when the job exists
    reason:
      description: Why it ended (V(exited), V(timed_out), V(stopped)), null while it runs.
      type: str
      returned: when the job exists
    last_output:
      description:
        - Where the job was when it ended, timed out or was stopped (before any shutdown output) - the last line
          of each worker (as C(local rank N) followed by the line) when torchrun prefixes them (C(--tee)), else the
          log's last line.
      type: str
      returned: when the job has ended
      sample: "local rank 0: step 812 loss 2.31; local rank 1: ddp_allreduce rank 3 on node1: stops making progress"
    stopped_by:
      description: Who stopped it (for example C(peer node2 failed)).
      type: str
      returned: when the job was stopped
    failure:
      description:
        - For a job that did not succeed, what its log says - C(rank), C(local_rank), C(exitcode) and C(host) from
          torchrun's root-cause report (null when there is none), C(error) (the rank's exception or the last
          log line), C(cause) and C(hint).
      type: dict
      returned: when the job ended without success
      sample: {"rank": 4, "local_rank": 0, "exitcode": 1, "host": "node2", "error": "SystemExit: 1",
               "cause": "error", "hint": "the training script raised; see the rank's traceback in the node's log"}
stopped_for:
  description: The report of the node whose job failed first, when this node's job was stopped for it (action plugin).
  returned: when the job was stopped because another node failed
  type: dict
  sample: {"host": "node2", "state": "failed", "rc": 1, "ended": 1767268800.5, "failure": {"rank": 4}}
active:
  description: Name of the job that holds the node after this task, null when none.
  returned: always
  type: str
replaced:
  description: Name of the job that O(replace=true) stopped, null when none.
  returned: always
  type: str
'''

import os
import pwd
import re
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.torchfleet.cluster.plugins.module_utils._jobs import job_supervisor, torchrun_log
from ansible_collections.torchfleet.cluster.plugins.module_utils._files import runas, safepath

NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$')
UMASK = re.compile(r'^0?[0-7]{3}$')
SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin'
# Others may pass through to a job's directory (the job's user must reach its script) but not list the run names.
STATE_DIR_MODE = 0o711
NO_LOGIN_UID = 4294967295


def prepare_state_dir(module, state_dir):
    """Create the state directory (root, 0711) and refuse one another user could change."""
    if not os.path.isdir(state_dir):
        os.makedirs(state_dir, STATE_DIR_MODE)
        os.chmod(state_dir, STATE_DIR_MODE)
    try:
        os.close(safepath.open_dir(state_dir))
    except (safepath.UnsafePathError, OSError) as exc:
        module.fail_json(msg='torchrun_job: state directory %s is unsafe: %s' % (state_dir, exc))
    st = os.lstat(state_dir)
    if st.st_uid != 0 or not safepath.only_root_can_write(st):
        module.fail_json(msg='torchrun_job: state directory %s must belong to root and be writable by root only' % state_dir)


def job_argv(module, account, chdir):
    setpriv = module.get_bin_path('setpriv', required=True)
    envbin = module.get_bin_path('env', required=True)
    return runas.as_user_argv(setpriv, account.pw_uid, account.pw_gid) + [
        envbin, '--chdir=' + (chdir or account.pw_dir)] + module.params['argv']


def job_env(module, account):
    env = {'PATH': os.path.dirname(module.params['argv'][0]) + ':' + SYSTEM_PATH, 'HOME': account.pw_dir,
           'USER': account.pw_name, 'LOGNAME': account.pw_name, 'LANG': 'C.UTF-8'}
    env.update((str(key), str(value)) for key, value in module.params['environment'].items())
    return env


def login_user():
    """The account that logged in to the node for this task (before sudo or su), else this process's."""
    if os.environ.get('SUDO_USER'):
        return os.environ['SUDO_USER']
    try:
        with open('/proc/self/loginuid') as handle:
            uid = int(handle.read().strip())
    except (OSError, ValueError):
        uid = NO_LOGIN_UID
    if uid == NO_LOGIN_UID:
        uid = os.geteuid()
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return 'uid %d' % uid


def user_account(module):
    user = module.params['user']
    try:
        account = pwd.getpwnam(user)
    except KeyError:
        module.fail_json(msg='torchrun_job: user %s does not exist on this node' % user)
    if account.pw_uid == 0:
        module.fail_json(msg='torchrun_job: the job must not run as root (user %s); name the training user' % user)
    return account


def tail(path, count):
    if not path or count <= 0:
        return []
    try:
        with open(path, 'rb') as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 256 * 1024))
            text = handle.read().decode('utf-8', 'replace')
    except OSError:
        return []
    return text.splitlines()[-count:]


def last_output(path, size):
    """The last non-empty line the job wrote before it ended or was stopped (not its shutdown noise)."""
    try:
        with open(path, 'rb') as handle:
            handle.seek(max(0, size - 64 * 1024))
            text = handle.read(min(size, 64 * 1024)).decode('utf-8', 'replace')
    except (OSError, TypeError):
        return None
    return torchrun_log.last_output(text.splitlines()) or None


def describe(record, count):
    """The record as returned: with the log's tail and, after a failure, what the log says."""
    record = dict(record)
    record['log_tail'] = tail(record.get('log'), count)
    if record.get('log_size_at_end') is not None:
        record['last_output'] = last_output(record['log'], record['log_size_at_end'])
    if record['state'] in ('failed', 'timed_out', 'stopped', 'lost'):
        record['failure'] = torchrun_log.failure('\n'.join(tail(record.get('log'), 400)))
    return record


def wait_for_end(module, state_dir, name):
    record = job_supervisor.status(state_dir, name)
    limit = (record.get('deadline') or time.time()) + module.params['stop_grace'] + 30
    while record['state'] == 'running' and time.time() < limit:
        time.sleep(module.params['poll_interval'])
        record = job_supervisor.status(state_dir, name)
    return record


def claim(module, account, argv):
    """What a start under this name must match to be the same start as an existing job."""
    script = module.params['script']
    try:
        sha256 = job_supervisor.staged_sha256(script) if script else None
    except job_supervisor.JobError as exc:
        module.fail_json(msg='torchrun_job: %s' % exc)
    return {'argv': argv, 'user': account.pw_name, 'owner': module.params['owner'] or login_user(), 'script_sha256': sha256}


def start(module, state_dir, name):
    if not module.params['argv']:
        module.fail_json(msg='torchrun_job: argv is required with state=started (job %s)' % name)
    account = user_account(module)
    argv = job_argv(module, account, module.params['chdir'])
    wanted = claim(module, account, argv)
    record = job_supervisor.status(state_dir, name)
    holder = job_supervisor.current_job(state_dir)
    if record['state'] != 'absent':
        differences = job_supervisor.claim_differences(record, wanted)
        if differences:
            module.fail_json(msg='torchrun_job: %s' % job_supervisor.refusal(name, record['state'] == 'running', differences),
                             job=describe(record, 0), active=holder)
        return record, False, None
    if module.check_mode:
        if holder is not None and not module.params['replace']:
            module.fail_json(msg='torchrun_job: job %s is still running on this node; stop it first or set replace' % holder)
        return record, True, None
    try:
        record, replaced = job_supervisor.start(
            state_dir, name, argv, job_env(module, account), account.pw_name, module.params['timeout'],
            module.params['stop_grace'], module.params['replace'], owner=wanted['owner'], script=module.params['script'],
            gid=account.pw_gid, umask=int(module.params['umask'], 8))
    except (job_supervisor.JobError, OSError) as exc:
        module.fail_json(msg='torchrun_job: %s' % exc, job=describe(job_supervisor.status(state_dir, name), 0),
                         active=job_supervisor.current_job(state_dir))
    return record, True, replaced


def stop(module, state_dir, name):
    record = job_supervisor.status(state_dir, name)
    if record['state'] != 'running':
        return record, False
    if module.check_mode:
        return record, True
    try:
        with job_supervisor.Lock(state_dir):
            job_supervisor.stop(state_dir, name, module.params['stop_grace'], by=module.params['stop_reason'])
    except job_supervisor.JobError as exc:
        module.fail_json(msg='torchrun_job: %s' % exc)
    return job_supervisor.status(state_dir, name), True


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type='str', required=True),
            state=dict(type='str', choices=['started', 'stopped', 'status'], default='status'),
            argv=dict(type='list', elements='str'),
            user=dict(type='str'),
            owner=dict(type='str'),
            script=dict(type='path'),
            umask=dict(type='str', default='0027'),
            environment=dict(type='dict', default={}),
            chdir=dict(type='path'),
            timeout=dict(type='int', default=3600),
            stop_grace=dict(type='int', default=10),
            replace=dict(type='bool', default=False),
            wait=dict(type='bool', default=False),
            poll_interval=dict(type='int', default=2),
            peers_dir=dict(type='path'),
            stop_reason=dict(type='str', default='stop requested'),
            state_dir=dict(type='path', default='/var/lib/torchfleet/jobs'),
            log_lines=dict(type='int', default=40),
        ),
        required_if=[('state', 'started', ('argv', 'user'))],
        supports_check_mode=True,
    )
    name = module.params['name']
    state_dir = module.params['state_dir']
    if not NAME.match(name):
        module.fail_json(msg='torchrun_job: job name %r must be 1-64 letters, digits, ".", "_" or "-"' % name)
    if module.params['timeout'] < 1 or module.params['stop_grace'] < 0 or module.params['poll_interval'] < 1:
        module.fail_json(msg='torchrun_job: timeout and poll_interval must be at least 1, stop_grace at least 0')
    if not UMASK.match(module.params['umask']):
        module.fail_json(msg='torchrun_job: umask %r of job %s must be octal, like 0027' % (module.params['umask'], name))
    if module.check_mode and not os.path.isdir(state_dir):
        record = {'name': name, 'state': 'absent', 'rc': None, 'log': None}
        module.exit_json(changed=module.params['state'] == 'started', job=describe(record, 0), active=None, replaced=None)
    prepare_state_dir(module, state_dir)
    changed, replaced = False, None
    if module.params['state'] == 'started':
        record, changed, replaced = start(module, state_dir, name)
    elif module.params['state'] == 'stopped':
        record, changed = stop(module, state_dir, name)
    else:
        record = job_supervisor.status(state_dir, name)
    if module.params['wait'] and not module.check_mode:
        record = wait_for_end(module, state_dir, name)
    module.exit_json(changed=changed, job=describe(record, module.params['log_lines']),
                     active=job_supervisor.current_job(state_dir), replaced=replaced)


if __name__ == '__main__':
    main()
