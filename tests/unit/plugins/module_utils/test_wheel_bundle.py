# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of plugins/module_utils/_conda/wheel_bundle.py on real files and tars.

The bad bundles are written with tarfile directly, the way a tampered or hand-made bundle
would look to a node that installs from it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import io
import os
import stat
import tarfile

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import wheel_bundle

SIX = 'six-1.17.0-py2.py3-none-any.whl'
TORCH = 'torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl'
NUMPY = 'numpy-2.4.6-cp311-cp311-manylinux_2_28_x86_64.whl'
SDIST = 'antlr4-python3-runtime-4.9.3.tar.gz'
EPOCH = 'weird_pkg-1!2.0-py3-none-any.whl'

# Wheels are zip files: the bodies start like one, the rest is filler.
WHEEL_BODY = {
    SIX: b'PK\x03\x04six-1.17.0' + b'\x00' * 100,
    TORCH: b'PK\x03\x04torch-2.13.0' + bytes(range(256)) * 9000,  # > one read chunk (1 MiB)
    NUMPY: b'PK\x03\x04numpy-2.4.6' + b'n' * 4096,
    SDIST: b'\x1f\x8b\x08\x00antlr4',
    EPOCH: b'PK\x03\x04epoch',
}


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def entry(name, data=None):
    data = WHEEL_BODY[name] if data is None else data
    return dict(name=name, sha256=sha256(data), size=len(data))


def download_dir(tmp_path, names, bodies=None):
    """A directory as `pip download --dest` leaves it."""
    directory = tmp_path / 'download'
    directory.mkdir()
    for name in names:
        (directory / name).write_bytes((bodies or WHEEL_BODY)[name])
    return directory


def private_dir(tmp_path, name='wheels'):
    directory = tmp_path / name
    directory.mkdir(mode=0o700)
    return directory


def write_tar(path, members):
    """Write ``members``, (name, kind, payload) tuples, as an uncompressed tar.

    kind is file (payload: bytes), dir, symlink or hardlink (payload: link target)."""
    with tarfile.open(str(path), 'w', format=tarfile.PAX_FORMAT) as bundle:
        for name, kind, payload in members:
            info = tarfile.TarInfo(name)
            info.mode = 0o644
            if kind == 'file':
                info.size = len(payload)
                bundle.addfile(info, io.BytesIO(payload))
                continue
            info.type = {'dir': tarfile.DIRTYPE, 'symlink': tarfile.SYMTYPE, 'hardlink': tarfile.LNKTYPE}[kind]
            if kind == 'dir':
                info.mode = 0o755
            else:
                info.linkname = payload
            bundle.addfile(info)
    return path


# ---------------------------------------------------------------- helpers

@pytest.mark.parametrize('text, last', [
    ('', 'no output'),
    (None, 'no output'),
    ('  \n\n', 'no output'),
    ('ERROR: one\n', 'ERROR: one'),
    ('Collecting nosuchpkg==1.0\nERROR: No matching distribution found for nosuchpkg==1.0\n\n',
     'ERROR: No matching distribution found for nosuchpkg==1.0'),
    ('first\r\nsecond\r\n', 'second'),
], ids=['empty', 'none', 'blank-lines', 'one-line', 'trailing-blank-line', 'crlf'])
def test_last_line(text, last):
    assert wheel_bundle.last_line(text) == last


# ---------------------------------------------------------------- pack, then unpack

ROUND_TRIPS = [
    dict(id='one-wheel', names=[SIX]),
    dict(id='several-sorted-by-name', names=[TORCH, SIX, NUMPY]),
    dict(id='sdist-and-epoch-names', names=[SDIST, EPOCH, SIX]),
    dict(id='empty-file', names=[SIX], bodies={SIX: b''}),
    dict(id='nothing-downloaded', names=[]),
]


