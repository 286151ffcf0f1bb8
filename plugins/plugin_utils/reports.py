# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Renderers for a consistency report: console table, JSON, Markdown, JUnit XML and
a Prometheus textfile. Pure functions of the report dict, deterministic output.

Much of a report's text comes from the nodes (probe errors, package names and versions, GPU
names) and is untrusted: each format has one escaping function that every such string goes
through, so that no value can add a line, a heading, a tag or a terminal control sequence.
"""

from __future__ import annotations

import json
import math
import re
from xml.sax.saxutils import escape, quoteattr

GROUP_ORDER = ("torch", "python", "gpu", "distributed", "environment", "packages")
_TORCH = frozenset(("version", "cuda", "cudnn", "nccl"))
_GPU = frozenset(("cuda_available", "gpu_count", "gpus", "driver"))


# What a reader cannot see, or what moves the cursor or reorders the text: C0 and C1 controls
# (tab, newline and carriage return are left to each format), DEL, soft hyphen, zero-width and
# bidirectional format characters, line and paragraph separators, tag characters, U+FFFE/U+FFFF
# and lone surrogates. XML 1.0 cannot hold the C0 ones, U+FFFE/U+FFFF or surrogates at all.
_INVISIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u2028-\u202e"
                        "\u2060-\u206f\ufeff\ufff9-\ufffb\ufffe\uffff\ud800-\udfff\U000e0000-\U000e007f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _visible(match):
    """An invisible character as the escape that names it: ``\\x1b``, ``\\u2028``."""
    code = ord(match.group())
    if code < 0x100:
        return "\\x%02x" % code
    return "\\u%04x" % code if code < 0x10000 else "\\U%08x" % code


def _show_invisible(text):
    return _INVISIBLE.sub(_visible, text)


_ONE_LINE = str.maketrans({"\t": " ", "\n": " ", "\r": "\\r"})


def _console(text):
    """Text for a terminal or an inline Markdown cell: one line, every invisible character shown as an escape."""
    return _show_invisible(str(text).translate(_ONE_LINE))


def field_group(field):
    """The JUnit test case a field belongs to (``env.packages.numpy`` → ``packages``)."""
    head = field.split(".", 1)[0]
    if head in _TORCH:
        return "torch"
    if head in _GPU:
        return "gpu"
    if head == "env":
        return "packages" if field.startswith(("env.packages.", "env.builds.")) else "environment"
    return head


def group_key(group):
    return (GROUP_ORDER.index(group), "") if group in GROUP_ORDER else (len(GROUP_ORDER), group)


def text_value(value):
    """A fact value as people read it: ``null``, ``true``, ``2.4.6``."""
    if value is None or isinstance(value, (bool, int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def drift_rows(report):
    """One row per drift entry and distinct value: ``(field, value_text, expected, source, hosts, entry)``.

    Hosts holding the same wrong value are one row, so uniform drift across a
    thousand nodes is one line, not a thousand.
    """
    rows = []
    for entry in report.get("drift") or ():
        for value, hosts in _group_by_value(entry["hosts"]).items():
            rows.append((entry["field"], value, entry["expected"], entry["source"], hosts, entry))
    return rows


def host_label(report, host):
    """How the text reports name a host: the inventory name, then its address when the report has one."""
    address = (report.get("addresses") or {}).get(host)
    return f"{host} ({address})" if address and address != host else host


def _host_labels(report, hosts):
    return ", ".join(host_label(report, h) for h in hosts)


def _hosts_cell(hosts, report, limit):
    compared = report["summary"]["compared"]
    if compared > 1 and len(hosts) == compared:
        return f"all {compared} hosts"
    if len(hosts) <= limit:
        return _host_labels(report, hosts)
    return _host_labels(report, hosts[:limit]) + f" (+{len(hosts) - limit} more)"


def _expected_text(entry):
    text = text_value(entry["expected"])
    return text + " (tie)" if entry.get("tie") else text


def verdict(report):
    """One line: the audit's outcome and its counts."""
    summary = report["summary"]
    if report["passed"]:
        state = "CONSISTENT"
    elif report["consistent"]:
        state = "INCOMPLETE"
    else:
        state = "DRIFT"
    parts = [f"{summary['compared']}/{summary['hosts']} hosts compared"]
    if summary["drifted_fields"]:
        parts.append(f"{summary['drifted_fields']} field(s) differ on {summary['drifted_hosts']} host(s)")
    if summary["unreachable"]:
        parts.append(f"unreachable: {_host_labels(report, report['unreachable'])}")
    if summary["failed"]:
        parts.append(f"probe failed: {_host_labels(report, report['failed'])}")
    return f"torchfleet drift audit: {state} ({'; '.join(parts)})"


