# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Data-driven tests of torchfleet.cluster.torch_facts.

``run_command`` answers are the recorded real probe runs and the GPU-node shapes in
tests/unit/plugins/module_utils/test_torch_probe_recordings.py; one test runs the module for real.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import hashlib
import json
import os
import stat
import sys

import pytest

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.torchfleet.cluster.plugins.module_utils._probe import torch_probe
from ansible_collections.torchfleet.cluster.plugins.module_utils._probe import torch_module
from ansible_collections.torchfleet.cluster.plugins.modules import torch_facts
from ansible_collections.torchfleet.cluster.tests.unit.plugins.module_utils import test_torch_probe_recordings as rec
from ansible_collections.torchfleet.cluster.tests.unit.plugins.module_utils.test_torch_probe_real import can_import_torch
from ansible_collections.torchfleet.cluster.tests.unit.plugins.modules.module_exits import ExitJson, FailJson

TIMEOUT_BIN = '/usr/bin/timeout'


class Node(object):
    """What the module sees of the node: run_command answers, PATH lookups, warnings."""

    def __init__(self, run=None, timeout_bin=TIMEOUT_BIN, path=None):
        self.run = run
        self.timeout_bin = timeout_bin
        self.path = path or {}
        self.calls = []
        self.warnings = []

    def run_command(self, args, **kwargs):
        self.calls.append((args, kwargs))
        if isinstance(self.run, Exception):
            raise self.run
        return self.run

    def get_bin_path(self, name, *args, **kwargs):
        return self.timeout_bin if name == 'timeout' else self.path.get(name)

    def warn(self, msg, **kwargs):
        self.warnings.append(msg)


@pytest.fixture
def node(monkeypatch, module_exits):
    state = Node()
    # bound methods of the Node: AnsibleModule instances call them without rebinding
    monkeypatch.setattr(basic.AnsibleModule, 'run_command', state.run_command)
    monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path', state.get_bin_path)
    monkeypatch.setattr(basic.AnsibleModule, 'warn', state.warn)
    return state


def interpreter(tmp_path, relative='miniconda3/envs/train/bin/python'):
    path = tmp_path / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('#!/bin/sh\nexit 99\n')
    path.chmod(stat.S_IRWXU)
    return str(path)


def run_module(params, expect=ExitJson):
    with patch_module_args(params):
        with pytest.raises(expect) as caught:
            torch_facts.main()
    return caught.value.args[0]


def lookup(facts, dotted):
    value = facts
    for key in dotted.split('.'):
        value = value[int(key)] if isinstance(value, list) else value[key]
    return value


CPU_DISTRIBUTED = {'available': True, 'gloo': True, 'nccl': False, 'mpi': False}
GPU_DISTRIBUTED = {'available': True, 'gloo': True, 'nccl': True, 'mpi': False}
H200_FACTS = {
    'version': '2.8.0+cu128', 'cuda': '12.8', 'cudnn': '9.10.2', 'nccl': '2.27.3', 'python': '3.11.13',
    'cuda_available': True, 'gpu_count': 8, 'driver': rec.H200_DRIVER, 'gpus': rec.H200_GPUS,
    'distributed': GPU_DISTRIBUTED,
    'env.name': 'train', 'env.prefix': '/opt/miniconda3/envs/train', 'env.spec_sha256': rec.STAMP['spec_sha256'],
    'env.stamp': rec.STAMP, 'env.packages.torch': '2.8.0+cu128', 'env.packages.numpy': '2.3.2',
    'env.packages_sha256': hashlib.sha256(rec.H200_PACKAGE_LINES.encode('utf-8')).hexdigest(),
}

