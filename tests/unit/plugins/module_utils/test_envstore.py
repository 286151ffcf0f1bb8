# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build layout, stamps, history, the lock and the spec-level package diff, on real directories."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import multiprocessing
import os
import threading
import time

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import conda, envstore
from ansible_collections.torchfleet.cluster.tests.unit.plugins.module_utils import conda_samples as samples

SHA_A = 'a' * 64
SHA_B = 'b' * 64
SHA_C = 'c' * 64
NOBODY = 65534
# An environment whose name is another's plus "-<12 hex digits>".
TWIN = 'train-' + 'a' * 12


def stamp(spec, lock=None, version='0.1.0', name='train'):
    return envstore.make_stamp(name, spec, lock, version, 'inventories/demo/environment.yml')


def fill_build(build, stamp_value):
    os.makedirs(os.path.join(build, 'bin'))
    os.makedirs(os.path.join(build, 'conda-meta'))
    python = os.path.join(build, 'bin', 'python')
    with open(python, 'w') as handle:
        handle.write('#!/bin/sh\n')
    os.chmod(python, 0o755)
    if stamp_value is not None:
        envstore.record_build(build, stamp_value, b'name: train\n', None, {'numpy': '2.4.6'})
    return build


def make_build(layout, spec, lock=None):
    layout.ensure_home()
    return fill_build(layout.build_dir(spec, lock), stamp(spec, lock, name=layout.name))


def make_flat_build(layout, key, recorded_name):
    """A build as 0.1.0 laid it out: directly in the store, named <name>-<key>."""
    layout.ensure_home()
    build = os.path.join(layout.store, '%s-%s' % (layout.name, key))
    return fill_build(build, stamp(SHA_C, name=recorded_name) if recorded_name else None)


@pytest.fixture
def layout(tmp_path):
    os.makedirs(str(tmp_path / 'miniconda3'))
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


@pytest.mark.parametrize('name, ok', [('train', True), ('torch-2.13_cu129', True), ('base', False), ('a/b', False), ('', False), ('.hidden', False),
                                      ('train\n', False), ('..', False)])
def test_valid_name(name, ok):
    assert envstore.valid_name(name) is ok


@pytest.mark.parametrize('text, ok', [(SHA_A, True), ('0123456789abcdef' * 4, True), ('A' * 64, False), ('a' * 63, False),
                                      ('../../../etc/' + 'a' * 51, False), ('a' * 64 + '\n', False), (None, False)])
def test_valid_sha256(text, ok):
    assert envstore.valid_sha256(text) is ok


def test_build_names_are_inside_the_environments_own_directory(layout):
    assert layout.home == os.path.join(layout.store, 'train.d')
    assert layout.build_dir(SHA_A) == os.path.join(layout.home, 'a' * 12)
    assert layout.build_dir(SHA_A, SHA_B) == os.path.join(layout.home, '%s-%s' % ('a' * 12, 'b' * 12))
    assert envstore.Layout(layout.root, TWIN).home != layout.home


def test_stamp_is_not_a_conda_package_record(layout):
    build = make_build(layout, SHA_A)
    meta = os.listdir(os.path.join(build, 'conda-meta'))
    assert 'torchfleet-stamp' in meta
    assert [n for n in meta if n.endswith('.json')] == []


def test_builds_of_other_environments_are_not_ours(layout):
    mine = make_build(layout, SHA_A)
    other = envstore.Layout(layout.root, 'train-x')
    make_build(other, SHA_B)
    twin = envstore.Layout(layout.root, TWIN)
    twin_build = make_build(twin, SHA_B)
    assert layout.builds() == [mine]
    assert twin.builds() == [twin_build]
    assert len(other.builds()) == 1


