# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Give a build to its owner without ever following a path the new owner could change.

Runs as root on a tree that is about to belong to someone else: every change goes through a
descriptor of the directory that holds the entry, never through a path, and hard links are
broken first so the new owner gets no inode that also lives elsewhere (conda's package cache)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import shutil
import stat

from ansible_collections.torchfleet.cluster.plugins.module_utils import safepath

_NOFOLLOW = getattr(os, 'O_NOFOLLOW', 0) | getattr(os, 'O_CLOEXEC', 0)


class UnknownOwner(Exception):
    pass


def resolve_ids(owner, group):
    """(uid, gid) for chown, -1 for "unchanged"; UnknownOwner names a user or group that does not exist."""
    import grp
    import pwd
    uid = gid = -1
    if owner:
        try:
            uid = int(owner) if owner.isdigit() else pwd.getpwnam(owner).pw_uid
        except KeyError:
            raise UnknownOwner('owner %r: no such user on this node' % owner)
    if group:
        try:
            gid = int(group) if group.isdigit() else grp.getgrnam(group).gr_gid
        except KeyError:
            raise UnknownOwner('group %r: no such group on this node' % group)
    return uid, gid


def _unshare(dir_fd, name, st):
    """Replace a multiply-linked file by a private copy, so chown cannot reach its other names.

    conda hard-links files from its package cache into environments: chowning such an inode
    would hand the cache (and every environment linked to it) to the new owner."""
    with safepath.closing(os.open(name, os.O_RDONLY | _NOFOLLOW, dir_fd=dir_fd)) as src:
        dst, tmp = safepath.create_temp(dir_fd, name)
        try:
            with safepath.closing(dst):
                with os.fdopen(os.dup(src), 'rb') as reader, os.fdopen(os.dup(dst), 'wb') as writer:
                    shutil.copyfileobj(reader, writer, 1 << 20)
                os.fchmod(dst, stat.S_IMODE(st.st_mode))
            os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except Exception:
            try:
                os.unlink(tmp, dir_fd=dir_fd)
            except OSError:
                pass
            raise


def chown_tree(path, uid, gid):
    """Give the tree at ``path`` to uid:gid without following any symlink, bottom-up.

    The walk holds a descriptor of each directory (os.fwalk) and changes entries by name
    relative to it, never through a path. Bottom-up, a directory changes owner only after its
    contents, so the new owner can never rearrange a directory the walk is still inside."""
    if uid == -1 and gid == -1:
        return
    walked = False
    for _root, dirs, files, root_fd in os.fwalk(path, topdown=False, follow_symlinks=False):
        for entry in dirs + files:
            st = os.stat(entry, dir_fd=root_fd, follow_symlinks=False)
            if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                _unshare(root_fd, entry, st)
            os.chown(entry, uid, gid, dir_fd=root_fd, follow_symlinks=False)
        walked = True
    if not walked:
        raise OSError(errno.ENOTDIR, 'not a directory (or a symlink)', path)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
    try:
        os.fchown(fd, uid, gid)
    finally:
        os.close(fd)


def chown_link(path, uid, gid):
    if uid != -1 or gid != -1:
        os.lchown(path, uid, gid)
