# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What roles/audit_schedule writes on the control host: its templates rendered by Ansible's own templar
with the role defaults, then checked (unit keys, the wrapper's lock/timeout command line, sh syntax)."""

from __future__ import annotations

import os
import shlex
import subprocess

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.torchfleet.cluster.tests.unit.roles.role_templar import load_plugins

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "audit_schedule")


@pytest.fixture(autouse=True, scope="module")
def plugins():
    load_plugins()


def trusted(value):
    """Role files are trusted templates when Ansible loads a role; mark them the same way here."""
    if isinstance(value, str):
        return trust_as_template(value)
    if isinstance(value, dict):
        return {k: trusted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [trusted(v) for v in value]
    return value


def role_vars(**overrides):
    loader = DataLoader()
    variables = trusted(dict(loader.load_from_file(os.path.join(ROLE, "defaults", "main.yml"))))
    variables.update(
        ansible_managed="Ansible managed",
        ansible_inventory_sources=["/srv/fleet/inventories/prod/hosts.yml"],
        ansible_playbook_python="/srv/fleet/.venv/bin/python3",
        ansible_check_mode=False,
        audit_report_dir="/var/lib/torchfleet/reports",
        audit_schedule_project_dir="/srv/fleet",
        audit_schedule_user="trainer",
    )
    variables.update(overrides)
    return loader, variables


def render(name, **overrides):
    loader, variables = role_vars(**overrides)
    with open(os.path.join(ROLE, "templates", name), encoding="utf-8") as handle:
        text = handle.read()
    return Templar(loader=loader, variables=variables).template(trust_as_template(text))


def unit_file(text):
    """systemd unit text → {section: {key: [values]}}."""
    sections, current = {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
            continue
        key, value = line.split("=", 1)
        current.setdefault(key, []).append(value)
    return sections


def test_service_unit():
    unit = unit_file(render("torchfleet-drift-audit.service.j2"))
    service = unit["Service"]
    assert service["Type"] == ["oneshot"]
    assert service["User"] == ["trainer"]
    assert service["WorkingDirectory"] == ["/srv/fleet"]
    assert service["ExecStart"] == ["/usr/local/bin/torchfleet-drift-audit"]
    assert service["SuccessExitStatus"] == ["75"]
    assert service["TimeoutStartSec"] == ["1920"]
    assert unit["Unit"]["After"] == ["network-online.target"]


@pytest.mark.parametrize("overrides,calendar,delay", [
    ({}, "hourly", "300"),
    ({"audit_schedule_on_calendar": "*-*-* 02:30:00", "audit_schedule_randomized_delay": 0}, "*-*-* 02:30:00", "0"),
])
def test_timer_unit(overrides, calendar, delay):
    unit = unit_file(render("torchfleet-drift-audit.timer.j2", **overrides))
    assert unit["Timer"] == {"OnCalendar": [calendar], "RandomizedDelaySec": [delay], "Persistent": ["true"],
                             "Unit": ["torchfleet-drift-audit.service"]}
    assert unit["Install"]["WantedBy"] == ["timers.target"]


def wrapper_command(text):
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    joined = " ".join(line.rstrip("\\").strip() for line in lines[lines.index("set -eu") + 1:])
    return shlex.split(joined)


def test_wrapper_locks_times_out_and_runs_the_audit():
    text = render("torchfleet-drift-audit.sh.j2")
    assert text.startswith("#!/bin/sh\n")
    argv = wrapper_command(text)
    assert argv[:3] == ["cd", "/srv/fleet", "export"]
    start = argv.index("exec")
    assert argv[start + 1:start + 5] == ["flock", "--nonblock", "--conflict-exit-code", "75"]
    assert argv[start + 5] == "/var/lib/torchfleet/reports/.audit.lock"
    assert argv[start + 6:start + 9] == ["timeout", "--kill-after=60", "1800"]
    assert argv[start + 9:] == ["/srv/fleet/.venv/bin/ansible-playbook", "-i", "/srv/fleet/inventories/prod/hosts.yml",
                                "-e", "@/etc/torchfleet/drift-audit-vars.json", "torchfleet.cluster.audit", "$@"]


def test_wrapper_quotes_paths_with_spaces(tmp_path):
    text = render("torchfleet-drift-audit.sh.j2", audit_schedule_project_dir="/srv/my fleet",
                  audit_report_dir="/var/lib/drift reports")
    argv = wrapper_command(text)
    assert argv[1] == "/srv/my fleet"
    assert "/var/lib/drift reports/.audit.lock" in argv


def test_wrapper_is_valid_sh(tmp_path):
    script = tmp_path / "wrapper.sh"
    script.write_text(render("torchfleet-drift-audit.sh.j2"))
    subprocess.run(["sh", "-n", str(script)], check=True)


@pytest.mark.parametrize("overrides,fields", [
    ({}, ["17", "*", "*", "*", "*", "trainer", "/usr/local/bin/torchfleet-drift-audit",
          ">>/var/lib/torchfleet/reports/audit.log", "2>&1"]),
    ({"audit_schedule_cron_minute": "*/30", "audit_schedule_cron_hour": "1-5", "audit_schedule_cron_weekday": "1",
      "audit_schedule_log_file": "/var/log/drift audit.log"},
     ["*/30", "1-5", "*", "*", "1", "trainer", "/usr/local/bin/torchfleet-drift-audit", ">>/var/log/drift audit.log", "2>&1"]),
])
def test_cron_file(overrides, fields):
    lines = [line for line in render("torchfleet-drift-audit.cron.j2", **overrides).splitlines()
             if line and not line.startswith("#")]
    assert lines[:2] == ["SHELL=/bin/sh", "PATH=/usr/local/bin:/usr/bin:/bin"]
    assert shlex.split(lines[2]) == fields
    assert len(lines) == 3


def shim_vars():
    """What the deprecated drift_audit main entry point hands to audit_schedule, from drift_audit's defaults."""
    loader = DataLoader()
    drift_audit = os.path.join(ROLE, "..", "drift_audit")
    variables = trusted(dict(loader.load_from_file(os.path.join(drift_audit, "defaults", "main.yml"))))
    variables.update(role_vars()[1])
    variables.update(drift_audit_project_dir="/srv/fleet", drift_audit_user="trainer")
    (dummy, include) = loader.load_from_file(os.path.join(drift_audit, "tasks", "main.yml"))
    return loader, variables, trusted(include["vars"])


def test_the_deprecated_entry_point_hands_over_every_setting():
    loader, dummy, handed = shim_vars()
    defaults = loader.load_from_file(os.path.join(ROLE, "defaults", "main.yml"))
    assert sorted(handed) == sorted(defaults)
    assert all(value == "{{ %s }}" % name.replace("audit_schedule_", "drift_audit_", 1) for name, value in handed.items())


@pytest.mark.parametrize("name", ["torchfleet-drift-audit.service.j2", "torchfleet-drift-audit.timer.j2",
                                  "torchfleet-drift-audit.sh.j2", "torchfleet-drift-audit.cron.j2"])
def test_the_deprecated_entry_point_writes_what_it_wrote_before(name):
    loader, variables, handed = shim_vars()
    templar = Templar(loader=loader, variables=variables)
    through_shim = dict(variables, **{key: templar.template(value) for key, value in handed.items()})
    with open(os.path.join(ROLE, "templates", name), encoding="utf-8") as handle:
        text = trust_as_template(handle.read())
    assert Templar(loader=loader, variables=through_shim).template(text) == render(name)
