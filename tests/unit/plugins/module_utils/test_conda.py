# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers of conda's --json output and errors, against samples of real conda output."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
import yaml

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import conda
from ansible_collections.torchfleet.cluster.tests.unit.plugins.module_utils import conda_samples as samples


@pytest.mark.parametrize('text, expected', [
    ('conda 25.5.1\n', (25, 5, 1)),
    ('conda 4.14.0', (4, 14, 0)),
    ('26.7.1', (26, 7, 1)),
    ('conda 24.1', (24, 1, 0)),
    ('', None),
    ('not conda', None),
])
def test_parse_version(text, expected):
    assert conda.parse_version(text) == expected


# The key changed in 25.5.0 (conda#14666: auto_activate, alias auto_activate_base); from
# 25.5.1 `conda config` also accepts the alias. Writing both is MultipleKeysError. The
# collection switches at 25.5.1 (condarc.AUTO_ACTIVATE_SINCE, the one definition): 25.5.0
# reads the alias too, so it keeps auto_activate_base, as the conda_config module writes it.
@pytest.mark.parametrize('version, key', [
    ('4.14.0', 'auto_activate_base'),
    ('24.11.3', 'auto_activate_base'),
    ('25.3.1', 'auto_activate_base'),
    ('25.5.0', 'auto_activate_base'),
    ('25.5.1', 'auto_activate'),
    ('25.11.1', 'auto_activate'),
    ('26.7.1', 'auto_activate'),
    ((25, 7, 0), 'auto_activate'),
    (None, 'auto_activate_base'),
])
def test_auto_activate_key(version, key):
    assert conda.auto_activate_key(version) == key


@pytest.mark.parametrize('machine, system, subdir', [
    ('x86_64', 'Linux', 'linux-64'),
    ('aarch64', 'Linux', 'linux-aarch64'),
    ('ppc64le', 'Linux', 'linux-ppc64le'),
    ('arm64', 'Darwin', 'osx-arm64'),
    ('riscv64', 'Linux', 'linux-riscv64'),
])
def test_local_subdir(machine, system, subdir):
    assert conda.local_subdir(machine, system) == subdir


@pytest.mark.parametrize('text, version, platform, root', [
    (samples.INFO_26, (26, 7, 1), 'linux-64', '/opt/miniconda3'),
    (samples.INFO_4_3, (4, 3, 14), 'linux-64', '/home/yoh/anaconda2'),
])
def test_parse_info(text, version, platform, root):
    info = conda.parse_info(text)
    assert (info['version'], info['platform'], info['root_prefix']) == (version, platform, root)
    assert info['envs_dirs'][0].endswith('envs')


def test_parse_info_rejects_other_json():
    with pytest.raises(ValueError):
        conda.parse_info('[]')


@pytest.mark.parametrize('text, envs', [
    (samples.ENV_LIST_OLD, ['/opt/miniconda3', '/opt/miniconda3/envs/legacy']),
    (samples.ENV_LIST_INFO_DICT, ['/opt/miniconda3', '/opt/miniconda3/envs/.torchfleet/train-3f1c2a9b7d10']),
    (samples.ENV_LIST_25_11, ['/opt/miniconda3', '/opt/miniconda3/envs/.torchfleet/train-3f1c2a9b7d10']),
])
def test_parse_env_list(text, envs):
    assert conda.parse_env_list(text) == envs


def test_parse_list_modern():
    packages = conda.parse_list(samples.LIST_TRAIN)
    assert packages['numpy'] == {'name': 'numpy', 'version': '2.4.6', 'build': 'py311h71ddf71_0',
                                 'channel': 'conda-forge', 'manager': 'conda'}
    assert packages['torch']['manager'] == 'pip'
    assert packages['torch']['version'] == '2.13.0+cpu'
    # pip names are normalized as the facts report them
    assert 'typing-extensions' in packages
    assert packages['_libgcc_mutex']['build'] == 'conda_forge'


