# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Flows of torchfleet.cluster.conda_env on a temporary Miniconda root.

``run_command`` is answered by a small node model: conda commands return samples of real
conda output (conda_samples) and create the directories real conda would create."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.torchfleet.cluster.plugins.module_utils import envspec, envstore
from ansible_collections.torchfleet.cluster.plugins.modules import conda_env
from ansible_collections.torchfleet.cluster.tests.unit.plugins.module_utils import conda_samples as samples
from ansible_collections.torchfleet.cluster.tests.unit.plugins.modules.module_exits import ExitJson, FailJson, patch_module_exits

SPEC_V1 = ('name: train\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.11\n  - pip\n'
           '  - numpy=2.4.5\n  - pip:\n      - torch==2.13.0\n')
SPEC_V2 = SPEC_V1.replace('numpy=2.4.5', 'numpy=2.4.6')
SPEC_MISSING = SPEC_V1.replace('numpy=2.4.5', 'numpy=9.9.9')
SPEC_NO_TORCH = 'name: train\ndependencies:\n  - python=3.11\n  - numpy=2.4.6\n'
EXPLICIT_LOCK = ('# platform: linux-64\n@EXPLICIT\n'
                 'https://mirror.invalid/conda-forge/linux-64/python-3.11.13-h9e4cc4f_0_cpython.conda#8c399445b6dc73eab839659e6c7b5ad1\n'
                 'https://mirror.invalid/conda-forge/linux-64/numpy-2.4.6-py311h71ddf71_0.conda#d7c89558ba9fa0495403155b64376d81\n'
                 'https://mirror.invalid/conda-forge/noarch/pip-25.2-pyh8b19718_0.conda#8e91f1f21417c9ab1265240ee4f9db1e\n')
CONDA_LOCK_JSON = json.dumps({'version': 1, 'metadata': {'platforms': ['linux-64']}, 'package': [
    {'name': 'python', 'version': '3.11.13', 'manager': 'conda', 'platform': 'linux-64', 'category': 'main', 'optional': False,
     'url': 'https://mirror.invalid/conda-forge/linux-64/python-3.11.13-h9e4cc4f_0_cpython.conda', 'hash': {'md5': '8c399445b6dc73eab839659e6c7b5ad1'}},
    {'name': 'numpy', 'version': '2.4.6', 'manager': 'conda', 'platform': 'linux-64', 'category': 'main', 'optional': False,
     'url': 'https://mirror.invalid/conda-forge/linux-64/numpy-2.4.6-py311h71ddf71_0.conda', 'hash': {'md5': 'd7c89558ba9fa0495403155b64376d81'}},
    {'name': 'torch', 'version': '2.13.0', 'manager': 'pip', 'platform': 'linux-64', 'category': 'main', 'optional': False,
     'url': 'https://mirror.invalid/packages/torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl',
     'hash': {'sha256': '92d6037539857d8206b8f6ae472e8b77db8058fec5937a1ef3f54304089edbb9'}},
]})


