# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ``run_command`` returned for the torch_facts probe: real recordings and GPU-node shapes.

RECORDED holds real runs on the build machine, byte for byte, one file each in
``fixtures/torch_probe/`` with the command that made it (``PROBE`` standing for the probe's
source; PATH=/usr/bin:/bin, LC_ALL=C):

- ``venv_torch_2_13_cpu``: a virtualenv made for the recording with only torch 2.13.0+cpu and
  numpy 2.4.6 (Python 3.11.7, no GPU, no driver, no conda-meta), and the same with ``probe_cuda``;
- ``python313_without_torch``: a Python 3.13.0 without torch;
- ``python27``: Python 2.7.18, which rejects ``-I``;
- ``missing_interpreter``: coreutils timeout failing to exec a path that does not exist;
- ``timeout_1s``: the venv probe killed by ``timeout 1``.

GPU nodes are not available here, so SYNTHETIC documents follow the probe's schema with values
as real nodes report them: an 8 x H200 node with torch 2.8.0+cu128 (CUDA 12.8,
``torch.backends.cudnn.version()`` 91002, ``torch.cuda.nccl.version()`` (2, 27, 3)), seen through
nvidia-smi, NVML, ``probe_cuda`` and ``/proc`` only, and a GPU build on a node whose driver is gone.
Re-record the real ones whenever the probe's output schema changes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._probe import torch_probe

RECORDINGS_DIR = os.path.join(os.path.dirname(__file__), 'fixtures', 'torch_probe')


def load_recordings():
    runs = {}
    for file_name in sorted(os.listdir(RECORDINGS_DIR)):
        with open(os.path.join(RECORDINGS_DIR, file_name)) as handle:
            runs[file_name[:-len('.json')]] = json.load(handle)
    return runs


RECORDED = load_recordings()


def probe_stdout(doc):
    """Exactly what the probe prints for ``doc``."""
    return torch_probe.MARKER + json.dumps(doc, sort_keys=True) + '\n'


def recorded(name):
    """(rc, stdout, stderr) of a real recording."""
    run = RECORDED[name]
    return run['rc'], run['stdout'], run['stderr']


H200_UUIDS = [
    '095909a2-c440-4cd9-8571-805ea24747d4', 'df8da301-cbc4-4112-b709-2f115e6a7279',
    'be421a47-99fc-4365-ac46-90f4c1d170ef', '623413d6-9a3a-4029-ac87-0df6a99b8afb',
    '7c4e0d85-7d48-4242-aa5b-ed32670004d4', '2dfa3b1f-b526-4757-a933-78dc0b053654',
    '101a3e35-b4ef-4539-85b7-efb6c5930876', '0b184605-cf2a-4fb2-91ef-9f3ad5be0ac8',
]
H200_BUSES = ['0000:18:00.0', '0000:2a:00.0', '0000:3a:00.0', '0000:5d:00.0',
              '0000:9a:00.0', '0000:ab:00.0', '0000:ba:00.0', '0000:db:00.0']
H200_DRIVER = '570.124.06'
PROC_VERSION_OPEN = (
    'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.124.06  Release Build  '
    '(dvs-builder@U16-I3-B03-4-3)  Thu Feb 27 04:50:14 UTC 2025\n'
    'GCC version:  gcc version 12.2.0 (Debian 12.2.0-14) \n'
)
PROC_VERSION_PROPRIETARY = (
    'NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024\n'
    'GCC version:  gcc version 12.2.0 (Debian 12.2.0-14) \n'
)
SMI_NO_DRIVER = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                 'Make sure that the latest NVIDIA driver is installed and running.\n\n')
STAMP = {
    'collection_version': '0.1.0', 'lock_sha256': None, 'name': 'train',
    'spec_file': 'inventories/example/environment.yml',
    'spec_sha256': '6f1d3c9a0b7e42d58c1a9e0f3b6d2c7a8e5f4b3a2d1c0e9f8a7b6c5d4e3f2a1b',
}
MIRROR = 'https://conda.mirror.example/conda-forge/'


def proc_information(uuid, bus, minor):
    return ('Model: \t\t NVIDIA H200\nIRQ:   \t\t 0\nGPU UUID: \t GPU-%s\nVideo BIOS: \t 96.00.a5.00.01\n'
            'Bus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\n'
            'Bus Location: \t %s\nDevice Minor: \t %d\nGPU Excluded:\t No\n' % (uuid, bus, minor))