@pytest.mark.parametrize('case', ROUND_TRIPS, ids=[case['id'] for case in ROUND_TRIPS])
def test_round_trip(tmp_path, case):
    bodies = dict(WHEEL_BODY, **case.get('bodies', {}))
    source = download_dir(tmp_path, case['names'], bodies)
    tar_path = tmp_path / 'bundle.tar'
    manifest = wheel_bundle.pack(str(source), str(tar_path))
    names = sorted(case['names'])
    assert manifest == [entry(name, bodies[name]) for name in names]
    with tarfile.open(str(tar_path), 'r:') as bundle:  # uncompressed, plain files, nothing of the packer's
        members = bundle.getmembers()
    assert [m.name for m in members] == names
    assert all(m.isfile() and m.mode == 0o600 and (m.uid, m.gid, m.uname, m.gname) == (0, 0, '', '') for m in members)
    target = private_dir(tmp_path)
    assert wheel_bundle.unpack_verified(str(tar_path), manifest, str(target)) == names
    assert sorted(os.listdir(str(target))) == names
    for name in names:
        assert (target / name).read_bytes() == bodies[name]
        st = os.lstat(str(target / name))
        assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600


def test_manifest_digests_are_compared_without_regard_to_case(tmp_path):
    tar_path = tmp_path / 'bundle.tar'
    manifest = wheel_bundle.pack(str(download_dir(tmp_path, [SIX])), str(tar_path))
    shouting = [dict(e, sha256=e['sha256'].upper()) for e in manifest]
    assert wheel_bundle.unpack_verified(str(tar_path), shouting, str(private_dir(tmp_path))) == [SIX]


PACK_REFUSALS = [
    dict(id='symlink', name='evil.whl', make=lambda d, outside: os.symlink(outside, os.path.join(d, 'evil.whl'))),
    dict(id='dangling-symlink', name='gone.whl', make=lambda d, outside: os.symlink('/nonexistent', os.path.join(d, 'gone.whl'))),
    dict(id='subdirectory', name='nested', make=lambda d, outside: os.mkdir(os.path.join(d, 'nested'))),
    dict(id='fifo', name='pipe.whl', make=lambda d, outside: os.mkfifo(os.path.join(d, 'pipe.whl'))),
    dict(id='hidden-name', name='.netrc', make=lambda d, outside: open(os.path.join(d, '.netrc'), 'w').close()),
]


@pytest.mark.parametrize('case', PACK_REFUSALS, ids=[case['id'] for case in PACK_REFUSALS])
def test_pack_refuses_what_is_not_a_plain_file(tmp_path, case):
    outside = tmp_path / 'outside-secret'
    outside.write_bytes(b'root only\n')
    source = download_dir(tmp_path, [SIX])
    case['make'](str(source), str(outside))
    with pytest.raises(wheel_bundle.BundleError) as caught:
        wheel_bundle.pack(str(source), str(tmp_path / 'bundle.tar'))
    assert str(caught.value) == 'pip download left %r, which is not a plain file' % case['name']


# ---------------------------------------------------------------- unpack refusals

def good(name):
    return (name, 'file', WHEEL_BODY[name])


