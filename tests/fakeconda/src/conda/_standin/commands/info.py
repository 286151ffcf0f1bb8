"""`conda info` and `conda env list` (an alias of `conda info --envs`)."""

import os
import sys
from pathlib import Path

from conda import __version__
from conda._standin import pkgcache, prefixes, settings
from conda._standin.channels import all_channel_urls
from conda._standin.output import json_out


def add_parser(subparsers, common):
    """Register `conda info`."""
    parser = subparsers.add_parser("info", parents=[common], help="Display information about current conda install.")
    parser.add_argument("-a", "--all", action="store_true")
    parser.add_argument("--base", action="store_true")
    parser.add_argument("-e", "--envs", action="store_true")
    parser.add_argument("-s", "--system", action="store_true")
    parser.add_argument("--unsafe-channels", action="store_true")
    parser.set_defaults(func=execute)


def envs_details(context):
    """The envs_details mapping of conda 25.11."""
    active = os.environ.get("CONDA_PREFIX")
    details = {}
    for prefix in prefixes.all_known_prefixes(context):
        meta = Path(prefix) / "conda-meta"
        details[prefix] = {
            "name": prefixes.display_name(prefix, context),
            "created": None,
            "last_modified": None,
            "active": bool(active) and os.path.realpath(active) == os.path.realpath(prefix),
            "base": Path(prefix) == settings.ROOT_PREFIX,
            "frozen": (meta / "frozen").is_file(),
            "writable": os.access(meta / "history", os.W_OK),
        }
    return details


def info_dict(context):
    """get_info_dict() of conda 25.11, for the fields this stand-in can know."""
    root = str(settings.ROOT_PREFIX)
    active = os.environ.get("CONDA_PREFIX")
    return {
        "platform": "linux-64",
        "conda_version": __version__,
        "conda_env_version": __version__,
        "conda_build_version": "not installed",
        "root_prefix": root,
        "conda_prefix": root,
        "av_data_dir": os.path.join(root, "etc", "conda"),
        "av_metadata_url_base": None,
        "root_writable": os.access(root, os.W_OK),
        "pkgs_dirs": [str(p) for p in pkgcache.pkgs_dirs(context)],
        "envs_dirs": [str(p) for p in prefixes.envs_dirs(context)],
        "default_prefix": active or root,
        "active_prefix": active,
        "active_prefix_name": prefixes.display_name(active, context) or active if active else None,
        "conda_shlvl": int(os.environ.get("CONDA_SHLVL", "-1")),
        "channels": all_channel_urls(context.channels, context),
        "user_rc_path": str(settings.user_rc_path()),
        "rc_path": str(settings.user_rc_path()),
        "sys_rc_path": str(settings.sys_rc_path()),
        "offline": bool(context.get("offline")),
        "envs": prefixes.all_known_prefixes(context),
        "envs_details": envs_details(context),
        "python_version": ".".join(map(str, sys.version_info)),
        "requests_version": "not installed",
        "user_agent": f"conda/{__version__} requests/none CPython/{'.'.join(map(str, sys.version_info[:3]))} Linux/{os.uname().release}",
        "conda_location": str(Path(__file__).resolve().parents[2]),
        "config_files": context.config_files,
        "netrc_file": os.environ.get("NETRC"),
        "virtual_pkgs": [["__archspec", "1", "x86_64"], ["__glibc", os.confstr("CS_GNU_LIBC_VERSION").split()[-1], "0"],
                         ["__linux", os.uname().release.split("-")[0], "0"], ["__unix", "0", "0"]],
        "solver": {"default": True, "name": "libmamba", "user_agent": "solver/libmamba conda-libmamba-solver/25.11.0 libmambapy/2.3.2"},
        "UID": os.geteuid(),
        "GID": os.getegid(),
        "env_vars": {k: v for k, v in os.environ.items() if k.startswith(("CONDA", "PYTHON")) or k.endswith("PATH")},
        "sys.version": sys.version,
        "sys.prefix": sys.prefix,
        "sys.executable": sys.executable,
        "site_dirs": [],
    }


def execute(args, context):
    """Print what conda info prints for the requested components."""
    if args.json:
        if args.base:
            json_out({"root_prefix": str(settings.ROOT_PREFIX)})
        elif args.envs:
            json_out({"envs": prefixes.all_known_prefixes(context), "envs_details": envs_details(context)})
        else:
            json_out(info_dict(context))
        return 0
    if args.base:
        print(settings.ROOT_PREFIX)
        return 0
    if args.envs:
        print_envs(context)
        return 0
    print_detail(info_dict(context))
    return 0


def print_envs(context):
    """The human `conda env list` table."""
    active = os.environ.get("CONDA_PREFIX")
    print("\n# conda environments:\n#\n# * -> active\n# + -> frozen")
    for prefix in prefixes.all_known_prefixes(context):
        mark = "*" if active and os.path.realpath(active) == os.path.realpath(prefix) else " "
        print(f"{prefixes.display_name(prefix, context):<20} {mark}  {prefix}")
    print()


def print_detail(info):
    """The human `conda info` block (the main lines)."""
    rows = [
        ("active environment", info["active_prefix_name"] or "None"),
        ("shell level", info["conda_shlvl"]),
        ("user config file", info["user_rc_path"]),
        ("populated config files", "\n".join(info["config_files"])),
        ("conda version", info["conda_version"]),
        ("python version", info["python_version"]),
        ("solver", "libmamba (default)"),
        ("base environment", f"{info['root_prefix']}  ({'writable' if info['root_writable'] else 'read only'})"),
        ("channel URLs", "\n".join(info["channels"])),
        ("package cache", "\n".join(info["pkgs_dirs"])),
        ("envs directories", "\n".join(info["envs_dirs"])),
        ("platform", info["platform"]),
        ("user-agent", info["user_agent"]),
        ("UID:GID", f"{info['UID']}:{info['GID']}"),
        ("offline mode", info["offline"]),
    ]
    print()
    for key, value in rows:
        lines = str(value).split("\n")
        print(f"{key:>26} : {lines[0]}")
        for line in lines[1:]:
            print(f"{'':>26}   {line}")
    print()
