# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark callback: per-host task counts and per-role wall times, written as JSON."""

from __future__ import annotations

import json
import os
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: bench_stats
type: aggregate
short_description: Per-host task counts and per-role times for the torchfleet benchmark
description:
  - Counts, for every host, the task results that ran a module on that host, ran only on
    the controller, were delegated to the controller, or were skipped (loop items count
    one each).
  - Times every task from its start to the next task's start, like profile_tasks and
    profile_roles, and sums the times per role; each task also records its start time
    (epoch seconds) so SSH calls can be attributed to roles.
  - Writes everything to the JSON file named by TORCHFLEET_BENCH_STATS at the end of the run.
options:
  output:
    description: JSON file to write.
    env:
      - name: TORCHFLEET_BENCH_STATS
"""

# Actions that the controller answers itself: their results involve no node.
CONTROLLER_ACTIONS = frozenset(
    "ansible.builtin." + name for name in (
        "add_host", "assert", "debug", "fail", "group_by", "include_vars", "meta",
        "set_fact", "set_stats", "pause", "validate_argument_spec",
    )
)
LOCAL_HOSTS = frozenset(("localhost", "127.0.0.1", "::1"))


def _action(task):
    action = task.action or ""
    return action if "." in action else "ansible.builtin." + action


def _is_local_delegation(result):
    delegated = result.get("_ansible_delegated_vars") or {}
    if not delegated:
        return False
    return (delegated.get("ansible_connection") == "local"
            or delegated.get("ansible_host") in LOCAL_HOSTS
            or delegated.get("ansible_delegated_host") in LOCAL_HOSTS)


def _fields(result):
    """(host name, task, result dict) on ansible-core 2.19+ and on older cores."""
    host = getattr(result, "host", None) or result._host
    task = getattr(result, "task", None) or result._task
    data = getattr(result, "result", None)
    if data is None:
        data = result._result
    return host.get_name(), task, data


def _outcomes(result):
    """One entry per executed unit: the loop items of a loop task, else the task itself."""
    items = result.get("results")
    if isinstance(items, list) and items and all(isinstance(i, dict) for i in items):
        return items
    return [result]


class CallbackModule(CallbackBase):
    """Collects counts and times; see DOCUMENTATION."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "bench_stats"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self._hosts = {}
        self._roles = {}
        self._tasks = []
        self._current = None
        self._started = time.monotonic()

    def _close_task(self):
        if self._current is None:
            return
        role, name, start, epoch = self._current
        seconds = time.monotonic() - start
        self._roles[role] = self._roles.get(role, 0.0) + seconds
        self._tasks.append([role, name, round(seconds, 4), round(epoch, 4)])
        self._current = None

    def _start_task(self, task):
        self._close_task()
        role = task._role.get_name() if task._role else "(play)"
        self._current = (role, task.get_name(), time.monotonic(), time.time())

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._start_task(task)

    def v2_playbook_on_handler_task_start(self, task):
        self._start_task(task)

    def _count(self, result, forced=None):
        host, task, data = _fields(result)
        counts = self._hosts.setdefault(host, {
            "remote": 0, "controller": 0, "delegated_local": 0, "skipped": 0,
            "failed": 0, "unreachable": 0})
        for outcome in _outcomes(data):
            if forced:
                kind = forced
            elif outcome.get("skipped"):
                kind = "skipped"
            elif _action(task) in CONTROLLER_ACTIONS:
                kind = "controller"
            elif _is_local_delegation(outcome) or _is_local_delegation(data):
                kind = "delegated_local"
            else:
                kind = "remote"
            counts[kind] += 1
            if outcome.get("failed"):
                counts["failed"] += 1

    def v2_runner_on_ok(self, result):
        self._count(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._count(result)

    def v2_runner_on_skipped(self, result):
        self._count(result, forced="skipped")

    def v2_runner_on_unreachable(self, result):
        self._count(result, forced="unreachable")

    def v2_playbook_on_stats(self, stats):
        self._close_task()
        path = os.environ.get("TORCHFLEET_BENCH_STATS")
        if not path:
            return
        doc = {"wall_s": round(time.monotonic() - self._started, 4), "hosts": self._hosts,
               "roles": {k: round(v, 4) for k, v in self._roles.items()}, "tasks": self._tasks}
        with open(path, "w", encoding="utf-8") as out:
            json.dump(doc, out, indent=1, sort_keys=True)
