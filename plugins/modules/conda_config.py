#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: conda_config
short_description: Write a conda installation's system-scope C(.condarc)
version_added: 0.1.0
description:
  - Writes the complete system-scope configuration file of a conda installation
    (C(PREFIX/.condarc)) from the options given, idempotently and atomically.
  - The file is owned by this module; keys not given through the options are removed,
    and the diff shows what changes.
  - Auto-activation of C(base) is written with the key the installed conda understands,
    C(auto_activate) from conda 25.5.1 on and C(auto_activate_base) before, and the other
    key is removed. With both in one file, C(conda info) fails with C(MultipleKeysError) (C(--version) and
    C(list --json) still answer).
  - The conda version is taken from O(conda_version), else from C(PREFIX/bin/conda --version),
    else from the C(conda-meta) record of the conda package (which also works when a broken
    C(.condarc) keeps conda from starting).
author:
  - torchfleet developers (@torchfleet)
extends_documentation_fragment:
  - torchfleet.cluster.attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
options:
  prefix:
    description:
      - Root prefix of the conda installation, for example C(/opt/miniconda3).
    type: path
    required: true
  path:
    description:
      - The configuration file to write.
      - Defaults to C(PREFIX/.condarc), the system scope every user of the installation reads.
    type: path
  conda_version:
    description:
      - Version of the installed conda, as C(25.5.1) or as C(conda --version) prints it.
      - When omitted, the module asks the installation itself.
    type: str
  auto_activate:
    description:
      - Whether shells that load conda's hook activate the C(base) environment.
    type: bool
    default: false
  channels:
    description:
      - Channel names or URLs in priority order. Omitted from the file when not given.
    type: list
    elements: str
  channel_priority:
    description:
      - How channel order affects the solver.
    type: str
    choices: [strict, flexible, disabled]
  channel_alias:
    description:
      - Base URL that plain channel names (such as C(conda-forge)) resolve against; a mirror.
    type: str
  default_channels:
    description:
      - The channels the C(defaults) multichannel stands for; a mirror of Anaconda's channels.
    type: list
    elements: str
  custom_channels:
    description:
      - Map of channel name to the base URL that serves it, for mirrored channels.
    type: dict
  always_yes:
    description:
      - Answer yes to conda's confirmation prompts.
    type: bool
  notify_outdated_conda:
    description:
      - Whether conda warns that a newer conda exists.
    type: bool
  settings:
    description:
      - Further C(.condarc) keys and their values (scalars, lists and mappings).
      - Must not repeat a key that has an option of its own, nor name either auto-activation key.
    type: dict
    default: {}
  owner:
    description:
      - Owner of the file. Unchanged when not given.
    type: str
  group:
    description:
      - Group of the file. Unchanged when not given.
    type: str
  mode:
    description:
      - Permissions of the file, as an octal string.
      - Settings that carry credentials (a URL with a password, an anaconda.org C(/t/TOKEN/) path, a key named
        like C(password) or C(token)) are refused while the mode lets every user read the file. conda opens
        every system C(.condarc) without a permission check, so a file other users cannot read stops their
        conda; keep credentials out of it (for example C(HTTPS_PROXY) in the environment of the runs that need
        it) or choose a mode such as C(0640) with a O(group) of the users who run conda.
    type: raw
    default: '0644'
notes:
  - Credentials never appear in the diff or in the returned RV(settings); they are masked.
  - Needs no Python library on the node; the file is rendered by the module itself.
  - conda merges this file with the other system-wide ones (C(/etc/conda/.condarc),
    C(/etc/conda/condarc.d/), C(PREFIX/condarc), C(PREFIX/condarc.d/)) and the users' own; the module
    warns about the system-wide ones it finds and returns them in RV(other_sources).
seealso:
  - name: conda configuration settings
    description: Every key conda reads from C(.condarc).
    link: https://docs.conda.io/projects/conda/en/latest/user-guide/configuration/settings.html
'''

EXAMPLES = r'''
- name: Configure the system-wide conda of /opt/miniconda3
  torchfleet.cluster.conda_config:
    prefix: /opt/miniconda3
    channels:
      - conda-forge
    channel_priority: strict
    always_yes: true
    notify_outdated_conda: false

- name: Use an internal mirror for conda-forge and Anaconda's channels
  torchfleet.cluster.conda_config:
    prefix: /opt/miniconda3
    conda_version: 26.7.1
    channels: [conda-forge, defaults]
    channel_alias: https://conda.mirror.example.internal
    default_channels:
      - https://conda.mirror.example.internal/pkgs/main
    settings:
      ssl_verify: /etc/ssl/certs/ca-certificates.crt
'''

RETURN = r'''
path:
  description: The configuration file.
  returned: always
  type: str
  sample: /opt/miniconda3/.condarc
conda_version:
  description: The conda version the file was written for.
  returned: always
  type: str
  sample: 26.7.1
