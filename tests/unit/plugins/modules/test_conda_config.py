# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Data-driven tests of torchfleet.cluster.conda_config and its module_utils.

``run_command`` answers are recorded outputs of real conda releases."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import stat

import pytest

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import condarc
from ansible_collections.torchfleet.cluster.plugins.modules import conda_config
from ansible_collections.torchfleet.cluster.tests.unit.plugins.modules.module_exits import ExitJson, FailJson

# Recorded `conda --version` answers (stdout, rc 0) of real releases.
CONDA_VERSION_OUTPUT = {
    '4.14.0': 'conda 4.14.0\n',
    '24.11.3': 'conda 24.11.3\n',
    '25.5.0': 'conda 25.5.0\n',
    '25.5.1': 'conda 25.5.1\n',
    '25.11.1': 'conda 25.11.1\n',
    '26.7.1': 'conda 26.7.1\n',
}

# What conda >= 25.11 prints, rc 1, when one .condarc names both keys (conda/conda-build#5751).
MULTIPLE_KEYS_ERROR = (
    '\nMultipleKeysError: Multiple aliased keys in file /opt/miniconda3/.condarc:\n'
    '  - auto_activate_base\n  - auto_activate\nMust declare only one. Prefer \'auto_activate\'\n\n'
)

# What real 25.11.1/26.7.1 leave under --json for the same file (conda_samples has the whole
# traceback): nothing on stdout, the chained traceback ending in the serialiser's TypeError.
MULTIPLE_KEYS_JSON_CRASH = (
    'Traceback (most recent call last):\n'
    'conda.common.configuration.MultipleKeysError: Multiple aliased keys in file /opt/miniconda3/.condarc:\n'
    '  - auto_activate\n  - auto_activate_base\nMust declare only one. Prefer \'auto_activate\'\n\n'
    'During handling of the above exception, another exception occurred:\n\n'
    'Traceback (most recent call last):\n'
    'TypeError: Object of type frozenset is not JSON serializable\n'
)

# A system .condarc as `conda config --system --set ...` leaves it with an older conda.
OLD_STYLE_CONDARC = 'auto_activate_base: false\nchannels:\n  - defaults\n'
# The broken file the contract warns about: both keys at once.
BOTH_KEYS_CONDARC = 'auto_activate_base: false\nauto_activate: false\nchannels:\n  - conda-forge\n'
# A user's hand-written file with a key this module does not manage.
HAND_WRITTEN_CONDARC = 'channels:\n  - conda-forge\nssl_verify: false\nauto_activate: true\n'


pytestmark = pytest.mark.usefixtures('module_exits')


def make_prefix(tmp_path, case):
    prefix = tmp_path / 'miniconda3'
    prefix.mkdir()
    if case.get('conda'):
        (prefix / 'bin').mkdir()
        (prefix / 'bin' / 'conda').write_text('#!/bin/sh\n')
    for name in case.get('conda_meta', ()):
        (prefix / 'conda-meta').mkdir(exist_ok=True)
        (prefix / 'conda-meta' / name).write_text('{}')
    if case.get('existing') is not None:
        (prefix / '.condarc').write_text(case['existing'])
    for name in case.get('others', ()):
        (prefix / name).parent.mkdir(parents=True, exist_ok=True)
        (prefix / name).write_text('channels:\n  - defaults\n')
    return prefix


def run_module(monkeypatch, prefix, case):
    calls = []

    def run_command(self, args, **kwargs):
        calls.append(args)
        return case['conda']

    monkeypatch.setattr(basic.AnsibleModule, 'run_command', run_command)
    args = dict(case.get('params', {}), prefix=str(prefix))
    if case.get('check_mode'):
        args['_ansible_check_mode'] = True
    args['_ansible_diff'] = True
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as caught:
            conda_config.main()
    return caught.value.args[0], calls


