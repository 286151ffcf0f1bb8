"""Shared fixtures of the packaging tests: the checkout's root, galaxy.yml, and one tarball build."""

import os
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture(scope="session", name="galaxy")
def fixture_galaxy():
    with open(ROOT / "galaxy.yml", encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@pytest.fixture(scope="session", name="tarball")
def fixture_tarball(tmp_path_factory):
    """`ansible-galaxy collection build` of a copy holding what a fresh clone holds."""
    scratch = tmp_path_factory.mktemp("collection")
    env = dict(os.environ, TMPDIR=str(scratch))
    tree = subprocess.run([str(ROOT / "tests" / "harness" / "collection-tree.sh")], env=env, check=True,
                          capture_output=True, text=True).stdout.strip()
    dist = scratch / "dist"
    subprocess.run(["ansible-galaxy", "collection", "build", "--output-path", str(dist), tree],
                   check=True, capture_output=True, text=True)
    [artifact] = dist.glob("torchfleet-cluster-*.tar.gz")
    return artifact