# Directories of the 0.1.0 flat layout next to the environment `train`: whose are they?
@pytest.mark.parametrize('dirname, recorded, ours', [
    ('train-' + 'b' * 12, 'train', True),                      # stamped as ours
    ('train-%s-%s' % ('a' * 12, 'b' * 12), TWIN, False),      # TWIN's build (key bbbb), named like ours with a lock
    ('train-%s-%s' % ('a' * 12, 'b' * 12), 'train', True),    # ours with a lock
    ('train-' + 'c' * 12, None, False),                        # unstamped: could be anyone's, never touched
    ('train-' + 'd' * 12, 'eval', False),                      # someone else's stamp
])
def test_flat_layout_directories_are_ours_only_by_stamp(layout, dirname, recorded, ours):
    layout.ensure_home()
    build = fill_build(os.path.join(layout.store, dirname), stamp(SHA_C, name=recorded) if recorded else None)
    assert layout.owns(build) is ours
    assert (build in layout.builds()) is ours


def test_a_symlink_in_the_store_is_never_a_build(layout, tmp_path):
    outside = fill_build(str(tmp_path / 'outside'), stamp(SHA_A))
    layout.ensure_home()
    os.symlink(outside, layout.build_dir(SHA_A))
    assert layout.builds() == [] and not layout.owns(layout.build_dir(SHA_A))


def test_name_plus_key_environment_survives_prune_and_removal_of_the_other(layout):
    """Finding 1: env TWIN's live build must survive everything done to `train`, and the reverse."""
    twin = envstore.Layout(layout.root, TWIN)
    twin_live = make_build(twin, SHA_B, SHA_C)
    twin.activate(twin_live)
    # the 0.1.0 layout's name of TWIN's build with key bbbb is train-aaaa...-bbbb..., a name `train` once claimed
    flat_twin = make_flat_build(twin, 'b' * 12, TWIN)
    twin.activate(flat_twin)
    mine = [make_build(layout, sha) for sha in (SHA_A, SHA_B)]
    layout.activate(mine[0])
    layout.activate(mine[1])
    _kept, drop = layout.kept_after(mine[1], 0)
    assert drop == [mine[0]]
    layout.remove_builds(drop)
    layout.remove_all()
    assert os.path.isdir(twin_live) and os.path.isdir(flat_twin)
    assert os.path.realpath(twin.live) == flat_twin
    twin.remove_all()
    assert not os.path.lexists(twin.live) and not os.path.exists(twin_live)


def test_live_targets_are_never_deleted_even_if_listed(layout):
    build = make_build(layout, SHA_A)
    other = envstore.Layout(layout.root, 'eval')
    os.symlink(os.path.relpath(build, layout.envs), other.live)  # someone's live path points at it
    assert layout.kept_after(layout.build_dir(SHA_B), 0) == ([], [])
    layout.remove_builds([build])
    assert os.path.isdir(build)


def test_activate_is_a_relative_symlink_and_records_history(layout):
    first = make_build(layout, SHA_A)
    second = make_build(layout, SHA_B)
    layout.activate(first)
    layout.activate(second)
    assert os.readlink(layout.live) == os.path.join('.torchfleet', 'train.d', os.path.basename(second))
    assert layout.history() == ['train.d/' + os.path.basename(second), 'train.d/' + os.path.basename(first)]
    live = layout.inspect()
    assert live['kind'] == 'symlink' and live['target'] == second and live['ours'] is True
    assert not [n for n in os.listdir(layout.envs) if '.switch-' in n]


def test_flat_history_is_read_and_replaced(layout):
    flat = make_flat_build(layout, 'b' * 12, 'train')
    with open(layout.flat_history_path, 'w') as handle:
        json.dump({'builds': [os.path.basename(flat)]}, handle)
    assert layout.history() == [os.path.basename(flat)]
    new = make_build(layout, SHA_A)
    layout.activate(new)
    assert layout.history() == ['train.d/' + 'a' * 12, os.path.basename(flat)]
    assert not os.path.exists(layout.flat_history_path)


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
    os.unlink(layout.live)
    layout.remove_builds([a])
    assert layout.rollback_target(stamp(SHA_B)) is None
    assert layout.history() == ['train.d/' + os.path.basename(b)]


