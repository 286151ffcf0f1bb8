# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""condarc_text: the miniconda role skips conda_config where the node's .condarc has the digest of
this filter's output, so the filter must give the module's bytes for the same options, after the
same conversions, and refuse what the module refuses."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.torchfleet.cluster.plugins.filter.condarc import condarc_text
from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import condarc
from ansible_collections.torchfleet.cluster.tests.unit.plugins.modules.test_conda_config import (
    CONDA_VERSION_OUTPUT,
    IDEMPOTENT_CASES,
    make_prefix,
    run_module,
)

CASES = IDEMPOTENT_CASES + [
    dict(id='converted-like-the-module', conda=(0, CONDA_VERSION_OUTPUT['25.11.1'], ''),
         params=dict(channels=['conda-forge', 42], always_yes='yes', notify_outdated_conda='no',
                     custom_channels={'internal': 'https://conda.example'}, channel_alias='https://conda.example',
                     settings={'ssl_verify': '/etc/ssl/certs/ca.pem', 'remote_max_retries': 5, 'envs_dirs': []})),
]


@pytest.mark.parametrize('case', CASES, ids=[case['id'] for case in CASES])
def test_condarc_text_is_what_the_module_writes(monkeypatch, tmp_path, case, module_exits):
    prefix = make_prefix(tmp_path, case)
    result, dummy = run_module(monkeypatch, prefix, case)
    assert result['changed'] is True
    options = dict((key, value) for key, value in case.get('params', {}).items() if key in condarc.SETTINGS_SPEC)
    assert condarc_text(options, result['conda_version']) == (prefix / '.condarc').read_text()


REFUSALS = [
    ({'settings': {'auto_activate_base': True}}, '25.5.1', 'settings must not contain auto_activate_base'),
    ({'channels': ['a'], 'settings': {'channels': ['b']}}, '25.5.1', 'channels given both as an option and in settings'),
    ({'channel_priority': 'sometimes'}, '25.5.1', 'channel_priority'),
    ({'chanels': ['a']}, '25.5.1', 'chanels'),
    ({}, 'latest', "'latest' is not a conda version"),
]


@pytest.mark.parametrize('options, version, message', REFUSALS)
def test_condarc_text_refuses_what_the_module_refuses(options, version, message):
    with pytest.raises(AnsibleFilterError, match=message):
        condarc_text(options, version)


def test_the_key_follows_the_conda_version():
    assert 'auto_activate_base: false' in condarc_text({}, '25.5.0')
    assert 'auto_activate: false' in condarc_text({}, 'conda 25.5.1')
