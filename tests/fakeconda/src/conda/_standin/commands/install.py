"""What `conda env create`, `conda env update` and `conda create` share: solve, link, report."""

import functools
import json
import shutil
import sys
from pathlib import Path

from conda._standin import envbuild, prefixes, records, settings
from conda._standin.channels import all_channel_urls, channel_name, effective_channels, primary_base_url
from conda._standin.errors import PackagesNotFoundError
from conda._standin.output import json_success, print_activate, transaction_banner, transaction_done
from conda._standin.wheelhouse import CONDA_TO_WHEEL, Wheelhouse


def remove_prefix(prefix):
    """rm_rf: a symlinked environment loses its link only, as conda's rm_rf does."""
    prefix = Path(prefix)
    if prefix.is_symlink():
        prefix.unlink()
    elif prefix.exists():
        shutil.rmtree(prefix)


def _solve(spec, context, quiet):
    """Resolve the conda specs against the wheelhouse, failing like libmamba on a missing one."""
    channels = effective_channels(spec.channels, context)
    transaction_banner(channels, quiet)
    pins, requested, missing = envbuild.resolve(spec.conda_specs, Wheelhouse(settings.wheelhouse()))
    if missing:
        if not quiet:
            print("failed\n")
        raise PackagesNotFoundError(missing, all_channel_urls(channels, context))
    if not quiet:
        print("done")
    return channels, pins, requested


def _link(prefix, spec, context, channels, pins, requested, new):
    base_url = primary_base_url(channels, context)
    if spec.explicit:
        return envbuild.install_explicit(prefix, spec.explicit, new, getattr(spec, "checksums", {}))
    return envbuild.install_conda_part(prefix, pins, requested, base_url, new)


def _prune(prefix, new_records, old_records):
    """--prune: uninstall conda packages the new spec no longer brings in."""
    keep = {r["name"] for r in new_records}
    gone = [r for r in old_records if r["name"] not in keep and r["name"] != "python"]
    envbuild.pip_uninstall(prefix, [CONDA_TO_WHEEL.get(r["name"], r["name"]) for r in gone])
    return gone


def _write_env_vars(prefix, variables):
    if variables:
        state = Path(prefix) / "conda-meta" / "state"
        state.write_text(json.dumps({"env_vars": {str(k): str(v) for k, v in variables.items()}}, indent=2) + "\n")


def build(prefix, spec, context, args, prune=False):
    """Create or update prefix from a parsed spec; returns the JSON result or prints the hint."""
    prefix = Path(prefix)
    new = not prefixes.is_environment(prefix)
    quiet = args.json or args.quiet
    channels, pins, requested = _solve(spec, context, quiet) if not spec.explicit else (effective_channels([], context), {}, {})
    old = records.load_conda_records(prefix, tolerate=True) if not new else []
    fresh = _link(prefix, spec, context, channels, pins, requested, new)
    removed = _prune(prefix, fresh, old) if prune else []
    if not prune and not spec.explicit:
        fresh_names = {r["name"] for r in fresh}
        fresh += [r for r in old if r["name"] not in fresh_names]
    old_keys = {records.record_filename(r) for r in old}
    new_keys = {records.record_filename(r) for r in fresh}
    added = [r for r in fresh if records.record_filename(r) not in old_keys]
    removed += [r for r in old if records.record_filename(r) not in new_keys and r not in removed]
    records.write_records(prefix, fresh)
    records.append_history(prefix, sys.argv, added=added, removed=removed, specs=[s.text for s in spec.conda_specs])
    prefixes.register(prefix, context)
    _write_env_vars(prefix, spec.variables)
    transaction_done(quiet)
    pip_result = envbuild.run_pip_section(prefix, spec.pip_specs, getattr(args, "file", None) or ".", quiet=quiet)
    return _report(prefix, context, args, added, removed, pip_result)


def _report(prefix, context, args, added, removed, pip_result):
    if not args.json:
        if not args.quiet:
            print_activate(args.name or prefix)
        return 0
    if not added and not removed and pip_result is None:
        json_success(message="All requested packages already installed.")
        return 0
    base_name = functools.partial(channel_name, context=context)
    actions = {
        # No package cache here, so every linked package was "downloaded".
        "FETCH": [records.fetch_fields(r) for r in added],
        "LINK": [records.dist_fields(r, base_name) for r in added],
        "PREFIX": str(prefix),
        "UNLINK": [records.dist_fields(r, base_name) for r in removed],
    }
    if pip_result is not None:
        actions["PIP"] = pip_result
    json_success(prefix=str(prefix), actions=actions)
    return 0
