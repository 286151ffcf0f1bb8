"""`conda run [-n NAME | -p PREFIX] [--no-capture-output] [--cwd DIR] CMD ...`."""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from conda._standin import prefixes


def add_parser(subparsers, common):
    """Register `conda run`."""
    parser = subparsers.add_parser("run", parents=[common], help="Run an executable in a conda environment.")
    parser.add_argument("--cwd")
    parser.add_argument("--no-capture-output", "--live-stream", "-s", dest="no_capture_output", action="store_true")
    parser.add_argument("--dev", action="store_true")
    parser.add_argument("--debug-wrapper-scripts", action="store_true")
    parser.add_argument("executable_call", nargs=argparse.REMAINDER)
    parser.set_defaults(func=execute)


def activated_environ(prefix, context):
    """The variables `conda activate` would set, plus the env's own env_vars."""
    env = dict(os.environ)
    env["PATH"] = f"{prefix}/bin" + (os.pathsep + env["PATH"] if env.get("PATH") else "")
    env["CONDA_PREFIX"] = str(prefix)
    env["CONDA_DEFAULT_ENV"] = prefixes.display_name(prefix, context) or str(prefix)
    env["CONDA_SHLVL"] = str(int(env.get("CONDA_SHLVL", "0") or 0) + 1)
    state = Path(prefix) / "conda-meta" / "state"
    if state.is_file():
        env.update(json.loads(state.read_text()).get("env_vars", {}))
    return env


def execute(args, context):
    """Run the command with the environment activated; its exit code is conda's."""
    prefix = prefixes.target_prefix(args, context)
    prefixes.assert_environment(prefix)
    call = [a for a in args.executable_call if a != "--"] if args.executable_call[:1] == ["--"] else args.executable_call
    if not call:
        sys.stderr.write("usage: conda run [-n ENV | -p PATH] EXECUTABLE [ARGS ...]\nconda run: error: No command given\n")
        return 2
    cmd = ["/bin/sh", "-c", 'exec "$@"', "conda-run", *call]
    capture = not args.no_capture_output
    proc = subprocess.run(cmd, env=activated_environ(prefix, context), cwd=args.cwd, capture_output=capture, text=True, check=False)
    if capture:
        if proc.stdout:
            print(proc.stdout, file=sys.stdout)
        if proc.stderr:
            print(proc.stderr, file=sys.stderr)
    if proc.returncode:
        sys.stderr.write(f"ERROR conda.cli.main_run:execute(127): `conda run {' '.join(call)}` failed. (See above for error)\n")
    return proc.returncode