UNPACK_REFUSALS = [
    dict(id='tampered-content', members=[good(SIX), (TORCH, 'file', b'PK\x03\x04not the torch that was downloaded')],
         manifest=[entry(SIX), entry(TORCH)],
         error='%s in the bundle has SHA-256 %s, the downloading node recorded %s'
               % (TORCH, sha256(b'PK\x03\x04not the torch that was downloaded'), sha256(WHEEL_BODY[TORCH]))),
    dict(id='member-not-in-manifest', members=[good(SIX), good(NUMPY)], manifest=[entry(SIX)],
         error='the bundle holds %s, which its manifest does not list' % NUMPY),
    dict(id='manifest-file-missing-from-tar', members=[good(SIX)], manifest=[entry(SIX), entry(TORCH), entry(NUMPY)],
         error='the bundle lacks %s, %s' % (NUMPY, TORCH)),
    dict(id='symlink-member', members=[good(SIX), ('evil.whl', 'symlink', '/etc/shadow')],
         manifest=[entry(SIX), entry('evil.whl', b'')], error="the bundle holds 'evil.whl', which is not a plain file"),
    dict(id='hardlink-member', members=[good(SIX), ('copy.whl', 'hardlink', SIX)],
         manifest=[entry(SIX), entry('copy.whl', WHEEL_BODY[SIX])], error="the bundle holds 'copy.whl', which is not a plain file"),
    dict(id='directory-member', members=[('wheels', 'dir', None), good(SIX)], manifest=[entry(SIX)],
         error="the bundle holds 'wheels', which is not a plain file"),
    dict(id='dot-dot-name', members=[('../x', 'file', b'escaped')], manifest=[entry('../x', b'escaped')],
         error="the manifest entry {'name': '../x'"),
    dict(id='nested-name', members=[('a/b', 'file', b'nested')], manifest=[entry('a/b', b'nested')],
         error="the manifest entry {'name': 'a/b'"),
    dict(id='absolute-name', members=[('/tmp/x', 'file', b'absolute')], manifest=[entry('/tmp/x', b'absolute')],
         error="the manifest entry {'name': '/tmp/x'"),
    dict(id='hidden-name', members=[('.pth', 'file', b'import os')], manifest=[entry('.pth', b'import os')],
         error="the manifest entry {'name': '.pth'"),
    dict(id='dot-dot-member-not-in-manifest', members=[good(SIX), ('../x', 'file', b'escape')], manifest=[entry(SIX)],
         error="the bundle holds '../x', which is not a plain file"),
    dict(id='duplicate-member', members=[good(SIX), good(SIX)], manifest=[entry(SIX)], error='File exists'),
]


@pytest.mark.parametrize('case', UNPACK_REFUSALS, ids=[case['id'] for case in UNPACK_REFUSALS])
def test_unpack_refuses_a_bundle_that_differs_from_its_manifest(tmp_path, case):
    tar_path = write_tar(tmp_path / 'bundle.tar', case['members'])
    target = private_dir(tmp_path, 'work')
    target = private_dir(target, 'wheels')  # so that ../x would land in work/, a/b in wheels/a
    with pytest.raises(wheel_bundle.BundleError) as caught:
        wheel_bundle.unpack_verified(str(tar_path), case['manifest'], str(target))
    assert case['error'] in str(caught.value)
    assert os.listdir(str(target.parent)) == ['wheels']  # nothing was written beside the target
    for name in os.listdir(str(target)):  # only plain files the manifest names
        assert os.path.isfile(str(target / name)) and not os.path.islink(str(target / name))
        assert name in [e['name'] for e in case['manifest']]


def test_unpack_does_not_follow_a_symlink_to_the_bundle(tmp_path):
    real = tmp_path / 'real.tar'
    manifest = wheel_bundle.pack(str(download_dir(tmp_path, [SIX])), str(real))
    link = tmp_path / 'bundle.tar'
    os.symlink(str(real), str(link))
    target = private_dir(tmp_path)
    with pytest.raises(wheel_bundle.BundleError) as caught:
        wheel_bundle.unpack_verified(str(link), manifest, str(target))
    assert str(caught.value).startswith('cannot read the bundle %s: ' % link)
    assert 'Too many levels of symbolic links' in str(caught.value)
    assert os.listdir(str(target)) == []


@pytest.mark.parametrize('make, fragment', [
    (lambda path: None, 'No such file or directory'),
    (lambda path: path.write_bytes(b'<html>502 Bad Gateway</html>\n'), ''),
    (lambda path: path.mkdir(), 'Is a directory'),
], ids=['missing', 'not-a-tar', 'a-directory'])
def test_unpack_of_an_unreadable_bundle_names_it(tmp_path, make, fragment):
    path = tmp_path / 'bundle.tar'
    make(path)
    with pytest.raises(wheel_bundle.BundleError) as caught:
        wheel_bundle.unpack_verified(str(path), [entry(SIX)], str(private_dir(tmp_path)))
    assert str(caught.value).startswith('cannot read the bundle %s: ' % path) and fragment in str(caught.value)


