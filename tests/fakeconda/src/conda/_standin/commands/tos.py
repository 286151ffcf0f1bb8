"""`conda tos [list] | accept | reject | view` (the conda-anaconda-tos plugin Miniconda ships).

As with Anaconda's own channels, the channels of ``default_channels`` (here the offline
pkgs/main and pkgs/r) carry terms of service; every other channel has none (null in JSON).
Acceptance is stored like the plugin's (``--system``: $CONDA_ROOT/conda-meta/tos, the
default: ~/.conda/tos) but never enforced: creating environments does not check it.
Accepting or rejecting a channel without terms is not an error: the plugin prints
"Terms of Service not found for URL" and exits 0.
"""

import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path

from conda._standin import settings
from conda._standin.channels import channel_base_urls
from conda._standin.output import json_out

TOS_VERSION = "2024-09-30T00:00:00Z"
TOS_TEXT = "Terms of service of the offline channels of the torchfleet conda stand-in (tests only)."
TOS_SUPPORT = "tests/fakeconda/README.md"


def add_parser(subparsers, common):
    """Register `conda tos`."""
    parser = subparsers.add_parser("tos", parents=[common], help="View, accept, and interact with a channel's Terms of Service (ToS).")
    parser.add_argument("action", nargs="?", default="list", choices=("list", "accept", "reject", "view", "interactive", "clean"))
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
    if args.system:
        return settings.ROOT_PREFIX / "conda-meta" / "tos"
    if args.site:
        return Path("/etc/conda/tos")
    return Path("~/.conda/tos").expanduser()


def _search_path():
    return [Path("/etc/conda/tos"), settings.ROOT_PREFIX / "conda-meta" / "tos", Path("~/.conda/tos").expanduser()]


def _base_urls(args, context):
    names = list(args.channel) + ([] if args.override_channels else context.channels)
    return list(dict.fromkeys(url.rstrip("/") for name in names for url in channel_base_urls(name, context)))


def _has_terms(url, context):
    return url in [str(u).rstrip("/") for u in context.get("default_channels")]


def _filename(url):
    return f"{hashlib.sha256(url.encode()).hexdigest()}.json"


def _local(url):
    """The newest stored decision for a channel: (path, data) or (None, None)."""
    for directory in reversed(_search_path()):
        path = directory / _filename(url)
        if path.is_file():
            return path, json.loads(path.read_text())
    return None, None


def _entry(url, context):
    if not _has_terms(url, context):
        return None
    path, data = _local(url)
    entry = {"version": TOS_VERSION, "text": TOS_TEXT, "support": TOS_SUPPORT}
    if data:
        entry.update(base_url=url, tos_accepted=data["tos_accepted"], acceptance_timestamp=data["acceptance_timestamp"])
    entry.update(outdated=False, path=str(path))
    return entry


def _decide(url, accepted, store, args):
    store.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")
    record = {"version": TOS_VERSION, "text": TOS_TEXT, "support": TOS_SUPPORT, "base_url": url, "tos_accepted": accepted, "acceptance_timestamp": stamp}
    (store / _filename(url)).write_text(json.dumps(record) + "\n")
    if not args.json:
        print(f"{'accepted' if accepted else 'rejected'} Terms of Service for {url}")


def execute(args, context):
    """List, accept or reject the terms of the selected channels."""
    urls = _base_urls(args, context)
    if args.action in ("accept", "reject"):
        # conda-anaconda-tos (console render_accept/render_reject, every release since 0.1.0):
        # a channel without terms is reported and skipped, exit 0; under --json it maps to null.
        decided = {}
        for url in urls:
            if _has_terms(url, context):
                _decide(url, args.action == "accept", _store(args), args)
                decided[url] = _entry(url, context)
            else:
                decided[url] = None
                if not args.json:
                    print(f"Terms of Service not found for {url}")
        if args.json:
            json_out(decided)
        return 0
    listing = {url: _entry(url, context) for url in urls}
    if args.json:
        json_out(listing)
        return 0
    for url, entry in listing.items():
        state = "-" if entry is None else ("accepted" if entry.get("tos_accepted") else "rejected" if "tos_accepted" in entry else "pending")
        print(f"{url}  {state}")
    return 0
