# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Renderers: JSON shape, Markdown table, JUnit XML (parsed with xml.etree), Prometheus text (parsed here)."""

from __future__ import annotations

import json
import re
from xml.etree import ElementTree

import pytest

from ansible_collections.torchfleet.cluster.plugins.plugin_utils import reports
from ansible_collections.torchfleet.cluster.plugins.plugin_utils.consistency import build_report
from ansible_collections.torchfleet.cluster.tests.unit.plugins.plugin_utils.fleet import SPEC_SHA, UNREACHABLE, fleet

SPEC = {"env.name": "train", "env.spec_sha256": SPEC_SHA, "env.packages.numpy": "==2.4.6"}
STAMP = "2026-03-04T05:06:07Z"


def make(count=3, changes=(), failed=None, **kwargs):
    facts = fleet(count, changes)
    for host in failed or {}:
        facts[host] = None
    return build_report(facts, expected=SPEC, failed=failed, generated_at=STAMP, **kwargs)


DRIFTED = [(2, "env.packages.numpy", "2.4.5"), (1, "python", "3.11.9"), (3, None, UNREACHABLE)]


# --- JSON --------------------------------------------------------------------------------------

def test_json_contract_shape():
    data = json.loads(reports.to_json(make(5, DRIFTED, failed={"node4": "no torch"})))
    for key, kind in (("consistent", bool), ("hosts", list), ("unreachable", list), ("drift", list),
                      ("summary", dict), ("generated_at", str), ("per_host", dict)):
        assert isinstance(data[key], kind), key
    assert data["hosts"] == ["node0", "node1", "node2", "node3", "node4"]
    assert data["unreachable"] == ["node3"]
    assert data["failed"] == {"node4": "no torch"}
    assert data["drift"][0] == {"field": "env.packages.numpy", "expected": "2.4.6", "source": "spec",
                                "rule": "constraint", "tie": False, "hosts": {"node2": "2.4.5"}}
    assert {d["source"] for d in data["drift"]} <= {"majority", "spec"}
    assert data["generated_at"] == STAMP


def test_json_is_deterministic():
    assert reports.to_json(make(4, DRIFTED)) == reports.to_json(make(4, DRIFTED))


# --- console table and Markdown --------------------------------------------------------------------

@pytest.mark.parametrize("changes,verdict", [
    ([], "torchfleet drift audit: CONSISTENT (3/3 hosts compared)"),
    ([(1, None, UNREACHABLE)], "torchfleet drift audit: INCOMPLETE (2/3 hosts compared; unreachable: node1)"),
    ([(1, "python", "3.12.0")], "torchfleet drift audit: DRIFT (3/3 hosts compared; 1 field(s) differ on 1 host(s))"),
])
def test_verdict(changes, verdict):
    assert reports.verdict(make(3, changes)) == verdict


def test_table_lines():
    lines = reports.to_table(make(4, DRIFTED))
    assert lines[1].split() == ["FIELD", "HOST", "VALUE", "EXPECTED", "SOURCE"]
    assert lines[2].split() == ["env.packages.numpy", "node2", "2.4.5", "2.4.6", "spec"]
    assert lines[3].split() == ["python", "node1", "3.11.9", "3.11.14", "majority"]


LABEL_CASES = [
    ({}, "node1", "node1"),
    ({"node1": "10.0.0.11"}, "node1", "node1 (10.0.0.11)"),
    ({"node1": "node1"}, "node1", "node1"),
    ({"node2": "10.0.0.12"}, "node1", "node1"),
]


@pytest.mark.parametrize("addresses, host, label", LABEL_CASES)
def test_host_label(addresses, host, label):
    assert reports.host_label({"addresses": addresses}, host) == label


