# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Several read-only checks in one module process: each runs the code of its own module.

A check is a module's ``run(module)`` given a stand-in for ``AnsibleModule``: its own
parameters, validated against that module's argument spec, in check mode, without diffs.
Its ``exit_json`` and ``fail_json`` end the one check, not the process, so a check that
fails reports the message its own module would have failed with, and the others still answer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import env_module
from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import install_probe
from ansible_collections.torchfleet.cluster.plugins.module_utils._files import state_compare
from ansible_collections.torchfleet.cluster.plugins.module_utils._probe import rdma_sysfs
from ansible_collections.torchfleet.cluster.plugins.module_utils._probe import torch_module

CHECKS = {
    'state_check': state_compare,
    'miniconda_probe': install_probe,
    'conda_env': env_module,
    'torch_facts': torch_module,
    'rdma_ports': rdma_sysfs,
}


class CheckFinished(Exception):
    """A check called exit_json or fail_json; ``result`` is what it returned."""

    def __init__(self, result):
        super(CheckFinished, self).__init__(result.get('msg', ''))
        self.result = result


class CheckModule(object):
    """What a module's ``run`` needs of AnsibleModule, for one check inside another module."""

    def __init__(self, parent, name, params):
        self._parent = parent
        self._name = name
        self.params = params
        self.check_mode = True
        self._diff = False

    def exit_json(self, **result):
        raise CheckFinished(result)

    def fail_json(self, msg, **result):
        result.update(failed=True, msg=msg)
        raise CheckFinished(result)

    def warn(self, warning):
        self._parent.warn('%s: %s' % (self._name, warning))

    def __getattr__(self, attribute):
        return getattr(self._parent, attribute)


def validated_params(parent, name, spec, params, options=None):
    """The parameters as a module with this argument spec would see them, or a failed result."""
    validator = ArgumentSpecValidator(spec, **(options or {}))
    validation = validator.validate(params)
    parent.no_log_values.update(validation._no_log_values)
    if validation.error_messages:
        return None, dict(failed=True, msg='%s: %s' % (name, '; '.join(validation.error_messages)))
    return validation.validated_parameters, None


CHECK_SPEC = dict(
    module=dict(type='str', required=True, choices=sorted(CHECKS)),
    params=dict(type='dict', default={}),
)


def run_check(parent, name, check):
    """One check's result: its module's return values, or ``failed`` and ``msg``."""
    check, failure = validated_params(parent, name, CHECK_SPEC, check)
    if failure is not None:
        return failure
    code = CHECKS[check['module']]
    params, failure = validated_params(parent, name, code.ARGUMENT_SPEC, check['params'], code.MODULE_OPTIONS)
    if failure is not None:
        return failure
    try:
        code.run(CheckModule(parent, name, params))  # always ends in exit_json or fail_json
    except CheckFinished as finished:
        return finished.result
    return dict(failed=True, msg='%s: the check ended without an answer' % name)


def answered_facts(answers):
    """The facts the checks that succeeded return (a torch_facts check's ansible_facts.torch), merged."""
    facts = {}
    for answer in answers.values():
        if not answer.get('failed'):
            facts.update(answer.get('ansible_facts') or {})
    return facts
