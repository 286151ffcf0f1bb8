# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""environment.yml and lock validation: every bad input names the file and the line."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import envspec
from ansible_collections.torchfleet.cluster.tests.unit.plugins.module_utils.spec_samples import (
    CONDA_LOCK, DEMO, EXPLICIT, INVALID_SPECS)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))


@pytest.mark.parametrize('case, text, line, fragment', INVALID_SPECS, ids=[c[0] for c in INVALID_SPECS])
def test_invalid_specs_name_file_and_line(case, text, line, fragment):
    with pytest.raises(envspec.SpecError) as caught:
        envspec.parse_spec(text.encode('utf-8'), 'inventories/x/environment.yml')
    assert caught.value.line == line, case
    assert fragment in str(caught.value)
    assert str(caught.value).startswith('inventories/x/environment.yml:%d: ' % line)


def test_demo_spec():
    spec = envspec.parse_spec(DEMO, 'environment.yml')
    assert spec['name'] == 'train'
    assert spec['channels'] == ['conda-forge']
    assert [d['spec'] for d in spec['dependencies']] == ['python=3.11', 'pip', 'numpy=2.4.6']
    assert [r['line'] for r in spec['pip']] == ['torch==2.13.0']
    # conda's name=V is fuzzy (=V, a prefix), pip's == exact: the pins are match-spec constraints (module_utils.matchspec)
    assert envspec.expected_pins(spec) == {'python': '=3.11', 'pip': None, 'numpy': '=2.4.6', 'torch': '==2.13.0'}
    assert envspec.default_smoke_test(envspec.expected_pins(spec)) == ['import torch']


def test_prefix_key_is_a_warning():
    spec = envspec.parse_spec('name: t\nprefix: /elsewhere\ndependencies: [pip]\n', 'e.yml')
    assert spec['warnings'] == ["e.yml: 'prefix' is ignored; the environment is built under the Miniconda root"]


def test_variables_and_platforms():
    spec = envspec.parse_spec('name: t\nplatforms: [linux-64]\nvariables:\n  OMP_NUM_THREADS: 4\ndependencies: [pip]\n')
    assert spec['variables'] == {'OMP_NUM_THREADS': '4'}
    assert spec['platforms'] == ['linux-64']


@pytest.mark.parametrize('path', ['environments/demo.yml', 'environments/example.yml'])
def test_shipped_specs_are_valid(path):
    with open(os.path.join(ROOT, path), 'rb') as handle:
        spec = envspec.parse_spec(handle.read(), path)
    pins = envspec.expected_pins(spec)
    assert spec['name'] == 'train'
    assert envspec.needs_torch(pins)


def test_example_spec_uses_conda_forge_cuda_build():
    with open(os.path.join(ROOT, 'environments/example.yml'), 'rb') as handle:
        pins = envspec.expected_pins(envspec.parse_spec(handle.read()))
    assert pins['pytorch'] == pins['pytorch-gpu'] == '=2.13.0'
    assert 'cuda-version' in pins


@pytest.mark.parametrize('text, name, op, version, build, channel, exact', [
    ('python=3.11', 'python', '=', '3.11', None, None, '3.11'),
    ('numpy==2.4.6', 'numpy', '==', '2.4.6', None, None, '2.4.6'),
    ('numpy 2.4.6', 'numpy', '==', '2.4.6', None, None, '2.4.6'),
    ('pytorch=2.13.0=cuda129*', 'pytorch', '=', '2.13.0', 'cuda129*', None, '2.13.0'),
    ('conda-forge::pytorch-gpu=2.13.0', 'pytorch-gpu', '=', '2.13.0', None, 'conda-forge', '2.13.0'),
    ('nvidia/label/cuda-12.9.0::cuda-toolkit', 'cuda-toolkit', '', None, None, 'nvidia/label/cuda-12.9.0', None),
    ('numpy>=1.26,<3', 'numpy', '>=', '1.26,<3', None, None, None),
    ('python 3.11.* *_cpython', 'python', '', '3.11.*', '*_cpython', None, None),
    ('python=3.11.*', 'python', '=', '3.11.*', None, None, None),
    ("numpy[version='>=1.26']", 'numpy', '', '>=1.26', None, None, None),
    ('numpy[version=2.4.6]', 'numpy', '==', '2.4.6', None, None, '2.4.6'),
    ('libblas=*=*mkl', 'libblas', '=', '*', '*mkl', None, None),
    ('pip', 'pip', '', None, None, None, None),
])
def test_conda_dependencies(text, name, op, version, build, channel, exact):
    dep = envspec.parse_conda_dep(text)
    assert (dep['name'], dep['op'], dep['version'], dep['build'], dep['channel']) == (name, op, version, build, channel)
    assert envspec.exact_version(dep) == exact


