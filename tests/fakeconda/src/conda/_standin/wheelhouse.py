"""The offline wheelhouse as a conda channel: which conda specs it can satisfy, and how.

A conda package name maps to the wheel of the same name (``pytorch`` to ``torch``); a
conda version spec (``=2.4.6``, ``==2.4.6``, ``>=2,<3``, ``2.4.*``) selects the newest
wheel version that matches. Version logic comes from the packaging library that pip
vendors (imported on first use: commands that never match versions stay fast), so the
base environment needs nothing beyond pip.
"""

import re
from pathlib import Path

from conda._standin.errors import CondaValueError

CONDA_TO_WHEEL = {"pytorch": "torch"}
WHEEL_TO_CONDA = {v: k for k, v in CONDA_TO_WHEEL.items()}
# Satisfied by the environment's own interpreter and its seed packages, never by a wheel.
BUILTIN = ("python", "pip", "setuptools")

_PY_TAGS = ("cp311", "py3", "py311", "py2.py3", "py3.11")
_ABI_TAGS = ("cp311", "abi3", "none")
_SPEC_RE = re.compile(r"^\s*(?:(?P<channel>[^:\s]+)::)?(?P<name>[A-Za-z0-9_.\-]+)\s*(?P<rest>.*?)\s*$")


def normalize(name):
    """PEP 503 normalised name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _platform_ok(tag):
    return tag == "any" or any(part.endswith("x86_64") and part.startswith(("manylinux", "linux")) for part in tag.split("."))


def parse_wheel_filename(filename):
    """(name, version, pure) for a wheel this node can install, else None."""
    if not filename.endswith(".whl"):
        return None
    parts = filename[:-4].split("-")
    if len(parts) not in (5, 6):
        return None
    name, version, pytag, abitag, plat = parts[0], parts[1], parts[-3], parts[-2], parts[-1]
    if not any(t in _PY_TAGS for t in pytag.split(".")) or not any(t in _ABI_TAGS for t in abitag.split(".")) or not _platform_ok(plat):
        return None
    return normalize(name), version, plat == "any" and abitag == "none"


class Wheelhouse:
    """Index of the installable wheels in one directory."""

    def __init__(self, path):
        self.path = Path(path)
        self.wheels = {}
        if self.path.is_dir():
            for entry in sorted(self.path.iterdir()):
                parsed = parse_wheel_filename(entry.name)
                if parsed:
                    name, version, pure = parsed
                    self.wheels.setdefault(name, {})[version] = (entry, pure)

    def versions(self, wheel_name):
        """Installable versions of a wheel, newest first."""
        from pip._vendor.packaging.version import Version  # pylint: disable=import-outside-toplevel,import-error

        found = self.wheels.get(normalize(wheel_name), {})
        return sorted(found, key=Version, reverse=True)

    def wheel_file(self, wheel_name, version):
        """(path, pure) of one wheel, or (None, True) when it is not there."""
        return self.wheels.get(normalize(wheel_name), {}).get(version, (None, True))

    def best_match(self, spec):
        """Newest wheel version satisfying a CondaSpec, or None."""
        for version in self.versions(spec.wheel_name):
            if spec.matches(version):
                return version
        return None


def _conda_to_pep440(rest):
    """Translate the version part of a conda MatchSpec into a PEP 440 specifier set."""
    from pip._vendor.packaging.specifiers import SpecifierSet  # pylint: disable=import-outside-toplevel,import-error

    rest = rest.strip()
    if not rest:
        return SpecifierSet("")
    if rest.startswith("[") or "|" in rest:
        raise ValueError(rest)
    if rest.startswith("=") and not rest.startswith("=="):
        version = rest[1:].split("=", 1)[0]  # name=version=build: the build is not matched
        return SpecifierSet(f"=={version}" if version.endswith("*") else f"=={version}.*")
    if rest[0].isdigit():
        version = rest.split()[0]  # "name 1.2.3 build": an exact version; the build is not matched
        return SpecifierSet(f"=={version}")
    return SpecifierSet(rest.replace(" ", ""))


class CondaSpec:
    """One conda dependency string from environment.yml."""

    def __init__(self, text):
        self.text = str(text).strip()
        match = _SPEC_RE.match(self.text)
        if not match:
            raise CondaValueError(f"Invalid spec: {self.text}")
        self.channel = match.group("channel")
        self.name = match.group("name").lower()
        try:
            self.specifier = _conda_to_pep440(match.group("rest"))
        except ValueError as exc:  # packaging's InvalidSpecifier is a ValueError
            raise CondaValueError(f"Invalid spec: {self.text}") from exc
        self.wheel_name = CONDA_TO_WHEEL.get(self.name, self.name)

    def matches(self, version):
        """True when a version string satisfies this spec (local labels such as +cpu ignored)."""
        from pip._vendor.packaging.version import InvalidVersion, Version  # pylint: disable=import-outside-toplevel,import-error

        try:
            return self.specifier.contains(Version(version), prereleases=True)
        except InvalidVersion:
            return False

    def __str__(self):
        return self.text


def conda_name(wheel_name):
    """Conda package name recorded for an installed wheel."""
    name = normalize(wheel_name)
    return WHEEL_TO_CONDA.get(name, name)


def split_local(version):
    """Conda versions cannot carry a PEP 440 local label: 2.13.0+cpu -> (2.13.0, cpu)."""
    public, _plus, local = version.partition("+")
    return public, local
