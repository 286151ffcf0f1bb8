# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The driver/CUDA consistency rule (plugin_utils/cuda_driver) on facts built from GPU-node shapes.

The facts come from probe documents through torch_probe.build_facts, so the driver string is
parsed the way a node reports it:

- nvidia-smi: ``nvidia-smi --query-gpu=name,compute_cap,uuid,driver_version --format=csv,noheader``
  rows, one per GPU (format: ``nvidia-smi --help-query-gpu``; the rows as in
  test_torch_probe_recordings.h200_doc);
- NVML: ``nvmlSystemGetDriverVersion()`` a string such as ``"535.104.05"`` and
  ``nvmlSystemGetCudaDriverVersion()`` an int, 1000 * major + 10 * minor (NVML API Reference,
  System Queries: 12020 is CUDA 12.2);
- libcuda: ``cuDriverGetVersion(int *)`` the same encoding (CUDA Driver API, Version Management),
  the number nvidia-smi prints as "CUDA Version: 12.2" in its header.
"""

from __future__ import annotations

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._probe import gpu_info, torch_probe
from ansible_collections.torchfleet.cluster.plugins.plugin_utils import cuda_driver
from ansible_collections.torchfleet.cluster.plugins.plugin_utils.consistency import build_report
from ansible_collections.torchfleet.cluster.tests.unit.plugins.module_utils import test_torch_probe_recordings as rec

PYTHON = '/opt/miniconda3/envs/train/bin/python'


def smi_rows(driver, count=8):
    return ''.join('NVIDIA H200, 9.0, GPU-%s, %s\n' % (uuid, driver) for uuid in rec.H200_UUIDS[:count])


def node_facts(driver, cuda='12.8', torch_version='2.8.0+cu128', libcuda=None, nvml_cuda=None, source='nvidia-smi'):
    """torch_facts of an H200 node whose driver is `driver`, seen through nvidia-smi or NVML."""
    doc = rec.h200_doc()
    doc['torch']['cuda'] = cuda
    doc['torch']['version'] = torch_version
    if source == 'nvml':
        doc['gpu']['nvidia_smi'] = None
        doc['gpu']['nvml'] = {'driver': driver, 'cuda_driver': nvml_cuda, 'gpus': [
            {'name': 'NVIDIA H200', 'uuid': 'GPU-' + uuid, 'capability': [9, 0]} for uuid in rec.H200_UUIDS]}
    else:
        doc['gpu']['nvidia_smi'] = {'fields': ['name', 'compute_cap', 'uuid', 'driver_version'], 'rc': 0, 'stdout': smi_rows(driver), 'stderr': ''}
    doc['gpu']['libcuda'] = {'version': libcuda, 'error': None} if libcuda else None
    return torch_probe.build_facts(PYTHON, doc)


ENCODING_CASES = [(12080, '12.8'), (12020, '12.2'), (11040, '11.4'), (13000, '13.0'), (0, None), (None, None), ('x', None)]


@pytest.mark.parametrize('value, text', ENCODING_CASES)
def test_cuda_version_encoding(value, text):
    assert gpu_info.cuda_version_string(value) == text


def test_driver_cuda_prefers_libcuda_then_nvml():
    assert node_facts('535.104.05', libcuda=12020)['driver_cuda'] == '12.2'
    assert node_facts('535.104.05', source='nvml', nvml_cuda=12020)['driver_cuda'] == '12.2'
    assert node_facts('535.104.05')['driver_cuda'] is None


RULE_CASES = [
    # id, facts kwargs, expected finding (None: passes)
    ('new enough', dict(driver='570.124.06'), None),
    ('exactly the GA floor', dict(driver='570.26'), None),
    ('too old for 12.8', dict(driver='535.104.05'), '>=570.26 (CUDA 12.8)'),
    ('too old, through NVML', dict(driver='550.54.15', source='nvml', nvml_cuda=12040), '>=570.26 (CUDA 12.8)'),
    ('12.4 on 550.54.15', dict(driver='550.54.15', cuda='12.4', torch_version='2.5.1+cu124'), None),
    ('12.4 on 545.23.08', dict(driver='545.23.08', cuda='12.4', torch_version='2.5.1+cu124'), '>=550.54.14 (CUDA 12.4)'),
    ('11.8 on 470 (V100 era)', dict(driver='470.256.02', cuda='11.8', torch_version='2.1.2+cu118'), '>=520.61.05 (CUDA 11.8)'),
    ('11.2 on exactly its GA floor', dict(driver='460.27.03', cuda='11.2', torch_version='1.8.1+cu112'), None),
    ('11.2 one patch below its GA floor', dict(driver='460.27.02', cuda='11.2', torch_version='1.8.1+cu112'),
     '>=460.27.03 (CUDA 11.2)'),
    ('13.1 on 590.44.00', dict(driver='590.44.00', cuda='13.1', torch_version='2.10.0+cu131'), '>=590.44.01 (CUDA 13.1)'),
    ('13.1 on exactly its GA floor', dict(driver='590.44.01', cuda='13.1', torch_version='2.10.0+cu131'), None),
    ('CUDA newer than the table: the driver says what it supports',
     dict(driver='580.65.06', cuda='13.9', libcuda=13000), 'driver supporting CUDA >=13.9'),
    ('CUDA newer than the table, driver new enough', dict(driver='590.10', cuda='13.9', libcuda=13090), None),
]


@pytest.mark.parametrize('dummy, kwargs, expected', RULE_CASES, ids=[case[0] for case in RULE_CASES])
def test_rule(dummy, kwargs, expected):
    found = cuda_driver.problem(node_facts(**kwargs))
    assert (found or {}).get('expected') == expected
    if found:
        assert kwargs['driver'] in found['detail'] and (kwargs.get('cuda') or '12.8') in found['detail']


def test_cpu_node_and_node_without_driver_are_not_judged():
    cpu = node_facts('570.124.06')
    cpu.update(cuda=None, driver=None)
    no_driver = torch_probe.build_facts(PYTHON, rec.no_driver_doc())
    assert cuda_driver.problem(cpu) is None and cuda_driver.problem(no_driver) is None


def test_uniform_too_old_driver_fails_the_assertion_naming_node_driver_and_build():
    """Every node agrees (no majority drift), yet the CUDA build cannot run on their driver."""
    facts = {host: node_facts('535.104.05') for host in ('node0', 'node1', 'node2')}
    report = build_report(facts)
    assert not report['consistent']
    assert [(d['field'], d['source'], d['expected'], d['hosts']) for d in report['drift']] == [
        ('cuda_driver', 'spec', '>=570.26 (CUDA 12.8)',
         {host: '535.104.05 (CUDA 12.8)' for host in ('node0', 'node1', 'node2')})]
    assert report['drift'][0]['details']['node1'].startswith('driver 535.104.05 is older than 570.26, the minimum for CUDA 12.8')


def test_one_old_node_among_new_ones_is_named_twice_majority_and_table():
    facts = {'node0': node_facts('570.124.06'), 'node1': node_facts('535.104.05'), 'node2': node_facts('570.124.06')}
    drift = {(d['field'], tuple(d['hosts'])) for d in build_report(facts)['drift']}
    assert drift == {('driver', ('node1',)), ('cuda_driver', ('node1',))}


def test_the_rule_can_be_ignored():
    facts = {'node0': node_facts('535.104.05')}
    assert build_report(facts, ignore=['cuda_driver'])['consistent']


def test_table_is_sorted_and_well_formed():
    keys = list(cuda_driver.MIN_DRIVER)
    assert keys == sorted(keys, key=cuda_driver.version_tuple)
    drivers = [cuda_driver.version_tuple(cuda_driver.MIN_DRIVER[key]) for key in keys]
    assert all(drivers) and drivers == sorted(drivers)
