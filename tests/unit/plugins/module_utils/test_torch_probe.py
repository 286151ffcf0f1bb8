# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsing of the probe's document: versions, env name, channels, package merge, fingerprint."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._probe import torch_probe
from ansible_collections.torchfleet.cluster.tests.unit.plugins.module_utils import test_torch_probe_recordings as rec

CUDNN_CASES = [
    (None, None),
    (7605, '7.6.5'),
    (8902, '8.9.2'),
    (8600, '8.6.0'),
    (90100, '9.1.0'),
    (90501, '9.5.1'),
    (91002, '9.10.2'),
    ('9.1.0', '9.1.0'),
]


@pytest.mark.parametrize('value, expected', CUDNN_CASES)
def test_cudnn_version_string(value, expected):
    assert torch_probe.cudnn_version_string(value) == expected


NCCL_CASES = [
    (None, None),
    ([2, 27, 3], '2.27.3'),
    ((2, 21, 5), '2.21.5'),
    ((2, 21, 5, '+cuda12.4'), '2.21.5+cuda12.4'),
    (2708, '2.7.8'),
    (21903, '2.19.3'),
    ('2.18.1', '2.18.1'),
]


@pytest.mark.parametrize('value, expected', NCCL_CASES)
def test_nccl_version_string(value, expected):
    assert torch_probe.nccl_version_string(value) == expected


ENV_NAME_CASES = [
    ('/opt/miniconda3/envs/train/bin/python', 'train'),
    ('/opt/miniconda3/envs/train/bin/python3.11', 'train'),
    ('/opt/miniconda3/envs/train//bin/python', 'train'),
    ('/opt/miniconda3/bin/python', 'miniconda3'),
    ('/work/main/.venv/bin/python', '.venv'),
    ('/srv/pythons/python3', 'pythons'),
]


@pytest.mark.parametrize('python, expected', ENV_NAME_CASES)
def test_env_name_is_taken_from_the_path_as_given(python, expected):
    assert torch_probe.env_name(python) == expected


CHANNEL_CASES = [
    ('https://conda.mirror.example/conda-forge/linux-64', 'conda-forge'),
    ('https://conda.mirror.example/conda-forge/noarch', 'conda-forge'),
    ('https://mirror.example/pkgs/main/linux-aarch64', 'pkgs/main'),
    ('https://mirror.example/t/tk-123/nvidia/linux-64', 'nvidia'),
    ('https://mirror.example/artifactory/api/conda/conda-forge/noarch', 'conda-forge'),
    ('file:///srv/torchfleet-wheelhouse/channels/pkgs/main/noarch', 'pkgs/main'),
    ('file:///srv/channel/linux-64', 'channel'),
    ('https://mirror.example/', ''),
    ('conda-forge', 'conda-forge'),
    # real `conda list --json` channel fields (Channel.name): an unconfigured mirror's URL path,
    # a file:// channel's last path component, the defaults' pkgs/<name>
    ('artifactory/api/conda/conda-forge', 'conda-forge'),
    ('localchan', 'localchan'),
    ('pkgs/main', 'pkgs/main'),
    ('file:///srv/channels/localchan/noarch', 'localchan'),
    ('file:///data/mirrors/b/conda-forge/linux-64', 'conda-forge'),
    ('pypi', 'pypi'),
    ('', ''),
    (None, ''),
]


@pytest.mark.parametrize('channel, expected', CHANNEL_CASES)
def test_channel_name_drops_mirror_and_subdir(channel, expected):
    assert torch_probe.channel_name(channel) == expected


def record(name, version, build='0', channel='conda-forge', infos=()):
    return {'name': name, 'version': version, 'build': build, 'channel': channel, 'infos': list(infos)}


def dist(name, version, info=None):
    return {'name': name, 'version': version, 'info': info or '%s-%s.dist-info' % (name, version)}


