# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side fabric verdict: validate what the master's job reported, judge the links,
compare with the previous run, write the reports, return the verdict.

Documentation: plugins/modules/fabric_report.py.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import time

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.torchfleet.cluster.plugins.module_utils._files.atomic_file import replace_file
from ansible_collections.torchfleet.cluster.plugins.plugin_utils import fabric, fabric_reports
from ansible_collections.torchfleet.cluster.plugins.plugin_utils.plain import plain

ARGUMENT_SPEC = {
    "log_lines": {"type": "list", "elements": "str", "required": True},
    "reporter": {"type": "str", "required": True},
    "members": {"type": "list", "elements": "str", "required": True},
    "thresholds": {"type": "dict", "default": {}},
    "report_dir": {"type": "path"},
    "keep": {"type": "int", "default": 10},
    "compare_previous": {"type": "bool", "default": True},
    "degradation_fraction": {"type": "float", "default": 0.8},
    "max_rows": {"type": "int", "default": 50},
}

REPORT_FILES = (
    ("json", "fabric-latest.json", fabric_reports.to_json),
    ("markdown", "fabric-latest.md", fabric_reports.to_markdown),
    ("junit", "fabric-latest.junit.xml", fabric_reports.to_junit),
    ("prometheus", "torchfleet_fabric.prom", fabric_reports.to_prometheus),
)
_GENERATION = re.compile(r"^fabric-(\d{8}T\d{6}Z)(?:\.(\d+))?\.json$")


def read_previous(report_dir, warnings):
    """The last fabric-latest.json, or None (missing or unreadable: a warning, never a failure)."""
    path = os.path.join(report_dir, "fabric-latest.json")
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        warnings.append(f"ignoring the previous fabric report {path}: {exc}")
        return None
    return data if isinstance(data, dict) else None


def write_reports(report_dir, report, keep):
    """Every format, each written to a temporary name and renamed; a timestamped JSON copy; old copies pruned."""
    try:
        os.makedirs(report_dir, mode=0o755, exist_ok=True)
        files = {kind: replace_file(os.path.join(report_dir, name), render(report)) for kind, name, render in REPORT_FILES}
        stamp = report["generated_at"].replace("-", "").replace(":", "")
        name, counter = f"fabric-{stamp}.json", 1
        while os.path.exists(os.path.join(report_dir, name)):
            counter += 1
            name = f"fabric-{stamp}.{counter}.json"
        files["generation"] = replace_file(os.path.join(report_dir, name), fabric_reports.to_json(report))
        files["pruned"] = prune(report_dir, keep)
    except OSError as exc:
        raise AnsibleActionFail(f"fabric: cannot write the reports under {report_dir}: {exc}") from None
    return files


def prune(report_dir, keep):
    if keep <= 0:
        return []
    found = []
    for name in os.listdir(report_dir):
        match = _GENERATION.match(name)
        if match:
            found.append((match.group(1), int(match.group(2) or 1), name))
    old = [os.path.join(report_dir, name) for _s, _c, name in sorted(found)][:-keep]
    for path in old:
        os.unlink(path)
    return old


class ActionModule(ActionBase):
    """Judge the fabric and write its reports; never contacts a node."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars or {})
        _validated, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        if not 0 < args["degradation_fraction"] <= 1:
            raise AnsibleActionFail("fabric: degradation_fraction must be above 0 and at most 1")
        try:
            measured = fabric.validate_result(fabric.find_result(plain(args["log_lines"])), args["reporter"],
                                              args["members"])
            verdict = fabric.judge(measured, plain(args["thresholds"]))
        except fabric.FabricReportError as exc:
            raise AnsibleActionFail(str(exc)) from None
        warnings = []
        previous = read_previous(args["report_dir"], warnings) if args["report_dir"] and args["compare_previous"] else None
        now = time.time()
        report = fabric_reports.build(
            measured, verdict, args["reporter"],
            datetime.datetime.fromtimestamp(now, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), now,
            degraded=fabric.degraded_links(previous, verdict["links"], args["degradation_fraction"]),
            previous_generated_at=(previous or {}).get("generated_at"))
        lines = fabric_reports.lines(report, max_rows=args["max_rows"])
        result.update(report=report, lines=lines, summary=lines[0], passed=report["passed"],
                      failures=[finding["message"] for finding in report["findings"]], changed=False, files={})
        if args["report_dir"]:
            result["files"] = write_reports(args["report_dir"], report, args["keep"])
        if warnings:
            result["warnings"] = warnings
        return result
