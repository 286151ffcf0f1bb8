# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""File access as root inside directories that a less-privileged user controls.

A module that runs as root and writes into ``~trainer`` must not follow anything the
user can plant there: a symlink (to ``/etc/shadow``, to a root-owned directory), a hard
link, a FIFO, or an entry swapped between a check and the write. Checking a path with
``os.path.islink`` and then opening it by name is a race the user wins. Everything here
works on directory file descriptors instead: a directory is checked once, through the fd
that is then used, and every name is resolved relative to it with ``O_NOFOLLOW``.

API (every function raises :class:`UnsafePathError`, whose message names the full path
and the reason, when it refuses something; ``path`` arguments are only used in messages
and must be the path that the ``dir_fd`` and ``name`` stand for):

``open_dir(path, trusted_uids)`` -> fd
    Walk the absolute ``path`` from ``/`` one component at a time and return an fd of the
    final directory. Refuses a component that is a symlink in a directory a non-root user
    could write (a symlink in a directory only root can write, such as ``/home`` ->
    ``var/home``, is followed), a non-directory, a directory owned by a uid outside
    ``trusted_uids`` (root is always trusted), or one that every user may write without the
    sticky bit. A missing component raises ``FileNotFoundError`` naming it.
``open_child_dir(dir_fd, name, path, trusted_uids)`` -> fd or None
    One more step of the same walk: the directory ``name`` inside ``dir_fd`` (None when
    it does not exist). Never follows a symlink.
``make_dir(dir_fd, name, path, trusted_uids, mode)`` -> fd
    Create ``name`` (``os.mkdir(dir_fd=)``; an existing one is fine) and return its fd,
    checked like ``open_child_dir``. Set owner and mode on the fd with ``set_owner_mode``.
``read_file(dir_fd, name, path, trusted_uids, max_size)`` -> ``FileContent`` or None
    Read a regular file (None when it does not exist). Refuses a symlink, anything but a
    regular file (a FIFO would block, a device could have side effects), a file owned by a
    uid outside ``trusted_uids``, a file with more than one hard link (it may be
    ``/etc/shadow`` linked in where ``fs.protected_hardlinks`` is off) and one larger than
    ``max_size`` bytes.
``write_file(dir_fd, name, path, data, uid, gid, mode)``
    Replace ``name`` atomically: a new temporary file (``O_CREAT|O_EXCL|O_NOFOLLOW``) in
    the same directory, owner and mode set on its fd, data written and synced, then
    ``os.rename`` onto ``name``. Whatever was at ``name`` (a planted symlink or hard link)
    is replaced as a directory entry and never followed or written through.
``set_owner_mode(fd, uid, gid, mode)`` -> bool
    ``fchown``/``fchmod`` on an fd when they differ; True when something changed.
``entry_stat(dir_fd, name)`` -> ``os.stat_result`` or None
    ``lstat`` of ``name`` inside ``dir_fd`` (None when missing), for reports only.
``lock_dir(fd, path, timeout)``
    Exclusive ``flock`` on a directory fd, so two runs of the same module on one directory
    serialize their read-modify-write (released when the fd is closed).

Callers close the fds they get (``os.close``); ``closing(fd)`` is a context manager for it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import errno
import os
import pwd
import stat
import time

try:
    import fcntl
    HAS_FCNTL = True
except ImportError:  # pragma: no cover - not POSIX
    HAS_FCNTL = False

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO planted under the expected name must not hang the run.
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
MAX_LINK_FOLLOWS = 40
DEFAULT_MAX_SIZE = 1024 * 1024


class UnsafePathError(Exception):
    """A path that root must not use; ``str()`` is ``"<path> <reason>"``."""

    def __init__(self, path, reason):
        super(UnsafePathError, self).__init__('%s %s' % (path, reason))
        self.path = path
        self.reason = reason


class FileContent(object):
    """What ``read_file`` found: the bytes and the ``fstat`` of the file they came from."""

    def __init__(self, data, st):
        self.data = data
        self.st = st


