# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a file may be executed (or a directory written) by this process without handing
control to a less-privileged user.

A path is trusted when no user other than root or this process's effective user can change
what it resolves to: every directory on the way (including each symlink's target path) and
the file itself must be owned by a trusted user and not be writable by anyone else. A sticky
world-writable directory such as ``/tmp`` is accepted on the way, because others cannot
replace the trusted entries in it. POSIX ACLs are not looked at.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import grp
import os
import pwd
import stat

_MAX_LINKS = 40

Finding = collections.namedtuple('Finding', ['path', 'uid', 'reason'])


def trusted_uids():
    return frozenset((0, os.geteuid()))


def user_name(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return 'uid %d' % uid


def _group_members(gid):
    """uids that belong to group ``gid`` (supplementary and primary), or None when unknown."""
    try:
        names = set(grp.getgrgid(gid).gr_mem)
    except KeyError:
        return None
    uids = set()
    for name in names:
        try:
            uids.add(pwd.getpwnam(name).pw_uid)
        except KeyError:
            return None
    uids.update(entry.pw_uid for entry in pwd.getpwall() if entry.pw_gid == gid)
    return uids


def _reason(st, trusted):
    """Why someone untrusted can change this inode (or replace entries of this directory), or None."""
    if st.st_uid not in trusted:
        return 'is owned by %s' % user_name(st.st_uid)
    sticky_dir = stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX
    if st.st_mode & stat.S_IWOTH and not sticky_dir:
        return 'is writable by every user'
    if st.st_mode & stat.S_IWGRP and not sticky_dir:
        members = _group_members(st.st_gid)
        if members is None or not members <= trusted:
            try:
                group = grp.getgrgid(st.st_gid).gr_name
            except KeyError:
                group = 'gid %d' % st.st_gid
            return 'is writable by group %s' % group
    return None


def untrusted_writer(path, trusted=None):
    """The first component of ``path`` that a user other than root/euid can change, or None.

    Symlinks are followed the way the kernel follows them, and the path of every link's
    target is checked as well. A component that does not exist ends the walk with None: only
    the (trusted) owner of its parent could create it. Returns a Finding(path, uid, reason)."""
    trusted = trusted_uids() if trusted is None else frozenset(trusted)
    current = '/'
    remaining = [p for p in os.path.abspath(path).split('/') if p]
    links = 0
    reason = _reason(os.lstat(current), trusted)
    if reason:
        return Finding(current, os.lstat(current).st_uid, reason)
    while remaining:
        part = remaining.pop(0)
        if part == '.':
            continue
        if part == '..':
            current = os.path.dirname(current)
            continue
        candidate = os.path.join(current, part)
        try:
            st = os.lstat(candidate)
        except OSError:
            return None
        if stat.S_ISLNK(st.st_mode):
            links += 1
            if links > _MAX_LINKS:
                return Finding(candidate, st.st_uid, 'is part of a symlink loop')
            target = os.readlink(candidate)
            if target.startswith('/'):
                current = '/'
            remaining = [p for p in target.split('/') if p] + remaining
            continue
        reason = _reason(st, trusted)
        if reason:
            return Finding(candidate, st.st_uid, reason)
        current = candidate
    return None


def interpreter(path):
    """The program named by the ``#!`` line of ``path``, or None for a binary or an unreadable file."""
    try:
        with open(path, 'rb') as handle:
            head = handle.read(256)
    except (IOError, OSError):
        return None
    if not head.startswith(b'#!'):
        return None
    words = head[2:].split(b'\n', 1)[0].split()
    return words[0].decode('utf-8', 'replace') if words else None


def untrusted_executable(path, trusted=None):
    """Like untrusted_writer, for a program and, for a script, the interpreter its ``#!`` line names."""
    finding = untrusted_writer(path, trusted)
    if finding is not None:
        return finding
    program = interpreter(path)
    if program and program.startswith('/'):
        return untrusted_writer(program, trusted)
    return None


def describe(finding, action):
    """A sentence for fail_json: what was refused (``action``, e.g. "run /opt/x/bin/conda"), which
    path is at fault, and what to do."""
    runner = user_name(os.geteuid())
    if finding.uid not in trusted_uids():
        owner = user_name(finding.uid)
        remedy = ('run the task as %s (become_user: %s), or give the installation to %s (chown -R %s %s)'
                  % (owner, owner, runner, runner, finding.path))
    else:
        remedy = 'remove the write access (chmod go-w %s), or run the task as a user who may write it' % finding.path
    return ('refusing to %s as %s: %s %s, so another user could change what this does; %s'
            % (action, runner, finding.path, finding.reason, remedy))