@pytest.mark.parametrize('text', ['numpy==', '=1.2', 'numpy>=', 'num py py py', 'numpy=1.2=b=x', 'numpy@1.2', '', '  ', 'numpy[version]'])
def test_malformed_conda_dependencies(text):
    assert envspec.parse_conda_dep(text) is None


@pytest.mark.parametrize('text, name, exact', [
    ('torch==2.13.0', 'torch', '2.13.0'),
    ('torch===2.13.0', 'torch', '2.13.0'),
    ('torch', 'torch', None),
    ('torch>=2,<3', 'torch', None),
    ('requests[socks]==2.31.0', 'requests', '2.31.0'),
    ('numpy; python_version > "3"', 'numpy', None),
    ('pkg @ https://mirror.invalid/pkg-1.0-py3-none-any.whl', 'pkg', None),
    ('--extra-index-url https://mirror.invalid/whl/cu129', None, None),
    ('-r requirements.txt', None, None),
    ('git+https://github.com/pytorch/vision.git', None, None),
])
def test_pip_requirements(text, name, exact):
    req = envspec.parse_pip_req(text)
    assert req['name'] == name
    assert envspec.exact_version(req) == exact


@pytest.mark.parametrize('text', ['torch==', 'torch =2', '', '==2.0', 'torch @ not-a-url'])
def test_malformed_pip_requirements(text):
    assert envspec.parse_pip_req(text) is None


@pytest.mark.parametrize('pin, actual, ok', [
    ('2.4.6', '2.4.6', True),
    ('3.11', '3.11.13', False),  # a bare version is exact in conda
    ('=3.11', '3.11.13', True),
    ('==2.13', '2.13.1', False),  # torch==2.13 at build time
    ('==2.4.6', '2.4.6.1', False),
    ('==2.13', '2.13.0', True),
    ('2.13.0', '2.13.0+cpu', True),
    ('2.13.0+cu129', '2.13.0+cpu', False),
    ('2.4.6', '2.4.61', False),
    ('2.4.6', '2.4.5', False),
    (None, '1.0', True),
    (None, None, False),
    ('1.0', None, False),
])
def test_version_matches(pin, actual, ok):
    assert envspec.version_matches(pin, actual) is ok


def test_pip_pin_wins_and_names_are_normalized():
    spec = envspec.parse_spec('name: t\ndependencies:\n  - pip\n  - PyYAML\n  - pip:\n      - PyYAML==6.0.2\n      - typing_extensions==4.14.1\n')
    assert envspec.expected_pins(spec) == {'pip': None, 'pyyaml': '==6.0.2', 'typing-extensions': '==4.14.1'}


def test_no_torch_smoke_default():
    assert envspec.default_smoke_test({'numpy': '2.4.6'}) == ['import sys']


def test_sha256_helpers(tmp_path):
    path = tmp_path / 'environment.yml'
    path.write_bytes(DEMO.encode('utf-8'))
    assert envspec.sha256_file(str(path)) == envspec.sha256_bytes(DEMO) == envspec.sha256_bytes(DEMO.encode('utf-8'))
    assert len(envspec.sha256_bytes(b'')) == 64


@pytest.mark.parametrize('text, kind', [
    (EXPLICIT, 'explicit'),
    (CONDA_LOCK, 'conda-lock'),
    (json.dumps({'version': 1, 'metadata': {}, 'package': []}), 'conda-lock'),
    (DEMO, None),
    ('', None),
])
def test_lock_kind(text, kind):
    assert envspec.lock_kind(text) == kind


