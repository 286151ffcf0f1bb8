"""Package records: conda-meta/<name>-<version>-<build>.json, and pip packages seen in site-packages.

Like real conda, only packages installed as conda packages get a conda-meta record; a
package that pip installed (the ``pip:`` section, or by hand) has none and appears in
``conda list`` as channel ``pypi``, build ``pypi_0``, read from its .dist-info. A .json
file in conda-meta that is not a package record breaks real conda's PrefixData.load()
(auxlib ValidationError), and breaks this stand-in the same way.
"""

import email.parser
import hashlib
import json
import os
import time
from pathlib import Path

from conda import __version__
from conda._standin.channels import NOARCH, SUBDIR
from conda._standin.wheelhouse import conda_name, normalize, split_local

REQUIRED_FIELDS = ("name", "version", "build", "build_number")


class RecordValidationError(Exception):
    """conda.auxlib.exceptions.ValidationError raised while loading a prefix record."""


def site_packages(prefix):
    """The environment's site-packages directory."""
    found = sorted(Path(prefix).glob("lib/python3*/site-packages"))
    return found[0] if found else Path(prefix) / "lib" / "python3.11" / "site-packages"


def short_hash(*parts):
    """Deterministic 7-hex digest, so identical nodes get identical build strings."""
    return hashlib.sha256("-".join(parts).encode()).hexdigest()[:7]


def build_string(name, version, pure):
    """A conda-like build string; a PEP 440 local label (+cpu) is folded into it."""
    public, local = split_local(version)
    if name == "python":
        return f"h{short_hash(name, version)}_0_cpython"
    stem = f"pyh{short_hash(name, version)}_0" if pure else f"py311h{short_hash(name, version)}_0"
    return f"{local}_{stem}" if local else stem


def file_digests(path, identity=""):
    """(md5, sha256, size) of a file; a package with no file of its own (python, which is
    the node's interpreter) gets the digests of a stand-in payload named after it, so no
    record carries the digest of an empty file."""
    data = Path(path).read_bytes() if path and Path(path).is_file() else f"fakeconda package {identity}\n".encode()
    return hashlib.md5(data).hexdigest(), hashlib.sha256(data).hexdigest(), len(data)  # nosec: conda records carry md5


def package_digests(name, version, pure, wheel=None):
    """(md5, sha256, size) a record of this package carries: its wheel's, or its payload's."""
    return file_digests(wheel, f"{name}-{split_local(version)[0]}-{build_string(name, version, pure)}")


def make_record(name, version, pure, base_url, wheel=None, requested_spec=None, files=(), depends=(), license_text=""):
    """A PrefixRecord dict with the fields real conda writes."""
    public = split_local(version)[0]
    build = build_string(name, version, pure)
    subdir = NOARCH if pure else SUBDIR
    fn = f"{name}-{public}-{build}.conda"
    dist = f"{name}-{public}-{build}"
    md5, sha256, size = package_digests(name, version, pure, wheel)
    return {
        "build": build,
        "build_number": 0,
        "channel": f"{base_url}/{subdir}",
        "constrains": [],
        "depends": list(depends),
        "extracted_package_dir": "",
        "files": list(files),
        "fn": fn,
        "license": license_text,
        "link": {"source": dist, "type": 1},
        "md5": md5,
        "name": name,
        "package_tarball_full_path": "",
        "paths_data": {"paths": [], "paths_version": 1},
        "requested_spec": requested_spec or "None",
        "sha256": sha256,
        "size": size,
        "subdir": subdir,
        "timestamp": 0,
        "url": f"{base_url}/{subdir}/{fn}",
        "version": public,
    }


def record_filename(record):
    """conda-meta/<name>-<version>-<build>.json"""
    return f"{record['name']}-{record['version']}-{record['build']}.json"


def write_records(prefix, records):
    """Replace the package records of a prefix with these (other conda-meta files are kept)."""
    meta = Path(prefix) / "conda-meta"
    meta.mkdir(parents=True, exist_ok=True)
    for old in load_conda_records(prefix, tolerate=True):
        (meta / record_filename(old)).unlink(missing_ok=True)
    for record in records:
        (meta / record_filename(record)).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")


