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

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.torchfleet.cluster.plugins.module_utils._probe import torch_module


def main():
    module = AnsibleModule(argument_spec=torch_module.ARGUMENT_SPEC, supports_check_mode=True, **torch_module.MODULE_OPTIONS)
    torch_module.run(module)


if __name__ == '__main__':
    main()
