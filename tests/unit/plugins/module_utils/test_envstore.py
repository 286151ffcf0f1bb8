# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build layout, stamps, history and the spec-level package diff."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils import conda, envstore
from ansible_collections.torchfleet.cluster.tests.unit.plugins.module_utils import conda_samples as samples

SHA_A = 'a' * 64
SHA_B = 'b' * 64
SHA_C = 'c' * 64


def stamp(spec, lock=None, version='0.1.0', name='train'):
    return envstore.make_stamp(name, spec, lock, version, 'inventories/demo/environment.yml')


def make_build(layout, spec, lock=None, name='train'):
    build = layout.build_dir(spec, lock)
    os.makedirs(os.path.join(build, 'bin'))
    os.makedirs(os.path.join(build, 'conda-meta'))
    python = os.path.join(build, 'bin', 'python')
    with open(python, 'w') as handle:
        handle.write('#!/bin/sh\n')
    os.chmod(python, 0o755)
    envstore.record_build(build, stamp(spec, lock, name=name), b'name: train\n', None, {'numpy': '2.4.6'})
    return build


@pytest.fixture
def layout(tmp_path):
    return envstore.Layout(str(tmp_path / 'miniconda3'), 'train')


def test_stamp_text_is_identical_for_identical_input():
    first = envstore.stamp_text(stamp(SHA_A))
    second = envstore.stamp_text(dict(reversed(list(stamp(SHA_A).items()))))
    assert first == second
    assert list(json.loads(first)) == sorted(envstore.STAMP_KEYS)


@pytest.mark.parametrize('found, wanted, same', [
    (stamp(SHA_A), stamp(SHA_A), True),
    (stamp(SHA_A, version='0.0.9'), stamp(SHA_A), True),
    (stamp(SHA_A), stamp(SHA_B), False),
    (stamp(SHA_A, SHA_B), stamp(SHA_A), False),
    (stamp(SHA_A, name='eval'), stamp(SHA_A), False),
    (None, stamp(SHA_A), False),
    ('garbage', stamp(SHA_A), False),
])
def test_stamp_matches(found, wanted, same):
    assert envstore.stamp_matches(found, wanted) is same


@pytest.mark.parametrize('name, ok', [('train', True), ('torch-2.13_cu129', True), ('base', False), ('a/b', False), ('', False), ('.hidden', False)])
def test_valid_name(name, ok):
    assert envstore.valid_name(name) is ok


def test_build_names(layout):
    assert layout.build_dir(SHA_A) == os.path.join(layout.store, 'train-' + 'a' * 12)
    assert layout.build_dir(SHA_A, SHA_B) == os.path.join(layout.store, 'train-%s-%s' % ('a' * 12, 'b' * 12))


def test_stamp_is_not_a_conda_package_record(layout):
    build = make_build(layout, SHA_A)
    meta = os.listdir(os.path.join(build, 'conda-meta'))
    assert 'torchfleet-stamp' in meta
    assert [n for n in meta if n.endswith('.json')] == []


def test_builds_of_other_environments_are_not_ours(tmp_path, layout):
    mine = make_build(layout, SHA_A)
    other = envstore.Layout(layout.root, 'train-x')
    make_build(other, SHA_B, name='train-x')
    assert layout.builds() == [mine]
    assert len(other.builds()) == 1


def test_activate_is_a_relative_symlink_and_records_history(layout):
    first = make_build(layout, SHA_A)
    second = make_build(layout, SHA_B)
    layout.activate(first)
    layout.activate(second)
    assert os.readlink(layout.live) == os.path.join('.torchfleet', os.path.basename(second))
    assert layout.history() == [os.path.basename(second), os.path.basename(first)]
    assert layout.inspect()['kind'] == 'symlink' and layout.inspect()['target'] == second
    assert not [n for n in os.listdir(layout.envs) if '.switch-' in n]


def test_kept_after_follows_history_and_drops_unstamped(layout):
    a, b, c = (make_build(layout, sha) for sha in (SHA_A, SHA_B, SHA_C))
    half = layout.build_dir('d' * 64)
    os.makedirs(half)
    for build in (a, c, b):
        layout.activate(build)
    assert layout.kept_after(b, 1) == ([c], [a, half])
    assert layout.kept_after(b, 5) == ([c, a], [half])
    assert layout.kept_after(b, 0) == ([], [a, c, half])


def test_rollback_target_is_newest_other_spec(layout):
    a, b = make_build(layout, SHA_A), make_build(layout, SHA_B)
    layout.activate(a)
    layout.activate(b)
    assert layout.rollback_target(stamp(SHA_B)) == a
    assert layout.rollback_target(stamp(SHA_A)) == b
    layout.remove_builds([a])
    assert layout.rollback_target(stamp(SHA_B)) is None
    assert layout.history() == [os.path.basename(b)]


def test_legacy_directories_are_numbered(layout):
    os.makedirs(os.path.join(layout.store))
    for expected in (1, 2):
        os.makedirs(layout.live)
        assert layout.move_legacy() == os.path.join(layout.store, 'train-legacy-%d' % expected)
    assert len(layout.legacy_dirs()) == 2


def test_remove_all(layout):
    build = make_build(layout, SHA_A)
    layout.activate(build)
    layout.remove_all()
    assert not os.path.lexists(layout.live) and layout.all_builds() == [] and layout.history() == []


def test_locked_serializes_and_creates_the_store(layout):
    with layout.locked():
        assert os.path.isdir(layout.store) and os.path.exists(layout.lock_path)


def test_pin_problems():
    installed = conda.parse_list(samples.LIST_TRAIN)
    assert envstore.pin_problems({'numpy': '2.4.6', 'python': '3.11', 'torch': '2.13.0', 'pip': None}, installed) == []
    assert envstore.pin_problems({'numpy': '2.4.5', 'scipy': None}, installed) == [
        'numpy is 2.4.6, the spec pins 2.4.5', 'scipy is missing']


def test_package_diff():
    current = conda.parse_list(samples.LIST_TRAIN_OLD)
    old = {'python': '3.11', 'numpy': '2.4.5', 'torch': '2.13.0', 'typing-extensions': None}
    new = {'python': '3.11', 'numpy': '2.4.6', 'torch': '2.13.0', 'scipy': '1.16.1', 'pip': None}
    summary, before, after = envstore.package_diff(current, old, new)
    assert summary == {'added': ['scipy'], 'removed': ['typing-extensions'], 'changed': {'numpy': {'before': '2.4.5', 'after': '2.4.6'}}}
    assert before == 'numpy==2.4.5\npip==25.2\npython==3.11.13\ntorch==2.13.0+cpu\ntyping-extensions==4.14.1\n'
    assert after == 'numpy==2.4.6\npip==25.2\npython==3.11.13\nscipy==1.16.1\ntorch==2.13.0+cpu\n'


def test_package_diff_without_live_env():
    summary, before, after = envstore.package_diff({}, {}, {'numpy': '2.4.6', 'pip': None})
    assert before == '' and after == 'numpy==2.4.6\npip (unpinned)\n'
    assert summary['added'] == ['numpy', 'pip']