def test_text_reports_name_hosts_with_their_address():
    report = make(5, DRIFTED, failed={"node4": "no torch"})
    report["addresses"] = {"node2": "10.0.0.12", "node3": "10.0.0.13", "node4": "10.0.0.14"}
    lines = reports.to_table(report)
    assert lines[0].endswith("unreachable: node3 (10.0.0.13); probe failed: node4 (10.0.0.14))")
    assert lines[2].split()[:3] == ["env.packages.numpy", "node2", "(10.0.0.12)"]
    assert "probe failed on node4 (10.0.0.14): no torch" in lines
    markdown = reports.to_markdown(report)
    assert "`node3 (10.0.0.13)`" in markdown and "| `node4 (10.0.0.14)` | no torch |" in markdown


def test_table_shortens_digests():
    lines = reports.to_table(make(3, [(1, "env.spec_sha256", "0" * 64)]))
    assert lines[2].split() == ["env.spec_sha256", "node1", "0" * 25 + "...", SPEC_SHA[:25] + "...", "spec"]


def test_table_groups_uniform_drift_and_cuts_rows():
    report = make(50, [(i, "env.packages.numpy", "2.4.5") for i in range(50)] + [(i, f"env.packages.x{i}", "1") for i in range(40)])
    lines = reports.to_table(report, max_rows=10)
    assert lines[2].split()[:4] == ["env.packages.numpy", "all", "50", "hosts"]
    assert lines[-1] == "... 31 more row(s) in the JSON report"


def parse_markdown_table(text, header):
    lines = text.splitlines()
    start = lines.index(header)
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        rows.append([c.replace("\\|", "|").strip("`") for c in cells])
    return rows


def test_markdown_drift_table():
    text = reports.to_markdown(make(5, DRIFTED, failed={"node4": "torch | missing"}))
    assert text.startswith("## torchfleet drift audit: DRIFT")
    rows = parse_markdown_table(text, "| Field | Host | Value | Expected | Source |")
    assert rows == [["env.packages.numpy", "node2", "2.4.5", "2.4.6", "spec"],
                    ["python", "node1", "3.11.9", "3.11.14", "majority"]]
    assert "### Unreachable" in text and "`node3`" in text
    assert parse_markdown_table(text, "| Host | Message |") == [["node4", "torch | missing"]]


def test_markdown_clean_and_changes():
    previous = make(3)
    report = make(3, [(0, "env.packages.numpy", "2.4.5")], previous=previous)
    text = reports.to_markdown(report)
    assert parse_markdown_table(text, "| Field | Hosts | Before | After |") == [["env.packages.numpy", "node0", "2.4.6", "2.4.5"]]
    assert "No drift" in reports.to_markdown(make(3, previous=previous))
    assert "Nothing changed." in reports.to_markdown(make(3, previous=previous))


def test_markdown_tolerated():
    facts = fleet(3, [(2, "driver", "580.65.06")], gpus=1)
    text = reports.to_markdown(build_report(facts, generated_at=STAMP))
    assert parse_markdown_table(text, "| Field | Host | Value |") == [["driver", "node2", "580.65.06"]]


# --- JUnit -----------------------------------------------------------------------------------------

def test_junit_structure():
    root = ElementTree.fromstring(reports.to_junit(make(5, DRIFTED, failed={"node4": "no torch"})))
    assert root.tag == "testsuites"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == ["node0", "node1", "node2", "node3", "node4"]
    groups = ["facts", "torch", "python", "gpu", "distributed", "environment", "packages"]
    for suite in suites.values():
        assert [c.get("name") for c in suite.findall("testcase")] == groups
        assert int(suite.get("tests")) == len(groups)
    failure = suites["node2"].find("testcase[@name='packages']/failure")
    assert failure.get("message") == "env.packages.numpy: 2.4.5 (expected 2.4.6, spec)"
    assert suites["node1"].find("testcase[@name='python']/failure").get("message") == "python: 3.11.9 (expected 3.11.14, majority)"
    assert suites["node0"].find(".//failure") is None
    assert suites["node3"].find("testcase[@name='facts']/failure").get("type") == "unreachable"
    assert len(suites["node3"].findall(".//skipped")) == len(groups) - 1
    assert suites["node4"].find("testcase[@name='facts']/error").get("message") == "probe failed: no torch"
    totals = {k: int(root.get(k)) for k in ("tests", "failures", "errors", "skipped")}
    assert totals == {"tests": 35, "failures": 3, "errors": 1, "skipped": 12}