def test_parse_list_old_shape():
    packages = conda.parse_list(samples.LIST_4_3)
    assert packages['backports.shutil_get_terminal_size']['version'] == '1.0.0'


def test_parse_list_rejects_error_document():
    with pytest.raises(ValueError):
        conda.parse_list(samples.NOT_FOUND_JSON)


@pytest.mark.parametrize('stdout, stderr, name, packages, pip', [
    (samples.NOT_FOUND_JSON, '', 'PackagesNotFoundError', ['numpy=9.9.9'], []),
    (samples.NOT_FOUND_IN_CHANNELS_JSON, '', 'PackagesNotFoundInChannelsError', ['nonexistent-pkg', 'numpy=9.9.9'], []),
    (samples.PROGRESS_THEN_ERROR, '', 'PackagesNotFoundError', ['numpy=9.9.9'], []),
    ('', samples.NOT_FOUND_TEXT, 'PackagesNotFoundError', ['numpy=9.9.9'], []),
    (samples.PIP_FAILED_TEXT, '', 'CondaEnvException', [], ['torch==9.9.9']),
    (samples.UNSATISFIABLE_JSON, '', 'LibMambaUnsatisfiableError', [], []),
    ('', 'Segmentation fault\n', None, [], []),
])
def test_parse_error(stdout, stderr, name, packages, pip):
    error = conda.parse_error(stdout, stderr)
    assert error['exception_name'] == name
    assert error['packages'] == packages
    assert error['pip'] == pip


def test_parse_error_keeps_channels():
    error = conda.parse_error(samples.NOT_FOUND_JSON)
    assert error['channels'] == ['https://mirror.invalid/conda-forge/linux-64', 'https://mirror.invalid/conda-forge/noarch']


@pytest.mark.parametrize('stdout, fragments', [
    (samples.NOT_FOUND_JSON, ['conda env create failed (rc=1)', 'package(s) not available: numpy=9.9.9', 'PackagesNotFoundError']),
    (samples.PIP_FAILED_TEXT, ['pip could not install: torch==9.9.9', 'CondaEnvException: Pip failed']),
    (samples.UNSATISFIABLE_JSON, ['LibMambaUnsatisfiableError: Encountered problems while solving:']),
])
def test_describe_error_names_the_package(stdout, fragments):
    message = conda.describe_error('conda env create', conda.parse_error(stdout), 1)
    for fragment in fragments:
        assert fragment in message


@pytest.mark.parametrize('text, expected', [
    ('', None),
    ('{"a": 1}', {'a': 1}),
    ('Collecting package metadata\n{\n  "success": true\n}\n', {'success': True}),
    ('{"fetch": "x", "finished": true}\n\x00{"success": true}\n', {'success': True}),
    ('no json here', None),
])
def test_parse_json_output(text, expected):
    assert conda.parse_json_output(text) == expected


class FakeModule:
    def __init__(self, answers):
        self.answers = list(answers)
        self.calls = []

    def run_command(self, cmd, environ_update=None, **kwargs):
        self.calls.append((cmd, environ_update))
        return self.answers.pop(0)


def test_cli_runs_with_json_and_environment():
    module = FakeModule([(0, samples.INFO_26, ''), (0, samples.LIST_TRAIN, '')])
    cli = conda.CondaCli(module, '/opt/miniconda3/bin/conda', {'CONDA_OVERRIDE_CUDA': '12.9'})
    assert cli.info()['conda_version'] == '26.7.1'
    assert 'numpy' in cli.list_packages('/opt/miniconda3/envs/train')
    assert module.calls[0] == (['/opt/miniconda3/bin/conda', 'info', '--json'], {'CONDA_OVERRIDE_CUDA': '12.9'})
    assert module.calls[1][0] == ['/opt/miniconda3/bin/conda', 'list', '--json', '--prefix', '/opt/miniconda3/envs/train']


