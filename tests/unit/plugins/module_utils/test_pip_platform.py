# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The platform a controller downloads wheels for, from what the building nodes report."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import platform

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import pip_platform

X86 = 'x86_64'

COMMON = [
    dict(id='one-node', targets={'a': {'machine': X86, 'glibc': '2.36'}}, want=(X86, (2, 36))),
    dict(id='oldest-glibc-wins', targets={'a': {'machine': X86, 'glibc': '2.36'}, 'b': {'machine': X86, 'glibc': '2.28'},
                                          'c': {'machine': X86, 'glibc': '2.31'}}, want=(X86, (2, 28))),
    dict(id='minor-compared-as-number', targets={'a': {'machine': 'aarch64', 'glibc': '2.9'},
                                                 'b': {'machine': 'aarch64', 'glibc': '2.17'}}, want=('aarch64', (2, 9))),
    dict(id='confstr-form-accepted', targets={'a': {'machine': X86, 'glibc': 'glibc 2.35'}}, want=(X86, (2, 35))),
]


@pytest.mark.parametrize('case', COMMON, ids=[c['id'] for c in COMMON])
def test_common_target(case):
    assert pip_platform.common_target(case['targets']) == case['want']


REFUSED = [
    dict(id='no-nodes', targets={}, msg='no node to download for'),
    dict(id='two-machines', targets={'b': {'machine': 'aarch64', 'glibc': '2.36'}, 'a': {'machine': X86, 'glibc': '2.36'}},
         msg='the nodes that build differ in machine (a x86_64, b aarch64)'),
    dict(id='musl', targets={'a': {'machine': X86, 'glibc': None}}, msg='a reports no glibc version (None)'),
    dict(id='glibc-not-a-version', targets={'a': {'machine': X86, 'glibc': 'new'}}, msg="a reports no glibc version ('new')"),
    dict(id='report-not-a-mapping-field', targets={'a': {'machine': X86}}, msg='a reports no glibc version (None)'),
    dict(id='machine-with-a-space', targets={'a': {'machine': 'x86_64 x', 'glibc': '2.36'}},
         msg="a reports the machine 'x86_64 x', which is no platform name"),
    dict(id='machine-missing', targets={'a': {'glibc': '2.36'}}, msg="a reports the machine '', which is no platform name"),
]


@pytest.mark.parametrize('case', REFUSED, ids=[c['id'] for c in REFUSED])
def test_refused(case):
    with pytest.raises(pip_platform.PlatformError) as caught:
        pip_platform.common_target(case['targets'])
    assert str(caught.value).startswith(case['msg'])


def test_manylinux_tags_reach_down_to_manylinux1_with_the_legacy_names():
    tags = pip_platform.manylinux_tags('aarch64', (2, 17))
    assert tags[:2] == ['manylinux_2_17_aarch64', 'manylinux2014_aarch64']
    assert tags[-2:] == ['manylinux_2_5_aarch64', 'manylinux1_aarch64']
    assert 'manylinux2010_aarch64' in tags and len(tags) == 13 + 3


def test_glibc_3_has_no_manylinux_tags():
    with pytest.raises(pip_platform.PlatformError):
        pip_platform.manylinux_tags(X86, (3, 0))


def test_this_node_reads_the_running_machine():
    reported = pip_platform.this_node()
    assert reported['machine'] == platform.machine()
    assert reported['glibc'] == '.'.join(os.confstr('CS_GNU_LIBC_VERSION').split()[1].split('.')[:2])
    assert pip_platform.common_target({'here': reported})[0] == platform.machine()
