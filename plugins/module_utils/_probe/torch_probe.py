# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The torch_facts probe's command and the parsing of what it prints.

``PROBE`` is the source of ``payload``, which the environment's own interpreter
runs (``python -I -c PROBE OPTIONS_JSON``). It only collects raw data and prints one JSON
line after ``MARKER``; every interpretation (version strings, package merge, fingerprint,
GPU parsing) happens in this module, in the module process, where it is unit-testable
without torch.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import re

from ansible_collections.torchfleet.cluster.plugins.module_utils._probe import payload, gpu_info

MARKER = payload.MARKER
STAMP_FILE = payload.STAMP_FILE
SCHEMA = payload.SCHEMA
PIP_CHANNEL = 'pypi'
PIP_BUILD = 'pypi_0'


def _payload_source():
    """This node's probe program, read from its own file (inside the module's zip on a node)."""
    source = payload.__loader__.get_source(payload.__name__)
    return source.decode('utf-8') if isinstance(source, bytes) else source


PROBE = _payload_source()


class ProbeError(Exception):
    """The probe did not produce a usable result."""


def probe_command(python, probe_cuda=False, gpu_timeout=20, timeout_bin=None, timeout=None):
    """The argv that runs the probe once; ``timeout_bin`` wraps it in coreutils timeout.

    ``probe_cuda=None`` lets the probe decide (a CUDA build of torch on a node with a driver)."""
    options = json.dumps({'probe_cuda': None if probe_cuda is None else bool(probe_cuda),
                          'gpu_timeout': gpu_timeout}, sort_keys=True)
    argv = [python, '-I', '-c', PROBE, options]
    if timeout_bin and timeout:
        argv = [timeout_bin, '--kill-after=5', str(int(timeout))] + argv
    return argv


def parse_output(stdout):
    """The probe's JSON document from its stdout (noise before or after is ignored)."""
    for line in reversed((stdout or '').splitlines()):
        if line.startswith(MARKER):
            try:
                doc = json.loads(line[len(MARKER):])
            except ValueError as exc:
                raise ProbeError('probe printed malformed JSON: %s' % exc)
            if not isinstance(doc, dict):
                raise ProbeError('probe printed JSON that is not an object')
            return doc
    raise ProbeError('probe printed no result line')


