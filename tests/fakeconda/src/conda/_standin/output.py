"""Output helpers shared by the commands: JSON documents, prompts, the activate hint."""

import json
import sys

from conda._standin.errors import CondaSystemExit


def json_out(data, sort_keys=False):
    """conda's JSON reporter: two-space indent."""
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=sort_keys, default=str) + "\n")


def json_success(**fields):
    """conda.cli.common.stdout_json_success."""
    json_out({"success": True, **fields})


def print_activate(name_or_prefix):
    """conda.cli.common.print_activate."""
    sys.stdout.write(
        "#\n"
        "# To activate this environment, use\n"
        "#\n"
        f"#     $ conda activate {name_or_prefix}\n"
        "#\n"
        "# To deactivate an active environment, use\n"
        "#\n"
        "#     $ conda deactivate\n\n"
    )


def always_yes(args, context):
    """-y on the command line or always_yes in a condarc."""
    return bool(getattr(args, "yes", False) or context.get("always_yes"))


def confirm_yn(message, args, context, default="no"):
    """conda.reporters.confirm_yn: a declined (or unanswerable) prompt exits 0 with 'Exiting.'"""
    if always_yes(args, context):
        return True
    sys.stdout.write(f"{message} ([y]/n)? " if default == "yes" else f"{message} (y/[n])? ")
    sys.stdout.flush()
    answer = sys.stdin.readline().strip().lower()
    if answer in ("y", "yes") or (not answer and default == "yes" and not sys.stdin.closed):
        return True
    raise CondaSystemExit("Exiting.")


def transaction_banner(channels, json_mode):
    """The progress lines conda prints before solving."""
    if not json_mode:
        print("Channels:")
        for channel in channels:
            print(f" - {channel}")
        print("Platform: linux-64")
        print("Collecting package metadata (repodata.json): done")
        print("Solving environment: ", end="")
        sys.stdout.flush()


def transaction_done(json_mode):
    """The lines conda prints after linking packages."""
    if not json_mode:
        print("Preparing transaction: done")
        print("Verifying transaction: done")
        print("Executing transaction: done")
