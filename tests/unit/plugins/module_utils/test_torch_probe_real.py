# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe run for real in an interpreter that has torch, checked against torch's own answers
and against ``python -m torch.utils.collect_env`` for the fields both report.

The interpreter is $TORCHFLEET_TEST_TORCH_PYTHON (the project's test runner sets it to the
venv's python, which has torch 2.13.0 CPU); without it the first of this interpreter, python3
and python that can import torch; without any, these tests are skipped.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._probe import torch_probe

ENV_VAR = 'TORCHFLEET_TEST_TORCH_PYTHON'
HAS_TORCH = 'import importlib.util, sys; sys.exit(importlib.util.find_spec("torch") is None)'

# torch's own answers, in the same interpreter (imports torch, so runs in a child process)
REFERENCE = r'''
import json, os, platform, re, sys, sysconfig
from importlib import metadata
import torch
import torch.distributed as dist

def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()

out = {"version": torch.__version__, "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
       "python": platform.python_version(), "prefix": sys.prefix, "purelib": sysconfig.get_paths()["purelib"],
       "distributed": {"available": dist.is_available(), "gloo": dist.is_gloo_available(),
                       "nccl": dist.is_nccl_available(), "mpi": dist.is_mpi_available()}}
try:
    out["nccl"] = ".".join(str(part) for part in torch.cuda.nccl.version()[:3])
except Exception:
    out["nccl"] = None
out["cuda_available"] = torch.cuda.is_available()
out["gpus"] = []
for index in range(torch.cuda.device_count() if out["cuda_available"] else 0):
    props = torch.cuda.get_device_properties(index)
    out["gpus"].append({"name": props.name, "capability": "%d.%d" % (props.major, props.minor)})
packages = {}
for d in metadata.distributions():
    if d.metadata["Name"]:
        packages.setdefault(norm(d.metadata["Name"]), d.version)
out["packages"] = packages
out["infos"] = dict((name, os.path.basename(str(metadata.distribution(name)._path))) for name in ("torch", "numpy"))
print(json.dumps(out))
'''


def can_import_torch(python):
    try:
        return subprocess.call([python, '-I', '-c', HAS_TORCH], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=60) == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture(scope='module')
def torch_python():
    configured = os.environ.get(ENV_VAR)
    if configured:
        if not can_import_torch(configured):
            pytest.fail('%s=%s cannot import torch' % (ENV_VAR, configured))
        return configured
    for candidate in (sys.executable, shutil.which('python3'), shutil.which('python')):
        if candidate and can_import_torch(candidate):
            return candidate
    pytest.skip('no interpreter with torch: set %s' % ENV_VAR)


def run(argv, **kwargs):
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=600, check=False, **kwargs)
    return proc.returncode, proc.stdout, proc.stderr


def probe(python, probe_cuda=False):
    argv = torch_probe.probe_command(python, probe_cuda=probe_cuda)
    rc, stdout, stderr = run(argv)
    assert rc == 0, stderr
    doc = torch_probe.parse_output(stdout)
    return doc, torch_probe.build_facts(python, doc)


@pytest.fixture(scope='module')
def reference(torch_python):
    rc, stdout, stderr = run([torch_python, '-I', '-c', REFERENCE])
    assert rc == 0, stderr
    return json.loads(stdout.strip().splitlines()[-1])


@pytest.fixture(scope='module')
def probed(torch_python):
    return probe(torch_python)


@pytest.fixture(scope='module')
def probed_cuda(torch_python):
    return probe(torch_python, probe_cuda=True)


@pytest.fixture(scope='module')
def collect_env(torch_python):
    rc, stdout, stderr = run([torch_python, '-m', 'torch.utils.collect_env'])
    assert rc == 0, stderr
    return stdout


def test_versions_are_torch_own_answers(probed, reference):
    dummy, facts = probed
    for key in ('version', 'cuda', 'nccl', 'python', 'distributed'):
        assert facts[key] == reference[key], key
    assert facts['env']['prefix'] == reference['prefix']


def test_cudnn_string_encodes_torch_own_number(probed, reference):
    cudnn = probed[1]['cudnn']
    if reference['cudnn'] is None:
        assert cudnn is None
    else:
        major, minor, patch = (int(part) for part in cudnn.split('.'))
        assert (major * 10000 if major >= 9 else major * 1000) + minor * 100 + patch == reference['cudnn']


def test_probe_cuda_matches_torch_cuda(probed_cuda, reference):
    facts = probed_cuda[1]
    assert facts['cuda_available'] == reference['cuda_available']
    assert facts['gpu_count'] == len(reference['gpus'])
    assert [dict(name=g['name'], capability=g['capability']) for g in facts['gpus']] == reference['gpus']


def test_estimate_without_cuda_init_agrees_with_torch(probed, reference):
    # without probe_cuda the module only knows "CUDA build + GPUs listed by the driver"
    facts = probed[1]
    assert facts['cuda_available'] == reference['cuda_available']
    assert facts['gpu_count'] == len(reference['gpus'])


