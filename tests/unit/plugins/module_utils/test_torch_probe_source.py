# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe source itself, executed: its functions in this process, and ``main`` in a child
interpreter with stand-in ``torch`` packages (a CPU and a CUDA build) and fake GPU tools."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.machinery
import json
import os
import stat
import subprocess
import sys
import types

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._probe import payload, torch_probe

try:
    from importlib import metadata as importlib_metadata
except ImportError:  # pragma: no cover - Python < 3.8
    importlib_metadata = None


@pytest.fixture(scope='module')
def probe():
    return payload


def test_the_probe_command_runs_the_payload_file():
    with open(payload.__file__, encoding='utf-8') as source:
        assert torch_probe.PROBE == source.read()


def write(path, text, mode=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mode:
        path.chmod(mode)
    return path


OWNED_CASES = [
    ([], []),
    (['lib/python3.11/site-packages/numpy-2.3.2.dist-info/METADATA',
      'lib/python3.11/site-packages/numpy-2.3.2.dist-info/RECORD',
      'lib/python3.11/site-packages/numpy/__init__.py'], ['numpy-2.3.2.dist-info']),
    (['lib/python3.11/site-packages/six-1.16.0-py3.11.egg-info', 'bin/python'], ['six-1.16.0-py3.11.egg-info']),
    (['lib/python3.11/site-packages/a-1.dist-info/x', 'lib/python3.11/site-packages/b-2.egg-info/PKG-INFO', 3],
     ['a-1.dist-info', 'b-2.egg-info']),
]


@pytest.mark.parametrize('files, expected', OWNED_CASES)
def test_owned_infos(probe, files, expected):
    assert probe.owned_infos(files) == expected


def test_read_header_variants(probe, tmp_path):
    dist_info = write(tmp_path / 'Foo_Bar-1.0.dist-info' / 'METADATA',
                      'Metadata-Version: 2.1\nName: Foo_Bar\nVersion: 1.0\nSummary: x\n\nName: not-this\n').parent
    egg_dir = write(tmp_path / 'old-2.0-py3.11.egg-info' / 'PKG-INFO', 'Name: old\nVersion: 2.0\n').parent
    egg_file = write(tmp_path / 'flat-3.0-py3.11.egg-info', 'Metadata-Version: 1.1\nName: flat\nVersion: 3.0\n')
    (tmp_path / 'empty-0.dist-info').mkdir()
    assert probe.read_header(str(dist_info)) == {'Name': 'Foo_Bar', 'Version': '1.0'}
    assert probe.read_header(str(egg_dir)) == {'Name': 'old', 'Version': '2.0'}
    assert probe.read_header(str(egg_file)) == {'Name': 'flat', 'Version': '3.0'}
    assert probe.read_header(str(tmp_path / 'empty-0.dist-info')) == {}


@pytest.mark.skipif(importlib_metadata is None, reason='importlib.metadata needs Python 3.8')
def test_distributions_agree_with_importlib_metadata(probe):
    mine = {}
    for item in probe.distributions():
        mine.setdefault(torch_probe.normalise_name(item['name']), item['version'])
    theirs = {}
    for dist in importlib_metadata.distributions():
        if dist.metadata['Name']:
            theirs.setdefault(torch_probe.normalise_name(dist.metadata['Name']), dist.version)
    assert mine and mine == theirs


def conda_prefix(tmp_path):
    meta = tmp_path / 'conda-meta'
    write(meta / 'numpy-2.3.2-py311_0.json', json.dumps({
        'name': 'numpy', 'version': '2.3.2', 'build': 'py311_0', 'build_number': 0,
        'channel': 'https://conda.mirror.example/conda-forge/linux-64', 'subdir': 'linux-64',
        'fn': 'numpy-2.3.2-py311_0.conda',
        'files': ['lib/python3.11/site-packages/numpy-2.3.2.dist-info/METADATA', 'bin/f2py']}, indent=2))
    write(meta / 'python-3.11.13-h_0.json', json.dumps({'name': 'python', 'version': '3.11.13', 'build': 'h_0'}))
    write(meta / 'torchfleet-stamp', json.dumps({'name': 'train', 'spec_sha256': 'abc'}))
    write(meta / 'broken-1-0.json', '{"name": "broken", ')
    write(meta / 'odd-1-0.json', '[1, 2]')
    write(meta / 'history', '==> 2026-01-01 <==\n')
    return tmp_path


def test_conda_meta(probe, tmp_path):
    out = probe.conda_meta(str(conda_prefix(tmp_path)))
    assert out['stamp'] == {'name': 'train', 'spec_sha256': 'abc'}
    assert out['records'] == [
        {'name': 'numpy', 'version': '2.3.2', 'build': 'py311_0',
         'channel': 'https://conda.mirror.example/conda-forge/linux-64', 'infos': ['numpy-2.3.2.dist-info']},
        {'name': 'python', 'version': '3.11.13', 'build': 'h_0', 'channel': '', 'infos': []}]
    assert [error.split(':')[0] for error in out['errors']] == ['broken-1-0.json', 'odd-1-0.json']


def test_conda_meta_absent_in_a_plain_venv(probe, tmp_path):
    assert probe.conda_meta(str(tmp_path)) is None


def test_proc_driver(probe, tmp_path):
    write(tmp_path / 'version', 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12\n')
    write(tmp_path / 'gpus' / '0000:3a:00.0' / 'information', 'Model: \t\t NVIDIA H200\n')
    write(tmp_path / 'gpus' / '0000:18:00.0' / 'information', 'Model: \t\t NVIDIA H100\n')
    out = probe.proc_driver(str(tmp_path))
    assert out['version'].startswith('NVRM version:')
    assert list(out['gpus']) == ['0000:18:00.0', '0000:3a:00.0']
    assert probe.proc_driver(str(tmp_path / 'absent')) == {'version': None, 'gpus': {}}


SMI_OK = '#!/bin/sh\necho "NVIDIA H200, 9.0, GPU-aaa, 570.124.06"\necho "NVIDIA H200, 9.0, GPU-bbb, 570.124.06"\n'
SMI_OLD = ('#!/bin/sh\ncase "$1" in *compute_cap*) echo \'Field "compute_cap" is not a valid field to query.\'; exit 2;; esac\n'
           'echo "Tesla V100-SXM2-32GB, GPU-ccc, 470.256.02"\n')
SMI_SLOW = '#!/bin/sh\nexec /bin/sleep 30\n'
SMI_NO_DRIVER = "#!/bin/sh\necho \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"\nexit 9\n"


@pytest.fixture
def fake_path(probe, tmp_path, monkeypatch):
    """A PATH holding only a fake nvidia-smi (if any), and no system fallback directories."""
    bindir = tmp_path / 'bin'
    bindir.mkdir()
    monkeypatch.setenv('PATH', str(bindir))
    monkeypatch.setattr(probe, 'SMI_SEARCH', [])
    monkeypatch.delitem(sys.modules, 'pynvml', raising=False)
    return bindir


def gpu_query(probe, timeout=10):
    query = probe.GpuQuery(timeout)
    query.start()
    return query.finish()


SMI_CASES = [
    ('answers', SMI_OK, 0, ['name', 'compute_cap', 'uuid', 'driver_version'], 'GPU-aaa'),
    ('predates compute_cap', SMI_OLD, 0, ['name', 'uuid', 'driver_version'], 'GPU-ccc'),
    ('no driver', SMI_NO_DRIVER, 9, ['name', 'compute_cap', 'uuid', 'driver_version'], 'NVIDIA-SMI has failed'),
]


@pytest.mark.parametrize('dummy, script, rc, fields, needle', SMI_CASES, ids=[case[0] for case in SMI_CASES])
def test_gpu_query_through_nvidia_smi(probe, fake_path, dummy, script, rc, fields, needle):
    write(fake_path / 'nvidia-smi', script, stat.S_IRWXU)
    out = gpu_query(probe)
    assert out['nvml'] is None
    assert (out['nvidia_smi']['rc'], out['nvidia_smi']['fields']) == (rc, fields)
    assert needle in out['nvidia_smi']['stdout']


def test_gpu_query_kills_a_hanging_nvidia_smi(probe, fake_path):
    write(fake_path / 'nvidia-smi', SMI_SLOW, stat.S_IRWXU)
    out = gpu_query(probe, timeout=0.5)
    assert out['nvidia_smi']['rc'] is None
    assert 'timed out' in out['nvidia_smi']['stderr']


def test_gpu_query_without_any_tool(probe, fake_path):
    out = gpu_query(probe)
    assert (out['nvml'], out['nvidia_smi']) == (None, None)


def fake_pynvml(fail=False):
    module = types.ModuleType('pynvml')
    module.__spec__ = importlib.machinery.ModuleSpec('pynvml', None)

    def init():
        if fail:
            raise RuntimeError('NVML Shared Library Not Found')

    module.nvmlInit = init
    module.nvmlShutdown = lambda: None
    module.nvmlDeviceGetCount = lambda: 2
    module.nvmlDeviceGetHandleByIndex = lambda index: index
    module.nvmlDeviceGetName = lambda handle: b'NVIDIA H200'  # older nvidia-ml-py returns bytes
    module.nvmlDeviceGetUUID = lambda handle: 'GPU-%d' % handle
    module.nvmlDeviceGetCudaComputeCapability = lambda handle: (9, 0)
    module.nvmlSystemGetDriverVersion = lambda: '570.124.06'
    # nvmlSystemGetCudaDriverVersion: CUDA version as 1000 * major + 10 * minor (NVML API reference)
    module.nvmlSystemGetCudaDriverVersion = lambda: 12080
    return module


def test_gpu_query_through_nvml(probe, fake_path, monkeypatch):
    monkeypatch.setitem(sys.modules, 'pynvml', fake_pynvml())
    write(fake_path / 'nvidia-smi', '#!/bin/sh\nexit 99\n', stat.S_IRWXU)
    out = gpu_query(probe)
    assert out['nvml'] == {'driver': '570.124.06', 'cuda_driver': 12080, 'gpus': [
        {'name': 'NVIDIA H200', 'uuid': 'GPU-0', 'capability': [9, 0]},
        {'name': 'NVIDIA H200', 'uuid': 'GPU-1', 'capability': [9, 0]}]}
    assert out['nvidia_smi'] is None  # not run when NVML answered


def test_gpu_query_falls_back_to_nvidia_smi_when_nvml_fails(probe, fake_path, monkeypatch):
    monkeypatch.setitem(sys.modules, 'pynvml', fake_pynvml(fail=True))
    write(fake_path / 'nvidia-smi', SMI_OK, stat.S_IRWXU)
    out = gpu_query(probe)
    assert 'NVML Shared Library Not Found' in out['nvml']['error']
    assert out['nvidia_smi']['rc'] == 0


class CpuTorch(object):
    """The attributes the probe reads, as torch 2.13.0+cpu answers them."""

    __version__ = '2.13.0+cpu'

    def __init__(self):
        self.version = types.SimpleNamespace(cuda=None)
        self.backends = types.SimpleNamespace(cudnn=types.SimpleNamespace(version=lambda: None))
        self.cuda = types.SimpleNamespace(nccl=types.SimpleNamespace(version=self.no_nccl),
                                          is_available=lambda: False, device_count=lambda: 0)
        self.distributed = types.SimpleNamespace(is_available=lambda: True, is_gloo_available=lambda: True,
                                                 is_nccl_available=lambda: False, is_mpi_available=lambda: False)

    @staticmethod
    def no_nccl():
        raise AttributeError("module 'torch._C' has no attribute '_nccl_version'")


def test_torch_facts_of_a_cpu_build(probe):
    facts = probe.torch_facts(CpuTorch(), probe_cuda=True)
    assert facts['version'] == '2.13.0+cpu'
    assert (facts['cuda'], facts['cudnn'], facts['nccl']) == (None, None, None)
    assert facts['distributed'] == {'available': True, 'gloo': True, 'nccl': False, 'mpi': False}
    assert facts['cuda_probe'] == {'available': False, 'count': 0, 'devices': []}
    assert list(facts['errors']) == ['nccl']


def test_torch_facts_without_distributed_support(probe):
    torch = CpuTorch()
    torch.distributed = types.SimpleNamespace(is_available=lambda: False)
    facts = probe.torch_facts(torch, probe_cuda=False)
    assert facts['distributed'] == {'available': False, 'gloo': False, 'nccl': False, 'mpi': False}
    assert facts['cuda_probe'] is None


FAKE_CUDA_TORCH = '''
import types
__version__ = "2.8.0+cu128"
version = types.SimpleNamespace(cuda="12.8")
backends = types.SimpleNamespace(cudnn=types.SimpleNamespace(version=lambda: 91002))
_props = types.SimpleNamespace(name="NVIDIA H200", major=9, minor=0, uuid="095909a2-c440-4cd9-8571-805ea24747d4")
cuda = types.SimpleNamespace(nccl=types.SimpleNamespace(version=lambda: (2, 27, 3)),
                             is_available=lambda: True, device_count=lambda: 1,
                             get_device_properties=lambda index: _props)
distributed = types.SimpleNamespace(is_available=lambda: True, is_gloo_available=lambda: True,
                                    is_nccl_available=lambda: True, is_mpi_available=lambda: False)
'''


def run_probe_main(tmp_path, torch_source, options, smi=None):
    """Run the probe as the module does, but without -I so PYTHONPATH can supply a stand-in torch."""
    site = tmp_path / 'site'
    write(site / 'torch' / '__init__.py', torch_source)
    bindir = tmp_path / 'bin'
    bindir.mkdir()
    if smi:
        write(bindir / 'nvidia-smi', smi, stat.S_IRWXU)
    env = {'PATH': str(bindir), 'PYTHONPATH': str(site)}
    argv = [sys.executable, '-c', torch_probe.PROBE, options]
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=str(tmp_path),
                          universal_newlines=True, timeout=120, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def test_main_with_a_cuda_build_and_nvidia_smi(tmp_path):
    rc, stdout, stderr = run_probe_main(tmp_path, FAKE_CUDA_TORCH, '{"probe_cuda": true, "gpu_timeout": 10}', SMI_OK)
    assert (rc, stderr) == (0, '')
    assert stdout.count('\n') == 1
    doc = torch_probe.parse_output(stdout)
    assert doc['torch']['cuda_probe']['devices'][0]['uuid'] == '095909a2-c440-4cd9-8571-805ea24747d4'
    assert doc['gpu']['nvidia_smi']['rc'] == 0
    facts = torch_probe.build_facts('/opt/miniconda3/envs/train/bin/python', doc)
    assert (facts['cuda'], facts['cudnn'], facts['nccl'], facts['driver']) == ('12.8', '9.10.2', '2.27.3', '570.124.06')
    assert facts['gpus'] == [{'name': 'NVIDIA H200', 'capability': '9.0',
                              'uuid': 'GPU-095909a2-c440-4cd9-8571-805ea24747d4'}]
    assert facts['python'] == '%d.%d.%d' % sys.version_info[:3]
    assert set(doc['timings']) == {'import_torch', 'torch_facts', 'packages', 'gpu_wait', 'total'}


def test_main_reports_a_torch_that_fails_to_import(tmp_path):
    broken = 'raise OSError("libcudart.so.12: cannot open shared object file: No such file or directory")\n'
    rc, stdout, dummy = run_probe_main(tmp_path, broken, '{}')
    doc = torch_probe.parse_output(stdout)
    assert rc == 0
    assert doc['torch'] is None
    assert doc['torch_error'].startswith('OSError: libcudart.so.12')
    assert doc['pip'] is not None


def test_main_reports_its_own_crash_as_json(tmp_path):
    rc, stdout, dummy = run_probe_main(tmp_path, FAKE_CUDA_TORCH, 'not json')
    doc = torch_probe.parse_output(stdout)
    assert rc == 0
    assert doc['fatal'].startswith(('JSONDecodeError', 'ValueError'))
    assert 'Traceback' in doc['traceback']


@pytest.mark.skipif(os.path.isdir('/proc/driver/nvidia'), reason='this machine has an NVIDIA driver')
@pytest.mark.parametrize('smi, measured', [(SMI_OK, True), (None, False)], ids=['driver present', 'no driver'])
def test_unset_probe_cuda_measures_wherever_a_cuda_build_meets_a_driver(tmp_path, smi, measured):
    rc, stdout, dummy = run_probe_main(tmp_path, FAKE_CUDA_TORCH, '{"probe_cuda": null, "gpu_timeout": 10}', smi)
    doc = torch_probe.parse_output(stdout)
    assert rc == 0
    assert (doc['torch']['cuda_probe'] is not None) is measured
    facts = torch_probe.build_facts('/opt/miniconda3/envs/train/bin/python', doc)
    assert facts['cuda_available'] is measured
    if measured:
        # a driver but no libcuda.so.1 on this machine: asked, and the failure kept
        assert doc['gpu']['libcuda']['version'] is None and 'libcuda' in doc['gpu']['libcuda']['error']
        assert facts['driver_cuda'] is None
    else:
        assert doc['gpu']['libcuda'] is None