def _short(text, width=28):
    """Digests are 64 characters; the console table shows their start (the JSON has them whole)."""
    return text if len(text) <= width else text[:width - 3] + "..."


def to_table(report, max_rows=50, max_hosts=8):
    """Console lines: the verdict, then an aligned field × host × value × expected table."""
    lines = [verdict(report)]
    rows = drift_rows(report)
    if rows:
        table = [("FIELD", "HOST", "VALUE", "EXPECTED", "SOURCE")]
        for field, value, _exp, source, hosts, entry in rows[:max_rows]:
            table.append((field, _hosts_cell(hosts, report, max_hosts), _short(value), _short(_expected_text(entry)), source))
        widths = [min(60, max(len(r[i]) for r in table)) for i in range(4)]
        for row in table:
            cells = [row[i].ljust(widths[i]) for i in range(4)]
            lines.append("  ".join(cells + [row[4]]).rstrip())
        if len(rows) > max_rows:
            lines.append(f"... {len(rows) - max_rows} more row(s) in the JSON report")
    for host, message in (report.get("failed") or {}).items():
        lines.append(f"probe failed on {host_label(report, host)}: {message}")
    lines.extend(warning_lines(report))
    lines.extend(provenance_lines(report))
    changed = report.get("changed_since") or {}
    if changed.get("changed"):
        lines.append(f"changed since {changed.get('previous_generated_at')}: " + _change_summary(changed))
    return [_console(line) for line in lines]


def warning_lines(report):
    """pip/conda mix warnings, one line per package, kind and value."""
    return [f"warning: {w['package']} ({w['detail']}) on {', '.join(w['hosts'])}: {w['reason']}"
            for w in report.get("warnings") or ()]


def provenance_lines(report):
    """Provenance fields whose value differs between hosts (information, not drift)."""
    lines = []
    for field, values in (report.get("provenance") or {}).items():
        if len(values) > 1:
            shown = "; ".join(f"{text_value(v['value'])} on {', '.join(v['hosts'])}" for v in values)
            lines.append(f"provenance (not drift): {field}: {shown}")
    return lines


def _change_summary(changed):
    parts = [f"{len(changed['changes'])} value change(s)"] if changed["changes"] else []
    for key, label in (("hosts_added", "added"), ("hosts_removed", "removed"),
                       ("became_unreachable", "now unreachable"), ("became_reachable", "reachable again")):
        if changed.get(key):
            parts.append(f"{label}: {', '.join(changed[key])}")
    for host, message in (changed.get("became_failed") or {}).items():
        parts.append(f"probe failed on {host}: {message}")
    return "; ".join(parts)


def to_json(report):
    """The report as JSON text (key order as built, hosts in inventory order).

    A node can send a lone surrogate (as a JSON escape); UTF-8 cannot encode it, so it stays an escape."""
    text = json.dumps(report, indent=2, ensure_ascii=False)
    return _SURROGATE.sub(lambda match: "\\u%04x" % ord(match.group()), text) + "\n"


