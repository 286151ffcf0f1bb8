# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a versioned environment spec expects to find on a node.

Turns an environment.yml (parsed by module_utils.envspec, or as loaded by YAML)
and an explicit or conda-lock lock into expectations keyed by the consistency
engine's dotted fact fields (``env.name``, ``env.spec_sha256``,
``env.packages.<name>``), and evaluates fact values against them. Parsing and
validation of the files belong to module_utils.envspec; this module only maps.

Version constraints mean what module_utils.matchspec says (conda's match-spec
semantics), the same module the conda_env build's pin check uses, so a pin the build
accepted never fails the audit, and the other way round. A dependency that names a conda
build string (``pytorch=2.5.1=*cuda*``) also expects ``env.builds.<name>``. An unpinned
dependency expects the package to be present in any version.

``version_key`` is a separate, PEP 440-like sort key for the engine's ``{min: ...}`` rules
(driver versions and the like), not for package pins.
"""

from __future__ import annotations

import re

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import envspec, matchspec

PACKAGE_PREFIX = "env.packages."
BUILD_PREFIX = "env.builds."

_PRE_RELEASE = {"dev": 0, "a": 1, "alpha": 1, "b": 2, "beta": 2, "c": 3, "rc": 3, "pre": 3, "preview": 3}
_SEGMENT = re.compile(r"\d+|[a-z]+")
_END = (0,)


class SpecError(ValueError):
    """A spec, lock or constraint the module cannot understand."""


def canonical_name(name):
    """PEP 503 normalisation, so ``typing_extensions`` finds ``typing-extensions``."""
    return re.sub(r"[-_.]+", "-", str(name)).lower()


def _parts(version):
    text = str(version).strip().lower()
    if text[:1] == "v":
        text = text[1:]
    text = text.split("+", 1)[0]
    epoch = 0
    if "!" in text:
        head, text = text.split("!", 1)
        epoch = int(head) if head.isdigit() else 0
    parts = []
    for seg in _SEGMENT.findall(text):
        if seg.isdigit():
            parts.append((1, int(seg)))
        elif seg in _PRE_RELEASE:
            parts.append((-1, _PRE_RELEASE[seg]))
        else:
            parts.append((2, seg))
    return epoch, parts


def version_key(version):
    """A sort key: ``2.0.dev1 < 2.0a1 < 2.0rc1 < 2.0 == 2.0.0 < 2.0.post1 < 2.0.1``.

    The leading numeric run is the release (trailing zeros dropped, so 2.0 == 2.0.0);
    what follows ranks pre-release tags below the end of the version and any other
    text (post, build words) above it.
    """
    epoch, parts = _parts(version)
    split = 0
    while split < len(parts) and parts[split][0] == 1:
        split += 1
    release = [n for _rank, n in parts[:split]]
    while release and release[-1] == 0:
        release.pop()
    return (epoch, tuple(release), tuple(parts[split:]) + (_END,))


class Expectation:
    """One expected value: raw equality (``equals``) or a version constraint."""

    __slots__ = ("kind", "text", "display", "_test")

    def __init__(self, kind, text):
        self.kind = kind
        self.text = text
        if kind == "equals":
            self.display = text
            self._test = lambda v: v == text
        elif kind == "version":
            self.display, self._test = _compile_constraint(str(text))
        elif kind == "build":
            self.display, self._test = str(text), matchspec.build_test(str(text))
        else:
            raise SpecError(f"unknown expectation kind {kind!r}")

    def satisfied(self, value):
        """True when a node's value meets the expectation; null never does."""
        if value is None or isinstance(value, (dict, list)):
            return False
        return bool(self._test(value))

    def to_data(self):
        """Plain data (``{"version": ...}`` or ``{"equals": ...}``) that coerce_expectation reads back."""
        return {self.kind: self.text}

    def __repr__(self):
        return f"Expectation({self.kind!r}, {self.text!r})"

    def __eq__(self, other):
        return isinstance(other, Expectation) and (self.kind, self.text) == (other.kind, other.text)

    def __hash__(self):
        return hash((self.kind, self.text))


def _compile_constraint(text):
    spec = re.sub(r"\s+", "", text)
    if spec in ("", "*"):
        return "*", lambda v: True
    try:
        test = matchspec.version_test(spec)
    except matchspec.InvalidSpec as exc:
        raise SpecError(f"cannot read version constraint {text!r}: {exc}") from None
    display = spec[2:] if spec.startswith("==") and not any(c in spec for c in ",|*") else spec
    return display, test


def version_expectation(text):
    """A version constraint; raises SpecError when it cannot be read."""
    return Expectation("version", str(text))


