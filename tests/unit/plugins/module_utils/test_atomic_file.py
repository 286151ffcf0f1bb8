# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._files import atomic_file


def mode_of(path):
    return stat.S_IMODE(os.lstat(str(path)).st_mode)


CASES = [
    dict(id='text-default-mode', data=u'caf\u00e9\n', mode=None, want=b'caf\xc3\xa9\n', want_mode=0o644),
    dict(id='bytes-private', data=b'\x00\x01', mode=0o600, want=b'\x00\x01', want_mode=0o600),
    dict(id='group-readable', data='x', mode=0o640, want=b'x', want_mode=0o640),
]


@pytest.mark.parametrize('case', CASES, ids=[case['id'] for case in CASES])
def test_replaces_whole_with_the_mode_whatever_the_umask(tmp_path, case):
    target = tmp_path / 'state.json'
    target.write_bytes(b'old content')
    old_umask = os.umask(0o077 if case['want_mode'] & 0o044 else 0)
    try:
        kwargs = {} if case['mode'] is None else {'mode': case['mode']}
        assert atomic_file.replace_file(str(target), case['data'], **kwargs) == str(target)
    finally:
        os.umask(old_umask)
    assert target.read_bytes() == case['want']
    assert mode_of(target) == case['want_mode']
    assert sorted(os.listdir(str(tmp_path))) == ['state.json']


def test_a_planted_link_is_replaced_not_followed(tmp_path):
    victim = tmp_path / 'victim'
    victim.write_bytes(b'keep me')
    link = tmp_path / 'report.md'
    os.symlink(str(victim), str(link))
    atomic_file.replace_file(str(link), 'report')
    assert not os.path.islink(str(link)) and link.read_bytes() == b'report'
    assert victim.read_bytes() == b'keep me'


def test_the_group_is_set_when_given(tmp_path):
    target = tmp_path / 'job.json'
    atomic_file.replace_file(str(target), '{}', 0o640, gid=65534)
    assert os.stat(str(target)).st_gid == 65534


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / 'latest.json'
    target.write_bytes(b'old')

    def refuse(src, dst):
        raise OSError(28, 'No space left on device')

    monkeypatch.setattr(atomic_file.os, 'replace', refuse)
    with pytest.raises(OSError, match='No space left'):
        atomic_file.replace_file(str(target), 'new')
    assert target.read_bytes() == b'old'
    assert sorted(os.listdir(str(tmp_path))) == ['latest.json']


def test_the_temporary_name_is_as_long_as_temp_name_extra_says(tmp_path, monkeypatch):
    seen = []
    real_replace = os.replace

    def watch(src, dst):
        seen.append(os.path.basename(src))
        real_replace(src, dst)

    monkeypatch.setattr(atomic_file.os, 'replace', watch)
    atomic_file.replace_file(str(tmp_path / 'node-1.json'), '{}')
    assert len(seen) == 1 and seen[0].startswith(atomic_file.TEMP_PREFIX) and seen[0].endswith('-node-1.json')
    assert len(seen[0]) == len('node-1.json') + atomic_file.TEMP_NAME_EXTRA
