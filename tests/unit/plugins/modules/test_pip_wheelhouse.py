# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Data-driven tests of torchfleet.cluster.pip_wheelhouse.

``run_command`` is answered by a small model of pip: ``pip download`` writes the wheels into
its ``--dest`` directory and prints what real pip prints; the interpreter's version probe
prints ``X.Y``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os
import stat
import subprocess
import sys

import pytest

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import wheel_bundle
from ansible_collections.torchfleet.cluster.plugins.modules import pip_wheelhouse
from ansible_collections.torchfleet.cluster.tests.unit.plugins.modules.module_exits import ExitJson, FailJson

NOBODY = 65534
SIX = 'six-1.17.0-py2.py3-none-any.whl'
TORCH = 'torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl'
FILELOCK = 'filelock-3.20.0-py3-none-any.whl'
X86_GLIBC_236 = {'machine': 'x86_64', 'glibc': '2.36'}
TORCH_312 = 'torch-2.13.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl'
WHEELS = {
    SIX: b'PK\x03\x04six-1.17.0' + b'\x00' * 64,
    TORCH: b'PK\x03\x04torch-2.13.0-cp311' + b't' * 4096,
    FILELOCK: b'PK\x03\x04filelock-3.20.0',
    TORCH_312: b'PK\x03\x04torch-2.13.0-cp312' + b'u' * 4096,
}
PROBE = 'import sys; print("%d.%d" % sys.version_info[:2])'

# What pip 25 prints, rc 1, for a requirement no index has.
NOT_FOUND_STDERR = ('ERROR: Could not find a version that satisfies the requirement nosuchpkg==1.0 (from versions: none)\n'
                    'ERROR: No matching distribution found for nosuchpkg==1.0\n')
# What a broken interpreter prints, rc 127, when asked for its version.
BROKEN_PYTHON_STDERR = ('%(python)s: error while loading shared libraries: libpython3.11.so.1.0: '
                        'cannot open shared object file: No such file or directory\n')


