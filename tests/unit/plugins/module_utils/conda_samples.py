# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""conda CLI output samples shared by the unit tests.

Each sample reproduces real conda output key for key; where it comes from is noted above
it. Registry host names in URLs are replaced by ``mirror.invalid`` (project rule); paths
are those of a default ``/opt/miniconda3`` install.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

# `conda info --json`, conda 25.x/26.x: the info_dict of conda/cli/main_info.py
# (get_info_dict) with `envs` and `envs_details` filled in by InfoRenderer (#15330).
INFO_26 = json.dumps({
    "GID": 0, "UID": 0,
    "active_prefix": None, "active_prefix_name": None,
    "av_data_dir": "/opt/miniconda3/etc/conda", "av_metadata_url_base": None,
    "channels": ["https://mirror.invalid/conda-forge/linux-64", "https://mirror.invalid/conda-forge/noarch"],
    "conda_build_version": "not installed", "conda_env_version": "26.7.1",
    "conda_location": "/opt/miniconda3/lib/python3.12/site-packages/conda",
    "conda_prefix": "/opt/miniconda3", "conda_shlvl": -1, "conda_version": "26.7.1",
    "config_files": ["/opt/miniconda3/.condarc"],
    "default_prefix": "/opt/miniconda3",
    "env_vars": {"CONDA_EXE": "/opt/miniconda3/bin/conda", "PATH": "/usr/local/bin:/usr/bin:/bin"},
    "envs": ["/opt/miniconda3", "/opt/miniconda3/envs/.torchfleet/train-3f1c2a9b7d10"],
    "envs_details": {
        "/opt/miniconda3": {"active": False, "base": True, "created": "2026-08-20T09:12:01",
                            "frozen": False, "last_modified": "2026-08-20T09:12:03", "name": "base",
                            "writable": True},
    },
    "envs_dirs": ["/opt/miniconda3/envs", "/root/.conda/envs"],
    "netrc_file": None, "notices_cache_dir": "/root/.cache/conda/notices", "offline": False,
    "pkgs_dirs": ["/opt/miniconda3/pkgs", "/root/.conda/pkgs"],
    "platform": "linux-64", "python_version": "3.12.11.final.0",
    "rc_path": "/root/.condarc", "requests_version": "2.32.4", "root_prefix": "/opt/miniconda3",
    "root_writable": True, "site_dirs": [],
    "solver": {"default": True, "name": "libmamba", "user_agent": "conda-libmamba-solver/25.4.0 libmambapy/2.3.0"},
    "sys.executable": "/opt/miniconda3/bin/python", "sys.prefix": "/opt/miniconda3",
    "sys.version": "3.12.11 | packaged by Anaconda, Inc. | (main, Jun  5 2025, 13:09:17) [GCC 11.2.0]",
    "sys_rc_path": "/opt/miniconda3/.condarc", "tmp_dir": "/tmp",
    "user_agent": "conda/26.7.1 requests/2.32.4 CPython/3.12.11 Linux/6.1.0-37-amd64 debian/12 glibc/2.36",
    "user_rc_path": "/root/.condarc",
    "virtual_pkgs": [["__archspec", "1", "x86_64_v3"], ["__glibc", "2.36", "0"], ["__linux", "6.1.0", "0"], ["__unix", "0", "0"]],
}, indent=2, sort_keys=True) + "\n"

# `conda info --json`, conda 4.3.14 as published in ReproNim/niceman's notes
# (niceman/distributions/conda.py): the old shape with conda_private and no solver.
INFO_4_3 = json.dumps({
    "GID": 47522, "UID": 47521,
    "channels": ["https://mirror.invalid/conda-forge/linux-64", "https://mirror.invalid/conda-forge/noarch"],
    "conda_build_version": "not installed", "conda_env_version": "4.3.14",
    "conda_prefix": "/home/yoh/anaconda2", "conda_private": False, "conda_version": "4.3.14",
    "default_prefix": "/home/yoh/anaconda2/envs/datalad",
    "envs": ["/home/yoh/anaconda2/envs/datalad"], "envs_dirs": ["/home/yoh/anaconda2/envs"],
    "pkgs_dirs": ["/home/yoh/anaconda2/pkgs"], "platform": "linux-64",
    "python_version": "2.7.13.final.0", "root_prefix": "/home/yoh/anaconda2", "root_writable": True,
}, indent=2, sort_keys=True) + "\n"

