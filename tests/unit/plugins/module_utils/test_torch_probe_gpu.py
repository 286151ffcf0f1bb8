# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU list and driver from NVML, nvidia-smi CSV and /proc/driver/nvidia (gpu_info)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._probe import gpu_info
from ansible_collections.torchfleet.cluster.tests.unit.plugins.module_utils import test_torch_probe_recordings as rec

FIELDS = ['name', 'compute_cap', 'uuid', 'driver_version']

SMI_CASES = [
    ('two rows', FIELDS,
     'NVIDIA H200, 9.0, GPU-aaa, 570.124.06\nNVIDIA H200, 9.0, GPU-bbb, 570.124.06\n',
     [('NVIDIA H200', '9.0', 'GPU-aaa'), ('NVIDIA H200', '9.0', 'GPU-bbb')], '570.124.06'),
    ('comma in the name', FIELDS, 'NVIDIA RTX A6000, Ada, 8.9, GPU-ccc, 550.54.15\n',
     [('NVIDIA RTX A6000, Ada', '8.9', 'GPU-ccc')], '550.54.15'),
    ('unknown values', FIELDS, 'NVIDIA A100-SXM4-80GB, [N/A], GPU-ddd, [N/A]\n',
     [('NVIDIA A100-SXM4-80GB', None, 'GPU-ddd')], None),
    ('no compute_cap field', ['name', 'uuid', 'driver_version'], 'Tesla V100-SXM2-32GB, GPU-eee, 470.256.02\n',
     [('Tesla V100-SXM2-32GB', None, 'GPU-eee')], '470.256.02'),
    ('blank and short lines', FIELDS, '\n\nNo devices were found\n', [], None),
    ('nothing', FIELDS, '', [], None),
]


@pytest.mark.parametrize('dummy, fields, stdout, gpus, driver', SMI_CASES, ids=[case[0] for case in SMI_CASES])
def test_parse_nvidia_smi(dummy, fields, stdout, gpus, driver):
    parsed, found = gpu_info.parse_nvidia_smi(stdout, fields)
    assert [(g['name'], g['capability'], g['uuid']) for g in parsed] == gpus
    assert found == driver


PROC_VERSION_CASES = [
    (rec.PROC_VERSION_OPEN, '570.124.06'),
    (rec.PROC_VERSION_PROPRIETARY, '535.183.01'),
    ('NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  560.35.03  Release Build\n', '560.35.03'),
    ('NVRM version: NVIDIA UNIX x86_64 Kernel Module  390.157  Wed Oct 12 09:19:07 UTC 2022\n', '390.157'),
    ('GCC version:  gcc version 12.2.0\n', None),
    ('', None),
    (None, None),
]


@pytest.mark.parametrize('text, expected', PROC_VERSION_CASES)
def test_parse_proc_version(text, expected):
    assert gpu_info.parse_proc_version(text) == expected


def test_parse_proc_information():
    text = rec.proc_information(rec.H200_UUIDS[1], rec.H200_BUSES[1], 1)
    assert gpu_info.parse_proc_information(text) == {
        'name': 'NVIDIA H200', 'capability': None, 'uuid': 'GPU-' + rec.H200_UUIDS[1]}


SUMMARY_CASES = [
    ('nothing at all (CPU node)', {}, 0, None, None),
    ('no driver: smi fails, no /proc', rec.no_driver_doc()['gpu'], 0, None, None),
    ('nvidia-smi', rec.h200_doc()['gpu'], 8, rec.H200_DRIVER, 'nvidia-smi'),
    ('NVML first', rec.h200_nvml_doc()['gpu'], 8, rec.H200_DRIVER, 'nvml'),
    ('NVML failed: nvidia-smi', dict(rec.h200_doc()['gpu'], nvml={'error': 'NVMLError_LibraryNotFound'}),
     8, rec.H200_DRIVER, 'nvidia-smi'),
    ('/proc only', rec.h200_proc_only_doc()['gpu'], 8, rec.H200_DRIVER, 'proc'),
    ('/proc version but no GPU directories', {'proc': {'version': rec.PROC_VERSION_OPEN, 'gpus': {}}},
     0, '570.124.06', 'proc'),
    ('smi without driver column falls back to /proc for the driver',
     {'nvidia_smi': {'rc': 0, 'fields': ['name', 'uuid'], 'stdout': 'NVIDIA H200, GPU-x\n'},
      'proc': {'version': rec.PROC_VERSION_OPEN, 'gpus': {}}}, 1, '570.124.06', 'nvidia-smi'),
    ('NVML with no GPUs is authoritative', dict(rec.h200_doc()['gpu'], nvml={'driver': '570.124.06', 'gpus': []}),
     0, '570.124.06', 'nvml'),
]


@pytest.mark.parametrize('dummy, raw, count, driver, source', SUMMARY_CASES, ids=[case[0] for case in SUMMARY_CASES])
def test_summarise(dummy, raw, count, driver, source):
    summary = gpu_info.summarise(raw)
    assert (len(summary['gpus']), summary['driver'], summary['source']) == (count, driver, source)


def test_proc_gpus_are_in_bus_order():
    raw = rec.h200_proc_only_doc()['gpu']
    raw['proc']['gpus'] = dict(reversed(list(raw['proc']['gpus'].items())))
    assert [g['uuid'] for g in gpu_info.summarise(raw)['gpus']] == ['GPU-' + uuid for uuid in rec.H200_UUIDS]


def test_nvml_capability_tuple_becomes_a_string():
    gpus, driver = gpu_info.from_nvml({'driver': '535.1', 'gpus': [
        {'name': 'A', 'uuid': 'GPU-1', 'capability': [8, 6]}, {'name': 'B', 'uuid': 'GPU-2', 'capability': None}]})
    assert [g['capability'] for g in gpus] == ['8.6', None]
    assert driver == '535.1'
