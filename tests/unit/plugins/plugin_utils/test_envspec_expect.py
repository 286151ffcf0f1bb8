# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Data-driven tests of the spec → expectation mapping and of the version semantics."""

from __future__ import annotations

import json

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import envspec
from ansible_collections.torchfleet.cluster.plugins.plugin_utils import envspec_expect as ee

ORDERED_VERSIONS = [
    "1.0.dev1", "1.0a1", "1.0b2", "1.0rc1", "1.0", "1.0.post1", "1.0.1", "1.1", "1.10", "2.0", "1!0.5",
]

EQUAL_VERSIONS = [("2.0", "2.0.0"), ("1", "1.0.0"), ("v2.4.6", "2.4.6"), ("2.13.0+cpu", "2.13.0"), ("550.54", "550.54.0")]

# (constraint, value, satisfied)
CONSTRAINTS = [
    ("==2.4.6", "2.4.6", True),
    ("==2.4.6", "2.4.5", False),
    ("==2.13.0", "2.13.0+cpu", True),
    ("==2.13.0+cpu", "2.13.0+cu121", False),
    ("==2.13.0+cpu", "2.13.0+cpu", True),
    ("2.4.6", "2.4.6", True),
    ("2.4.6", "2.4.60", False),
    ("=2.4", "2.4.6", True),
    ("=2.4", "2.40.1", False),
    ("=2.4", "2.5", False),
    ("=3.11", "3.11.14", True),
    ("2.4.*", "2.4.0", True),
    ("2.4*", "2.4.9", True),
    ("==2.*", "3.0", False),
    ("!=2.4.*", "2.5.0", True),
    ("!=2.4.6", "2.4.6", False),
    (">=2,<3", "2.4.6", True),
    (">=2,<3", "3.0", False),
    (">=2,<3", "1.26.4", False),
    ("<2|>=2.4", "2.4.1", True),
    ("<2|>=2.4", "2.2", False),
    (">550.54", "550.54.15", True),
    ("<=550.54", "550.54.15", False),
    ("~=2.4.1", "2.4.9", True),
    ("~=2.4.1", "2.5.0", False),
    ("~=2.4.1", "2.4.0", False),
    ("*", "anything", True),
    ("", "0", True),
    ("*", None, False),
    ("==1.0", None, False),
    (">=2.0rc1", "2.0", True),
    ("<2.0", "2.0rc1", True),
]

# (conda requirement string, constraint text)
CONDA_DEPS = [
    ("numpy", ""),
    ("numpy=2.4.6", "=2.4.6"),
    ("numpy==2.4.6", "==2.4.6"),
    ("numpy 2.4.6", "==2.4.6"),
    ("numpy 2.4.6 py311_0", "==2.4.6"),
    ("numpy>=2,<3", ">=2,<3"),
    ("numpy >=2", ">=2"),
    ("numpy=2.4.*", "2.4.*"),
    ("conda-forge::numpy=2.4.6", "=2.4.6"),
    ("pytorch=2.5.1=py3.11_cuda12.1_0", "2.5.1"),  # with a build string, =V is exact (conda's MatchSpec)
    ("numpy[version='>=2']", ">=2"),
]

# (pip requirement line, constraint text)
PIP_REQS = [
    ("torch==2.13.0", "==2.13.0"),
    ("torch", ""),
    ("torch>=2.13,<2.14", "<2.14,>=2.13"),
    ("typing_extensions==4.12.2", "==4.12.2"),
    ("requests[socks]==2.32.3", "==2.32.3"),
    ("pkg @ https://example.invalid/pkg-1.0-py3-none-any.whl", ""),
    ("numpy==2.4.6; python_version >= '3.10'", "==2.4.6"),
]


@pytest.mark.parametrize("low,high", list(zip(ORDERED_VERSIONS, ORDERED_VERSIONS[1:])))
def test_version_key_orders(low, high):
    assert ee.version_key(low) < ee.version_key(high)


@pytest.mark.parametrize("left,right", EQUAL_VERSIONS)
def test_version_key_equal(left, right):
    assert ee.version_key(left) == ee.version_key(right)


@pytest.mark.parametrize("constraint,value,satisfied", CONSTRAINTS)
def test_constraints(constraint, value, satisfied):
    assert ee.version_expectation(constraint).satisfied(value) is satisfied


@pytest.mark.parametrize("constraint", ["~=2", "~=2.*", "1.0$", ">=<2", "(1.0", "2.0+"])
def test_bad_constraints(constraint):
    with pytest.raises(ee.SpecError):
        ee.version_expectation(constraint)


@pytest.mark.parametrize("constraint,display", [("==2.4.6", "2.4.6"), ("=2.4", "=2.4"), (">=2,<3", ">=2,<3"), ("", "*")])
def test_display(constraint, display):
    assert ee.version_expectation(constraint).display == display


@pytest.mark.parametrize("dep,constraint", CONDA_DEPS)
def test_conda_dependency_constraint(dep, constraint):
    assert ee.dependency_constraint(envspec.parse_conda_dep(dep)) == constraint


@pytest.mark.parametrize("req,constraint", PIP_REQS)
def test_pip_dependency_constraint(req, constraint):
    assert ee.dependency_constraint(envspec.parse_pip_req(req)) == constraint