class Node:
    """Answers run_command like a node with conda installed at ``root``."""

    def __init__(self, root, smoke_rc=0, installed=None, leave_partial=True):
        self.root = root
        self.conda = os.path.join(root, 'bin', 'conda')
        self.calls = []
        self.smoke_rc = smoke_rc
        self.installed = installed  # force a `conda list` answer for new builds
        self.leave_partial = leave_partial
        self.listing = {}
        os.makedirs(os.path.join(root, 'bin'))
        with open(self.conda, 'w') as handle:
            handle.write('#!/bin/sh\n')
        os.chmod(self.conda, 0o755)

    def run_command_method(self):
        node = self

        def run_command(module, cmd, **kwargs):
            return node.run_command(module, cmd, **kwargs)
        return run_command

    def run_command(self, module, cmd, **kwargs):
        self.calls.append(list(cmd))
        if cmd[0] == self.conda:
            return getattr(self, 'conda_' + cmd[1])(cmd)
        if cmd[1:3] == ['-m', 'pip']:
            return 0, 'Successfully installed torch-2.13.0\n', ''
        if cmd[1] == '-c':
            if self.smoke_rc:
                return self.smoke_rc, '', samples.NO_TORCH_TRACEBACK
            return 0, '', ''
        raise AssertionError('unexpected command %r' % (cmd,))

    def _make_env(self, prefix, listing):
        os.makedirs(os.path.join(prefix, 'bin'))
        os.makedirs(os.path.join(prefix, 'conda-meta'))
        python = os.path.join(prefix, 'bin', 'python')
        with open(python, 'w') as handle:
            handle.write('#!/bin/sh\n')
        os.chmod(python, 0o755)
        self.listing[os.path.realpath(prefix)] = self.installed or listing

    def conda_env(self, cmd):
        assert cmd[2:4] == ['create', '--json'] and '--prune' not in cmd
        spec_path, prefix = cmd[cmd.index('--file') + 1], cmd[cmd.index('--prefix') + 1]
        assert not os.path.exists(prefix), 'conda env create must never target an existing directory'
        with open(spec_path) as handle:
            spec = handle.read()
        if '9.9.9' in spec:
            if self.leave_partial:
                os.makedirs(os.path.join(prefix, 'conda-meta'))
            return 1, samples.NOT_FOUND_JSON, ''
        self._make_env(prefix, samples.LIST_TRAIN_OLD if 'numpy=2.4.5' in spec else samples.LIST_TRAIN)
        return 0, samples.CREATE_SUCCESS_JSON, ''

    def conda_create(self, cmd):
        prefix, lock = cmd[cmd.index('--prefix') + 1], cmd[cmd.index('--file') + 1]
        assert os.path.basename(lock) == 'explicit.txt'
        with open(lock) as handle:
            assert '@EXPLICIT' in handle.read()
        self._make_env(prefix, samples.LIST_TRAIN)
        return 0, samples.CREATE_SUCCESS_JSON, ''

    def conda_list(self, cmd):
        prefix = os.path.realpath(cmd[cmd.index('--prefix') + 1])
        return 0, self.listing.get(prefix, '[]\n'), ''

    def conda_info(self, cmd):
        return 0, samples.INFO_26, ''

    def mutating_calls(self):
        return [c for c in self.calls if c[0] == self.conda and c[1] in ('env', 'create')]


@pytest.fixture
def node(tmp_path, monkeypatch):
    patch_module_exits(monkeypatch)
    monkeypatch.setattr(conda_env.conda_utils, 'local_subdir', lambda: 'linux-64')
    created = Node(str(tmp_path / 'miniconda3'))
    monkeypatch.setattr(basic.AnsibleModule, 'run_command', created.run_command_method())
    return created


def run(node, check=False, diff=False, **params):
    args = {'name': 'train', 'prefix': node.root, 'spec_content': SPEC_V2, 'spec_file': 'inventories/demo/environment.yml'}
    args.update(params)
    args = dict((k, v) for k, v in args.items() if v is not None)
    if check:
        args['_ansible_check_mode'] = True
    if diff:
        args['_ansible_diff'] = True
    node.calls = []
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as caught:
            conda_env.main()
    result = caught.value.args[0]
    return result


def live_target(node):
    return os.path.realpath(os.path.join(node.root, 'envs', 'train'))


def build_of(node, spec, lock=None):
    return envstore.Layout(node.root, 'train').build_dir(envspec.sha256_bytes(spec), envspec.sha256_bytes(lock) if lock else None)