CASES = [
    dict(id='fresh-new-conda-uses-auto_activate',
         conda=(0, CONDA_VERSION_OUTPUT['26.7.1'], ''),
         params=dict(channels=['conda-forge'], channel_priority='strict', always_yes=True,
                     notify_outdated_conda=False),
         expect=dict(changed=True, key='auto_activate', version='26.7.1',
                     content={'auto_activate': False, 'channels': ['conda-forge'], 'channel_priority': 'strict',
                              'always_yes': True, 'notify_outdated_conda': False})),
    dict(id='cutoff-25.5.1-uses-auto_activate',
         conda=(0, CONDA_VERSION_OUTPUT['25.5.1'], ''),
         expect=dict(changed=True, key='auto_activate', version='25.5.1', content={'auto_activate': False})),
    dict(id='25.5.0-stays-on-the-old-key',
         conda=(0, CONDA_VERSION_OUTPUT['25.5.0'], ''),
         expect=dict(changed=True, key='auto_activate_base', version='25.5.0', content={'auto_activate_base': False})),
    dict(id='old-conda-uses-auto_activate_base',
         conda=(0, CONDA_VERSION_OUTPUT['24.11.3'], ''),
         params=dict(channels=['conda-forge']),
         expect=dict(changed=True, key='auto_activate_base', version='24.11.3',
                     content={'auto_activate_base': False, 'channels': ['conda-forge']})),
    dict(id='conda-4-uses-auto_activate_base',
         conda=(0, CONDA_VERSION_OUTPUT['4.14.0'], ''),
         expect=dict(changed=True, key='auto_activate_base', version='4.14.0', content={'auto_activate_base': False})),
    dict(id='upgrade-replaces-the-old-key',
         existing=OLD_STYLE_CONDARC,
         conda=(0, CONDA_VERSION_OUTPUT['25.11.1'], ''),
         params=dict(channels=['defaults']),
         expect=dict(changed=True, key='auto_activate', removed=['auto_activate_base'],
                     content={'auto_activate': False, 'channels': ['defaults']})),
    dict(id='both-keys-repaired-via-conda-meta-when-conda-refuses-to-start',
         existing=BOTH_KEYS_CONDARC,
         conda=(1, '', MULTIPLE_KEYS_ERROR),
         conda_meta=['conda-25.11.1-py312h06a4308_0.json', 'python-3.12.11-h2e8bd54_0.json'],
         params=dict(channels=['conda-forge']),
         expect=dict(changed=True, key='auto_activate', version='25.11.1', removed=['auto_activate_base'],
                     content={'auto_activate': False, 'channels': ['conda-forge']})),
    dict(id='both-keys-repaired-when-conda-crashes-without-a-json-error',
         existing=BOTH_KEYS_CONDARC,
         conda=(1, '', MULTIPLE_KEYS_JSON_CRASH),
         conda_meta=['conda-26.7.1-py313h06a4308_0.json'],
         params=dict(channels=['conda-forge']),
         expect=dict(changed=True, key='auto_activate', version='26.7.1', removed=['auto_activate_base'],
                     content={'auto_activate': False, 'channels': ['conda-forge']})),
    dict(id='both-keys-on-old-conda-keeps-only-the-old-key',
         existing=BOTH_KEYS_CONDARC,
         params=dict(conda_version='24.11.3', channels=['conda-forge']),
         expect=dict(changed=True, key='auto_activate_base', removed=['auto_activate'], calls=0,
                     content={'auto_activate_base': False, 'channels': ['conda-forge']})),
    dict(id='explicit-version-skips-conda',
         params=dict(conda_version='conda 26.7.1'),
         expect=dict(changed=True, key='auto_activate', version='26.7.1', calls=0, content={'auto_activate': False})),
    dict(id='unmanaged-keys-are-removed-and-reported',
         existing=HAND_WRITTEN_CONDARC,
         conda=(0, CONDA_VERSION_OUTPUT['26.7.1'], ''),
         params=dict(channels=['conda-forge']),
         expect=dict(changed=True, removed=['ssl_verify'],
                     content={'auto_activate': False, 'channels': ['conda-forge']})),
    dict(id='mirror-settings',
         conda=(0, CONDA_VERSION_OUTPUT['26.7.1'], ''),
         params=dict(channels=['conda-forge', 'defaults'],
                     channel_alias='https://conda.mirror.example.internal',
                     default_channels=['https://conda.mirror.example.internal/pkgs/main'],
                     custom_channels={'pytorch': 'https://conda.mirror.example.internal'},
                     settings={'ssl_verify': '/etc/ssl/certs/ca-certificates.crt', 'remote_max_retries': 5}),
         expect=dict(changed=True,
                     content={'auto_activate': False, 'channels': ['conda-forge', 'defaults'],
                              'channel_alias': 'https://conda.mirror.example.internal',
                              'default_channels': ['https://conda.mirror.example.internal/pkgs/main'],
                              'custom_channels': {'pytorch': 'https://conda.mirror.example.internal'},
                              'ssl_verify': '/etc/ssl/certs/ca-certificates.crt', 'remote_max_retries': 5})),
    dict(id='other-system-files-are-reported',
         others=['condarc', 'condarc.d/site.yml', 'condarc.d/notes.txt'],
         conda=(0, CONDA_VERSION_OUTPUT['26.7.1'], ''),
         expect=dict(changed=True, others=['condarc', 'condarc.d/site.yml'], content={'auto_activate': False})),
    dict(id='check-mode-changes-nothing',
         existing=OLD_STYLE_CONDARC, check_mode=True,
         conda=(0, CONDA_VERSION_OUTPUT['26.7.1'], ''),
         expect=dict(changed=True, key='auto_activate', unchanged_file=True)),
    dict(id='check-mode-before-install',
         check_mode=True, params=dict(conda_version='26.7.1'),
         expect=dict(changed=True, calls=0, no_file=True)),
    dict(id='settings-must-not-name-an-auto-activation-key',
         conda=(0, CONDA_VERSION_OUTPUT['26.7.1'], ''),
         params=dict(settings={'auto_activate_base': False}),
         expect=dict(failed='use the auto_activate option')),
    dict(id='settings-must-not-repeat-an-option',
         conda=(0, CONDA_VERSION_OUTPUT['26.7.1'], ''),
         params=dict(channels=['conda-forge'], settings={'channels': ['defaults']}),
         expect=dict(failed='channels given both')),
    dict(id='bad-explicit-version',
         params=dict(conda_version='latest'),
         expect=dict(failed='not a conda version')),
    dict(id='no-conda-at-all',
         expect=dict(failed='cannot tell which conda')),
    dict(id='conda-broken-and-no-record',
         conda=(1, '', MULTIPLE_KEYS_ERROR),
         expect=dict(failed='cannot tell which conda', rc=1)),
]