MERGE_CASES = [
    ('pip only (plain venv)', None, [dist('Jinja2', '3.1.6'), dist('zope.interface', '7.0')],
     {'jinja2': ('3.1.6', 'pypi_0', 'pypi'), 'zope-interface': ('7.0', 'pypi_0', 'pypi')}),
    ('conda only', {'records': [record('python', '3.11.13', 'h_0')]}, [],
     {'python': ('3.11.13', 'h_0', 'conda-forge')}),
    ('conda record owns its dist-info', {'records': [record('numpy', '2.3.2', 'py311_0', infos=['numpy-2.3.2.dist-info'])]},
     [dist('numpy', '2.3.2')], {'numpy': ('2.3.2', 'py311_0', 'conda-forge')}),
    ('owned under another name (pytorch/torch)',
     {'records': [record('pytorch', '2.5.1', 'py3.11_cuda12.4_0', 'pytorch', ['torch-2.5.1.dist-info'])]},
     [dist('torch', '2.5.1')], {'pytorch': ('2.5.1', 'py3.11_cuda12.4_0', 'pytorch')}),
    ('name clash: conda wins', {'records': [record('pyyaml', '6.0.2', 'py311_2')]}, [dist('PyYAML', '6.0.1')],
     {'pyyaml': ('6.0.2', 'py311_2', 'conda-forge')}),
    ('first distribution on sys.path wins', None, [dist('six', '1.17.0'), dist('six', '1.16.0')],
     {'six': ('1.17.0', 'pypi_0', 'pypi')}),
    ('nothing', {'records': []}, [], {}),
]


@pytest.mark.parametrize('dummy, conda, pip, expected', MERGE_CASES, ids=[case[0] for case in MERGE_CASES])
def test_package_entries(dummy, conda, pip, expected):
    entries = torch_probe.package_entries(conda, pip)
    assert dict((name, (e['version'], e['build'], e['channel'])) for name, e in entries.items()) == expected


def test_packages_sha256_is_sha256_of_sorted_lines():
    entries = {'b': {'version': '2', 'build': 'pypi_0', 'channel': 'pypi'},
               'a': {'version': '1.0', 'build': 'h1_0', 'channel': 'conda-forge'}}
    lines = 'a 1.0 h1_0 conda-forge\nb 2 pypi_0 pypi\n'
    assert torch_probe.packages_sha256(entries) == hashlib.sha256(lines.encode('utf-8')).hexdigest()


def test_packages_sha256_ignores_mirror_but_not_build():
    def digest(channel, build):
        return torch_probe.packages_sha256(torch_probe.package_entries(
            {'records': [record('numpy', '2.3.2', build, channel)]}, []))
    assert digest('https://a.example/conda-forge/linux-64', 'b0') == digest('https://b.example/conda-forge/linux-64', 'b0')
    assert digest('https://a.example/conda-forge/linux-64', 'b0') != digest('https://a.example/conda-forge/linux-64', 'b1')


def test_env_facts_of_the_h200_environment():
    env = torch_probe.env_facts('/opt/miniconda3/envs/train/bin/python', rec.h200_doc())
    assert env['name'] == 'train'
    assert env['prefix'] == '/opt/miniconda3/envs/train'
    assert env['spec_sha256'] == rec.STAMP['spec_sha256']
    assert env['stamp'] == rec.STAMP
    assert env['packages_sha256'] == hashlib.sha256(rec.H200_PACKAGE_LINES.encode('utf-8')).hexdigest()
    assert list(env['packages']) == [line.split(' ')[0] for line in rec.H200_PACKAGE_LINES.splitlines()]
    assert env['packages']['torch'] == '2.8.0+cu128'
    assert env['packages']['numpy'] == '2.3.2'


def test_env_facts_without_package_sources():
    env = torch_probe.env_facts('/x/bin/python', {'prefix': '/x', 'conda': None, 'pip': None})
    assert env == {'name': 'x', 'prefix': '/x', 'spec_sha256': None, 'packages_sha256': None,
                   'packages': None, 'builds': None, 'duplicates': None, 'build_changes': None, 'stamp': None}


