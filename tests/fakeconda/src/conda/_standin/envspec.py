"""Environment definition files: environment.yml and @EXPLICIT lock files."""

import re
import sys
from pathlib import Path

from conda._standin.errors import EnvironmentFileEmpty, EnvironmentFileInvalid, EnvironmentFileNotFound
from conda._standin.wheelhouse import CondaSpec

EXPLICIT_MARKER = "@EXPLICIT"
KNOWN_SECTIONS = ("name", "channels", "dependencies", "prefix", "variables")


class EnvironmentYaml:
    """The parts of environment.yml that conda acts on."""

    def __init__(self, name, channels, conda_specs, pip_specs, variables):
        self.name = name
        self.channels = channels
        self.conda_specs = conda_specs
        self.pip_specs = pip_specs
        self.variables = variables
        self.explicit = []


class ExplicitFile:
    """An @EXPLICIT file: package URLs to install as they are, without a solve."""

    def __init__(self, urls, checksums=None):
        self.name = None
        self.channels = []
        self.conda_specs = []
        self.pip_specs = []
        self.variables = {}
        self.explicit = urls
        self.checksums = dict(checksums or {})


def _read(path):
    path = Path(path)
    if not path.is_file():
        raise EnvironmentFileNotFound(path)
    text = path.read_text()
    if not text.strip():
        raise EnvironmentFileEmpty(path)
    return text


def checksum_of(fragment):
    """("md5" | "sha256", hex digest) of an explicit line's "#..." fragment, as conda.misc's
    url_pat reads it (32 hex digits: md5; 64, optionally after "sha256:": sha256); None otherwise."""
    digest = fragment[len("sha256:"):] if fragment.startswith("sha256:") else fragment
    if re.fullmatch(r"[0-9a-f]{32}", fragment):
        return "md5", fragment
    if re.fullmatch(r"[0-9a-f]{64}", digest):
        return "sha256", digest
    return None


def parse_explicit(text):
    """Package URLs of an explicit file; the checksum after a URL's "#" is kept apart, by URL."""
    urls, checksums = [], {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and line != EXPLICIT_MARKER:
            url, _sep, fragment = line.partition("#")
            urls.append(url)
            if checksum_of(fragment):
                checksums[url] = checksum_of(fragment)
    return ExplicitFile(urls, checksums)


def _split_dependencies(deps):
    conda_specs, pip_specs = [], []
    for dep in deps or []:
        if isinstance(dep, dict):
            for key, value in dep.items():
                if key != "pip":
                    raise EnvironmentFileInvalid(f"unknown dependency section '{key}'")
                pip_specs += [str(v) for v in value or []]
        elif isinstance(dep, str):
            conda_specs.append(CondaSpec(dep))
        else:
            raise EnvironmentFileInvalid(f"'{dep}' is not a valid dependency")
    return conda_specs, pip_specs


def parse_yaml(text):
    """Parse environment.yml text; unknown sections are ignored with conda's warning."""
    import yaml  # pylint: disable=import-outside-toplevel  # only commands that read YAML need it

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise EnvironmentFileInvalid(str(exc)) from exc
    if not isinstance(data, dict):
        raise EnvironmentFileInvalid("the file must contain a mapping")
    unknown = [key for key in data if key not in KNOWN_SECTIONS]
    if unknown:
        sys.stderr.write(
            "EnvironmentSectionNotValid: The following sections on 'environment.yml' are invalid and will be ignored:\n"
            + "".join(f" - {key}\n" for key in unknown)
        )
    conda_specs, pip_specs = _split_dependencies(data.get("dependencies"))
    name = data.get("name")
    return EnvironmentYaml(
        name=str(name) if name is not None else None,
        channels=[str(c) for c in data.get("channels") or []],
        conda_specs=conda_specs,
        pip_specs=pip_specs,
        variables=data.get("variables") or {},
    )


def load(path):
    """Parse an environment file of either kind."""
    text = _read(path)
    if EXPLICIT_MARKER in text.split():
        return parse_explicit(text)
    return parse_yaml(text)


def load_explicit_or_specs(path):
    """`conda create --file F`: an explicit file, or one conda spec per line."""
    text = _read(path)
    if EXPLICIT_MARKER in text.split():
        return parse_explicit(text)
    specs = [CondaSpec(line.split("#", 1)[0]) for line in text.splitlines() if line.split("#", 1)[0].strip()]
    return EnvironmentYaml(None, [], specs, [], {})
