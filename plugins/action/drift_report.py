# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side drift report: collect the probe results of the play's hosts, compare
them (majority and spec), optionally write every report file, return the verdict.

Documentation: plugins/modules/drift_report.py.
"""

from __future__ import annotations

import hashlib
import json
import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.torchfleet.cluster.plugins.plugin_utils.plain import plain

from ansible_collections.torchfleet.cluster.plugins.plugin_utils import consistency, envspec_expect, reports
from ansible_collections.torchfleet.cluster.plugins.plugin_utils.report_dir import ReportDirectory

ARGUMENT_SPEC = {
    "hosts": {"type": "list", "elements": "str"},
    "probe_var": {"type": "str", "default": "drift_audit_probe"},
    "facts": {"type": "dict"},
    "spec_file": {"type": "path"},
    "lock_file": {"type": "path"},
    "lock_platform": {"type": "str", "default": "linux-64"},
    "expected": {"type": "dict", "default": {}},
    "rules": {"type": "dict", "default": {}},
    "ignore": {"type": "list", "elements": "str", "default": []},
    "use_defaults": {"type": "bool", "default": True},
    "reference_host": {"type": "str"},
    "report_dir": {"type": "path"},
    "keep": {"type": "int", "default": 10},
    "textfile_dir": {"type": "path"},
    "compare_previous": {"type": "bool", "default": True},
    "write_in_check_mode": {"type": "bool", "default": True},
    "fail_on_drift": {"type": "bool", "default": False},
    "max_rows": {"type": "int", "default": 50},
    "compare_builds": {"type": "bool", "default": True},
    "provenance_is_drift": {"type": "bool", "default": False},
}


def probe_outcome(result, fallback_facts):
    """One host's registered torch_facts result → ("facts", dict) | ("unreachable", msg) | ("failed", msg)."""
    if isinstance(result, dict) and result:
        if result.get("unreachable"):
            return "unreachable", str(result.get("msg") or "unreachable")
        if result.get("failed"):
            return "failed", _failure_text(result)
        if result.get("skipped"):
            return "failed", "the probe was skipped: " + str(result.get("skip_reason") or "condition false")
        facts = (result.get("ansible_facts") or {}).get("torch")
        if isinstance(facts, dict):
            return "facts", facts
        warnings = "; ".join(str(w) for w in result.get("warnings") or ())
        return "failed", "torch facts are null" + (f": {warnings}" if warnings else "")
    if isinstance(fallback_facts, dict):
        return "facts", fallback_facts
    return "unreachable", "no probe result and no torch facts for this host"


def _failure_text(result):
    """Why a probe failed: its message, with the exit status and the last line of stderr when known."""
    parts = [str(result.get("msg") or "the probe failed")]
    if result.get("rc") not in (None, 0):
        parts.append(f"rc={result['rc']}")
    tail = str(result.get("stderr") or result.get("module_stderr") or "").strip().splitlines()
    if tail and tail[-1] not in parts[0]:
        parts.append(tail[-1])
    return "; ".join(parts)


def _read(path, what):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise AnsibleActionFail(f"cannot read the {what} {path}: {exc.strerror}") from None


def spec_expectations(spec_file, lock_file, lock_platform):
    """Expectations and a description of the spec, read and validated on the controller."""
    expected, spec = {}, {}
    try:
        if spec_file:
            data = _read(spec_file, "environment spec")
            digest = hashlib.sha256(data).hexdigest()
            parsed, found = envspec_expect.read_spec_file(data.decode("utf-8", "replace"), digest, spec_file)
            expected.update(found)
            spec.update(file=spec_file, sha256=digest, name=parsed.get("name"))
        if lock_file:
            data = _read(lock_file, "lock")
            expected.update(envspec_expect.read_lock_file(data.decode("utf-8", "replace"), lock_platform, lock_file))
            spec.update(lock_file=lock_file, lock_sha256=hashlib.sha256(data).hexdigest())
    except envspec_expect.SpecError as exc:
        raise AnsibleActionFail(str(exc)) from None
    spec["fields"] = len(expected)
    return expected, (spec if spec_file or lock_file else None)


REPORT_FILES = (
    ("json", "latest.json", reports.to_json),
    ("markdown", "latest.md", reports.to_markdown),
    ("junit", "latest.junit.xml", reports.to_junit),
    ("prometheus", "torchfleet_drift.prom", reports.to_prometheus),
)
_VOLATILE = ("generated_at", "timestamp", "changed_since")


