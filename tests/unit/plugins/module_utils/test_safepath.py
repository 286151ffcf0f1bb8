# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of plugins/module_utils/_files/safepath.py on real files, symlinks, hard links and FIFOs.

The tests run as root; ``os.chown(path, USER, USER)`` makes a file the unprivileged user's,
as it is in a training user's home. Every refusal case also proves that the root-owned
target (the canary) was neither read into the result nor changed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import stat

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._files import safepath

USER = 65534      # stands for the training user
STRANGER = 65533  # another unprivileged user
CANARY = b'root:$y$j9T$secret-hash:19000:0:99999:7:::\n'

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='needs root to give files to other users')


def chown(path, uid=USER):
    os.chown(str(path), uid, uid, follow_symlinks=False)


@pytest.fixture
def world(tmp_path):
    """A root-owned canary file and directory, and a user-owned home with ~/.ssh."""
    root_dir = tmp_path / 'root-only'
    root_dir.mkdir(mode=0o700)
    canary = root_dir / 'shadow'
    canary.write_bytes(CANARY)
    canary.chmod(0o600)
    (root_dir / 'secrets').mkdir(mode=0o700)
    home = tmp_path / 'home'
    home.mkdir(mode=0o755)
    ssh = home / '.ssh'
    ssh.mkdir(mode=0o700)
    (ssh / 'authorized_keys').write_bytes(b'ssh-ed25519 AAAA user@laptop\n')
    for path in (home, ssh, ssh / 'authorized_keys'):
        chown(path)
    return dict(tmp=tmp_path, canary=canary, canary_dir=root_dir / 'secrets', home=home, ssh=ssh)


def canary_state(world):
    st = os.stat(str(world['canary']))
    dst = os.stat(str(world['canary_dir']))
    return (world['canary'].read_bytes(), st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode),
            sorted(os.listdir(str(world['canary_dir']))), dst.st_uid, stat.S_IMODE(dst.st_mode))


def plant(world, how):
    """Make the world look like the user prepared it: ``how`` is (kind, path in world, target)."""
    kind, where, target = how
    path = world['tmp'] / where
    if path.is_dir() and not path.is_symlink():
        os.rename(str(path), str(path) + '.moved')
    elif path.exists() or path.is_symlink():
        path.unlink()
    target_path = world[target] if target in world else None
    if kind == 'symlink':
        os.symlink(str(target_path), str(path))
    elif kind == 'hardlink':
        os.link(str(target_path), str(path))
    elif kind == 'fifo':
        os.mkfifo(str(path))
    elif kind == 'dir':
        path.mkdir()
    elif kind == 'file':
        path.write_bytes(b'x')
    if kind != 'hardlink':  # a hard link is the root-owned file itself
        chown(path, STRANGER if target == 'stranger' else USER)
    return path


def test_open_dir_walks_a_plain_path(world):
    with safepath.closing(safepath.open_dir(str(world['ssh']), (USER,))) as fd:
        assert os.fstat(fd).st_ino == os.stat(str(world['ssh'])).st_ino


OPEN_DIR_REFUSALS = [
    dict(id='ssh-dir-is-a-symlink-to-a-root-dir', plant=('symlink', 'home/.ssh', 'canary_dir'),
         path='home/.ssh', reason='is a symlink; refusing to follow it as root'),
    dict(id='home-is-a-symlink-in-a-user-writable-dir', plant=('symlink', 'home', 'canary_dir'),
         prepare='parent-user-owned', path='home/.ssh', names='home', reason='is a symlink'),
    dict(id='component-is-a-file', plant=('file', 'home/.ssh', None),
         path='home/.ssh', reason='is not a directory'),
    dict(id='component-owned-by-another-user', plant=('dir', 'home/.ssh', 'stranger'),
         path='home/.ssh', reason='is owned by'),
]


def prepare(world, case):
    if case.get('prepare') == 'parent-user-owned':
        chown(world['tmp'])


@pytest.mark.parametrize('case', OPEN_DIR_REFUSALS, ids=[case['id'] for case in OPEN_DIR_REFUSALS])
def test_open_dir_refuses(world, case):
    prepare(world, case)
    plant(world, case['plant'])
    before = canary_state(world)
    with pytest.raises(safepath.UnsafePathError) as caught:
        safepath.open_dir(str(world['tmp'] / case['path']), (USER,))
    named = str(world['tmp'] / case.get('names', case['path']))
    assert str(caught.value) == '%s %s' % (caught.value.path, caught.value.reason)
    assert caught.value.path == named
    assert case['reason'] in caught.value.reason
    assert canary_state(world) == before


