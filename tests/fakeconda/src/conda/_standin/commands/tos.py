"""`conda tos accept|reject|view` (the conda-anaconda-tos plugin Miniconda ships).

Acceptance is recorded in $CONDA_ROOT/conda-meta/tos like the plugin's --system store,
but it is never enforced: this stand-in's channels are all offline and have no terms.
"""

import hashlib
import json
import time
from pathlib import Path

from conda._standin import settings
from conda._standin.channels import channel_base_urls
from conda._standin.output import json_out


def add_parser(subparsers, common):
    """Register `conda tos`."""
    parser = subparsers.add_parser("tos", parents=[common], help="View, accept, and interact with a channel's Terms of Service (ToS).")
    parser.add_argument("action", nargs="?", default="view", choices=("accept", "reject", "view", "interactive", "clean"))
    parser.add_argument("-c", "--channel", action="append", default=[])
    parser.add_argument("--override-channels", action="store_true")
    where = parser.add_mutually_exclusive_group()
    for flag in ("--site", "--system", "--user", "--env"):
        where.add_argument(flag, action="store_true")
    where.add_argument("--tos-root")
    parser.set_defaults(func=execute)


def _store(args):
    if args.tos_root:
        return Path(args.tos_root)
    if args.user:
        return Path("~/.conda/tos").expanduser()
    if args.site:
        return Path("/etc/conda/tos")
    return settings.ROOT_PREFIX / "conda-meta" / "tos"


def _urls(args, context):
    names = list(args.channel) + ([] if args.override_channels else context.channels)
    return [url for name in dict.fromkeys(names) for url in channel_base_urls(name, context)]


def execute(args, context):
    """Record or show acceptance per channel."""
    store = _store(args)
    rows = []
    for url in _urls(args, context):
        path = store / f"{hashlib.sha256(url.encode()).hexdigest()}.json"
        if args.action in ("accept", "reject"):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"base_url": url, "tos_accepted": args.action == "accept", "acceptance_timestamp": time.time()}) + "\n")
            if not args.json:
                print(f"{args.action}ed Terms of Service for {url}")
        state = json.loads(path.read_text()) if path.is_file() else {}
        rows.append({"base_url": url, "tos_accepted": state.get("tos_accepted"), "path": str(path) if state else None})
    if args.json:
        json_out(rows)
    elif args.action in ("view", "interactive", "clean"):
        for row in rows:
            print(f"{row['base_url']}: {'accepted' if row['tos_accepted'] else 'rejected' if row['tos_accepted'] is False else 'pending'}")
    return 0
