"""Command line of the conda stand-in: argparse, context, error reporting and exit codes."""

import argparse
import json
import sys
import traceback

from conda import __version__
from conda._standin import settings
from conda._standin.commands import config, create, env, info, install_packages, listing, remove, run, shell, tos
from conda._standin.errors import CondaError, ValidationError, YamlError, print_error
from conda._standin.records import RecordValidationError


class _Parser(argparse.ArgumentParser):
    """argparse with conda's exit status for usage errors (2) and its prog name."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def common_options():
    """Options every conda subcommand accepts (only the ones the collection uses do anything)."""
    common = argparse.ArgumentParser(add_help=False)
    target = common.add_mutually_exclusive_group()
    target.add_argument("-n", "--name")
    target.add_argument("-p", "--prefix")
    common.add_argument("--json", action="store_true")
    common.add_argument("-y", "--yes", action="store_true")
    common.add_argument("-q", "--quiet", action="store_true")
    common.add_argument("-v", "--verbose", action="count", default=0)
    common.add_argument("--offline", action="store_true")
    common.add_argument("--console")
    common.add_argument("--solver")
    return common


def build_parser():
    """The `conda` parser with the subset of subcommands this stand-in implements."""
    parser = _Parser(prog="conda", description="conda is a tool for managing and deploying applications, environments and packages.")
    parser.add_argument("-V", "--version", action="version", version=f"conda {__version__}")
    parser.add_argument("--no-plugins", action="store_true")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    common = common_options()
    for module in (config, create, env, info, install_packages, listing, remove, run, tos):
        module.add_parser(subparsers, common)
    shell.add_parsers(subparsers, common)
    return parser


def unexpected_error(exc, argv, json_mode):
    """conda's ExceptionHandler report for an error that is not a CondaError (exit code 1)."""
    if json_mode:
        return print_error(ValidationError(str(exc)), True)
    sys.stderr.write(
        "# >>>>>>>>>>>>>>>>>>>>>> ERROR REPORT <<<<<<<<<<<<<<<<<<<<<<\n\n"
        "    Traceback (most recent call last):\n"
        f"    conda.auxlib.exceptions.ValidationError: {exc}\n\n"
        f"`$ {' '.join(['conda', *argv])}`\n\n"
        "An unexpected error has occurred. Conda has prepared the above report.\n"
    )
    return 1


def _report_conda_info(command):
    """get_error_report's conda_info: none for `conda info` itself; the configuration that
    could not be loaded contributes nothing (no channels, no config files)."""
    if " info" in command:
        return {}
    try:
        data = info.info_dict(settings.Context(paths=[]))
    except Exception as info_exc:  # pylint: disable=broad-exception-caught  # as get_error_report: keep the original error
        return {"error": repr(info_exc), "exception_name": type(info_exc).__name__}
    data.pop("envs_details", None)
    data.update(channels=[], config_files=[], envs=[])
    return data


def unexpected_yaml_error(exc, argv, json_mode):
    """conda's report of an exception that is not a CondaError (ExceptionHandler.get_error_report):
    with --json a document with `error` (the repr), `exception_name`, `exception_type`,
    `command`, `traceback` and `conda_info`, and no `message`; without it the same report on
    stderr. Exit code 1."""
    command = " ".join([sys.argv[0] or "conda", *argv])
    trace = "Traceback (most recent call last):\n" + "".join(traceback.format_tb(exc.__traceback__))
    trace += f"{exc.module}.{exc.name}: {exc}\n"
    if json_mode:
        report = {
            "error": repr(exc),
            "exception_name": exc.name,
            "exception_type": f"<class '{exc.module}.{exc.name}'>",
            "command": command,
            "traceback": trace,
            "conda_info": _report_conda_info(command),
        }
        sys.stdout.write(json.dumps(report, indent=2, default=str))
        return 1
    indented = "".join(f"    {line}\n" for line in trace.splitlines())
    sys.stderr.write(
        "\n# >>>>>>>>>>>>>>>>>>>>>> ERROR REPORT <<<<<<<<<<<<<<<<<<<<<<\n\n"
        f"{indented}\n`$ {command}`\n\n"
        "An unexpected error has occurred. Conda has prepared the above report.\n"
    )
    return 1


def _reads_config_before_arguments():
    """conda 25.x builds its context from the configuration files before it parses the command line
    (main_subshell), so even `conda --version` fails on an unparsable .condarc; 26.x answers first."""
    return int(__version__.split(".", maxsplit=1)[0]) < 26


def main(argv=None):
    """Run conda; returns the process exit code."""
    argv = sys.argv[1:] if argv is None else argv
    if _reads_config_before_arguments():
        try:
            for path in settings.search_path():
                if path.is_file():
                    settings.load_yaml_file(path)
        except CondaError as exc:
            return print_error(exc, "--json" in argv)
        except YamlError as exc:
            return unexpected_yaml_error(exc, argv, "--json" in argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 0
    json_mode = bool(getattr(args, "json", False))
    try:
        context = settings.Context()
        return args.func(args, context) or 0
    except CondaError as exc:
        return print_error(exc, json_mode)
    except RecordValidationError as exc:
        return unexpected_error(exc, argv, json_mode)
    except YamlError as exc:
        return unexpected_yaml_error(exc, argv, json_mode)
    except KeyboardInterrupt:
        sys.stderr.write("\nOperation aborted.  Exiting.\n")
        return 1
