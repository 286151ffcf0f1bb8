"""The package cache (PREFIX/pkgs): extracted packages that conda links into environments.

The installer extracts its packages there before it links them, as constructor's installers
do (`conda.exe constructor --extract-conda-pkgs`), and Miniconda keeps them. In this stand-in
only the conda package lives there (the other packages are wheels). `conda install
--force-reinstall conda` relinks it from there, --offline too. Files that name the
installation prefix carry conda's placeholder in the cache and get the target prefix when
they are linked.
"""

import compileall
import json
import os
import shutil
import sys
from pathlib import Path

from conda._standin import records, settings

PLACEHOLDER = "/opt/anaconda1anaconda2anaconda3"

ENTRY_POINT = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys

from conda.cli import main

if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw?|\\.exe)?$", "", sys.argv[0])
    sys.exit(main())
"""

CONDA_SH_EXPORTS = (
    "export CONDA_EXE='{prefix}/bin/conda'\n"
    "export _CE_M=''\n"
    "export _CE_CONDA=''\n"
    "export CONDA_PYTHON_EXE='{prefix}/bin/python'\n\n"
)


def site_packages_rel():
    """site-packages below a prefix made from this interpreter (every prefix here is)."""
    return f"lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"


def pkgs_dirs(context):
    """context.pkgs_dirs: the configured ones, else ROOT_PREFIX/pkgs and ~/.conda/pkgs."""
    configured = [os.path.expanduser(str(p)) for p in context.get("pkgs_dirs")]
    return [Path(p) for p in configured or [settings.ROOT_PREFIX / "pkgs", os.path.expanduser("~/.conda/pkgs")]]


def dist_name(record):
    """<name>-<version>-<build>: the directory of an extracted package."""
    return f"{record['name']}-{record['version']}-{record['build']}"


def _write(path, text, mode=0o644):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


def extract_conda(pkgs_dir, package_dir, profile_sh, record):
    """Lay out the conda package in pkgs_dir: the Python package, its two entry points and
    etc/profile.d/conda.sh, with info/files, info/has_prefix and info/repodata_record.json."""
    dist = Path(pkgs_dir) / dist_name(record)
    shutil.rmtree(dist, ignore_errors=True)
    files = []
    for source in sorted(Path(package_dir).rglob("*.py")):
        rel = f"{site_packages_rel()}/conda/{source.relative_to(package_dir).as_posix()}"
        _write(dist / rel, source.read_text())
        files.append(rel)
    with_prefix = ["bin/conda", "condabin/conda", "etc/profile.d/conda.sh"]
    for rel in with_prefix[:2]:
        _write(dist / rel, ENTRY_POINT.format(python=f"{PLACEHOLDER}/bin/python"), 0o755)
    _write(dist / with_prefix[2], CONDA_SH_EXPORTS.format(prefix=PLACEHOLDER) + Path(profile_sh).read_text())
    files += with_prefix
    _write(dist / "info" / "files", "".join(f"{rel}\n" for rel in sorted(files)))
    _write(dist / "info" / "has_prefix", "".join(f"{PLACEHOLDER} text {rel}\n" for rel in with_prefix))
    _write(dist / "info" / "repodata_record.json", json.dumps(records.fetch_fields(record), indent=2, sort_keys=True) + "\n")
    return dist


def cached_packages(directories):
    """(extracted directory, repodata record) of every package in the package caches."""
    found = []
    for directory in directories:
        for info in sorted(Path(directory).glob("*/info/repodata_record.json")):
            try:
                found.append((info.parent.parent, json.loads(info.read_text())))
            except (OSError, ValueError):
                continue
    return found


def _lines(path):
    try:
        return [line for line in path.read_text().splitlines() if line.strip()]
    except OSError:
        return []


def _link_file(source, target, prefix, relocate):
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = target.with_name(f".{target.name}.c~")
    if relocate:
        staged.write_text(source.read_text().replace(PLACEHOLDER, str(prefix)))
    else:
        shutil.copyfile(source, staged)
    shutil.copymode(source, staged)
    os.replace(staged, target)


def link(prefix, dist, old_files=()):
    """Link an extracted package into prefix (copies; the placeholder becomes the prefix),
    remove files of the unlinked record that the package no longer has, compile its Python.
    Returns the files, relative to the prefix."""
    prefix = Path(prefix)
    files = _lines(dist / "info" / "files")
    relocate = {line.split(" ", 2)[-1] for line in _lines(dist / "info" / "has_prefix")}
    for rel in files:
        _link_file(dist / rel, prefix / rel, prefix, rel in relocate)
    for rel in set(old_files) - set(files):
        (prefix / rel).unlink(missing_ok=True)
    for rel in files:
        if rel.endswith(".py"):
            compileall.compile_file(str(prefix / rel), quiet=2)
    return files


def prefix_record(dist, files, requested_spec=None):
    """The conda-meta record of a package linked from the cache."""
    record = json.loads((dist / "info" / "repodata_record.json").read_text())
    record.update(
        extracted_package_dir=str(dist),
        files=list(files),
        link={"source": str(dist), "type": 1},
        package_tarball_full_path="",
        paths_data={"paths": [], "paths_version": 1},
        requested_spec=requested_spec or "None",
    )
    return record
