# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The consistency assertion takes the plan step's torch probe only on nodes where no role has rebuilt the
environment since; conda_env says where it builds through the cluster role's `mark_changed`, which the
assertion reads, instead of the assertion reading conda_env's own answers."""

from __future__ import annotations

import os

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.torchfleet.cluster.tests.unit.roles.role_templar import load_plugins

ROLES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles")
PROBE = {"changed": False, "ansible_facts": {"torch": {"version": "2.13.0"}}}
PLAN = {"cluster_plan": {"answers": {"torch": PROBE}}, "cluster_facts": {"env_name": "train", "python": "/x/bin/python"}}


@pytest.fixture(autouse=True, scope="module")
def plugins():
    load_plugins()


def load(role, *parts):
    return DataLoader().load_from_file(os.path.join(ROLES, role, *parts), trusted_as_template=True)


def template(role, expression, variables):
    scope = dict(load(role, "defaults", "main.yml"))
    scope.update(load(role, "vars", "main.yml"))
    scope.update(variables)
    return Templar(loader=DataLoader(), variables=scope).template(trust_as_template(expression))


def planned(**variables):
    return template("drift_audit", "{{ _drift_audit_planned }}", dict(PLAN, **variables))


def test_the_plans_probe_holds_where_nothing_changed():
    assert planned() == PROBE


def test_a_rebuilt_environment_is_probed_again():
    assert planned(cluster_plan_changed=["environment:train"]) is None


def test_another_environment_rebuilt_leaves_the_probe_holding():
    assert planned(cluster_plan_changed=["environment:eval"]) == PROBE


def test_an_interpreter_of_the_users_own_is_always_probed():
    assert planned(drift_audit_python="/usr/bin/python3") is None


def test_a_failed_probe_is_no_answer():
    assert planned(cluster_plan={"answers": {"torch": {"failed": True, "msg": "x"}}}) is None


def test_conda_env_marks_exactly_the_environments_it_builds():
    (mark,) = [task for task in load("conda_env", "tasks", "build.yml")
               if task.get("ansible.builtin.import_role", {}).get("tasks_from") == "mark_changed"]
    work = {"_conda_env_work": [{"action": "build", "item": {"name": "train"}}, {"action": "update", "item": {"name": "eval"}}]}
    assert template("conda_env", mark["vars"]["cluster_changed"], work) == ["environment:train", "environment:eval"]


def test_marks_add_up_and_forgetting_the_plan_clears_them():
    (mark,) = load("cluster", "tasks", "mark_changed.yml")
    marked = template("cluster", mark["ansible.builtin.set_fact"]["cluster_plan_changed"],
                      {"cluster_plan_changed": ["environment:train"], "cluster_changed": ["environment:eval", "environment:train"]})
    assert sorted(marked) == ["environment:eval", "environment:train"]
    (forget,) = load("cluster", "tasks", "forget_plan.yml")
    assert forget["ansible.builtin.set_fact"]["cluster_plan_changed"] == []
