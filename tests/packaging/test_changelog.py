"""Changelog conventions: antsibull-changelog announces new modules, plugins and roles from their
version_added, so fragments never announce them by hand; harness-only changes are `trivial`."""

import re
import subprocess

import pytest
import yaml

from conftest import ROOT

FRAGMENTS = sorted((ROOT / "changelogs" / "fragments").glob("*.yml"))
HAND_ANNOUNCEMENT = re.compile(r"\bnew (?:module|action|filter|role|plugin)s?\b", re.I)
USER_FACING = ("major_changes", "minor_changes", "breaking_changes", "deprecated_features", "removed_features",
               "security_fixes", "bugfixes", "known_issues")
HARNESS_ONLY = re.compile(r"``make (?:bench|test|demo)``|tests/harness|molecule scenario|stand-in", re.I)


def fragment_entries(path):
    with open(path, encoding="utf-8") as handle:
        data = yaml.safe_load(handle) or {}
    return [(section, entry) for section in USER_FACING for entry in data.get(section) or []]


@pytest.mark.parametrize("path", FRAGMENTS, ids=lambda p: p.name)
def test_fragment_announces_nothing_by_hand(path):
    assert [entry for _section, entry in fragment_entries(path) if HAND_ANNOUNCEMENT.search(entry)] == []


@pytest.mark.parametrize("path", FRAGMENTS, ids=lambda p: p.name)
def test_harness_changes_are_trivial(path):
    assert [entry for _section, entry in fragment_entries(path) if HARNESS_ONLY.search(entry)] == []


def test_release_announces_every_module_and_role(tmp_path, galaxy):
    copy = tmp_path / "checkout"
    subprocess.run([str(ROOT / "tests" / "harness" / "checkout-copy.sh"), str(copy)], check=True)
    result = subprocess.run(["antsibull-changelog", "release", "--version", galaxy["version"], "--date", "2026-01-01"],
                            cwd=copy, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    text = (copy / "CHANGELOG.rst").read_text(encoding="utf-8")
    announced = set(re.findall(r"^- torchfleet\.cluster\.(\w+) - ", text, re.M))
    modules = {path.stem for path in (ROOT / "plugins" / "modules").glob("*.py")}
    roles = {path.parent.parent.name for path in (ROOT / "roles").glob("*/meta/argument_specs.yml")}
    assert modules | roles <= announced
