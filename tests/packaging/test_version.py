"""galaxy.yml is the one source of the collection's version; every copy must agree with it."""

import ast
import importlib.util
import os
import re

import pytest
import yaml

from conftest import ROOT

SEMVER = r"[0-9]+\.[0-9]+\.[0-9]+"


def module_constant():
    path = ROOT / "plugins" / "module_utils" / "_conda" / "collection_version.py"
    spec = importlib.util.spec_from_file_location("collection_version", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.COLLECTION_VERSION


def module_doc(name, block):
    """A module's DOCUMENTATION/EXAMPLES/RETURN block, parsed, without importing the module."""
    tree = ast.parse((ROOT / "plugins" / "modules" / ("%s.py" % name)).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] == [block]:
            return yaml.safe_load(node.value.value)
    raise AssertionError("plugins/modules/%s.py has no %s" % (name, block))


def checkout_files():
    """Relative paths of the checkout's own files (no links followed: .ansible holds one to the root)."""
    skip = {".git", ".venv", ".ansible", "output", "__pycache__"}
    for directory, subdirs, files in os.walk(ROOT):
        subdirs[:] = [name for name in subdirs if name not in skip]
        for name in files:
            yield os.path.relpath(os.path.join(directory, name), ROOT)


def test_module_utils_constant_is_galaxy_version(galaxy):
    assert module_constant() == galaxy["version"], \
        "plugins/module_utils/_conda/collection_version.py says %s, galaxy.yml %s" % (module_constant(), galaxy["version"])


@pytest.mark.parametrize("module, path", [
    ("conda_env", ["stamp", "sample", "collection_version"]),
    ("torch_facts", ["ansible_facts", "contains", "torch", "contains", "env", "contains", "stamp", "sample",
                     "collection_version"]),
])
def test_documented_stamp_samples_name_galaxy_version(galaxy, module, path):
    value = module_doc(module, "RETURN")
    for key in path:
        value = value[key]
    assert value == galaxy["version"], "%s RETURN sample says collection_version %s" % (module, value)


def test_conda_env_takes_no_version_from_its_caller():
    """The stamp's version is the module's own: no option, no role variable can disagree with it."""
    assert "collection_version" not in module_doc("conda_env", "DOCUMENTATION")["options"]
    tasks = (ROOT / "roles" / "conda_env" / "tasks" / "main.yml").read_text(encoding="utf-8")
    assert "collection_version" not in tasks


def test_no_file_names_another_artifact_version(galaxy):
    """Artifact names and image tags that carry a version carry galaxy.yml's."""
    pattern = re.compile(r"torchfleet[-_](?:cluster-|ee:)(%s)" % SEMVER)
    stale = []
    for relative in checkout_files():
        try:
            text = (ROOT / relative).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        stale += ["%s: %s" % (relative, m.group(0)) for m in pattern.finditer(text) if m.group(1) != galaxy["version"]]
    assert stale == []


def version_tuple(text):
    return tuple(int(part) for part in text.split("."))


def test_nothing_is_added_in_a_version_after_this_one(galaxy):
    """version_added of modules, plugins and roles is this release or an earlier one."""
    pattern = re.compile(r"^\s*version_added: ['\"]?(%s)" % SEMVER, re.M)
    later = []
    for relative in checkout_files():
        if relative.startswith(("plugins/", "roles/")) and relative.endswith((".py", ".yml")):
            text = (ROOT / relative).read_text(encoding="utf-8")
            later += ["%s: %s" % (relative, v) for v in pattern.findall(text)
                      if version_tuple(v) > version_tuple(galaxy["version"])]
    assert later == []
