# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Flows of torchfleet.cluster.conda_env on a temporary Miniconda root.

``run_command`` is answered by a small node model: conda commands return samples of real
conda output (conda_samples) and create the directories real conda would create."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import hashlib
import json
import multiprocessing
import os
import subprocess
import sys
import threading
import time

import pytest

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import envspec, envstore, wheel_bundle
from ansible_collections.torchfleet.cluster.plugins.module_utils._conda.collection_version import COLLECTION_VERSION
from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import env_module
from ansible_collections.torchfleet.cluster.plugins.modules import conda_env
from ansible_collections.torchfleet.cluster.tests.unit.plugins.module_utils import conda_samples as samples
from ansible_collections.torchfleet.cluster.tests.unit.plugins.modules.module_exits import ExitJson, FailJson

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
        self.environs = []
        self.runs_as = []  # the setpriv prefix each command ran under ([] for none)
        self.cwds = []
        self.find_links = []  # what pip would find in PIP_FIND_LINKS while each command runs
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
        prefix = []
        if os.path.basename(cmd[0]) == 'setpriv':
            prefix, cmd = list(cmd[:cmd.index('--') + 1]), cmd[cmd.index('--') + 1:]
        self.runs_as.append(prefix)
        self.cwds.append(kwargs.get('cwd'))
        self.calls.append(list(cmd))
        self.environs.append(dict(kwargs.get('environ_update') or {}))
        links = self.environs[-1].get('PIP_FIND_LINKS')
        self.find_links.append(sorted(os.listdir(links)) if links and os.path.isdir(links) else None)
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
def node(tmp_path, monkeypatch, module_exits):
    monkeypatch.setattr(env_module.conda_utils, 'local_subdir', lambda: 'linux-64')
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
    assert os.readlink(os.path.join(node.root, 'envs', 'train')) == os.path.join('.torchfleet', 'train.d', os.path.basename(build))
    kinds = [c[1] if c[0] == node.conda else c[1] for c in node.calls]
    assert kinds == ['env', '-c', 'list']
    assert node.calls[1] == [os.path.join(build, 'bin', 'python'), '-c', 'import torch']
    with open(os.path.join(build, 'conda-meta', 'torchfleet-stamp')) as handle:
        text = handle.read()
    stamp = json.loads(text)
    built = stamp.pop('packages')
    assert stamp == {'name': 'train', 'spec_sha256': envspec.sha256_bytes(SPEC_V2), 'lock_sha256': None,
                     'collection_version': COLLECTION_VERSION, 'spec_file': 'inventories/demo/environment.yml'}
    assert result['stamp'] == stamp  # the task result leaves the package list out
    # what was built, as the recorded `conda list --json` of the new build reports it
    assert built['numpy'] == {'version': '2.4.6', 'build': 'py311h71ddf71_0', 'channel': 'conda-forge', 'manager': 'conda'}
    assert built['torch'] == {'version': '2.13.0+cpu', 'build': 'pypi_0', 'channel': 'pypi', 'manager': 'pip'}
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


def test_new_collection_version_alone_does_not_rebuild(node, monkeypatch):
    run(node)
    monkeypatch.setattr(env_module, 'COLLECTION_VERSION', '99.0.0')
    result = run(node)
    assert result['changed'] is False and node.calls == []


def test_changed_spec_builds_beside_and_keeps_previous(node):
    run(node, spec_content=SPEC_V1)
    old = live_target(node)
    result = run(node, diff=True)
    new = build_of(node, SPEC_V2)
    assert result['changed'] is True and result['action'] == 'build'
    assert live_target(node) == new != old
    assert os.path.isdir(old) and result['previous'] == [old]
    assert result['packages'] == {'added': [], 'removed': [], 'changed': {'numpy': {'before': '2.4.5', 'after': '=2.4.6'}}}
    assert '-numpy==2.4.5' not in result['diff']['after'] and 'numpy==2.4.5' in result['diff']['before']
    assert 'numpy =2.4.6' in result['diff']['after']  # the pin as conda reads numpy=2.4.6
    assert 'torch==2.13.0+cpu' in result['diff']['before']


def test_keep_previous_zero_deletes_old_build(node):
    run(node, spec_content=SPEC_V1)
    old = live_target(node)
    result = run(node, keep_previous=0)
    assert not os.path.exists(old) and result['removed'] == [old] and result['previous'] == []