def pip_download_output(names):
    """stdout of a successful `pip download` that saved ``names`` (pip 25)."""
    lines = []
    for name in names:
        project, version = name.split('-')[:2]
        lines += ['Collecting %s==%s' % (project, version.split('+')[0]),
                  '  Downloading %s (%d kB)' % (name, max(1, len(WHEELS[name]) // 1024)),
                  'Saved ./%s' % name]
    lines.append('Successfully downloaded %s' % ' '.join(n.split('-')[0] for n in names))
    return '\n'.join(lines) + '\n'


class Pip:
    """Answers run_command like the pip of ``python``."""

    def __init__(self, python, store, version='3.11'):
        self.python = python
        self.store = store
        self.dest = os.path.join(store, 'train.tar')
        self.probe = (0, version + '\n', '')
        self.download = (0, [], '', '')  # (rc, names saved, stdout, stderr); set by the test
        self.calls = []
        self.kwargs = []
        self.requirements = []
        self.dest_dirs = []

    def run_command_method(self):
        pip = self

        def run_command(module, cmd, **kwargs):
            return pip.run_command(cmd, **kwargs)
        return run_command

    def run_command(self, cmd, **kwargs):
        self.calls.append(list(cmd))
        self.kwargs.append(kwargs)
        assert cmd[0] == self.python
        if cmd[1:] == ['-c', PROBE]:
            return self.probe
        assert cmd[1:4] == ['-m', 'pip', 'download'], cmd
        dest = cmd[cmd.index('--dest') + 1]
        assert os.path.isdir(dest) and os.listdir(dest) == [], 'pip downloads into an empty private directory'
        assert stat.S_IMODE(os.stat(os.path.dirname(dest)).st_mode) == 0o700
        assert kwargs.get('cwd') == os.path.dirname(dest)
        self.dest_dirs.append(dest)
        with open(cmd[cmd.index('-r') + 1]) as handle:
            self.requirements.append(handle.read())
        rc, names, out, err = self.download
        for name in names:
            with open(os.path.join(dest, name), 'wb') as handle:
                handle.write(WHEELS[name])
        return rc, out, err


@pytest.fixture
def node(tmp_path, monkeypatch, module_exits):
    """A Miniconda base interpreter and a store directory, both trusted, and pip answering."""
    bindir = tmp_path / 'miniconda3' / 'bin'
    bindir.mkdir(parents=True, mode=0o755)
    python = bindir / 'python'
    python.write_text('#!/bin/sh\n')
    python.chmod(0o755)
    store = tmp_path / 'miniconda3' / 'wheels'
    store.mkdir(mode=0o755)
    pip = Pip(str(python), str(store))
    monkeypatch.setattr(basic.AnsibleModule, 'run_command', pip.run_command_method())
    return pip


def run(node, check=False, **params):
    args = {'requirements': ['six==1.17.0'], 'python': node.python, 'dest': node.dest}
    args.update(params)
    args = dict((k, v) for k, v in args.items() if v is not None)
    if check:
        args['_ansible_check_mode'] = True
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as caught:
            pip_wheelhouse.main()
    return caught.value.args[0]


def expected_cmd(node, dest_dir, extra=()):
    workdir = os.path.dirname(dest_dir)
    return [node.python, '-m', 'pip', 'download', '--no-input', '--disable-pip-version-check',
            '--dest', dest_dir, '-r', os.path.join(workdir, 'requirements.txt')] + list(extra)


def manifest(names):
    return [dict(name=n, sha256=hashlib.sha256(WHEELS[n]).hexdigest(), size=len(WHEELS[n])) for n in sorted(names)]


# ---------------------------------------------------------------- downloads

DOWNLOADS = [
    dict(id='plain', requirements=['six==1.17.0'], saved=[SIX]),
    dict(id='several-with-dependencies', requirements=['torch==2.13.0', 'six==1.17.0'], saved=[TORCH, FILELOCK, SIX],
         environment={'PIP_INDEX_URL': 'https://mirror.invalid/simple', 'PIP_TIMEOUT': 60},
         environ={'PIP_INDEX_URL': 'https://mirror.invalid/simple', 'PIP_TIMEOUT': '60'}),
    dict(id='python-version-of-the-interpreter', requirements=['torch==2.13.0'], saved=[TORCH],
         python_version='3.11', probed=True),
    dict(id='python-version-of-another-interpreter', requirements=['torch==2.13.0'], saved=[TORCH_312],
         python_version='3.12', probed=True, flags=['--python-version', '3.12', '--only-binary=:all:']),
    dict(id='owner', requirements=['six==1.17.0'], saved=[SIX], owner='nobody', uid=NOBODY),
    # The controller's download for the nodes: their machine, their oldest glibc, the spec's Python; no probe.
    dict(id='for-the-nodes', requirements=['torch==2.13.0'], saved=[TORCH], python_version='3.11',
         targets={'node0': {'machine': 'x86_64', 'glibc': '2.36'}, 'node1': {'machine': 'x86_64', 'glibc': '2.17'}},
         flags=['--only-binary=:all:', '--implementation', 'cp', '--python-version', '3.11',
                '--abi', 'cp311', '--abi', 'abi3', '--abi', 'none',
                '--platform', 'manylinux_2_17_x86_64', '--platform', 'manylinux2014_x86_64',
                '--platform', 'manylinux_2_16_x86_64', '--platform', 'manylinux_2_15_x86_64',
                '--platform', 'manylinux_2_14_x86_64', '--platform', 'manylinux_2_13_x86_64',
                '--platform', 'manylinux_2_12_x86_64', '--platform', 'manylinux2010_x86_64',
                '--platform', 'manylinux_2_11_x86_64', '--platform', 'manylinux_2_10_x86_64',
                '--platform', 'manylinux_2_9_x86_64', '--platform', 'manylinux_2_8_x86_64',
                '--platform', 'manylinux_2_7_x86_64', '--platform', 'manylinux_2_6_x86_64',
                '--platform', 'manylinux_2_5_x86_64', '--platform', 'manylinux1_x86_64']),
    dict(id='replaces-an-older-bundle', requirements=['six==1.17.0'], saved=[SIX], existing=b'an older bundle'),
]


@pytest.mark.parametrize('case', DOWNLOADS, ids=[case['id'] for case in DOWNLOADS])
def test_download_packs_the_saved_files(node, case):
    if 'existing' in case:
        with open(node.dest, 'wb') as handle:
            handle.write(case['existing'])
    node.download = (0, case['saved'], pip_download_output(case['saved']), '')
    result = run(node, requirements=case['requirements'], python_version=case.get('python_version'),
                 environment=case.get('environment'), owner=case.get('owner'), target_platforms=case.get('targets'))
    assert result.get('failed') is not True, result
    probes = [c for c in node.calls if c[1] == '-c']
    assert probes == ([[node.python, '-c', PROBE]] if case.get('probed') else [])
    assert len(node.dest_dirs) == 1
    cmd = expected_cmd(node, node.dest_dirs[0], case.get('flags', ()))
    assert node.calls[-1] == cmd and result['cmd'] == cmd
    flags = case.get('flags', [])
    assert result['platforms'] == ([flags[i + 1] for i, flag in enumerate(flags) if flag == '--platform'] if 'targets' in case else [])
    assert node.kwargs[-1]['environ_update'] == case.get('environ', {})
    assert node.requirements == ['\n'.join(case['requirements']) + '\n']
    assert os.path.basename(os.path.dirname(node.dest_dirs[0])).startswith('.wheels-')
    assert os.path.dirname(os.path.dirname(node.dest_dirs[0])) == node.store  # same filesystem: rename is atomic
    assert result['changed'] is True and result['dest'] == node.dest
    assert result['files'] == manifest(case['saved'])
    st = os.lstat(node.dest)
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
    assert st.st_uid == case.get('uid', 0)
    with open(node.dest, 'rb') as handle:
        assert result['sha256'] == hashlib.sha256(handle.read()).hexdigest()
    assert os.listdir(node.store) == ['train.tar']  # no temporary directory left
    unpacked = os.path.join(os.path.dirname(node.store), 'unpacked')
    os.mkdir(unpacked, 0o700)
    assert wheel_bundle.unpack_verified(node.dest, result['files'], unpacked) == sorted(case['saved'])


# ---------------------------------------------------------------- refusals and failures

def _world_writable(node):
    os.chmod(node.store, 0o777)
    return node.store


def _store_of_nobody(node):
    os.chown(node.store, NOBODY, NOBODY)
    return node.store


def _parent_world_writable(node):
    parent = os.path.dirname(node.store)
    os.chmod(parent, 0o777)
    return parent


def _python_of_nobody(node):
    os.chown(node.python, NOBODY, NOBODY)
    return node.python


def _python_world_writable(node):
    os.chmod(node.python, 0o757)
    return node.python


def _missing_store(node):
    os.rmdir(node.store)
    return node.store


FAILURES = [
    dict(id='pip-fails', download=(1, [], '', NOT_FOUND_STDERR), params={'requirements': ['nosuchpkg==1.0']},
         msg='pip download of nosuchpkg==1.0 failed (rc=1): ERROR: No matching distribution found for nosuchpkg==1.0',
         result={'rc': 1, 'stderr': NOT_FOUND_STDERR, 'stdout': ''}, ran=['download']),
    dict(id='pip-fails-after-saving-some', download=(1, [SIX], 'Collecting six==1.17.0\nSaved ./%s\n' % SIX, NOT_FOUND_STDERR),
         params={'requirements': ['six==1.17.0', 'nosuchpkg==1.0']},
         msg='pip download of six==1.17.0, nosuchpkg==1.0 failed (rc=1): '
             'ERROR: No matching distribution found for nosuchpkg==1.0',
         result={'rc': 1, 'stderr': NOT_FOUND_STDERR}, ran=['download']),
    dict(id='version-probe-fails', probe=(127, '', BROKEN_PYTHON_STDERR), params={'python_version': '3.12'},
         msg='cannot run %(python)s (rc=127): ' + BROKEN_PYTHON_STDERR.strip(),
         result={'rc': 127, 'stderr': BROKEN_PYTHON_STDERR}, ran=['probe']),
    dict(id='missing-dest-directory', make=_missing_store, msg='the directory of dest does not exist: %(culprit)s'),
    dict(id='world-writable-dest-directory', make=_world_writable,
         msg='refusing to write the bundle %(dest)s as root: %(culprit)s is writable by every user',
         result={'path': '%(culprit)s'}),
    dict(id='dest-directory-of-another-user', make=_store_of_nobody,
         msg='refusing to write the bundle %(dest)s as root: %(culprit)s is owned by nobody',
         result={'path': '%(culprit)s'}),
    dict(id='world-writable-parent', make=_parent_world_writable,
         msg='refusing to write the bundle %(dest)s as root: %(culprit)s is writable by every user',
         result={'path': '%(culprit)s'}),
    dict(id='python-of-another-user', make=_python_of_nobody,
         msg='refusing to run %(python)s as root: %(culprit)s is owned by nobody', result={'path': '%(culprit)s'}),
    dict(id='world-writable-python', make=_python_world_writable,
         msg='refusing to run %(python)s as root: %(culprit)s is writable by every user', result={'path': '%(culprit)s'}),
    dict(id='empty-requirements', params={'requirements': []}, msg='requirements is empty: nothing to download'),
    dict(id='unknown-owner', params={'owner': 'nosuchuser-tf'}, msg='owner nosuchuser-tf is not a user on this node'),
    dict(id='nodes-of-two-machines',
         params={'python_version': '3.11', 'target_platforms': {'node0': X86_GLIBC_236,
                                                                'node1': {'machine': 'aarch64', 'glibc': '2.36'}}},
         msg='cannot download the pip packages six==1.17.0 for the nodes: the nodes that build differ in machine '
             '(node0 x86_64, node1 aarch64): one bundle cannot serve them'),
    dict(id='node-without-glibc',
         params={'python_version': '3.11', 'target_platforms': {'node0': X86_GLIBC_236,
                                                                'alpine1': {'machine': 'x86_64', 'glibc': None}}},
         msg='cannot download the pip packages six==1.17.0 for the nodes: alpine1 reports no glibc version (None)'),
    # What a node reports is data: a machine that is no platform name never reaches pip's command line.
    dict(id='machine-that-is-no-name',
         params={'python_version': '3.11',
                 'target_platforms': {'node0': {'machine': 'x86_64 --index-url=http://evil', 'glibc': '2.36'}}},
         msg="cannot download the pip packages six==1.17.0 for the nodes: node0 reports the machine "
             "'x86_64 --index-url=http://evil', which is no platform name"),
    dict(id='python-version-not-x-y',
         params={'python_version': '3', 'target_platforms': {'node0': X86_GLIBC_236}},
         msg="cannot download the pip packages six==1.17.0 for the nodes: the Python version to download for must be "
             "X.Y, got '3'"),
    dict(id='targets-without-python-version', params={'target_platforms': {'node0': X86_GLIBC_236}},
         msg='missing parameter(s) required by'),
]


@pytest.mark.parametrize('case', FAILURES, ids=[case['id'] for case in FAILURES])
def test_failure_leaves_nothing_behind(node, case):
    culprit = case['make'](node) if 'make' in case else None
    if 'download' in case:
        node.download = case['download']
    if 'probe' in case:
        rc, out, err = case['probe']
        node.probe = (rc, out, err % {'python': node.python})
    values = {'python': node.python, 'dest': node.dest, 'culprit': culprit}
    result = run(node, **case.get('params', {}))
    assert result['failed'] is True
    assert result['msg'].startswith(case['msg'] % values), result['msg']
    for key, value in case.get('result', {}).items():
        assert result[key] == (value % values if isinstance(value, str) else value), key
    ran = [('probe' if c[1] == '-c' else 'download') for c in node.calls]
    assert ran == case.get('ran', [])
    if case.get('ran') == ['download']:
        assert result['cmd'] == expected_cmd(node, node.dest_dirs[0])
    assert not os.path.lexists(node.dest)
    if os.path.isdir(node.store):
        assert os.listdir(node.store) == []  # no temporary directory left
    assert not [n for n in os.listdir(os.path.dirname(node.store)) if n.startswith('.wheels-')]


def test_check_mode_downloads_nothing(node):
    result = run(node, check=True, python_version='3.12')
    assert result == {'changed': True, 'dest': node.dest, 'sha256': None, 'files': [], 'cmd': [], 'platforms': []}
    assert node.calls == []
    assert os.listdir(node.store) == []


def test_check_mode_still_refuses_an_untrusted_directory(node):
    _world_writable(node)
    result = run(node, check=True)
    assert result['failed'] is True and result['path'] == node.store and node.calls == []


@pytest.mark.parametrize('other', [False, True], ids=['same-version', 'other-version'])
def test_the_real_interpreter_is_trusted_and_its_version_probed(node, other):
    """sys.executable of the test run: a real interpreter under a trusted path, asked for its real version."""
    node.python = sys.executable
    own = '%d.%d' % sys.version_info[:2]
    node.probe = (0, subprocess.check_output([sys.executable, '-c', PROBE]).decode('ascii'), '')
    assert node.probe[1] == own + '\n'
    wanted = '3.%d' % (sys.version_info[1] + 1) if other else own
    node.download = (0, [SIX], pip_download_output([SIX]), '')
    result = run(node, python=sys.executable, python_version=wanted)
    assert result['changed'] is True and result['files'] == manifest([SIX])
    flags = ['--python-version', wanted, '--only-binary=:all:'] if other else []
    assert result['cmd'] == expected_cmd(node, node.dest_dirs[0], flags)
