"""`conda install [-n NAME | -p PREFIX] [-y] [--force-reinstall] [--offline] [--json] PKG ...`

Installs into an existing environment (conda/cli/install.py, handle_txn). A spec that an
installed package already satisfies changes nothing ("All requested packages already
installed."), unless --force-reinstall: then that package is unlinked and linked again
(conda/core/solve.py, diff_for_unlink_link_precs). Packages come from the package cache
(the conda package, which the installer extracted into PREFIX/pkgs) or from the channels
(the wheelhouse). --offline leaves the package cache and file:// channels only, as in conda.
"""

import functools
import sys

from conda._standin import envbuild, pkgcache, prefixes, records, settings
from conda._standin.channels import all_channel_urls, channel_name, effective_channels, primary_base_url
from conda._standin.errors import CondaValueError, PackagesNotFoundError, UnsatisfiableError, dashlist
from conda._standin.output import confirm_yn, json_success, transaction_banner, transaction_done
from conda._standin.wheelhouse import CONDA_TO_WHEEL, CondaSpec, Wheelhouse, conda_name, normalize


def add_parser(subparsers, common):
    """Register `conda install`."""
    parser = subparsers.add_parser("install", parents=[common], help="Install a list of packages into a specified conda environment.")
    parser.add_argument("--force-reinstall", action="store_true")
    parser.add_argument("-c", "--channel", action="append", default=[])
    parser.add_argument("--override-channels", action="store_true")
    parser.add_argument("packages", nargs="*")
    parser.set_defaults(func=execute)


class Plan:  # pylint: disable=too-few-public-methods
    """What one `conda install` links: packages to relink as they are, from the cache, and to solve."""

    def __init__(self):
        self.reinstall = []  # installed records linked again unchanged
        self.from_cache = []  # (spec, extracted package directory)
        self.to_solve = []  # specs for the wheelhouse
        self.missing = []  # specs nothing can satisfy


def channel_wheelhouse(channels, context, offline):
    """The wheelhouse stands for every channel; offline, conda reads file:// channels only, so
    with none of those only the node's own seed wheels are left."""
    if offline and not any(url.startswith("file://") for url in all_channel_urls(channels, context)):
        return Wheelhouse(envbuild.seed_dir())
    return Wheelhouse(settings.wheelhouse())


def _cache_match(spec, cached):
    """The newest extracted package in the cache that satisfies spec, or None."""
    from pip._vendor.packaging.version import Version  # pylint: disable=import-outside-toplevel,import-error

    found = [(dist, rec) for dist, rec in cached if rec.get("name") == spec.name and spec.matches(rec.get("version", ""))]
    return max(found, key=lambda item: Version(item[1]["version"]))[0] if found else None


def _wheel_available(record, prefix, wheelhouse):
    """A force-reinstall of a package from a wheel needs that very version (the installed one)."""
    if record["name"] == "python":
        return True
    wheel_name = normalize(CONDA_TO_WHEEL.get(record["name"], record["name"]))
    version = records.installed_dists(prefix).get(wheel_name, {}).get("version", record["version"])
    return any(house.wheel_file(wheel_name, version)[0] for house in (wheelhouse, Wheelhouse(envbuild.seed_dir())))


def _plan_reinstall(plan, spec, record, prefix, cached, wheelhouse):
    same = [dist for dist, rec in cached if pkgcache.dist_name(rec) == pkgcache.dist_name(record)]
    if same:
        plan.from_cache.append((spec, same[0]))
    elif _wheel_available(record, prefix, wheelhouse):
        plan.reinstall.append(record)
    else:
        plan.missing.append(spec)


def make_plan(specs, installed, prefix, cached, wheelhouse, force_reinstall):
    """Sort the specs: satisfied (nothing, or a relink with --force-reinstall), in the cache, to solve, missing."""
    plan = Plan()
    for spec in specs:
        record = installed.get(spec.name)
        if record and spec.matches(record["version"]):
            if force_reinstall:
                _plan_reinstall(plan, spec, record, prefix, cached, wheelhouse)
            continue
        dist = _cache_match(spec, cached)
        if dist:
            plan.from_cache.append((spec, dist))
        else:
            plan.to_solve.append(spec)
    if plan.to_solve:
        _pins, _requested, missing = envbuild.resolve(plan.to_solve, wheelhouse)
        plan.missing += missing
    return plan