def _record(name, version, build, infos=()):
    return {'name': name, 'version': version, 'build': build, 'channel': 'https://mirror.invalid/conda-forge/linux-64',
            'infos': list(infos)}


# What conda_env recorded at build time (stamp 'packages', from `conda list --json`), and the live prefix.
BUILT = {'numpy': {'version': '2.4.6', 'build': 'py311h_0', 'channel': 'conda-forge', 'manager': 'conda'},
         'python': {'version': '3.11.13', 'build': 'h_cpython', 'channel': 'conda-forge', 'manager': 'conda'},
         'torch': {'version': '2.13.0+cpu', 'build': 'pypi_0', 'channel': 'pypi', 'manager': 'pip'},
         'typing_extensions': {'version': '4.14.1', 'build': 'pypi_0', 'channel': 'pypi', 'manager': 'pip'}}
BUILD_CASES = [
    ('unchanged', [], [], {}),
    ('added by hand', [], [{'name': 'six', 'version': '1.17.0', 'info': 'six-1.17.0.dist-info'}],
     {'six': {'built': None, 'live': {'version': '1.17.0', 'build': 'pypi_0'}}}),
    ('removed by hand', ['typing_extensions'], [],
     {'typing-extensions': {'built': {'version': '4.14.1', 'build': 'pypi_0'}, 'live': None}}),
    ('other build string', ['numpy'], [_record('numpy', '2.4.6', 'py311cuda_1')],
     {'numpy': {'built': {'version': '2.4.6', 'build': 'py311h_0'}, 'live': {'version': '2.4.6', 'build': 'py311cuda_1'}}}),
]


@pytest.mark.parametrize('case, drop, add, changes', BUILD_CASES, ids=[c[0] for c in BUILD_CASES])
def test_build_changes_against_the_stamp(case, drop, add, changes):
    records = [_record(n, r['version'], r['build']) for n, r in BUILT.items() if r['manager'] == 'conda' and n not in drop]
    pip = [{'name': n, 'version': r['version'], 'info': '%s-%s.dist-info' % (n, r['version'])}
           for n, r in BUILT.items() if r['manager'] == 'pip' and n not in drop]
    records += [r for r in add if 'build' in r]
    pip += [d for d in add if 'info' in d]
    stamp = {'name': 'train', 'spec_sha256': 'a' * 64, 'collection_version': '0.1.0', 'packages': BUILT}
    env = torch_probe.env_facts('/x/bin/python', {'prefix': '/x', 'conda': {'records': records, 'stamp': stamp}, 'pip': pip})
    assert env['build_changes'] == changes, case
    assert 'packages' not in env['stamp']  # the build record is not compared field by field


def test_no_build_record_in_an_older_stamp():
    env = torch_probe.env_facts('/x/bin/python', {'prefix': '/x', 'conda': {'records': [], 'stamp': {'name': 't'}}, 'pip': []})
    assert env['build_changes'] is None


def test_a_pip_copy_over_a_conda_package_is_a_duplicate():
    conda_meta = {'records': [_record('numpy', '2.4.6', 'py311h_0', ['numpy-2.4.6.dist-info'])], 'stamp': None}
    pip = [{'name': 'numpy', 'version': '2.4.5', 'info': 'numpy-2.4.5.dist-info'},
           {'name': 'numpy', 'version': '2.4.6', 'info': 'numpy-2.4.6.dist-info'}]
    env = torch_probe.env_facts('/x/bin/python', {'prefix': '/x', 'conda': conda_meta, 'pip': pip})
    assert env['duplicates'] == {'numpy': {'conda': '2.4.6', 'pip': '2.4.5'}}
    assert env['builds'] == {'numpy': 'py311h_0'}


def test_env_facts_ignores_a_stamp_that_is_not_an_object():
    doc = {'prefix': '/x', 'conda': {'records': [], 'stamp': ['not', 'a', 'dict']}, 'pip': []}
    env = torch_probe.env_facts('/x/bin/python', doc)
    assert (env['stamp'], env['spec_sha256']) == (None, None)