def test_fresh_build_creates_smokes_checks_and_switches(node):
    result = run(node)
    assert result['changed'] is True and result['action'] == 'build'
    build = build_of(node, SPEC_V2)
    assert result['build'] == build and live_target(node) == build
    assert os.path.islink(os.path.join(node.root, 'envs', 'train'))
    assert os.readlink(os.path.join(node.root, 'envs', 'train')) == os.path.join('.torchfleet', os.path.basename(build))
    kinds = [c[1] if c[0] == node.conda else c[1] for c in node.calls]
    assert kinds == ['env', '-c', 'list']
    assert node.calls[1] == [os.path.join(build, 'bin', 'python'), '-c', 'import torch']
    with open(os.path.join(build, 'conda-meta', 'torchfleet-stamp')) as handle:
        text = handle.read()
    assert json.loads(text) == {'name': 'train', 'spec_sha256': envspec.sha256_bytes(SPEC_V2), 'lock_sha256': None,
                                'collection_version': '0.1.0', 'spec_file': 'inventories/demo/environment.yml'}
    assert text == envstore.stamp_text(json.loads(text))
    # nothing that conda would read as a package record
    assert not [n for n in os.listdir(os.path.join(build, 'conda-meta')) if n.endswith('.json')]
    with open(os.path.join(build, 'conda-meta', 'torchfleet-environment.yml')) as handle:
        assert handle.read() == SPEC_V2
    assert result['previous'] == [] and result['removed'] == []


def test_unchanged_spec_is_ok_without_any_command(node):
    run(node)
    result = run(node)
    assert result['changed'] is False and result['action'] == 'none'
    assert node.calls == []
    assert result['stamp']['spec_sha256'] == envspec.sha256_bytes(SPEC_V2)


def test_new_collection_version_alone_does_not_rebuild(node):
    run(node)
    result = run(node, collection_version='0.2.0')
    assert result['changed'] is False and node.calls == []


def test_changed_spec_builds_beside_and_keeps_previous(node):
    run(node, spec_content=SPEC_V1)
    old = live_target(node)
    result = run(node, diff=True)
    new = build_of(node, SPEC_V2)
    assert result['changed'] is True and result['action'] == 'build'
    assert live_target(node) == new != old
    assert os.path.isdir(old) and result['previous'] == [old]
    assert result['packages'] == {'added': [], 'removed': [], 'changed': {'numpy': {'before': '2.4.5', 'after': '2.4.6'}}}
    assert '-numpy==2.4.5' not in result['diff']['after'] and 'numpy==2.4.5' in result['diff']['before']
    assert 'numpy==2.4.6' in result['diff']['after']
    assert 'torch==2.13.0+cpu' in result['diff']['before']


def test_keep_previous_zero_deletes_old_build(node):
    run(node, spec_content=SPEC_V1)
    old = live_target(node)
    result = run(node, keep_previous=0)
    assert not os.path.exists(old) and result['removed'] == [old] and result['previous'] == []


def test_lowering_keep_previous_prunes_on_a_converged_run(node):
    run(node, spec_content=SPEC_V1)
    old = live_target(node)
    run(node)
    result = run(node, keep_previous=0)
    assert result['changed'] is True and result['action'] == 'prune' and result['removed'] == [old]
    assert node.mutating_calls() == [] and not os.path.exists(old)


def test_smoke_failure_cleans_up_and_keeps_old_env(node):
    run(node, spec_content=SPEC_V1)
    old = live_target(node)
    node.smoke_rc = 1
    result = run(node)
    assert result['failed'] is True and result['rc'] == 1
    assert "No module named 'torch'" in result['msg'] and 'smoke test (import torch)' in result['msg']
    assert result['stderr'] == samples.NO_TORCH_TRACEBACK
    assert not os.path.exists(build_of(node, SPEC_V2))
    assert live_target(node) == old


@pytest.mark.parametrize('leave_partial', [True, False])
def test_missing_package_names_it_and_leaves_nothing_behind(node, leave_partial):
    run(node, spec_content=SPEC_V1)
    old = live_target(node)
    node.leave_partial = leave_partial
    result = run(node, spec_content=SPEC_MISSING)
    assert result['failed'] is True and result['rc'] == 1
    assert 'numpy=9.9.9' in result['msg'] and 'PackagesNotFoundError' in result['msg']
    assert result['error']['packages'] == ['numpy=9.9.9']
    assert result['stdout'] == samples.NOT_FOUND_JSON
    assert not os.path.exists(build_of(node, SPEC_MISSING))
    assert live_target(node) == old
    store = os.path.join(node.root, 'envs', '.torchfleet')
    assert not [n for n in os.listdir(store) if n.startswith('.work-')]


