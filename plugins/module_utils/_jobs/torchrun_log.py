# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read a torchrun log: which rank failed first, with what exit code, and the likely cause.

torchrun (``torch.distributed.run``) ends a failed job with a ``ChildFailedError`` block
whose ``Root Cause (first observed failure)`` entry names host, global rank, local rank and
exit code of the first worker that failed on this node; each worker's own traceback is in
the log with a ``[rankN]:`` prefix. The causes are those of the smoke role's classifier,
so that a launch and a smoke failure read the same."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

ROOT_CAUSE = 'Root Cause (first observed failure)'
FIELD = re.compile(r'^\s*(time|host|rank|exitcode|error_file|traceback)\s*:\s*(.*?)\s*$')
RANK = re.compile(r'^(-?\d+) \(local_rank: (-?\d+)\)')
EXITCODE = re.compile(r'^(-?\d+)')
RANK_LINE = re.compile(r'^\[rank(\d+)\]:\s?(.*)$')
# `torchrun --tee=3` prefixes every line of a worker with its role and local rank: "[default1]:..."
# (not torch's own "[rankN]:" prefix of a worker's traceback)
TEE_LINE = re.compile(r'^\[(?!rank\d)([A-Za-z_]+?)(\d+)\]:(.*)$')
EXCEPTION_LINE = re.compile(r'^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b.*')

# (cause, words in the error text that point to it), first match wins.
CAUSES = (
    ('name resolution', ('name or service not known', 'temporary failure in name resolution',
                         'no address associated', 'getaddrinfo', 'gaierror')),
    ('port in use', ('address already in use', 'eaddrinuse')),
    ('connection refused', ('connection refused', 'econnrefused')),
    ('timeout', ('timed out', 'timeout', 'deadline')),
    ('peer went away', ('connection closed by peer', 'connection reset', 'broken pipe', 'remote worker crashing')),
    ('cuda driver too old', ('driver version is insufficient', 'cuda driver version')),
    ('nccl', ('nccl error', 'ncclinternalerror', 'ncclsystemerror', 'ncclunhandledcudaerror')),
    ('out of memory', ('out of memory', 'cuda oom')),
)

HINTS = {
    'name resolution': 'the master address does not resolve on this node; use an IP or fix DNS/hosts',
    'port in use': 'a port is taken, often by a stray training process',
    'connection refused': "nothing listens on the master's rendezvous port, or a firewall rejects it",
    'timeout': 'a port is blocked (rendezvous port or the peer-link range) or a node did not start',
    'peer went away': 'another rank crashed or was stopped first; look at the node that failed first',
    'cuda driver too old': "the node's NVIDIA driver is older than the CUDA build of torch needs",
    'nccl': 'NCCL failed; check NCCL_SOCKET_IFNAME and the peer-link range',
    'out of memory': 'the GPU or host ran out of memory',
    'error': "the training script failed; see the rank's output in the node's log",
}


def classify(text):
    """Map an error message to a likely cause ('error' when nothing matches)."""
    low = (text or '').lower()
    for cause, words in CAUSES:
        if any(word in low for word in words):
            return cause
    return 'error'


def root_cause(lines):
    """The fields of the ``Root Cause`` entry, or None when the log has none."""
    try:
        start = next(i for i, line in enumerate(lines) if ROOT_CAUSE in line)
    except StopIteration:
        return None
    fields = {}
    for line in lines[start + 1:]:
        if line.startswith('====='):
            break
        match = FIELD.match(line)
        if match:
            fields[match.group(1)] = match.group(2)
    rank = RANK.match(fields.get('rank', ''))
    exitcode = EXITCODE.match(fields.get('exitcode', ''))
    return {
        'host': fields.get('host'),
        'rank': int(rank.group(1)) if rank else None,
        'local_rank': int(rank.group(2)) if rank else None,
        'exitcode': int(exitcode.group(1)) if exitcode else None,
    }


def untee(line):
    """The line without torchrun's ``--tee`` prefix."""
    match = TEE_LINE.match(line)
    return match.group(3) if match else line


def last_by_local_rank(lines):
    """Local rank -> the last non-empty line that worker wrote (``--tee`` output), in local-rank order."""
    last = {}
    for line in lines:
        match = TEE_LINE.match(line)
        if match and match.group(3).strip():
            last[int(match.group(2))] = match.group(3).strip()
    return dict(sorted(last.items()))


def last_output(lines):
    """Where a job stopped making progress: each worker's last line, else the log's last line."""
    per_rank = last_by_local_rank(lines)
    if per_rank:
        return '; '.join('local rank %d: %s' % item for item in per_rank.items())
    return last_line(lines)


def rank_errors(lines):
    """Rank -> the last exception line that rank printed (``[rankN]: ValueError: ...``)."""
    errors = {}
    for line in lines:
        match = RANK_LINE.match(untee(line))
        if match and EXCEPTION_LINE.match(match.group(2).strip()):
            errors[int(match.group(1))] = match.group(2).strip()
    return errors


def last_line(lines, limit=300):
    """The last non-empty line, shortened."""
    for line in reversed(lines):
        if line.strip():
            text = line.strip()
            return text if len(text) <= limit else text[:limit] + '...'
    return ''


def failure(text):
    """What the log says about a failure: rank, local_rank, exitcode, host, error, cause, hint."""
    lines = (text or '').splitlines()
    found = root_cause(lines) or {'host': None, 'rank': None, 'local_rank': None, 'exitcode': None}
    errors = rank_errors(lines)
    if found['rank'] is not None:
        error = errors.get(found['rank']) or 'no Python traceback from rank %s' % found['rank']
    else:
        error = errors[min(errors)] if errors else last_line(lines)
    found['error'] = error
    found['cause'] = classify(found['error'])
    found['hint'] = HINTS[found['cause']]
    return found
