# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_plan answers each check exactly as the check's own module would, in one call."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.torchfleet.cluster.plugins.modules import (
    conda_env, miniconda_probe, node_plan, rdma_ports, state_check, torch_facts)
from ansible_collections.torchfleet.cluster.tests.unit.plugins.modules.module_exits import ExitJson, FailJson

pytestmark = pytest.mark.usefixtures('module_exits')

MODULES = {'state_check': state_check, 'miniconda_probe': miniconda_probe, 'conda_env': conda_env, 'torch_facts': torch_facts,
           'rdma_ports': rdma_ports}


def run(module, params, check_mode=False):
    with patch_module_args(dict(params, _ansible_check_mode=check_mode)):
        with pytest.raises((ExitJson, FailJson)) as caught:
            module.main()
    return caught.value.args[0]


def comparable(result):
    """A result without what Ansible adds around a module's own answer."""
    return dict((key, value) for key, value in result.items() if key not in ('invocation', 'warnings'))


@pytest.fixture
def tree(tmp_path):
    (tmp_path / 'present.conf').write_text('answer = 42\n')
    (tmp_path / 'prefix').mkdir()
    return tmp_path


def cases(tree):
    """(name, module, params) for answers that agree, that differ and that fail validation or the check."""
    return [
        ('converged', 'state_check', dict(files=[dict(path=str(tree / 'present.conf'), content='answer = 42\n')])),
        ('differs', 'state_check', dict(files=[dict(path=str(tree / 'present.conf'), content='answer = 41\n'),
                                               dict(path=str(tree / 'missing.conf'), content='x\n')])),
        ('bad block', 'state_check', dict(files=[dict(path=str(tree / 'present.conf'), block='x')])),
        ('probe', 'miniconda_probe', dict(prefix=str(tree / 'prefix'))),
        ('probe without prefix', 'miniconda_probe', dict()),
        ('relative prefix', 'miniconda_probe', dict(prefix='opt/miniconda3')),
        ('bad env name', 'conda_env', dict(name='../train', prefix=str(tree / 'prefix'), spec_content='name: x\n')),
        ('unknown option', 'conda_env', dict(name='train', spec_content='name: x\n', colour='red')),
        ('no rdma device', 'rdma_ports', dict(sysfs=str(tree), interface='eth0', address='10.0.0.1')),
        ('bad interface', 'rdma_ports', dict(sysfs=str(tree), interface='eth0;id')),
    ]


def test_every_answer_is_the_modules_own(tree):
    checks = dict((name, dict(module=module, params=params)) for name, module, params in cases(tree))
    answers = run(node_plan, dict(checks=checks))['answers']
    assert sorted(answers) == sorted(checks)
    for name, module, params in cases(tree):
        alone = run(MODULES[module], params, check_mode=True)
        planned = answers[name]
        if alone.get('failed'):
            assert planned['failed'] is True
            # Ansible words the module's own validation failure differently; what is wrong reads the same.
            assert planned['msg'].endswith(alone['msg'].split(': ', 1)[-1]), (planned['msg'], alone['msg'])
        else:
            assert comparable(planned) == comparable(alone), name


def test_one_failing_check_leaves_the_others_answered(tree):
    answers = run(node_plan, dict(checks=dict(
        broken=dict(module='state_check', params=dict(files=[dict(path='relative/path', content='x')])),
        fine=dict(module='state_check', params=dict(files=[dict(path=str(tree / 'present.conf'), content='answer = 42\n')])),
        unknown=dict(module='shell', params=dict(cmd='id')),
    )))['answers']
    assert answers['broken'] == dict(failed=True, msg='files: path relative/path is not absolute')
    assert answers['fine']['converged'] is True
    assert answers['unknown']['failed'] is True and answers['unknown']['msg'].startswith('unknown: value of module must be one of')


def test_answers_are_never_changes(tree):
    result = run(node_plan, dict(checks=dict((name, dict(module=module, params=params))
                                             for name, module, params in cases(tree))))
    assert result['changed'] is False
    assert all(not answer.get('changed') for answer in result['answers'].values())


def test_a_key_pair_check_answers_for_a_missing_user(tree):
    checks = dict(keys=dict(module='state_check',
                            params=dict(ssh_user_keys=dict(user='no-such-user-here', authorized_key_options='from="10.0.0.0/8"'))))
    answers = run(node_plan, dict(checks=checks))['answers']
    assert answers['keys']['converged'] is False
    assert answers['keys']['differences'] == ['user no-such-user-here: does not exist']


def test_the_facts_of_a_successful_probe_become_the_nodes_facts(tree):
    missing = str(tree / 'envs' / 'train' / 'bin' / 'python')
    result = run(node_plan, dict(checks=dict(
        torch=dict(module='torch_facts', params=dict(python=missing, ignore_missing=True)),
    )))
    alone = run(MODULES['torch_facts'], dict(python=missing, ignore_missing=True), check_mode=True)
    assert result['ansible_facts'] == alone['ansible_facts']
    assert result['ansible_facts']['torch']['version'] is None


def test_a_failed_probe_sets_no_facts(tree):
    missing = str(tree / 'envs' / 'train' / 'bin' / 'python')
    result = run(node_plan, dict(checks=dict(torch=dict(module='torch_facts', params=dict(python=missing)))))
    assert result['answers']['torch']['failed'] is True
    assert result['answers']['torch']['msg'] == 'torch_facts: the interpreter %s does not exist or is not executable' % missing
    assert result['ansible_facts'] == {}
