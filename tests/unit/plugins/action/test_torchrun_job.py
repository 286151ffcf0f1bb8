# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller side of torchrun_job: with wait and peers_dir, the first node whose job fails
tells the others through peers_dir, and they stop theirs. The node's answers are scripted
(what the module returns for state=status and state=stopped)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
from unittest.mock import MagicMock

import pytest
from ansible.errors import AnsibleActionFail
from ansible.parsing.dataloader import DataLoader

from ansible_collections.torchfleet.cluster.plugins.action.torchrun_job import ActionModule

RUNNING = {'job': {'name': 'run', 'state': 'running', 'rc': None, 'started': 100.0, 'deadline': 200.0}, 'active': 'run'}
FAILED = {'job': {'name': 'run', 'state': 'failed', 'rc': 1, 'ended': 150.0, 'failure': {'rank': 4, 'exitcode': 1}}}
STOPPED = {'changed': True, 'job': {'name': 'run', 'state': 'stopped', 'rc': -15, 'stopped_by': 'peer node2 failed first'}}


def action_for(host, answers, calls, check_mode=False):
    task = MagicMock()
    task.async_val = 0
    play_context = MagicMock()
    play_context.check_mode = check_mode
    action = ActionModule(task, MagicMock(), play_context, loader=DataLoader(), templar=None, shared_loader_obj=None)

    def execute(module_name, module_args, task_vars):
        calls.append((host, dict(module_args)))
        return json.loads(json.dumps(answers.pop(0)))
    action._execute_module = execute
    return action


def run(host, args, answers, calls, check_mode=False):
    action = action_for(host, answers, calls, check_mode)
    action._task.args = args
    return action.run(task_vars={'inventory_hostname': host})


def test_a_failing_node_leaves_a_marker_and_a_running_node_stops_for_it(tmp_path, monkeypatch):
    monkeypatch.setattr('time.sleep', lambda seconds: None)
    peers = str(tmp_path / 'peers')
    args = {'name': 'run', 'state': 'status', 'wait': True, 'peers_dir': peers, 'poll_interval': 1}
    calls = []
    failed = run('node2', args, [RUNNING, FAILED], calls)
    assert failed['job']['state'] == 'failed'
    assert json.loads((tmp_path / 'peers' / 'node2.json').read_text())['failure'] == {'rank': 4, 'exitcode': 1}
    stopped = run('node0', args, [RUNNING, STOPPED], calls)
    assert stopped['stopped_for']['host'] == 'node2' and stopped['changed'] is False
    stop_call = calls[-1][1]
    assert (stop_call['state'], stop_call['stop_reason']) == ('stopped', 'peer node2 failed first')
    assert 'peers_dir' not in stop_call and all(call[1]['wait'] is False for call in calls)


def test_a_node_that_succeeds_leaves_no_marker(tmp_path, monkeypatch):
    monkeypatch.setattr('time.sleep', lambda seconds: None)
    args = {'name': 'run', 'wait': True, 'peers_dir': str(tmp_path)}
    done = {'job': {'name': 'run', 'state': 'succeeded', 'rc': 0}}
    assert run('node1', args, [RUNNING, RUNNING, done], [])['job']['state'] == 'succeeded'
    assert list(tmp_path.iterdir()) == []


def test_without_peers_dir_or_in_check_mode_the_module_runs_as_is(tmp_path):
    calls = []
    run('node0', {'name': 'run', 'state': 'stopped'}, [STOPPED], calls)
    run('node0', {'name': 'run', 'wait': True, 'peers_dir': str(tmp_path)}, [RUNNING], calls, check_mode=True)
    assert [call[1] for call in calls] == [
        {'name': 'run', 'state': 'stopped'},
        {'name': 'run', 'wait': True, 'peers_dir': str(tmp_path)},
    ]


@pytest.mark.parametrize('host', ['../../x', '..', '.', 'a/b', '{tmp}/outside', '', '-rf', 'a\0b', 'a\nb', 'node\x1b[2J', 'x' * 237])
def test_a_host_name_that_is_not_one_path_component_writes_nothing(tmp_path, monkeypatch, host):
    monkeypatch.setattr('time.sleep', lambda seconds: None)
    host = host.format(tmp=tmp_path)
    peers = tmp_path / 'run' / 'peers'
    calls = []
    args = {'name': 'run', 'wait': True, 'peers_dir': str(peers)}
    with pytest.raises(AnsibleActionFail, match='inventory host name %s cannot name' % re.escape(repr(host))):
        run(host, args, [RUNNING, FAILED], calls)
    assert calls == [] and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize('host', ['node-1', 'gpu_07.cluster.example', '10.0.0.11', 'nœud', '.hidden', 'x' * 236])
def test_a_plain_host_name_names_its_marker(tmp_path, monkeypatch, host):
    monkeypatch.setattr('time.sleep', lambda seconds: None)
    args = {'name': 'run', 'wait': True, 'peers_dir': str(tmp_path / 'peers')}
    run(host, args, [RUNNING, FAILED], [])
    assert [path.name for path in tmp_path.rglob('*')] == ['peers', host + '.json']