def test_open_dir_refuses_a_world_writable_dir_without_sticky_bit(world):
    os.chmod(str(world['home']), 0o777)
    with pytest.raises(safepath.UnsafePathError) as caught:
        safepath.open_dir(str(world['ssh']), (USER,))
    assert caught.value.path == str(world['home'])
    assert 'writable by every user (mode 0777) without the sticky bit' in caught.value.reason


def test_open_dir_accepts_a_sticky_world_writable_dir(world):
    os.chmod(str(world['home']), 0o1777)
    with safepath.closing(safepath.open_dir(str(world['ssh']), (USER,))) as fd:
        assert os.fstat(fd).st_ino == os.stat(str(world['ssh'])).st_ino


def test_open_dir_follows_a_symlink_only_root_could_make(world):
    # /home -> var/home on image-based systems: a link in a root-only directory is root's choice.
    base = world['tmp'] / 'sys'
    (base / 'var').mkdir(parents=True, mode=0o755)
    os.rename(str(world['home']), str(base / 'var' / 'home'))
    os.symlink('var/home', str(base / 'home'))
    os.symlink('.././var/../var/home/.ssh', str(base / 'var' / 'up-and-back'))
    base.chmod(0o755)
    for path in (base / 'home' / '.ssh', base / 'var' / 'up-and-back'):
        with safepath.closing(safepath.open_dir(str(path), (USER,))) as fd:
            assert os.fstat(fd).st_ino == os.stat(str(base / 'var' / 'home' / '.ssh')).st_ino


def test_open_dir_refuses_a_root_owned_link_in_a_group_writable_dir(world):
    base = world['tmp'] / 'shared'
    base.mkdir()
    base.chmod(0o775)
    os.symlink(str(world['home']), str(base / 'home'))
    with pytest.raises(safepath.UnsafePathError) as caught:
        safepath.open_dir(str(base / 'home'), (USER,))
    assert caught.value.path == str(base / 'home') and 'is a symlink' in caught.value.reason


def test_open_dir_stops_a_link_loop(world):
    base = world['tmp'] / 'loop'
    base.mkdir(mode=0o755)
    os.symlink('b', str(base / 'a'))
    os.symlink('a', str(base / 'b'))
    with pytest.raises(safepath.UnsafePathError) as caught:
        safepath.open_dir(str(base / 'a'), ())
    assert 'too many levels of symlinks' in caught.value.reason


def test_open_dir_names_the_missing_component(world):
    with pytest.raises(FileNotFoundError) as caught:
        safepath.open_dir(str(world['home'] / 'nothing' / 'deeper'), (USER,))
    assert caught.value.filename == str(world['home'] / 'nothing')


def test_open_dir_wants_an_absolute_path():
    with pytest.raises(ValueError):
        safepath.open_dir('home/trainer', ())


def test_open_dir_holds_the_directory_it_checked(world):
    """The user swaps ~/.ssh for a link to a root directory after the walk: the fd still is ~/.ssh."""
    fd = safepath.open_dir(str(world['ssh']), (USER,))
    with safepath.closing(fd):
        os.rename(str(world['ssh']), str(world['home'] / 'old'))
        os.symlink(str(world['canary_dir']), str(world['ssh']))
        before = canary_state(world)
        safepath.write_file(fd, 'authorized_keys', 'x', b'new\n', USER, USER, 0o600)
        assert canary_state(world) == before
    assert (world['home'] / 'old' / 'authorized_keys').read_bytes() == b'new\n'


READ_REFUSALS = [
    dict(id='symlink-to-root-file', plant=('symlink', 'home/.ssh/authorized_keys', 'canary'),
         reason='is a symlink; refusing to follow it as root'),
    dict(id='hard-link-to-root-file', plant=('hardlink', 'home/.ssh/authorized_keys', 'canary'),
         reason='has 2 hard links'),
    dict(id='fifo-would-block', plant=('fifo', 'home/.ssh/authorized_keys', None),
         reason='is a FIFO, not a regular file'),
    dict(id='directory', plant=('dir', 'home/.ssh/authorized_keys', None),
         reason='is a directory, not a regular file'),
    dict(id='owned-by-another-user', plant=('file', 'home/.ssh/authorized_keys', 'stranger'),
         reason='is owned by uid 65533, not by'),
]