@contextlib.contextmanager
def closing(fd):
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def join(parent, name):
    return parent.rstrip('/') + '/' + name


def describe_uid(uid):
    try:
        return '%s (uid %d)' % (pwd.getpwuid(uid).pw_name, uid)
    except KeyError:
        return 'uid %d' % uid


def trusted_names(trusted_uids):
    return ' or '.join(describe_uid(uid) for uid in sorted(set(trusted_uids) | {0}))


def check_owner(st, path, trusted_uids):
    if st.st_uid != 0 and st.st_uid not in trusted_uids:
        raise UnsafePathError(path, 'is owned by %s, not by %s; refusing to use it as root'
                              % (describe_uid(st.st_uid), trusted_names(trusted_uids)))


def check_dir(st, path, trusted_uids):
    """Refuse a directory whose entries someone untrusted could replace."""
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePathError(path, 'is not a directory')
    check_owner(st, path, trusted_uids)
    if st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
        raise UnsafePathError(path, 'is writable by every user (mode %04o) without the sticky bit; '
                                    'refusing to use it as root' % stat.S_IMODE(st.st_mode))


def only_root_can_write(st):
    return st.st_uid == 0 and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def kind_of(st):
    for test, word in ((stat.S_ISLNK, 'a symlink'), (stat.S_ISDIR, 'a directory'), (stat.S_ISFIFO, 'a FIFO'),
                       (stat.S_ISSOCK, 'a socket'), (stat.S_ISCHR, 'a character device'),
                       (stat.S_ISBLK, 'a block device')):
        if test(st.st_mode):
            return word
    return 'not a regular file'


def entry_stat(dir_fd, name):
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return None
        raise


def refuse_symlink(path):
    raise UnsafePathError(path, 'is a symlink; refusing to follow it as root')


def open_child_dir(dir_fd, name, path, trusted_uids):
    """fd of directory ``name`` in ``dir_fd``, checked; None when it does not exist."""
    try:
        fd = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return None
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            st = entry_stat(dir_fd, name)
            if st is not None and stat.S_ISLNK(st.st_mode):
                refuse_symlink(path)
            raise UnsafePathError(path, 'is not a directory')
        raise
    try:
        check_dir(os.fstat(fd), path, trusted_uids)
    except Exception:
        os.close(fd)
        raise
    return fd


def components(path):
    return [part for part in path.split('/') if part not in ('', '.')]


def open_dir(path, trusted_uids=()):
    """fd of the absolute directory ``path``, every component checked (see the module doc)."""
    if not path.startswith('/'):
        raise ValueError('%s is not an absolute path' % path)
    stack = [(os.open('/', DIR_FLAGS), '/')]
    pending = components(path)
    follows = 0
    try:
        check_dir(os.fstat(stack[0][0]), '/', trusted_uids)
        while pending:
            name = pending.pop(0)
            if name == '..':
                if len(stack) > 1:
                    os.close(stack.pop()[0])
                continue
            parent_fd, parent_path = stack[-1]
            child_path = join(parent_path, name)
            link = trusted_link_target(parent_fd, name, child_path)
            if link is not None:
                follows += 1
                if follows > MAX_LINK_FOLLOWS:
                    raise UnsafePathError(path, 'has too many levels of symlinks')
                if link.startswith('/'):
                    while len(stack) > 1:
                        os.close(stack.pop()[0])
                pending[0:0] = components(link)
                continue
            fd = open_child_dir(parent_fd, name, child_path, trusted_uids)
            if fd is None:
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), child_path)
            stack.append((fd, child_path))
        return stack.pop()[0]
    finally:
        for fd, dummy in stack:
            os.close(fd)


def trusted_link_target(parent_fd, name, path):
    """Target of a symlink that only root could have made, None when ``name`` is no symlink.

    A symlink in a directory a non-root user can write is that user's and is refused."""
    st = entry_stat(parent_fd, name)
    if st is None or not stat.S_ISLNK(st.st_mode):
        return None
    if not only_root_can_write(os.fstat(parent_fd)):
        refuse_symlink(path)
    return os.readlink(name, dir_fd=parent_fd)


