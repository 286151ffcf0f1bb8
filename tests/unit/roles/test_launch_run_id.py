# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/launch: the run id names the job on every node, and a start under the name of another
operator's job is refused, so two launches in the same second must not make the same default id.
Each case renders the preflight task's own expressions with Ansible's templar."""

from __future__ import annotations

import os
import re

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.torchfleet.cluster.tests.unit.roles.role_templar import load_plugins

PREFLIGHT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "launch", "tasks", "preflight.yml")
NAMING = "Name the run, the script and the controller's log directory"
CHECK = "Check the run id"
DEFAULT_ID = re.compile(r"^torchfleet-[0-9]{8}T[0-9]{6}-[0-9a-f]{8}$")


@pytest.fixture(autouse=True, scope="module")
def plugins():
    load_plugins()


def preflight_task(name):
    tasks = DataLoader().load_from_file(PREFLIGHT, trusted_as_template=True)
    return next(task for task in tasks if task.get("name") == name)


def render(expression, variables):
    return Templar(loader=DataLoader(), variables=variables).template(expression)


def run_id(launch_run_id):
    return render(preflight_task(NAMING)["ansible.builtin.set_fact"]["_launch_run_id"], {"launch_run_id": launch_run_id})


def accepted(value):
    """What the role's own check says of a run id."""
    return render(trust_as_template("{{ %s }}" % preflight_task(CHECK)["ansible.builtin.assert"]["that"]), {"_launch_run_id": value})


CASES = [
    # id, launch_run_id, what the run id must be
    ("given", "exp-7.retry_2", "exp-7.retry_2"),
    ("default", "", DEFAULT_ID),
]


@pytest.mark.parametrize("dummy, given, wanted", CASES, ids=[case[0] for case in CASES])
def test_the_run_id_is_the_given_one_or_a_stamp_with_a_random_suffix(dummy, given, wanted):
    value = run_id(given)
    assert value == wanted if isinstance(wanted, str) else wanted.match(value), value
    assert accepted(value) is True


def test_default_run_ids_made_in_the_same_second_differ():
    expression = preflight_task(NAMING)["ansible.builtin.set_fact"]["_launch_run_id"]
    made = [render(expression, {"launch_run_id": ""}) for dummy in range(200)]
    assert len({value.rsplit("-", 1)[0] for value in made}) < len(made)  # many share their second
    assert len(set(made)) == len(made)


def test_the_run_id_is_made_once_on_the_controller_for_every_node():
    # run_once makes set_fact give every host of the play the one value made for the first
    assert preflight_task(NAMING)["run_once"] is True