PARSE_CASES = [
    ('result only', torch_probe.MARKER + '{"a": 1}\n', {'a': 1}),
    ('noise around it', 'warming up\n' + torch_probe.MARKER + '{"a": 1}\nbye\n', {'a': 1}),
    ('last result wins', torch_probe.MARKER + '{"a": 1}\n' + torch_probe.MARKER + '{"a": 2}\n', {'a': 2}),
]


@pytest.mark.parametrize('dummy, stdout, expected', PARSE_CASES, ids=[case[0] for case in PARSE_CASES])
def test_parse_output(dummy, stdout, expected):
    assert torch_probe.parse_output(stdout) == expected


PARSE_ERROR_CASES = [
    ('', 'no result line'),
    (None, 'no result line'),
    ('{"a": 1}\n', 'no result line'),
    (torch_probe.MARKER + '{"a": \n', 'malformed JSON'),
    (torch_probe.MARKER + '[1, 2]\n', 'not an object'),
]


@pytest.mark.parametrize('stdout, message', PARSE_ERROR_CASES)
def test_parse_output_errors(stdout, message):
    with pytest.raises(torch_probe.ProbeError, match=message):
        torch_probe.parse_output(stdout)


COMMAND_CASES = [
    (dict(), ['/e/bin/python', '-I', '-c', torch_probe.PROBE, '{"gpu_timeout": 20, "probe_cuda": false}']),
    (dict(probe_cuda=True, gpu_timeout=5, timeout_bin='/usr/bin/timeout', timeout=60),
     ['/usr/bin/timeout', '--kill-after=5', '60', '/e/bin/python', '-I', '-c', torch_probe.PROBE,
      '{"gpu_timeout": 5, "probe_cuda": true}']),
    (dict(timeout_bin=None, timeout=60), ['/e/bin/python', '-I', '-c', torch_probe.PROBE,
                                          '{"gpu_timeout": 20, "probe_cuda": false}']),
]


@pytest.mark.parametrize('kwargs, expected', COMMAND_CASES)
def test_probe_command(kwargs, expected):
    assert torch_probe.probe_command('/e/bin/python', **kwargs) == expected


def test_probe_source_has_no_dollar():
    assert '$' not in torch_probe.PROBE


def test_null_facts_shape_matches_real_facts():
    real = torch_probe.build_facts('/e/bin/python', torch_probe.parse_output(rec.recorded('venv_torch_2_13_cpu')[1]))
    null = torch_probe.null_facts('/e/bin/python')
    assert sorted(null) == sorted(real)
    assert sorted(null['env']) == sorted(real['env'])
    assert sorted(null['distributed']) == sorted(real['distributed'])
    assert json.dumps(null)  # plain JSON types only


BUILD_CASES = [
    # name, cuda, cudnn, nccl, cuda_available, gpu_count, driver, first gpu
    ('h200_nvidia_smi', '12.8', '9.10.2', '2.27.3', True, 8, rec.H200_DRIVER, rec.H200_GPUS[0]),
    ('h200_nvml', '12.8', '9.10.2', '2.27.3', True, 8, rec.H200_DRIVER, rec.H200_GPUS[0]),
    ('h200_probe_cuda', '12.8', '9.10.2', '2.27.3', True, 8, rec.H200_DRIVER, rec.H200_GPUS[0]),
    ('h200_proc_only', '12.8', '9.10.2', '2.27.3', True, 8, rec.H200_DRIVER,
     dict(rec.H200_GPUS[0], capability=None)),
    ('gpu_build_no_driver', '12.8', '9.10.2', '2.27.3', False, 0, None, None),
    ('old_driver_no_compute_cap', '12.8', '9.10.2', '2.27.3', True, 1, '470.256.02',
     {'name': 'Tesla V100-SXM2-32GB', 'capability': None, 'uuid': 'GPU-' + rec.H200_UUIDS[0]}),
]


