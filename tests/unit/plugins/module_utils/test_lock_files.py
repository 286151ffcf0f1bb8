# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import lock_files

CONTENT = b'a conda package\n'
MD5 = hashlib.md5(CONTENT).hexdigest()  # nosec: what conda's explicit lines carry
SHA256 = hashlib.sha256(CONTENT).hexdigest()
OTHER_MD5 = '0' * 32
OTHER_SHA256 = '0' * 64


@pytest.fixture
def channel(tmp_path):
    """A root-owned file:// channel (0755 directories) holding one package file."""
    os.chmod(str(tmp_path), 0o755)
    subdir = tmp_path / 'channel' / 'linux-64'
    subdir.mkdir(parents=True)
    os.chmod(str(tmp_path / 'channel'), 0o755)
    os.chmod(str(subdir), 0o755)
    package = subdir / 'numpy-2.4.6-py311h71ddf71_0.conda'
    package.write_bytes(CONTENT)
    package.chmod(0o644)
    return package


def package(path, md5=None, sha256=None, manager='conda', scheme='file://'):
    return {'name': 'numpy', 'version': '2.4.6', 'url': scheme + str(path), 'md5': md5, 'sha256': sha256,
            'manager': manager}


CASES = [
    dict(id='md5-matches', md5=MD5, want=[]),
    dict(id='sha256-matches', sha256=SHA256, want=[]),
    dict(id='sha256-checked-first', md5=OTHER_MD5, sha256=SHA256, want=[]),
    dict(id='md5-differs', md5=OTHER_MD5, want=['has md5 %s, the lock says %s' % (MD5, OTHER_MD5)]),
    dict(id='sha256-differs', md5=MD5, sha256=OTHER_SHA256, want=['has sha256 %s, the lock says %s' % (SHA256, OTHER_SHA256)]),
    dict(id='no-digest-nothing-to-check', want=[]),
    dict(id='pip-package-is-not-conda-s', md5=OTHER_MD5, manager='pip', want=[]),
]


@pytest.mark.parametrize('case', CASES, ids=[case['id'] for case in CASES])
def test_local_package_against_the_lock(channel, case):
    found = lock_files.problems([package(channel, case.get('md5'), case.get('sha256'), case.get('manager', 'conda'))])
    assert len(found) == len(case['want'])
    for problem, wanted in zip(found, case['want']):
        assert problem == 'file://%s %s' % (channel, wanted)


def test_a_missing_file_is_left_to_conda(channel):
    assert lock_files.problems([package(str(channel) + '.gone', OTHER_MD5)]) == []


def test_a_downloaded_package_is_left_to_conda_s_own_check(channel):
    assert lock_files.problems([package('/mirror.invalid/linux-64/x.conda', OTHER_MD5, scheme='https:/')]) == []


def test_a_file_another_user_can_change_is_refused_even_when_it_matches(channel):
    os.chown(str(channel), 65534, 65534)
    found = lock_files.problems([package(channel, MD5)])
    assert len(found) == 1 and str(channel) in found[0] and 'refusing to install' in found[0]


def test_a_channel_directory_another_user_can_write_is_refused(channel):
    os.chmod(str(channel.parent), 0o777)
    found = lock_files.problems([package(channel, MD5)])
    assert len(found) == 1 and str(channel.parent) in found[0]


def test_a_quoted_path_is_read_unquoted(tmp_path):
    os.chmod(str(tmp_path), 0o755)
    spaced = tmp_path / 'my channel'
    spaced.mkdir(mode=0o755)
    os.chmod(str(spaced), 0o755)
    (spaced / 'p-1-0.conda').write_bytes(CONTENT)
    url = 'file://%s/my%%20channel/p-1-0.conda' % tmp_path
    assert lock_files.local_path(url) == str(spaced / 'p-1-0.conda')
    assert lock_files.problems([{'name': 'p', 'url': url, 'md5': OTHER_MD5, 'manager': 'conda'}]) == [
        '%s has md5 %s, the lock says %s' % (url, MD5, OTHER_MD5)]