# `conda env list --json`: up to 24.5 conda_env printed {"envs": [...]}.
ENV_LIST_OLD = '{\n  "envs": [\n    "/opt/miniconda3",\n    "/opt/miniconda3/envs/legacy"\n  ]\n}\n'
# 24.7 to 25.9: `env list` is an alias of `info --envs` (#13972) and --json printed the whole
# info dict; 25.11 restricted it to envs and envs_details (#15353, #15330).
ENV_LIST_INFO_DICT = INFO_26
ENV_LIST_25_11 = json.dumps({
    "envs": ["/opt/miniconda3", "/opt/miniconda3/envs/.torchfleet/train-3f1c2a9b7d10"],
    "envs_details": {
        "/opt/miniconda3": {"active": False, "base": True, "created": "2026-08-20T09:12:01", "frozen": False,
                            "last_modified": "2026-08-20T09:12:03", "name": "base", "writable": True},
        "/opt/miniconda3/envs/.torchfleet/train-3f1c2a9b7d10": {
            "active": False, "base": False, "created": "2026-08-20T09:20:44", "frozen": False,
            "last_modified": "2026-08-20T09:21:10", "name": "train-3f1c2a9b7d10", "writable": True},
    },
}, indent=2, sort_keys=True) + "\n"

# `conda list --json`: PackageRecord.dist_fields_dump() per package (conda/models/records.py);
# the conda entries follow CycloneDX/cyclonedx-python#462 (conda 22.x output), the pip entry
# is what the pypi prefix-data loader (conda/plugins/prefix_data_loaders/pypi) produces.
LIST_TRAIN = json.dumps([
    {"base_url": "https://mirror.invalid/conda-forge", "build_number": 0, "build_string": "conda_forge",
     "channel": "conda-forge", "dist_name": "_libgcc_mutex-0.1-conda_forge", "name": "_libgcc_mutex",
     "platform": "linux-64", "version": "0.1"},
    {"base_url": "https://mirror.invalid/conda-forge", "build_number": 0, "build_string": "py311h71ddf71_0",
     "channel": "conda-forge", "dist_name": "numpy-2.4.6-py311h71ddf71_0", "name": "numpy",
     "platform": "linux-64", "version": "2.4.6"},
    {"base_url": "https://mirror.invalid/conda-forge", "build_number": 0, "build_string": "pyh8b19718_0",
     "channel": "conda-forge", "dist_name": "pip-25.2-pyh8b19718_0", "name": "pip",
     "platform": "noarch", "version": "25.2"},
    {"base_url": "https://mirror.invalid/conda-forge", "build_number": 0, "build_string": "h9e4cc4f_0_cpython",
     "channel": "conda-forge", "dist_name": "python-3.11.13-h9e4cc4f_0_cpython", "name": "python",
     "platform": "linux-64", "version": "3.11.13"},
    {"base_url": "https://mirror.invalid/pypi", "build_number": 0, "build_string": "pypi_0",
     "channel": "pypi", "dist_name": "torch-2.13.0+cpu-pypi_0", "name": "torch",
     "platform": "pypi", "version": "2.13.0+cpu"},
    {"base_url": "https://mirror.invalid/pypi", "build_number": 0, "build_string": "pypi_0",
     "channel": "pypi", "dist_name": "typing_extensions-4.14.1-pypi_0", "name": "typing_extensions",
     "platform": "pypi", "version": "4.14.1"},
], indent=2) + "\n"

# The same environment one numpy release earlier, for diffs.
LIST_TRAIN_OLD = LIST_TRAIN.replace('2.4.6', '2.4.5')

# conda 4.3 `conda list --json` (niceman's notes): base_url/platform null, extra key.
LIST_4_3 = ('[\n  {\n    "base_url": null,\n    "build_number": 1,\n    "build_string": "py27_1",\n'
            '    "channel": "conda-forge",\n    "dist_name": "backports.shutil_get_terminal_size-1.0.0-py27_1",\n'
            '    "name": "backports.shutil_get_terminal_size",\n    "platform": null,\n    "version": "1.0.0",\n'
            '    "with_features_depends": null\n  }\n]\n')