def _link_solved(prefix, specs, wheelhouse, base_url, installed):
    """Install the specs from the wheelhouse as `conda create` does; returns the records that changed."""
    pins, requested, _missing = envbuild.resolve(specs, wheelhouse)
    rc, _out, err = envbuild.pip_install(prefix, [f"{name}=={version}" for name, version in sorted(pins.items())])
    if rc:
        raise UnsatisfiableError("\n".join(err.strip().splitlines()[-6:]))
    fresh = envbuild.conda_records(prefix, requested, base_url, wheelhouse)
    return [r for r in fresh if r["name"] not in installed or records.record_filename(installed[r["name"]]) != records.record_filename(r)]


def _relink_wheels(prefix, recs):
    """--force-reinstall of packages installed from wheels: the same versions again, dependencies untouched."""
    if any(r["name"] == "python" for r in recs):
        envbuild.create_venv(prefix)
    dists = records.installed_dists(prefix)
    pins = []
    for rec in recs:
        wheel_name = normalize(CONDA_TO_WHEEL.get(rec["name"], rec["name"]))
        if rec["name"] != "python":
            pins.append(f"{wheel_name}=={dists.get(wheel_name, {}).get('version', rec['version'])}")
    rc, _out, err = envbuild.pip_install(prefix, pins, no_deps=True, force_reinstall=True)
    if rc:
        raise UnsatisfiableError("\n".join(err.strip().splitlines()[-6:]))
    return list(recs)


def link(prefix, plan, installed, wheelhouse, base_url):
    """Carry the plan out; returns (unlinked records, linked records)."""
    linked = []
    if plan.to_solve:
        linked += _link_solved(prefix, plan.to_solve, wheelhouse, base_url, installed)
    if plan.reinstall:
        linked += _relink_wheels(prefix, plan.reinstall)
    for spec, dist in plan.from_cache:
        old = installed.get(spec.name, {})
        linked.append(pkgcache.prefix_record(dist, pkgcache.link(prefix, dist, old.get("files", ())), requested_spec=spec.text))
    unlinked = [installed[r["name"]] for r in linked if r["name"] in installed]
    return unlinked, linked


def _version_key(version):
    from pip._vendor.packaging.version import InvalidVersion, Version  # pylint: disable=import-outside-toplevel,import-error

    try:
        return (1, Version(version))
    except InvalidVersion:
        return (0, version)


def _changed(old, new):
    """The section of the change report a relinked package belongs to (None for the same record)."""
    if old == new or records.record_filename(old) == records.record_filename(new):
        return None
    old_key, new_key = _version_key(old["version"]), _version_key(new["version"])
    if new_key > old_key or (new_key == old_key and new["build_number"] > old["build_number"]):
        return "UPDATED"
    if new_key == old_key:
        return "REVISED"
    return "DOWNGRADED"


def change_report(prefix, specs, unlinked, linked, context):
    """LinkTransaction._change_report_str, without the download table (nothing is downloaded)."""
    lines = ["", "## Package Plan ##\n", f"  environment location: {prefix}", ""]
    lines += [f"  added / updated specs:{dashlist(sorted(specs), indent=4)}", ""]
    old = {r["name"]: r for r in unlinked}
    new = {r["name"]: r for r in linked}
    added = sorted(name for name in new if name not in old)
    if added:
        lines.append("\nThe following NEW packages will be INSTALLED:\n")
        for name in added:
            rec = new[name]
            channel = channel_name(rec["channel"].rsplit("/", 1)[0], context)
            lines.append("  %-18s %s " % (name[:17] + "~" if len(name) > 18 else name, f"{channel}/{rec['subdir']}::{name}-{rec['version']}-{rec['build']}"))
    for section in ("UPDATED", "DOWNGRADED", "REVISED"):
        names = sorted(name for name in new if name in old and _changed(old[name], new[name]) == section)
        if names:
            lines.append(f"\nThe following packages will be {section}:\n")
            for name in names:
                left = f"{old[name]['version']}-{old[name]['build']}"
                lines.append("  %-18s %38s --> %s " % (name, left[:37] + "~" if len(left) > 38 else left, f"{new[name]['version']}-{new[name]['build']}"))
    lines += ["", ""]
    return "\n".join(lines)


