# Copyright: torchfleet developers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""What a versioned environment spec expects to find on a node.

Turns an already loaded ``environment.yml`` mapping, a ``conda list --explicit``
lock or a conda-lock mapping into expectations keyed by the consistency engine's
dotted fact fields (``env.name``, ``env.spec_sha256``, ``env.packages.<name>``),
and evaluates fact values against them.

Version semantics (a documented subset of conda MatchSpec and PEP 440):

* ``==V``   equal versions; a local label (``+cpu``) on the node is ignored unless
  the spec names one itself.
* ``=V``    conda's fuzzy match: ``V`` or any version below it (``V.*``).
* ``V.*``, ``V*``  same prefix match.
* ``V``     a bare version is an exact match (conda's ``name V build`` form).
* ``>=``, ``<=``, ``>``, ``<``, ``!=``, ``~=``; ``,`` joins clauses, ``|`` joins
  alternatives.
* An unpinned dependency expects the package to be present in any version.
"""

from __future__ import annotations

import re

PACKAGE_PREFIX = "env.packages."

_PRE_RELEASE = frozenset(("dev", "a", "alpha", "b", "beta", "c", "rc", "pre", "preview"))
_SEGMENT = re.compile(r"\d+|[a-z]+")
_CLAUSE = re.compile(r"^(===|==|!=|~=|>=|<=|>|<|=)?\s*(\S+)$")
_NAME = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.\-]*)(.*)$", re.S)
_END = (0,)
_ZERO = (1, 0)


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
            parts.append((-1, seg))
        else:
            parts.append((2, seg))
    return epoch, parts


def version_key(version):
    """A sort key: ``2.0rc1 < 2.0 == 2.0.0 < 2.0.post1 < 2.0.1``."""
    epoch, parts = _parts(version)
    while parts and parts[-1] == _ZERO:
        parts.pop()
    return (epoch, tuple(parts) + (_END,))


def _has_prefix(version, prefix_parts):
    epoch, parts = _parts(version)
    if epoch != prefix_parts[0]:
        return False
    wanted = prefix_parts[1]
    parts = parts + [_ZERO] * (len(wanted) - len(parts))
    return parts[:len(wanted)] == wanted


def _exact(value, wanted):
    if "+" in wanted:
        return str(value).strip().lower() == wanted.lower()
    return version_key(value) == version_key(wanted)


def _clause_test(op, version):
    """Return a predicate ``f(value) -> bool`` for one ``op version`` clause."""
    if version.endswith("*"):
        if op not in (None, "=", "==", "!="):
            raise SpecError(f"wildcard version {version!r} used with {op!r}")
        prefix = _parts(version.rstrip("*").rstrip("."))
        if op == "!=":
            return lambda v: not _has_prefix(v, prefix)
        return lambda v: _has_prefix(v, prefix)
    if op == "=":
        prefix = _parts(version)
        return lambda v: _has_prefix(v, prefix)
    if op in (None, "==", "==="):
        return lambda v: _exact(v, version)
    if op == "!=":
        return lambda v: not _exact(v, version)
    if op == "~=":
        epoch, parts = _parts(version)
        if len(parts) < 2:
            raise SpecError(f"'~={version}' needs at least two version components")
        low, prefix = version_key(version), (epoch, parts[:-1])
        return lambda v: version_key(v) >= low and _has_prefix(v, prefix)
    key = version_key(version)
    compare = {
        ">=": lambda k: k >= key,
        "<=": lambda k: k <= key,
        ">": lambda k: k > key,
        "<": lambda k: k < key,
    }[op]
    return lambda v: compare(version_key(v))


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
        else:
            raise SpecError(f"unknown expectation kind {kind!r}")

    def satisfied(self, value):
        """True when a node's value meets the expectation; null never does."""
        if value is None or isinstance(value, (dict, list)):
            return False
        return bool(self._test(value))

    def __repr__(self):
        return f"Expectation({self.kind!r}, {self.text!r})"

    def __eq__(self, other):
        return isinstance(other, Expectation) and (self.kind, self.text) == (other.kind, other.text)

    def __hash__(self):
        return hash((self.kind, self.text))


def _compile_constraint(text):
    spec = text.strip()
    if spec in ("", "*"):
        return "*", lambda v: True
    alternatives = []
    for alt in spec.split("|"):
        tests = []
        for clause in alt.split(","):
            match = _CLAUSE.match(clause.strip())
            if not match:
                raise SpecError(f"cannot read version constraint {text!r}")
            tests.append(_clause_test(match.group(1), match.group(2)))
        alternatives.append(tests)
    display = spec
    single = _CLAUSE.match(spec)
    if single and single.group(1) in ("==", "===") and "," not in spec and "|" not in spec and "*" not in spec:
        display = single.group(2)
    return display, lambda v: any(all(t(v) for t in tests) for tests in alternatives)


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
        raise SpecError(f"an expectation mapping has exactly one key, 'version' or 'equals'; got {sorted(value)}")
    if isinstance(value, str) and (value[:1] in "=<>!~" or any(c in value for c in "*,|")):
        return version_expectation(value)
    return Expectation("equals", value)


def _strip_channel(dep):
    return dep.rpartition("::")[2] if "::" in dep else dep


def _bracket_version(rest):
    match = re.search(r"version\s*=\s*['\"]([^'\"]*)['\"]", rest)
    return match.group(1) if match else ""


def parse_conda_dependency(dep):
    """``name``, ``name=1.2``, ``name=1.2=build``, ``name 1.2 build``, ``name>=1,<2``,
    ``channel::name``, ``name[version='>=1']`` → (lower-case name, constraint text)."""
    text = _strip_channel(dep.split("#", 1)[0].strip())
    match = _NAME.match(text)
    if not match:
        raise SpecError(f"cannot read conda dependency {dep!r}")
    name, rest = match.group(1).lower(), match.group(2).strip()
    if rest.startswith("["):
        return name, _bracket_version(rest)
    if rest.startswith("=") and not rest.startswith("=="):
        version = rest[1:].split("=", 1)[0].strip()
        return name, version if version.endswith("*") else "=" + version
    rest = re.sub(r"\s*([,|])\s*", r"\1", rest)
    return name, rest.split()[0] if rest else ""


def parse_pip_requirement(req):
    """A pip requirement line → (canonical name, constraint text), or None for
    options (``-r``, ``--index-url``), paths and URLs without a name."""
    text = req.split(" #", 1)[0].strip()
    if not text or text.startswith(("-", ".", "/", "#")) or "://" in text.split("@", 1)[0]:
        return None
    text = text.split(";", 1)[0].strip()
    match = _NAME.match(text)
    if not match:
        raise SpecError(f"cannot read pip requirement {req!r}")
    name, rest = canonical_name(match.group(1)), match.group(2).strip()
    if rest.startswith("["):
        rest = rest.split("]", 1)[1].strip() if "]" in rest else ""
    if rest.startswith("@"):
        return name, ""
    if rest.startswith("(") and rest.endswith(")"):
        rest = rest[1:-1]
    return name, rest.replace(" ", "")


def _dependencies(spec, source):
    deps = spec.get("dependencies") or []
    if not isinstance(deps, list):
        raise SpecError(f"{source}: 'dependencies' must be a list")
    for dep in deps:
        if isinstance(dep, dict):
            pip = dep.get("pip") or []
            if set(dep) != {"pip"} or not isinstance(pip, list):
                raise SpecError(f"{source}: only a 'pip' list may nest under dependencies, got {dep!r}")
            for req in pip:
                parsed = parse_pip_requirement(str(req))
                if parsed:
                    yield parsed
        elif isinstance(dep, str):
            yield parse_conda_dependency(dep)
        else:
            raise SpecError(f"{source}: cannot read dependency {dep!r}")


def expectations_from_spec(spec, spec_sha256=None, source="environment.yml"):
    """Expectations from a loaded environment.yml mapping.

    ``env.name`` from ``name``, ``env.spec_sha256`` when the file's digest is given,
    and one ``env.packages.<name>`` entry per dependency.
    """
    if not isinstance(spec, dict):
        raise SpecError(f"{source}: an environment spec must be a mapping")
    expected = {}
    if spec.get("name"):
        expected["env.name"] = Expectation("equals", str(spec["name"]))
    if spec_sha256:
        expected["env.spec_sha256"] = Expectation("equals", str(spec_sha256).lower())
    for name, constraint in _dependencies(spec, source):
        field = PACKAGE_PREFIX + name
        try:
            expected.setdefault(field, version_expectation(constraint))
        except SpecError as exc:
            raise SpecError(f"{source}: {name}: {exc}") from None
    return expected


def _explicit_record(url):
    base = url.split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    for suffix in (".conda", ".tar.bz2"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    else:
        return None
    pieces = base.rsplit("-", 2)
    if len(pieces) != 3:
        return None
    return pieces[0].lower(), pieces[1]


def expectations_from_explicit(text, source="lock"):
    """Exact versions from a ``conda list --explicit`` file."""
    expected = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#") or line == "@EXPLICIT":
            continue
        record = _explicit_record(line)
        if record is None:
            raise SpecError(f"{source}:{number}: not a package URL: {line!r}")
        expected[PACKAGE_PREFIX + record[0]] = version_expectation("==" + record[1])
    return expected


def expectations_from_conda_lock(data, platform="linux-64", source="conda-lock.yml"):
    """Exact versions from a loaded conda-lock mapping, for one platform."""
    packages = data.get("package") if isinstance(data, dict) else None
    if not isinstance(packages, list):
        raise SpecError(f"{source}: a conda-lock file has a 'package' list")
    expected = {}
    for pkg in packages:
        if not isinstance(pkg, dict) or "name" not in pkg or "version" not in pkg:
            raise SpecError(f"{source}: package entry without name/version: {pkg!r}")
        if pkg.get("platform", platform) != platform:
            continue
        name = canonical_name(pkg["name"]) if pkg.get("manager") == "pip" else str(pkg["name"]).lower()
        expected[PACKAGE_PREFIX + name] = version_expectation("==" + str(pkg["version"]))
    return expected


def expectations_from_lock(text, loaded=None, platform="linux-64", source="lock"):
    """Either lock format: a conda-lock mapping when ``loaded`` is one, else explicit text."""
    if isinstance(loaded, dict) and "package" in loaded:
        return expectations_from_conda_lock(loaded, platform, source)
    return expectations_from_explicit(text, source)
