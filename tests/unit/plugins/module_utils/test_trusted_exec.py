# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who could change what a path runs: real files, directories, symlinks and owners in a tmp dir."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._files import trusted_exec

NOBODY = 65534


@pytest.fixture
def prefix(tmp_path):
    """tmp/opt/conda/bin/conda (a script run by tmp/opt/conda/bin/python -> python3.11), all root's, 0755."""
    os.chmod(str(tmp_path), 0o755)
    bin_dir = tmp_path / 'opt' / 'conda' / 'bin'
    bin_dir.mkdir(parents=True)
    python = bin_dir / 'python3.11'
    python.write_bytes(b'\x7fELF')
    os.symlink('python3.11', str(bin_dir / 'python'))
    conda = bin_dir / 'conda'
    conda.write_text('#!%s\nimport conda\n' % (bin_dir / 'python'))
    for path in (python, conda):
        os.chmod(str(path), 0o755)
    for path in (tmp_path / 'opt', tmp_path / 'opt' / 'conda', bin_dir):
        os.chmod(str(path), 0o755)
    return tmp_path


def chown_nobody(path):
    os.chown(str(path), NOBODY, NOBODY)


def relocate_bin_to_foreign_dir(root):
    foreign = root / 'foreign'
    foreign.mkdir()
    os.rename(str(root / 'opt' / 'conda' / 'bin'), str(foreign / 'bin'))
    os.symlink('../../foreign/bin', str(root / 'opt' / 'conda' / 'bin'))
    chown_nobody(foreign)


def dotdot_through_foreign_link(root):
    foreign = root / 'foreign'
    (foreign / 'sub').mkdir(parents=True)
    chown_nobody(foreign)
    # opt/conda/bin/conda -> <root>/foreign/sub/../../opt/conda/bin/conda.real: the link path crosses foreign/
    conda = root / 'opt' / 'conda' / 'bin' / 'conda'
    os.rename(str(conda), str(conda) + '.real')
    os.symlink(str(foreign / 'sub' / '..' / '..' / 'opt' / 'conda' / 'bin' / 'conda.real'), str(conda))


# (what is done to the tree, the component reported, the reason); None: trusted
CASES = [
    ('untouched', lambda root: None, None, None),
    ('file owned by nobody', lambda root: chown_nobody(root / 'opt/conda/bin/conda'), 'opt/conda/bin/conda', 'is owned by nobody'),
    ('prefix owned by nobody', lambda root: chown_nobody(root / 'opt/conda'), 'opt/conda', 'is owned by nobody'),
    ('world-writable bin', lambda root: os.chmod(str(root / 'opt/conda/bin'), 0o777), 'opt/conda/bin', 'is writable by every user'),
    ('sticky world-writable dir on the way', lambda root: os.chmod(str(root / 'opt'), 0o1777), None, None),
    ('group-writable by nogroup', lambda root: (os.chown(str(root / 'opt/conda/bin/conda'), 0, NOBODY),
                                                os.chmod(str(root / 'opt/conda/bin/conda'), 0o775)),
     'opt/conda/bin/conda', 'is writable by group nogroup'),
    ('group-writable by root', lambda root: os.chmod(str(root / 'opt/conda/bin/conda'), 0o775), None, None),
    ('interpreter owned by nobody', lambda root: chown_nobody(root / 'opt/conda/bin/python3.11'), 'opt/conda/bin/python3.11', 'is owned by nobody'),
    ('bin is a link into a foreign dir', relocate_bin_to_foreign_dir, 'foreign', 'is owned by nobody'),
    ('link path with .. through a foreign dir', dotdot_through_foreign_link, 'foreign', 'is owned by nobody'),
]


@pytest.mark.parametrize('change, component, reason', [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_untrusted_executable(prefix, change, component, reason):
    change(prefix)
    finding = trusted_exec.untrusted_executable(str(prefix / 'opt/conda/bin/conda'))
    if component is None:
        assert finding is None
    else:
        assert finding.path == str(prefix / component) and finding.reason == reason


def test_a_path_owned_by_the_effective_user_is_trusted(prefix, monkeypatch):
    chown_nobody(prefix / 'opt/conda')
    assert trusted_exec.untrusted_writer(str(prefix / 'opt/conda/bin/conda')) is not None
    monkeypatch.setattr(os, 'geteuid', lambda: NOBODY)
    assert trusted_exec.untrusted_writer(str(prefix / 'opt/conda/bin/conda')) is None


def test_a_missing_component_ends_the_walk(prefix):
    assert trusted_exec.untrusted_writer(str(prefix / 'opt/conda/envs/.torchfleet/train.d')) is None


def test_a_symlink_loop_is_reported(tmp_path):
    os.chmod(str(tmp_path), 0o755)
    os.symlink('b', str(tmp_path / 'a'))
    os.symlink('a', str(tmp_path / 'b'))
    finding = trusted_exec.untrusted_writer(str(tmp_path / 'a'))
    assert finding is not None and finding.reason == 'is part of a symlink loop'


@pytest.mark.parametrize('head, program', [
    (b'#!/opt/conda/bin/python\n', '/opt/conda/bin/python'),
    (b'#! /usr/bin/env python3 -E\n', '/usr/bin/env'),
    (b'\x7fELF\x02\x01', None),
    (b'', None),
])
def test_interpreter(tmp_path, head, program):
    path = tmp_path / 'prog'
    path.write_bytes(head)
    assert trusted_exec.interpreter(str(path)) == program


def test_describe_names_the_path_the_owner_and_the_remedy(prefix):
    chown_nobody(prefix / 'opt/conda')
    conda = str(prefix / 'opt/conda/bin/conda')
    text = trusted_exec.describe(trusted_exec.untrusted_executable(conda), 'run %s' % conda)
    assert text.startswith('refusing to run %s as root: %s is owned by nobody' % (conda, prefix / 'opt/conda'))
    assert 'become_user: nobody' in text and 'chown -R root %s' % (prefix / 'opt/conda') in text