def test_parse_explicit():
    lock = envspec.parse_lock(EXPLICIT, 'train.txt')
    assert lock['kind'] == 'explicit'
    assert lock['platforms'] == ['linux-64']
    assert [(p['name'], p['version'], p['build']) for p in lock['packages']] == [
        ('_libgcc_mutex', '0.1', 'conda_forge'), ('python', '3.11.13', 'h9e4cc4f_0_cpython'),
        ('numpy', '2.4.6', 'py311h71ddf71_0'), ('pip', '25.2', 'pyh8b19718_0')]
    assert lock['packages'][0]['md5'] == 'd7c89558ba9fa0495403155b64376d81'
    assert lock['packages'][2]['sha256'].startswith('4d705a82')
    assert envspec.lock_pins(lock) == {'_libgcc_mutex': '0.1', 'python': '3.11.13', 'numpy': '2.4.6', 'pip': '25.2'}


@pytest.mark.parametrize('text, line, fragment', [
    ('https://mirror.invalid/x/numpy-2.4.6-0.conda\n@EXPLICIT\n', 1, 'package line before the @EXPLICIT marker'),
    ('@EXPLICIT\n', 1, 'lists no packages'),
    ('# platform: linux-64\n@EXPLICIT\nnumpy=2.4.6\n', 3, 'not a package URL'),
    ('@EXPLICIT\nhttps://mirror.invalid/x/numpy.conda\n', 2, 'not a package URL'),
    ('@EXPLICIT\nhttps://mirror.invalid/x/numpy-2.4.6-0.conda#nothex\n', 2, 'not a package URL'),
    ('@EXPLICIT\nhttps://mirror.invalid/x/python-3.11.13-h_0.conda#d41d8cd98f00b204e9800998ecf8427e\n', 2,
     'package python carries the digest of an empty file'),
    ('@EXPLICIT\nhttps://mirror.invalid/x/python-3.11.13-h_0.conda'
     '#e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n', 2, 'digest of an empty file'),
])
def test_bad_explicit_locks(text, line, fragment):
    with pytest.raises(envspec.SpecError) as caught:
        envspec.parse_explicit(text, 'lock.txt')
    assert caught.value.line == line
    assert fragment in str(caught.value)


def test_parse_conda_lock_yaml_and_json_agree():
    lock = envspec.parse_lock(CONDA_LOCK, 'conda-lock.yml')
    assert lock['kind'] == 'conda-lock'
    assert lock['platforms'] == ['linux-64', 'linux-aarch64']
    as_json = json.dumps({'version': 1, 'metadata': {'platforms': lock['platforms']},
                          'package': [{'name': p['name'], 'version': p['version'], 'manager': p['manager'],
                                       'platform': p['platform'], 'url': p['url'],
                                       'hash': {k: p[k] for k in ('md5', 'sha256') if p[k]},
                                       'category': p['category'], 'optional': p['optional']} for p in lock['packages']]})
    assert envspec.parse_lock(as_json)['packages'] == lock['packages']


def test_conda_lock_pins_per_platform_skip_optional():
    lock = envspec.parse_lock(CONDA_LOCK)
    assert envspec.lock_pins(lock, 'linux-64') == {'_libgcc_mutex': '0.1', 'numpy': '2.4.6', 'torch': '2.13.0'}
    assert envspec.lock_pins(lock, 'linux-aarch64') == {'numpy': '2.4.6'}


def test_render_explicit_and_pip_lines():
    lock = envspec.parse_lock(CONDA_LOCK)
    explicit = envspec.render_explicit(lock, 'linux-64')
    assert explicit.splitlines() == [
        '# platform: linux-64', '@EXPLICIT',
        'https://mirror.invalid/conda-forge/linux-64/_libgcc_mutex-0.1-conda_forge.tar.bz2'
        '#sha256:fe51de6107f9edc7aa4f786a70f4a883943bc9d39b3bb7307c04c41410990726',
        'https://mirror.invalid/conda-forge/linux-64/numpy-2.4.6-py311h71ddf71_0.conda'
        '#sha256:81c74d38c80345e195106dc3a5b4063b61f2209402bf9f6c7e2abadef4f544a3']
    # the rendering is itself a valid explicit lock
    assert envspec.lock_pins(envspec.parse_explicit(explicit)) == {'_libgcc_mutex': '0.1', 'numpy': '2.4.6'}
    assert envspec.pip_lock_lines(lock, 'linux-64') == [
        'torch @ https://mirror.invalid/packages/torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl'
        '#sha256=92d6037539857d8206b8f6ae472e8b77db8058fec5937a1ef3f54304089edbb9']