def _not_found(name, packages):
    """CondaError.dump_map() of PackagesNotFoundError as print_conda_exception writes it under
    --json (conda/exceptions.py): stdout, sort_keys, indent 2; the message is the dals() text."""
    pkgs = '\n'.join('  - %s' % p for p in packages)
    channels = ['https://mirror.invalid/conda-forge/linux-64', 'https://mirror.invalid/conda-forge/noarch']
    chans = '\n'.join('  - %s' % c for c in channels)
    message = ("The following packages are not available from current channels:\n\n%s\n\nCurrent channels:\n\n%s\n\n"
               "To search for alternate channels that may provide the conda package you're\nlooking for, navigate to\n\n"
               "    https://mirror.invalid\n\nand use the search bar at the top of the page.\n" % (pkgs, chans))
    return json.dumps({
        "caused_by": "None", "channel_urls": channels, "channels_formatted": chans,
        "error": "%s: %s" % (name, message), "exception_name": name,
        "exception_type": "<class 'conda.exceptions.%s'>" % name, "message": message,
        "packages": packages, "packages_formatted": pkgs,
    }, indent=2, sort_keys=True) + "\n"


# conda < 26.3 raises PackagesNotFoundError; 26.3 added PackagesNotFoundInChannelsError
# (conda#15653, conda-rattler-solver#54). libmamba infers it from "nothing provides" problems.
NOT_FOUND_JSON = _not_found('PackagesNotFoundError', ['numpy=9.9.9'])
NOT_FOUND_IN_CHANNELS_JSON = _not_found('PackagesNotFoundInChannelsError', ['nonexistent-pkg', 'numpy=9.9.9'])

# The same error without --json: stderr text (conda/conda#7680 shows the shape).
NOT_FOUND_TEXT = (
    "Channels:\n - conda-forge\nPlatform: linux-64\nCollecting package metadata (repodata.json): done\n"
    "Solving environment: failed\n\nPackagesNotFoundError: The following packages are not available from current channels:\n\n"
    "  - numpy=9.9.9\n\nCurrent channels:\n\n  - https://mirror.invalid/conda-forge/linux-64\n"
    "  - https://mirror.invalid/conda-forge/noarch\n\n"
    "To search for alternate channels that may provide the conda package you're\nlooking for, navigate to\n\n"
    "    https://mirror.invalid\n\nand use the search bar at the top of the page.\n\n")

# --json progress records are NUL-separated before the final document (conda's json
# progress reporter); here a fetch record precedes the error.
PROGRESS_THEN_ERROR = ('{"fetch": "numpy-2.4.6", "finished": false, "maxval": 1, "progress": 0.0}\n\x00'
                       + NOT_FOUND_JSON)

# A pip failure inside `conda env create` (conda/conda#10251 and #8347 show this text):
# conda prints pip's stderr and raises CondaEnvException (rc 1).
PIP_FAILED_TEXT = (
    "Installing pip dependencies: \\ Ran pip subprocess with arguments:\n"
    "['/opt/miniconda3/envs/.torchfleet/train-3f1c2a9b7d10/bin/python', '-m', 'pip', 'install', '-U', '-r', "
    "'/opt/miniconda3/envs/.torchfleet/.work-train/condaenv.9f3kd2l1.requirements.txt', '--exists-action=b']\n"
    "Pip subprocess output:\n\nPip subprocess error:\n"
    "ERROR: Could not find a version that satisfies the requirement torch==9.9.9 (from versions: 2.13.0)\n"
    "ERROR: No matching distribution found for torch==9.9.9\n\nfailed\n\nCondaEnvException: Pip failed\n\n")

# An unsatisfiable solve from conda-libmamba-solver (conda_libmamba_solver/exceptions.py).
_UNSAT = ("Encountered problems while solving:\n  - package pytorch-gpu-2.13.0-cuda129_mkl_h1 requires __cuda, "
          "but none of the providers can be installed\n")
UNSATISFIABLE_JSON = json.dumps({
    "caused_by": "None",
    "error": "LibMambaUnsatisfiableError: " + _UNSAT,
    "exception_name": "LibMambaUnsatisfiableError",
    "exception_type": "<class 'conda_libmamba_solver.exceptions.LibMambaUnsatisfiableError'>",
    "message": _UNSAT,
}, indent=2, sort_keys=True) + "\n"

# `conda env create --json` success (conda/cli/common.py stdout_json_success).
CREATE_SUCCESS_JSON = json.dumps({"prefix": "/opt/miniconda3/envs/.torchfleet/train-3f1c2a9b7d10",
                                  "success": True}, indent=2, sort_keys=True) + "\n"

# The smoke test failing because torch did not get installed (CPython 3.11 traceback).
NO_TORCH_TRACEBACK = ('Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
                      "ModuleNotFoundError: No module named 'torch'\n")
