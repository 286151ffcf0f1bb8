# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""torchfleet.cluster.miniconda_probe on real trees: root runs the installation's conda only while
nothing in or above the prefix is another user's. The conda under test is a script that records
each run, so a case can tell whether it ran."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.torchfleet.cluster.plugins.modules import miniconda_probe
from ansible_collections.torchfleet.cluster.tests.unit.plugins.modules.module_exits import ExitJson, FailJson

NOBODY = 65534
# What real conda 25.11.1 printed for `conda --version` with an unparsable PREFIX/.condarc (the
# last line of its error report; the recorded report names ruamel's ParserError in its traceback).
PARSER_ERROR_REPORT = ("# >>>>>>>>>>>>>>>>>>>>>> ERROR REPORT <<<<<<<<<<<<<<<<<<<<<<\n"
                       "    ruamel.yaml.parser.ParserError: while parsing a flow sequence\n"
                       "An unexpected error has occurred. Conda has prepared the above report.\n")


@pytest.fixture
def prefix(tmp_path, module_exits):
    root = tmp_path / 'miniconda3'
    for sub in ('bin', 'lib', 'pkgs', 'envs/.torchfleet'):
        (root / sub).mkdir(parents=True)
    write_conda(root, 'echo "conda 26.7.1"')
    return root


def write_conda(root, body):
    conda = root / 'bin' / 'conda'
    conda.write_text('#!/bin/sh\necho ran >> "%s"\n%s\n' % (root.parent / 'conda-ran', body))
    conda.chmod(0o755)


def ran(root):
    return (root.parent / 'conda-ran').exists()


def probe(root, **params):
    params.setdefault('prefix', str(root))
    with patch_module_args(params):
        with pytest.raises((ExitJson, FailJson)) as caught:
            miniconda_probe.main()
    return caught.value.args[0]


def test_a_root_installation_reports_everything_and_runs_conda(prefix):
    (prefix / '.condarc').write_text('auto_activate: false\n')
    (prefix / '.condarc').chmod(0o644)
    result = probe(prefix, snippet=str(prefix / 'no-such-snippet'))
    assert result['changed'] is False and result['untrusted'] is None
    assert result['prefix_exists'] is True and result['snippet_exists'] is False
    assert result['arch'] == os.uname()[4]
    assert result['conda_version'] == '26.7.1' and ran(prefix)
    assert result['condarc'] == {'owner': 'root', 'group': 'root', 'mode': '644',
                                 'sha256': hashlib.sha256(b'auto_activate: false\n').hexdigest()}
    assert result['condarc_unparsable'] is False


def _own(path, uid=NOBODY, gid=NOBODY):
    os.chown(str(path), uid, gid)
    return path


def _cache_file_of_another_user(root):
    path = root / 'pkgs' / 'urls.txt'
    path.write_text('')
    return _own(path)


UNTRUSTED = [
    ('bin/ of another user', lambda root: _own(root / 'bin'), 'is owned by nobody'),
    ('conda of another user', lambda root: _own(root / 'bin' / 'conda'), 'is owned by nobody'),
    ('a package file in the cache', _cache_file_of_another_user, 'is owned by nobody'),
    ('another group', lambda root: _own(root / 'lib', 0, NOBODY), 'belongs to group id %d' % NOBODY),
    ('writable by everyone', lambda root: (root / 'lib').chmod(0o777) or root / 'lib', 'is writable by every user'),
    ('the envs directory itself', lambda root: _own(root / 'envs'), 'is owned by nobody'),
    ('a directory above the prefix', lambda root: _own(root.parent), 'is owned by nobody'),
]


@pytest.mark.skipif(os.geteuid() != 0, reason='changing owners needs root')
@pytest.mark.parametrize('make_untrusted, reason', [case[1:] for case in UNTRUSTED], ids=[case[0] for case in UNTRUSTED])
def test_an_installation_another_user_can_change_is_reported_and_conda_never_runs(prefix, make_untrusted, reason):
    culprit = make_untrusted(prefix)
    (prefix / '.condarc').write_text('channels: [conda-forge]\n')
    result = probe(prefix)
    assert result['untrusted'] == {'path': str(culprit), 'reason': reason}
    assert not ran(prefix) and result['conda_version'] == '' and result['condarc'] is None


@pytest.mark.skipif(os.geteuid() != 0, reason='changing owners needs root')
@pytest.mark.parametrize('entry', ['envs/train', 'envs/.torchfleet', '.torchfleet-wheels'])
def test_environments_and_the_collections_scratch_are_left_to_their_roles(prefix, entry):
    path = prefix / entry
    path.mkdir(exist_ok=True)
    _own(path)
    result = probe(prefix)
    assert result['untrusted'] is None and result['conda_version'] == '26.7.1'


def test_a_link_is_judged_by_its_own_owner_and_never_followed(prefix, tmp_path):
    victim = tmp_path / 'elsewhere'
    victim.mkdir()
    victim.chmod(0o777)
    os.symlink(str(victim), str(prefix / 'pkgs' / 'link'))
    assert probe(prefix)['untrusted'] is None


def test_conda_stopped_by_an_unparsable_condarc(prefix):
    write_conda(prefix, 'printf "%s" >&2\nexit 1' % PARSER_ERROR_REPORT.replace('\n', '\\n'))
    result = probe(prefix)
    assert result['conda_version'] == '' and result['condarc_unparsable'] is True
    assert 'ParserError' in result['conda_output']


def test_a_deleted_conda_is_no_version_and_no_parse_failure(prefix):
    os.unlink(str(prefix / 'bin' / 'conda'))
    result = probe(prefix)
    assert result['conda_version'] == '' and result['condarc_unparsable'] is False and result['conda_output'] == ''


def test_a_missing_prefix(tmp_path, module_exits):
    result = probe(tmp_path / 'absent')
    assert result['prefix_exists'] is False and result['untrusted'] is None and result['conda_version'] == ''


def test_a_relative_prefix_is_refused(tmp_path, module_exits):
    result = probe(tmp_path, prefix='opt/miniconda3')
    assert result['failed'] is True and 'absolute path' in result['msg']
