"""`conda env create|update|list|remove` with conda 25.11.1's semantics.

conda 25.11.1 `env create`: with -y/--yes an existing environment at the target is deleted
without a prompt and rebuilt; without it, the packages are installed into the existing
environment (no error, no prompt). `env update --prune` removes conda packages the file no
longer names, but never pip packages.
"""

import os

from conda._standin import envspec, prefixes
from conda._standin.commands import info, install, remove
from conda._standin.errors import CondaEnvException, dals


def add_parser(subparsers, common):
    """Register `conda env` and its subcommands."""
    parser = subparsers.add_parser("env", help="Create and manage conda environments.")
    env_sub = parser.add_subparsers(dest="env_command", metavar="COMMAND")
    env_sub.required = True
    create = env_sub.add_parser("create", parents=[common], help="Create an environment based on an environment definition file.")
    create.add_argument("-f", "--file", default="environment.yml")
    create.set_defaults(func=execute_create)
    update = env_sub.add_parser("update", parents=[common], help="Update the current environment based on environment file.")
    update.add_argument("-f", "--file", default="environment.yml")
    update.add_argument("--prune", action="store_true")
    update.set_defaults(func=execute_update)
    listing = env_sub.add_parser("list", parents=[common], help="An alias for `conda info --envs`.")
    listing.set_defaults(func=info.execute, envs=True, base=False, all=False, system=False, unsafe_channels=False)
    rm = env_sub.add_parser("remove", parents=[common], help="Remove an environment.")
    rm.set_defaults(func=remove.execute, all=True, package_names=[], keep_env=False)


def execute_create(args, context):
    """conda env create -f FILE [-n NAME | -p PREFIX] [-y]."""
    spec = envspec.load(args.file)
    if not args.prefix and not args.name:
        if not spec.name:
            raise CondaEnvException(
                dals(
                    """
                    Unable to create environment
                    Please re-run this command with one of the following options:
                    * Provide an environment name via --name or -n
                    * Provide a path on disk via --prefix or -p
                    """
                )
            )
        args.name = spec.name
    prefix = prefixes.target_prefix(args, context)
    if args.yes and prefix != prefixes.settings.ROOT_PREFIX and (prefix.exists() or prefix.is_symlink()):
        install.remove_prefix(prefix)
    prefixes.validate_new(prefix, context)
    return install.build(prefix, spec, context, args)


def execute_update(args, context):
    """conda env update -f FILE [-n NAME | -p PREFIX] [--prune]."""
    spec = envspec.load(args.file)
    if not args.prefix and not args.name:
        if not spec.name and not os.environ.get("CONDA_DEFAULT_ENV"):
            raise CondaEnvException(
                dals(
                    """
                    Unable to determine environment

                    Please re-run this command with one of the following options:

                    * Provide an environment name via --name or -n
                    * Provide an environment path via --prefix or -p
                    * Re-run this command inside an activated conda environment.
                    """
                )
            )
        args.name = spec.name or os.environ.get("CONDA_DEFAULT_ENV")
    prefix = prefixes.target_prefix(args, context)
    return install.build(prefix, spec, context, args, prune=args.prune)
