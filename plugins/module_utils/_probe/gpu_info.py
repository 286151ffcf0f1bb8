# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU list and NVIDIA driver version from what the torch_facts probe collected:
NVML results, ``nvidia-smi --query-gpu=... --format=csv,noheader`` output, or the
driver's ``/proc/driver/nvidia`` files -- in that order of preference."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_UNKNOWN = ('', '[n/a]', 'n/a', '[not supported]', '[unknown error]')
_PROC_VERSION_RE = re.compile(r'Module\b.*?(?<![\w.])(\d+\.\d+(?:\.\d+)?)(?![\w.])')


def _value(text):
    text = (text or '').strip()
    return None if text.lower() in _UNKNOWN else text


def gpu(name, capability, uuid):
    return {'name': _value(name), 'capability': _value(capability), 'uuid': _value(uuid)}


def parse_nvidia_smi(stdout, fields):
    """Rows of ``nvidia-smi --query-gpu=<fields> --format=csv,noheader`` -> (gpus, driver).

    A comma inside a GPU name is kept: extra columns are folded back into the name.
    """
    gpus = []
    drivers = []
    for line in (stdout or '').splitlines():
        if not line.strip():
            continue
        parts = line.split(',')
        extra = len(parts) - len(fields)
        if extra < 0:
            continue
        if extra and fields[0] == 'name':
            parts = [','.join(parts[:extra + 1])] + parts[extra + 1:]
        row = dict(zip(fields, parts))
        gpus.append(gpu(row.get('name'), row.get('compute_cap'), row.get('uuid')))
        driver = _value(row.get('driver_version'))
        if driver:
            drivers.append(driver)
    return gpus, (drivers[0] if drivers else None)


def parse_proc_version(text):
    """The driver version from ``/proc/driver/nvidia/version`` (proprietary or open module)."""
    for line in (text or '').splitlines():
        if line.startswith('NVRM version:'):
            match = _PROC_VERSION_RE.search(line)
            return match.group(1) if match else None
    return None


def parse_proc_information(text):
    """One GPU from ``/proc/driver/nvidia/gpus/<bus id>/information`` (no capability there)."""
    fields = {}
    for line in (text or '').splitlines():
        key, sep, value = line.partition(':')
        if sep:
            fields[key.strip()] = value.strip()
    return gpu(fields.get('Model'), None, fields.get('GPU UUID'))


def _capability(value):
    if isinstance(value, (list, tuple)) and len(value) >= 2:
        return '%s.%s' % (value[0], value[1])
    return None


def from_nvml(nvml):
    gpus = [gpu(item.get('name'), _capability(item.get('capability')), item.get('uuid'))
            for item in nvml.get('gpus') or []]
    return gpus, _value(nvml.get('driver'))


def from_proc(proc):
    infos = proc.get('gpus') or {}
    gpus = [parse_proc_information(infos[bus]) for bus in sorted(infos) if infos[bus] is not None]
    return gpus, parse_proc_version(proc.get('version'))


def cuda_version_string(value):
    """CUDA version encoded as 1000 * major + 10 * minor (cuDriverGetVersion, NVML) -> '12.4'."""
    try:
        value = int(value)
    except (TypeError, ValueError):
        return None
    if value <= 0:
        return None
    return '%d.%d' % (value // 1000, (value % 1000) // 10)


def cuda_driver(raw, nvml):
    """Newest CUDA version the driver supports (the "CUDA Version" nvidia-smi prints in its header):
    libcuda's cuDriverGetVersion, else NVML's nvmlSystemGetCudaDriverVersion."""
    libcuda = raw.get('libcuda') or {}
    found = cuda_version_string(libcuda.get('version'))
    if found is None and isinstance(nvml, dict):
        found = cuda_version_string(nvml.get('cuda_driver'))
    return found


def summarise(raw):
    """{'gpus': [...], 'driver': str|None, 'cuda_driver': str|None, 'source': 'nvml'|'nvidia-smi'|'proc'|None}.

    No source at all (a CPU node) is not an error: no GPUs and no driver.
    """
    raw = raw or {}
    nvml = raw.get('nvml')
    smi = raw.get('nvidia_smi')
    proc = raw.get('proc') or {}
    proc_gpus, proc_driver = from_proc(proc)
    if isinstance(nvml, dict) and 'error' not in nvml:
        gpus, driver = from_nvml(nvml)
        source = 'nvml'
    elif isinstance(smi, dict) and smi.get('rc') == 0:
        gpus, driver = parse_nvidia_smi(smi.get('stdout'), smi.get('fields') or [])
        source = 'nvidia-smi'
    elif proc_gpus or proc_driver:
        gpus, driver = proc_gpus, proc_driver
        source = 'proc'
    else:
        gpus, driver, source = [], None, None
    return {'gpus': gpus, 'driver': driver or proc_driver, 'cuda_driver': cuda_driver(raw, nvml), 'source': source}
