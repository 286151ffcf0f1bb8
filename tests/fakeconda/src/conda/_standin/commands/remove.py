"""`conda remove --all` (and `conda env remove`, its alias)."""

import functools
import os
from pathlib import Path

from conda._standin import prefixes, records, settings
from conda._standin.channels import channel_name
from conda._standin.commands.install import remove_prefix
from conda._standin.errors import CondaEnvironmentError, CondaValueError
from conda._standin.output import confirm_yn, json_success


def add_parser(subparsers, common):
    """Register `conda remove`."""
    parser = subparsers.add_parser("remove", aliases=["uninstall"], parents=[common], help="Remove a list of packages from an environment.")
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--keep-env", action="store_true")
    parser.add_argument("package_names", nargs="*")
    parser.set_defaults(func=execute)


def execute(args, context):
    """Remove a whole environment; removing single packages is not part of the stand-in."""
    if not (args.all or args.package_names):
        raise CondaValueError('no package names supplied,\n       try "conda remove -h" for more details')
    if not args.all:
        raise CondaValueError("this conda stand-in only supports `conda remove --all`")
    prefix = prefixes.target_prefix(args, context)
    prefixes.assert_environment(prefix)
    active = os.environ.get("CONDA_PREFIX")
    if active and os.path.realpath(active) == os.path.realpath(prefix):
        raise CondaEnvironmentError("Cannot remove current environment. Deactivate and run conda remove again")
    if Path(prefix) == settings.ROOT_PREFIX:
        raise CondaEnvironmentError("cannot remove root environment, add -n NAME or -p PREFIX option")
    unlinked = records.load_conda_records(prefix, tolerate=True)
    if not args.json:
        print(f"\nRemove all packages in environment {prefix}:\n")
        confirm_yn(
            f"Everything found within the environment ({prefix}), including any conda environment configurations and any "
            "non-conda files, will be deleted. Do you wish to continue?\n",
            args,
            context,
        )
    remove_prefix(prefix)
    prefixes.unregister(prefix)
    if args.json:
        base_name = functools.partial(channel_name, context=context)
        unlink = [records.dist_fields(r, base_name) for r in unlinked]
        json_success(prefix=str(prefix), actions={"FETCH": [], "LINK": [], "PREFIX": str(prefix), "UNLINK": unlink})
    return 0