def _check_content(prefix, expect):
    yaml = pytest.importorskip('yaml')
    text = (prefix / '.condarc').read_text()
    assert text.startswith(condarc.HEADER)
    assert yaml.safe_load(text) == expect['content']


@pytest.mark.parametrize('case', CASES, ids=[case['id'] for case in CASES])
def test_conda_config(monkeypatch, tmp_path, case):
    prefix = make_prefix(tmp_path, case)
    result, calls = run_module(monkeypatch, prefix, case)
    expect = case['expect']
    if 'failed' in expect:
        assert result.get('failed'), result
        assert expect['failed'] in result['msg']
        if 'rc' in expect:
            assert result['rc'] == expect['rc']
        assert (prefix / '.condarc').exists() == (case.get('existing') is not None)
        return
    assert not result.get('failed'), result
    assert result['changed'] == expect['changed']
    for field, key in (('key', 'auto_activate_key'), ('version', 'conda_version'), ('removed', 'removed_keys')):
        if field in expect:
            assert result[key] == expect[field]
    if 'calls' in expect:
        assert len(calls) == expect['calls']
    mine = [name for name in result['other_sources'] if name.startswith(str(prefix))]
    assert mine == [str(prefix / name) for name in expect.get('others', [])]
    if expect.get('unchanged_file'):
        assert (prefix / '.condarc').read_text() == case['existing']
    if expect.get('no_file'):
        assert not (prefix / '.condarc').exists()
    if 'content' in expect:
        _check_content(prefix, expect)
        assert result['diff']['after'] == (prefix / '.condarc').read_text()
        assert result['diff']['before'] == (case.get('existing') or '')


IDEMPOTENT_CASES = [case for case in CASES if 'content' in case['expect']]


@pytest.mark.parametrize('case', IDEMPOTENT_CASES, ids=[case['id'] for case in IDEMPOTENT_CASES])
def test_second_run_is_unchanged(monkeypatch, tmp_path, case):
    prefix = make_prefix(tmp_path, case)
    run_module(monkeypatch, prefix, case)
    written = (prefix / '.condarc').read_text()
    again = dict(case, existing=written)
    result, dummy = run_module(monkeypatch, prefix, again)
    assert result['changed'] is False
    assert result['removed_keys'] == []
    assert (prefix / '.condarc').read_text() == written


def test_mode_is_applied(monkeypatch, tmp_path):
    case = dict(conda=(0, CONDA_VERSION_OUTPUT['26.7.1'], ''), params=dict(mode='0640'))
    prefix = make_prefix(tmp_path, case)
    result, dummy = run_module(monkeypatch, prefix, case)
    assert result['changed'] is True
    assert stat.S_IMODE(os.stat(str(prefix / '.condarc')).st_mode) == 0o640


VERSION_TEXT = [
    ('conda 25.5.1\n', (25, 5, 1)),
    ('conda 4.14.0', (4, 14, 0)),
    ('conda 23.1', (23, 1, 0)),
    ('WARNING: something odd\nconda 26.7.1\n', (26, 7, 1)),
    ('', None),
    ('Miniconda3 latest', None),
    (MULTIPLE_KEYS_ERROR, None),
    (MULTIPLE_KEYS_JSON_CRASH, None),
]


@pytest.mark.parametrize('text,version', VERSION_TEXT)
def test_parse_conda_version(text, version):
    assert condarc.parse_conda_version(text) == version


KEY_RULE = [
    ((4, 14, 0), 'auto_activate_base'),
    ((25, 5, 0), 'auto_activate_base'),
    ((25, 5, 1), 'auto_activate'),
    ((25, 7, 0), 'auto_activate'),
    ((26, 1, 1), 'auto_activate'),
    (None, 'auto_activate_base'),
]


