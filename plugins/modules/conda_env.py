#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: conda_env
short_description: Build a conda environment from a versioned spec, beside the old one, and switch atomically
version_added: 0.1.0
description:
  - Builds the environment described by an C(environment.yml) (optionally pinned by an exact lock)
    under a Miniconda root and makes it live at C(<prefix>/envs/<name>).
  - The live path is a symlink to a build directory C(<prefix>/envs/.torchfleet/<name>.d/<key>), where
    C(<key>) is the first 12 hex digits of the spec's SHA-256 (followed by C(-) and 12 digits of the lock's
    SHA-256 when a lock is used). Each environment keeps its builds, history and moved-aside directories in
    its own C(<name>.d), so one environment's run never touches another's directories.
  - Builds made by version 0.1.0 directly under C(<prefix>/envs/.torchfleet) stay usable (reused, kept,
    pruned and removed) when their stamp names this environment; an unstamped directory there is never touched.
  - Every build records what it was built from, and the version of this collection that built it, in
    C(<build>/conda-meta/torchfleet-stamp), and what was built, every package with its version, build string and
    channel (C(pypi) for pip), as C(conda list) reports it after the build.
    M(torchfleet.cluster.torch_facts) compares the live environment with that list.
    When the live build's stamp matches the requested spec and lock and its interpreter exists, the
    module reports C(ok) without running conda at all.
  - A changed spec is built into a new directory beside the live one, smoke-tested with the new
    environment's own interpreter, checked against the spec's exact pins, stamped, and only then
    made live by renaming a new symlink over the old one. On any failure the half-built directory
    is removed and the live environment is left untouched.
  - The previous builds are kept for rollback (O(keep_previous)); O(state=rolled_back) switches the
    live symlink to the most recent build of a different spec. Reverting the spec file to an earlier
    version switches back to that kept build without rebuilding.
  - A real directory found at C(<prefix>/envs/<name>) (an environment made by hand) is never deleted;
    it is moved to C(<prefix>/envs/.torchfleet/<name>.d/legacy-<n>) and replaced by the symlink. conda
    environments are not relocatable, so the moved directory is kept for its data, not as a rollback
    target; remove it by hand or with O(state=absent).
  - conda is never called with C(--prune) and C(conda env create) never targets an existing directory.
author:
  - torchfleet developers (@torchfleet)