def h200_doc():
    """8 x H200, torch 2.8.0+cu128 from pip in a conda env, GPUs seen through nvidia-smi."""
    smi = ''.join('NVIDIA H200, 9.0, GPU-%s, %s\n' % (uuid, H200_DRIVER) for uuid in H200_UUIDS)
    return {
        'schema': 1, 'python': '3.11.13', 'executable': '/opt/miniconda3/envs/train/bin/python',
        'prefix': '/opt/miniconda3/envs/train', 'torch_error': None,
        'torch': {
            'version': '2.8.0+cu128', 'cuda': '12.8', 'cudnn': 91002, 'nccl': [2, 27, 3],
            'distributed': {'available': True, 'gloo': True, 'nccl': True, 'mpi': False},
            'cuda_probe': None, 'errors': {},
        },
        'conda': {
            'stamp': copy.deepcopy(STAMP), 'errors': [],
            'records': [
                {'name': 'libgcc', 'version': '15.1.0', 'build': 'h767d61c_4',
                 'channel': MIRROR + 'linux-64', 'infos': []},
                {'name': 'numpy', 'version': '2.3.2', 'build': 'py311h519dc76_0',
                 'channel': MIRROR + 'linux-64', 'infos': ['numpy-2.3.2.dist-info']},
                {'name': 'pip', 'version': '25.2', 'build': 'pyh8b19718_0',
                 'channel': MIRROR + 'noarch', 'infos': ['pip-25.2.dist-info']},
                {'name': 'python', 'version': '3.11.13', 'build': 'h9e4cc4f_0_cpython',
                 'channel': MIRROR + 'linux-64', 'infos': []},
            ],
        },
        'pip': [
            {'name': 'Jinja2', 'version': '3.1.6', 'info': 'jinja2-3.1.6.dist-info'},
            {'name': 'numpy', 'version': '2.3.2', 'info': 'numpy-2.3.2.dist-info'},
            {'name': 'nvidia-cuda-runtime-cu12', 'version': '12.8.90',
             'info': 'nvidia_cuda_runtime_cu12-12.8.90.dist-info'},
            {'name': 'nvidia-cudnn-cu12', 'version': '9.10.2.21', 'info': 'nvidia_cudnn_cu12-9.10.2.21.dist-info'},
            {'name': 'nvidia-nccl-cu12', 'version': '2.27.3', 'info': 'nvidia_nccl_cu12-2.27.3.dist-info'},
            {'name': 'pip', 'version': '25.2', 'info': 'pip-25.2.dist-info'},
            {'name': 'torch', 'version': '2.8.0+cu128', 'info': 'torch-2.8.0+cu128.dist-info'},
            {'name': 'triton', 'version': '3.4.0', 'info': 'triton-3.4.0.dist-info'},
        ],
        'gpu': {
            'nvml': None,
            'libcuda': {'version': 12080, 'error': None},
            'nvidia_smi': {'fields': ['name', 'compute_cap', 'uuid', 'driver_version'], 'rc': 0,
                           'stdout': smi, 'stderr': ''},
            'proc': {'version': PROC_VERSION_OPEN,
                     'gpus': dict((bus, proc_information(uuid, bus, minor)) for minor, (uuid, bus)
                                  in enumerate(zip(H200_UUIDS, H200_BUSES)))},
        },
        'timings': {'gpu_wait': 0.0001, 'import_torch': 6.1, 'packages': 0.21, 'torch_facts': 0.02, 'total': 6.4},
    }


# sorted "name version build channel" lines the H200 env must hash to
H200_PACKAGE_LINES = (
    'jinja2 3.1.6 pypi_0 pypi\n'
    'libgcc 15.1.0 h767d61c_4 conda-forge\n'
    'numpy 2.3.2 py311h519dc76_0 conda-forge\n'
    'nvidia-cuda-runtime-cu12 12.8.90 pypi_0 pypi\n'
    'nvidia-cudnn-cu12 9.10.2.21 pypi_0 pypi\n'
    'nvidia-nccl-cu12 2.27.3 pypi_0 pypi\n'
    'pip 25.2 pyh8b19718_0 conda-forge\n'
    'python 3.11.13 h9e4cc4f_0_cpython conda-forge\n'
    'torch 2.8.0+cu128 pypi_0 pypi\n'
    'triton 3.4.0 pypi_0 pypi\n'
)
H200_GPUS = [{'name': 'NVIDIA H200', 'capability': '9.0', 'uuid': 'GPU-' + uuid} for uuid in H200_UUIDS]