@pytest.mark.parametrize('text, fragment', [
    ('metadata: {}\npackage: {}\n', 'not a conda-lock file'),
    ('version: 2\nmetadata: {}\npackage: []\n', 'unsupported conda-lock file version 2'),
    ('metadata: {}\npackage:\n- name: x\n', 'package entry 1 lacks'),
    ('metadata: {}\npackage:\n- {name: x, version: 1, manager: npm, platform: linux-64, url: u}\n', "unknown manager 'npm'"),
    ('{"metadata": {}, "package": [', 'invalid JSON'),
])
def test_bad_conda_locks(text, fragment):
    with pytest.raises(envspec.SpecError) as caught:
        envspec.parse_conda_lock(text, 'conda-lock.yml')
    assert fragment in str(caught.value)


def test_neither_lock_kind():
    with pytest.raises(envspec.SpecError) as caught:
        envspec.parse_lock('numpy=2.4.6\n', 'lock.txt')
    assert 'neither an explicit lock' in str(caught.value)


@pytest.mark.parametrize('parse', [envspec.parse_spec, envspec.parse_lock, envspec.parse_explicit,
                                   envspec.parse_conda_lock, envspec.lock_kind])
def test_bytes_that_are_not_utf8_name_the_file(parse):
    with pytest.raises(envspec.SpecError) as caught:
        parse(DEMO.encode('utf-8') + b'\n# caf\xe9\n', 'envs/train.yml')
    offset = len(DEMO.encode('utf-8')) + 6
    assert str(caught.value) == 'envs/train.yml: not UTF-8 text (byte 0xe9 at offset %d); save the file as UTF-8' % offset


# `conda list --explicit --sha256` as real conda writes it: PrefixData.iter_records_sorted
# (dependency order, python before what needs it) and the bare digest after '#'
# (conda/cli/main_list.py print_explicit, conda/models/prefix_graph.py).
EXPLICIT_DEPENDENCY_ORDER = (
    '# platform: linux-64\n@EXPLICIT\n'
    'https://mirror.invalid/conda-forge/linux-64/_libgcc_mutex-0.1-conda_forge.tar.bz2'
    '#0c9e7a3a2b0fb1c3fbb7b2e1f3a0e6a3f36e2b5d3c0f1d2e3a4b5c6d7e8f9a0b\n'
    'https://mirror.invalid/conda-forge/linux-64/python-3.11.13-h9e4cc4f_0_cpython.conda'
    '#1d0b1e2c3a4f5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c\n'
    'https://mirror.invalid/conda-forge/noarch/pip-25.2-pyh8b19718_0.conda'
    '#2e1c2f3d4b5a6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d\n'
    'https://mirror.invalid/conda-forge/linux-64/numpy-2.4.6-py311h71ddf71_0.conda'
    '#4d705a82c554d1abb80aedd0593e0abde54f71b7a5c87492c750c9759b7706fd\n'
)


def test_explicit_lock_meaning_does_not_depend_on_line_order():
    real = envspec.parse_explicit(EXPLICIT_DEPENDENCY_ORDER, 'real.txt')
    header, body = EXPLICIT_DEPENDENCY_ORDER.split('@EXPLICIT\n')
    by_name = envspec.parse_explicit(header + '@EXPLICIT\n' + ''.join(sorted(body.splitlines(True))), 'sorted.txt')
    assert real['packages'][1]['name'] == 'python' and by_name['packages'][0]['name'] != 'python'
    assert envspec.lock_pins(real) == envspec.lock_pins(by_name)
    assert sorted(p['sha256'] for p in real['packages']) == sorted(p['sha256'] for p in by_name['packages'])
    assert real['packages'][3]['sha256'].startswith('4d705a82') and real['packages'][3]['md5'] is None
