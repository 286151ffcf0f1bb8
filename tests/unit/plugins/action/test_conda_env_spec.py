# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller-side validation action: a bad spec fails the play naming file and line."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
from unittest.mock import MagicMock

import pytest

from ansible.errors import AnsibleActionFail
from ansible.parsing.dataloader import DataLoader

from ansible_collections.torchfleet.cluster.plugins.action.conda_env_spec import ActionModule
from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import envspec
from ansible_collections.torchfleet.cluster.tests.unit.plugins.module_utils import spec_samples as cases

SPEC = cases.DEMO


def run_action(tmp_path, **args):
    task = MagicMock()
    task.args = args
    task.async_val = 0
    task.check_mode = False
    task.get_search_path.return_value = [str(tmp_path)]
    connection = MagicMock()
    connection._shell.tmpdir = None
    action = ActionModule(task, connection, MagicMock(), loader=DataLoader(), templar=None, shared_loader_obj=None)
    return action.run(task_vars={})


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text.encode('utf-8'))
    return str(path)


def test_valid_spec_returns_content_digest_and_pins(tmp_path):
    path = write(tmp_path, 'environment.yml', SPEC)
    result = run_action(tmp_path, path=path)
    assert result['changed'] is False
    assert result['name'] == 'train'
    assert result['content'] == SPEC
    assert result['spec_sha256'] == envspec.sha256_bytes(SPEC)
    assert result['expected'] == {'python': '=3.11', 'pip': None, 'numpy': '=2.4.6', 'torch': '==2.13.0'}
    assert result['dependencies'] == ['python=3.11', 'pip', 'numpy=2.4.6']
    assert result['pip'] == ['torch==2.13.0']
    assert result['smoke_test'] == ['import torch']
    assert result['lock'] is None


def test_relative_path_is_found_in_the_search_path(tmp_path):
    (tmp_path / 'files').mkdir()
    write(tmp_path / 'files', 'environment.yml', SPEC)
    result = run_action(tmp_path, path='environment.yml')
    assert result['spec_file'] == 'environment.yml' and result['path'].endswith('files/environment.yml')


@pytest.mark.parametrize('case, text, line, fragment', cases.INVALID_SPECS, ids=[c[0] for c in cases.INVALID_SPECS])
def test_invalid_spec_fails_with_file_and_line(tmp_path, case, text, line, fragment):
    path = write(tmp_path, 'environment.yml', text)
    with pytest.raises(AnsibleActionFail) as caught:
        run_action(tmp_path, path=path)
    assert str(caught.value).startswith('%s:%d: ' % (path, line))
    assert fragment in str(caught.value)


def test_missing_file(tmp_path):
    with pytest.raises(AnsibleActionFail) as caught:
        run_action(tmp_path, path=str(tmp_path / 'nope.yml'))
    assert 'nope.yml not found on the controller' in str(caught.value)


def test_name_must_match(tmp_path):
    path = write(tmp_path, 'environment.yml', SPEC)
    with pytest.raises(AnsibleActionFail) as caught:
        run_action(tmp_path, path=path, name='eval')
    assert "named 'train', but 'eval' was expected" in str(caught.value)


def test_explicit_lock_pins_and_pip_section(tmp_path):
    spec = write(tmp_path, 'environment.yml', SPEC)
    lock = write(tmp_path, 'train.explicit.txt', cases.EXPLICIT)
    result = run_action(tmp_path, path=spec, lock=lock)
    assert result['lock']['kind'] == 'explicit'
    assert result['lock']['sha256'] == envspec.sha256_bytes(cases.EXPLICIT)
    assert result['lock']['content'] == cases.EXPLICIT
    assert result['expected'] == {'_libgcc_mutex': '0.1', 'python': '3.11.13', 'numpy': '2.4.6', 'pip': '25.2', 'torch': '==2.13.0'}


def test_conda_lock_is_handed_over_as_json(tmp_path):
    spec = write(tmp_path, 'environment.yml', SPEC)
    lock = write(tmp_path, 'conda-lock.yml', cases.CONDA_LOCK)
    result = run_action(tmp_path, path=spec, lock=lock)
    assert result['lock']['kind'] == 'conda-lock'
    assert result['lock']['sha256'] == envspec.sha256_bytes(cases.CONDA_LOCK)
    data = json.loads(result['lock']['content'])
    assert envspec.parse_lock(result['lock']['content'])['packages'] == envspec.parse_lock(cases.CONDA_LOCK)['packages']
    assert data['metadata']['platforms'] == ['linux-64', 'linux-aarch64']
    assert result['expected'] == {'_libgcc_mutex': '0.1', 'numpy': '2.4.6', 'torch': '2.13.0'}


def test_bad_lock_fails_with_line(tmp_path):
    spec = write(tmp_path, 'environment.yml', SPEC)
    lock = write(tmp_path, 'lock.txt', '@EXPLICIT\nnumpy=2.4.6\n')
    with pytest.raises(AnsibleActionFail) as caught:
        run_action(tmp_path, path=spec, lock=lock)
    assert str(caught.value).startswith('%s:2: not a package URL' % lock)


@pytest.mark.parametrize('which', ['spec', 'lock'])
def test_a_file_that_is_not_utf8_fails_naming_it(tmp_path, which):
    spec = write(tmp_path, 'environment.yml', SPEC)
    lock = write(tmp_path, 'lock.txt', cases.EXPLICIT)
    bad = spec if which == 'spec' else lock
    with open(bad, 'rb') as handle:
        data = handle.read()
    with open(bad, 'wb') as handle:
        handle.write(data.replace(b'numpy', b'num\xffpy', 1))
    with pytest.raises(AnsibleActionFail) as caught:
        run_action(tmp_path, path=spec, lock=lock)
    assert str(caught.value).startswith('%s: not UTF-8 text (byte 0xff at offset ' % bad)
