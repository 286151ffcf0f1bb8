# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read-only comparison of a node's files with what a role would write there.

A role's converged check (plugins/modules/state_check.py) hands over each file as the role's
own tasks would leave it; ``file_differences`` answers with what differs, as short sentences
naming the path, and ``[]`` when the task would report ``ok``. Every file is reached through
``safepath`` from ``/``, so a path that a non-root user could redirect is never followed: it
is reported as a difference, and the role's full tasks (which refuse it with their own
message) run instead.

Each wanted file is a dict:

``path``
    Absolute path.
``state``
    ``file`` (default), ``directory`` or ``absent``.
``content``
    The whole content (``copy``/``template``).
``block`` and ``marker``
    A block between marker lines (``blockinfile``, laid out as ``replace_block`` does).
``line``
    One line that must be present (``lineinfile`` without a regexp).
``words``
    The content split on white space (a ``/proc/sys`` value).
``setting`` and ``value``
    A ``name = value`` line of a sysctl file, white space inside the value ignored.
``owner``, ``group``, ``mode``
    Names and an octal string; checked where given.
``missing_ok``
    A missing file is no difference (a task that only edits a file that exists).
``when_writable``
    Only compared when this path is writable (a sysctl that a read-only ``/proc`` leaves alone).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import grp
import os
import pwd
import stat

from ansible.module_utils.common.text.converters import to_bytes, to_text

from ansible_collections.torchfleet.cluster.plugins.module_utils._files.safepath import (
    UnsafePathError,
    closing,
    entry_stat,
    open_dir,
    read_file,
)

MAX_SIZE = 4 * 1024 * 1024


def replace_block(current, marker, block):
    """``current`` (bytes or None) with ``block`` between the marker lines, laid out as blockinfile does."""
    lines = current.splitlines(True) if current else []
    begin = to_bytes(marker.replace('{mark}', 'BEGIN')) + b'\n'
    end = to_bytes(marker.replace('{mark}', 'END')) + b'\n'
    body = to_bytes(block)
    if body and not body.endswith(b'\n'):
        body += b'\n'
    new = [begin] + body.splitlines(True) + [end] if body else []
    # The last BEGIN and the first END after it; lone or reversed markers are left with the
    # user's lines between them (blockinfile would delete those lines).
    starts = [i for i, line in enumerate(lines) if line == begin]
    ends = [i for i, line in enumerate(lines) if line == end and starts and i > starts[-1]]
    if ends:
        lines[starts[-1]:ends[0] + 1] = []
        at = starts[-1]
    else:
        at = len(lines)
    if at > 0 and not lines[at - 1].endswith(b'\n'):
        lines[at - 1] += b'\n'
    lines[at:at] = new
    return b''.join(lines)


def _owner_uid(name):
    return pwd.getpwnam(name).pw_uid if not str(name).isdigit() else int(name)


def _group_gid(name):
    return grp.getgrnam(name).gr_gid if not str(name).isdigit() else int(name)


def attribute_differences(path, st, wanted):
    """Owner, group and mode of ``st`` against ``wanted``, as sentences."""
    found = []
    if wanted.get('owner') is not None and st.st_uid != _owner_uid(wanted['owner']):
        found.append('%s: owner is uid %d, not %s' % (path, st.st_uid, wanted['owner']))
    if wanted.get('group') is not None and st.st_gid != _group_gid(wanted['group']):
        found.append('%s: group is gid %d, not %s' % (path, st.st_gid, wanted['group']))
    if wanted.get('mode') is not None and stat.S_IMODE(st.st_mode) != int(str(wanted['mode']), 8):
        found.append('%s: mode is %04o, not %s' % (path, stat.S_IMODE(st.st_mode), wanted['mode']))
    return found


def _sysctl_value(data, name):
    """The value of ``name`` in a sysctl file (the last one wins, as sysctl applies them), or None."""
    value = None
    for raw in to_text(data, errors='surrogate_or_replace').splitlines():
        line = raw.strip()
        if not line or line[0] in '#;' or '=' not in line:
            continue
        key, rest = line.split('=', 1)
        if key.strip() == name:
            value = ' '.join(rest.split())
    return value


def content_differences(path, data, wanted):
    """What ``data`` (bytes) lacks of the wanted content, block, line, words or setting."""
    if wanted.get('content') is not None and data != to_bytes(wanted['content']):
        return ['%s: content differs' % path]
    if wanted.get('block') is not None and replace_block(data, wanted['marker'], wanted['block']) != data:
        return ['%s: the block %r differs or is missing' % (path, wanted['marker'])]
    if wanted.get('line') is not None and to_bytes(wanted['line']) not in [line.rstrip(b'\r\n') for line in data.splitlines()]:
        return ['%s: line %r is missing' % (path, wanted['line'])]
    if wanted.get('words') is not None and data.split() != to_bytes(wanted['words']).split():
        return ['%s: holds %r, not %r' % (path, to_text(b' '.join(data.split())), wanted['words'])]
    if wanted.get('setting') is not None:
        value = _sysctl_value(data, wanted['setting'])
        if value != ' '.join(str(wanted['value']).split()):
            return ['%s: %s is %r, not %r' % (path, wanted['setting'], value, wanted['value'])]
    return []


def _trusted_uids(wanted):
    return (_owner_uid(wanted['owner']),) if wanted.get('owner') is not None else ()


def _read(path, wanted):
    """(stat or None, content or None) of ``path``, reached through root-owned directories only."""
    parent, name = os.path.split(path)
    with closing(open_dir(parent or '/', ())) as dir_fd:
        st = entry_stat(dir_fd, name)
        if st is None or wanted.get('state', 'file') != 'file':
            return st, None
        found = read_file(dir_fd, name, path, _trusted_uids(wanted), MAX_SIZE)
        return (found.st, found.data) if found is not None else (None, None)


def file_differences(wanted):
    """Every way the file at ``wanted['path']`` differs from ``wanted``; [] when it matches."""
    path = wanted['path']
    state = wanted.get('state', 'file')
    if wanted.get('when_writable') and not os.access(wanted['when_writable'], os.W_OK):
        return []
    try:
        st, data = _read(path, wanted)
    except FileNotFoundError as exc:
        st, data = None, None
        if state != 'absent':
            return ['%s: %s is missing' % (path, exc.filename or 'a directory on the way')]
    except UnsafePathError as exc:
        return [str(exc)]
    except (IOError, OSError) as exc:
        return ['%s: %s' % (path, exc.strerror or exc)]
    if state == 'absent':
        return [] if st is None else ['%s: exists' % path]
    if st is None:
        return [] if wanted.get('missing_ok') else ['%s: is missing' % path]
    if state == 'directory' and not stat.S_ISDIR(st.st_mode):
        return ['%s: is not a directory' % path]
    return attribute_differences(path, st, wanted) + (content_differences(path, data, wanted) if data is not None else [])