_MD_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", **{c: "\\" + c for c in "\\`*_[]|~#$"}})
# Should the text begin a line: an indented code block, a list item, a setext underline or a thematic break.
_MD_BLOCK_START = re.compile(r"^(?: |[-+=]|[0-9]{1,9}[.)](?= |$))")
_CODE_SPAN_UNSAFE = re.compile(r"[`|\\<>&]|^\s|\s$")


def _md_block_start(match):
    start = match.group()
    return "&#32;" if start == " " else start[:-1] + "\\" + start[-1]


def _md(text):
    """Text as inert inline Markdown: one line, ``<>&`` as entities, every markup character escaped."""
    return _MD_BLOCK_START.sub(_md_block_start, _console(text).translate(_MD_ESCAPES), count=1)


def _md_code(text):
    """A code span for text that a code span shows as it is; any other text as escaped inline text."""
    text = str(text)
    if text and not _CODE_SPAN_UNSAFE.search(text) and _console(text) == text:
        return f"`{text}`"
    return _md(text)


def to_markdown(report, max_rows=200, max_hosts=10):
    """A Markdown summary for a CI job page."""
    summary = report["summary"]
    out = [f"## {_md(verdict(report))}", ""]
    out.append(f"Generated {_md(report['generated_at'])}; reference host {_md_code(report['reference_host'])}; "
               f"{_md(summary['fields_checked'])} fields checked ({_md(summary['spec_fields'])} from the spec).")
    counts = " | ".join(_md(summary[key]) for key in ("hosts", "compared", "consistent_hosts", "drifted_hosts",
                                                      "unreachable", "failed"))
    out += ["", "| Hosts | Compared | Consistent | Drifted | Unreachable | Probe failed |",
            "|---:|---:|---:|---:|---:|---:|", f"| {counts} |", ""]
    rows = drift_rows(report)
    if rows:
        out += ["### Drift", "", "| Field | Host | Value | Expected | Source |", "|---|---|---|---|---|"]
        for field, value, _exp, source, hosts, entry in rows[:max_rows]:
            out.append(f"| {_md_code(field)} | {_md(_hosts_cell(hosts, report, max_hosts))} | {_md_code(value)} "
                       f"| {_md_code(_expected_text(entry))} | {_md(source)} |")
        if len(rows) > max_rows:
            out.append(f"\n{len(rows) - max_rows} more row(s) in latest.json.")
        out.append("")
    else:
        out += ["No drift: every compared host matches the majority and the spec.", ""]
    out += _markdown_problems(report)
    out += _markdown_notes(report)
    out += _markdown_tolerated(report, max_hosts)
    out += _markdown_changes(report, max_rows, max_hosts)
    return "\n".join(out).rstrip() + "\n"


def _markdown_problems(report):
    out = []
    if report["unreachable"]:
        out += ["### Unreachable", "", ", ".join(_md_code(host_label(report, h)) for h in report["unreachable"]), ""]
    if report["failed"]:
        out += ["### Probe failures", "", "| Host | Message |", "|---|---|"]
        out += [f"| {_md_code(host_label(report, h))} | {_md(m)} |" for h, m in report["failed"].items()]
        out.append("")
    return out


def _markdown_notes(report):
    out = []
    if report.get("warnings"):
        out += ["### Warnings (pip and conda)", "", "| Package | Host | Detail | Why |", "|---|---|---|---|"]
        out += [f"| {_md_code(w['package'])} | {_md(', '.join(w['hosts']))} | {_md(w['detail'])} | {_md(w['reason'])} |"
                for w in report["warnings"]]
        out.append("")
    lines = provenance_lines(report)
    if lines:
        out += ["### Provenance (information, not drift)", ""] + [f"- {_md(line.split(': ', 1)[1])}" for line in lines] + [""]
    return out