def test_junit_groups_several_fields():
    root = ElementTree.fromstring(reports.to_junit(make(3, [(1, "env.packages.numpy", "1"), (1, "env.packages.sympy", "2")])))
    failure = root.find("testsuite[@name='node1']/testcase[@name='packages']/failure")
    assert failure.text.splitlines() == ["env.packages.numpy: 1 (expected 2.4.6, spec)",
                                         "env.packages.sympy: 2 (expected 1.13.3, majority)"]


@pytest.mark.parametrize("field,group", [
    ("version", "torch"), ("nccl", "torch"), ("python", "python"), ("gpus.3.name", "gpu"), ("driver", "gpu"),
    ("distributed.nccl", "distributed"), ("env.spec_sha256", "environment"), ("env.stamp.name", "environment"),
    ("env.packages.numpy", "packages"), ("custom.x", "custom"),
])
def test_field_group(field, group):
    assert reports.field_group(field) == group


# --- Prometheus text format -------------------------------------------------------------------------

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\})? (\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')


def unescape_label(value):
    return re.sub(r'\\([\\"n])', lambda match: "\n" if match.group(1) == "n" else match.group(1), value)


def parse_prometheus(text):
    """A small parser of the text exposition format: checks HELP/TYPE precede each family's samples."""
    assert text.endswith("\n")
    text.encode("utf-8")
    assert text.splitlines() == text.split("\n")[:-1], "a character other than a newline ends a line"
    helped, typed, samples = set(), {}, []
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split()[2]
            assert name not in helped, f"second HELP for {name}"
            helped.add(name)
        elif line.startswith("# TYPE "):
            _h, _t, name, kind = line.split()
            assert kind in ("gauge", "counter", "untyped", "summary", "histogram")
            typed[name] = kind
        else:
            match = _SAMPLE.match(line)
            assert match, f"bad sample line {line!r}"
            name, labels, value = match.groups()
            assert name in helped and name in typed, f"{name} has no HELP/TYPE before its samples"
            float(value)
            samples.append((name, {k: unescape_label(v) for k, v in _LABEL.findall(labels or "")}, float(value)))
    return typed, samples


def test_prometheus_textfile():
    typed, samples = parse_prometheus(reports.to_prometheus(make(5, DRIFTED, failed={"node4": "x"})))
    assert all(kind == "gauge" for kind in typed.values())
    values = {(n, tuple(sorted(l.items()))): v for n, l, v in samples}
    assert values[("torchfleet_drift_consistent", ())] == 0
    assert values[("torchfleet_drift_last_audit_timestamp_seconds", ())] == 1772600767
    assert values[("torchfleet_drift_fields", (("host", "node2"),))] == 1
    assert values[("torchfleet_drift_fields", (("host", "node0"),))] == 0
    assert ("torchfleet_drift_fields", (("host", "node3"),)) not in values
    assert values[("torchfleet_drift_unreachable", (("host", "node3"),))] == 1
    assert values[("torchfleet_drift_unreachable", (("host", "node0"),))] == 0
    assert values[("torchfleet_drift_probe_failed", (("host", "node4"),))] == 1
    assert values[("torchfleet_drift_hosts", (("status", "drift"),))] == 2
    assert values[("torchfleet_drift_drifted_fields", ())] == 2


def test_prometheus_consistent_and_escaping():
    facts = {'we"ird\\host': fleet(1)["node0"], "b": fleet(1)["node0"]}
    text = reports.to_prometheus(build_report(facts, generated_at=STAMP))
    _typed, samples = parse_prometheus(text)
    assert ("torchfleet_drift_consistent", {}, 1.0) in samples
    assert 'torchfleet_drift_fields{host="we\\"ird\\\\host"} 0' in text.splitlines()
    assert {labels["host"] for name, labels, _v in samples if name == "torchfleet_drift_fields"} == {'we"ird\\host', "b"}


def test_parser_rejects_samples_without_help():
    with pytest.raises(AssertionError):
        parse_prometheus("torchfleet_drift_consistent 1\n")


@pytest.mark.parametrize("value,text", [(None, "null"), (True, "true"), (8, "8"), ("2.4.6", "2.4.6"), ({"a": 1}, '{"a": 1}')])
def test_text_value(value, text):
    assert reports.text_value(value) == text


# --- what a node reports is untrusted: every format stays well-formed ------------------------------

ATTACKS = [
    pytest.param("\r# CONSISTENT\r<!--", id="carriage-return-heading-and-comment"),
    pytest.param("\n## CONSISTENT\n\n<!--\n", id="newline-heading-and-comment"),
    pytest.param("\x1b[2J\x1b[31mok\x1b]0;title\x07\x9b0m", id="terminal-control-sequences"),
    pytest.param("".join(chr(code) for code in range(32)) + "\x7f", id="every-c0-control"),
    pytest.param("a\u2028## b\u2029c\x85d\x0be\x0cf\x1cg", id="unicode-line-breaks"),
    pytest.param("\u202eevil\u202c\u200b\ufeff\U000e0041", id="bidi-zero-width-and-tag-characters"),
    pytest.param('</failure></testcase><testcase name="ok"/><!-- ]]>', id="xml-markup"),
    pytest.param('"} 1\nforged_metric{host="x"} 1\n', id="prometheus-label-break-out"),
    pytest.param("torch | missing |", id="table-pipe"),
    pytest.param("`x` *b* _i_ [l](http://x) ![i](y) ~s~ $m$ &amp; <b>\\", id="markdown-and-html-markup"),
    pytest.param("- item", id="list-marker"),
    pytest.param("1. item", id="ordered-list-marker"),
    pytest.param("lone \ud800 surrogate \ufffe\uffff", id="lone-surrogate-and-noncharacters"),
]

POSITIONS = ["probe error", "package version", "package name", "host address", "provenance", "previous audit"]


def report_with(position, text):
    """A drifted report (one host unreachable, one whose probe failed) with ``text`` where a node puts it."""
    changes = list(DRIFTED)
    if position == "package version":
        changes.append((0, "env.packages.sympy", text))
    elif position == "package name":
        changes.append((0, "env.packages.x" + text, "1"))
    elif position == "provenance":
        changes.append((0, "env.stamp.collection_version", text))
    previous = None
    if position == "previous audit":
        previous = make(5, failed={"node4": "no torch"})
        previous["generated_at"] = text
    report = make(5, changes, failed={"node4": text if position == "probe error" else "no torch"}, previous=previous)
    if position == "host address":
        report["addresses"] = {host: text for host in ("node2", "node3", "node4")}
    return report


def assert_one_printable_line_each(text):
    assert text.splitlines() == text.split("\n")[:-1], "a character other than a newline ends a line"
    unprintable = sorted({char for char in text.replace("\n", "") if not char.isprintable()})
    assert not unprintable, f"unprintable characters {unprintable!r}"


BLOCK_STARTS = [
    (re.compile(r" {0,3}#{1,6}( |$)"), "heading"),
    (re.compile(r"\|"), "table"),
    (re.compile(r" {0,3}([-+*]|[0-9]{1,9}[.)])( |$)"), "list item"),
    (re.compile(r" {0,3}([-_*] *){3,}$| {0,3}=+ *$"), "rule or underline"),
    (re.compile(r" {4}| {0,3}(```|~~~)"), "code block"),
    (re.compile(r" {0,3}[<>]"), "html or quote"),
]


def block_kind(line):
    """What a Markdown line starts, were it the first line of a block."""
    for pattern, kind in BLOCK_STARTS:
        if pattern.match(line):
            return kind
    return "text" if line else "blank"


def cell_count(line):
    """The table cells of a Markdown line: ``|`` that no backslash escapes."""
    return len(re.findall(r"(?<!\\)(?:\\\\)*\|", line))


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("text", ATTACKS)
def test_markdown_keeps_its_structure(position, text):
    attacked = reports.to_markdown(report_with(position, text))
    benign = reports.to_markdown(report_with(position, "x"))
    assert_one_printable_line_each(attacked)
    assert "<" not in attacked and ">" not in attacked
    lines, expected = attacked.split("\n"), benign.split("\n")
    assert [block_kind(line) for line in lines] == [block_kind(line) for line in expected]
    headings = [line.split(" ")[:2] for line in lines if line.startswith("#")]
    assert headings == [line.split(" ")[:2] for line in expected if line.startswith("#")]
    assert [cell_count(line) for line in lines] == [cell_count(line) for line in expected]


@pytest.mark.parametrize("host", ["- a", "+ a", "1. a", "7) a", "===", "---", "    a", " - a", "# a", "> a", "<!-- a"])
def test_markdown_text_that_begins_a_line_starts_no_block(host):
    """A ``|`` keeps the name out of a code span, so the escaped text itself begins the line."""
    text = reports.to_markdown(build_report({host + "|": None, "b": fleet(1)["node0"]}, generated_at=STAMP))
    lines = text.split("\n")
    unreachable = lines[lines.index("### Unreachable") + 2]
    assert block_kind(unreachable) == "text", unreachable


MARKDOWN_CELLS = [
    ("\r# CONSISTENT\r<!--", "\\\\r\\# CONSISTENT\\\\r&lt;!--"),
    ("\x1b[31mred", "\\\\x1b\\[31mred"),
    ("a\u2028b\x85c", "a\\\\u2028b\\\\x85c"),
    ("torch | missing", "torch \\| missing"),
    ("line one\nline two\tend", "line one line two end"),
    ("<b>&amp;</b>", "&lt;b&gt;&amp;amp;&lt;/b&gt;"),
    ("*x* _y_ `z` [a](b) #c ~d~ $e$", "\\*x\\* \\_y\\_ \\`z\\` \\[a\\](b) \\#c \\~d\\~ \\$e\\$"),
    ("- item", "\\- item"),
    ("2. item", "2\\. item"),
    ("2.4.5 - 1", "2.4.5 - 1"),
]


@pytest.mark.parametrize("message,cell", MARKDOWN_CELLS)
def test_markdown_shows_node_text_as_inert_text(message, cell):
    text = reports.to_markdown(make(5, DRIFTED, failed={"node4": message}))
    assert f"| `node4` | {cell} |" in text.splitlines()


@pytest.mark.parametrize("value,cell", [
    ("2.4.5", "`2.4.5`"),
    ("2.4.5`|", "2.4.5\\`\\|"),
    ("2.4.5<x>", "2.4.5&lt;x&gt;"),
    (" 2.4.5", "&#32;2.4.5"),
])
def test_markdown_code_span_only_for_text_it_shows_as_is(value, cell):
    text = reports.to_markdown(make(3, [(1, "env.packages.numpy", value)]))
    assert f"| `env.packages.numpy` | node1 | {cell} | `2.4.6` | spec |" in text.splitlines()


def junit_outcomes(root):
    return [(suite.get("name"), case.get("name"), child.tag, child.get("type"))
            for suite in root.iter("testsuite") for case in suite.iter("testcase") for child in case]


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("text", ATTACKS)
def test_junit_stays_well_formed_and_keeps_every_failure(position, text):
    attacked = reports.to_junit(report_with(position, text))
    attacked.encode("utf-8")
    root = ElementTree.fromstring(attacked)
    benign = ElementTree.fromstring(reports.to_junit(report_with(position, "x")))
    assert junit_outcomes(root) == junit_outcomes(benign)
    totals = ("tests", "failures", "errors", "skipped")
    assert [root.get(k) for k in totals] == [benign.get(k) for k in totals]
    assert [s.get("name") for s in root.iter("testsuite")] == ["node0", "node1", "node2", "node3", "node4"]


@pytest.mark.parametrize("message,shown", [
    ("\x1b[31mred\x00", "probe failed: \\x1b[31mred\\x00"),
    ("tab\tline\r\nnext", "probe failed: tab\tline\r\nnext"),
    ("\ud800\ufffe", "probe failed: \\ud800\\ufffe"),
    ('</error><error message="x">', 'probe failed: </error><error message="x">'),
])
def test_junit_message_shows_what_xml_cannot_hold(message, shown):
    root = ElementTree.fromstring(reports.to_junit(make(5, DRIFTED, failed={"node4": message})))
    error = root.find("testsuite[@name='node4']/testcase[@name='facts']/error")
    assert error.get("message") == shown
    assert error.text == shown[len("probe failed: "):]


@pytest.mark.parametrize("text", ATTACKS)
def test_prometheus_host_label_cannot_break_out(text):
    facts = {text: fleet(1)["node0"], "b": fleet(1)["node0"]}
    rendered = reports.to_prometheus(build_report(facts, generated_at=STAMP))
    _typed, samples = parse_prometheus(rendered)
    benign = parse_prometheus(reports.to_prometheus(build_report({"a": facts["b"], "b": facts["b"]}, generated_at=STAMP)))[1]
    assert [(name, sorted(labels)) for name, labels, _v in samples] == [(name, sorted(labels)) for name, labels, _v in benign]
    hosts = {labels["host"] for name, labels, _v in samples if name == "torchfleet_drift_unreachable"}
    assert len(hosts) == 2 and "b" in hosts


@pytest.mark.parametrize("host,label", [
    ('"} 1\nforged 1', '\\"} 1\\nforged 1'),
    ("esc\x1b[2J", "esc\\\\x1b[2J"),
    ("cr\rtab\t", "cr\\\\rtab\\\\t"),
    ("sep\u2028\x85", "sep\\\\u2028\\\\x85"),
    ("half\ud800", "half\\\\ud800"),
])
def test_prometheus_label_escapes(host, label):
    rendered = reports.to_prometheus(build_report({host: fleet(1)["node0"]}, generated_at=STAMP))
    assert f'torchfleet_drift_unreachable{{host="{label}"}} 0' in rendered.split("\n")


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("text", ATTACKS)
def test_console_lines_carry_no_control_sequence(position, text):
    lines = reports.to_table(report_with(position, text))
    assert len(lines) == len(reports.to_table(report_with(position, "x")))
    for line in lines:
        assert "\n" not in line
        assert_one_printable_line_each(line + "\n")


@pytest.mark.parametrize("message,shown", [
    ("\x1b[2J\x1b[31mboom", "\\x1b[2J\\x1b[31mboom"),
    ("one\ntwo\r", "one two\\r"),
    ("\u202eevil", "\\u202eevil"),
])
def test_console_shows_control_characters_as_escapes(message, shown):
    assert f"probe failed on node4: {shown}" in reports.to_table(make(5, DRIFTED, failed={"node4": message}))


def test_json_keeps_a_lone_surrogate_as_an_escape():
    text = reports.to_json(make(5, DRIFTED, failed={"node4": "half \ud800 \u2028"}))
    text.encode("utf-8")
    assert json.loads(text)["failed"]["node4"] == "half \ud800 \u2028"