def test_legacy_directories_are_numbered(layout):
    layout.ensure_home()
    for expected in (1, 2):
        os.makedirs(layout.live)
        assert layout.move_legacy() == os.path.join(layout.home, 'legacy-%d' % expected)
    os.makedirs(os.path.join(layout.store, 'train-legacy-7'))  # 0.1.0 put them here
    os.makedirs(os.path.join(layout.store, TWIN + '-legacy-1'))
    assert [os.path.basename(d) for d in layout.legacy_dirs()] == ['legacy-1', 'legacy-2', 'train-legacy-7']


def test_remove_all(layout):
    build = make_build(layout, SHA_A)
    layout.activate(build)
    flat = make_flat_build(layout, 'b' * 12, 'train')
    unknown = make_flat_build(layout, 'c' * 12, None)
    layout.remove_all()
    assert not os.path.lexists(layout.live) and layout.all_builds() == [] and layout.history() == []
    assert not os.path.exists(layout.home) and not os.path.exists(flat)
    assert os.path.isdir(unknown)


# ---------------------------------------------------------------- reading what an owner controls


def test_stamp_is_not_read_through_symlinks(layout, tmp_path):
    secret = tmp_path / 'secret'
    secret.mkdir()
    (secret / 'torchfleet-stamp').write_text(json.dumps(stamp(SHA_A)))
    build = make_build(layout, SHA_B)
    meta = os.path.join(build, 'conda-meta')
    os.unlink(os.path.join(meta, 'torchfleet-stamp'))
    os.symlink(str(secret / 'torchfleet-stamp'), os.path.join(meta, 'torchfleet-stamp'))
    assert envstore.read_stamp(build) is None
    os.rename(meta, meta + '.real')
    os.symlink(str(secret), meta)
    assert envstore.read_stamp(build) is None
    assert envstore.read_stamp(str(secret.parent)) is None


# ---------------------------------------------------------------- the lock, with real processes


def _hold(root, name, ready, release):
    with envstore.Layout(root, name).locked(0):
        ready.set()
        release.wait(60)


def _holder_process(layout):
    """Another process holds the lock until release is set; the timings asserted below are the
    waiter's own, so a loaded machine cannot make the holder let go early or late."""
    ready, release = multiprocessing.Event(), multiprocessing.Event()
    process = multiprocessing.Process(target=_hold, args=(layout.root, layout.name, ready, release))
    process.start()
    assert ready.wait(30)
    return process, release


def test_locked_records_the_holder_and_clears_it(layout):
    with layout.locked():
        assert os.path.isdir(layout.home)
        holder = layout.holder()
        assert holder['pid'] == os.getpid() and holder['host'] and holder['started'] and holder['user'] == 'root'
    assert layout.holder() == {}


def test_a_held_lock_fails_at_once_with_timeout_zero_and_names_the_holder(layout):
    process, release = _holder_process(layout)
    try:
        started = time.time()
        with pytest.raises(envstore.LockBusy) as caught:
            with layout.locked(0):
                pass
        assert time.time() - started < 5
        assert caught.value.holder['pid'] == process.pid
        assert 'pid %d on ' % process.pid in str(caught.value) and 'lock_timeout' in str(caught.value)
    finally:
        release.set()
        process.join()


def test_a_held_lock_is_waited_for_within_the_timeout(layout):
    process, release = _holder_process(layout)
    threading.Timer(1, release.set).start()
    started = time.time()
    with layout.locked(30):
        assert layout.holder()['pid'] == os.getpid()
    assert time.time() - started > 0.5
    process.join()


def test_the_wait_is_bounded(layout):
    process, release = _holder_process(layout)
    try:
        started = time.time()
        with pytest.raises(envstore.LockBusy):
            with layout.locked(1):
                pass
        assert 0.9 < time.time() - started < 10
    finally:
        release.set()
        process.join()


# ---------------------------------------------------------------- packages


