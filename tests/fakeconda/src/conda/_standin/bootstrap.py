"""Second half of the installer, run by the new base's python once the conda package is in place.

Installs PyYAML from the payload, keeps pip/setuptools seed wheels for new environments,
writes bin/conda, condabin/conda, etc/profile.d/conda.sh, the stand-in settings and the
base environment's conda-meta. Re-running it (-u) keeps envs/, .condarc and history.
"""

import argparse
import json
import shutil
import sys
from pathlib import Path

from conda import __version__
from conda._standin import envbuild, records
from conda._standin.channels import SUBDIR

ENTRY_POINT = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys

from conda.cli import main

if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw?|\\.exe)?$", "", sys.argv[0])
    sys.exit(main())
"""


def seed_wheels(payload):
    """pip and setuptools wheels (copied into the payload from the node's ensurepip bundle)."""
    return [str(w) for w in sorted(Path(payload, "wheels").glob("*.whl")) if w.name.split("-")[0].lower() in envbuild.SEED_PACKAGES]


def write_scripts(prefix):
    """bin/conda and condabin/conda: the same Python entry point, as in real Miniconda."""
    for directory in ("bin", "condabin"):
        path = Path(prefix, directory, "conda")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(ENTRY_POINT.format(python=Path(prefix, "bin", "python")))
        path.chmod(0o755)


def write_profile(prefix, payload):
    """etc/profile.d/conda.sh with the CONDA_EXE exports conda prepends."""
    path = Path(prefix, "etc", "profile.d", "conda.sh")
    path.parent.mkdir(parents=True, exist_ok=True)
    header = (
        f"export CONDA_EXE='{prefix}/bin/conda'\n"
        "export _CE_M=''\n"
        "export _CE_CONDA=''\n"
        f"export CONDA_PYTHON_EXE='{prefix}/bin/python'\n\n"
    )
    path.write_text(header + Path(payload, "etc", "profile.d", "conda.sh").read_text())


def write_settings(prefix, args):
    """etc/fakeconda/settings.json and the seed wheels."""
    directory = Path(prefix, "etc", "fakeconda")
    seed = directory / "seed"
    shutil.rmtree(seed, ignore_errors=True)
    seed.mkdir(parents=True)
    for wheel in seed_wheels(args.payload):
        shutil.copy2(wheel, seed)
    settings = {
        "base_python": args.base_python,
        "conda_version": __version__,
        "installer": args.installer,
        "wheelhouse": args.wheelhouse,
    }
    (directory / "settings.json").write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n")


def base_records(prefix, channel_root):
    """conda-meta records of the base environment."""
    base_url = f"{channel_root}/pkgs/main"
    dists = records.installed_dists(prefix)
    result = [records.make_record("python", envbuild.python_version(), False, base_url)]
    for name in ("pip", "setuptools", "pyyaml"):
        if name in dists:
            result.append(records.make_record(name, dists[name]["version"], name != "pyyaml", base_url, files=dists[name]["files"]))
    conda_files = sorted(str(p.relative_to(prefix)) for p in Path(records.site_packages(prefix), "conda").rglob("*.py"))
    result.append(records.make_record("conda", __version__, False, base_url, files=conda_files + ["bin/conda", "condabin/conda"]))
    return result


def main(argv=None):
    """Finish an installation into --prefix."""
    parser = argparse.ArgumentParser(prog="fakeconda-bootstrap")
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--payload", required=True)
    parser.add_argument("--wheelhouse", required=True)
    parser.add_argument("--base-python", required=True)
    parser.add_argument("--installer", required=True)
    args = parser.parse_args(argv)
    prefix = Path(args.prefix)
    write_scripts(prefix)
    write_profile(prefix, args.payload)
    write_settings(prefix, args)
    Path(prefix, "envs").mkdir(exist_ok=True)
    channel_root = f"file://{args.wheelhouse}/channels"
    base = base_records(prefix, channel_root)
    records.write_records(prefix, base)
    records.append_history(prefix, [f"{args.installer}.sh"] + sys.argv[1:2], added=base)
    Path(prefix, "conda-meta", "initial-state.explicit.txt").write_text(
        f"# platform: {SUBDIR}\n@EXPLICIT\n" + "".join(f"{r['url']}\n" for r in base)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