@pytest.mark.parametrize('name, cuda, cudnn, nccl, available, count, driver, first', BUILD_CASES,
                         ids=[case[0] for case in BUILD_CASES])
def test_build_facts_of_gpu_nodes(name, cuda, cudnn, nccl, available, count, driver, first):
    facts = torch_probe.build_facts('/opt/miniconda3/envs/train/bin/python', rec.SYNTHETIC_DOCS[name]())
    assert (facts['cuda'], facts['cudnn'], facts['nccl']) == (cuda, cudnn, nccl)
    assert (facts['cuda_available'], facts['gpu_count'], facts['driver']) == (available, count, driver)
    assert len(facts['gpus']) == count
    assert (facts['gpus'][0] if facts['gpus'] else None) == first
    assert facts['version'] == '2.8.0+cu128'
    assert facts['distributed'] == {'available': True, 'gloo': True, 'nccl': True, 'mpi': False}


def test_probe_cuda_result_overrides_the_driver_view():
    doc = rec.h200_probe_cuda_doc()
    doc['torch']['cuda_probe'] = {'available': False, 'count': 0, 'devices': []}
    facts = torch_probe.build_facts('/opt/miniconda3/envs/train/bin/python', doc)
    assert (facts['cuda_available'], facts['gpu_count'], facts['gpus']) == (False, 0, [])
    assert facts['driver'] == rec.H200_DRIVER


def test_cuda_probe_uuids_keep_an_existing_prefix():
    gpus = torch_probe.cuda_probe_gpus({'devices': [
        {'name': 'A', 'major': 8, 'minor': 0, 'uuid': 'MIG-1'},
        {'name': 'B', 'major': 8, 'minor': 6, 'uuid': None},
        {'name': 'C', 'major': 9, 'minor': 0, 'uuid': 'abc'}]})
    assert [(g['capability'], g['uuid']) for g in gpus] == [('8.0', 'MIG-1'), ('8.6', None), ('9.0', 'GPU-abc')]


# One environment as conda-meta records it on nodes fed from different mirrors of the same
# channels (conda-meta keeps the full channel URL with its subdir; conda list shows Channel.name).
MIRROR_RECORDS = {
    'https mirror': ('https://mirror-a.invalid/conda-forge/noarch', 'https://mirror-a.invalid/pkgs/main/linux-64'),
    'artifactory': ('https://mirror-b.invalid/artifactory/api/conda/conda-forge/noarch',
                    'https://mirror-b.invalid/artifactory/api/conda/pkgs/main/linux-64'),
    'file mirror': ('file:///data/mirrors/b/conda-forge/noarch', 'file:///data/mirrors/b/pkgs/main/linux-64'),
    'stand-in alias': ('file:///srv/torchfleet-wheelhouse/channels/conda-forge/noarch',
                       'file:///srv/torchfleet-wheelhouse/channels/pkgs/main/linux-64'),
    'short names': ('conda-forge', 'pkgs/main'),
}


def test_nodes_built_from_two_mirrors_of_the_same_channels_do_not_drift():
    digests = set()
    for forge, main in MIRROR_RECORDS.values():
        entries = torch_probe.package_entries(
            {'records': [record('six', '1.16.0', 'pyhd8ed1ab_0', forge), record('python', '3.11.13', 'h9e4cc4f_0_cpython', main)]},
            [])
        assert entries['six']['channel'] == 'conda-forge' and entries['python']['channel'] == 'pkgs/main'
        digests.add(torch_probe.packages_sha256(entries))
    assert len(digests) == 1


def test_a_local_channel_is_not_the_same_as_conda_forge():
    def digest(channel):
        return torch_probe.packages_sha256(torch_probe.package_entries({'records': [record('six', '1.16.0', 'b0', channel)]}, []))
    assert digest('file:///srv/channels/localchan/noarch') == digest('localchan')
    assert digest('file:///srv/channels/localchan/noarch') != digest('https://mirror-a.invalid/conda-forge/noarch')
