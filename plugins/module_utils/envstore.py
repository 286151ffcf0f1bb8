# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""On-disk layout of managed environments: builds, stamps, the live symlink, history.

::

    <root>/envs/<name>                      -> .torchfleet/<name>-<key>   (the live path)
    <root>/envs/.torchfleet/<name>-<key>/   a complete, smoke-tested build
    <root>/envs/.torchfleet/<name>.history  build names, most recently live first
    <root>/envs/.torchfleet/.<name>.lock    serializes concurrent runs

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
import tempfile

try:
    import fcntl
    HAS_FCNTL = True
except ImportError:  # pragma: no cover - not POSIX
    HAS_FCNTL = False

from ansible_collections.torchfleet.cluster.plugins.module_utils import envspec

STORE = '.torchfleet'
STAMP = os.path.join('conda-meta', 'torchfleet-stamp')
SPEC_COPY = os.path.join('conda-meta', 'torchfleet-environment.yml')
LOCK_COPY = os.path.join('conda-meta', 'torchfleet-lock.txt')
EXPECTED = os.path.join('conda-meta', 'torchfleet-expected')
STAMP_KEYS = ('collection_version', 'lock_sha256', 'name', 'spec_file', 'spec_sha256')
_NAME_RE = re.compile(r'^[A-Za-z0-9_][A-Za-z0-9_.+-]*$')


def valid_name(name):
    return bool(name) and bool(_NAME_RE.match(name)) and name != 'base'


# ---------------------------------------------------------------- stamps


def make_stamp(name, spec_sha256, lock_sha256, collection_version, spec_file):
    return {'name': name, 'spec_sha256': spec_sha256, 'lock_sha256': lock_sha256,
            'collection_version': collection_version, 'spec_file': spec_file}


def stamp_text(stamp):
    """Sorted keys and no timestamps, so identical nodes write identical bytes."""
    return json.dumps(stamp, sort_keys=True, indent=2) + '\n'


def stamp_matches(found, wanted):
    """Same environment built from the same spec and lock (the collection version may differ)."""
    if not isinstance(found, dict):
        return False
    return all(found.get(key) == wanted.get(key) for key in ('name', 'spec_sha256', 'lock_sha256'))


def _read_json(path):
    try:
        with open(path, 'r') as handle:
            return json.load(handle)
    except (IOError, OSError, ValueError):
        return None


def read_stamp(build):
    data = _read_json(os.path.join(build, STAMP))
    return data if isinstance(data, dict) else None


def read_expected(build):
    data = _read_json(os.path.join(build, EXPECTED))
    return data if isinstance(data, dict) else None


def atomic_write(path, data):
    if not isinstance(data, bytes):
        data = data.encode('utf-8')
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix='.tmp-', dir=directory)
    try:
        with os.fdopen(fd, 'wb') as handle:
            handle.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except Exception:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def record_build(build, stamp, spec_bytes, lock_bytes, expected):
    """Copy the inputs into the build, then write the stamp last: a stamp means complete."""
    atomic_write(os.path.join(build, SPEC_COPY), spec_bytes)
    if lock_bytes is not None:
        atomic_write(os.path.join(build, LOCK_COPY), lock_bytes)
    if expected is not None:
        atomic_write(os.path.join(build, EXPECTED), json.dumps(expected, sort_keys=True, indent=2) + '\n')
    atomic_write(os.path.join(build, STAMP), stamp_text(stamp))


def write_file(directory, name, data):
    path = os.path.join(directory, name)
    with open(path, 'wb') as handle:
        handle.write(data if isinstance(data, bytes) else data.encode('utf-8'))
    return path


def healthy(build):
    return os.access(os.path.join(build, 'bin', 'python'), os.X_OK)


# ---------------------------------------------------------------- ownership


def _ids(owner, group):
    uid = gid = -1
    if owner:
        import pwd
        uid = int(owner) if owner.isdigit() else pwd.getpwnam(owner).pw_uid
    if group:
        import grp
        gid = int(group) if group.isdigit() else grp.getgrnam(group).gr_gid
    return uid, gid


def chown_tree(path, owner, group):
    if not owner and not group:
        return
    uid, gid = _ids(owner, group)
    os.lchown(path, uid, gid)
    for root, dirs, files in os.walk(path):
        for entry in dirs + files:
            os.lchown(os.path.join(root, entry), uid, gid)


def chown_link(path, owner, group):
    if owner or group:
        uid, gid = _ids(owner, group)
        os.lchown(path, uid, gid)


# ---------------------------------------------------------------- package comparison


def pin_problems(expected, installed):
    """Why a build does not satisfy the spec's requirements, as readable strings."""
    problems = []
    for name in sorted(expected):
        pin = expected[name]
        record = installed.get(name)
        if record is None:
            problems.append('%s is missing' % name)
        elif pin is not None and not envspec.version_matches(pin, record['version']):
            problems.append('%s is %s, the spec pins %s' % (name, record['version'], pin))
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
            after.append('%s==%s' % (name, pin))
        if live is None:
            summary['added'].append(name)
        elif pin is not None and not envspec.version_matches(pin, live):
            summary['changed'][name] = {'before': live, 'after': pin}
    return summary, _lines(before), _lines(after)


def _lines(items):
    return ''.join(item + '\n' for item in items)


# ---------------------------------------------------------------- the layout