def _markdown_tolerated(report, max_hosts):
    tolerated = report.get("tolerated") or {}
    if not tolerated:
        return []
    out = ["### Tolerated (newer than the minimum)", "", "| Field | Host | Value |", "|---|---|---|"]
    for field, hosts in tolerated.items():
        for value, members in _group_by_value(hosts).items():
            out.append(f"| {_md_code(field)} | {_md(_hosts_cell(members, report, max_hosts))} | {_md_code(value)} |")
    return out + [""]


def _group_by_value(hosts):
    grouped = {}
    for host, value in hosts.items():
        grouped.setdefault(text_value(value), []).append(host)
    return grouped


def _markdown_changes(report, max_rows, max_hosts):
    changed = report.get("changed_since")
    if not changed:
        return []
    out = [f"### Changed since {_md(changed.get('previous_generated_at'))}", ""]
    if not changed.get("changed"):
        return out + ["Nothing changed.", ""]
    if changed["changes"]:
        out += ["| Field | Hosts | Before | After |", "|---|---|---|---|"]
        for change in changed["changes"][:max_rows]:
            out.append(f"| {_md_code(change['field'])} | {_md(_hosts_cell(change['hosts'], report, max_hosts))} "
                       f"| {_md_code(text_value(change['before']))} | {_md_code(text_value(change['after']))} |")
        out.append("")
    rest = _change_summary(dict(changed, changes=[]))
    return out + ([_md(rest), ""] if rest else [])


def _host_failures(report):
    failures = {}
    for entry in report.get("drift") or ():
        group = field_group(entry["field"])
        for host, value in entry["hosts"].items():
            failures.setdefault((host, group), []).append(
                f"{entry['field']}: {text_value(value)} (expected {_expected_text(entry)}, {entry['source']})")
    return failures


def to_junit(report):
    """JUnit XML: a test suite per host, a test case per field group plus ``facts``.

    Written as text rather than through ElementTree: a 100,000-host report is
    700,000 test cases, and this is ten times faster."""
    groups = sorted({field_group(f) for f in report.get("baseline") or ()}, key=group_key)
    failures = _host_failures(report)
    unreachable, failed = set(report["unreachable"]), report.get("failed") or {}
    stamp = _xml_attr(report["generated_at"])
    names = {group: _xml_attr(group) for group in ("facts",) + tuple(groups)}
    suites, totals = [], [0, 0, 0, 0]
    for host in report["hosts"]:
        counts = [0, 0, 0, 0]
        opening = f'    <testcase classname={_xml_attr("torchfleet.drift." + host)} name='
        cases = [_junit_case(opening, names["facts"], _facts_outcome(host, unreachable, failed), counts)]
        down = host in unreachable or host in failed
        for group in groups:
            outcome = ("skipped", None, "no facts", "") if down else _group_outcome(failures.get((host, group)))
            cases.append(_junit_case(opening, names[group], outcome, counts))
        totals = [t + c for t, c in zip(totals, counts)]
        suites.append(f"  <testsuite name={_xml_attr(host)} timestamp={stamp} {_junit_counts(counts)}>\n"
                      + "".join(cases) + "  </testsuite>\n")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuites name="torchfleet drift audit" timestamp={stamp} {_junit_counts(totals)}>\n'
            + "".join(suites) + "</testsuites>\n")


def _xml_attr(value):
    """A quoted XML attribute; what XML 1.0 cannot hold (or a reader cannot see) shown as an escape."""
    return quoteattr(_show_invisible(str(value)))


def _xml_text(text):
    """XML character data, under the same rule as ``_xml_attr``; a carriage return kept as a reference."""
    return escape(_show_invisible(str(text)), {"\r": "&#13;"})


def _junit_counts(counts):
    return 'tests="%d" failures="%d" errors="%d" skipped="%d"' % tuple(counts)


def _facts_outcome(host, unreachable, failed):
    if host in failed:
        return ("error", "probe", f"probe failed: {failed[host]}", failed[host])
    if host in unreachable:
        return ("failure", "unreachable", "host unreachable", "")
    return None