def cudnn_version_string(value):
    """``torch.backends.cudnn.version()`` as "major.minor.patch".

    cuDNN encodes CUDNN_VERSION as major*1000 + minor*100 + patch up to 8.x
    (8902 -> "8.9.2") and major*10000 + minor*100 + patch from 9.0 on
    (90100 -> "9.1.0", 91002 -> "9.10.2").
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value
    value = int(value)
    if value >= 90000:
        return '%d.%d.%d' % (value // 10000, (value % 10000) // 100, value % 100)
    return '%d.%d.%d' % (value // 1000, (value % 1000) // 100, value % 100)


def nccl_version_string(value):
    """``torch.cuda.nccl.version()`` -- (2, 27, 3) or (2, 27, 3, "suffix") -- as "2.27.3"."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        numbers = [str(part) for part in value[:3]]
        suffix = ''.join(str(part) for part in value[3:])
        return '.'.join(numbers) + suffix
    if isinstance(value, int):
        # old torch returned NCCL_VERSION_CODE: major*1000+minor*100+patch (10000 from 2.9)
        if value >= 20900:
            return '%d.%d.%d' % (value // 10000, (value % 10000) // 100, value % 100)
        return '%d.%d.%d' % (value // 1000, (value % 1000) // 100, value % 100)
    return str(value)


def env_name(python):
    """The environment's name as the user addresses it: ``/x/envs/train/bin/python`` -> "train".

    Symlinks are deliberately not resolved: the live env is a symlink to a build directory.
    """
    path = os.path.normpath(python)
    bindir = os.path.dirname(path)
    envdir = os.path.dirname(bindir) if os.path.basename(bindir) in ('bin', 'Scripts') else bindir
    return os.path.basename(envdir) or None


def normalise_name(name):
    """PEP 503 normalisation, also applied to conda names."""
    return re.sub(r'[-_.]+', '-', name).lower()


_SUBDIR_RE = re.compile(r'^(noarch|(linux|osx|win|emscripten|wasi|zos)-[a-z0-9_]+)$')


def channel_name(channel):
    """A channel as its name, independent of the mirror (host and path prefix) it came through.

    "https://mirror.example/conda-forge/linux-64" -> "conda-forge",
    "https://mirror.example/artifactory/api/conda/conda-forge/noarch" -> "conda-forge",
    "https://mirror.example/pkgs/main/noarch" -> "pkgs/main", "conda-forge" unchanged.
    """
    channel = (channel or '').strip()
    if '://' in channel:
        channel = channel.split('://', 1)[1]
        channel = channel.split('/', 1)[1] if '/' in channel else ''
    parts = [part for part in channel.split('/') if part]
    if parts and _SUBDIR_RE.match(parts[-1]):
        parts = parts[:-1]
    if len(parts) >= 2 and parts[-2] == 'pkgs':
        return '/'.join(parts[-2:])  # the defaults channels: pkgs/main, pkgs/r, ...
    return parts[-1] if parts else ''


def package_entries(conda, pip):
    """Merge conda records and Python distributions into {normalised name: entry}.

    A distribution whose .dist-info/.egg-info directory belongs to a conda record is that
    record's (as ``conda list`` decides); otherwise, on a name clash, conda wins.
    Pip-only packages get conda's shape for them: build "pypi_0", channel "pypi".
    """
    entries = {}
    owned = set()
    for record in (conda or {}).get('records') or []:
        entries[normalise_name(record['name'])] = {
            'version': record['version'], 'build': record.get('build') or '',
            'channel': channel_name(record.get('channel'))}
        owned.update(record.get('infos') or [])
    for dist in pip or []:
        name = normalise_name(dist['name'])
        if name in entries or dist.get('info') in owned:
            continue
        entries[name] = {'version': dist['version'], 'build': PIP_BUILD, 'channel': PIP_CHANNEL}
    return entries


def packages_sha256(entries):
    """sha256 of the lines "name version build channel\\n" sorted by name (UTF-8)."""
    lines = ''.join('%s %s %s %s\n' % (name, entry['version'], entry['build'], entry['channel'])
                    for name, entry in sorted(entries.items()))
    return hashlib.sha256(lines.encode('utf-8')).hexdigest()


def duplicate_installs(conda, pip):
    """Packages installed by conda and, separately, by pip (a dist-info no conda record owns):
    {normalised name: {'conda': version, 'pip': version}}."""
    records = {}
    owned = set()
    for record in (conda or {}).get('records') or []:
        records[normalise_name(record['name'])] = record['version']
        owned.update(record.get('infos') or [])
    found = {}
    for dist in pip or []:
        name = normalise_name(dist['name'])
        if name in records and dist.get('info') not in owned:
            found[name] = {'conda': records[name], 'pip': dist['version']}
    return found


def built_packages(stamp):
    """The stamp's record of what was built, {normalised name: {version, build}}, or None (an older stamp)."""
    packages = (stamp or {}).get('packages')
    if not isinstance(packages, dict):
        return None
    built = {}
    for name, record in packages.items():
        if isinstance(record, dict) and record.get('version') is not None:
            built[normalise_name(name)] = {'version': str(record['version']), 'build': str(record.get('build') or '')}
    return built


def build_changes(built, entries):
    """Every package added, removed or changed since the build: {name: {'built': {version, build} | None,
    'live': {version, build} | None}}; None when the build recorded no package list."""
    if built is None or entries is None:
        return None
    changes = {}
    for name in sorted(set(built) | set(entries)):
        was = built.get(name)
        now = entries.get(name)
        live = None if now is None else {'version': now['version'], 'build': now['build']}
        if was != live:
            changes[name] = {'built': was, 'live': live}
    return changes


def env_facts(python, doc):
    conda = doc.get('conda')
    pip = doc.get('pip')
    stamp = (conda or {}).get('stamp')
    if not isinstance(stamp, dict):
        stamp = None
    entries = package_entries(conda, pip) if (conda is not None or pip is not None) else None
    built = built_packages(stamp)
    if stamp is not None:
        # provenance only: what was built is reported as build_changes, not as hundreds of fields
        stamp = dict((k, v) for k, v in stamp.items() if k != 'packages')
    return {
        'name': env_name(python),
        'prefix': doc.get('prefix'),
        'spec_sha256': (stamp or {}).get('spec_sha256'),
        'packages_sha256': None if entries is None else packages_sha256(entries),
        'packages': None if entries is None else dict(
            (name, entry['version']) for name, entry in sorted(entries.items())),
        'builds': None if entries is None else dict(
            (name, entry['build']) for name, entry in sorted(entries.items())),
        'duplicates': None if entries is None else duplicate_installs(conda, pip),
        'build_changes': build_changes(built, entries),
        'stamp': stamp,
    }


def null_facts(python):
    """The facts' shape with every value unknown (``ignore_missing``)."""
    return {
        'version': None, 'cuda': None, 'cudnn': None, 'nccl': None,
        'cuda_available': None, 'gpu_count': None, 'gpus': None, 'driver': None, 'driver_cuda': None, 'python': None,
        'distributed': {'available': None, 'gloo': None, 'nccl': None, 'mpi': None},
        'env': {'name': env_name(python), 'prefix': None, 'spec_sha256': None,
                'packages_sha256': None, 'packages': None, 'builds': None, 'duplicates': None,
                'build_changes': None, 'stamp': None},
    }


def cuda_probe_gpus(probe):
    gpus = []
    for device in probe.get('devices') or []:
        uuid = device.get('uuid')
        if uuid and not uuid.startswith(('GPU-', 'MIG-')):
            uuid = 'GPU-' + uuid
        gpus.append({'name': device.get('name'),
                     'capability': '%s.%s' % (device.get('major'), device.get('minor')),
                     'uuid': uuid})
    return gpus


def build_facts(python, doc):
    """``ansible_facts.torch`` from a probe document that imported torch."""
    torch = doc['torch']
    gpu = gpu_info.summarise(doc.get('gpu') or {})
    facts = null_facts(python)
    facts.update({
        'version': torch.get('version'),
        'cuda': torch.get('cuda'),
        'cudnn': cudnn_version_string(torch.get('cudnn')),
        'nccl': nccl_version_string(torch.get('nccl')),
        'python': doc.get('python'),
        'driver': gpu['driver'],
        'driver_cuda': gpu['cuda_driver'],
        'distributed': torch.get('distributed') or facts['distributed'],
        'env': env_facts(python, doc),
    })
    probe = torch.get('cuda_probe')
    if probe is not None:
        facts['gpus'] = cuda_probe_gpus(probe)
        facts['gpu_count'] = int(probe.get('count') or 0)
        facts['cuda_available'] = bool(probe.get('available'))
    else:
        # without initialising CUDA: a CUDA build on a node whose driver lists GPUs
        facts['gpus'] = gpu['gpus']
        facts['gpu_count'] = len(gpu['gpus'])
        facts['cuda_available'] = bool(facts['cuda']) and facts['gpu_count'] > 0
    return facts