def test_pin_mismatch_fails_the_build(node):
    node.installed = samples.LIST_TRAIN_OLD
    result = run(node)
    assert result['failed'] is True
    assert 'numpy is 2.4.5, the spec pins 2.4.6' in result['msg']
    assert not os.path.exists(build_of(node, SPEC_V2)) and not os.path.lexists(os.path.join(node.root, 'envs', 'train'))


def test_verify_pins_can_be_disabled(node):
    node.installed = samples.LIST_TRAIN_OLD
    assert run(node, verify_pins=False)['changed'] is True


@pytest.mark.parametrize('check_diff', [False, True])
def test_check_mode_changes_nothing(node, check_diff):
    run(node, spec_content=SPEC_V1)
    old = live_target(node)
    before = sorted(os.listdir(os.path.join(node.root, 'envs', '.torchfleet')))
    result = run(node, check=True, diff=check_diff)
    assert result['changed'] is True and result['action'] == 'build'
    assert node.mutating_calls() == [] and [c[1] for c in node.calls] == ['list']
    assert live_target(node) == old
    assert sorted(os.listdir(os.path.join(node.root, 'envs', '.torchfleet'))) == before
    assert ('diff' in result) is check_diff
    assert result['packages']['changed'] == {'numpy': {'before': '2.4.5', 'after': '2.4.6'}}


def test_check_mode_before_miniconda_exists(tmp_path, node):
    os.remove(node.conda)
    result = run(node, check=True, diff=True)
    assert result['changed'] is True and node.calls == []
    assert not os.path.exists(os.path.join(node.root, 'envs'))
    assert result['diff']['before'] == ''


def test_missing_conda_fails_clearly(node):
    os.remove(node.conda)
    result = run(node)
    assert result['failed'] is True and 'conda not found at' in result['msg']


def test_legacy_directory_is_moved_aside_not_deleted(node):
    legacy = os.path.join(node.root, 'envs', 'train')
    os.makedirs(os.path.join(legacy, 'bin'))
    with open(os.path.join(legacy, 'precious.txt'), 'w') as handle:
        handle.write('data')
    result = run(node)
    moved = os.path.join(node.root, 'envs', '.torchfleet', 'train-legacy-1')
    assert result['legacy'] == moved
    assert os.path.isfile(os.path.join(moved, 'precious.txt'))
    assert os.path.islink(legacy) and live_target(node) == build_of(node, SPEC_V2)
    assert result['previous'] == []


def test_interrupted_build_is_discarded_and_rebuilt(node):
    leftover = build_of(node, SPEC_V2)
    os.makedirs(os.path.join(leftover, 'conda-meta'))
    result = run(node)
    assert result['action'] == 'build' and envstore.read_stamp(leftover) is not None


def test_reverting_the_spec_switches_back_without_conda(node):
    run(node, spec_content=SPEC_V1)
    first = live_target(node)
    run(node)
    result = run(node, spec_content=SPEC_V1)
    assert result['changed'] is True and result['action'] == 'switch'
    assert node.mutating_calls() == [] and live_target(node) == first


def test_rollback_is_idempotent_and_documented_target(node):
    run(node, spec_content=SPEC_V1)
    first = live_target(node)
    run(node)
    result = run(node, state='rolled_back', diff=True)
    assert result['changed'] is True and result['action'] == 'rollback' and live_target(node) == first
    assert result['diff']['after'].endswith(first + '\n')
    again = run(node, state='rolled_back')
    assert again['changed'] is False and live_target(node) == first
    assert node.mutating_calls() == []
    forward = run(node)
    assert forward['action'] == 'switch' and live_target(node) == build_of(node, SPEC_V2)


def test_rollback_without_previous_build_fails(node):
    run(node)
    result = run(node, state='rolled_back')
    assert result['failed'] is True and 'no earlier build of train' in result['msg']