SUCCESS_CASES = [
    dict(id='venv torch 2.13.0 cpu (recorded)', run=rec.recorded('venv_torch_2_13_cpu'),
         facts={'version': '2.13.0+cpu', 'cuda': None, 'cudnn': None, 'nccl': None, 'python': '3.11.7',
                'cuda_available': False, 'gpu_count': 0, 'gpus': [], 'driver': None, 'distributed': CPU_DISTRIBUTED,
                'env.name': 'train', 'env.prefix': '/tmp/torchfleet-probe-recording/envs/train', 'env.spec_sha256': None,
                'env.stamp': None, 'env.packages.torch': '2.13.0+cpu', 'env.packages.numpy': '2.4.6'}),
    dict(id='venv torch 2.13.0 cpu, probe_cuda (recorded)', run=rec.recorded('venv_torch_2_13_cpu_probe_cuda'),
         params={'probe_cuda': True},
         facts={'version': '2.13.0+cpu', 'cuda_available': False, 'gpu_count': 0, 'gpus': [], 'env.name': 'train'}),
    dict(id='8 x H200 via nvidia-smi', run=rec.synthetic('h200_nvidia_smi'), facts=H200_FACTS),
    dict(id='8 x H200 via NVML', run=rec.synthetic('h200_nvml'), facts=H200_FACTS),
    dict(id='8 x H200, probe_cuda', run=rec.synthetic('h200_probe_cuda'), params={'probe_cuda': True}, facts=H200_FACTS),
    dict(id='8 x H200 via /proc only', run=rec.synthetic('h200_proc_only'),
         facts={'gpu_count': 8, 'driver': rec.H200_DRIVER, 'gpus.0.capability': None, 'gpus.7.uuid': rec.H200_GPUS[7]['uuid']}),
    dict(id='CUDA build, driver gone: no failure', run=rec.synthetic('gpu_build_no_driver'),
         facts={'cuda': '12.8', 'cuda_available': False, 'gpu_count': 0, 'gpus': [], 'driver': None}),
    dict(id='driver before compute_cap', run=rec.synthetic('old_driver_no_compute_cap'),
         facts={'gpu_count': 1, 'driver': '470.256.02', 'gpus.0.name': 'Tesla V100-SXM2-32GB', 'gpus.0.capability': None}),
]


@pytest.mark.parametrize('case', SUCCESS_CASES, ids=[case['id'] for case in SUCCESS_CASES])
@pytest.mark.parametrize('check_mode', [False, True], ids=['run', 'check'])
def test_facts(node, tmp_path, case, check_mode):
    node.run = case['run']
    python = interpreter(tmp_path, case.get('relative', 'miniconda3/envs/train/bin/python'))
    params = dict(case.get('params', {}), python=python, _ansible_check_mode=check_mode)
    result = run_module(params)
    assert result['changed'] is False
    assert sorted(result) == ['ansible_facts', 'changed']
    facts = result['ansible_facts']['torch']
    for dotted, expected in case['facts'].items():
        assert lookup(facts, dotted) == expected, dotted
    assert node.warnings == []
    assert json.loads(json.dumps(facts)) == facts


def test_probe_runs_once_in_the_env_interpreter(node, tmp_path):
    node.run = rec.recorded('venv_torch_2_13_cpu')
    python = interpreter(tmp_path)
    run_module({'python': python, 'probe_cuda': True, 'timeout': 30})
    assert len(node.calls) == 1
    args, kwargs = node.calls[0]
    assert args == [TIMEOUT_BIN, '--kill-after=5', '30', python, '-I', '-c', torch_probe.PROBE,
                    '{"gpu_timeout": 20, "probe_cuda": true}']
    assert kwargs['expand_user_and_vars'] is False  # the probe source must reach python verbatim
    assert kwargs['handle_exceptions'] is False


def test_short_timeout_bounds_the_gpu_query(node, tmp_path):
    node.run = rec.recorded('venv_torch_2_13_cpu')
    run_module({'python': interpreter(tmp_path), 'timeout': 5})
    assert node.calls[0][0][-1] == '{"gpu_timeout": 5, "probe_cuda": null}'  # unset: the probe decides


def test_without_coreutils_timeout_python_runs_directly(node, tmp_path):
    node.run = rec.recorded('venv_torch_2_13_cpu')
    node.timeout_bin = None
    python = interpreter(tmp_path)
    run_module({'python': python})
    assert node.calls[0][0][:2] == [python, '-I']


