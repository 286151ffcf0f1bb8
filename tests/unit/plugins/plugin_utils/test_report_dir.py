# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit and the fabric check keep their reports in one directory without touching each other's."""

from __future__ import annotations

import json
import os

from ansible_collections.torchfleet.cluster.plugins.plugin_utils.report_dir import ReportDirectory


def directory(path, prefix, keep=2):
    files = (("json", f"{prefix}-latest.json", json.dumps), ("markdown", f"{prefix}-latest.md", lambda r: "# %s\n" % r["n"]))
    return ReportDirectory(str(path), files, prefix, keep=keep)


def test_each_prefix_keeps_and_prunes_only_its_own_copies(tmp_path):
    fabric, drift = directory(tmp_path, "fabric"), directory(tmp_path, "drift", keep=5)
    for n in range(4):
        drift.write({"generated_at": "2026-12-07T10:00:0%dZ" % n, "n": n})
        written = fabric.write({"generated_at": "2026-12-07T10:00:0%dZ" % n, "n": n})
    assert [os.path.basename(p) for p in fabric.generations()] == ["fabric-20261207T100002Z.json", "fabric-20261207T100003Z.json"]
    assert len(drift.generations()) == 4
    assert [os.path.basename(p) for p in written["pruned"]] == ["fabric-20261207T100001Z.json"]
    assert fabric.previous() == {"generated_at": "2026-12-07T10:00:03Z", "n": 3}


def test_two_reports_in_one_second_get_two_copies(tmp_path):
    fabric = directory(tmp_path, "fabric", keep=0)
    fabric.write({"generated_at": "2026-12-07T10:00:00Z", "n": 1})
    fabric.write({"generated_at": "2026-12-07T10:00:00Z", "n": 2})
    assert [os.path.basename(p) for p in fabric.generations()] == ["fabric-20261207T100000Z.json", "fabric-20261207T100000Z.2.json"]


def test_an_unreadable_previous_report_is_a_warning(tmp_path):
    (tmp_path / "fabric-latest.json").write_text("{not json")
    fabric = directory(tmp_path, "fabric")
    assert fabric.previous() is None
    assert fabric.warnings and "ignoring the previous report" in fabric.warnings[0]
