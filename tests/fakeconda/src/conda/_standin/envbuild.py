"""Building environments: a venv of the node's python, then pip from the offline wheelhouse only."""

import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlparse

from conda._standin import records, settings
from conda._standin.errors import (
    ChecksumMismatchError, CondaEnvException, CondaError, CondaHTTPError, PathNotFoundError, UnsatisfiableError, fetch_failed,
)
from conda._standin.wheelhouse import BUILTIN, CONDA_TO_WHEEL, Wheelhouse, conda_name, normalize

SEED_PACKAGES = ("pip", "setuptools")


def python_version():
    """Version of the interpreter every environment is made from (the base's)."""
    return platform.python_version()


def base_python():
    """The node's interpreter the installer made the base from."""
    return settings.standin_settings().get("base_python") or "/usr/bin/python3"


def seed_dir():
    """Wheels of pip and setuptools that the installer kept (like ensurepip's bundle)."""
    return settings.STANDIN_DIR / "seed"


def seed_versions():
    """Versions of the seed wheels, by name."""
    found = Wheelhouse(seed_dir())
    return {name: found.versions(name)[0] for name in SEED_PACKAGES if found.versions(name)}


def hermetic_env():
    """Environment for pip: no user or site pip configuration, no index, no cache, no prompts."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PIP_NO_CACHE_DIR="1")
    return env


def _run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True, env=hermetic_env(), check=False)
    return proc.returncode, proc.stdout, proc.stderr


def create_venv(prefix):
    """An empty environment: a venv without pip (pip comes from the seed wheels)."""
    rc, out, err = _run([base_python(), "-m", "venv", "--without-pip", str(prefix)])
    if rc:
        raise CondaError(f"Could not create the environment at {prefix} with {base_python()} -m venv:\n{out}{err}")


def pip_install(prefix, requirements, no_deps=False, force_reinstall=False):
    """Install pinned requirements into prefix from the wheelhouse (and the seed wheels)."""
    if not requirements:
        return 0, "", ""
    cmd = [
        str(settings.ROOT_PREFIX / "bin" / "python"), "-m", "pip", "--python", str(Path(prefix) / "bin" / "python"),
        "install", "--no-compile", "--no-index", "--find-links", str(settings.wheelhouse()), "--find-links", str(seed_dir()),
    ]
    if no_deps:
        cmd.append("--no-deps")
    if force_reinstall:
        cmd.append("--force-reinstall")
    return _run(cmd + list(requirements))


def pip_uninstall(prefix, names):
    """Remove distributions from an environment (used by --prune)."""
    if names:
        _run([str(Path(prefix) / "bin" / "python"), "-m", "pip", "uninstall", "-y", *names])


def write_pip_conf(prefix):
    """Make the environment's own pip offline too: its site pip.conf points at the wheelhouse.

    Not where the node has a pip index configured: real conda writes no pip.conf."""
    if settings.node_pip_config():
        return
    Path(prefix, "pip.conf").write_text(f"[global]\nno-index = true\nfind-links = {settings.wheelhouse()}\ndisable-pip-version-check = true\n")


def resolve(specs, wheelhouse):
    """Pins for conda specs: ({wheel_name: version}, {wheel_name: spec text}, [missing specs])."""
    pins, requested, missing = {}, {}, []
    seeds = seed_versions()
    for spec in specs:
        if spec.name == "python":
            if not spec.matches(python_version()):
                missing.append(spec)
            continue
        if spec.name in BUILTIN and spec.name in seeds and spec.matches(seeds[spec.name]):
            requested[spec.name] = spec.text
            continue
        version = wheelhouse.best_match(spec)
        if version is None:
            missing.append(spec)
            continue
        pins[normalize(spec.wheel_name)] = version
        requested[normalize(spec.wheel_name)] = spec.text
    return pins, requested, missing


def dependency_closure(dists, roots):
    """Names reachable from roots through Requires-Dist (markers evaluated, extras off)."""
    from pip._vendor.packaging.requirements import InvalidRequirement, Requirement  # pylint: disable=import-outside-toplevel,import-error

    seen, todo = set(), [normalize(r) for r in roots]
    while todo:
        name = todo.pop()
        if name in seen or name not in dists:
            continue
        seen.add(name)
        for text in dists[name]["requires"]:
            try:
                req = Requirement(text)
            except InvalidRequirement:
                continue
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(normalize(req.name))
    return seen


def conda_records(prefix, requested, base_url, wheelhouse):
    """Records for python and every distribution the conda specs brought in."""
    dists = records.installed_dists(prefix)
    closure = dependency_closure(dists, list(requested) + list(SEED_PACKAGES))
    result = [records.make_record("python", python_version(), False, base_url, requested_spec=requested.get("python"))]
    for name in sorted(closure):
        dist = dists[name]
        wheel, pure = wheelhouse.wheel_file(name, dist["version"])
        if wheel is None:
            wheel, pure = Wheelhouse(seed_dir()).wheel_file(name, dist["version"])
        result.append(
            records.make_record(
                conda_name(name), dist["version"], pure, base_url, wheel=wheel, requested_spec=requested.get(name),
                files=dist["files"], depends=["python >=3.11,<3.12.0a0"], license_text=dist["license"],
            )
        )
    return result


def install_conda_part(prefix, pins, requested, base_url, new):
    """Install resolved pins; a fresh environment that fails is removed again (nothing half-made)."""
    wheelhouse = Wheelhouse(settings.wheelhouse())
    if new:
        create_venv(prefix)
    # Seeds unpinned: pip takes the newest it has, as a solver would when a package needs it.
    seeds = list(seed_versions()) if new else []
    rc, _out, err = pip_install(prefix, seeds + [f"{name}=={version}" for name, version in sorted(pins.items())])
    if rc:
        if new:
            shutil.rmtree(prefix, ignore_errors=True)
        raise UnsatisfiableError("\n".join(err.strip().splitlines()[-6:]))
    write_pip_conf(prefix)
    return conda_records(prefix, requested, base_url, wheelhouse)


def missing_package(url):
    """The error of a package file that is not there: file:// packages are read where they lie
    (PathNotFoundError), others are downloaded (HTTP 404)."""
    if url.startswith("file://"):
        return PathNotFoundError(unquote(urlparse(url).path))
    return CondaHTTPError(url)


def checksum_mismatch(url, name, version, pure, wheel, checksum):
    """ChecksumMismatchError when the explicit file's digest for a downloaded package is not
    the package's; None when it matches. Real conda checks downloads only: a file:// package
    is copied into the package cache unchecked (CacheUrlAction._execute_local)."""
    if not checksum or url.startswith("file://"):
        return None
    kind, expected = checksum
    md5, sha256, _size = records.package_digests(name, version, pure, wheel)
    actual = sha256 if kind == "sha256" else md5
    if actual == expected:
        return None
    return ChecksumMismatchError(url, settings.ROOT_PREFIX / "pkgs" / url.rsplit("/", 1)[-1], kind, expected, actual)


def explicit_pins(urls, checksums=None):
    """Pins and records of an @EXPLICIT file. A package the wheelhouse lacks is a missing file,
    a wrong digest a checksum mismatch; either fails the whole fetch as a CondaMultiError."""
    wheelhouse = Wheelhouse(settings.wheelhouse())
    seeds = Wheelhouse(seed_dir())
    checksums = checksums or {}
    pins, entries = {}, []
    for url in urls:
        fn = url.rsplit("/", 1)[-1]
        stem = fn[:-6] if fn.endswith(".conda") else fn[:-8] if fn.endswith(".tar.bz2") else fn
        try:
            name, version, build = stem.rsplit("-", 2)
        except ValueError as exc:
            raise CondaError(f"Could not parse explicit URL: {url}") from exc
        if name == "python":
            if version != python_version():
                raise fetch_failed(missing_package(url))
            wrong = checksum_mismatch(url, name, version, False, None, checksums.get(url))
            if wrong:
                raise fetch_failed(wrong)
            entries.append((url, name, version, build, None, False))
            continue
        local = build.split("_", 1)[0] if not build.startswith(("py", "h")) else ""
        wheel_version = f"{version}+{local}" if local else version
        wheel_name = CONDA_TO_WHEEL.get(name, name)
        wheel, pure = wheelhouse.wheel_file(wheel_name, wheel_version)
        if wheel is None:
            wheel, pure = seeds.wheel_file(wheel_name, wheel_version)
        if wheel is None:
            raise fetch_failed(missing_package(url))
        wrong = checksum_mismatch(url, name, wheel_version, pure, wheel, checksums.get(url))
        if wrong:
            raise fetch_failed(wrong)
        pins[normalize(wheel_name)] = wheel_version
        entries.append((url, name, wheel_version, build, wheel, pure))
    return pins, entries


def explicit_records(prefix, entries):
    """Records of an explicit install: exactly the URLs given, nothing solved."""
    dists = records.installed_dists(prefix)
    result = []
    for url, name, version, build, wheel, pure in entries:
        base_url = url.rsplit("/", 2)[0]
        dist = dists.get(normalize(CONDA_TO_WHEEL.get(name, name)), {})
        depends = () if name == "python" else ["python >=3.11,<3.12.0a0"]
        record = records.make_record(name, version, pure, base_url, wheel=wheel, files=dist.get("files", ()),
                                     depends=depends, license_text=dist.get("license", ""))
        subdir = url.rsplit("/", 2)[1]
        record.update(build=build, fn=url.rsplit("/", 1)[1], url=url, subdir=subdir, channel=f"{base_url}/{subdir}")
        record["link"]["source"] = f"{name}-{record['version']}-{build}"
        result.append(record)
    return result


def install_explicit(prefix, urls, new, checksums=None):
    """Install an @EXPLICIT file with --no-deps; returns the records."""
    pins, entries = explicit_pins(urls, checksums)
    if new:
        create_venv(prefix)
    rc, _out, err = pip_install(prefix, [f"{name}=={version}" for name, version in sorted(pins.items())], no_deps=True)
    if rc:
        if new:
            shutil.rmtree(prefix, ignore_errors=True)
        raise UnsatisfiableError("\n".join(err.strip().splitlines()[-6:]))
    write_pip_conf(prefix)
    return explicit_records(prefix, entries)


def run_pip_section(prefix, specs, spec_file, quiet):
    """The pip: section, run the way conda's pip installer does (and failing the same way)."""
    if not specs:
        return None
    workdir = Path(spec_file).resolve().parent
    if not os.access(workdir, os.W_OK):
        workdir = Path(tempfile.gettempdir())
    with tempfile.NamedTemporaryFile("w", prefix="condaenv.", suffix=".requirements.txt", dir=workdir, delete=False) as req:
        req.write("\n".join(specs))
    try:
        python = str(Path(prefix) / "bin" / "python")
        if settings.node_pip_config():
            # Real conda's pip installer: the node's pip configuration and the caller's PIP_* apply.
            args = [python, "-m", "pip", "install", "-U", "-r", req.name, "--exists-action=b"]
            proc = subprocess.run(args, capture_output=True, text=True, check=False,
                                  env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")})
            rc, out, err = proc.returncode, proc.stdout, proc.stderr
        else:
            args = [python, "-m", "pip", "install", "--no-index", "--find-links", str(settings.wheelhouse()),
                    "-U", "-r", req.name, "--exists-action=b"]
            rc, out, err = _run(args)
    finally:
        os.unlink(req.name)
    if not quiet:
        print("Ran pip subprocess with arguments:")
        print(args)
        print("Pip subprocess output:")
        print(out)
    if rc:
        print("Pip subprocess error:", file=sys.stderr)
        print(err, file=sys.stderr)
        raise CondaEnvException("Pip failed")
    installed = [line for line in out.splitlines() if line.startswith("Successfully installed ")]
    return installed[0].split()[2:] if installed else []
