#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: conda_env_spec
short_description: Validate a conda environment.yml and its lock on the controller
version_added: 0.1.0
description:
  - Reads an C(environment.yml) (and optionally an exact lock) B(on the controller), validates it and
    returns the parsed spec, its SHA-256 and the pins, so that a bad file fails the play before
    any node is touched.
  - Validation follows conda's own schema for environment files (C(name), C(channels), C(dependencies),
    C(prefix), C(variables)) plus C(platforms), which conda-lock reads from the same file. It fails on a
    YAML syntax error, a missing or invalid C(name), a malformed dependency, a duplicate key, and on a
    C(pip:) section without C(pip) among the dependencies, naming the file and the line. An unknown
    top-level key is a warning, as conda warns and ignores it.
  - C(pip:) lines are read as pip reads a requirements file, with C(packaging.requirements); requirements with
    extras, markers, C(name @ URL) and C(--hash=ALGORITHM:HEX), URL and local path lines, C(-r), C(-c), C(-e) and
    pip's other requirement-file options are accepted; anything pip would refuse fails, naming the file and line.
  - Warns when a C(pip:) package is also a conda dependency (two copies), and when numpy, scipy, the BLAS stack or
    CUDA wheels (C(nvidia-*), a C(+cu) torch or a CUDA index URL) come from pip over conda, with the reason.
  - Locks are either a C(conda list --explicit) file (marked C(@EXPLICIT)) or a conda-lock file
    (version 1). A conda-lock file is returned converted to JSON so nodes need no YAML library.
  - This is an action plugin; it never connects to the host. Run it with C(run_once) to validate once per play.
author:
  - torchfleet developers (@torchfleet)
options:
  path:
    description:
      - Path of the C(environment.yml) on the controller (relative paths are searched like
        M(ansible.builtin.copy) sources).
    type: path
    required: true
  lock:
    description:
      - Path of an exact lock on the controller.
    type: path
  name:
    description:
      - When given, fail unless the spec names the environment this way.
    type: str
attributes:
  action:
    support: full
    description: Runs entirely on the controller.
  check_mode:
    support: full
    description: Reads files only; behaves the same in check mode.
  diff_mode:
    support: none
    description: Reports no diff; nothing changes.
  platform:
    support: full
    platforms: posix
    description: Runs on the controller only.
notes:
  - Pins are version constraints in conda's match-spec form, read by the same code in the build's pin check and
    the drift audit (C(plugins/module_utils/_conda/matchspec.py)); unpinned names map to null. conda's C(name=1.2) is a
    prefix pin (V(=1.2), which C(1.2.3) satisfies), C(name==1.2) is exact (C(1.2.0) satisfies it, C(1.2.1) does not), a
    build string gives a mapping C({version, build}); pip's local labels (C(2.13.0+cpu)) are ignored unless the pin
    names one, as pip ignores them. A pip line with an environment marker gives no pin.
seealso:
  - module: torchfleet.cluster.conda_env
'''

EXAMPLES = r'''
- name: Validate the versioned environment.yml once, before touching any node
  torchfleet.cluster.conda_env_spec:
    path: "{{ inventory_dir }}/environment.yml"
  run_once: true
  register: train_spec

- name: Validate a spec with its explicit lock
  torchfleet.cluster.conda_env_spec:
    path: files/environment.yml
    lock: files/train-linux-64.explicit.txt
    name: train
  run_once: true
'''

RETURN = r'''
name:
  description: The environment's name from the spec.
  returned: success
  type: str
  sample: train
spec_file:
  description: The path as given.
  returned: success
  type: str
  sample: inventories/demo/environment.yml
path:
  description: The resolved path on the controller.
  returned: success
  type: str
  sample: /work/inventories/demo/environment.yml
spec_sha256:
  description: SHA-256 of the file's bytes.
  returned: success
  type: str
  sample: 5b0e0a5f5c0f5a3e0b0b2d9b8e1f4f2d6c7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c
content:
  description: The file's text, for M(torchfleet.cluster.conda_env)'s O(torchfleet.cluster.conda_env#module:spec_content).
  returned: success
  type: str
  sample: "name: train\ndependencies:\n  - python=3.11\n"
channels:
  description: The spec's channels.
  returned: success
  type: list
  elements: str
  sample: [conda-forge]
dependencies:
  description: The conda requirement strings.
  returned: success
  type: list
  elements: str
  sample: [python=3.11, pip, numpy=2.4.6]
pip:
  description: The lines of the C(pip:) section.
  returned: success
  type: list
  elements: str
  sample: [torch==2.13.0]
expected:
  description:
    - Lower-case package name to pin (null where unpinned); from the lock when one is given.
  returned: success
  type: dict
  sample: {python: '=3.11', pip: null, numpy: '=2.4.6', torch: '==2.13.0'}
smoke_test:
  description: The default smoke test for this spec.
  returned: success
  type: list
  elements: str
  sample: [import torch]
lock:
  description: The validated lock, or null.
  returned: success
  type: dict
  contains:
    kind:
      description: V(explicit) or V(conda-lock).
      type: str
      sample: explicit
    sha256:
      description: SHA-256 of the lock file's bytes.
      type: str
      sample: 9f0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c
    content:
      description: The lock text (a conda-lock file converted to JSON).
      type: str
      sample: "@EXPLICIT\n"
    platforms:
      description: Platforms the lock covers.
      type: list
      elements: str
      sample: [linux-64]
    expected:
      description: Pins from the lock.
      type: dict
      sample: {numpy: 2.4.6}
    path:
      description: The resolved path on the controller.
      type: str
      sample: /work/files/train.explicit.txt
    lock_file:
      description: The path as given.
      type: str
      sample: files/train.explicit.txt
    basename:
      description: The file name of the lock.
      type: str
      sample: train.explicit.txt
'''
