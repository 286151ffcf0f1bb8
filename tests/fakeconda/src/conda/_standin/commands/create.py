"""`conda create [-n NAME | -p PREFIX] [--file F] [SPEC ...]`, explicit lock files included."""

from conda._standin import envspec, prefixes, settings
from conda._standin.commands import install
from conda._standin.envspec import EnvironmentYaml
from conda._standin.errors import CondaValueError
from conda._standin.output import confirm_yn
from conda._standin.wheelhouse import CondaSpec


def add_parser(subparsers, common):
    """Register `conda create`."""
    parser = subparsers.add_parser("create", parents=[common], help="Create a new conda environment from a list of specified packages.")
    parser.add_argument("--file", action="append", default=[])
    parser.add_argument("-c", "--channel", action="append", default=[])
    parser.add_argument("--override-channels", action="store_true")
    parser.add_argument("packages", nargs="*")
    parser.set_defaults(func=execute)


def _spec(args):
    if len(args.file) > 1:
        raise CondaValueError("this conda stand-in takes at most one --file")
    if args.file:
        spec = envspec.load_explicit_or_specs(args.file[0])
        spec.conda_specs += [CondaSpec(p) for p in args.packages]
    else:
        spec = EnvironmentYaml(None, [], [CondaSpec(p) for p in args.packages], [], {})
    spec.channels = list(args.channel) + (["nodefaults"] if args.override_channels else [])
    return spec


def execute(args, context):
    """Create an environment, replacing an existing one after the prompt (or -y)."""
    if not args.prefix and not args.name:
        raise CondaValueError("one of the arguments -n/--name -p/--prefix is required")
    prefix = prefixes.target_prefix(args, context)
    prefixes.validate_new(prefix, context)
    spec = _spec(args)
    if prefixes.is_environment(prefix):
        confirm_yn(
            f"WARNING: A conda environment already exists at '{prefix}'\n\nRemove existing environment?\n"
            "This will remove ALL directories contained within this specified prefix directory, including any other conda environments.\n\n",
            args,
            context,
        )
        install.remove_prefix(prefix)
    elif prefix.exists() and prefix != settings.ROOT_PREFIX:
        confirm_yn(
            f"WARNING: A directory already exists at the target location '{prefix}'\nbut it is not a conda environment.\nContinue creating environment",
            args,
            context,
        )
    args.file = args.file[0] if args.file else None
    return install.build(prefix, spec, context, args)