def _report_json(prefix, unlinked, linked, from_channels, context):
    """stdout_json_success(prefix=..., actions=...): FETCH, PREFIX, then UNLINK and LINK when not empty."""
    base_name = functools.partial(channel_name, context=context)
    actions = {"FETCH": [records.fetch_fields(r) for r in from_channels], "PREFIX": str(prefix)}
    if unlinked:
        actions["UNLINK"] = [records.dist_fields(r, base_name) for r in unlinked]
    if linked:
        actions["LINK"] = [records.dist_fields(r, base_name) for r in linked]
    json_success(actions=actions, prefix=str(prefix))


def predicted_links(plan, prefix, wheelhouse, base_url):
    """Records the transaction will link, for the package plan shown before it runs: what the
    wheelhouse adds as dependencies is known only after pip ran, so only the requested ones."""
    predicted = list(plan.reinstall)
    predicted += [cached_record(dist) for _spec, dist in plan.from_cache]
    if plan.to_solve:
        pins, _requested, _missing = envbuild.resolve(plan.to_solve, wheelhouse)
        for name, version in sorted(pins.items()):
            wheel, pure = wheelhouse.wheel_file(name, version)
            predicted.append(records.make_record(conda_name(name), version, pure, base_url, wheel=wheel))
    return predicted


def cached_record(dist):
    """The record of an extracted package, as the package cache knows it."""
    return pkgcache.prefix_record(dist, [])


def execute(args, context):
    """Install (or, with --force-reinstall, relink) packages in an existing environment."""
    if not args.packages:
        raise CondaValueError("too few arguments, must supply one of command line packages, --file or --revision")
    prefix = prefixes.target_prefix(args, context)
    prefixes.assert_environment(prefix)
    specs = [CondaSpec(text) for text in args.packages]
    channels = effective_channels(list(args.channel) + (["nodefaults"] if args.override_channels else []), context)
    quiet = args.json or args.quiet
    transaction_banner(channels, quiet)
    installed = {r["name"]: r for r in records.load_conda_records(prefix)}
    wheelhouse = channel_wheelhouse(channels, context, args.offline or context.get("offline"))
    plan = make_plan(specs, installed, prefix, pkgcache.cached_packages(pkgcache.pkgs_dirs(context)), wheelhouse, args.force_reinstall)
    if plan.missing:
        if not quiet:
            print("failed\n")
        raise PackagesNotFoundError(plan.missing, all_channel_urls(channels, context))
    if not quiet:
        print("done")
    if not (plan.reinstall or plan.from_cache or plan.to_solve):
        if args.json:
            json_success(message="All requested packages already installed.")
        else:
            print("\n# All requested packages already installed.\n")
        return 0
    base_url = primary_base_url(channels, context)
    if not args.json:
        predicted = predicted_links(plan, prefix, wheelhouse, base_url)
        unlinking = [installed[r["name"]] for r in predicted if r["name"] in installed]
        print(change_report(prefix, [s.text for s in specs], unlinking, predicted, context))
        confirm_yn("Proceed", args, context, default="yes")
    unlinked, linked = link(prefix, plan, installed, wheelhouse, base_url)
    records.write_records(prefix, list({**installed, **{r["name"]: r for r in linked}}.values()))
    records.append_history(prefix, sys.argv, added=linked, removed=unlinked, specs=[s.text for s in specs])
    transaction_done(quiet)
    if args.json:
        cached_names = {spec.name for spec, _dist in plan.from_cache}
        _report_json(prefix, unlinked, linked, [r for r in linked if r["name"] not in cached_names], context)
    return 0
