# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Validate an environment.yml (and its lock) on the controller; see the module stub for docs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible.errors import AnsibleActionFail, AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import envspec

ARGUMENT_SPEC = {
    'path': {'type': 'path', 'required': True},
    'lock': {'type': 'path'},
    'name': {'type': 'str'},
}


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        spec_path = self._resolve(args['path'], 'environment spec')
        spec_bytes = self._read(spec_path, args['path'])
        try:
            spec = envspec.parse_spec(spec_bytes, args['path'])
        except envspec.SpecError as exc:
            raise AnsibleActionFail(str(exc))
        if args['name'] and spec['name'] != args['name']:
            raise AnsibleActionFail("%s: the environment is named %r, but %r was expected"
                                    % (args['path'], spec['name'], args['name']))
        expected = envspec.expected_pins(spec)
        result.update(
            changed=False,
            name=spec['name'],
            spec_file=args['path'],
            path=spec_path,
            spec_sha256=envspec.sha256_bytes(spec_bytes),
            content=to_text(spec_bytes),
            channels=spec['channels'],
            dependencies=[dep['spec'] for dep in spec['dependencies']],
            pip=[req['line'] for req in spec['pip']],
            expected=expected,
            smoke_test=envspec.default_smoke_test(expected),
            lock=None,
        )
        if spec['warnings']:
            result['warnings'] = list(spec['warnings'])
        if args['lock']:
            result['lock'] = self._lock(args['lock'], spec)
            result['expected'] = result['lock']['expected']
        return result

    def _resolve(self, path, what):
        try:
            return self._find_needle('files', path)
        except AnsibleError:
            raise AnsibleActionFail('%s %s not found on the controller' % (what, path))

    def _read(self, path, shown):
        try:
            with open(path, 'rb') as handle:
                return handle.read()
        except (IOError, OSError) as exc:
            raise AnsibleActionFail('cannot read %s: %s' % (shown, exc))

    def _lock(self, given, spec):
        path = self._resolve(given, 'lock file')
        data = self._read(path, given)
        try:
            lock = envspec.parse_lock(data, given)
        except envspec.SpecError as exc:
            raise AnsibleActionFail(str(exc))
        if lock['kind'] == envspec.LOCK_CONDA_LOCK:
            # Nodes may lack PyYAML: hand the module the same data as JSON.
            content = json.dumps({'version': 1, 'metadata': {'platforms': lock['platforms']},
                                  'package': [_conda_lock_entry(p) for p in lock['packages']]},
                                 sort_keys=True)
            platform = 'linux-64' if 'linux-64' in lock['platforms'] else lock['platforms'][0]
            pins = envspec.lock_pins(lock, platform)
        else:
            content = to_text(data)
            pins = envspec.lock_pins(lock)
            pins.update((n, v) for n, v, m in envspec.spec_requirements(spec) if m == 'pip')
        return {'path': path, 'lock_file': given, 'kind': lock['kind'], 'platforms': lock['platforms'],
                'sha256': envspec.sha256_bytes(data), 'content': content, 'expected': pins,
                'basename': os.path.basename(given)}


def _conda_lock_entry(pkg):
    return {'name': pkg['name'], 'version': pkg['version'], 'manager': pkg['manager'], 'platform': pkg['platform'],
            'url': pkg['url'], 'hash': dict((k, pkg[k]) for k in ('md5', 'sha256') if pkg.get(k)),
            'category': pkg['category'], 'optional': pkg['optional']}