def _stable(report):
    return {k: v for k, v in report.items() if k not in _VOLATILE}


class ReportWriter(ReportDirectory):
    """The audit's report directory: latest.* files, drift-*.json generations, the textfile copy."""

    def __init__(self, report_dir, keep=10, textfile_dir=None):
        textfile = (textfile_dir, "torchfleet_drift.prom", reports.to_prometheus) if textfile_dir else None
        super().__init__(report_dir, REPORT_FILES, "drift", keep=keep, textfile=textfile)

    @staticmethod
    def verdict_changed(previous, report):
        """True when anything but the timestamps differs from the previous report."""
        if previous is None:
            return True
        return _stable(previous) != json.loads(json.dumps(_stable(report)))


class ActionModule(ActionBase):
    """Build, write and judge the drift report; never contacts a node."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        _validated, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        facts, failed = self._host_facts(args, task_vars)
        expected, spec = spec_expectations(self._controller_path(args["spec_file"]),
                                           self._controller_path(args["lock_file"]), args["lock_platform"])
        expected.update(plain(args["expected"]))
        writer = None
        if args["report_dir"] and (args["write_in_check_mode"] or not self._task.check_mode):
            writer = ReportWriter(args["report_dir"], keep=args["keep"], textfile_dir=args["textfile_dir"])
        previous = writer.previous() if writer else None
        try:
            report = consistency.build_report(
                facts, expected=expected, rules=plain(args["rules"]), ignore=plain(args["ignore"]),
                use_defaults=args["use_defaults"], reference_host=self._reference(args, task_vars, facts),
                failed=failed, previous=previous if args["compare_previous"] else None, spec=spec,
                compare_builds=args["compare_builds"], provenance_is_drift=args["provenance_is_drift"])
        except (consistency.RuleError, envspec_expect.SpecError) as exc:
            raise AnsibleActionFail(str(exc)) from None
        addresses = self._host_addresses(report["hosts"], task_vars)
        if addresses:
            report["addresses"] = addresses
        lines = reports.to_table(report, max_rows=args["max_rows"])
        result.update(report=report, lines=lines, verdict=lines[0], msg=lines[0],
                      consistent=report["consistent"], passed=report["passed"], changed=False, files={})
        if writer:
            result["files"] = writer.write(report)
            result["changed"] = writer.verdict_changed(previous, report)
            if writer.warnings:
                result["warnings"] = writer.warnings
        if args["fail_on_drift"] and not report["passed"]:
            result.update(failed=True, msg="\n".join(lines))
        return result

    def _controller_path(self, path):
        if not path or os.path.isabs(path):
            return path
        if os.path.exists(path):
            return os.path.abspath(path)
        try:
            return self._find_needle("files", path)
        except Exception:  # pylint: disable=broad-except
            raise AnsibleActionFail(f"cannot find {path} (looked in the current directory and the play's files)") from None

    def _host_facts(self, args, task_vars):
        if args["facts"] is not None:
            return {str(h): (plain(f) if isinstance(f, dict) else None) for h, f in args["facts"].items()}, {}
        hosts = args["hosts"] if args["hosts"] is not None else task_vars.get("ansible_play_hosts_all") or []
        hostvars = task_vars.get("hostvars") or {}
        facts, failed = {}, {}
        for host in hosts:
            host_vars = hostvars.get(host) if hasattr(hostvars, "get") else None
            if host_vars is None:
                raise AnsibleActionFail(f"host {host!r} is not in the inventory")
            registered = host_vars.get(args["probe_var"])
            fallback = (host_vars.get("ansible_facts") or {}).get("torch")
            kind, value = probe_outcome(plain(registered), plain(fallback))
            facts[str(host)] = value if kind == "facts" else None
            if kind == "failed":
                failed[str(host)] = value
        return facts, failed

    @staticmethod
    def _host_addresses(hosts, task_vars):
        """Each host's address for the text reports: torch_node_address, else ansible_host."""
        hostvars = task_vars.get("hostvars") or {}
        addresses = {}
        for host in hosts:
            host_vars = hostvars.get(host) if hasattr(hostvars, "get") else None
            address = host_vars and (host_vars.get("torch_node_address") or host_vars.get("ansible_host"))
            if address and str(address) != host:
                addresses[host] = str(address)
        return addresses

    @staticmethod
    def _reference(args, task_vars, facts):
        if args["reference_host"]:
            return args["reference_host"]
        master = task_vars.get("torch_master")
        return str(master) if master else next(iter(facts), None)
