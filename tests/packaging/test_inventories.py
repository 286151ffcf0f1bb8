"""The shipped inventories hold inventory sources only, and the example parses as documented."""

import json
import os
import subprocess

import pytest
import yaml

from conftest import ROOT


def inventory(path):
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"))
    result = subprocess.run(["ansible-inventory", "-i", str(ROOT / path), "--list"], cwd=ROOT, env=env,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), result.stderr


def test_inventory_directories_hold_no_other_files():
    """Ansible parses every file of an inventory directory (group_vars and host_vars aside) as a source."""
    for directory in (ROOT / "inventories").iterdir():
        others = [p.name for p in directory.iterdir()
                  if p.name not in ("group_vars", "host_vars", "hosts.yml") and not p.name.startswith(".")]
        assert others == [], "%s holds non-inventory files: %s" % (directory, others)


def test_example_parses_without_warnings_and_names_master_and_addresses():
    data, stderr = inventory("inventories/example")
    assert "WARNING" not in stderr
    hosts = data["torch_nodes"]["hosts"]
    hostvars = data["_meta"]["hostvars"]
    assert {hostvars[h]["torch_master"] for h in hosts} == {hosts[0]}
    assert all(hostvars[h]["torch_node_address"] != hostvars[h]["ansible_host"] for h in hosts)


def test_example_installer_checksum_is_the_published_one():
    """The example pins the installer its comment names with the digest the role also knows it by."""
    with open(ROOT / "inventories" / "example" / "group_vars" / "torch_nodes.yml", encoding="utf-8") as handle:
        example = yaml.safe_load(handle)
    with open(ROOT / "roles" / "miniconda" / "defaults" / "main.yml", encoding="utf-8") as handle:
        known = yaml.safe_load(handle)["miniconda_installer_checksums"]
    name = example["miniconda_installer_url"].rsplit("/", 1)[1]
    assert example["miniconda_installer_checksum"] == "sha256:" + known[name]


@pytest.mark.parametrize("name", ["demo", "example"])
def test_spec_is_found_from_the_inventory(name):
    """conda_env_file is relative to inventory_dir: it must name a file that exists."""
    with open(ROOT / "inventories" / name / "group_vars" / "torch_nodes.yml", encoding="utf-8") as handle:
        spec = yaml.safe_load(handle)["conda_env_file"].replace("{{ inventory_dir }}", str(ROOT / "inventories" / name))
    assert os.path.isfile(spec)
