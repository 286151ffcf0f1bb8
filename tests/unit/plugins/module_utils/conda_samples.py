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

# --- shapes where real conda differs from the offline stand-in -----------------
# Written from the sources of conda 25.11.1/26.7.1, not recorded from a run.

# Both auto-activate keys in one .condarc, any command with --json: MultipleKeysError keeps its
# keys as a frozenset (conda/common/configuration.py), print_conda_exception's json.dumps of
# the dump_map raises TypeError inside ExceptionHandler.__call__'s except clause
# (conda/exception_handler.py, conda/exceptions.py), so the interpreter prints the chained
# traceback on stderr and exits 1; stdout stays empty.
MULTIPLE_KEYS_JSON_CRASH = (
    'Traceback (most recent call last):\n'
    '  File "/opt/miniconda3/lib/python3.13/site-packages/conda/exception_handler.py", line 18, in __call__\n'
    '    return func(*args, **kwargs)\n'
    '  File "/opt/miniconda3/lib/python3.13/site-packages/conda/cli/main.py", line 84, in main_subshell\n'
    '    context.__init__(argparse_args=pre_args)\n'
    '  File "/opt/miniconda3/lib/python3.13/site-packages/conda/common/configuration.py", line 1480, in _check_aliases\n'
    '    raise MultipleKeysError(source, keys, name)\n'
    'conda.common.configuration.MultipleKeysError: Multiple aliased keys in file /opt/miniconda3/.condarc:\n'
    '  - auto_activate\n  - auto_activate_base\n'
    "Must declare only one. Prefer 'auto_activate'\n"
    '\nDuring handling of the above exception, another exception occurred:\n\n'
    'Traceback (most recent call last):\n'
    '  File "/opt/miniconda3/bin/conda", line 12, in <module>\n'
    '    sys.exit(main())\n'
    '  File "/opt/miniconda3/lib/python3.13/site-packages/conda/exceptions.py", line 1837, in print_conda_exception\n'
    '    exc_json = json.dumps(_json_error_map(exc_val), sort_keys=True)\n'
    '  File "/opt/miniconda3/lib/python3.13/json/encoder.py", line 180, in default\n'
    "    raise TypeError(f'Object of type {o.__class__.__name__} '\n"
    'TypeError: Object of type frozenset is not JSON serializable\n'
)

# `conda env list --json` run as root: list_all_known_prefixes reads the environments.txt of
# every passwd entry's home when is_admin() (conda/core/envs_manager.py).
ENV_LIST_AS_ROOT = json.dumps({
    "envs": ["/home/trainer/.conda/envs/scratch", "/home/trainer/work/myenv", "/opt/miniconda3",
             "/opt/miniconda3/envs/.torchfleet/train-3f1c2a9b7d10", "/opt/miniconda3/envs/train",
             "/opt/miniconda3x/envs/lookalike", "/srv/shared/envs/other"],
    "envs_details": {},
}, indent=2, sort_keys=True) + "\n"

# `conda list --json` from mirrors and a local channel: "channel" is Channel.name
# (PackageRecord.dist_fields_dump in conda/models/records.py; _read_channel_configuration in
# conda/models/channel.py): the path below channel_alias, a file:// channel's last path
# component, or the URL path of an unconfigured mirror; base_url stays the full URL.
LIST_MIRRORS = json.dumps([
    {"base_url": "https://mirror.invalid/artifactory/api/conda/conda-forge", "build_number": 0,
     "build_string": "py311h71ddf71_0", "channel": "artifactory/api/conda/conda-forge",
     "dist_name": "numpy-2.4.6-py311h71ddf71_0", "name": "numpy", "platform": "linux-64", "version": "2.4.6"},
    {"base_url": "file:///srv/channels/localchan", "build_number": 0, "build_string": "pyhd8ed1ab_0",
     "channel": "localchan", "dist_name": "six-1.16.0-pyhd8ed1ab_0", "name": "six",
     "platform": "noarch", "version": "1.16.0"},
    {"base_url": "https://repo.mirror.invalid/pkgs/main", "build_number": 0, "build_string": "h9e4cc4f_0_cpython",
     "channel": "pkgs/main", "dist_name": "python-3.11.13-h9e4cc4f_0_cpython", "name": "python",
     "platform": "linux-64", "version": "3.11.13"},
], indent=2) + "\n"

