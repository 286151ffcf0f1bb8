# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tree_owner on real trees: links and hard links to files outside, a directory swapped for a
symlink while the walk is inside it, and owner/group names that do not exist."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils import tree_owner

NOBODY = 65534


def _tree(tmp_path):
    """A build with a symlink to an outside file, one to an outside directory, and a hard link
    to an outside file (what conda's package cache looks like to the build)."""
    outside = tmp_path / 'outside'
    outside.mkdir()
    (outside / 'secret').write_text('root only')
    (outside / 'cached.py').write_text('print(1)\n')
    build = tmp_path / 'build'
    (build / 'lib' / 'deep').mkdir(parents=True)
    (build / 'lib' / 'deep' / 'mod.py').write_text('x = 1\n')
    (build / 'bin').mkdir()
    os.symlink(str(outside / 'secret'), str(build / 'bin' / 'to-secret'))
    os.symlink(str(outside), str(build / 'lib' / 'to-outside'))
    os.link(str(outside / 'cached.py'), str(build / 'lib' / 'cached.py'))
    return build, outside


def _owners(root):
    found = {}
    for here, dirs, files in os.walk(str(root)):
        for entry in [''] + dirs + files:
            path = os.path.join(here, entry) if entry else here
            found[os.path.relpath(path, str(root))] = os.lstat(path).st_uid
    return found


def test_chown_tree_changes_the_build_and_nothing_outside(tmp_path):
    build, outside = _tree(tmp_path)
    tree_owner.chown_tree(str(build), NOBODY, NOBODY)
    assert set(_owners(build).values()) == {NOBODY}
    assert set(_owners(outside).values()) == {0}
    assert os.lstat(str(build / 'lib' / 'cached.py')).st_ino != os.lstat(str(outside / 'cached.py')).st_ino
    assert (build / 'lib' / 'cached.py').read_text() == 'print(1)\n'
    assert os.lstat(str(outside / 'cached.py')).st_nlink == 1


def test_chown_tree_refuses_a_symlink_as_the_top(tmp_path):
    build, outside = _tree(tmp_path)
    link = tmp_path / 'link'
    os.symlink(str(outside), str(link))
    with pytest.raises(OSError):
        tree_owner.chown_tree(str(link), NOBODY, NOBODY)
    assert set(_owners(outside).values()) == {0}


class _Listing:
    def __init__(self, entries):
        self.entries = iter(entries)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __iter__(self):
        return self

    def __next__(self):
        return next(self.entries)

    def close(self):
        pass


def test_chown_tree_survives_a_directory_swapped_for_a_symlink_mid_walk(tmp_path, monkeypatch):
    """The new owner replaces build/lib by a symlink to a look-alike tree right after the walk
    has listed build/lib: the look-alike (outside the build) must keep its owner."""
    build, outside = _tree(tmp_path)
    decoy = tmp_path / 'decoy'
    (decoy / 'deep').mkdir(parents=True)
    (decoy / 'deep' / 'mod.py').write_text('root file')
    (decoy / 'cached.py').write_text('root file')
    (decoy / 'to-outside').write_text('root file')
    real_scandir = os.scandir
    target = str(build / 'lib')
    swapped = []

    def scandir(arg='.'):
        where = os.readlink('/proc/self/fd/%d' % arg) if isinstance(arg, int) else os.path.abspath(arg)
        entries = list(real_scandir(arg))
        if where == target and not swapped:
            os.rename(target, target + '.moved')
            os.symlink(str(decoy), target)
            swapped.append(True)
        return _Listing(entries)

    monkeypatch.setattr(os, 'scandir', scandir)
    tree_owner.chown_tree(str(build), NOBODY, NOBODY)
    monkeypatch.undo()
    assert swapped
    assert set(_owners(decoy).values()) == {0}
    assert set(_owners(outside).values()) == {0}


@pytest.mark.parametrize('owner, group, ids', [
    (None, None, (-1, -1)), ('root', None, (0, -1)), (None, 'root', (-1, 0)), ('65534', '65534', (NOBODY, NOBODY)),
])
def test_resolve_ids(owner, group, ids):
    assert tree_owner.resolve_ids(owner, group) == ids


@pytest.mark.parametrize('owner, group, fragment', [
    ('nosuchuser-tf', None, "owner 'nosuchuser-tf': no such user"),
    (None, 'nosuchgroup-tf', "group 'nosuchgroup-tf': no such group"),
])
def test_resolve_ids_names_what_is_unknown(owner, group, fragment):
    with pytest.raises(tree_owner.UnknownOwner) as caught:
        tree_owner.resolve_ids(owner, group)
    assert fragment in str(caught.value)