options:
  name:
    description:
      - Name of the environment; the live path is C(<prefix>/envs/<name>).
      - Must equal the C(name) inside the spec.
    type: str
    required: true
  prefix:
    description:
      - Root of the Miniconda installation.
    type: path
    default: /opt/miniconda3
  conda:
    description:
      - The conda executable.
      - Defaults to C(<prefix>/bin/conda), or C(<prefix>/condabin/conda) when that is absent.
    type: path
  spec:
    description:
      - Path on the node of the C(environment.yml) to build from.
      - Mutually exclusive with O(spec_content). One of them is required unless O(state=absent).
    type: path
  spec_content:
    description:
      - The C(environment.yml) text itself (the role passes the controller's file this way, so nothing
        is copied to the node on a converged run).
    type: str
  spec_file:
    description:
      - Where the spec came from, recorded as C(spec_file) in the stamp.
      - Defaults to O(spec), or C(environment.yml) for O(spec_content).
    type: str
  lock:
    description:
      - Path on the node of an exact lock, either a C(conda list --explicit) file (C(@EXPLICIT)) or a
        conda-lock file (YAML, or the JSON the role converts it to).
      - With an explicit lock the conda packages come from the lock and the spec's C(pip:) section is
        installed afterwards; with a conda-lock file both come from the lock.
      - Before a new build, every C(file://) package of the lock that exists is hashed (SHA-256 where the lock
        gives one, else MD5) and must match the lock and be a file only root can change; conda itself checks
        downloads but copies C(file://) packages unchecked. A mismatch fails the module before conda runs,
        in check mode too, naming the file and both digests.
    type: path
  lock_content:
    description:
      - The lock text itself. Mutually exclusive with O(lock).
    type: str
  lock_sha256:
    description:
      - SHA-256 to record for the lock, as 64 hex digits. Defaults to the SHA-256 of the lock bytes; the role
        passes the digest of the original file when it hands over a conda-lock file converted to JSON.
    type: str
  state:
    description:
      - V(present) builds the spec (or reuses a kept build of it) and makes it live.
      - V(rolled_back) makes the most recent kept build of a different spec live again.
      - V(absent) removes the live path and every build of this environment.
    type: str
    choices: [present, absent, rolled_back]
    default: present
  keep_previous:
    description:
      - How many earlier builds to keep beside the live one for rollback.
    type: int
    default: 1
  smoke_test:
    description:
      - Python statements run, in one process, by the new environment's interpreter before it is made live.
      - Defaults to C(import torch) when the spec asks for PyTorch, else C(import sys).
    type: list
    elements: str
  expected:
    description:
      - The spec's requirements as C(name -> pin) (null for unpinned names), as the C(conda_env_spec) action returns
        them on the controller. A pin is a version constraint in conda's match-spec form (C(2.4.6) and C(==2.4.6) exact,
        C(2.4*) a prefix, C(>=2,<3)), or a mapping with C(version) and C(build) (an exact build string or a C(*) glob).
      - The pin check and the drift audit read pins the same way; a local label such as C(+cpu) on an installed version
        is ignored unless the pin names one.
      - Used for the smoke-test default, the pin check after a build and C(--diff). When omitted it is
        derived from the spec (or an explicit lock), which needs PyYAML on the node for the spec.
      - Ignored with a conda-lock file, whose pins for the node's platform are used instead.
    type: dict
  verify_pins:
    description:
      - After a build, fail unless every requirement is installed and every exact pin matches.
    type: bool
    default: true
  environment:
    description:
      - Extra environment variables for conda, for example C(CONDA_OVERRIDE_CUDA) on a build host without a GPU.
    type: dict
    default: {}
  pip:
    description:
      - The lines of the spec's C(pip:) section, as the C(conda_env_spec) action read them on the controller.
      - Used with a lock, whose pip part comes from the spec; the node then needs no YAML library to read the spec.
        When omitted, the node reads the section from the spec itself, which needs PyYAML there.
    type: list
    elements: str
  smoke_test_user:
    description:
      - The user who runs the smoke test, through C(setpriv) with that user's groups, in a private scratch
        directory as C(HOME). A spec is code that conda and pip run as root while they build; the smoke test
        need not be, so it runs with no more rights than a node user has.
      - Looked up before anything is built; an unknown user fails the task at once.
      - V(root) runs it as root, as builds did before this option existed.
    type: str
    default: nobody
  lock_timeout:
    description:
      - Seconds to wait while another run holds this environment's lock before failing with a message that
        names the holder (pid, host, user, start time). V(0) fails at once.
    type: int
    default: 300
  pip_bundle:
    description:
      - Path on the node of a bundle of the spec's pip packages, downloaded once for the whole cluster by
        M(torchfleet.cluster.pip_wheelhouse). Used only when a new build is made.
      - The bundle is unpacked into the build's private work directory and checked against O(pip_bundle_files) first;
        any difference fails the build before conda runs. pip then installs only from it
        (C(PIP_NO_INDEX), C(PIP_FIND_LINKS)), so no node downloads pip packages itself.
      - No user other than root (or the user running the module) may be able to change its directory or any
        directory above it; the file itself may belong to another user (the bundle is verified file by file).
    type: path
  pip_bundle_files:
    description:
      - The manifest of O(pip_bundle), as M(torchfleet.cluster.pip_wheelhouse) returns it (items with C(name) and C(sha256)).
      - Required with O(pip_bundle).
    type: list
    elements: dict
  pip_bundle_max_age_hours:
    description:
      - When a build uses O(pip_bundle), first remove the other bundles (regular C(*.tar) files) in its directory that were
        last written more than this many hours ago. A run that was killed leaves its bundles there.
      - Files are removed relative to the checked directory, never through a path another user could change.
      - V(0) removes nothing.
    type: int
    default: 0
attributes:
  check_mode:
    support: full
    description: Reports what would change (and the package diff) and runs nothing that mutates.
  diff_mode:
    support: full
    description: Shows the spec-level package difference between the live environment and the requested spec.
  platform:
    support: full
    platforms: posix
    description: Needs POSIX symlinks and rename(2).
