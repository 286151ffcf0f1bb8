# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait for a job across the nodes of one run: the first node whose job fails tells the
others, through a file in ``peers_dir`` on the controller, and they stop theirs.

Every host's task polls its own node (the module with ``state=status``); the hosts run in
parallel forks, so the controller directory is what they share. Without ``wait`` and
``peers_dir`` the module runs unchanged. Documentation: plugins/modules/torchrun_job.py.
"""

from __future__ import annotations

import json
import os
import time

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.torchfleet.cluster.plugins.module_utils._files.atomic_file import TEMP_NAME_EXTRA, replace_file
from ansible_collections.torchfleet.cluster.plugins.plugin_utils.plain import plain

MODULE = 'torchfleet.cluster.torchrun_job'
FAILED_STATES = ('failed', 'timed_out', 'lost')
_MARKER_SUFFIX = '.json'
_NAME_MAX = 255


def check_marker_name(host, peers_dir):
    """The inventory name names this host's marker file in peers_dir: it must be one plain path component."""
    problem = None
    if not host or host in ('.', '..'):
        problem = 'it is empty, "." or ".."'
    elif '/' in host or '\0' in host:
        problem = 'it contains "/" or a NUL character'
    elif host.startswith('-'):
        problem = 'it starts with "-"'
    elif not host.isprintable():
        problem = 'it contains a character that is not printable'
    elif len((host + _MARKER_SUFFIX).encode('utf-8')) + TEMP_NAME_EXTRA > _NAME_MAX:
        problem = 'it is longer than a file name in %s can be' % peers_dir
    if problem:
        raise AnsibleActionFail('torchrun_job: the inventory host name %r cannot name its marker file in peers_dir %s: %s. '
                                'Rename the host in the inventory (its address can stay in ansible_host).'
                                % (host, peers_dir, problem))


def write_marker(peers_dir, host, job):
    """Tell the other hosts that this host's job failed (one file per host, written whole)."""
    marker = {'host': host, 'state': job.get('state'), 'ended': job.get('ended'), 'rc': job.get('rc'),
              'failure': job.get('failure')}
    replace_file(os.path.join(peers_dir, host + _MARKER_SUFFIX), json.dumps(marker, sort_keys=True), 0o600)


def failed_peers(peers_dir, host):
    """Markers of the other hosts, earliest end first."""
    peers = []
    for entry in sorted(os.listdir(peers_dir)):
        if not entry.endswith('.json') or entry == '%s.json' % host:
            continue
        try:
            with open(os.path.join(peers_dir, entry)) as handle:
                peers.append(json.load(handle))
        except (OSError, ValueError):
            continue
    return sorted(peers, key=lambda peer: peer.get('ended') or 0)


class ActionModule(ActionBase):

    def run(self, tmp=None, task_vars=None):
        super(ActionModule, self).run(tmp, task_vars)
        args = plain(dict(self._task.args))
        if not (args.get('wait') and args.get('peers_dir')) or self._play_context.check_mode:
            return self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars)
        host = task_vars['inventory_hostname']
        peers_dir = args['peers_dir']
        check_marker_name(host, peers_dir)
        os.makedirs(peers_dir, exist_ok=True)
        status_args = dict(args, state='status', wait=False)
        status_args.pop('peers_dir')
        interval = max(1, int(args.get('poll_interval') or 2))
        limit = None
        while True:
            result = self._execute_module(module_name=MODULE, module_args=status_args, task_vars=task_vars)
            if result.get('failed') or result.get('unreachable'):
                return result
            job = result['job']
            if limit is None and job.get('deadline') and job.get('started'):
                # the node's supervisor ends the job at its deadline; this bounds a supervisor that does not
                limit = time.time() + job['deadline'] - job['started'] + int(args.get('stop_grace') or 10) + 60
            if limit is not None and time.time() > limit and job['state'] == 'running':
                result.update(failed=True, msg='torchrun_job: job %s on %s still runs past its deadline; its supervisor '
                                               'does not answer (pid %s)' % (args['name'], host, job.get('supervisor_pid')))
                return result
            if job['state'] != 'running':
                if job['state'] in FAILED_STATES:
                    write_marker(peers_dir, host, job)
                return result
            peers = failed_peers(peers_dir, host)
            if peers:
                first = peers[0]
                reason = 'peer %s %s first' % (first['host'], first['state'])
                stop_args = dict(status_args, state='stopped', stop_reason=reason)
                result = self._execute_module(module_name=MODULE, module_args=stop_args, task_vars=task_vars)
                result['changed'] = False
                result['stopped_for'] = first
                return result
            time.sleep(interval)
