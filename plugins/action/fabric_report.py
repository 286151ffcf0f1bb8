# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side fabric verdict: validate what the master's job reported, judge the links,
compare with the previous run, write the reports, return the verdict.

Documentation: plugins/modules/fabric_report.py.
"""

from __future__ import annotations

import datetime
import time

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.torchfleet.cluster.plugins.plugin_utils import fabric, fabric_reports
from ansible_collections.torchfleet.cluster.plugins.plugin_utils.report_dir import ReportDirectory
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
        directory = ReportDirectory(args["report_dir"], REPORT_FILES, "fabric", keep=args["keep"]) if args["report_dir"] else None
        previous = directory.previous() if directory and args["compare_previous"] else None
        now = time.time()
        report = fabric_reports.build(
            measured, verdict, args["reporter"],
            datetime.datetime.fromtimestamp(now, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), now,
            degraded=fabric.degraded_links(previous, verdict["links"], args["degradation_fraction"]),
            previous_generated_at=(previous or {}).get("generated_at"))
        lines = fabric_reports.lines(report, max_rows=args["max_rows"])
        result.update(report=report, lines=lines, summary=lines[0], passed=report["passed"],
                      failures=[finding["message"] for finding in report["findings"]], changed=False, files={})
        if directory:
            result["files"] = directory.write(report)
            if directory.warnings:
                result["warnings"] = directory.warnings
        return result