def test_absent_removes_everything_and_is_idempotent(node):
    run(node, spec_content=SPEC_V1)
    run(node)
    result = run(node, state='absent')
    assert result['changed'] is True and result['action'] == 'remove'
    assert not os.path.lexists(os.path.join(node.root, 'envs', 'train'))
    assert not [n for n in os.listdir(os.path.join(node.root, 'envs', '.torchfleet')) if n.startswith('train-')]
    assert run(node, state='absent')['changed'] is False


def test_explicit_lock_then_pip_section(node):
    result = run(node, lock_content=EXPLICIT_LOCK)
    build = build_of(node, SPEC_V2, EXPLICIT_LOCK)
    assert result['build'] == build and os.path.basename(build).count('-') == 2
    create, pip = node.calls[0], node.calls[1]
    assert create[1:3] == ['create', '--json'] and create[create.index('--prefix') + 1] == build
    assert pip[:3] == [os.path.join(build, 'bin', 'python'), '-m', 'pip'] and '--no-deps' not in pip
    assert result['stamp']['lock_sha256'] == envspec.sha256_bytes(EXPLICIT_LOCK)
    with open(os.path.join(build, 'conda-meta', 'torchfleet-lock.txt')) as handle:
        assert handle.read() == EXPLICIT_LOCK


def test_conda_lock_renders_explicit_and_pins_pip(node):
    result = run(node, lock_content=CONDA_LOCK_JSON, lock_sha256='a' * 64)
    assert result['changed'] is True and result['stamp']['lock_sha256'] == 'a' * 64
    pip = node.calls[1]
    assert '--no-deps' in pip
    requirements = pip[-1]
    assert not os.path.exists(requirements)  # the work directory is removed afterwards


def test_conda_lock_for_another_platform_fails_before_conda(node, monkeypatch):
    monkeypatch.setattr(conda_env.conda_utils, 'local_subdir', lambda: 'linux-aarch64')
    result = run(node, lock_content=CONDA_LOCK_JSON)
    assert result['failed'] is True and 'covers linux-64, not this node' in result['msg']
    assert node.mutating_calls() == []


def test_expected_from_the_controller_and_smoke_override(node):
    result = run(node, spec_content=SPEC_NO_TORCH, expected={'python': '3.11', 'numpy': '2.4.6'},
                 smoke_test=['import numpy', 'assert numpy.__version__ == "2.4.6"'])
    assert result['changed'] is True
    assert node.calls[1][2] == 'import numpy\nassert numpy.__version__ == "2.4.6"'


def test_default_smoke_without_torch(node):
    run(node, spec_content=SPEC_NO_TORCH)
    assert node.calls[1][2] == 'import sys'


@pytest.mark.parametrize('params, fragment', [
    ({'name': 'other'}, "names the environment 'train' but name='other' was requested"),
    ({'spec_content': 'name: train\ndependencies:\n  - numpy==\n'}, 'environment.yml:3: malformed dependency'),
    ({'keep_previous': -1}, 'keep_previous must be 0 or more'),
    ({'name': 'base'}, 'name must be a plain environment name'),
    ({'lock_content': 'not a lock\n'}, 'neither an explicit lock'),
])
def test_bad_input_fails_before_any_command(node, params, fragment):
    result = run(node, **params)
    assert result['failed'] is True and fragment in result['msg']
    assert node.calls == []


def test_spec_path_on_the_node(node, tmp_path):
    spec = tmp_path / 'environment.yml'
    spec.write_text(SPEC_V2)
    result = run(node, spec_content=None, spec=str(spec), spec_file=None)
    assert result['stamp']['spec_file'] == str(spec)
    assert result['stamp']['spec_sha256'] == envspec.sha256_bytes(SPEC_V2)


def test_occupied_live_path_is_refused(node):
    os.makedirs(os.path.join(node.root, 'envs'))
    with open(os.path.join(node.root, 'envs', 'train'), 'w') as handle:
        handle.write('file')
    result = run(node)
    assert result['failed'] is True and 'neither a directory nor a symlink' in result['msg']