def test_a_build_a_running_process_uses_is_never_deleted(node):
    run(node, spec_content=SPEC_V1)
    old = live_target(node)
    job = subprocess.Popen(['sleep', '60'], cwd=old)  # a job started before the switch, still running
    try:
        result = run(node, keep_previous=0)
        assert result['action'] == 'build' and result['removed'] == [] and os.path.isdir(old)
        assert run(node, keep_previous=0)['changed'] is False  # nothing to prune while the job runs
    finally:
        job.kill()
        job.wait()
    result = run(node, keep_previous=0)
    assert result['action'] == 'prune' and result['removed'] == [old] and not os.path.exists(old)


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
    assert 'numpy is 2.4.5, the spec pins =2.4.6' in result['msg']
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
    assert result['packages']['changed'] == {'numpy': {'before': '2.4.5', 'after': '=2.4.6'}}


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
    moved = os.path.join(node.root, 'envs', '.torchfleet', 'train.d', 'legacy-1')
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
    assert result['build'] == build and os.path.basename(build).count('-') == 1
    create, pip = node.calls[0], node.calls[1]
    assert create[1:3] == ['create', '--json'] and create[create.index('--prefix') + 1] == build
    assert pip[:3] == [os.path.join(build, 'bin', 'python'), '-m', 'pip'] and '--no-deps' not in pip
    assert result['stamp']['lock_sha256'] == envspec.sha256_bytes(EXPLICIT_LOCK)
    with open(os.path.join(build, 'conda-meta', 'torchfleet-lock.txt')) as handle:
        assert handle.read() == EXPLICIT_LOCK


def local_channel_lock(tmp_path, numpy_bytes, numpy_md5):
    """An explicit lock of one file:// package (a root-owned local channel) whose file holds numpy_bytes."""
    os.chmod(str(tmp_path), 0o755)
    subdir = tmp_path / 'channel' / 'linux-64'
    subdir.mkdir(parents=True)
    for directory in (tmp_path / 'channel', subdir):
        os.chmod(str(directory), 0o755)
    package = subdir / 'numpy-2.4.6-py311h71ddf71_0.conda'
    package.write_bytes(numpy_bytes)
    return '# platform: linux-64\n@EXPLICIT\nfile://%s#%s\n' % (package, numpy_md5)


@pytest.mark.parametrize('check', [True, False], ids=['check-mode', 'run'])
def test_a_local_package_that_does_not_match_the_lock_stops_before_conda_runs(node, tmp_path, check):
    lock = local_channel_lock(tmp_path, b'tampered numpy\n', 'd7c89558ba9fa0495403155b64376d81')
    result = run(node, check=check, lock_content=lock)
    assert result['failed'] is True and node.calls == []
    assert result['msg'].startswith("train: the lock's local package files do not match it, so nothing was built")
    assert 'numpy-2.4.6-py311h71ddf71_0.conda has md5 %s, the lock says d7c89558ba9fa0495403155b64376d81' % (
        hashlib.md5(b'tampered numpy\n').hexdigest()) in result['msg']  # nosec: the lock's digest kind
    assert not os.path.exists(build_of(node, SPEC_V2, lock)) and not os.path.lexists(os.path.join(node.root, 'envs', 'train'))


def test_a_local_package_that_matches_the_lock_is_built(node, tmp_path):
    content = b'numpy as the channel serves it\n'
    lock = local_channel_lock(tmp_path, content, hashlib.md5(content).hexdigest())  # nosec: the lock's digest kind
    result = run(node, lock_content=lock)
    assert not result.get('failed'), result
    assert result['action'] == 'build' and node.calls[0][1:3] == ['create', '--json']


def test_explicit_lock_with_pip_lines_from_the_controller_needs_no_yaml_on_the_node(node, monkeypatch):
    monkeypatch.setattr(envspec, 'HAS_YAML', False)
    requirements = []
    real_run_command = node.run_command

    def recording(module, cmd, **kwargs):
        if cmd[1:3] == ['-m', 'pip']:
            with open(cmd[-1]) as handle:
                requirements.append(handle.read())
        return real_run_command(module, cmd, **kwargs)
    monkeypatch.setattr(node, 'run_command', recording)
    expected = {'python': '3.11.*', 'numpy': '2.4.6', 'torch': '==2.13.0'}
    result = run(node, lock_content=EXPLICIT_LOCK, expected=expected, pip=['torch==2.13.0'])
    assert result['changed'] is True and result['action'] == 'build'
    assert requirements == ['torch==2.13.0\n']