@pytest.mark.parametrize('case', READ_REFUSALS, ids=[case['id'] for case in READ_REFUSALS])
def test_read_file_refuses(world, case):
    plant(world, case['plant'])
    before = canary_state(world)
    path = str(world['ssh'] / 'authorized_keys')
    with safepath.closing(safepath.open_dir(str(world['ssh']), (USER,))) as fd:
        with pytest.raises(safepath.UnsafePathError) as caught:
            safepath.read_file(fd, 'authorized_keys', path, (USER,))
    assert caught.value.path == path
    assert case['reason'] in caught.value.reason
    assert CANARY.decode() not in str(caught.value)
    assert canary_state(world) == before


def test_read_file_reads_a_plain_file_and_reports_missing_ones(world):
    with safepath.closing(safepath.open_dir(str(world['ssh']), (USER,))) as fd:
        found = safepath.read_file(fd, 'authorized_keys', 'x', (USER,))
        assert found.data == b'ssh-ed25519 AAAA user@laptop\n'
        assert found.st.st_uid == USER
        assert safepath.read_file(fd, 'config', 'x', (USER,)) is None


def test_read_file_caps_the_size(world):
    (world['ssh'] / 'authorized_keys').write_bytes(b'k' * 101)
    with safepath.closing(safepath.open_dir(str(world['ssh']), (USER,))) as fd:
        with pytest.raises(safepath.UnsafePathError) as caught:
            safepath.read_file(fd, 'authorized_keys', 'x', (USER,), max_size=100)
        assert 'larger than 100 bytes' in caught.value.reason
        assert safepath.read_file(fd, 'authorized_keys', 'x', (USER,), max_size=101).data == b'k' * 101


# Swaps done in the window between the check by name and the open: the fd-based open must catch them.
RACES = [
    dict(id='swapped-for-a-symlink', plant=('symlink', 'home/.ssh/authorized_keys', 'canary'),
         reason='is a symlink'),
    dict(id='swapped-for-a-hard-link', plant=('hardlink', 'home/.ssh/authorized_keys', 'canary'),
         reason='has 2 hard links'),
]


@pytest.mark.parametrize('case', RACES, ids=[case['id'] for case in RACES])
def test_read_file_catches_a_swap_after_the_check(world, monkeypatch, case):
    real_check = safepath.check_regular
    calls = []

    def check_then_swap(st, *args):
        real_check(st, *args)
        if not calls:
            plant(world, case['plant'])
        calls.append(st)

    monkeypatch.setattr(safepath, 'check_regular', check_then_swap)
    before = canary_state(world)
    with safepath.closing(safepath.open_dir(str(world['ssh']), (USER,))) as fd:
        with pytest.raises(safepath.UnsafePathError) as caught:
            safepath.read_file(fd, 'authorized_keys', 'x', (USER,))
    assert case['reason'] in caught.value.reason
    assert canary_state(world) == before


def test_open_dir_catches_a_component_swapped_after_the_link_check(world, monkeypatch):
    real = safepath.trusted_link_target

    def check_then_swap(parent_fd, name, path):
        target = real(parent_fd, name, path)
        if name == '.ssh':
            plant(world, ('symlink', 'home/.ssh', 'canary_dir'))
        return target

    monkeypatch.setattr(safepath, 'trusted_link_target', check_then_swap)
    with pytest.raises(safepath.UnsafePathError) as caught:
        safepath.open_dir(str(world['ssh']), (USER,))
    assert caught.value.path == str(world['ssh']) and 'is a symlink' in caught.value.reason


WRITE_OVER = [
    dict(id='planted-symlink-is-replaced-not-followed', plant=('symlink', 'home/.ssh/authorized_keys', 'canary')),
    dict(id='planted-hard-link-is-replaced-not-written-through', plant=('hardlink', 'home/.ssh/authorized_keys', 'canary')),
    dict(id='plain-file-is-replaced', plant=None),
    dict(id='new-file', plant=('file', 'home/.ssh/other', None), name='config'),
]


