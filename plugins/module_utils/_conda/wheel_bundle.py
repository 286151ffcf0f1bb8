# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A bundle of downloaded packages: one uncompressed tar of plain files, and its manifest.

One node downloads (``pip download``) and packs; every node that installs from the bundle
unpacks it into a private directory and checks each file against the manifest first.
Wheels are zip files already, so the tar is not compressed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os
import re
import stat
import tarfile
import time

from ansible_collections.torchfleet.cluster.plugins.module_utils._files import safepath
from ansible_collections.torchfleet.cluster.plugins.module_utils._conda.envspec import sha256_file
from ansible_collections.torchfleet.cluster.plugins.module_utils._conda.envstore import valid_sha256

_CHUNK = 1 << 20
# A name pip can write into a download directory: no separators, no leading dot.
_PLAIN_NAME = re.compile(r'^[A-Za-z0-9_][A-Za-z0-9_.+!-]*\Z')


class BundleError(Exception):
    """The bundle does not match its manifest, or holds something other than plain files."""


def last_line(text):
    lines = (text or '').strip().splitlines()
    return lines[-1] if lines else 'no output'


def pack(directory, tar_path):
    """Pack the plain files of ``directory`` into ``tar_path``; returns the manifest, sorted by name."""
    manifest = []
    with tarfile.open(tar_path, 'w', format=tarfile.PAX_FORMAT) as bundle:
        for name in sorted(os.listdir(directory)):
            path = os.path.join(directory, name)
            if not _PLAIN_NAME.match(name) or os.path.islink(path) or not os.path.isfile(path):
                raise BundleError('pip download left %r, which is not a plain file' % name)
            info = bundle.gettarinfo(path, arcname=name)
            info.uid = info.gid = 0
            info.uname = info.gname = ''
            info.mode = 0o600
            with open(path, 'rb') as handle:
                bundle.addfile(info, handle)
            manifest.append(dict(name=name, sha256=sha256_file(path), size=info.size))
    return manifest


def _manifest(manifest):
    """{name: sha256} of a manifest; an entry without a plain name or a 64-hex SHA-256 is refused."""
    wanted = {}
    for entry in manifest or ():
        name = entry.get('name') if isinstance(entry, dict) else None
        digest = entry.get('sha256') if isinstance(entry, dict) else None
        if not isinstance(name, str) or not _PLAIN_NAME.match(name) or not valid_sha256(str(digest).lower()):
            raise BundleError('the manifest entry %r does not name a plain file with its SHA-256 (64 hex digits)' % (entry,))
        wanted[name] = digest.lower()
    return wanted


def _members(bundle, wanted):
    for member in bundle.getmembers():
        if not member.isfile() or not _PLAIN_NAME.match(member.name):
            raise BundleError('the bundle holds %r, which is not a plain file' % member.name)
        if member.name not in wanted:
            raise BundleError('the bundle holds %s, which its manifest does not list' % member.name)
        yield member


def unpack_verified(tar_path, manifest, directory):
    """Unpack ``tar_path`` into the (private, empty) ``directory`` and check it against ``manifest``.

    Every listed file must be there with its SHA-256 and nothing else may be; raises BundleError
    naming the first file that differs."""
    wanted = _manifest(manifest)
    seen = set()
    try:
        fd = os.open(tar_path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, 'rb') as raw, tarfile.open(fileobj=raw, mode='r:') as bundle:
            for member in _members(bundle, wanted):
                target = os.path.join(directory, member.name)
                source = bundle.extractfile(member)
                digest = hashlib.sha256()
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                with os.fdopen(fd, 'wb') as handle:
                    for chunk in iter(lambda: source.read(_CHUNK), b''):
                        digest.update(chunk)
                        handle.write(chunk)
                if digest.hexdigest() != wanted[member.name]:
                    raise BundleError('%s in the bundle has SHA-256 %s, the downloading node recorded %s'
                                      % (member.name, digest.hexdigest(), wanted[member.name]))
                seen.add(member.name)
    except (tarfile.TarError, OSError) as exc:
        raise BundleError('cannot read the bundle %s: %s' % (tar_path, exc))
    missing = sorted(set(wanted) - seen)
    if missing:
        raise BundleError('the bundle lacks %s' % ', '.join(missing))
    return sorted(seen)


def remove_stale(directory, max_age, keep=(), trusted_uids=(), now=None):
    """Remove the bundles (regular ``*.tar`` files) in ``directory`` last written more than ``max_age``
    seconds ago, except the names in ``keep``; returns the names removed, sorted.

    Killed runs leave their bundles behind. The directory is opened through safepath (each
    component root's or a trusted user's, no link another user controls), and every file is
    removed relative to that descriptor, so a path changed meanwhile leads nowhere else."""
    now = time.time() if now is None else now
    removed = []
    with safepath.closing(safepath.open_dir(directory, trusted_uids)) as dir_fd:
        for entry in os.scandir(dir_fd):
            if not entry.name.endswith('.tar') or entry.name in keep:
                continue
            st = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode) or now - st.st_mtime <= max_age:
                continue
            try:
                os.unlink(entry.name, dir_fd=dir_fd)
            except FileNotFoundError:
                continue  # another run removed it first
            removed.append(entry.name)
    return sorted(removed)