def test_explicit_lock_with_a_pip_section_and_no_yaml_names_the_way_out(node, monkeypatch):
    monkeypatch.setattr(envspec, 'HAS_YAML', False)
    result = run(node, lock_content=EXPLICIT_LOCK, expected={'numpy': '2.4.6'})
    assert result['failed'] is True and 'PyYAML is missing on the node' in result['msg']
    assert 'pass its lines as pip' in result['msg']


def test_conda_lock_renders_explicit_and_pins_pip(node):
    result = run(node, lock_content=CONDA_LOCK_JSON, lock_sha256='a' * 64)
    assert result['changed'] is True and result['stamp']['lock_sha256'] == 'a' * 64
    pip = node.calls[1]
    assert '--no-deps' in pip
    requirements = pip[-1]
    assert not os.path.exists(requirements)  # the work directory is removed afterwards


def test_conda_lock_for_another_platform_fails_before_conda(node, monkeypatch):
    monkeypatch.setattr(env_module.conda_utils, 'local_subdir', lambda: 'linux-aarch64')
    result = run(node, lock_content=CONDA_LOCK_JSON)
    assert result['failed'] is True and 'covers linux-64, not this node' in result['msg']
    assert node.mutating_calls() == []


def test_expected_from_the_controller_and_smoke_override(node):
    result = run(node, spec_content=SPEC_NO_TORCH, expected={'python': '=3.11', 'numpy': '2.4.6'},
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
    ({'smoke_test_user': 'nosuchuser-tf'}, "train: smoke_test_user 'nosuchuser-tf': no such user on this node"),
    ({'lock_content': EXPLICIT_LOCK, 'lock_sha256': '../../../../etc/' + 'a' * 48}, 'lock_sha256 must be a SHA-256 as 64 hex digits'),
    ({'lock_content': EXPLICIT_LOCK, 'lock_sha256': 'a' * 63}, 'lock_sha256 must be a SHA-256 as 64 hex digits'),
    ({'lock_timeout': -1}, 'lock_timeout must be 0 or more'),
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


# ---------------------------------------------------------------- inputs checked before anything runs

NOBODY = 65534
TWIN = 'train-' + 'a' * 12


def store_listing(node):
    listing = []
    for here, dirs, files in os.walk(os.path.join(node.root, 'envs')):
        listing.extend(os.path.join(here, n) for n in dirs + files)
    return sorted(listing)


def test_unknown_smoke_user_fails_before_building_and_leaves_the_live_env(node):
    run(node, spec_content=SPEC_V1)
    old, before = live_target(node), store_listing(node)
    result = run(node, smoke_test_user='nosuchuser-tf')
    assert result['failed'] is True and "smoke_test_user 'nosuchuser-tf': no such user" in result['msg']
    assert node.calls == [] and live_target(node) == old and store_listing(node) == before


@pytest.mark.parametrize('what, option', [('spec', 'spec'), ('lock', 'lock')])
def test_non_utf8_file_on_the_node_fails_naming_it(node, tmp_path, what, option):
    spec = tmp_path / 'environment.yml'
    spec.write_text(SPEC_V2)
    params = {'spec_content': None, 'spec': str(spec), 'spec_file': None}
    bad = tmp_path / ('bad-' + what)
    body = SPEC_V2 if what == 'spec' else EXPLICIT_LOCK
    bad.write_bytes(body.encode('utf-8').replace(b'numpy', b'num\xe9py', 1))
    params[option] = str(bad)
    result = run(node, **params)
    assert result['failed'] is True
    assert result['msg'].startswith(str(bad) + ': not UTF-8 text (byte 0xe9 at offset ')
    assert node.calls == []


def test_lock_sha256_in_upper_case_is_normalised(node):
    result = run(node, lock_content=CONDA_LOCK_JSON, lock_sha256='A' * 64)
    assert result['stamp']['lock_sha256'] == 'a' * 64
    assert result['build'] == os.path.join(node.root, 'envs', '.torchfleet', 'train.d', '%s-%s' % (
        envspec.sha256_bytes(SPEC_V2)[:12], 'a' * 12))


def test_the_build_stays_root_s_and_only_the_smoke_test_drops_to_its_user(node):
    result = run(node)
    build = result['build']
    for path in (build, os.path.join(build, 'bin', 'python'), os.path.join(node.root, 'envs', 'train')):
        assert os.lstat(path).st_uid == 0, path
    assert [c[1] for c in node.calls] == ['env', '-c', 'list']
    assert node.runs_as[0] == [] and node.runs_as[2] == []  # conda itself
    assert node.runs_as[1][1:3] == ['--reuid=%d' % NOBODY, '--regid=%d' % NOBODY]
    home = node.environs[1]['HOME']
    assert node.cwds[1] == home and os.path.dirname(home) == os.path.dirname(build)
    assert not os.path.exists(home)  # the scratch home is removed after the smoke test
    assert 'CONDA_ALWAYS_COPY' not in node.environs[0]


def test_smoke_test_as_root_when_asked(node):
    run(node, smoke_test_user='root')
    assert node.calls[1][1] == '-c' and node.runs_as[1] == []


# ---------------------------------------------------------------- whose conda runs

def _own(path):
    os.chown(path, NOBODY, NOBODY)
    return path


def _interpreter_owned_by_nobody(node):
    python = os.path.join(node.root, 'bin', 'python3.11')
    with open(python, 'w') as handle:
        handle.write('')
    os.chmod(python, 0o755)
    os.symlink('python3.11', os.path.join(node.root, 'bin', 'python'))
    with open(node.conda, 'w') as handle:
        handle.write('#!%s\nimport sys\n' % os.path.join(node.root, 'bin', 'python'))
    return _own(python)


def _conda_through_a_foreign_directory(node):
    foreign = os.path.join(os.path.dirname(node.root), 'foreign')
    os.makedirs(foreign)
    os.rename(node.conda, os.path.join(foreign, 'conda'))
    os.symlink(os.path.join(foreign, 'conda'), node.conda)
    return _own(foreign)


def _group_writable_by_nogroup(node):
    os.chown(node.conda, 0, NOBODY)
    os.chmod(node.conda, 0o775)
    return node.conda


@pytest.mark.parametrize('make_untrusted, reason', [
    (lambda node: _own(node.conda), 'is owned by nobody'),
    (lambda node: _own(os.path.dirname(node.conda)), 'is owned by nobody'),
    (lambda node: os.chmod(node.conda, 0o757) or node.conda, 'is writable by every user'),
    (_group_writable_by_nogroup, 'is writable by group nogroup'),
    (_interpreter_owned_by_nobody, 'is owned by nobody'),
    (_conda_through_a_foreign_directory, 'is owned by nobody'),
], ids=['file', 'bin-dir', 'world-writable', 'group-writable', 'shebang-interpreter', 'symlinked-dir'])
def test_conda_another_user_can_change_is_not_run(node, make_untrusted, reason):
    culprit = make_untrusted(node)
    result = run(node)
    assert result['failed'] is True and node.calls == []
    assert result['msg'].startswith('refusing to run %s as root: %s %s' % (node.conda, culprit, reason))
    assert result['path'] == culprit
    assert not os.path.lexists(os.path.join(node.root, 'envs', 'train'))


def test_conda_owned_by_the_modules_own_user_runs(node, monkeypatch):
    _own(node.conda)
    monkeypatch.setattr(os, 'geteuid', lambda: NOBODY)
    assert run(node)['changed'] is True


def test_a_store_another_user_can_change_is_refused(node):
    run(node, spec_content=SPEC_V1)
    old = live_target(node)
    envs = _own(os.path.join(node.root, 'envs'))
    result = run(node)
    assert result['failed'] is True and node.calls == []
    assert result['msg'].startswith('refusing to change environments under %s as root: %s is owned by nobody' % (envs, envs))
    assert 'become_user: nobody' in result['msg']
    assert live_target(node) == old


def test_the_plan_refuses_a_prefix_another_user_can_change(node):
    prefix = _own(node.root)
    result = run(node, check=True)
    assert result['failed'] is True and node.calls == []
    assert result['msg'].startswith('refusing to change environments under %s as root: %s is owned by nobody'
                                    % (os.path.join(prefix, 'envs'), prefix))


# ---------------------------------------------------------------- one environment's store is its own

def spec_named(name, spec=SPEC_V2):
    return spec.replace('name: train\n', 'name: %s\n' % name)


def test_name_plus_key_environment_is_untouched_by_prune_rollback_and_removal(node):
    twin = run(node, name=TWIN, spec_content=spec_named(TWIN))
    run(node, name=TWIN, spec_content=spec_named(TWIN, SPEC_V1))
    twin_builds = sorted([twin['build'], live_target_of(node, TWIN)])
    run(node, spec_content=SPEC_V1)
    run(node)
    assert run(node, keep_previous=0)['action'] == 'prune'
    assert run(node, state='rolled_back')['failed'] is True  # nothing of train's own is left to roll back to
    assert run(node, state='absent')['action'] == 'remove'
    assert all(os.path.isdir(b) for b in twin_builds)
    assert run(node, name=TWIN, spec_content=spec_named(TWIN, SPEC_V1))['changed'] is False


def live_target_of(node, name):
    return os.path.realpath(os.path.join(node.root, 'envs', name))


def flat_build(node, spec, name='train'):
    """A build as collection 0.1.0 left it: envs/.torchfleet/<name>-<key>, live."""
    layout = envstore.Layout(node.root, name)
    build = os.path.join(layout.store, '%s-%s' % (name, envspec.sha256_bytes(spec)[:12]))
    node._make_env(build, samples.LIST_TRAIN)
    envstore.record_build(build, envstore.make_stamp(name, envspec.sha256_bytes(spec), None, '0.1.0',
                                                     'inventories/demo/environment.yml'), spec.encode(), None, None)
    os.symlink(os.path.relpath(build, layout.envs), layout.live)
    with open(layout.flat_history_path, 'w') as handle:
        json.dump({'builds': [os.path.basename(build)]}, handle)
    return build


def test_a_store_of_the_flat_layout_is_converged_then_moved_on(node):
    flat = flat_build(node, SPEC_V2)
    assert run(node)['changed'] is False and node.calls == []
    result = run(node, spec_content=SPEC_V1)
    assert result['action'] == 'build' and result['previous'] == [flat]
    assert live_target(node) == build_of(node, SPEC_V1)
    back = run(node)
    assert back['action'] == 'switch' and live_target(node) == flat and node.mutating_calls() == []
    assert run(node, keep_previous=0)['removed'] == [build_of(node, SPEC_V1)]
    run(node, spec_content=SPEC_V1, keep_previous=0)
    assert not os.path.exists(flat)


def test_the_flat_layout_build_of_a_twin_is_not_pruned(node):
    """0.1.0 matched `train-<12 hex>-<12 hex>` as train's: the twin's build with key bbbb."""
    twin_flat = flat_build(node, spec_named(TWIN), TWIN)
    run(node, spec_content=SPEC_V1)
    run(node, keep_previous=0)
    run(node, state='absent')
    assert os.path.isdir(twin_flat) and live_target_of(node, TWIN) == twin_flat


# ---------------------------------------------------------------- concurrency


def _hold_lock(root, seconds, ready):
    with envstore.Layout(root, 'train').locked(0):
        ready.set()
        time.sleep(seconds)


def test_a_run_that_finds_the_lock_held_names_the_holder(node):
    run(node, spec_content=SPEC_V1)
    old = live_target(node)
    ready = multiprocessing.Event()
    holder = multiprocessing.Process(target=_hold_lock, args=(node.root, 3, ready))
    holder.start()
    try:
        assert ready.wait(10)
        result = run(node, lock_timeout=0)
    finally:
        holder.join()
    assert result['failed'] is True and result['holder']['pid'] == holder.pid
    assert 'another run is changing the environment train: pid %d on ' % holder.pid in result['msg']
    assert node.mutating_calls() == [] and live_target(node) == old


def other_run_makes_live(node, spec):
    layout = envstore.Layout(node.root, 'train')
    build = layout.build_dir(envspec.sha256_bytes(spec))
    node._make_env(build, samples.LIST_TRAIN)
    envstore.record_build(build, envstore.make_stamp('train', envspec.sha256_bytes(spec), None, '0.1.0',
                                                     'inventories/demo/environment.yml'), spec.encode(), None, None)
    layout.activate(build)
    return build


def test_the_decision_is_made_after_the_lock_is_taken(node, monkeypatch):
    """While this run waits for the lock, another run makes the same spec live: this run must
    see that, change nothing and above all not delete the build that is now live."""
    real_locked = envstore.Layout.locked
    made = []

    @contextlib.contextmanager
    def locked(self, *args, **kwargs):
        made.append(other_run_makes_live(node, SPEC_V2))
        with real_locked(self, *args, **kwargs):
            yield

    monkeypatch.setattr(envstore.Layout, 'locked', locked)
    result = run(node)
    assert made and live_target(node) == made[0] and envstore.read_stamp(made[0]) is not None
    assert node.mutating_calls() == [] and result['changed'] is False and result['action'] == 'none'


def test_check_mode_takes_no_lock(node, monkeypatch):
    run(node, spec_content=SPEC_V1)

    def locked(self, *args, **kwargs):
        raise AssertionError('check mode took the lock')

    monkeypatch.setattr(envstore.Layout, 'locked', locked)
    assert run(node, check=True)['changed'] is True


FAKE_CONDA = r'''#!%(python)s
"""A conda that takes its time: `env create` makes the prefix, sleeps, then fills it."""
import json, os, sys, time
args = sys.argv[1:]
value = lambda flag: args[args.index(flag) + 1]
if args[:2] == ['env', 'create']:
    prefix = value('--prefix')
    os.makedirs(os.path.join(prefix, 'conda-meta'))
    time.sleep(float(os.environ.get('FAKE_CONDA_SLEEP', '1.5')))
    os.makedirs(os.path.join(prefix, 'bin'))
    os.symlink(sys.executable, os.path.join(prefix, 'bin', 'python'))
    with open(value('--file')) as handle:
        numpy = '2.4.6' if 'numpy=2.4.6' in handle.read() else '2.4.5'
    with open(os.path.join(prefix, 'conda-meta', 'fake-list'), 'w') as handle:
        json.dump([{'name': 'numpy', 'version': numpy, 'build_string': 'py311_0', 'channel': 'conda-forge'},
                   {'name': 'python', 'version': '3.11.13', 'build_string': 'h0_cpython', 'channel': 'conda-forge'}], handle)
    print(json.dumps({'success': True, 'prefix': prefix}))
elif args[0] == 'list':
    path = os.path.join(value('--prefix'), 'conda-meta', 'fake-list')
    print(open(path).read() if os.path.exists(path) else '[]')
else:
    sys.exit(2)
'''
SPEC_SLOW = 'name: train\ndependencies:\n  - python=3.11\n  - numpy=2.4.6\n'


class LiveWatcher(threading.Thread):
    """Looks at envs/train every millisecond: once it exists it must always be a complete, stamped build."""

    def __init__(self, live):
        super(LiveWatcher, self).__init__()
        self.live = live
        self.broken = []
        self.seen = 0
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            if os.path.lexists(self.live):
                self.seen += 1
                stamped = os.path.isfile(os.path.join(self.live, 'conda-meta', 'torchfleet-stamp'))
                if not (stamped and os.access(os.path.join(self.live, 'bin', 'python'), os.X_OK)):
                    self.broken.append(os.path.realpath(self.live))
            time.sleep(0.001)


def module_process(tmp_path, root, tag, spec, **extra):
    args = {'name': 'train', 'prefix': root, 'spec_content': spec, 'smoke_test': ['import sys'],
            'expected': {'numpy': '2.4.6' if 'numpy=2.4.6' in spec else '2.4.5'}}
    args.update(extra)
    args_file = tmp_path / ('args-%s.json' % tag)
    args_file.write_text(json.dumps({'ANSIBLE_MODULE_ARGS': args}))
    collections = conda_env.__file__.split(os.sep + 'ansible_collections' + os.sep, 1)[0]
    env = dict(os.environ, PYTHONPATH=collections, FAKE_CONDA_SLEEP='1.5')
    return subprocess.Popen([sys.executable, conda_env.__file__, str(args_file)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=str(tmp_path))


def result_of(process):
    out, err = process.communicate(timeout=120)
    try:
        return json.loads(out.decode('utf-8').strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise AssertionError('no module result: %s %s' % (out, err))


@pytest.fixture
def slow_node(tmp_path):
    root = tmp_path / 'miniconda3'
    (root / 'bin').mkdir(parents=True)
    (root / 'bin' / 'conda').write_text(FAKE_CONDA % {'python': sys.executable})
    os.chmod(str(root / 'bin' / 'conda'), 0o755)
    return str(root)


@pytest.mark.parametrize('second_spec', [SPEC_SLOW, SPEC_SLOW.replace('numpy=2.4.6', 'numpy=2.4.5')],
                         ids=['same-spec', 'changed-spec'])
def test_two_real_runs_at_once_never_leave_the_live_path_broken(tmp_path, slow_node, second_spec):
    live = os.path.join(slow_node, 'envs', 'train')
    watcher = LiveWatcher(live)
    watcher.start()
    try:
        first = module_process(tmp_path, slow_node, 'first', SPEC_SLOW)
        time.sleep(0.3)
        second = module_process(tmp_path, slow_node, 'second', second_spec)
        results = [result_of(first), result_of(second)]
    finally:
        watcher.stop.set()
        watcher.join()
    assert [r.get('failed', False) for r in results] == [False, False], results
    assert watcher.seen > 0 and watcher.broken == []
    target = os.path.realpath(live)
    stamp = envstore.read_stamp(target)
    assert stamp is not None and os.access(os.path.join(live, 'bin', 'python'), os.X_OK)
    wanted = set(envspec.sha256_bytes(s) for s in (SPEC_SLOW, second_spec))
    assert stamp['spec_sha256'] in wanted
    builds = envstore.Layout(slow_node, 'train').builds()
    assert sorted(envstore.read_stamp(b)['spec_sha256'] for b in builds) == sorted(wanted)
    creates = [c for r in results for c in r['commands'] if c[1:3] == ['env', 'create']]
    assert len(creates) == len(wanted)  # a run that waited for the same spec builds nothing


# ---------------------------------------------------------------- pip packages from the cluster's bundle

TORCH_WHEEL = 'torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl'
FILELOCK_WHEEL = 'filelock-3.20.0-py3-none-any.whl'
BUNDLE_WHEELS = {TORCH_WHEEL: b'PK\x03\x04torch-2.13.0' + b't' * 2048, FILELOCK_WHEEL: b'PK\x03\x04filelock-3.20.0'}


def make_bundle(tmp_path):
    """A bundle as pip_wheelhouse leaves it on the node, and its manifest."""
    download = tmp_path / 'download'
    download.mkdir()
    for name, body in BUNDLE_WHEELS.items():
        (download / name).write_bytes(body)
    directory = tmp_path / 'bundles'
    directory.mkdir(mode=0o755)
    bundle = str(directory / 'train.tar')
    return bundle, wheel_bundle.pack(str(download), bundle)


def work_dirs(node):
    home = envstore.Layout(node.root, 'train').home
    return [n for n in os.listdir(home) if n.startswith('.work-')] if os.path.isdir(home) else []


def check_bundle_environ(node, environ):
    links = environ['PIP_FIND_LINKS']
    assert environ['PIP_NO_INDEX'] == '1'
    home = envstore.Layout(node.root, 'train').home
    assert os.path.basename(links) == 'wheels' and os.path.dirname(os.path.dirname(links)) == home
    assert os.path.basename(os.path.dirname(links)).startswith('.work-')


def test_a_build_with_a_bundle_offers_only_its_verified_files_to_pip(node, tmp_path):
    bundle, files = make_bundle(tmp_path)
    result = run(node, pip_bundle=bundle, pip_bundle_files=files, environment={'CONDA_OVERRIDE_CUDA': '12.4'})
    assert result['changed'] is True and result['action'] == 'build', result
    assert result['pip_bundle_files'] == sorted(BUNDLE_WHEELS)
    assert node.calls[0][1:3] == ['env', 'create']
    check_bundle_environ(node, node.environs[0])
    assert node.environs[0]['CONDA_OVERRIDE_CUDA'] == '12.4'
    assert node.find_links[0] == sorted(BUNDLE_WHEELS)  # unpacked before conda (and its pip) ran
    assert work_dirs(node) == []  # the unpacked wheels go with the work directory
    assert live_target(node) == build_of(node, SPEC_V2)


def test_the_lock_paths_pip_install_uses_the_bundle(node, tmp_path):
    bundle, files = make_bundle(tmp_path)
    result = run(node, lock_content=EXPLICIT_LOCK, pip_bundle=bundle, pip_bundle_files=files,
                 environment={'PIP_INDEX_URL': 'https://mirror.invalid/simple'})
    assert result['changed'] is True and result['pip_bundle_files'] == sorted(BUNDLE_WHEELS)
    create, pip = node.calls[0], node.calls[1]
    assert create[1:3] == ['create', '--json'] and pip[1:4] == ['-m', 'pip', 'install']
    for index in (0, 1):
        check_bundle_environ(node, node.environs[index])
        assert node.find_links[index] == sorted(BUNDLE_WHEELS)
    assert node.environs[1]['PIP_INDEX_URL'] == 'https://mirror.invalid/simple'  # the user's environment, bundle on top


def _tamper(bundle, files):
    other = os.path.join(os.path.dirname(bundle), 'retampered')
    os.mkdir(other)
    for entry in files:
        with open(os.path.join(other, entry['name']), 'wb') as handle:
            handle.write(b'PK\x03\x04 evil ' + entry['name'].encode())
    wheel_bundle.pack(other, bundle)
    return files, '%s in the bundle has SHA-256 ' % FILELOCK_WHEEL


def _short_manifest(bundle, files):
    return [e for e in files if e['name'] != TORCH_WHEEL], 'the bundle holds %s, which its manifest does not list' % TORCH_WHEEL


def _long_manifest(bundle, files):
    extra = dict(name='six-1.17.0-py2.py3-none-any.whl', sha256='0' * 64, size=1)
    return files + [extra], 'the bundle lacks six-1.17.0-py2.py3-none-any.whl'


def _symlinked_bundle(bundle, files):
    real = bundle + '.real'
    os.rename(bundle, real)
    os.symlink(real, bundle)
    return files, 'cannot read the bundle %s: ' % bundle


def _missing_bundle(bundle, files):
    os.remove(bundle)
    return files, 'cannot read the bundle %s: ' % bundle


BAD_BUNDLES = [
    dict(id='tampered-file', make=_tamper),
    dict(id='file-not-in-manifest', make=_short_manifest),
    dict(id='manifest-file-not-in-bundle', make=_long_manifest),
    dict(id='bundle-is-a-symlink', make=_symlinked_bundle),
    dict(id='bundle-missing', make=_missing_bundle),
]


@pytest.mark.parametrize('case', BAD_BUNDLES, ids=[case['id'] for case in BAD_BUNDLES])
def test_a_bundle_that_fails_verification_fails_the_build_before_conda(node, tmp_path, case):
    run(node, spec_content=SPEC_V1)
    old, before = live_target(node), store_listing(node)
    bundle, files = make_bundle(tmp_path)
    files, fragment = case['make'](bundle, files)
    result = run(node, pip_bundle=bundle, pip_bundle_files=files)
    assert result['failed'] is True
    assert result['msg'].startswith('train: the pip bundle %s was not used: ' % bundle), result['msg']
    assert fragment in result['msg']
    assert node.mutating_calls() == [] and not [c for c in node.calls if c[0] != node.conda]
    assert live_target(node) == old and store_listing(node) == before
    assert not os.path.exists(build_of(node, SPEC_V2)) and work_dirs(node) == []
    assert result['live_untouched'] == os.path.join(node.root, 'envs', 'train') and 'pip_bundle_files' not in result


def test_a_bundle_in_a_directory_another_user_can_change_is_refused(node, tmp_path):
    bundle, files = make_bundle(tmp_path)
    os.chmod(os.path.dirname(bundle), 0o777)
    result = run(node, pip_bundle=bundle, pip_bundle_files=files)
    assert result['failed'] is True
    assert result['msg'].startswith('refusing to install from %s as root: %s is writable by every user'
                                    % (bundle, os.path.dirname(bundle)))
    assert node.mutating_calls() == [] and not os.path.lexists(os.path.join(node.root, 'envs', 'train'))
    assert work_dirs(node) == []


def test_a_bundle_file_of_another_user_in_a_trusted_directory_is_used(node, tmp_path):
    """As documented: the file itself may belong to the user who copied it; it is verified file by file."""
    bundle, files = make_bundle(tmp_path)
    os.chown(bundle, NOBODY, NOBODY)
    assert run(node, pip_bundle=bundle, pip_bundle_files=files)['pip_bundle_files'] == sorted(BUNDLE_WHEELS)


@pytest.mark.parametrize('params', [
    {'pip_bundle': '/opt/miniconda3/envs/.torchfleet/wheels/train.tar'},
    {'pip_bundle_files': [{'name': TORCH_WHEEL, 'sha256': '0' * 64}]},
], ids=['bundle-without-files', 'files-without-bundle'])
def test_bundle_and_its_manifest_are_required_together(node, params):
    result = run(node, **params)
    assert result['failed'] is True
    assert result['msg'] == 'parameters are required together: pip_bundle, pip_bundle_files'
    assert node.calls == []


def _converged(node):
    run(node)


def _kept_build(node):
    run(node)
    run(node, spec_content=SPEC_V1)


@pytest.mark.parametrize('prepare, action, check', [
    (_converged, 'none', False),
    (_kept_build, 'switch', False),
    (_converged, 'none', True),
    (_kept_build, 'switch', True),
], ids=['converged', 'switch-to-kept-build', 'converged-check-mode', 'switch-check-mode'])
def test_a_run_that_builds_nothing_does_not_read_the_bundle(node, tmp_path, monkeypatch, prepare, action, check):
    prepare(node)

    def unpack_verified(*args):
        raise AssertionError('the bundle was read')

    monkeypatch.setattr(wheel_bundle, 'unpack_verified', unpack_verified)
    missing = str(tmp_path / 'no-such-dir' / 'train.tar')
    result = run(node, check=check, pip_bundle=missing, pip_bundle_files=[{'name': TORCH_WHEEL, 'sha256': '0' * 64}])
    assert result.get('failed') is not True, result
    assert result['action'] == action and result['changed'] is (action != 'none')
    assert node.mutating_calls() == [] and 'pip_bundle_files' not in result
    if action == 'none':
        assert node.calls == []