# `conda env create --json` success (print_result in conda/env/env.py, stdout_json_success in
# conda/cli/common.py): FETCH holds the full PackageRecords (EntityEncoder dumps), LINK the
# dist_fields_dump() entries, PIP pip's installed list; a fetch progress record comes first.
_FETCH_RECORD = {
    "arch": "x86_64", "build": "py311h71ddf71_0", "build_number": 0,
    "channel": "https://mirror.invalid/conda-forge/linux-64", "constrains": ["numpy-base <0a0"],
    "depends": ["libgcc >=14", "python >=3.11,<3.12.0a0", "python_abi 3.11.* *_cp311"],
    "fn": "numpy-2.4.6-py311h71ddf71_0.conda", "license": "BSD-3-Clause", "license_family": "BSD",
    "md5": "d7c89558ba9fa0495403155b64376d81", "name": "numpy", "platform": "linux", "size": 9180111,
    "sha256": "4d705a82c554d1abb80aedd0593e0abde54f71b7a5c87492c750c9759b7706fd", "subdir": "linux-64",
    "timestamp": 1781012345678, "url": "https://mirror.invalid/conda-forge/linux-64/numpy-2.4.6-py311h71ddf71_0.conda",
    "version": "2.4.6",
}
CREATE_WITH_FETCH_JSON = (
    '{"fetch": "numpy-2.4.6-py311h71ddf71_0", "finished": true, "maxval": 1, "progress": 1.0}\n\x00'
    + json.dumps({
        "actions": {
            "FETCH": [_FETCH_RECORD],
            "LINK": [{"base_url": "https://mirror.invalid/conda-forge", "build_number": 0,
                      "build_string": "py311h71ddf71_0", "channel": "conda-forge",
                      "dist_name": "numpy-2.4.6-py311h71ddf71_0", "name": "numpy",
                      "platform": "linux-64", "version": "2.4.6"}],
            "PIP": ["torch-2.13.0"],
            "PREFIX": "/opt/miniconda3/envs/.torchfleet/train-3f1c2a9b7d10",
            "UNLINK": [],
        },
        "prefix": "/opt/miniconda3/envs/.torchfleet/train-3f1c2a9b7d10",
        "success": True,
    }, indent=2, sort_keys=True) + "\n")

# The classic solver's answer to a missing package in `env create` (ResolvePackageNotFound in
# conda/exceptions.py: bad_deps are MatchSpecs, dumped as their text; the message is a dash
# list of dependency chains). Text and --json forms.
RESOLVE_NOT_FOUND_TEXT = ('Collecting package metadata (repodata.json): done\nSolving environment: failed\n\n'
                          'ResolvePackageNotFound: \n  - nosuchpkg=1.0\n  - torch -> nosuchdep\n\n')
RESOLVE_NOT_FOUND_JSON = json.dumps({
    "bad_deps": ["nosuchpkg=1.0", "nosuchdep"], "caused_by": "None",
    "error": "ResolvePackageNotFound: \n  - nosuchpkg=1.0\n  - torch -> nosuchdep",
    "exception_name": "ResolvePackageNotFound",
    "exception_type": "<class 'conda.exceptions.ResolvePackageNotFound'>",
    "message": "\n  - nosuchpkg=1.0\n  - torch -> nosuchdep",
}, indent=2, sort_keys=True) + "\n"

# PackagesNotFoundError whose channel_urls hold Channel objects (rattler/libmamba paths), which
# the EntityEncoder dumps with Channel.dump() (conda/models/channel.py).
NOT_FOUND_CHANNEL_OBJECTS_JSON = json.dumps({
    "caused_by": "None",
    "channel_urls": [
        {"auth": None, "location": "mirror.invalid", "name": "conda-forge", "package_filename": None,
         "platform": "linux-64", "scheme": "https", "token": None},
        {"auth": None, "location": "/srv/channels", "name": "localchan", "package_filename": None,
         "platform": "noarch", "scheme": "file", "token": None},
    ],
    "error": "PackagesNotFoundError: The following packages are not available from current channels:\n\n  - nosuchpkg\n",
    "exception_name": "PackagesNotFoundError",
    "exception_type": "<class 'conda.exceptions.PackagesNotFoundError'>",
    "message": "The following packages are not available from current channels:\n\n  - nosuchpkg\n",
    "packages": ["nosuchpkg"],
}, indent=2, sort_keys=True) + "\n"
