# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What torchrun_log reads from a torchrun log.

fixtures/torchrun_child_failed.log is a real recording: torch 2.13.0+cpu, ``torchrun --nnodes=1
--nproc-per-node=2 --rdzv-backend=c10d ... --max-restarts=0`` of a script whose rank 1 raises
ValueError after init_process_group("gloo") while rank 0 waits in barrier(); stdout and stderr
together, as the torchrun_job supervisor writes them. The ``ChildFailedError`` block is what
``torch.distributed.elastic.multiprocessing.errors.ChildFailedError.format_msg`` prints."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._jobs import torchrun_log


def fixture(name):
    with open(os.path.join(os.path.dirname(__file__), 'fixtures', name)) as handle:
        return handle.read()


RECORDED = fixture('torchrun_child_failed.log')
# the same run with --tee=3, as the launch role starts it: every worker line prefixed "[default<local rank>]:"
RECORDED_TEE = fixture('torchrun_tee_child_failed.log')

# rank 4 exits 1 without a traceback on a node of a 3-node run (the shape of the recording above,
# with the fields torchrun fills in for that case)
EXITED = (
    'ddp_allreduce rank 4 on node2: exits 1 on purpose (--fail-rank)\n'
    'torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n'
    '============================================================\n'
    '/var/lib/torchfleet/jobs/run1/ddp_allreduce.py FAILED\n'
    '------------------------------------------------------------\n'
    'Root Cause (first observed failure):\n'
    '[0]:\n'
    '  time      : 2026-12-03_19:00:42\n'
    '  host      : node2\n'
    '  rank      : 4 (local_rank: 0)\n'
    '  exitcode  : 1 (pid: 689) \n'
    '  error_file: <N/A>\n'
    '  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n'
    '============================================================\n')

CASES = [
    ('recorded: rank 1 raised, rank 0 saw the peer go', RECORDED,
     {'host': 'localhost', 'rank': 1, 'local_rank': 1, 'exitcode': 1,
      'error': 'ValueError: rank 1 breaks on purpose', 'cause': 'error'}),
    ('recorded with --tee', RECORDED_TEE,
     {'host': 'localhost', 'rank': 1, 'local_rank': 1, 'exitcode': 1,
      'error': 'ValueError: rank 1 breaks on purpose', 'cause': 'error'}),
    ('rank 4 exited 1 without a traceback', EXITED,
     {'host': 'node2', 'rank': 4, 'local_rank': 0, 'exitcode': 1,
      'error': 'no Python traceback from rank 4', 'cause': 'error'}),
    ('no root cause: the rendezvous never completed',
     'torch.distributed.DistNetworkError: The client socket has timed out after 60000ms while trying to connect to (10.0.0.1, 29400).\n',
     {'host': None, 'rank': None, 'local_rank': None, 'exitcode': None,
      'error': 'torch.distributed.DistNetworkError: The client socket has timed out after 60000ms while trying to connect to (10.0.0.1, 29400).',
      'cause': 'timeout'}),
    ('only a peer error', '[rank3]: RuntimeError: Connection closed by peer [10.0.0.3]:4242\n',
     {'host': None, 'rank': None, 'local_rank': None, 'exitcode': None,
      'error': 'RuntimeError: Connection closed by peer [10.0.0.3]:4242', 'cause': 'peer went away'}),
    ('empty log', '', {'host': None, 'rank': None, 'local_rank': None, 'exitcode': None, 'error': '', 'cause': 'error'}),
]


@pytest.mark.parametrize('dummy, text, expected', CASES, ids=[case[0] for case in CASES])
def test_failure(dummy, text, expected):
    found = torchrun_log.failure(text)
    assert dict((key, found[key]) for key in expected) == expected
    assert found['hint'] == torchrun_log.HINTS[expected['cause']]


def test_the_recording_is_what_torchrun_printed():
    assert 'Root Cause (first observed failure):' in RECORDED
    assert '[rank0]: RuntimeError:' in RECORDED and 'Connection closed by peer' in RECORDED


LAST_OUTPUT_CASES = [
    ('per worker with --tee', ['[default0]:step 1', '[default1]:step 1', '[default0]:step 2 loss 0.5', '[default1]:', 'W1203 agent noise'],
     'local rank 0: step 2 loss 0.5; local rank 1: step 1'),
    ('without --tee: the last line', ['step 1', 'step 2', ''], 'step 2'),
    ('nothing', [], ''),
]


@pytest.mark.parametrize('dummy, lines, expected', LAST_OUTPUT_CASES, ids=[case[0] for case in LAST_OUTPUT_CASES])
def test_last_output(dummy, lines, expected):
    assert torchrun_log.last_output(lines) == expected
