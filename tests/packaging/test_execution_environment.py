"""execution-environment.yml builds with current ansible-builder, from the checkout, with no step before it.

`ansible-builder create` writes the build context offline; the checks read its Containerfile,
bindep.txt, requirements.yml and the collection source it copied."""

import re
import subprocess
import tarfile

import pytest
import yaml

from conftest import ROOT

BASE_IMAGE = "registry.access.redhat.com/ubi9/ubi:latest"


@pytest.fixture(scope="module", name="context")
def fixture_context(tmp_path_factory):
    context = tmp_path_factory.mktemp("ee") / "context"
    result = subprocess.run(["ansible-builder", "create", "-f", str(ROOT / "execution-environment.yml"),
                             "-c", str(context), "--output-filename", "Containerfile"],
                            cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, "ansible-builder create failed:\n%s%s" % (result.stdout, result.stderr)
    return context


def pinned(requirement_file, name):
    for line in (ROOT / requirement_file).read_text(encoding="utf-8").splitlines():
        if line.startswith(name + "=="):
            return line
    raise AssertionError("%s pins no %s" % (requirement_file, name))


def test_schema_version_3():
    with open(ROOT / "execution-environment.yml", encoding="utf-8") as handle:
        assert yaml.safe_load(handle)["version"] == 3


def test_containerfile_builds_from_a_maintained_base(context):
    containerfile = (context / "Containerfile").read_text(encoding="utf-8")
    assert 'ARG EE_BASE_IMAGE="%s"' % BASE_IMAGE in containerfile
    assert "fedora" not in containerfile.lower()


def test_containerfile_installs_the_tested_ansible_core(context):
    containerfile = (context / "Containerfile").read_text(encoding="utf-8")
    refs = re.search(r'^ARG ANSIBLE_INSTALL_REFS="(.*)"$', containerfile, re.M).group(1).split()
    assert pinned("requirements-dev.txt", "ansible-core") in refs


def test_containerfile_installs_the_collection_from_the_copied_source(context):
    containerfile = (context / "Containerfile").read_text(encoding="utf-8")
    assert "RUN ansible-galaxy collection install --no-deps -p /usr/share/ansible/collections /build/torchfleet.cluster" \
        in containerfile
    assert "RUN ansible-galaxy collection list torchfleet.cluster" in containerfile


def test_system_packages_are_only_what_the_playbooks_call(context):
    bindep = (context / "_build" / "bindep.txt").read_text(encoding="utf-8")
    assert [line for line in bindep.splitlines() if line.strip()] == ["openssh-clients [platform:rpm]"]


def test_galaxy_requirements_are_galaxy_dependencies(context, galaxy):
    with open(context / "_build" / "requirements.yml", encoding="utf-8") as handle:
        collections = yaml.safe_load(handle)["collections"]
    assert {c["name"]: c["version"] for c in collections} == galaxy["dependencies"]


def test_copied_source_covers_every_part_of_the_tarball(context, tarball):
    """Each top-level entry the tarball ships is copied into the context (galaxy.yml builds it there)."""
    with tarfile.open(tarball) as archive:
        shipped = {name.split("/")[0] for name in archive.getnames()} - {"MANIFEST.json", "FILES.json"}
    copied = {path.name for path in (context / "_build" / "torchfleet.cluster").iterdir()}
    assert copied == shipped | {"galaxy.yml"}
