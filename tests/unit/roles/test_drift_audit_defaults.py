# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/drift_audit's defaults follow the audit's contract variables (audit_report_dir, audit_fail_on_drift,
audit_keep_reports, audit_spec_file) and leave the spec and lock files to the shared facts."""

from __future__ import annotations

import os

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.torchfleet.cluster.tests.unit.roles.role_templar import load_plugins

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "drift_audit")


@pytest.fixture(autouse=True, scope="module")
def plugins():
    load_plugins()


def role_vars(**overrides):
    loader = DataLoader()
    variables = dict(loader.load_from_file(os.path.join(ROLE, "defaults", "main.yml"), trusted_as_template=True))
    variables.update(ansible_check_mode=False, audit_report_dir="/var/lib/torchfleet/reports")
    variables.update(overrides)
    return loader, variables


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