@pytest.mark.parametrize('version,key', KEY_RULE)
def test_auto_activate_key(version, key):
    assert condarc.auto_activate_key(version) == key


META_RECORDS = [
    (['conda-26.7.1-py312h06a4308_0.json'], (26, 7, 1)),
    (['conda-build-25.1.0-py312_0.json', 'conda-25.5.1-py311h06a4308_0.json'], (25, 5, 1)),
    (['conda-package-handling-2.4.0-py312_0.json', 'conda-libmamba-solver-25.4.0-pyhd3eb1b0_0.json'], None),
    ([], None),
]


@pytest.mark.parametrize('names,version', META_RECORDS)
def test_version_from_conda_meta(tmp_path, names, version):
    (tmp_path / 'conda-meta').mkdir()
    for name in names:
        (tmp_path / 'conda-meta' / name).write_text(json.dumps({'name': name.split('-')[0]}))
    assert condarc.version_from_conda_meta(str(tmp_path)) == version


RENDER_ROUND_TRIP = [
    {'channels': ['conda-forge', 'https://repo.example/pkgs/main'], 'auto_activate': False},
    {'custom_channels': {'conda-forge': 'https://mirror.example'}, 'empty_list': [], 'empty_map': {}},
    {'words': ['yes', 'no', 'on', 'null', '~', '1.5', '010', ''], 'spaces': 'a: b # c', 'quote': 'say "hi"'},
    {'channel_settings': [{'channel': 'conda-forge', 'param': ['x', 'y']}], 'number': 3, 'none': None},
    {'proxy_servers': {'http': 'http://proxy.example:3128', 'https': 'http://proxy.example:3128'}},
]


@pytest.mark.parametrize('settings', RENDER_ROUND_TRIP)
def test_render_round_trips_through_yaml(settings):
    yaml = pytest.importorskip('yaml')
    text = condarc.render_condarc(settings)
    assert yaml.safe_load(text) == settings
    assert condarc.render_condarc(settings) == text


def test_other_system_sources(tmp_path):
    etc = tmp_path / 'etc'
    prefix = tmp_path / 'prefix'
    for path in (etc / '.condarc', etc / 'condarc.d' / 'a.yaml', prefix / '.condarc', prefix / 'condarc.d' / 'b.yml'):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('{}')
    found = condarc.other_system_sources(str(prefix), str(prefix / '.condarc'), etc_dir=str(etc))
    assert found == [str(etc / '.condarc'), str(etc / 'condarc.d' / 'a.yaml'), str(prefix / 'condarc.d' / 'b.yml')]


def test_top_level_keys():
    assert condarc.top_level_keys(BOTH_KEYS_CONDARC) == ['auto_activate_base', 'auto_activate', 'channels']
    assert condarc.top_level_keys(None) == []


PROXY_WITH_PASSWORD = {'proxy_servers': {'https': 'http://build:s3cr3t-pw@proxy.internal:3128'}}

CREDENTIAL_CASES = [
    dict(id='proxy-password-in-a-world-readable-file-is-refused',
         params=dict(conda_version='26.7.1', settings=PROXY_WITH_PASSWORD),
         expect=dict(failed='carry credentials')),
    dict(id='token-channel-in-a-world-readable-file-is-refused',
         params=dict(conda_version='26.7.1', channels=['https://conda.example.invalid/t/tk-0123456789/private']),
         expect=dict(failed='carry credentials')),
    dict(id='secret-named-key-in-a-world-readable-file-is-refused',
         params=dict(conda_version='26.7.1', settings={'anaconda_upload_token': 'tk-0123456789'}),
         expect=dict(failed='carry credentials')),
    dict(id='narrowed-mode-writes-the-credentials-and-masks-them',
         params=dict(conda_version='26.7.1', settings=PROXY_WITH_PASSWORD, mode='0640'),
         expect=dict(changed=True)),
]


@pytest.mark.parametrize('case', CREDENTIAL_CASES, ids=[case['id'] for case in CREDENTIAL_CASES])
def test_credentials_never_leak(monkeypatch, tmp_path, case):
    prefix = make_prefix(tmp_path, case)
    result, dummy = run_module(monkeypatch, prefix, case)
    secret_words = ('s3cr3t-pw', 'tk-0123456789')
    assert not any(word in json.dumps(result) for word in secret_words), result
    if 'failed' in case['expect']:
        assert result.get('failed') and case['expect']['failed'] in result['msg']
        assert not (prefix / '.condarc').exists()
        return
    written = (prefix / '.condarc').read_text()
    assert 's3cr3t-pw' in written
    assert stat.S_IMODE(os.stat(str(prefix / '.condarc')).st_mode) == 0o640
    assert '********' in result['diff']['after'] and '********' in json.dumps(result['settings'])