def test_bare_interpreter_name_is_looked_up_in_path(node, tmp_path):
    node.run = rec.recorded('venv_torch_2_13_cpu')
    python = interpreter(tmp_path, 'opt/envs/train/bin/python3')
    node.path = {'python3': python}
    facts = run_module({'python': 'python3'})['ansible_facts']['torch']
    assert node.calls[0][0][3] == python
    assert facts['env']['name'] == 'train'


def test_stamp_and_packages_come_through(node, tmp_path):
    node.run = rec.synthetic('h200_nvidia_smi')
    env = run_module({'python': interpreter(tmp_path)})['ansible_facts']['torch']['env']
    assert sorted(env) == ['build_changes', 'builds', 'duplicates', 'name', 'packages', 'packages_sha256', 'prefix',
                           'spec_sha256', 'stamp']
    assert env['packages'] == dict(line.split(' ')[:2] for line in rec.H200_PACKAGE_LINES.splitlines())


PY = 'miniconda3/envs/train/bin/python'
FAILURE_CASES = [
    dict(id='torch missing (recorded, Python 3.13)', run=rec.recorded('python313_without_torch'), rc=0,
         msg=['torch cannot be imported by', PY, "ModuleNotFoundError: No module named 'torch'"],
         ignored={'python': '3.13.0', 'env.packages': {'pip': '24.2'}, 'env.name': 'train', 'gpu_count': 0}),
    dict(id='Python 2.7 rejects -I (recorded)', run=rec.recorded('python27'), rc=2,
         msg=[PY, 'failed (rc 2, probe printed no result line)', 'Unknown option: -I'],
         ignored={'python': None, 'env.name': 'train'}),
    dict(id='interpreter vanished: rc 127 (recorded)', run=rec.recorded('missing_interpreter'), rc=127,
         msg=[PY, 'could not be run (rc 127)', 'No such file or directory'], ignored={'env.packages': None}),
    dict(id='killed by timeout: rc 124 (recorded)', run=rec.recorded('timeout_1s'), rc=124,
         msg=[PY, 'timed out after 120s'], ignored={'version': None}),
    dict(id='garbage on stdout', run=rec.synthetic('garbage'), rc=0,
         msg=[PY, 'probe printed no result line', 'no stderr'], ignored={'version': None}),
    dict(id='result cut short', run=rec.synthetic('truncated'), rc=-9,
         msg=[PY, 'rc -9', 'malformed JSON'], ignored={'version': None}),
    dict(id='segfault', run=rec.synthetic('segfault'), rc=-11, msg=[PY, 'rc -11', 'no stderr'], ignored={'cuda': None}),
    dict(id='probe crashed', run=rec.synthetic('fatal'), rc=0,
         msg=[PY, 'crashed: RecursionError: maximum recursion depth exceeded'], ignored={'env.name': 'train'}),
]


@pytest.mark.parametrize('case', FAILURE_CASES, ids=[case['id'] for case in FAILURE_CASES])
def test_failures_name_interpreter_rc_and_stderr(node, tmp_path, case):
    node.run = case['run']
    python = interpreter(tmp_path)
    result = run_module({'python': python}, expect=FailJson)
    assert result['failed'] is True
    assert result['rc'] == case['rc']
    assert result['stderr'] == case['run'][2] or result['stderr'].startswith(case['run'][2])
    for needle in case['msg']:
        assert needle in result['msg']
    assert 'Traceback' not in result['msg']


@pytest.mark.parametrize('case', FAILURE_CASES, ids=[case['id'] for case in FAILURE_CASES])
def test_ignore_missing_gives_null_facts_and_a_warning(node, tmp_path, case):
    node.run = case['run']
    result = run_module({'python': interpreter(tmp_path), 'ignore_missing': True})
    facts = result['ansible_facts']['torch']
    assert result['changed'] is False
    assert (facts['version'], facts['cuda'], facts['cuda_available']) == (None, None, None)
    assert sorted(facts) == sorted(torch_probe.null_facts('/x/bin/python'))
    for dotted, expected in case['ignored'].items():
        assert lookup(facts, dotted) == expected, dotted
    assert len(node.warnings) == 1
    for needle in case['msg']:
        assert needle in node.warnings[0]


