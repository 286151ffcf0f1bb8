# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over the consistency engine: build a drift report from facts and render it.

Documentation lives beside this file, one YAML file per filter.
"""

from __future__ import annotations

import json

from ansible.errors import AnsibleFilterError

from ansible_collections.torchfleet.cluster.plugins.plugin_utils.plain import plain as _plain

# The engine is imported on first use, not with this file: to resolve any one filter of the
# collection (ip_networks, say) Ansible imports every filter file, in every forked worker, and the
# engine's imports (packaging, xml) made each such task cost about 40 ms more per host.


def _consistency():
    from ansible_collections.torchfleet.cluster.plugins.plugin_utils import consistency
    return consistency


def _envspec_expect():
    from ansible_collections.torchfleet.cluster.plugins.plugin_utils import envspec_expect
    return envspec_expect


def _reports():
    from ansible_collections.torchfleet.cluster.plugins.plugin_utils import reports
    return reports


def _report(value, name):
    if not isinstance(value, dict) or "drift" not in value or "summary" not in value:
        raise AnsibleFilterError(f"{name}: the input must be a report from torchfleet.cluster.drift_report")
    return value


def drift_report(facts, expected=None, rules=None, ignore=None, use_defaults=True, reference_host=None,
                 failed=None, previous=None, generated_at=None, spec=None):
    """``{host: torch facts or None}`` → the drift report."""
    if not isinstance(facts, dict):
        raise AnsibleFilterError("drift_report: the input must map host names to torch facts (or null when unreachable)")
    consistency, envspec_expect = _consistency(), _envspec_expect()
    try:
        return consistency.build_report(
            _plain(facts), expected=_plain(expected), rules=_plain(rules), ignore=_plain(ignore),
            use_defaults=bool(use_defaults), reference_host=reference_host, failed=_plain(failed),
            previous=_plain(previous), generated_at=generated_at, spec=_plain(spec))
    except (consistency.RuleError, envspec_expect.SpecError) as exc:
        raise AnsibleFilterError(f"drift_report: {exc}") from None


def drift_expectations(spec, spec_sha256=None, lock=None, lock_platform="linux-64"):
    """A loaded environment.yml (and optionally a lock's text or loaded mapping) → expectations."""
    envspec_expect = _envspec_expect()
    try:
        expected = envspec_expect.expectations_from_spec(_plain(spec), spec_sha256=spec_sha256)
        if isinstance(lock, dict):
            lock = json.dumps(_plain(lock))
        if lock:
            expected.update(envspec_expect.read_lock_file(str(lock), lock_platform))
    except envspec_expect.SpecError as exc:
        raise AnsibleFilterError(f"drift_expectations: {exc}") from None
    return {field: exp.to_data() for field, exp in expected.items()}


def drift_table(report, max_rows=50):
    return _reports().to_table(_report(report, "drift_table"), max_rows=int(max_rows))


def to_drift_markdown(report, max_rows=200):
    return _reports().to_markdown(_report(report, "to_drift_markdown"), max_rows=int(max_rows))


def to_drift_junit(report):
    return _reports().to_junit(_report(report, "to_drift_junit"))


def to_drift_prometheus(report):
    return _reports().to_prometheus(_report(report, "to_drift_prometheus"))


class FilterModule:
    """torchfleet.cluster drift filters."""

    def filters(self):
        return {
            "drift_report": drift_report,
            "drift_expectations": drift_expectations,
            "drift_table": drift_table,
            "to_drift_markdown": to_drift_markdown,
            "to_drift_junit": to_drift_junit,
            "to_drift_prometheus": to_drift_prometheus,
        }
