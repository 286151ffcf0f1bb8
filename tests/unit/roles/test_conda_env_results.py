# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""conda_env_results keeps one result per environment, in the specs' order: the build's where this
application of the role built the environment, else the check's. Evaluated with the role's own task."""

from __future__ import annotations

import os

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

from ansible_collections.torchfleet.cluster.tests.unit.roles.role_templar import load_plugins

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "conda_env")
TASK = "Keep one result per environment for later roles (the build's where one ran, else the check's)"


@pytest.fixture(autouse=True, scope="module")
def plugins():
    load_plugins()


def results(plan, built=None):
    loader = DataLoader()
    task = next(entry for entry in loader.load_from_file(os.path.join(ROLE, "tasks", "converge.yml"), trusted_as_template=True)
                if entry.get("name") == TASK)
    scope = dict(loader.load_from_file(os.path.join(ROLE, "vars", "main.yml"), trusted_as_template=True))
    scope["_conda_env_plan"] = {"results": plan}
    if built is not None:
        scope["_conda_env_built"] = {"results": built}
    scope.update(task["vars"])
    return Templar(loader=loader, variables=scope).template(task["ansible.builtin.set_fact"]["conda_env_results"])["results"]


def answer(name, action, source):
    return {"item": {"name": name}, "action": action, "source": source}


def test_a_converged_node_keeps_the_checks_answers():
    plan = [answer("train", "none", "check"), answer("eval", "none", "check")]
    assert results(plan) == plan


def test_a_built_environment_gets_the_builds_answer_in_its_place():
    plan = [answer("train", "build", "check"), answer("eval", "none", "check")]
    built = [answer("train", "build", "build"), {"item": {"name": "eval"}, "skipped": True}]
    assert [(r["item"]["name"], r["source"]) for r in results(plan, built)] == [("train", "build"), ("eval", "check")]


def test_a_build_left_from_an_earlier_application_is_not_read():
    plan = [answer("train", "none", "check")]
    stale = [answer("train", "build", "an earlier build")]
    assert results(plan, stale) == plan