def load_conda_records(prefix, tolerate=False):
    """Records from conda-meta/*.json keyed by name, as PrefixData.load() reads them."""
    records = {}
    meta = Path(prefix) / "conda-meta"
    if not meta.is_dir():
        return []
    for path in sorted(meta.glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except ValueError as exc:
            if tolerate:
                continue
            raise RecordValidationError(f"CorruptedEnvironmentError: The target environment has corrupted package records: {path}") from exc
        missing = [f for f in REQUIRED_FIELDS if not isinstance(data, dict) or f not in data]
        if missing:
            if tolerate:
                continue
            raise RecordValidationError(f"PrefixRecord requires a {missing[0]} field. Instantiated with {data}")
        if path.name != record_filename(data):
            continue  # real conda: "Ignoring malformed prefix record at: ..."
        records[data["name"]] = data
    return list(records.values())


def read_dist_info(dist_info):
    """Name, version, requirements, license and files of an installed distribution."""
    meta = email.parser.Parser().parsestr((dist_info / "METADATA").read_text(errors="replace"), headersonly=True)
    files = []
    record = dist_info / "RECORD"
    if record.is_file():
        sp_rel = dist_info.parent.relative_to(dist_info.parents[3])  # lib/python3.X/site-packages
        for line in record.read_text().splitlines():
            rel = line.rsplit(",", 2)[0]
            if rel:
                files.append(os.path.normpath(sp_rel / rel))
    return {
        "name": normalize(meta.get("Name", dist_info.name.split("-")[0])),
        "version": meta.get("Version", "0"),
        "requires": meta.get_all("Requires-Dist") or [],
        "license": meta.get("License") or "",
        "files": files,
        "anchor": f"{dist_info.name}/RECORD",
    }


def installed_dists(prefix):
    """Every .dist-info in the environment's site-packages, keyed by normalised name."""
    dists = {}
    sp_dir = site_packages(prefix)
    if sp_dir.is_dir():
        for dist_info in sorted(sp_dir.glob("*.dist-info")):
            if (dist_info / "METADATA").is_file():
                info = read_dist_info(dist_info)
                dists[info["name"]] = info
    return dists


def _owned_anchor(record):
    return next((f.split("/")[-2] for f in record.get("files", []) if f.endswith(".dist-info/RECORD")), None)


def pypi_record(dist, pypi_base_url):
    """What conda's pypi prefix-data loader reports for a package pip installed."""
    return {
        "base_url": pypi_base_url,
        "build_number": 0,
        "build_string": "pypi_0",
        "channel": "pypi",
        "dist_name": f"{dist['name']}-{dist['version']}-pypi_0",
        "name": dist["name"],
        "platform": "pypi",
        "version": dist["version"],
    }


def list_records(prefix, base_name_of, pypi_base_url):
    """Records of `conda list`: conda records still intact, plus pip-installed packages.

    A conda record whose .dist-info pip has replaced is dropped and its json deleted, as
    conda's pypi loader does with clobbered records.
    """
    dists = installed_dists(prefix)
    present = {d["anchor"].split("/")[0] for d in dists.values()}
    owned, rows = set(), []
    for record in load_conda_records(prefix):
        anchor = _owned_anchor(record)
        if anchor and anchor not in present:
            (Path(prefix) / "conda-meta" / record_filename(record)).unlink(missing_ok=True)
            continue
        if anchor:
            owned.add(anchor)
        rows.append(dist_fields(record, base_name_of))
    for dist in dists.values():
        if dist["anchor"].split("/")[0] not in owned:
            rows.append(pypi_record(dist, pypi_base_url))
    return sorted(rows, key=lambda r: r["name"])


# Keys a PrefixRecord adds to the index's PackageRecord (what the FETCH actions carry).
PREFIX_ONLY_KEYS = ("extracted_package_dir", "files", "link", "package_tarball_full_path", "paths_data", "requested_spec")


def fetch_fields(record):
    """A FETCH action entry: the full package record as the channel index has it."""
    return {key: value for key, value in record.items() if key not in PREFIX_ONLY_KEYS}


def dependency_order(records):
    """PrefixData.iter_records_sorted (conda/models/prefix_graph.py, allow_cycles): records
    nothing depends on and that depend on nothing first, then each level whose parents are
    all placed, names sorted within a group. python comes first in an environment."""
    by_name = {r["name"]: r for r in records}
    parents = {r["name"]: {dep.split()[0] for dep in r.get("depends", ()) if dep.split()[0] in by_name} - {r["name"]}
               for r in records}
    is_parent = set().union(*parents.values()) if parents else set()
    order = sorted(name for name, deps in parents.items() if not deps and name not in is_parent)
    remaining = {name: deps for name, deps in parents.items() if name not in order}
    while remaining:
        ready = sorted(name for name, deps in remaining.items() if not deps) or [min(remaining, key=lambda n: (len(remaining[n]), n))]
        order += ready
        remaining = {name: deps - set(ready) for name, deps in remaining.items() if name not in ready}
    return [by_name[name] for name in order]


def dist_fields(record, base_name_of):
    """PackageRecord.dist_fields_dump(): the shape of `conda list --json` entries."""
    channel_url = record["channel"].rsplit("/", 1)[0] if record["channel"].endswith(("/" + SUBDIR, "/" + NOARCH)) else record["channel"]
    return {
        "base_url": channel_url,
        "build_number": record["build_number"],
        "build_string": record["build"],
        "channel": base_name_of(channel_url),
        "dist_name": f"{record['name']}-{record['version']}-{record['build']}",
        "name": record["name"],
        "platform": record.get("subdir", SUBDIR),
        "version": record["version"],
    }


def append_history(prefix, argv, added=(), removed=(), specs=()):
    """conda-meta/history, the file whose presence makes a directory an environment."""
    meta = Path(prefix) / "conda-meta"
    meta.mkdir(parents=True, exist_ok=True)
    lines = [
        f"==> {time.strftime('%Y-%m-%d %H:%M:%S')} <==",
        f"# cmd: {' '.join(argv)}",
        f"# conda version: {__version__}",
    ]
    lines += [f"-{r['channel']}::{r['name']}-{r['version']}-{r['build']}" for r in removed]
    lines += [f"+{r['channel']}::{r['name']}-{r['version']}-{r['build']}" for r in added]
    if specs:
        lines.append(f"# update specs: {list(specs)}")
    with (meta / "history").open("a") as handle:
        handle.write("\n".join(lines) + "\n")


def conda_name_of_dist(dist):
    """Conda package name of an installed distribution."""
    return conda_name(dist["name"])
