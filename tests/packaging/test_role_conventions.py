"""The roles' shared conventions, checked on every role (a new role is checked too).

- meta/main.yml names the role and the namespace, and the same ansible-core floor as meta/runtime.yml;
- `<role>_become` (default true) is the privilege escalation of the tasks that write as root, declared in
  defaults, meta/argument_specs.yml and the README;
- a variable a role registers or sets for itself starts with `_<role>_`, unless its README documents it."""

import re

import pytest
import yaml

from conftest import ROOT

ROLES = sorted(path.name for path in (ROOT / "roles").iterdir() if (path / "tasks" / "main.yml").exists())


def load(path):
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def walk_tasks(tasks):
    for task in tasks or []:
        yield task
        for key in ("block", "rescue", "always"):
            yield from walk_tasks(task.get(key))


def own_variables(role):
    """Names the role's tasks register or set_fact."""
    names = set()
    for path in (ROOT / "roles" / role / "tasks").glob("*.yml"):
        for task in walk_tasks(load(path)):
            if "register" in task:
                names.add(task["register"])
            for key in ("ansible.builtin.set_fact", "set_fact"):
                if isinstance(task.get(key), dict):
                    names.update(name for name in task[key] if name != "cacheable")
    return names


def test_roles_found():
    assert {"miniconda", "conda_env", "ssh_mesh", "firewall", "drift_audit", "smoke"} <= set(ROLES)


@pytest.mark.parametrize("role", ROLES)
def test_meta_names_role_namespace_and_floor(role):
    info = load(ROOT / "roles" / role / "meta" / "main.yml")["galaxy_info"]
    floor = re.match(r">=([0-9]+\.[0-9]+)", load(ROOT / "meta" / "runtime.yml")["requires_ansible"]).group(1)
    assert (info.get("role_name"), info.get("namespace"), info.get("min_ansible_version")) == (role, "torchfleet", floor)


@pytest.mark.parametrize("role", ROLES)
def test_become_variable(role):
    name = "%s_become" % role
    assert load(ROOT / "roles" / role / "defaults" / "main.yml").get(name) is True
    option = load(ROOT / "roles" / role / "meta" / "argument_specs.yml")["argument_specs"]["main"]["options"][name]
    assert (option["type"], option["default"]) == ("bool", True)
    assert "`%s`" % name in (ROOT / "roles" / role / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("role", ROLES)
def test_internal_variables_carry_the_role_prefix(role):
    readme = (ROOT / "roles" / role / "README.md").read_text(encoding="utf-8")
    stray = sorted(name for name in own_variables(role)
                   if not name.startswith("_%s_" % role) and "`%s`" % name not in readme)
    assert stray == [], "roles/%s: internal variables without the _%s_ prefix: %s" % (role, role, stray)