def test_cli_raises_with_parsed_error():
    module = FakeModule([(1, samples.NOT_FOUND_JSON, '')])
    cli = conda.CondaCli(module, '/opt/miniconda3/bin/conda')
    with pytest.raises(conda.CondaCommandError) as caught:
        cli.env_create('/tmp/w/environment.yml', '/opt/miniconda3/envs/.torchfleet/train-3f1c2a9b7d10')
    assert caught.value.rc == 1
    assert caught.value.error['packages'] == ['numpy=9.9.9']
    assert 'numpy=9.9.9' in caught.value.msg
    assert caught.value.cmd[1:4] == ['env', 'create', '--json']
    assert '--prune' not in caught.value.cmd


def test_cli_explicit_create_command():
    module = FakeModule([(0, samples.CREATE_SUCCESS_JSON, '')])
    cli = conda.CondaCli(module, '/c/bin/conda')
    cli.create_explicit('/w/explicit.txt', '/p')
    assert module.calls[0][0] == ['/c/bin/conda', 'create', '--json', '--yes', '--prefix', '/p', '--file', '/w/explicit.txt']


# --- real conda where the stand-in differed --------------------------------------

def test_multiple_keys_crash_under_json_is_named_from_the_traceback():
    """25.11.1/26.7.1 print no JSON for MultipleKeysError: the original error is the one reported."""
    error = conda.parse_error('', samples.MULTIPLE_KEYS_JSON_CRASH)
    assert error['exception_name'] == 'MultipleKeysError'
    assert error['message'] == 'Multiple aliased keys in file /opt/miniconda3/.condarc:'
    message = conda.describe_error('conda info', error, 1)
    assert 'MultipleKeysError: Multiple aliased keys in file /opt/miniconda3/.condarc' in message
    assert 'frozenset' not in message


def test_cli_info_fails_naming_the_condarc_when_conda_crashes():
    module = FakeModule([(1, '', samples.MULTIPLE_KEYS_JSON_CRASH)])
    cli = conda.CondaCli(module, '/opt/miniconda3/bin/conda')
    with pytest.raises(conda.CondaCommandError) as caught:
        cli.info()
    assert caught.value.error['exception_name'] == 'MultipleKeysError'
    assert '/opt/miniconda3/.condarc' in caught.value.msg


def test_as_root_env_list_keeps_only_the_installations_envs():
    """Other users' registered environments are data: never returned as ours."""
    module = FakeModule([(0, samples.ENV_LIST_AS_ROOT, '')])
    cli = conda.CondaCli(module, '/opt/miniconda3/bin/conda')
    assert cli.env_list('/opt/miniconda3') == [
        '/opt/miniconda3', '/opt/miniconda3/envs/.torchfleet/train-3f1c2a9b7d10', '/opt/miniconda3/envs/train']
    assert len(conda.parse_env_list(samples.ENV_LIST_AS_ROOT)) == 7


@pytest.mark.parametrize('envs, root, owned', [
    (['/opt/miniconda3/', '/opt/miniconda3/envs/a/../../../home/trainer/x'], '/opt/miniconda3', ['/opt/miniconda3']),
    (['/opt/miniconda3/envs'], '/opt/miniconda3/', []),
    (['/opt/miniconda3/envsx/a', '/opt/miniconda3/envs/b'], '/opt/miniconda3', ['/opt/miniconda3/envs/b']),
])
def test_envs_of_installation_compares_normalised_text(envs, root, owned):
    assert conda.envs_of_installation(envs, root) == owned


def test_parse_list_keeps_real_short_channel_names():
    packages = conda.parse_list(samples.LIST_MIRRORS)
    assert packages['six']['channel'] == 'localchan'
    assert packages['numpy']['channel'] == 'artifactory/api/conda/conda-forge'
    assert packages['python']['channel'] == 'pkgs/main' and packages['python']['manager'] == 'conda'


def test_env_create_output_with_full_fetch_records_is_the_outer_document():
    doc = conda.parse_json_output(samples.CREATE_WITH_FETCH_JSON)
    assert doc['success'] is True and doc['prefix'].endswith('train-3f1c2a9b7d10')
    assert doc['actions']['FETCH'][0]['md5'] == 'd7c89558ba9fa0495403155b64376d81'
    assert conda.parse_error(samples.CREATE_WITH_FETCH_JSON)['exception_name'] is None