auto_activate_key:
  description: The auto-activation key written for that version.
  returned: always
  type: str
  sample: auto_activate
removed_keys:
  description: Top-level keys the previous file had and the new one does not.
  returned: always
  type: list
  elements: str
  sample: [auto_activate_base]
other_sources:
  description: Other system-wide configuration files conda reads besides this one.
  returned: always
  type: list
  elements: str
  sample: [/opt/miniconda3/condarc.d/anaconda-tos.yml]
settings:
  description: Every key and value the file now holds, credentials masked.
  returned: always
  type: dict
  sample: {"auto_activate": false, "channels": ["conda-forge"], "channel_priority": "strict"}
'''

import os
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_native

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import credentials
from ansible_collections.torchfleet.cluster.plugins.module_utils._conda.condarc import (
    SETTINGS_SPEC,
    auto_activate_key,
    desired_settings,
    other_system_sources,
    parse_conda_version,
    render_condarc,
    top_level_keys,
    version_from_conda_meta,
    version_string,
)


def detect_version(module, prefix):
    """Version tuple of the conda in ``prefix``; fails the module when there is none."""
    given = module.params['conda_version']
    if given:
        version = parse_conda_version(given if given.startswith('conda') else 'conda ' + given)
        if version is None:
            module.fail_json(msg='conda_version %r is not a conda version such as 25.5.1' % given)
        return version
    conda = os.path.join(prefix, 'bin', 'conda')
    rc, out, err = 0, '', ''
    if os.path.exists(conda):
        rc, out, err = module.run_command([conda, '--version'])
        version = parse_conda_version(out) or parse_conda_version(err)
        if rc == 0 and version:
            return version
    version = version_from_conda_meta(prefix)
    if version:
        return version
    module.fail_json(
        msg='cannot tell which conda is installed in %s: %s --version did not report a version '
            'and %s/conda-meta has no conda record; pass conda_version' % (prefix, conda, prefix),
        rc=rc, stdout=out, stderr=err)


def settings_for(module, version):
    try:
        return desired_settings(module.params, version)
    except ValueError as exc:
        module.fail_json(msg=to_native(exc))


def refuse_readable_credentials(module, settings, path):
    mode = module.params['mode']
    try:
        mode_bits = int(str(mode), 8)
    except ValueError:
        return  # a symbolic mode: load_file_common_arguments reports it if it is invalid
    if mode_bits & 0o004 and credentials.has_credentials(settings):
        module.fail_json(msg='the settings for %s carry credentials (shown masked: %s) but mode %s lets every user '
                             'read the file; pass them to the runs that need them instead (for example HTTPS_PROXY '
                             'in conda_env_environment), or set a mode such as 0640 with a group of the users who '
                             'run conda' % (path, credentials.mask_value(settings), mode))


def read_text(path):
    try:
        with open(path, 'rb') as handle:
            return to_native(handle.read(), errors='surrogate_or_strict')
    except (IOError, OSError):
        return None


def write_atomically(module, path, text):
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        module.fail_json(msg='cannot write %s: directory %s does not exist (is conda installed there?)' % (path, directory))
    fd, tmp = tempfile.mkstemp(prefix='.condarc.', dir=directory)
    try:
        with os.fdopen(fd, 'wb') as handle:
            handle.write(to_bytes(text, errors='surrogate_or_strict'))
    except (IOError, OSError) as exc:
        os.unlink(tmp)
        module.fail_json(msg='cannot write %s: %s' % (path, to_native(exc)))
    module.atomic_move(tmp, path)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            prefix=dict(type='path', required=True),
            path=dict(type='path'),
            conda_version=dict(type='str'),
            owner=dict(type='str'),
            group=dict(type='str'),
            mode=dict(type='raw', default='0644'),
            **SETTINGS_SPEC
        ),
        supports_check_mode=True,
    )
    prefix = module.params['prefix']
    path = module.params['path'] or os.path.join(prefix, '.condarc')
    version = detect_version(module, prefix)
    settings = settings_for(module, version)

    refuse_readable_credentials(module, settings, path)
    before = read_text(path)
    after = render_condarc(settings)
    changed = before != after
    if changed and not module.check_mode:
        write_atomically(module, path, after)
    if os.path.exists(path):
        file_args = module.load_file_common_arguments(module.params, path=path)
        changed = module.set_fs_attributes_if_different(file_args, changed)

    others = other_system_sources(prefix, path)
    for other in others:
        module.warn('conda also reads %s; its settings merge with those of %s' % (other, path))
    result = dict(
        changed=changed,
        other_sources=others,
        path=path,
        conda_version=version_string(version),
        auto_activate_key=auto_activate_key(version),
        removed_keys=[key for key in top_level_keys(before) if key not in settings],
        settings=credentials.mask_value(settings),
    )
    if module._diff:
        result['diff'] = dict(before=credentials.mask_text(before or ''), after=credentials.mask_text(after),
                              before_header=path, after_header=path)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