@pytest.mark.parametrize('relative, mode', [(None, None), ('envs/train/bin/python', 0o644)],
                         ids=['does not exist', 'not executable'])
def test_unusable_interpreter_is_not_run(node, tmp_path, relative, mode):
    python = str(tmp_path / 'envs' / 'train' / 'bin' / 'python')
    if relative:
        interpreter(tmp_path, relative)
        os.chmod(python, mode)
    result = run_module({'python': python}, expect=FailJson)
    assert node.calls == []
    assert result['rc'] == 127
    assert python in result['msg']
    facts = run_module({'python': python, 'ignore_missing': True})['ansible_facts']['torch']
    assert facts == torch_probe.null_facts(python)
    assert facts['env']['name'] == 'train'
    assert python in node.warnings[0]


def test_bare_name_not_in_path(node):
    result = run_module({'python': 'python3.99'}, expect=FailJson)
    assert 'python3.99' in result['msg'] and node.calls == []


@pytest.mark.parametrize('error, rc', [(OSError(errno.ENOENT, 'No such file or directory'), 127),
                                       (OSError(errno.EACCES, 'Permission denied'), 126)], ids=['ENOENT', 'EACCES'])
def test_exec_errors_are_failures_not_tracebacks(node, tmp_path, error, rc):
    node.run = error
    python = interpreter(tmp_path)
    result = run_module({'python': python}, expect=FailJson)
    assert result['rc'] == rc
    assert python in result['msg'] and error.strerror in result['msg']


def test_timeout_must_be_positive(node, tmp_path):
    result = run_module({'python': interpreter(tmp_path), 'timeout': 0}, expect=FailJson)
    assert 'timeout' in result['msg'] and node.calls == []


def with_errors(name, torch_errors=None, conda_errors=None):
    rc, stdout, stderr = rec.synthetic(name)
    doc = torch_probe.parse_output(stdout)
    doc['torch']['errors'].update(torch_errors or {})
    doc['conda']['errors'].extend(conda_errors or [])
    return rc, rec.probe_stdout(doc), stderr


WARNING_CASES = [
    ('cudnn unreadable on a CUDA build', with_errors('h200_nvidia_smi', {'cudnn': 'RuntimeError: cuDNN version incompatibility'}),
     ['torch_facts could not read cudnn: RuntimeError: cuDNN version incompatibility']),
    ('nccl missing on a CUDA build', with_errors('h200_nvidia_smi', {'nccl': 'AttributeError: _nccl_version'}),
     ['torch_facts could not read nccl: AttributeError: _nccl_version']),
    ('unreadable conda record', with_errors('h200_nvidia_smi', conda_errors=['zlib-1.3-0.json: ValueError: Expecting value']),
     ['torch_facts skipped conda-meta/zlib-1.3-0.json: ValueError: Expecting value']),
    ('result printed, then a crash at exit', (-11,) + rec.synthetic('h200_nvidia_smi')[1:],
     ['torch_facts probe exited with rc -11 after printing its result']),
    ('no NCCL on a CPU build is normal', rec.recorded('venv_torch_2_13_cpu'), []),
]


@pytest.mark.parametrize('dummy, run, warnings', WARNING_CASES, ids=[case[0] for case in WARNING_CASES])
def test_warnings(node, tmp_path, dummy, run, warnings):
    node.run = run
    run_module({'python': interpreter(tmp_path)})
    assert node.warnings == warnings


@pytest.fixture(scope='module')
def real_torch_python():
    configured = os.environ.get('TORCHFLEET_TEST_TORCH_PYTHON') or sys.executable
    if not can_import_torch(configured):
        pytest.skip('no interpreter with torch: set TORCHFLEET_TEST_TORCH_PYTHON')
    return configured


def test_real_run_never_imports_torch_here(real_torch_python, module_exits):
    """The whole module against the real interpreter, with the real run_command."""
    had_torch = 'torch' in sys.modules
    facts = run_module({'python': real_torch_python})['ansible_facts']['torch']
    assert ('torch' in sys.modules) == had_torch
    assert facts['version'] and facts['env']['packages']['torch'] == facts['version']
    assert facts['python'] and facts['distributed']['available'] in (True, False)


