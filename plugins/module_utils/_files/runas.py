# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run an environment's interpreter as the user who can change it, never as root for them.

A module running as root that executes ``ENV/bin/python`` runs whatever the owner of ENV put
in ``site-packages``: if that owner is not root, it hands them root. ``foreign_writer`` tells
who besides root can change what the interpreter loads; ``as_user_argv`` is the prefix that
drops to that user (util-linux ``setpriv``, present on every systemd-era distribution) so
the command runs with exactly their rights."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import pwd

from ansible_collections.torchfleet.cluster.plugins.module_utils._files import trusted_exec

NOBODY = (65534, 65534)


def interpreter_tree(python):
    """The files and directories whose owner decides what ``python`` runs."""
    prefix = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(python))))
    paths = [os.path.realpath(python), prefix, os.path.join(prefix, 'bin'), os.path.join(prefix, 'lib')]
    paths.extend(sorted(glob.glob(os.path.join(prefix, 'lib', 'python*', 'site-packages'))))
    return [path for path in paths if os.path.exists(path)]


def foreign_finding(python):
    """The first path that decides what ``python`` runs and that a user other than root can change
    (a trusted_exec Finding: path, uid, reason), or None."""
    for path in interpreter_tree(python):
        finding = trusted_exec.untrusted_writer(path, trusted=(0,))
        if finding is not None:
            return finding
    return None


def foreign_writer(python):
    """(uid, gid) of a user other than root who can change what ``python`` runs, or None.

    Every directory on the way to each path counts (trusted_exec). A non-root owner wins; a
    path that others may write without owning it makes the answer ``nobody``, the least a
    stranger could have planted there."""
    finding = foreign_finding(python)
    if finding is None:
        return None
    if finding.uid != 0:
        return finding.uid, os.lstat(finding.path).st_gid
    return NOBODY


def as_user_argv(setpriv, uid, gid):
    """argv prefix that runs the rest of the command as uid:gid with that user's groups."""
    try:
        pwd.getpwuid(uid)
        groups = '--init-groups'
    except KeyError:
        groups = '--clear-groups'
    return [setpriv, '--reuid=%d' % uid, '--regid=%d' % gid, groups, '--']
