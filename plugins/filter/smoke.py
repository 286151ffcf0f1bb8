# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One node's smoke-test result from its job: the reports its ranks printed, else why there is none.

Documentation lives beside this file, one YAML file per filter.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.torchfleet.cluster.plugins.plugin_utils.plain import plain

RESULT_PREFIX = "TORCHFLEET_SMOKE_RESULT "


def rank_reports(lines):
    """The ranks' reports in the log lines, one per rank (the last it printed), in rank order."""
    reports = {}
    for line in lines or []:
        start = str(line).find(RESULT_PREFIX)
        if start < 0:
            continue
        try:
            report = json.loads(str(line)[start + len(RESULT_PREFIX):])
        except ValueError:
            continue
        if isinstance(report, Mapping) and isinstance(report.get("rank"), int):
            reports[report["rank"]] = dict(report)
    return [reports[rank] for rank in sorted(reports)]


def job_seconds(job, reports):
    """How long the job ran on the node, else its slowest rank."""
    if job.get("started") is not None and job.get("ended") is not None:
        return round(job["ended"] - job["started"], 3)
    return max([report.get("seconds") or 0.0 for report in reports], default=None)


def missing_report(job, answer, reports, procs_per_node, timeout):
    """Why the node has no failing rank's report to show, as one sentence."""
    state = job.get("state")
    failure = job.get("failure") or {}
    if state == "timed_out":
        return ("killed by the hard limit of %s s (smoke_timeout): a node hung; a port is blocked or a node did not start"
                % timeout)
    if state == "stopped":
        return "stopped (%s)" % (job.get("stopped_by") or "stop requested")
    if state == "succeeded":
        return "only %d of %d rank(s) reported" % (len(reports), procs_per_node)
    if not job or state in (None, "absent"):
        return "no answer: %s" % (answer.get("msg") or "the job's state is unknown")
    why = failure.get("error") or job.get("last_output") or "no output"
    hint = " (%s: %s)" % (failure["cause"], failure["hint"]) if failure.get("hint") else ""
    return "no report (%s, exit code %s): %s%s" % (state, job.get("rc"), why, hint)


def smoke_node_result(answer, node_rank, procs_per_node, timeout):
    """The node's result: its first failing rank's report (else its first rank's), with every rank it
    heard from, and why it failed when no rank's report says so."""
    answer = plain(answer)
    if not isinstance(answer, Mapping):
        raise AnsibleFilterError("smoke_node_result: expects the registered result of torchrun_job, got %r" % type(answer))
    job = answer.get("job") or {}
    reports = rank_reports(job.get("log_tail"))
    failed = [report for report in reports if not report.get("ok")]
    node = dict(failed[0] if failed else reports[0] if reports else {"phases": []})
    node.update(
        ok=not failed and len(reports) == procs_per_node and job.get("state") == "succeeded",
        rank=node_rank, ranks=[report["rank"] for report in reports],
        failed_rank=failed[0]["rank"] if failed else None, procs_per_node=procs_per_node,
        seconds=job_seconds(job, reports), state=job.get("state"), killed=job.get("state") == "timed_out")
    if not node["ok"] and not failed:
        node["detail"] = missing_report(job, answer, reports, procs_per_node, timeout)
    return node


class FilterModule:
    def filters(self):
        return {"smoke_node_result": smoke_node_result}
