"""`conda list`: --json, --explicit [--md5|--sha256], plain table, optional regex."""

import re

from conda import __version__
from conda._standin import prefixes, records
from conda._standin.channels import channel_name
from conda._standin.envspec import EXPLICIT_MARKER
from conda._standin.errors import ArgumentError
from conda._standin.output import json_out


def add_parser(subparsers, common):
    """Register `conda list`."""
    parser = subparsers.add_parser("list", parents=[common], help="List installed packages in a conda environment.")
    parser.add_argument("--explicit", action="store_true")
    parser.add_argument("--md5", action="store_true")
    parser.add_argument("--sha256", action="store_true")
    parser.add_argument("--export", action="store_true")
    parser.add_argument("-f", "--full-name", action="store_true")
    parser.add_argument("regex", nargs="?")
    parser.set_defaults(func=execute)


def print_explicit(prefix, hash_key):
    """conda list --explicit: a header, @EXPLICIT, then one URL per conda package."""
    print("# This file may be used to create an environment using:")
    print("# $ conda create --name <env> --file <this file>")
    print("# platform: linux-64")
    print(f"# created-by: conda {__version__}")
    print(EXPLICIT_MARKER)
    for record in records.dependency_order(records.load_conda_records(prefix)):
        url = record.get("url")
        if not url:
            print(f"# no URL for: {record['fn']}")
            continue
        print(url + (f"#{record[hash_key]}" if hash_key and record.get(hash_key) else ""))


def execute(args, context):
    """List the packages of one environment."""
    prefix = prefixes.target_prefix(args, context)
    prefixes.assert_environment(prefix)
    if args.md5 and args.sha256:
        raise ArgumentError("Only one of --md5 and --sha256 can be specified at the same time")
    if args.explicit:
        print_explicit(prefix, "md5" if args.md5 else "sha256" if args.sha256 else None)
        return 0
    rows = records.list_records(prefix, lambda url: channel_name(url, context), f"{str(context.get('channel_alias')).rstrip('/')}/pypi")
    if args.regex:
        pattern = re.compile(rf"^{args.regex}$" if args.full_name else args.regex, re.I)
        rows = [r for r in rows if pattern.search(r["name"])]
    if args.json:
        json_out(rows)
        return 0
    if args.export:
        print("# This file may be used to create an environment using:")
        print("# $ conda create --name <env> --file <this file>")
        print("# platform: linux-64")
        print(f"# created-by: conda {__version__}")
        for row in rows:
            print(f"{row['name']}={row['version']}={row['build_string']}")
        return 0
    print(f"# packages in environment at {prefix}:\n#")
    print(f"# {'Name':<23} {'Version':<15} {'Build':<15} Channel")
    for row in rows:
        channel = "" if row["channel"] in ("pkgs/main",) else row["channel"]
        print(f"{row['name']:<25} {row['version']:<15} {row['build_string']:<15} {channel}".rstrip())
    return 0