SETPRIV = '/usr/bin/setpriv'
# How the environment is laid out -> the argv prefix the probe must run under (as root).
OWNER_CASES = [
    dict(id='root-owned environment runs as root', change=None, prefix=[]),
    dict(id='environment given to uid 65534 runs as that user', change='chown-prefix',
         prefix=[SETPRIV, '--reuid=65534', '--regid=65534']),
    dict(id='site-packages owned by another user runs as that user', change='chown-site-packages',
         prefix=[SETPRIV, '--reuid=65534', '--regid=65534']),
    dict(id='world-writable bin/ runs as nobody', change='world-writable-bin',
         prefix=[SETPRIV, '--reuid=65534', '--regid=65534']),
]


def environment_with_site_packages(node, tmp_path):
    """A recorded probe answer and an environment laid out on disk: (python, prefix, site-packages)."""
    node.run = rec.recorded('venv_torch_2_13_cpu')
    node.path = {'setpriv': SETPRIV}
    python = interpreter(tmp_path)
    prefix = os.path.dirname(os.path.dirname(python))
    site = os.path.join(prefix, 'lib', 'python3.11', 'site-packages')
    os.makedirs(site)
    return python, prefix, site


@pytest.mark.skipif(os.geteuid() != 0, reason='changing owners needs root')
@pytest.mark.parametrize('case', OWNER_CASES, ids=[case['id'] for case in OWNER_CASES])
def test_probe_never_runs_another_users_environment_as_root(node, tmp_path, case):
    python, prefix, site = environment_with_site_packages(node, tmp_path)
    if case['change'] == 'chown-prefix':
        os.chown(prefix, 65534, 65534)
    elif case['change'] == 'chown-site-packages':
        os.chown(site, 65534, 65534)
    elif case['change'] == 'world-writable-bin':
        os.chmod(os.path.dirname(python), 0o777)
    run_module({'python': python})
    argv = node.calls[0][0]
    at = argv.index(python)
    dropped = argv[3:at]  # after: timeout --kill-after=5 SECONDS
    assert dropped[:3] == case['prefix']
    if case['prefix']:
        assert dropped[-1] == '--' and dropped[3] in ('--init-groups', '--clear-groups')


@pytest.mark.skipif(os.geteuid() != 0, reason='changing owners needs root')
def test_another_users_environment_without_setpriv_is_refused(node, tmp_path):
    node.run = rec.recorded('venv_torch_2_13_cpu')
    python = interpreter(tmp_path)
    os.chown(os.path.dirname(os.path.dirname(python)), 65534, 65534)
    result = run_module({'python': python}, expect=FailJson)
    assert 'setpriv' in result['msg'] and 'uid 65534' in result['msg']
    assert node.calls == []


LOGIN_UID = 4242
# A probe run by the Ansible login user (no become): who may change the environment -> run or refuse.
LOGIN_CASES = [
    dict(id='root-owned environment runs as the login user', owner=0, refused=False),
    dict(id="the login user's own environment runs as the login user", owner=LOGIN_UID, refused=False),
    dict(id="another user's environment is refused", owner=65534, refused=True),
]


@pytest.mark.skipif(os.geteuid() != 0, reason='changing owners needs root')
@pytest.mark.parametrize('case', LOGIN_CASES, ids=[case['id'] for case in LOGIN_CASES])
def test_probe_as_the_login_user_never_runs_a_third_users_environment(node, tmp_path, monkeypatch, case):
    python, _prefix, site = environment_with_site_packages(node, tmp_path)
    os.chown(site, case['owner'], case['owner'])
    monkeypatch.setattr(torch_module.os, 'geteuid', lambda: LOGIN_UID)
    if case['refused']:
        result = run_module({'python': python}, expect=FailJson)
        assert result['msg'].startswith('torch_facts: refusing to run %s as uid %d: %s is owned by nobody'
                                        % (python, LOGIN_UID, site))
        assert result['path'] == site and node.calls == []
        return
    run_module({'python': python})
    argv = node.calls[0][0]
    assert SETPRIV not in argv and argv[argv.index(python) + 1] == '-I'