notes:
  - Several environments per node are managed with one task each (the role loops over C(conda_env_list)).
  - Runs for the same environment are serialized by C(<prefix>/envs/.torchfleet/.<name>.lock); a run takes the
    lock first and only then looks at the live environment and decides, so a run that waited sees what the
    other run made live. Check mode takes no lock and changes nothing.
  - The module refuses to run a conda executable (or the interpreter its C(#!) line names) that a user other
    than root or the module's user could change, through the file itself or any directory on its path, and
    refuses to work in a store under such a directory. Run the task as that user (C(become_user)) instead.
seealso:
  - module: torchfleet.cluster.conda_env_spec
  - module: torchfleet.cluster.torch_facts
'''

EXAMPLES = r'''
- name: Build the training environment from a spec on the node
  torchfleet.cluster.conda_env:
    name: train
    prefix: /opt/miniconda3
    spec: /srv/specs/environment.yml

- name: Build from an exact lock, keeping two earlier builds
  torchfleet.cluster.conda_env:
    name: train
    spec: /srv/specs/environment.yml
    lock: /srv/specs/train.explicit.txt
    keep_previous: 2
    smoke_test:
      - import torch
      - assert torch.distributed.is_available()

- name: Go back to the build that was live before
  torchfleet.cluster.conda_env:
    name: train
    spec: /srv/specs/environment.yml
    state: rolled_back

- name: Remove the environment and all kept builds
  torchfleet.cluster.conda_env:
    name: train
    state: absent
'''

RETURN = r'''
name:
  description: Name of the environment.
  returned: always
  type: str
  sample: train
prefix:
  description: The live path of the environment (a symlink to RV(build)).
  returned: always
  type: str
  sample: /opt/miniconda3/envs/train
python:
  description: The environment's interpreter.
  returned: always
  type: str
  sample: /opt/miniconda3/envs/train/bin/python
build:
  description: The build directory that is (or, in check mode, would be) live; null after O(state=absent).
  returned: always
  type: str
  sample: /opt/miniconda3/envs/.torchfleet/train.d/3f1c2a9b7d10
action:
  description: What was (or would be) done.
  returned: always
  type: str
  sample: build
  choices: [none, build, switch, prune, rollback, remove]
stamp:
  description: The stamp of the live build after the run, without its package list (null when absent).
  returned: always
  type: dict
  sample:
    name: train
    spec_sha256: 3f1c2a9b7d10e1c7c5f1f0c4b8a5c4e9d62e1bb1a06f0b1e5f8b0d3b0f6a7c21
    lock_sha256: null
    collection_version: 0.1.0
    spec_file: inventories/demo/environment.yml
previous:
  description: Earlier builds kept for rollback, most recent first.
  returned: always
  type: list
  elements: str
  sample: [/opt/miniconda3/envs/.torchfleet/train.d/9a0b1c2d3e4f]
removed:
  description:
    - Build directories deleted by this run.
    - A build that a running process executes from or works in (a job started before a switch) is never deleted;
      a later run deletes it once that process has ended.
  returned: always
  type: list
  elements: str
  sample: []
legacy:
  description: Where a hand-made environment found at the live path was moved.
  returned: when a real directory was moved aside
  type: str
  sample: /opt/miniconda3/envs/.torchfleet/train.d/legacy-1
packages:
  description: Spec-level package changes between the live environment and the requested spec.
  returned: when the spec changes
  type: dict
  sample:
    added: [scipy]
    removed: []
    changed: {numpy: {before: 2.4.5, after: 2.4.6}}
commands:
  description: The commands this run executed.
  returned: always
  type: list
  elements: list
  sample: [[/opt/miniconda3/bin/conda, env, create, --json, --file, /tmp/environment.yml, --prefix, /opt/miniconda3/envs/.torchfleet/train.d/3f1c2a9b7d10]]
node_platform:
  description:
    - The node's machine and glibc version (null where the C library is not glibc), for a download of pip packages
      made elsewhere for this node (M(torchfleet.cluster.pip_wheelhouse) option
      O(torchfleet.cluster.pip_wheelhouse#module:target_platforms)).
  returned: always
  type: dict
  sample: {machine: x86_64, glibc: "2.36"}
pip_bundle_files:
  description: The files of O(pip_bundle) that were verified and offered to pip for this build.
  returned: when a build used O(pip_bundle)
  type: list
  elements: str
  sample: [torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl]
pip_bundles_removed:
  description: Older bundles in the directory of O(pip_bundle) that this build removed (O(pip_bundle_max_age_hours)).
  returned: when a build used O(pip_bundle)
  type: list
  elements: str
  sample: [train.a1b2c3d4.tar]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import env_module


def main():
    module = AnsibleModule(argument_spec=env_module.ARGUMENT_SPEC, supports_check_mode=True, **env_module.MODULE_OPTIONS)
    env_module.run(module)


if __name__ == '__main__':
    main()
