# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Credential masking: each case is text as conda's or pip's configuration holds it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import credentials

MASK = credentials.MASK

TEXT_CASES = [
    ('proxy_servers:\n  https: http://build:pw-1@proxy:3128\n', 'proxy_servers:\n  https: http://build:%s@proxy:3128\n' % MASK),
    ('channels:\n  - https://conda.example.invalid/t/tk-42/private\n',
     'channels:\n  - https://conda.example.invalid/t/%s/private\n' % MASK),
    ('anaconda_upload_token: tk-42\n', 'anaconda_upload_token: %s\n' % MASK),
    ('  client_secret: "abc def"\n', '  client_secret: %s\n' % MASK),
    # No credential: a user name alone, a plain URL, a key that only contains a secret word's letters.
    ('proxy_servers:\n  https: http://build@proxy:3128\n', None),
    ('channels:\n  - https://conda.example.invalid/conda-forge\n', None),
    ('ssl_verify: true\npkgs_dirs:\n  - /srv/pkgs\n', None),
]


@pytest.mark.parametrize('text,masked', TEXT_CASES)
def test_mask_text(text, masked):
    assert credentials.mask_text(text) == (text if masked is None else masked)


VALUE_CASES = [
    ({'proxy_servers': {'http': 'http://u:p@h:1'}}, {'proxy_servers': {'http': 'http://u:%s@h:1' % MASK}}, True),
    ({'repo_password': 'x', 'other': ['a', 1]}, {'repo_password': MASK, 'other': ['a', 1]}, True),
    ({'api_key': ''}, {'api_key': ''}, False),
    ({'channels': ['conda-forge'], 'ssl_verify': False}, None, False),
]


@pytest.mark.parametrize('value,masked,secret', VALUE_CASES)
def test_mask_value(value, masked, secret):
    assert credentials.mask_value(value) == (value if masked is None else masked)
    assert credentials.has_credentials(value) is secret