class Layout:
    def __init__(self, root, name):
        self.root = root
        self.name = name
        self.envs = os.path.join(root, 'envs')
        self.store = os.path.join(self.envs, STORE)
        self.live = os.path.join(self.envs, name)
        self.history_path = os.path.join(self.store, '%s.history' % name)
        self.lock_path = os.path.join(self.store, '.%s.lock' % name)
        self._build_re = re.compile(r'^%s-[0-9a-f]{12}(?:-[0-9a-f]{12})?$' % re.escape(name))
        self._legacy_re = re.compile(r'^%s-legacy-\d+$' % re.escape(name))

    def default_conda(self):
        for rel in (('bin', 'conda'), ('condabin', 'conda')):
            path = os.path.join(self.root, *rel)
            if os.access(path, os.X_OK):
                return path
        return os.path.join(self.root, 'bin', 'conda')

    def build_dir(self, spec_sha256, lock_sha256=None):
        key = spec_sha256[:12] + ('-' + lock_sha256[:12] if lock_sha256 else '')
        return os.path.join(self.store, '%s-%s' % (self.name, key))

    def inspect(self):
        """What the live path is now: kind missing|symlink|dir|other, target, stamp, healthy."""
        path = self.live
        if os.path.islink(path):
            target = os.path.normpath(os.path.join(self.envs, os.readlink(path)))
            return {'kind': 'symlink', 'target': target, 'stamp': read_stamp(target), 'healthy': healthy(target)}
        if os.path.isdir(path):
            return {'kind': 'dir', 'target': path, 'stamp': read_stamp(path), 'healthy': healthy(path)}
        if os.path.lexists(path):
            return {'kind': 'other', 'target': None, 'stamp': None, 'healthy': False}
        return {'kind': 'missing', 'target': None, 'stamp': None, 'healthy': False}

    def reusable(self, build, stamp):
        return os.path.isdir(build) and stamp_matches(read_stamp(build), stamp) and healthy(build)

    # ---- listing

    def _entries(self):
        try:
            return sorted(os.listdir(self.store))
        except OSError:
            return []

    def builds(self):
        """Directories named like builds of this environment (stamped or not)."""
        return [os.path.join(self.store, n) for n in self._entries()
                if self._build_re.match(n) and os.path.isdir(os.path.join(self.store, n))]

    def legacy_dirs(self):
        return [os.path.join(self.store, n) for n in self._entries() if self._legacy_re.match(n)]

    def all_builds(self):
        return self.builds() + self.legacy_dirs()

    def history(self):
        data = _read_json(self.history_path)
        names = data.get('builds') if isinstance(data, dict) else None
        return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []

    def ordered_builds(self):
        """Stamped builds, most recently live first (history, then newest stamp)."""
        stamped = [b for b in self.builds() if (read_stamp(b) or {}).get('name') == self.name]
        rank = dict((name, i) for i, name in enumerate(self.history()))
        return sorted(stamped, key=lambda b: (rank.get(os.path.basename(b), len(rank)), -_mtime(os.path.join(b, STAMP))))

    def kept_after(self, current, keep):
        """(kept earlier builds, builds to delete) once ``current`` is live."""
        ordered = [b for b in self.ordered_builds() if b != current]
        kept = ordered[:keep]
        drop = [b for b in self.builds() if b != current and b not in kept]
        return kept, drop

    def rollback_target(self, stamp):
        for build in self.ordered_builds():
            if not stamp_matches(read_stamp(build), stamp) and healthy(build):
                return build
        return None

    # ---- changes

    def ensure_store(self, owner=None, group=None):
        for path in (self.envs, self.store):
            if not os.path.isdir(path):
                os.makedirs(path, 0o755)
                chown_link(path, owner, group)

    def workdir(self, build):
        return tempfile.mkdtemp(prefix='.work-%s-' % os.path.basename(build), dir=self.store)

    def discard(self, path):
        if path and os.path.lexists(path):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)

    def remove_builds(self, builds):
        for build in builds:
            self.discard(build)
        self._write_history([n for n in self.history() if os.path.join(self.store, n) not in builds])

    def remove_all(self):
        if os.path.islink(self.live) or os.path.isdir(self.live):
            self.discard(self.live)
        for build in self.all_builds():
            self.discard(build)
        for path in (self.history_path,):
            self.discard(path)

    def move_legacy(self):
        n = 1
        while os.path.lexists(os.path.join(self.store, '%s-legacy-%d' % (self.name, n))):
            n += 1
        target = os.path.join(self.store, '%s-legacy-%d' % (self.name, n))
        os.rename(self.live, target)
        return target

    def activate(self, build):
        """Point the live path at ``build`` with one rename(2): readers see old or new, never neither."""
        relative = os.path.join(STORE, os.path.basename(build))
        tmp = os.path.join(self.envs, '.%s.switch-%d' % (self.name, os.getpid()))
        self.discard(tmp)
        os.symlink(relative, tmp)
        os.replace(tmp, self.live)
        names = [os.path.basename(build)] + [n for n in self.history() if n != os.path.basename(build)]
        self._write_history(names)

    def _write_history(self, names):
        if os.path.isdir(self.store):
            atomic_write(self.history_path, json.dumps({'builds': names}, indent=2) + '\n')

    @contextlib.contextmanager
    def locked(self):
        self.ensure_store()
        if not HAS_FCNTL:
            yield
            return
        handle = open(self.lock_path, 'a')
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()


def _mtime(path):
    try:
        return os.stat(path).st_mtime
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return 0
        raise
