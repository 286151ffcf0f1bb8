# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The has_credentials filter applies module_utils/_conda/credentials' rule to role variables."""

from __future__ import annotations

import pytest

from ansible_collections.torchfleet.cluster.plugins.filter.credentials import FilterModule

CASES = [
    ({"proxy_servers": {"https": "http://build:pw@proxy.invalid:3128"}}, True),
    ({"channels": ["https://conda.example.invalid/t/tk-1/private"]}, True),
    ({"anaconda_upload_token": "tk-1"}, True),
    ({"proxy_servers": {"https": "http://proxy.invalid:3128"}}, False),
    ({"ssl_verify": True, "pkgs_dirs": ["/srv/pkgs"]}, False),
    ({}, False),
]


@pytest.mark.parametrize("value,expected", CASES)
def test_has_credentials(value, expected):
    assert FilterModule().filters()["has_credentials"](value) is expected