@pytest.mark.parametrize('stdout, stderr', [
    ('', samples.RESOLVE_NOT_FOUND_TEXT),
    (samples.RESOLVE_NOT_FOUND_JSON, ''),
])
def test_classic_solver_resolve_package_not_found_names_the_packages(stdout, stderr):
    error = conda.parse_error(stdout, stderr)
    assert error['exception_name'] == 'ResolvePackageNotFound'
    assert error['packages'] == ['nosuchpkg=1.0', 'nosuchdep']
    assert 'package(s) not available: nosuchpkg=1.0, nosuchdep' in conda.describe_error('conda env create', error, 1)


def test_channel_objects_in_channel_urls_become_urls():
    error = conda.parse_error(samples.NOT_FOUND_CHANNEL_OBJECTS_JSON)
    assert error['packages'] == ['nosuchpkg']
    assert error['channels'] == ['https://mirror.invalid/conda-forge/linux-64', 'file:///srv/channels/localchan/noarch']
    message = conda.describe_error('conda env create', error, 1)
    assert 'nosuchpkg' in message and "{'auth'" not in message


# --- recorded real conda failures (fixtures/real_conda, see its README.md) ---------------------

REAL_CONDA = os.path.join(os.path.dirname(__file__), 'fixtures', 'real_conda')


def recorded(name):
    if not name:
        return ''
    with open(os.path.join(REAL_CONDA, name)) as handle:
        return handle.read()


def recorded_cases():
    with open(os.path.join(REAL_CONDA, 'cases.yml')) as handle:
        return yaml.safe_load(handle)['cases']


RECORDED_CASES = recorded_cases()


@pytest.mark.parametrize('case', RECORDED_CASES, ids=[case['id'] for case in RECORDED_CASES])
def test_recorded_failure_message_names_what_failed(case):
    stdout, stderr = recorded(case['stdout']), recorded(case['stderr'])
    rc = int(recorded(case.get('rc')) or 1)
    error = conda.parse_error(stdout, stderr)
    message = conda.describe_error(case['command'], error, rc)
    assert error['exception_name'] == case['exception_name']
    assert '\n' not in message
    for text in case['names']:
        assert message.count(text) == 1, (text, message)
    for text in case['hides']:
        assert text not in message


def test_recorded_explicit_lock_failure_reaches_the_module_through_the_cli():
    """conda_env fails with CondaCommandError.msg: it names the missing package file."""
    case = next(c for c in RECORDED_CASES if c['id'] == '25.11.1-explicit-lock-missing-file')
    module = FakeModule([(1, recorded(case['stdout']), recorded(case['stderr']))])
    cli = conda.CondaCli(module, '/opt/miniconda3/bin/conda')
    with pytest.raises(conda.CondaCommandError) as caught:
        cli.create_explicit('/w/explicit.txt', '/opt/miniconda3/envs/.torchfleet/train-3f1c2a9b7d10')
    assert caught.value.msg == ('conda create from the explicit lock failed (rc=1); '
                                'file not found: /srv/oracle/channel/linux-64/numpy-9.9.9-py311_0.conda')
    assert caught.value.error['failures'] == ['file not found: /srv/oracle/channel/linux-64/numpy-9.9.9-py311_0.conda']


# --- shapes built from conda's source, not recorded ----------------------------------------------
# conda/exceptions.py and conda/__init__.py (tags 25.11.1 and 26.7.1): CondaError.dump_map() is
# the public attributes plus exception_type, exception_name, message, error (the repr),
# caused_by and the message kwargs; CondaMultiError.dump_map() is exception_type,
# exception_name, errors (each member's dump_map) and error "Multiple Errors Encountered.".
# A checksum mismatch is only raised for a download (gateways/connection/download.py); a
# file:// package is copied unchecked, so no recording of it exists.

