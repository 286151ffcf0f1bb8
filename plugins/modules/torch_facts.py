#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: torch_facts
short_description: Gather PyTorch, CUDA, GPU and environment facts from a Python environment
version_added: 0.1.0
author:
  - torchfleet developers (@torchfleet)
description:
  - Runs a small probe in the environment's own interpreter, once, in one subprocess, and
    returns what it reports as C(ansible_facts.torch).
  - Versions come from torch itself (C(torch.__version__), C(torch.version.cuda),
    C(torch.backends.cudnn.version()), C(torch.cuda.nccl.version()),
    C(torch.distributed.is_*_available())). The module process never imports torch.
  - The GPU list and the NVIDIA driver version come from NVML when C(pynvml) (nvidia-ml-py)
    is importable in the environment, otherwise from
    C(nvidia-smi --query-gpu=name,compute_cap,uuid,driver_version --format=csv,noheader),
    otherwise from C(/proc/driver/nvidia). The probe starts that query before importing torch
    so that it costs no extra time. Where an NVIDIA driver is present, C(cuDriverGetVersion) of
    C(libcuda.so.1) (which does not initialise CUDA) gives the newest CUDA version the driver supports.
  - By default CUDA is initialised (see O(probe_cuda)) wherever a CUDA build of torch meets an NVIDIA
    driver, so C(cuda_available) is measured, not inferred.
  - A node without GPUs or without an NVIDIA driver is not an error.
  - The environment fingerprint is the package list of C(<prefix>/conda-meta/*.json) records
    merged with the Python distributions found on the interpreter's C(sys.path), and the build
    stamp C(<prefix>/conda-meta/torchfleet-stamp) written by the conda_env role.
options:
  python:
    description:
      - Path of the environment's Python interpreter, for example C(/opt/miniconda3/envs/train/bin/python).
      - A bare command name is looked up in E(PATH).
      - The environment name in RV(ansible_facts.torch.env.name) is taken from this path as given,
        without resolving symlinks.
    type: path
    required: true
  probe_cuda:
    description:
      - Initialise CUDA in the probe and take C(cuda_available), C(gpu_count) and C(gpus) from
        C(torch.cuda.is_available()), C(torch.cuda.device_count()) and
        C(torch.cuda.get_device_properties()).
      - Slower (seconds on a multi-GPU node), but proves that this torch build works with this driver.
      - Unset (the default), the probe does it when torch is a CUDA build and the node has an NVIDIA driver
        (C(/proc/driver/nvidia) or C(nvidia-smi)); on a CPU build or a node without a driver,
        C(cuda_available) is V(false) without initialising anything.
      - When V(false), C(cuda_available) is inferred - V(true) for a CUDA build of torch on a node whose
        driver lists at least one GPU.
    type: bool
  ignore_missing:
    description:
      - When the interpreter is missing, torch cannot be imported, or the probe fails, return the
        facts with null values (and whatever the probe could still find out) and a warning,
        instead of failing.
    type: bool
    default: false
  timeout:
    description:
      - Seconds the probe may run before it is killed (through C(timeout) from coreutils when the
        node has it). C(nvidia-smi) inside the probe gets at most 20 seconds of this.
    type: int
    default: 120
extends_documentation_fragment:
  - torchfleet.cluster.attributes
attributes:
  check_mode:
    support: full
    details:
      - This module only reads; it runs the same way in check mode.
  diff_mode:
    description: Returns details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
  facts:
    description: Action returns an C(ansible_facts) dictionary that updates existing host facts.
    support: full
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: posix
notes:
  - The probe runs C(python -I), so E(PYTHONPATH), the user site directory and the current
    directory do not leak into the facts.
  - Run as root, the probe runs as the owner of the environment when that is another user (or as
    C(nobody) when anyone can write it), through C(setpriv), so that root never runs code that a less
    privileged user can change. The facts are the same, the environment being readable to its owner.
  - Run as any other user (an audit without C(become)), it refuses an environment that a third user can
    change, naming the path, because that user's code would otherwise run with the rights of the account
    running the probe, whose sudo may give root.
  - RV(ansible_facts.torch.cudnn) converts C(torch.backends.cudnn.version()) with cuDNN's own
    encoding, major*1000+minor*100+patch before 9.0 (V(8902) is V(8.9.2)) and
    major*10000+minor*100+patch from 9.0 on (V(91002) is V(9.10.2)).
  - RV(ansible_facts.torch.env.packages_sha256) is the SHA-256 of the UTF-8 lines
    C(name version build channel), one per package, sorted by name, each ending in a newline.
    Names are lower-case and PEP 503 normalised; channels are reduced to their name (mirror
    host, path prefix and platform subdirectory are dropped, so that nodes behind different mirrors
    agree; for example C(https://mirror/x/conda-forge/linux-64) is C(conda-forge), C(.../pkgs/main/noarch) is C(pkgs/main));
    packages only pip knows have build C(pypi_0) and channel C(pypi), as in C(conda list).
  - A Python distribution whose metadata directory belongs to a conda record is that record's
    (as C(conda list) decides); on a name clash the conda record wins.
  - With O(probe_cuda=true) the GPU order is CUDA's (E(CUDA_DEVICE_ORDER), E(CUDA_VISIBLE_DEVICES)
    apply); otherwise it is the driver's.
seealso:
  - name: PyTorch collect_env
    description: The text report this module gives in structured form.
    link: https://github.com/pytorch/pytorch/blob/main/torch/utils/collect_env.py
'''

EXAMPLES = r'''
- name: Gather torch facts from the training environment
  torchfleet.cluster.torch_facts:
    python: /opt/miniconda3/envs/train/bin/python

- name: Prove that CUDA really initialises, and tolerate nodes that are not built yet
  torchfleet.cluster.torch_facts:
    python: /opt/miniconda3/envs/train/bin/python
    probe_cuda: true
    ignore_missing: true
    timeout: 300

- name: Show the versions
  ansible.builtin.debug:
    msg: "torch {{ ansible_facts.torch.version }} CUDA {{ ansible_facts.torch.cuda }} on {{ ansible_facts.torch.gpu_count }} GPUs"
'''

RETURN = r'''
ansible_facts:
  description: Facts added to the host.
  returned: always
  type: dict
  contains:
    torch:
      description:
        - PyTorch stack of the environment. Every value is null when the probe failed and
          O(ignore_missing=true); C(env), C(driver) and the GPU list are still filled when only
          torch was missing.
      returned: always
      type: dict
      contains:
        version:
          description: C(torch.__version__).
          returned: always
          type: str
          sample: 2.13.0+cpu
        cuda:
          description: C(torch.version.cuda), null on CPU builds.
          returned: always
          type: str
          sample: "12.8"
        cudnn:
          description: cuDNN version torch loads, null on CPU builds.
          returned: always
          type: str
          sample: 9.10.2
        nccl:
          description: NCCL version torch was built with, null on CPU builds.
          returned: always
          type: str
          sample: 2.27.3
        cuda_available:
          description: Whether CUDA is usable (see O(probe_cuda) for how this is decided).
          returned: always
          type: bool
          sample: false
        gpu_count:
          description: Number of GPUs.
          returned: always
          type: int
          sample: 0
        gpus:
          description: The GPUs, in driver order (CUDA order with O(probe_cuda=true)).
          returned: always
          type: list
          elements: dict
          contains:
            name:
              description: Product name.
              type: str
              returned: always
              sample: NVIDIA H200
            capability:
              description: CUDA compute capability, null where only C(/proc) was available.
              type: str
              returned: always
              sample: "9.0"
            uuid:
              description: GPU UUID.
              type: str
              returned: always
              sample: GPU-5a3c1f0e-8d2b-4c7a-9e61-0b7d2f4a9c13
        driver:
          description: NVIDIA driver version, null without a driver.
          returned: always
          type: str
          sample: 570.124.06
        driver_cuda:
          description:
            - Newest CUDA version the driver supports (the C(CUDA Version) in the header of C(nvidia-smi)), from
              C(cuDriverGetVersion) of C(libcuda.so.1), else NVML's C(nvmlSystemGetCudaDriverVersion); null
              without a driver.
          returned: always
          type: str
          sample: "12.8"
        python:
          description: Python version of the environment (C(platform.python_version())).
          returned: always
          type: str
          sample: 3.11.7
        distributed:
          description: C(torch.distributed) support.
          returned: always
          type: dict
          contains:
            available:
              description: C(torch.distributed.is_available()).
              type: bool
              returned: always
            gloo:
              description: C(torch.distributed.is_gloo_available()).
              type: bool
              returned: always
            nccl:
              description: C(torch.distributed.is_nccl_available()).
              type: bool
              returned: always
            mpi:
              description: C(torch.distributed.is_mpi_available()).
              type: bool
              returned: always
          sample: {"available": true, "gloo": true, "nccl": false, "mpi": false}
        env:
          description: The environment's identity and fingerprint.
          returned: always
          type: dict
          contains:
            name:
              description: Environment name, from O(python) as given (C(envs/train/bin/python) is V(train)).
              type: str
              returned: always
              sample: train
            prefix:
              description: C(sys.prefix) of the environment.
              type: str
              returned: always
              sample: /opt/miniconda3/envs/.torchfleet/train-0123456789ab
            spec_sha256:
              description: C(spec_sha256) of the build stamp, null without a stamp.
              type: str
              returned: always
              sample: 3f2a1c0d9b8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a
            packages_sha256:
              description: Fingerprint of the full package list (see the notes for its definition).
              type: str
              returned: always
              sample: 8c1e0f9a7b6d5c4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e
            packages:
              description: Lower-case normalised package name to version, conda and pip packages.
              type: dict
              returned: always
              sample: {"numpy": "2.4.6", "python": "3.11.7", "torch": "2.13.0+cpu"}
            builds:
              description: Package name to build string (C(pypi_0) for pip packages), as RV(ansible_facts.torch.env.packages).
              type: dict
              returned: always
              sample: {"numpy": "py311h2e04523_0", "python": "h9e4cc4f_0_cpython", "torch": "pypi_0"}
            duplicates:
              description: Packages installed by conda and again by pip (a dist-info no conda record owns), with both versions.
              type: dict
              returned: always
              sample: {"numpy": {"conda": "2.4.6", "pip": "2.4.5"}}
            build_changes:
              description:
                - Every package added, removed or changed (version or build string) since the build, compared with the
                  package list the conda_env module recorded in the stamp; null when the stamp records none.
              type: dict
              returned: always
              sample: {"six": {"built": null, "live": {"version": "1.17.0", "build": "pypi_0"}}}
            stamp:
              description: The build stamp C(conda-meta/torchfleet-stamp) without its package list, null without one.
              type: dict
              returned: always
              sample: {"collection_version": "0.1.0", "lock_sha256": null, "name": "train",
                       "spec_file": "environment.yml", "spec_sha256": "3f2a1c0d9b8e..."}
'''

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.torchfleet.cluster.plugins.module_utils._probe import gpu_info, torch_probe
from ansible_collections.torchfleet.cluster.plugins.module_utils._files import runas, trusted_exec

GPU_QUERY_TIMEOUT = 20
TIMED_OUT_RCS = (124, 137)


def resolve_interpreter(module, python):
    """The interpreter to run, or None; a bare name is looked up in PATH."""
    if os.sep not in python:
        return module.get_bin_path(python)
    if os.path.isfile(python) and os.access(python, os.X_OK):
        return python
    return None


def give_up(module, msg, rc=None, stdout='', stderr='', facts=None):
    """Fail, or with ignore_missing return null facts and warn."""
    if module.params['ignore_missing']:
        module.warn(msg)
        facts = facts or torch_probe.null_facts(module.params['python'])
        module.exit_json(changed=False, ansible_facts={'torch': facts})
    module.fail_json(msg=msg, rc=rc, stdout=stdout, stderr=stderr)


def run_probe(module, python):
    timeout = module.params['timeout']
    argv = torch_probe.probe_command(python, module.params['probe_cuda'],
                                     gpu_timeout=min(GPU_QUERY_TIMEOUT, timeout),
                                     timeout_bin=module.get_bin_path('timeout'), timeout=timeout)
    wrapped = argv[0] != python  # run under coreutils timeout
    drop = privilege_drop(module, python)
    if drop:
        at = argv.index(python)
        argv = argv[:at] + drop + argv[at:]
    try:
        return (wrapped,) + module.run_command(argv, expand_user_and_vars=False, handle_exceptions=False)
    except OSError as exc:
        give_up(module, 'torch_facts could not run the interpreter %s: %s' % (python, exc),
                rc=127 if exc.errno == 2 else 126, stderr=str(exc))


def privilege_drop(module, python):
    """argv prefix that runs the probe as the only user besides root who can change the environment.

    Whoever runs the probe must be root or that user: any other account (the Ansible login user of
    an audit without become) would hand its own rights to the code that user can plant. Such a run
    is refused, naming the path and its owner."""
    writer = runas.foreign_writer(python)
    euid = os.geteuid()
    if writer is None or writer[0] == euid:
        return []
    if euid != 0:
        finding = runas.foreign_finding(python)
        runner = trusted_exec.user_name(euid)
        module.fail_json(msg='torch_facts: refusing to run %s as %s: %s %s, so the probe would run code another user can '
                             'change with the rights of %s. The managed environments are root\'s; probe this one as root '
                             '(become) or as its owner.' % (python, runner, finding.path, finding.reason, runner),
                         path=finding.path)
    setpriv = module.get_bin_path('setpriv')
    if setpriv is None:
        module.fail_json(msg='torch_facts: %s can be changed by uid %d, so it must not run as root, and setpriv '
                             '(util-linux) to run it as that user is missing' % (python, writer[0]))
    return runas.as_user_argv(setpriv, writer[0], writer[1])


def stderr_gist(text):
    """First and last line of stderr: a usage error leads, a traceback ends with its exception."""
    lines = [line.strip() for line in (text or '').splitlines() if line.strip()]
    if len(lines) > 1:
        return '%s ... %s' % (lines[0], lines[-1])
    return lines[0] if lines else 'no stderr'


def probe_document(module, python, wrapped, rc, stdout, stderr):
    """The probe's JSON document, or give up with a message naming the interpreter."""
    try:
        doc = torch_probe.parse_output(stdout)
    except torch_probe.ProbeError as exc:
        if rc in TIMED_OUT_RCS and wrapped:
            why = 'timed out after %ss' % module.params['timeout']
        elif rc in (126, 127):
            why = 'could not be run (rc %s): %s' % (rc, stderr_gist(stderr))
        else:
            why = 'failed (rc %s, %s): %s' % (rc, exc, stderr_gist(stderr))
        give_up(module, 'torch_facts probe with interpreter %s %s' % (python, why),
                rc=rc, stdout=stdout, stderr=stderr)
    if doc.get('fatal'):
        give_up(module, 'torch_facts probe with interpreter %s crashed: %s' % (python, doc['fatal']),
                rc=rc, stdout=stdout, stderr=(stderr or '') + (doc.get('traceback') or ''))
    return doc


def partial_facts(python, doc):
    """Null torch values, but what the probe found without torch (env, driver, GPUs)."""
    facts = torch_probe.null_facts(python)
    facts['python'] = doc.get('python')
    facts['env'] = torch_probe.env_facts(python, doc)
    gpu = gpu_info.summarise(doc.get('gpu') or {})
    facts.update(driver=gpu['driver'], gpus=gpu['gpus'], gpu_count=len(gpu['gpus']))
    return facts


def warn_probe_errors(module, doc, rc):
    if rc != 0:
        module.warn('torch_facts probe exited with rc %s after printing its result' % rc)
    errors = dict((doc.get('torch') or {}).get('errors') or {})
    if not (doc.get('torch') or {}).get('cuda'):
        errors.pop('nccl', None)  # CPU builds have no NCCL: not worth a warning
    for field, error in sorted(errors.items()):
        module.warn('torch_facts could not read %s: %s' % (field, error))
    for error in (doc.get('conda') or {}).get('errors') or []:
        module.warn('torch_facts skipped conda-meta/%s' % error)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            python=dict(type='path', required=True),
            probe_cuda=dict(type='bool'),
            ignore_missing=dict(type='bool', default=False),
            timeout=dict(type='int', default=120),
        ),
        supports_check_mode=True,
    )
    given = module.params['python']
    if module.params['timeout'] < 1:
        module.fail_json(msg='timeout must be at least 1 second, got %s' % module.params['timeout'])
    python = resolve_interpreter(module, given)
    if python is None:
        give_up(module, 'torch_facts: the interpreter %s does not exist or is not executable' % given,
                rc=127, stderr='')
    wrapped, rc, stdout, stderr = run_probe(module, python)
    doc = probe_document(module, given, wrapped, rc, stdout, stderr)
    if doc.get('torch') is None:
        give_up(module, 'torch_facts: torch cannot be imported by %s: %s' % (given, doc.get('torch_error')),
                rc=rc, stdout='', stderr=stderr, facts=partial_facts(python, doc))
    warn_probe_errors(module, doc, rc)
    module.exit_json(changed=False, ansible_facts={'torch': torch_probe.build_facts(python, doc)})


if __name__ == '__main__':
    main()