def test_pin_problems():
    installed = conda.parse_list(samples.LIST_TRAIN)
    assert envstore.pin_problems({'numpy': '2.4.6', 'python': '=3.11', 'torch': '==2.13.0', 'pip': None}, installed) == []
    assert envstore.pin_problems({'numpy': '2.4.5', 'scipy': None}, installed) == [
        'numpy is 2.4.6, the spec pins 2.4.5', 'scipy is missing']


# The build's pin check reads pins exactly as the audit does: (pin, problem or None).
PIN_CASES = [
    ('==2.13', None),       # 2.13 == 2.13.0, and the node's local label (+cpu) is ignored
    ('2.13.0', None),
    ('==2.13.1', 'torch is 2.13.0+cpu, the spec pins ==2.13.1'),
    ('2.13*', None),
    ('>=2.13,<2.14', None),
    ('!=2.13.0', 'torch is 2.13.0+cpu, the spec pins !=2.13.0'),
    ({'version': '2.13.0', 'build': 'pypi_0'}, None),
    ({'version': '2.13.0', 'build': '*cuda*'}, 'torch is 2.13.0+cpu pypi_0, the spec pins 2.13.0 *cuda*'),
]


@pytest.mark.parametrize('pin, problem', PIN_CASES)
def test_pin_problems_use_match_spec_semantics(pin, problem):
    installed = conda.parse_list(samples.LIST_TRAIN)
    assert envstore.pin_problems({'torch': pin}, installed) == ([problem] if problem else [])


def test_package_diff():
    current = conda.parse_list(samples.LIST_TRAIN_OLD)
    old = {'python': '=3.11', 'numpy': '2.4.5', 'torch': '2.13.0', 'typing-extensions': None}
    new = {'python': '=3.11', 'numpy': '2.4.6', 'torch': '2.13.0', 'scipy': '1.16.1', 'pip': None}
    summary, before, after = envstore.package_diff(current, old, new)
    assert summary == {'added': ['scipy'], 'removed': ['typing-extensions'], 'changed': {'numpy': {'before': '2.4.5', 'after': '2.4.6'}}}
    assert before == 'numpy==2.4.5\npip==25.2\npython==3.11.13\ntorch==2.13.0+cpu\ntyping-extensions==4.14.1\n'
    assert after == 'numpy==2.4.6\npip==25.2\npython==3.11.13\nscipy==1.16.1\ntorch==2.13.0+cpu\n'


def test_package_diff_without_live_env():
    summary, before, after = envstore.package_diff({}, {}, {'numpy': '2.4.6', 'pip': None})
    assert before == '' and after == 'numpy==2.4.6\npip (unpinned)\n'
    assert summary['added'] == ['numpy', 'pip']


@pytest.mark.parametrize('link, target, used', [
    ('exe', 'a/bin/python3.11', ['a']),
    ('cwd', 'b', ['b']),
    ('cwd', 'b/../a-other', []),  # a sibling whose name starts like a build is not that build
    ('exe', '/usr/bin/python3', []),
])
def test_builds_in_use_reads_each_process_exe_and_cwd(tmp_path, link, target, used):
    store = tmp_path / 'store'
    for name in ('a', 'b', 'a-other'):
        (store / name / 'bin').mkdir(parents=True)
    proc = tmp_path / 'proc'
    (proc / '4242').mkdir(parents=True)
    (proc / 'self').mkdir()
    absolute = target if target.startswith('/') else os.path.normpath(str(store / target))
    os.symlink(absolute, str(proc / '4242' / link))
    builds = [str(store / 'a'), str(store / 'b')]
    assert sorted(envstore.builds_in_use(builds, str(proc))) == [str(store / n) for n in used]


def test_builds_in_use_reads_no_process_table_without_builds(monkeypatch):
    def no_listing(path):
        raise AssertionError('listed %s on the converged path' % path)
    monkeypatch.setattr(envstore.os, 'listdir', no_listing)
    assert envstore.builds_in_use([], '/proc') == set()
