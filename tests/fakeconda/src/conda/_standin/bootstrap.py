"""Second half of the installer: the stand-in for constructor's standalone conda.

Run by the node's python with the payload on sys.path. It extracts the conda package into
PREFIX/pkgs, then does what `conda.exe install --offline --file initial-state.explicit.txt -yp
PREFIX` does: it links each base package (python, pip, setuptools, pyyaml, conda) that
PREFIX/conda-meta does not already record with the same name, version and build, and leaves
the recorded ones as they are, even where their files are gone (so after -u a deleted
bin/conda stays deleted). It also keeps envs/, .condarc and the history, and writes the
stand-in's settings.
"""

import argparse
import ensurepip
import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import conda
from conda import __version__
from conda._standin import envbuild, pkgcache, records
from conda._standin.channels import SUBDIR
from conda._standin.wheelhouse import parse_wheel_filename

WHEEL_PACKAGES = ("pip", "setuptools", "pyyaml")
ENSUREPIP_DIRS = ("/usr/share/python-wheels", os.path.join(os.path.dirname(ensurepip.__file__), "_bundled"))


def add_seed_wheels(payload):
    """Copy the pip and setuptools wheels the node's ensurepip would use into the payload."""
    for name in envbuild.SEED_PACKAGES:
        found = sorted(w for d in ENSUREPIP_DIRS for w in glob.glob(os.path.join(d, name + "-*.whl")))
        if not found:
            sys.exit(f"ERROR: no {name} wheel for ensurepip on this node")
        shutil.copy2(found[0], Path(payload, "wheels"))


def payload_wheels(payload):
    """{name: (wheel, version, pure)} of the payload's wheels."""
    wheels = {}
    for wheel in sorted(Path(payload, "wheels").glob("*.whl")):
        parsed = parse_wheel_filename(wheel.name)
        if parsed and parsed[0] in WHEEL_PACKAGES:
            wheels[parsed[0]] = (wheel, parsed[1], parsed[2])
    return wheels


def planned_records(wheels, base_url):
    """Records of the base packages as the installer carries them (files are added when linked)."""
    planned = [records.make_record("python", envbuild.python_version(), False, base_url)]
    for name in WHEEL_PACKAGES:
        wheel, version, pure = wheels[name]
        planned.append(records.make_record(name, version, pure, base_url, wheel=wheel))
    planned.append(records.make_record("conda", __version__, False, base_url))
    return planned


def link_python(prefix, base_python):
    """python: the base environment is a venv of the node's interpreter."""
    subprocess.run([base_python, "-m", "venv", "--without-pip", str(prefix)], check=True)


def link_wheels(prefix, wanted, wheels):
    """pip, setuptools, pyyaml: installed by running the payload's pip wheel in the prefix's python."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    subprocess.run(
        [str(Path(prefix, "bin", "python")), f"{wheels['pip'][0]}/pip", "install", "--quiet", "--no-compile", "--no-index",
         "--no-deps", "--force-reinstall", *[str(wheels[r["name"]][0]) for r in wanted]],
        check=True, env=env,
    )
    dists = records.installed_dists(prefix)
    return [dict(r, files=dists.get(r["name"], {}).get("files", [])) for r in wanted]


def link_packages(prefix, wanted, wheels, conda_dist, args, recorded):
    """Link the planned records that are not recorded yet; returns their prefix records."""
    names = {r["name"] for r in wanted}
    linked = []
    if "python" in names:
        link_python(prefix, args.base_python)
        linked += [r for r in wanted if r["name"] == "python"]
    from_wheels = [r for r in wanted if r["name"] in WHEEL_PACKAGES]
    if from_wheels:
        linked += link_wheels(prefix, from_wheels, wheels)
    if "conda" in names:
        old_files = recorded["conda"].get("files", []) if "conda" in recorded else []
        linked.append(pkgcache.prefix_record(conda_dist, pkgcache.link(prefix, conda_dist, old_files)))
    return linked


def write_settings(prefix, args):
    """etc/fakeconda/settings.json and the seed wheels."""
    directory = Path(prefix, "etc", "fakeconda")
    seed = directory / "seed"
    shutil.rmtree(seed, ignore_errors=True)
    seed.mkdir(parents=True)
    for name, (wheel, _version, _pure) in payload_wheels(args.payload).items():
        if name in envbuild.SEED_PACKAGES:
            shutil.copy2(wheel, seed)
    settings = {
        "base_python": args.base_python,
        "conda_version": __version__,
        "installer": args.installer,
        "wheelhouse": args.wheelhouse,
    }
    (directory / "settings.json").write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n")


def main(argv=None):
    """Install the base environment into --prefix, or update it in place (-u)."""
    parser = argparse.ArgumentParser(prog="fakeconda-bootstrap")
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--payload", required=True)
    parser.add_argument("--wheelhouse", required=True)
    parser.add_argument("--base-python", required=True)
    parser.add_argument("--installer", required=True)
    args = parser.parse_args(argv)
    prefix = Path(args.prefix)
    add_seed_wheels(args.payload)
    wheels = payload_wheels(args.payload)
    planned = planned_records(wheels, f"file://{args.wheelhouse}/channels/pkgs/main")
    conda_record = next(r for r in planned if r["name"] == "conda")
    conda_dist = pkgcache.extract_conda(
        prefix / "pkgs", Path(conda.__file__).parent, Path(args.payload, "etc", "profile.d", "conda.sh"), conda_record,
    )
    recorded = {r["name"]: r for r in records.load_conda_records(prefix, tolerate=True)}
    wanted = [r for r in planned if r["name"] not in recorded
              or records.record_filename(recorded[r["name"]]) != records.record_filename(r)]
    linked = link_packages(prefix, wanted, wheels, conda_dist, args, recorded)
    write_settings(prefix, args)
    Path(prefix, "envs").mkdir(exist_ok=True)
    replaced = [recorded[r["name"]] for r in linked if r["name"] in recorded]
    records.write_records(prefix, list({**recorded, **{r["name"]: r for r in linked}}.values()))
    records.append_history(prefix, [f"{args.installer}.sh"] + sys.argv[1:2], added=linked, removed=replaced)
    Path(prefix, "conda-meta", "initial-state.explicit.txt").write_text(
        f"# platform: {SUBDIR}\n@EXPLICIT\n" + "".join(f"{r['url']}\n" for r in planned)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
