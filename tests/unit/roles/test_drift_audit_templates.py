# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What roles/drift_audit writes on the control host: its templates rendered by Ansible's own templar
with the role defaults, then checked (unit keys, the wrapper's lock/timeout command line, sh syntax)."""

from __future__ import annotations

import os
import shlex
import subprocess

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.torchfleet.cluster.tests.unit.roles.role_templar import load_plugins

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "drift_audit")


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
        drift_audit_project_dir="/srv/fleet",
        drift_audit_user="trainer",
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
    ({"drift_audit_on_calendar": "*-*-* 02:30:00", "drift_audit_randomized_delay": 0}, "*-*-* 02:30:00", "0"),
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
    text = render("torchfleet-drift-audit.sh.j2", drift_audit_project_dir="/srv/my fleet",
                  audit_report_dir="/var/lib/drift reports")
    argv = wrapper_command(text)
    assert argv[1] == "/srv/my fleet"
    assert "/var/lib/drift reports/.audit.lock" in argv


def test_wrapper_is_valid_sh(tmp_path):
    script = tmp_path / "wrapper.sh"
    script.write_text(render("torchfleet-drift-audit.sh.j2"))
    subprocess.run(["sh", "-n", str(script)], check=True)


def test_defaults_follow_the_contract_variables():
    loader, variables = role_vars(audit_fail_on_drift=False, audit_keep_reports=3, audit_spec_file="/x/environment.yml",
                                  audit_report_dir=None)
    variables.pop("audit_report_dir")
    templar = Templar(loader=loader, variables=variables)
    assert templar.template(trust_as_template("{{ drift_audit_fail_on_drift }}")) is False
    assert templar.template(trust_as_template("{{ drift_audit_keep }}")) == 3
    assert templar.template(trust_as_template("{{ drift_audit_spec_file }}")) == "/x/environment.yml"
    assert templar.template(trust_as_template("{{ drift_audit_report_dir }}")).endswith("/reports")
    assert templar.template(trust_as_template("{{ drift_audit_assert_fail }}")) is True


def test_the_spec_file_is_left_to_the_shared_facts():
    loader, variables = role_vars(conda_env_file="/x/environment.yml", conda_env_list=[{"file": "/a.yml"}])
    templar = Templar(loader=loader, variables=variables)
    assert templar.template(trust_as_template("{{ drift_audit_spec_file }}")) == ""
    assert templar.template(trust_as_template("{{ drift_audit_lock_file }}")) == ""


@pytest.mark.parametrize("overrides,fields", [
    ({}, ["17", "*", "*", "*", "*", "trainer", "/usr/local/bin/torchfleet-drift-audit",
          ">>/var/lib/torchfleet/reports/audit.log", "2>&1"]),
    ({"drift_audit_cron_minute": "*/30", "drift_audit_cron_hour": "1-5", "drift_audit_cron_weekday": "1",
      "drift_audit_log_file": "/var/log/drift audit.log"},
     ["*/30", "1-5", "*", "*", "1", "trainer", "/usr/local/bin/torchfleet-drift-audit", ">>/var/log/drift audit.log", "2>&1"]),
])
def test_cron_file(overrides, fields):
    lines = [line for line in render("torchfleet-drift-audit.cron.j2", **overrides).splitlines()
             if line and not line.startswith("#")]
    assert lines[:2] == ["SHELL=/bin/sh", "PATH=/usr/local/bin:/usr/bin:/bin"]
    assert shlex.split(lines[2]) == fields
    assert len(lines) == 3
