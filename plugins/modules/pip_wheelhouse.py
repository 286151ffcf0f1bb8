#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: pip_wheelhouse
short_description: Download pip requirements once into a bundle that other nodes install from
version_added: 0.1.0
description:
  - Runs C(pip download) for the requirements with the pip of O(python), into a private temporary directory, and packs
    the downloaded files into one uncompressed tar at O(dest), replaced atomically.
  - Returns every file with its SHA-256, so each node that installs from the bundle verifies it first
    (M(torchfleet.cluster.conda_env) options O(torchfleet.cluster.conda_env#module:pip_bundle) and
    O(torchfleet.cluster.conda_env#module:pip_bundle_files)).
  - pip checks each file against the hash the index publishes for it, and against the requirements' C(--hash) options
    where they have them.
  - The download uses the pip configuration of the host it runs on (index, mirrors, C(/etc/pip.conf), C(PIP_*)
    variables from O(environment)).
  - The role M(torchfleet.cluster.conda_env) runs it on the controller, once per run and environment, only when some node
    needs a new build, with O(target_platforms) set to the nodes that build. The nodes then install the controller's
    files, checked against the controller's manifest, and no node's index or root decides what its peers install.
author:
  - torchfleet developers (@torchfleet)
options:
  requirements:
    description:
      - The requirement lines, as in a requirements file (the C(pip:) section of an C(environment.yml)).
    type: list
    elements: str
    required: true
  python:
    description:
      - The interpreter whose pip downloads, for example the controller's C(ansible_playbook_python) or a node's
        Miniconda base C(<prefix>/bin/python).
    type: path
    required: true
  python_version:
    description:
      - C(X.Y) of the interpreter the packages are for, when it is not O(python)'s own. Adds C(--python-version) and
        C(--only-binary=:all:), as pip requires for a download for another interpreter.
    type: str
  target_platforms:
    description:
      - The nodes to download for, when they are not the host running the module, as a mapping of each node's name to
        its C(machine) (for example C(x86_64)) and C(glibc) (C(X.Y)), as M(torchfleet.cluster.conda_env) returns them
        in RV(torchfleet.cluster.conda_env#module:node_platform).
      - The download is for their one machine and their oldest glibc (every C(manylinux) tag that glibc accepts), for
        CPython O(python_version), binary wheels only (C(--only-binary=:all:)). A package without a wheel for the nodes
        fails the download, naming the requirement, before any node changes.
      - Nodes of different machines, or without glibc, are refused, naming them.
      - Requires O(python_version).
    type: dict
  dest:
    description:
      - Path of the bundle to write. Its directory must exist, and no user other than root (or the user running
        the module) may be able to change it or any directory above it.
    type: path
    required: true
  environment:
    description:
      - Extra environment variables for pip, for example C(PIP_INDEX_URL) for a mirror.
    type: dict
    default: {}
  owner:
    description:
      - User that gets the bundle file (mode C(0600)), so that a transfer without privilege escalation can read it,
        for example the user Ansible logs in as. Defaults to the user running the module.
    type: str
attributes:
  check_mode:
    support: full
    description: Reports that the bundle would be written and downloads nothing.
  diff_mode:
    support: none
    description: A bundle has no useful text diff; RV(files) lists what it holds.
  platform:
    support: full
    platforms: posix
    description: Needs C(pip download) and POSIX ownership.
'''

EXAMPLES = r'''
- name: Download the training environment's pip packages once
  torchfleet.cluster.pip_wheelhouse:
    requirements:
      - torch==2.13.0
    python: /opt/miniconda3/bin/python
    python_version: "3.11"
    dest: /opt/miniconda3/envs/.torchfleet/wheels/train.tar
  register: wheels

- name: Download them on the controller for the nodes that build, from what each reported
  torchfleet.cluster.pip_wheelhouse:
    requirements:
      - torch==2.13.0
    python: "{{ ansible_playbook_python }}"
    python_version: "3.11"
    target_platforms:
      node0: {machine: x86_64, glibc: "2.36"}
      node1: {machine: x86_64, glibc: "2.31"}
    dest: /tmp/torchfleet-wheels.abc123/train.tar
  delegate_to: localhost
'''

RETURN = r'''
dest:
  description: Path of the bundle.
  returned: always
  type: str
  sample: /opt/miniconda3/envs/.torchfleet/wheels/train.tar
sha256:
  description: SHA-256 of the bundle file (null in check mode).
  returned: always
  type: str
  sample: 5f0c3a0f2d6e4b8f0e4a1c9d7b3e2f1a0c9b8d7e6f5a4b3c2d1e0f9a8b7c6d5e
files:
  description: The downloaded files in the bundle, sorted by name (empty in check mode).
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: File name.
      type: str
    sha256:
      description: SHA-256 of the file.
      type: str
    size:
      description: Size in bytes.
      type: int
  sample: [{name: torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl, sha256: 0f3c..., size: 190123456}]
platforms:
  description: The platform tags the download was for (empty without O(target_platforms)).
  returned: always
  type: list
  elements: str
  sample: [manylinux_2_36_x86_64, manylinux_2_35_x86_64]
cmd:
  description: The pip command that ran (not run in check mode).
  returned: always
  type: list
  elements: str
'''

import os
import pwd
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import pip_platform, wheel_bundle
from ansible_collections.torchfleet.cluster.plugins.module_utils._files import trusted_exec


def interpreter_version(module, python):
    rc, out, err = module.run_command([python, '-c', 'import sys; print("%d.%d" % sys.version_info[:2])'])
    if rc != 0:
        module.fail_json(msg='cannot run %s (rc=%d): %s' % (python, rc, wheel_bundle.last_line(err or out)),
                         rc=rc, stdout=out, stderr=err)
    return out.strip()


def target_options(module):
    """pip download's options for O(target_platforms); fails, naming the nodes, where no one download serves them."""
    try:
        return pip_platform.download_options(module.params['target_platforms'], module.params['python_version'])
    except pip_platform.PlatformError as exc:
        module.fail_json(msg='cannot download the pip packages %s for the nodes: %s'
                             % (', '.join(module.params['requirements']), exc))


def download_command(module, workdir, requirements_file, targets):
    params = module.params
    cmd = [params['python'], '-m', 'pip', 'download', '--no-input', '--disable-pip-version-check',
           '--dest', workdir, '-r', requirements_file]
    wanted = params['python_version']
    if targets:
        cmd += targets
    elif wanted and wanted != interpreter_version(module, params['python']):
        cmd += ['--python-version', wanted, '--only-binary=:all:']
    return cmd


def owner_uid(module):
    name = module.params['owner']
    if not name:
        return -1
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        module.fail_json(msg='owner %s is not a user on this node' % name)


def refuse_untrusted(module, path, action):
    finding = trusted_exec.untrusted_writer(path)
    if finding is not None:
        module.fail_json(msg=trusted_exec.describe(finding, action), path=finding.path)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            requirements=dict(type='list', elements='str', required=True),
            python=dict(type='path', required=True),
            python_version=dict(type='str'),
            dest=dict(type='path', required=True),
            environment=dict(type='dict', default={}),
            owner=dict(type='str'),
            target_platforms=dict(type='dict'),
        ),
        required_by={'target_platforms': 'python_version'},
        supports_check_mode=True,
    )
    params = module.params
    result = dict(changed=True, dest=params['dest'], sha256=None, files=[], cmd=[], platforms=[])
    uid = owner_uid(module)
    if not params['requirements']:
        module.fail_json(msg='requirements is empty: nothing to download')
    targets = target_options(module) if params['target_platforms'] is not None else []
    result['platforms'] = [targets[i + 1] for i, option in enumerate(targets) if option == '--platform']
    directory = os.path.dirname(params['dest'])
    if not os.path.isdir(directory):
        module.fail_json(msg='the directory of dest does not exist: %s' % directory)
    refuse_untrusted(module, directory, 'write the bundle %s' % params['dest'])
    finding = trusted_exec.untrusted_executable(params['python'])
    if finding is not None:
        module.fail_json(msg=trusted_exec.describe(finding, 'run %s' % params['python']), path=finding.path)
    if module.check_mode:
        module.exit_json(**result)

    workdir = tempfile.mkdtemp(prefix='.wheels-', dir=directory)
    try:
        requirements_file = os.path.join(workdir, 'requirements.txt')
        with open(requirements_file, 'w') as handle:
            handle.write('\n'.join(params['requirements']) + '\n')
        files_dir = os.path.join(workdir, 'files')
        os.mkdir(files_dir, 0o700)
        result['cmd'] = download_command(module, files_dir, requirements_file, targets)
        environ = dict((str(k), str(v)) for k, v in params['environment'].items())
        rc, out, err = module.run_command(result['cmd'], cwd=workdir, environ_update=environ)
        if rc != 0:
            module.fail_json(msg='pip download of %s failed (rc=%d): %s'
                                 % (', '.join(params['requirements']), rc, wheel_bundle.last_line(err or out)),
                             rc=rc, stdout=out, stderr=err, cmd=result['cmd'])
        packed = os.path.join(workdir, 'bundle.tar')
        try:
            result['files'] = wheel_bundle.pack(files_dir, packed)
        except wheel_bundle.BundleError as exc:
            module.fail_json(msg='cannot bundle what pip downloaded: %s' % exc, cmd=result['cmd'], stdout=out, stderr=err)
        os.chmod(packed, 0o600)
        os.chown(packed, uid, -1)
        os.rename(packed, params['dest'])
        result['sha256'] = module.sha256(params['dest'])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