# (user input, kind, text)
COERCIONS = [
    (">=2", "version", ">=2"),
    ("2.4.*", "version", "2.4.*"),
    ("==2.4.6", "version", "==2.4.6"),
    ("train", "equals", "train"),
    ("ab12", "equals", "ab12"),
    (8, "equals", 8),
    (True, "equals", True),
    (None, "equals", None),
    ({"version": "2.4.6"}, "version", "2.4.6"),
    ({"equals": ">=x"}, "equals", ">=x"),
]


@pytest.mark.parametrize("value,kind,text", COERCIONS)
def test_coerce(value, kind, text):
    exp = ee.coerce_expectation(value)
    assert (exp.kind, exp.text) == (kind, text)
    assert ee.coerce_expectation(exp.to_data()) == exp


def test_coerce_rejects_mixed_mapping():
    with pytest.raises(ee.SpecError, match="exactly one key"):
        ee.coerce_expectation({"version": "1", "equals": "1"})


def test_equals_is_raw_not_version():
    # Hex digests must not be compared as versions ("ab012" and "ab12" read as the same version).
    assert not ee.coerce_expectation("ab12").satisfied("ab012")
    assert ee.version_expectation("==ab12").satisfied("ab012")


SPEC = {
    "name": "train",
    "channels": ["conda-forge"],
    "dependencies": ["python=3.11", "pip", "numpy=2.4.6", "conda-forge::typing_extensions>=4", {"pip": ["torch==2.13.0", "--index-url x"]}],
}


def test_expectations_from_loaded_mapping():
    expected = ee.expectations_from_spec(SPEC, spec_sha256="AB" * 32)
    assert {f: e.to_data() for f, e in expected.items()} == {
        "env.name": {"equals": "train"},
        "env.spec_sha256": {"equals": "ab" * 32},
        "env.packages.python": {"version": "=3.11"},
        "env.packages.pip": {"version": ""},
        "env.packages.numpy": {"version": "=2.4.6"},
        "env.packages.typing_extensions": {"version": ">=4"},
        "env.packages.torch": {"version": "==2.13.0"},
    }


def test_pip_pin_wins_over_conda():
    spec = {"name": "x", "dependencies": ["pip", "torch", {"pip": ["torch==2.13.0"]}]}
    assert ee.expectations_from_spec(spec)["env.packages.torch"].text == "==2.13.0"


@pytest.mark.parametrize("spec,match", [
    ([], "must be a mapping"),
    ({"name": "x", "dependencies": "numpy"}, "must be a list"),
    ({"name": "x", "dependencies": ["numpy=="]}, "malformed dependency"),
    ({"name": "x", "dependencies": [{"pip": ["torch==="]}]}, "malformed pip requirement"),
    ({"name": "x", "dependencies": [3.10]}, "malformed dependency"),
])
def test_bad_loaded_specs(spec, match):
    with pytest.raises(ee.SpecError, match=match):
        ee.expectations_from_spec(spec, source="env.yml")


SPEC_TEXT = """\
name: train
channels:
  - conda-forge
dependencies:
  - python=3.11
  - pip
  - numpy=2.4.6
  - pip:
      - torch==2.13.0
"""


def test_read_spec_file():
    spec, expected = ee.read_spec_file(SPEC_TEXT, "f" * 64, "environment.yml")
    assert spec["name"] == "train"
    assert expected["env.packages.numpy"].satisfied("2.4.6")
    assert expected["env.packages.torch"].satisfied("2.13.0+cpu")
    assert expected["env.spec_sha256"].satisfied("f" * 64)


def test_read_spec_file_names_file_and_line():
    with pytest.raises(ee.SpecError, match=r"environment.yml:5"):
        ee.read_spec_file(SPEC_TEXT.replace("python=3.11", "python==="), None, "environment.yml")


EXPLICIT = """\
# platform: linux-64
@EXPLICIT
https://conda.example.invalid/linux-64/numpy-2.4.6-py311h1234_0.conda#0123456789abcdef0123456789abcdef
https://conda.example.invalid/noarch/typing_extensions-4.12.2-pyha770c72_1.tar.bz2
"""


def test_explicit_lock():
    expected = ee.read_lock_file(EXPLICIT, source="lock.txt")
    assert {f: e.text for f, e in expected.items()} == {
        "env.packages.numpy": "==2.4.6", "env.packages.typing_extensions": "==4.12.2"}


CONDA_LOCK = {
    "version": 1,
    "metadata": {"platforms": ["linux-64", "osx-arm64"]},
    "package": [
        {"name": "numpy", "version": "2.4.6", "manager": "conda", "platform": "linux-64", "url": "u1"},
        {"name": "numpy", "version": "2.4.5", "manager": "conda", "platform": "osx-arm64", "url": "u2"},
        {"name": "Typing_Extensions", "version": "4.12.2", "manager": "pip", "platform": "linux-64", "url": "u3"},
    ],
}


def test_conda_lock_platform():
    expected = ee.read_lock_file(json.dumps(CONDA_LOCK), platform="linux-64")
    assert {f: e.text for f, e in expected.items()} == {
        "env.packages.numpy": "==2.4.6", "env.packages.typing-extensions": "==4.12.2"}


def test_bad_lock():
    with pytest.raises(ee.SpecError, match="lock.txt"):
        ee.read_lock_file("just text\n", source="lock.txt")


@pytest.mark.parametrize("name,canonical", [("Typing_Extensions", "typing-extensions"), ("zope.interface", "zope-interface"), ("a--b", "a-b")])
def test_canonical_name(name, canonical):
    assert ee.canonical_name(name) == canonical