def make_dir(dir_fd, name, path, trusted_uids, mode=0o700):
    """fd of directory ``name`` in ``dir_fd``, created when missing, checked either way."""
    try:
        os.mkdir(name, mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno != errno.EEXIST:
            raise
    fd = open_child_dir(dir_fd, name, path, trusted_uids)
    if fd is None:
        # Removed again between mkdir and open: someone else is working in this directory.
        raise UnsafePathError(path, 'disappeared right after it was created; refusing to go on')
    return fd


def check_regular(st, path, trusted_uids, max_size):
    if stat.S_ISLNK(st.st_mode):
        refuse_symlink(path)
    if not stat.S_ISREG(st.st_mode):
        raise UnsafePathError(path, 'is %s, not a regular file; refusing to read it as root' % kind_of(st))
    check_owner(st, path, trusted_uids)
    if st.st_nlink > 1:
        raise UnsafePathError(path, 'has %d hard links; refusing to use it as root (it may be a link '
                                    'to a file the user may not read)' % st.st_nlink)
    if st.st_size > max_size:
        raise UnsafePathError(path, 'is larger than %d bytes; refusing to read it' % max_size)


def read_file(dir_fd, name, path, trusted_uids=(), max_size=DEFAULT_MAX_SIZE):
    """Content and fstat of regular file ``name`` in ``dir_fd``; None when it does not exist."""
    before = entry_stat(dir_fd, name)
    if before is None:
        return None
    # Checked before opening too, so a device or FIFO is never even opened.
    check_regular(before, path, trusted_uids, max_size)
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            refuse_symlink(path)
        if exc.errno == errno.ENOENT:
            return None
        raise
    with closing(fd):
        st = os.fstat(fd)
        check_regular(st, path, trusted_uids, max_size)
        chunks = []
        size = 0
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            size += len(chunk)
            if size > max_size:
                raise UnsafePathError(path, 'is larger than %d bytes; refusing to read it' % max_size)
            chunks.append(chunk)
    return FileContent(b''.join(chunks), st)


def set_owner_mode(fd, uid, gid, mode):
    st = os.fstat(fd)
    changed = False
    if (st.st_uid, st.st_gid) != (uid, gid):
        os.fchown(fd, uid, gid)
        changed = True
    if stat.S_IMODE(st.st_mode) != mode:
        os.fchmod(fd, mode)
        changed = True
    return changed


def create_temp(dir_fd, name):
    """A new file next to ``name``, opened for writing; returns (fd, temp name)."""
    for attempt in range(100):
        temp = '.%s.torchfleet-%s' % (name, os.urandom(6).hex())
        try:
            return os.open(temp, CREATE_FLAGS, 0o600, dir_fd=dir_fd), temp
        except OSError as exc:
            if exc.errno != errno.EEXIST:
                raise
    raise OSError(errno.EEXIST, 'no free temporary name next to %s' % name)


def write_file(dir_fd, name, path, data, uid, gid, mode):
    """Replace ``name`` in ``dir_fd`` with ``data`` owned by uid:gid with ``mode``, atomically."""
    fd, temp = create_temp(dir_fd, name)
    try:
        with closing(fd):
            os.fchown(fd, uid, gid)
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except Exception:
        try:
            os.unlink(temp, dir_fd=dir_fd)
        except OSError:
            pass
        raise
    os.fsync(dir_fd)


def lock_dir(fd, path, timeout=30.0):
    """Exclusive flock on directory fd ``fd``, waiting at most ``timeout`` seconds."""
    if not HAS_FCNTL:  # pragma: no cover - not POSIX
        return
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
        if time.monotonic() >= deadline:
            raise UnsafePathError(path, 'stayed locked by another process for %d seconds' % timeout)
        time.sleep(0.2)