def test_packages_are_importlib_metadata_of_the_env(probed, reference):
    doc, facts = probed
    if doc['conda'] is None:
        assert facts['env']['packages'] == reference['packages']
    assert facts['env']['packages']['torch'] == reference['version']
    assert re.match(r'^[0-9a-f]{64}$', facts['env']['packages_sha256'])


def collect_env_field(text, label):
    for line in text.splitlines():
        if line.startswith(label + ':'):
            return line.split(':', 1)[1].strip()
    raise AssertionError('collect_env printed no %r line' % label)


NOT_COLLECTED = ('Could not collect', 'N/A', 'None')


def test_agrees_with_collect_env(probed_cuda, collect_env):
    facts = probed_cuda[1]
    assert collect_env_field(collect_env, 'PyTorch version') == facts['version']
    built = collect_env_field(collect_env, 'CUDA used to build PyTorch')
    assert (None if built in NOT_COLLECTED else built) == facts['cuda']
    assert collect_env_field(collect_env, 'Python version').startswith(facts['python'] + ' ')
    assert collect_env_field(collect_env, 'Is CUDA available') == str(facts['cuda_available'])
    driver = collect_env_field(collect_env, 'Nvidia driver version')
    assert (None if driver in NOT_COLLECTED else driver) == facts['driver']
    models = collect_env_field(collect_env, 'GPU models and configuration')
    if models in NOT_COLLECTED:
        assert facts['gpus'] == []
    else:
        names = re.findall(r'^GPU \d+: (.+?)(?: \(UUID: .*\))?$', collect_env, re.MULTILINE) or [models]
        assert names == [g['name'] for g in facts['gpus']]


@pytest.fixture(scope='module')
def conda_like_env(torch_python, reference, tmp_path_factory):
    """envs/train -> envs/.torchfleet/train-0123456789ab: a venv that sees the torch
    interpreter's site-packages through a .pth file, with conda-meta records and a stamp."""
    root = tmp_path_factory.mktemp('miniconda')
    build = root / 'envs' / '.torchfleet' / 'train-0123456789ab'
    rc, dummy, stderr = run([torch_python, '-m', 'venv', '--without-pip', str(build)])
    if rc != 0:
        pytest.skip('cannot create a venv with %s: %s' % (torch_python, stderr))
    site = run([str(build / 'bin' / 'python'), '-I', '-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'])
    with open(os.path.join(site[1].strip(), 'torch-site.pth'), 'w') as handle:
        handle.write(reference['purelib'] + '\n')
    os.symlink('.torchfleet/train-0123456789ab', str(root / 'envs' / 'train'))
    meta = build / 'conda-meta'
    meta.mkdir()
    records = [
        ('numpy', '2.4.6', 'py311_conda', 'https://conda.mirror.example/conda-forge/linux-64', reference['infos']['numpy']),
        ('pytorch', reference['version'], 'cpu_py311_0', 'https://conda.mirror.example/pytorch/linux-64',
         reference['infos']['torch']),
        ('python', reference['python'], 'h_0_cpython', 'https://conda.mirror.example/conda-forge/linux-64', None),
    ]
    for name, version, build_string, channel, info in records:
        files = ['bin/x'] + (['lib/python3/site-packages/%s/METADATA' % info] if info else [])
        (meta / ('%s-%s-%s.json' % (name, version, build_string))).write_text(json.dumps({
            'name': name, 'version': version, 'build': build_string, 'build_number': 0, 'channel': channel,
            'subdir': 'linux-64', 'fn': '%s-%s-%s.conda' % (name, version, build_string), 'files': files}, indent=2))
    stamp = {'collection_version': '0.1.0', 'lock_sha256': None, 'name': 'train',
             'spec_file': 'environment.yml', 'spec_sha256': 'ab' * 32}
    (meta / 'torchfleet-stamp').write_text(json.dumps(stamp, sort_keys=True))
    return root, stamp


def test_conda_like_env_through_its_symlink(conda_like_env, reference):
    root, stamp = conda_like_env
    python = str(root / 'envs' / 'train' / 'bin' / 'python')
    doc, facts = probe(python)
    env = facts['env']
    assert env['name'] == 'train'
    assert env['prefix'] == str(root / 'envs' / 'train')
    assert (env['spec_sha256'], env['stamp']) == (stamp['spec_sha256'], stamp)
    assert env['packages']['numpy'] == '2.4.6'  # the conda record, not the pip metadata
    assert env['packages']['pytorch'] == reference['version']
    assert 'torch' not in env['packages']  # its dist-info belongs to the pytorch record
    assert env['packages']['python'] == reference['python']
    pip_only = set(reference['packages']) - {'numpy', 'torch'}
    assert pip_only <= set(env['packages'])
    assert facts['version'] == reference['version']
    assert doc['conda']['errors'] == []
