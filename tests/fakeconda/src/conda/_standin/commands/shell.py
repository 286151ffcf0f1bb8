"""`conda shell.posix|shell.bash hook|activate|deactivate|reactivate` for etc/profile.d/conda.sh.

Activation is one level deep: activating another environment replaces the active one.
"""

import os
import shlex
import sys
from pathlib import Path

from conda._standin import prefixes, settings
from conda._standin.errors import EnvironmentNameNotFound

SHELLS = ("shell.posix", "shell.bash", "shell.zsh", "shell.sh", "shell.dash")


def add_parsers(subparsers, common):
    """Register the shell.* commands."""
    for name in SHELLS:
        parser = subparsers.add_parser(name, parents=[common], help="Shell integration (used by conda.sh).")
        parser.add_argument("action", choices=("hook", "activate", "deactivate", "reactivate"))
        parser.add_argument("env", nargs="?")
        parser.add_argument("--stack", action="store_true")
        parser.set_defaults(func=execute)


def _strip_path(path, prefix):
    parts = [p for p in path.split(os.pathsep) if p and (not prefix or p != f"{prefix}/bin")]
    return os.pathsep.join(parts)


def _resolve(env, context):
    if env and ("/" in env or env.startswith(".")):
        prefix = Path(os.path.abspath(os.path.expanduser(env)))
    else:
        name = env or context.get("default_activation_env") or "base"
        prefix = prefixes.locate_by_name(name, context)
        if prefix is None:
            raise EnvironmentNameNotFound(name)
    prefixes.assert_environment(prefix)
    return prefix


def _exports(values):
    return "".join(f"export {k}={shlex.quote(str(v))}\n" if v is not None else f"unset {k}\n" for k, v in values.items())


def activate(env, context):
    """Shell code that activates an environment."""
    prefix = _resolve(env, context)
    name = prefixes.display_name(prefix, context) or str(prefix)
    path = _strip_path(os.environ.get("PATH", ""), os.environ.get("CONDA_PREFIX"))
    return _exports({
        "PATH": f"{prefix}/bin{os.pathsep}{path}" if path else f"{prefix}/bin",
        "CONDA_PREFIX": prefix,
        "CONDA_SHLVL": 1,
        "CONDA_DEFAULT_ENV": name,
        "CONDA_PROMPT_MODIFIER": f"({name}) ",
    })


def deactivate():
    """Shell code that deactivates the active environment."""
    active = os.environ.get("CONDA_PREFIX")
    return _exports({
        "PATH": _strip_path(os.environ.get("PATH", ""), active),
        "CONDA_PREFIX": None,
        "CONDA_DEFAULT_ENV": None,
        "CONDA_PROMPT_MODIFIER": None,
        "CONDA_SHLVL": 0,
    })


def hook(context):
    """What `eval "$(conda shell.bash hook)"` runs: conda.sh, then base only if auto_activate."""
    root = settings.ROOT_PREFIX
    text = _exports({"CONDA_EXE": root / "bin" / "conda", "_CE_M": "", "_CE_CONDA": "", "CONDA_PYTHON_EXE": root / "bin" / "python"})
    text += (root / "etc" / "profile.d" / "conda.sh").read_text()
    if context.get("auto_activate"):
        text += f"\nconda activate {shlex.quote(str(context.get('default_activation_env') or 'base'))}\n"
    return text


def execute(args, context):
    """Print shell code for the requested action."""
    if args.action == "hook":
        sys.stdout.write(hook(context))
    elif args.action == "activate":
        sys.stdout.write(activate(args.env, context))
    elif args.action == "deactivate":
        sys.stdout.write(deactivate())
    elif os.environ.get("CONDA_PREFIX"):
        sys.stdout.write(activate(os.environ["CONDA_PREFIX"], context))
    return 0