def test_unpack_does_not_write_through_a_planted_symlink(tmp_path):
    tar_path = tmp_path / 'bundle.tar'
    manifest = wheel_bundle.pack(str(download_dir(tmp_path, [SIX])), str(tar_path))
    victim = tmp_path / 'victim'
    victim.write_bytes(b'keep me\n')
    target = private_dir(tmp_path)
    os.symlink(str(victim), str(target / SIX))
    with pytest.raises(wheel_bundle.BundleError) as caught:
        wheel_bundle.unpack_verified(str(tar_path), manifest, str(target))
    assert 'File exists' in str(caught.value)
    assert victim.read_bytes() == b'keep me\n' and os.path.islink(str(target / SIX))


# ---- remove_stale: what killed runs left beside a new bundle --------------------------------
DAY = 86400
NOW = 1_800_000_000


def aged(path, seconds, body=b'bundle\n'):
    path.write_bytes(body)
    os.utime(str(path), (NOW - seconds, NOW - seconds))
    return path


def test_remove_stale_removes_old_bundles_only(tmp_path):
    aged(tmp_path / 'train.killed.tar', 2 * DAY)
    aged(tmp_path / 'other.killed.tar', DAY + 1)
    aged(tmp_path / 'train.live.tar', DAY - 60)        # a run still going
    aged(tmp_path / 'train.mine.tar', 3 * DAY)         # this build's own (kept by name)
    aged(tmp_path / 'notes.txt', 3 * DAY)              # not a bundle
    (tmp_path / 'old.d.tar').mkdir()                   # not a regular file
    os.utime(str(tmp_path / 'old.d.tar'), (NOW - 3 * DAY, NOW - 3 * DAY))
    removed = wheel_bundle.remove_stale(str(tmp_path), DAY, keep=('train.mine.tar',), now=NOW)
    assert removed == ['other.killed.tar', 'train.killed.tar']
    assert sorted(os.listdir(str(tmp_path))) == ['notes.txt', 'old.d.tar', 'train.live.tar', 'train.mine.tar']


def test_remove_stale_never_follows_a_link(tmp_path):
    victim_dir = tmp_path / 'elsewhere'
    victim_dir.mkdir()
    victim = aged(victim_dir / 'backup.tar', 9 * DAY, b'keep me\n')
    bundles = tmp_path / 'bundles'
    bundles.mkdir()
    os.symlink(str(victim), str(bundles / 'planted.tar'))
    assert wheel_bundle.remove_stale(str(bundles), DAY, now=NOW) == []
    assert victim.read_bytes() == b'keep me\n' and os.path.islink(str(bundles / 'planted.tar'))


@pytest.mark.skipif(os.geteuid() != 0, reason='needs root to give a directory to another user')
def test_remove_stale_refuses_a_directory_another_user_controls(tmp_path):
    bundles = tmp_path / 'bundles'
    bundles.mkdir()
    old = aged(bundles / 'train.killed.tar', 9 * DAY)
    os.chown(str(bundles), 65534, 65534)
    with pytest.raises(wheel_bundle.safepath.UnsafePathError) as caught:
        wheel_bundle.remove_stale(str(bundles), DAY, now=NOW)
    assert 'is owned by' in str(caught.value) and old.exists()


def test_remove_stale_follows_a_directory_link_only_root_could_make(tmp_path):
    real = tmp_path / 'real'
    real.mkdir()
    old = aged(real / 'train.killed.tar', 9 * DAY)
    os.symlink(str(real), str(tmp_path / 'link'))
    assert wheel_bundle.remove_stale(str(tmp_path / 'link'), DAY, now=NOW) == ['train.killed.tar']
    assert not old.exists()


def test_remove_stale_refuses_a_directory_link_in_a_shared_directory(tmp_path):
    real = tmp_path / 'real'
    real.mkdir()
    old = aged(real / 'train.killed.tar', 9 * DAY)
    shared = tmp_path / 'shared'   # like /tmp: anyone may add a link there
    shared.mkdir()
    os.chmod(str(shared), 0o1777)
    os.symlink(str(real), str(shared / 'bundles'))
    with pytest.raises(wheel_bundle.safepath.UnsafePathError) as caught:
        wheel_bundle.remove_stale(str(shared / 'bundles'), DAY, now=NOW)
    assert 'symlink' in str(caught.value) and old.exists()