def _group_outcome(messages):
    if not messages:
        return None
    return ("failure", "drift", "; ".join(messages), "\n".join(messages))


_COUNT_INDEX = {"failure": 1, "error": 2, "skipped": 3}


def _junit_case(opening, quoted_name, outcome, counts):
    counts[0] += 1
    head = f'{opening}{quoted_name} time="0"'
    if outcome is None:
        return head + " />\n"
    kind, category, message, text = outcome
    counts[_COUNT_INDEX[kind]] += 1
    attrs = f" message={_xml_attr(message)}" + (f" type={_xml_attr(category)}" if category else "")
    body = f"<{kind}{attrs}>{_xml_text(text)}</{kind}>" if text else f"<{kind}{attrs} />"
    return f"{head}>\n      {body}\n    </testcase>\n"


# The exposition format's three escapes; a tab or carriage return is shown as its escape, as text.
_LABEL_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\\\t", "\r": "\\\\r"})


def _label(value):
    """A label value: nothing in it can end the line or the quoted string, and the file stays UTF-8."""
    return _INVISIBLE.sub(lambda match: "\\" + _visible(match), str(value).translate(_LABEL_ESCAPES))


def _number(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
    return repr(value) if isinstance(value, float) else str(int(value))


def _host_metric(name, help_text, samples):
    """A per-host gauge family; samples are ready ``{host="..."} value`` strings (the hot path at scale)."""
    return [f"# HELP {name} {help_text}", f"# TYPE {name} gauge"] + [name + sample for sample in samples]


def metric_family(name, kind, help_text, samples):
    """A Prometheus metric family: HELP, TYPE, then one line per (labels, value), labels escaped."""
    lines = [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
    for labels, value in samples:
        label_text = ",".join(f'{k}="{_label(v)}"' for k, v in labels)
        lines.append(f"{name}{{{label_text}}} {_number(value)}" if labels else f"{name} {_number(value)}")
    return lines


def to_prometheus(report):
    """A node_exporter textfile with the ``torchfleet_drift_*`` gauges."""
    hosts, per_host = report["hosts"], report["per_host"]
    unreachable, failed = set(report["unreachable"]), report.get("failed") or {}
    statuses = ("ok", "drift", "unreachable", "failed")
    counts = {s: 0 for s in statuses}
    for info in per_host.values():
        counts[info["status"]] += 1
    lines = []
    lines += metric_family("torchfleet_drift_consistent", "gauge",
                           "1 when every compared host matched the majority and the spec at the last audit.",
                           [((), report["consistent"])])
    lines += metric_family("torchfleet_drift_last_audit_timestamp_seconds", "gauge",
                           "Unix time the last drift audit finished.", [((), float(report["timestamp"]))])
    labels = {h: f'{{host="{_label(h)}"}}' for h in hosts}
    lines += _host_metric("torchfleet_drift_fields",
                          "Fields on which the host differs from the majority or the spec (absent when the host had no facts).",
                          [f"{labels[h]} {per_host[h]['drift_fields']}" for h in hosts if h not in unreachable and h not in failed])
    lines += _host_metric("torchfleet_drift_unreachable", "1 when the host was unreachable at the last audit.",
                          [f"{labels[h]} {1 if h in unreachable else 0}" for h in hosts])
    lines += _host_metric("torchfleet_drift_probe_failed", "1 when the facts probe failed on the host.",
                          [f"{labels[h]} {1 if h in failed else 0}" for h in hosts])
    lines += metric_family("torchfleet_drift_hosts", "gauge", "Hosts per audit status.",
                           [((("status", s),), counts[s]) for s in statuses])
    lines += metric_family("torchfleet_drift_drifted_fields", "gauge", "Distinct fields with drift on any host.",
                           [((), report["summary"]["drifted_fields"])])
    return "\n".join(lines) + "\n"
