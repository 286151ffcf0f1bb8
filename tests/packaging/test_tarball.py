"""The collection tarball holds what a user runs, checked against tests/harness/tarball-files.txt."""

import importlib.util
import tarfile

import pytest

from conftest import ROOT

ALLOW_LIST = ROOT / "tests" / "harness" / "tarball-files.txt"


def load_checker():
    spec = importlib.util.spec_from_file_location("check_tarball", ROOT / "tests" / "harness" / "check-tarball.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


checker = load_checker()

MATCH_CASES = [
    ("roles/*/tasks/*.yml", "roles/smoke/tasks/main.yml", True),
    ("roles/*/tasks/*.yml", "roles/miniconda/tests/play.yml", False),
    ("roles/*/tasks/*.yml", "roles/smoke/tasks/sub/main.yml", False),  # `*` stays in one component
    ("roles/*/files/*", "roles/ssh_mesh/files/sshd-candidate-check", True),
    ("plugins/modules/*.py", "plugins/modules/__pycache__/conda_env.cpython-311.pyc", False),
    ("README.md", "roles/smoke/README.md", False),
]


@pytest.mark.parametrize("pattern, name, expected", MATCH_CASES)
def test_pattern_matching(pattern, name, expected):
    assert checker.matches(pattern, name) is expected


CHECK_CASES = [
    (["README.md", "tests/harness/cluster.sh"], ["README.md"], ["tests/harness/cluster.sh"], []),
    (["README.md"], ["README.md", "docs/*.md"], [], ["docs/*.md"]),
    (["README.md", "plugins/modules/a.py"], ["README.md", "plugins/modules/*.py"], [], []),
]


@pytest.mark.parametrize("files, patterns, unexpected, unused", CHECK_CASES)
def test_check_reports_unexpected_files_and_unused_patterns(files, patterns, unexpected, unused):
    assert checker.check(files, patterns) == (unexpected, unused)


def test_tarball_holds_only_allowed_files(tarball):
    files = checker.tarball_files(str(tarball))
    assert checker.check(files, checker.read_patterns(str(ALLOW_LIST))) == ([], [])


@pytest.mark.parametrize("tooling", ["tests/", "extensions/", "inventories/", "environments/", "Makefile", "ansible.cfg",
                                     "requirements-dev.txt", ".ansible-lint", "execution-environment.yml",
                                     "roles/miniconda/tests/", ".ansible/"])
def test_tarball_leaves_out_developer_tooling(tarball, tooling):
    with tarfile.open(tarball) as archive:
        names = archive.getnames()
    assert not [name for name in names if name == tooling.rstrip("/") or name.startswith(tooling)]


def test_tarball_is_named_after_galaxy_version(tarball, galaxy):
    assert tarball.name == "torchfleet-cluster-%s.tar.gz" % galaxy["version"]
