# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""On-disk layout of managed environments: builds, stamps, the live symlink, history, the lock.

::

    <root>/envs/<name>                        -> .torchfleet/<name>.d/<key>   (the live path)
    <root>/envs/.torchfleet/<name>.d/<key>/   a build of <name> (complete once stamped)
    <root>/envs/.torchfleet/<name>.d/history  builds, most recently live first
    <root>/envs/.torchfleet/<name>.d/legacy-<n>/  a hand-made environment moved aside
    <root>/envs/.torchfleet/.<name>.lock      serializes runs for <name>; names its holder

Every directory of one environment lives in its own ``<name>.d`` (a name cannot contain
``/``), so building, pruning or removing one environment can never reach another's.

Stores written by 0.1.0 kept builds flat, ``.torchfleet/<name>-<key>``; one environment's
name could then be another's plus ``-<key>``. Such a directory is treated as a build of
``<name>`` only when its stamp records ``<name>``; an unstamped one is never touched.
``<name>-legacy-<n>`` directories of that layout are recognized by name (that suffix is
unambiguous).

Nothing here ends in ``.json`` inside ``conda-meta``: conda loads every
``conda-meta/*.json`` as a package record and stops with an error on any other file
(``PrefixData._load_single_record``), so the stamp follows conda's own ``history`` and
``state`` files and carries no extension.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import errno
import json
import os
import re
import shutil
import socket
import stat
import tempfile
import time

try:
    import fcntl
    HAS_FCNTL = True
except ImportError:  # pragma: no cover - not POSIX
    HAS_FCNTL = False

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import envspec
from ansible_collections.torchfleet.cluster.plugins.module_utils._files.atomic_file import replace_file
from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import matchspec
from ansible_collections.torchfleet.cluster.plugins.module_utils._files import trusted_exec

STORE = '.torchfleet'
HOME_SUFFIX = '.d'
STAMP = os.path.join('conda-meta', 'torchfleet-stamp')
SPEC_COPY = os.path.join('conda-meta', 'torchfleet-environment.yml')
LOCK_COPY = os.path.join('conda-meta', 'torchfleet-lock.txt')
EXPECTED = os.path.join('conda-meta', 'torchfleet-expected')
STAMP_KEYS = ('collection_version', 'lock_sha256', 'name', 'spec_file', 'spec_sha256')
_NAME_RE = re.compile(r'^[A-Za-z0-9_][A-Za-z0-9_.+-]*\Z')
_SHA256_RE = re.compile(r'^[0-9a-f]{64}\Z')
_KEY_RE = re.compile(r'^[0-9a-f]{12}(?:-[0-9a-f]{12})?\Z')
_LEGACY_RE = re.compile(r'^legacy-[0-9]+\Z')
_NOFOLLOW = getattr(os, 'O_NOFOLLOW', 0) | getattr(os, 'O_CLOEXEC', 0)
_READ_LIMIT = 1 << 20


def valid_name(name):
    return bool(name) and bool(_NAME_RE.match(name)) and name != 'base'


def valid_sha256(text):
    return isinstance(text, str) and bool(_SHA256_RE.match(text))


class LockBusy(Exception):
    """Another run holds an environment's lock; ``str()`` says who, since when, and how long we waited."""

    def __init__(self, name, path, holder, waited):
        self.name = name
        self.path = path
        self.holder = holder or {}
        self.waited = waited
        super(LockBusy, self).__init__(self.__str__())

    def __str__(self):
        holder = self.holder
        if holder.get('pid'):
            who = 'pid %s on %s (user %s) since %s' % (holder.get('pid'), holder.get('host', '?'),
                                                       holder.get('user', '?'), holder.get('started', '?'))
        else:
            who = 'a run that has not recorded itself yet'
        return ('another run is changing the environment %s: %s holds %s; gave up after %d s '
                '(raise lock_timeout to wait longer)' % (self.name, who, self.path, self.waited))


# ---------------------------------------------------------------- stamps


def make_stamp(name, spec_sha256, lock_sha256, collection_version, spec_file):
    return {'name': name, 'spec_sha256': spec_sha256, 'lock_sha256': lock_sha256,
            'collection_version': collection_version, 'spec_file': spec_file}


def built_record(installed):
    """What a build holds, for its stamp: {name: {version, build, channel, manager}} from ``conda list``."""
    return dict((name, {'version': record['version'], 'build': record.get('build') or '',
                        'channel': record.get('channel') or '', 'manager': record.get('manager')})
                for name, record in sorted(installed.items()))


def stamp_summary(stamp):
    """The stamp without its package list (what a task result shows)."""
    if not isinstance(stamp, dict):
        return stamp
    return dict((key, value) for key, value in stamp.items() if key != 'packages')


def stamp_text(stamp):
    """Sorted keys and no timestamps, so identical nodes write identical bytes."""
    return json.dumps(stamp, sort_keys=True, indent=2) + '\n'


def stamp_matches(found, wanted):
    """Same environment built from the same spec and lock (the collection version may differ)."""
    if not isinstance(found, dict):
        return False
    return all(found.get(key) == wanted.get(key) for key in ('name', 'spec_sha256', 'lock_sha256'))


def read_beneath(base, relpath, limit=_READ_LIMIT):
    """The bytes of ``base/relpath``, following no symlink at or below ``base``, or None.

    A build may belong to an unprivileged owner, who could point ``conda-meta`` or the stamp
    at a file only root may read."""
    fds = []
    try:
        fds.append(os.open(base, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW))
        parts = relpath.split(os.sep)
        for part in parts[:-1]:
            fds.append(os.open(part, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW, dir_fd=fds[-1]))
        fds.append(os.open(parts[-1], os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW, dir_fd=fds[-1]))
        if not stat.S_ISREG(os.fstat(fds[-1]).st_mode):
            return None
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fds[-1], 65536)
            if not chunk:
                return b''.join(chunks)
            chunks.append(chunk)
            size += len(chunk)
        return None
    except OSError:
        return None
    finally:
        for fd in reversed(fds):
            os.close(fd)


def _read_json_beneath(base, relpath):
    data = read_beneath(base, relpath)
    if data is None:
        return None
    try:
        value = json.loads(data.decode('utf-8'))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def builds_in_use(builds, proc='/proc'):
    """The builds whose files a running process executes or works in (its ``exe`` or ``cwd``).

    A job started from an environment keeps running from the build the live path pointed at when it
    started; deleting that build under it breaks its next import."""
    roots = dict((os.path.realpath(b) + os.sep, b) for b in builds)
    used = set()
    if not roots:
        return used  # the converged path: nothing to delete, no process table to read
    try:
        pids = [p for p in os.listdir(proc) if p.isdigit()]
    except OSError:
        return used
    for pid in pids:
        for link in ('exe', 'cwd'):
            try:
                target = os.readlink(os.path.join(proc, pid, link))
            except OSError:
                continue
            used.update(b for root, b in roots.items() if (target + os.sep).startswith(root))
    return used


def _read_json(path):
    try:
        with open(path, 'r') as handle:
            return json.load(handle)
    except (IOError, OSError, ValueError):
        return None


def read_stamp(build):
    return _read_json_beneath(build, STAMP)


def read_expected(build):
    return _read_json_beneath(build, EXPECTED)


def record_build(build, stamp, spec_bytes, lock_bytes, expected):
    """Copy the inputs into the build, then write the stamp last: a stamp means complete."""
    replace_file(os.path.join(build, SPEC_COPY), spec_bytes)
    if lock_bytes is not None:
        replace_file(os.path.join(build, LOCK_COPY), lock_bytes)
    if expected is not None:
        replace_file(os.path.join(build, EXPECTED), json.dumps(expected, sort_keys=True, indent=2) + '\n')
    replace_file(os.path.join(build, STAMP), stamp_text(stamp))


def write_file(directory, name, data):
    path = os.path.join(directory, name)
    with open(path, 'wb') as handle:
        handle.write(data if isinstance(data, bytes) else data.encode('utf-8'))
    return path


def healthy(build):
    return os.access(os.path.join(build, 'bin', 'python'), os.X_OK)


# ---------------------------------------------------------------- package comparison


def pin_problems(expected, installed):
    """Why a build does not satisfy the spec's requirements, as readable strings."""
    problems = []
    for name in sorted(expected):
        pin = expected[name]
        record = installed.get(name)
        if record is None:
            problems.append('%s is missing' % name)
        elif pin is not None and not matchspec.satisfied(pin, record):
            found = record['version'] + (' ' + str(record.get('build')) if isinstance(pin, dict) else '')
            problems.append('%s is %s, the spec pins %s' % (name, found, matchspec.describe(pin)))
    return problems


def package_diff(current, old_expected, new_expected):
    """Spec-level difference: (summary dict, before text, after text).

    ``before`` lists the live versions of every package either spec names; ``after``
    lists what the new spec asks for: the live version where it already satisfies the
    spec, else the pin (or "unpinned" for a new name)."""
    names = sorted(set(old_expected) | set(new_expected))
    before, after = [], []
    summary = {'added': [], 'removed': [], 'changed': {}}
    for name in names:
        live = current.get(name, {}).get('version')
        if live is not None:
            before.append('%s==%s' % (name, live))
        if name not in new_expected:
            summary['removed'].append(name)
            continue
        pin = new_expected[name]
        if live is not None and (pin is None or envspec.version_matches(pin, live)):
            after.append('%s==%s' % (name, live))  # satisfied: no diff line
        elif pin is None:
            after.append('%s (unpinned)' % name)
        else:
            after.append(_pin_line(name, pin))
        if live is None:
            summary['added'].append(name)
        elif pin is not None and not envspec.version_matches(pin, live):
            summary['changed'][name] = {'before': live, 'after': matchspec.describe(pin)}
    return summary, _lines(before), _lines(after)


def _pin_line(name, pin):
    text = matchspec.describe(pin)
    return '%s==%s' % (name, text) if re.match(r'^[A-Za-z0-9_.+!]+$', text) else '%s %s' % (name, text)


def _lines(items):
    return ''.join(item + '\n' for item in items)


# ---------------------------------------------------------------- the layout


class Layout:
    def __init__(self, root, name):
        self.root = root
        self.name = name
        self.envs = os.path.join(root, 'envs')
        self.store = os.path.join(self.envs, STORE)
        self.home = os.path.join(self.store, name + HOME_SUFFIX)
        self.live = os.path.join(self.envs, name)
        self.history_path = os.path.join(self.home, 'history')
        self.lock_path = os.path.join(self.store, '.%s.lock' % name)
        # the 0.1.0 flat layout
        self.flat_history_path = os.path.join(self.store, '%s.history' % name)
        self._flat_build_re = re.compile(r'^%s-[0-9a-f]{12}(?:-[0-9a-f]{12})?\Z' % re.escape(name))
        self._flat_legacy_re = re.compile(r'^%s-legacy-[0-9]+\Z' % re.escape(name))

    def default_conda(self):
        for rel in (('bin', 'conda'), ('condabin', 'conda')):
            path = os.path.join(self.root, *rel)
            if os.access(path, os.X_OK):
                return path
        return os.path.join(self.root, 'bin', 'conda')

    def build_dir(self, spec_sha256, lock_sha256=None):
        key = spec_sha256[:12] + ('-' + lock_sha256[:12] if lock_sha256 else '')
        return os.path.join(self.home, key)

    def untrusted_store(self):
        """A Finding when someone other than root/euid could rearrange the store (or a directory above it)."""
        return trusted_exec.untrusted_writer(self.home)

    def inspect(self):
        """What the live path is now: kind missing|symlink|dir|other, target, ours, stamp, healthy."""
        path = self.live
        if os.path.islink(path):
            target = os.path.normpath(os.path.join(self.envs, os.readlink(path)))
            return {'kind': 'symlink', 'target': target, 'ours': self.owns(target),
                    'stamp': read_stamp(target), 'healthy': healthy(target)}
        if os.path.isdir(path):
            return {'kind': 'dir', 'target': path, 'ours': False, 'stamp': read_stamp(path), 'healthy': healthy(path)}
        if os.path.lexists(path):
            return {'kind': 'other', 'target': None, 'ours': False, 'stamp': None, 'healthy': False}
        return {'kind': 'missing', 'target': None, 'ours': False, 'stamp': None, 'healthy': False}

    def owns(self, path):
        """Whether ``path`` is a build directory of this environment (never one of another's)."""
        parent, base = os.path.split(os.path.normpath(path or ''))
        if not _is_real_dir(path):
            return False
        if parent == self.home:
            return bool(_KEY_RE.match(base))
        if parent == self.store and self._flat_build_re.match(base):
            return (read_stamp(path) or {}).get('name') == self.name
        return False

    def reusable(self, build, stamp):
        return _is_real_dir(build) and stamp_matches(read_stamp(build), stamp) and healthy(build)

    def find_reusable(self, stamp, preferred):
        """A kept, healthy build of ``stamp``: ``preferred`` if it is one, else one of the flat layout."""
        if self.reusable(preferred, stamp):
            return preferred
        for build in self._flat_builds():
            if self.reusable(build, stamp):
                return build
        return None

    # ---- listing

    def _entries(self, directory):
        try:
            return sorted(os.listdir(directory))
        except OSError:
            return []

    def _flat_builds(self):
        return [os.path.join(self.store, n) for n in self._entries(self.store)
                if self._flat_build_re.match(n) and self.owns(os.path.join(self.store, n))]

    def builds(self):
        """Build directories of this environment, stamped or interrupted."""
        own = [os.path.join(self.home, n) for n in self._entries(self.home)
               if _KEY_RE.match(n) and _is_real_dir(os.path.join(self.home, n))]
        return own + self._flat_builds()

    def legacy_dirs(self):
        own = [os.path.join(self.home, n) for n in self._entries(self.home) if _LEGACY_RE.match(n)]
        flat = [os.path.join(self.store, n) for n in self._entries(self.store) if self._flat_legacy_re.match(n)]
        return [d for d in own + flat if _is_real_dir(d)]

    def work_dirs(self):
        return [os.path.join(self.home, n) for n in self._entries(self.home) if n.startswith('.work-')]

    def all_builds(self):
        return self.builds() + self.legacy_dirs()

    def history(self):
        """Builds as paths relative to the store, most recently live first."""
        data = _read_json(self.history_path)
        if not isinstance(data, dict):
            data = _read_json(self.flat_history_path)
        names = data.get('builds') if isinstance(data, dict) else None
        return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []

    def _history_name(self, build):
        return os.path.relpath(build, self.store)

    def ordered_builds(self):
        """Stamped builds, most recently live first (history, then newest stamp)."""
        stamped = [b for b in self.builds() if (read_stamp(b) or {}).get('name') == self.name]
        rank = dict((name, i) for i, name in enumerate(self.history()))
        return sorted(stamped, key=lambda b: (rank.get(self._history_name(b), len(rank)), -_mtime(os.path.join(b, STAMP))))

    def live_targets(self):
        """Every build some environment's live symlink points at: never to be deleted."""
        targets = set()
        for entry in self._entries(self.envs):
            path = os.path.join(self.envs, entry)
            if os.path.islink(path):
                targets.add(os.path.normpath(os.path.join(self.envs, os.readlink(path))))
        return targets

    def kept_after(self, current, keep, proc='/proc'):
        """(kept earlier builds, builds to delete) once ``current`` is live; a build a process uses is neither."""
        ordered = [b for b in self.ordered_builds() if b != current]
        kept = ordered[:keep]
        protected = self.live_targets() | set([current])
        drop = [b for b in self.builds() if b not in protected and b not in kept]
        in_use = builds_in_use(drop, proc)
        return kept, [b for b in drop if b not in in_use]

    def rollback_target(self, stamp):
        for build in self.ordered_builds():
            if not stamp_matches(read_stamp(build), stamp) and healthy(build):
                return build
        return None

    # ---- changes (callers hold the lock)

    def ensure_home(self):
        for path in (self.envs, self.store, self.home):
            try:
                os.mkdir(path, 0o755)
            except OSError as exc:
                if exc.errno != errno.EEXIST:
                    raise

    def workdir(self, build):
        return tempfile.mkdtemp(prefix='.work-%s-' % os.path.basename(build), dir=self.home)

    def discard(self, path):
        if path and os.path.lexists(path):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)

    def remove_builds(self, builds, proc='/proc'):
        """Delete ``builds`` but those a live path points at or a running process uses; returns the deleted ones."""
        keep = self.live_targets() | builds_in_use(builds, proc)
        gone = [build for build in builds if build not in keep and self.owns(build)]
        for build in gone:
            self.discard(build)
        names = set(self._history_name(build) for build in gone)
        self._write_history([n for n in self.history() if n not in names])
        return gone

    def remove_all(self):
        """The live path, every build and legacy directory of this environment, its history."""
        if os.path.islink(self.live) or os.path.isdir(self.live):
            self.discard(self.live)
        for build in self.all_builds():
            self.discard(build)
        self.discard(self.home)
        self.discard(self.flat_history_path)

    def move_legacy(self):
        n = 1
        while os.path.lexists(os.path.join(self.home, 'legacy-%d' % n)):
            n += 1
        target = os.path.join(self.home, 'legacy-%d' % n)
        os.rename(self.live, target)
        return target

    def activate(self, build):
        """Point the live path at ``build`` with one rename(2): readers see old or new, never neither."""
        relative = os.path.relpath(build, self.envs)
        tmp = os.path.join(self.envs, '.%s.switch-%d' % (self.name, os.getpid()))
        self.discard(tmp)
        os.symlink(relative, tmp)
        os.replace(tmp, self.live)
        name = self._history_name(build)
        self._write_history([name] + [n for n in self.history() if n != name])

    def _write_history(self, names):
        if os.path.isdir(self.home):
            replace_file(self.history_path, json.dumps({'builds': names}, indent=2) + '\n')
            self.discard(self.flat_history_path)

    @contextlib.contextmanager
    def locked(self, timeout=0):
        """Hold this environment's lock; wait up to ``timeout`` seconds for another holder, else LockBusy."""
        self.ensure_home()
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o644)
        try:
            if HAS_FCNTL:
                self._acquire(fd, timeout)
            _record_holder(fd)
            try:
                yield
            finally:
                os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # releases the flock

    def _acquire(self, fd, timeout):
        started = time.time()
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except (IOError, OSError) as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
            waited = time.time() - started
            if waited >= timeout:
                raise LockBusy(self.name, self.lock_path, _read_holder(fd), waited)
            time.sleep(min(0.25, timeout - waited))

    def holder(self):
        """Who holds the lock now, as the lock file records it (empty when nobody does)."""
        try:
            fd = os.open(self.lock_path, os.O_RDONLY | _NOFOLLOW)
        except OSError:
            return {}
        try:
            return _read_holder(fd)
        finally:
            os.close(fd)


def _record_holder(fd):
    holder = {'pid': os.getpid(), 'host': socket.gethostname(), 'user': trusted_exec.user_name(os.geteuid()),
              'started': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps(holder, sort_keys=True) + '\n').encode('utf-8'), 0)


def _read_holder(fd):
    try:
        data = os.pread(fd, 4096, 0)
        holder = json.loads(data.decode('utf-8')) if data.strip() else {}
    except (OSError, ValueError):
        return {}
    return holder if isinstance(holder, dict) else {}


def _is_real_dir(path):
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except (OSError, TypeError):
        return False


def _mtime(path):
    try:
        return os.stat(path).st_mtime
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return 0
        raise