def h200_nvml_doc():
    doc = h200_doc()
    doc['gpu']['nvidia_smi'] = None
    doc['gpu']['nvml'] = {'driver': H200_DRIVER, 'gpus': [
        {'name': 'NVIDIA H200', 'uuid': 'GPU-' + uuid, 'capability': [9, 0]} for uuid in H200_UUIDS]}
    return doc


def h200_probe_cuda_doc():
    doc = h200_doc()
    doc['torch']['cuda_probe'] = {'available': True, 'count': 8, 'devices': [
        {'name': 'NVIDIA H200', 'major': 9, 'minor': 0, 'uuid': uuid} for uuid in H200_UUIDS]}
    return doc


def h200_proc_only_doc():
    doc = h200_doc()
    doc['gpu']['nvidia_smi'] = None
    return doc


def no_driver_doc():
    """The CUDA build on a node whose driver is not loaded: nvidia-smi exits 9."""
    doc = h200_doc()
    doc['gpu'] = {'nvml': None, 'libcuda': None, 'proc': {'version': None, 'gpus': {}},
                  'nvidia_smi': {'fields': ['name', 'compute_cap', 'uuid', 'driver_version'], 'rc': 9,
                                 'stdout': SMI_NO_DRIVER, 'stderr': ''}}
    return doc


def old_driver_doc():
    """A driver that predates compute_cap: the probe asked again without it."""
    doc = h200_doc()
    doc['gpu']['proc'] = {'version': PROC_VERSION_PROPRIETARY, 'gpus': {}}
    doc['gpu']['libcuda'] = {'version': 11040, 'error': None}
    doc['gpu']['nvidia_smi'] = {
        'fields': ['name', 'uuid', 'driver_version'], 'rc': 0, 'stderr': '',
        'stdout': 'Tesla V100-SXM2-32GB, GPU-%s, 470.256.02\n' % H200_UUIDS[0]}
    return doc


SYNTHETIC_DOCS = {
    'h200_nvidia_smi': h200_doc,
    'h200_nvml': h200_nvml_doc,
    'h200_probe_cuda': h200_probe_cuda_doc,
    'h200_proc_only': h200_proc_only_doc,
    'gpu_build_no_driver': no_driver_doc,
    'old_driver_no_compute_cap': old_driver_doc,
}

# other shapes of a broken probe, as run_command reports them
SYNTHETIC_RUNS = {
    'garbage': (0, 'Hello from sitecustomize\nready.\n', ''),
    'truncated': (-9, torch_probe.MARKER + '{"conda": null, "executable": "/opt/mini', ''),
    'segfault': (-11, '', ''),
    'fatal': (0, probe_stdout({'schema': 1, 'fatal': 'RecursionError: maximum recursion depth exceeded',
                               'traceback': 'Traceback (most recent call last):\n  ...\nRecursionError\n'}), ''),
}


def synthetic(name):
    """(rc, stdout, stderr) of a synthetic GPU-node run or broken run."""
    if name in SYNTHETIC_DOCS:
        return 0, probe_stdout(SYNTHETIC_DOCS[name]()), ''
    return SYNTHETIC_RUNS[name]


@pytest.mark.parametrize('name', sorted(name for name in RECORDED if RECORDED[name]['stdout']))
def test_recorded_stdout_is_one_result_line(name):
    rc, stdout, stderr = recorded(name)
    doc = torch_probe.parse_output(stdout)
    assert (rc, stderr) == (0, '')
    assert stdout == probe_stdout(doc)
    assert doc['schema'] == torch_probe.SCHEMA


@pytest.mark.parametrize('name', sorted(name for name in RECORDED if not RECORDED[name]['stdout']))
def test_recorded_failures_print_no_result(name):
    rc, stdout, dummy = recorded(name)
    assert rc != 0
    with pytest.raises(torch_probe.ProbeError):
        torch_probe.parse_output(stdout)


@pytest.mark.parametrize('name', sorted(SYNTHETIC_DOCS))
def test_synthetic_documents_have_the_recorded_schema(name):
    real = torch_probe.parse_output(recorded('venv_torch_2_13_cpu')[1])
    doc = torch_probe.parse_output(synthetic(name)[1])
    assert sorted(doc) == sorted(real)
    assert sorted(doc['torch']) == sorted(real['torch'])
    assert sorted(doc['gpu']) == sorted(real['gpu'])