def coerce_expectation(value):
    """User input to an Expectation.

    ``{"version": ">=2"}`` and ``{"equals": "x"}`` are explicit; a string that starts
    with an operator or holds ``*``, ``,`` or ``|`` is a version constraint; any
    other value must be equal.
    """
    if isinstance(value, Expectation):
        return value
    if isinstance(value, dict):
        if set(value) == {"version"}:
            return version_expectation(value["version"])
        if set(value) == {"equals"}:
            return Expectation("equals", value["equals"])
        if set(value) == {"build"}:
            return Expectation("build", value["build"])
        raise SpecError(f"an expectation mapping has exactly one key, 'version', 'build' or 'equals'; got {sorted(value)}")
    if isinstance(value, str) and (value[:1] in "=<>!~" or any(c in value for c in "*,|")):
        return version_expectation(value)
    return Expectation("equals", value)


def dependency_constraint(dep):
    """The constraint text of one requirement parsed by module_utils.envspec
    (``parse_conda_dep`` / ``parse_pip_req``): ``""`` when it is unpinned."""
    return envspec.requirement_constraint(dep)


def _expect(expected, name, constraint, source):
    try:
        expected[PACKAGE_PREFIX + name] = version_expectation(constraint)
    except SpecError as exc:
        raise SpecError(f"{source}: {name}: {exc}") from None


def expectations_from_parsed(spec, spec_sha256=None, source="environment.yml"):
    """Expectations from a spec parsed by ``module_utils.envspec.parse_spec``.

    ``env.name``, ``env.spec_sha256`` when the file's digest is given, and one
    ``env.packages.<name>`` per named requirement; a pip pin wins over a conda
    requirement of the same package, as pip installs last.
    """
    expected = {}
    if spec.get("name"):
        expected["env.name"] = Expectation("equals", str(spec["name"]))
    if spec_sha256:
        expected["env.spec_sha256"] = Expectation("equals", str(spec_sha256).lower())
    for dep in spec.get("dependencies") or ():
        name = envspec.normalize_name(dep["name"])
        _expect(expected, name, dependency_constraint(dep), source)
        if dep.get("build") and dep["build"] != "*":
            expected[BUILD_PREFIX + name] = Expectation("build", dep["build"])
    for req in spec.get("pip") or ():
        if req.get("name") and not req.get("marker"):
            name = envspec.normalize_name(req["name"], "pip")
            _expect(expected, name, dependency_constraint(req), source)
            expected.pop(BUILD_PREFIX + name, None)
    return expected


def _parsed_from_mapping(spec, source):
    deps = spec.get("dependencies") or []
    if not isinstance(deps, list):
        raise SpecError(f"{source}: 'dependencies' must be a list")
    parsed = {"name": spec.get("name"), "dependencies": [], "pip": []}
    for dep in deps:
        if isinstance(dep, dict) and set(dep) == {"pip"} and isinstance(dep["pip"], list):
            for req in dep["pip"]:
                found = envspec.parse_pip_req(req) if isinstance(req, str) else None
                if found is None:
                    raise SpecError(f"{source}: malformed pip requirement {req!r}")
                parsed["pip"].append(found)
            continue
        found = envspec.parse_conda_dep(dep) if isinstance(dep, str) else None
        if found is None:
            raise SpecError(f"{source}: malformed dependency {dep!r}")
        parsed["dependencies"].append(found)
    return parsed


def expectations_from_spec(spec, spec_sha256=None, source="environment.yml"):
    """Expectations from an environment.yml mapping as loaded by YAML (``from_yaml``).

    Requirement strings are read by module_utils.envspec, the parser the conda_env
    role builds from; use expectations_from_parsed when the spec was parsed already.
    """
    if not isinstance(spec, dict):
        raise SpecError(f"{source}: an environment spec must be a mapping")
    return expectations_from_parsed(_parsed_from_mapping(spec, source), spec_sha256, source)


def expectations_from_lock(lock, platform="linux-64"):
    """Exact versions from a lock parsed by ``module_utils.envspec.parse_lock``."""
    expected = {}
    for pkg in envspec.lock_packages(lock, platform):
        name = envspec.normalize_name(pkg["name"], pkg.get("manager", "conda"))
        expected[PACKAGE_PREFIX + name] = version_expectation("==" + str(pkg["version"]))
    return expected


def read_spec_file(text, spec_sha256=None, source="environment.yml"):
    """Parse and validate environment.yml text (errors name the file and line)."""
    try:
        spec = envspec.parse_spec(text, source)
    except envspec.SpecError as exc:
        raise SpecError(str(exc)) from None
    return spec, expectations_from_parsed(spec, spec_sha256, source)


def read_lock_file(text, platform="linux-64", source="lock"):
    """Parse an explicit or conda-lock lock file → exact expectations."""
    try:
        lock = envspec.parse_lock(text, source)
    except envspec.SpecError as exc:
        raise SpecError(str(exc)) from None
    return expectations_from_lock(lock, platform)