@pytest.mark.parametrize('case', WRITE_OVER, ids=[case['id'] for case in WRITE_OVER])
def test_write_file_replaces_the_entry(world, case):
    if case['plant']:
        plant(world, case['plant'])
    before = canary_state(world)
    name = case.get('name', 'authorized_keys')
    with safepath.closing(safepath.open_dir(str(world['ssh']), (USER,))) as fd:
        safepath.write_file(fd, name, 'x', b'ssh-ed25519 BBBB cluster\n', USER, USER, 0o600)
    target = world['ssh'] / name
    st = os.lstat(str(target))
    assert stat.S_ISREG(st.st_mode) and st.st_nlink == 1
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (USER, USER, 0o600)
    assert target.read_bytes() == b'ssh-ed25519 BBBB cluster\n'
    assert canary_state(world) == before
    assert os.stat(str(world['canary'])).st_nlink == 1  # a planted hard link is gone, the canary untouched
    assert not [entry for entry in os.listdir(str(world['ssh'])) if 'torchfleet-' in entry]


def test_write_file_removes_its_temporary_file_on_failure(world, monkeypatch):
    def broken_fsync(fd):
        raise OSError(errno.EIO, 'I/O error')

    monkeypatch.setattr(safepath.os, 'fsync', broken_fsync)
    with safepath.closing(safepath.open_dir(str(world['ssh']), (USER,))) as fd:
        with pytest.raises(OSError):
            safepath.write_file(fd, 'authorized_keys', 'x', b'new\n', USER, USER, 0o600)
    assert sorted(os.listdir(str(world['ssh']))) == ['authorized_keys']
    assert (world['ssh'] / 'authorized_keys').read_bytes() == b'ssh-ed25519 AAAA user@laptop\n'


MAKE_DIR = [
    dict(id='creates-a-missing-dir', plant=None, created=True),
    dict(id='accepts-an-existing-dir', plant=('dir', 'home/sub', None), created=False),
    dict(id='refuses-a-symlink', plant=('symlink', 'home/sub', 'canary_dir'), reason='is a symlink'),
    dict(id='refuses-a-file', plant=('file', 'home/sub', None), reason='is not a directory'),
    dict(id='refuses-a-stranger-dir', plant=('dir', 'home/sub', 'stranger'), reason='is owned by'),
]


@pytest.mark.parametrize('case', MAKE_DIR, ids=[case['id'] for case in MAKE_DIR])
def test_make_dir(world, case):
    if case['plant']:
        plant(world, case['plant'])
    before = canary_state(world)
    path = str(world['home'] / 'sub')
    with safepath.closing(safepath.open_dir(str(world['home']), (USER,))) as home_fd:
        if 'reason' in case:
            with pytest.raises(safepath.UnsafePathError) as caught:
                safepath.make_dir(home_fd, 'sub', path, (USER,))
            assert caught.value.path == path and case['reason'] in caught.value.reason
        else:
            with safepath.closing(safepath.make_dir(home_fd, 'sub', path, (USER,))) as fd:
                assert os.fstat(fd).st_ino == os.lstat(path).st_ino
                assert safepath.set_owner_mode(fd, USER, USER, 0o700) is True
                assert safepath.set_owner_mode(fd, USER, USER, 0o700) is False
            st = os.lstat(path)
            assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (USER, 0o700)
    assert canary_state(world) == before


def test_lock_dir_waits_for_the_other_holder_then_gives_up(world):
    first = safepath.open_dir(str(world['ssh']), (USER,))
    second = safepath.open_dir(str(world['ssh']), (USER,))
    with safepath.closing(first), safepath.closing(second):
        safepath.lock_dir(first, 'x')
        with pytest.raises(safepath.UnsafePathError) as caught:
            safepath.lock_dir(second, str(world['ssh']), timeout=0.3)
        assert 'stayed locked by another process' in caught.value.reason
    with safepath.closing(safepath.open_dir(str(world['ssh']), (USER,))) as third:
        safepath.lock_dir(third, 'x', timeout=0.3)


def test_entry_stat(world):
    with safepath.closing(safepath.open_dir(str(world['home']), (USER,))) as fd:
        assert stat.S_ISDIR(safepath.entry_stat(fd, '.ssh').st_mode)
        assert safepath.entry_stat(fd, 'missing') is None