def conda_error(name, message, module='conda.exceptions', **kwargs):
    document = dict(caused_by='None', error='%s: %s' % (name, message), exception_name=name,
                    exception_type="<class '%s.%s'>" % (module, name), message=message)
    document.update(kwargs)
    return document


def checksum_mismatch(url, expected, actual, checksum_type='md5'):
    message = ("Conda detected a mismatch between the expected content and downloaded content\n"
               "for url '%s'.\n  download saved to: /opt/miniconda3/pkgs/%s\n  expected %s: %s\n  actual %s: %s\n"
               % (url, url.rsplit('/', 1)[1], checksum_type, expected, checksum_type, actual))
    return conda_error('ChecksumMismatchError', message, url=url, target_full_path='/opt/miniconda3/pkgs/' + url.rsplit('/', 1)[1],
                       checksum_type=checksum_type, expected_checksum=expected, actual_checksum=actual, partial_download=False)


def multi_error(*errors):
    return json.dumps({'error': 'Multiple Errors Encountered.', 'errors': list(errors), 'exception_name': 'CondaMultiError',
                       'exception_type': "<class 'conda.CondaMultiError'>"}, indent=2, sort_keys=True) + '\n'


NUMPY_URL = 'https://mirror.invalid/conda-forge/linux-64/numpy-2.4.6-py311h71ddf71_0.conda'
SIX_URL = 'https://mirror.invalid/conda-forge/noarch/six-1.17.0-pyhd8ed1ab_0.conda'
NUMPY_MISMATCH = checksum_mismatch(NUMPY_URL, '0' * 32, '586383ad85982ccbc784401036ce00de')

SOURCE_BUILT_CASES = [
    ('md5 mismatch, listed twice as conda does',
     multi_error(NUMPY_MISMATCH, NUMPY_MISMATCH),
     ['md5 mismatch for %s: expected %s, got 586383ad85982ccbc784401036ce00de' % (NUMPY_URL, '0' * 32)]),
    ('sha256 mismatch and a 404 of another package',
     multi_error(checksum_mismatch(NUMPY_URL, 'a' * 64, 'b' * 64, 'sha256'),
                 conda_error('CondaHTTPError', 'HTTP 404 NOT FOUND for url <%s>' % SIX_URL, url=SIX_URL, status_code=404,
                             reason='NOT FOUND', elapsed_time='00:00.1', response_details='', json={})),
     ['sha256 mismatch for %s: expected %s, got %s' % (NUMPY_URL, 'a' * 64, 'b' * 64),
      'HTTP 404 NOT FOUND for %s' % SIX_URL]),
    ('size mismatch',
     multi_error(checksum_mismatch(NUMPY_URL, 16918164, 4096, 'size')),
     ['size mismatch for %s: expected 16918164, got 4096' % NUMPY_URL]),
    ('a member that is no fetch failure keeps its name',
     multi_error(conda_error('CondaVerificationError', 'The package for numpy located at /opt/miniconda3/pkgs/numpy\n'
                             'appears to be corrupted.')),
     ['CondaVerificationError: The package for numpy located at /opt/miniconda3/pkgs/numpy']),
    ('a condarc the YAML scanner rejects (ConfigurationLoadError)',
     json.dumps(conda_error('ConfigurationLoadError', 'Unable to load configuration file.\n  path: /opt/miniconda3/.condarc\n'
                            '  reason: invalid yaml at line 0, column 8', module='conda.common.configuration',
                            path='/opt/miniconda3/.condarc', line=0, column=8)),
     ['Unable to load configuration file. path: /opt/miniconda3/.condarc reason: invalid yaml at line 0, column 8']),
]


@pytest.mark.parametrize('stdout, texts', [case[1:] for case in SOURCE_BUILT_CASES], ids=[case[0] for case in SOURCE_BUILT_CASES])
def test_source_built_failure_message_names_what_failed(stdout, texts):
    message = conda.describe_error('conda create from the explicit lock', conda.parse_error(stdout), 1)
    for text in texts:
        assert message.count(text) == 1, (text, message)
    assert 'Multiple Errors Encountered' not in message and '\n' not in message
