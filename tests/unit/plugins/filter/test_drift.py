# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drift filters, called as Ansible calls them."""

from __future__ import annotations

import os
import subprocess
import sys
from xml.etree import ElementTree

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.torchfleet.cluster.plugins.filter import drift
from ansible_collections.torchfleet.cluster.tests.unit.plugins.plugin_utils.fleet import SPEC_SHA, fleet

FILTERS = drift.FilterModule().filters()


def test_filter_names():
    assert sorted(FILTERS) == ["drift_expectations", "drift_report", "drift_table", "to_drift_junit",
                               "to_drift_markdown", "to_drift_prometheus"]


def test_report_and_renderers():
    facts = fleet(3, [(1, "env.packages.numpy", "2.4.5")])
    report = FILTERS["drift_report"](facts, expected={"env.packages.numpy": "==2.4.6"}, generated_at=0)
    assert report["drift"][0]["hosts"] == {"node1": "2.4.5"}
    assert FILTERS["drift_table"](report)[2].split()[:2] == ["env.packages.numpy", "node1"]
    assert "| `env.packages.numpy` | node1 |" in FILTERS["to_drift_markdown"](report)
    ElementTree.fromstring(FILTERS["to_drift_junit"](report))
    assert 'torchfleet_drift_fields{host="node1"} 1' in FILTERS["to_drift_prometheus"](report)


class Tagged(str):
    """Stands in for Ansible's tagged strings."""


def test_plain_data_conversion():
    facts = {Tagged("node0"): {"version": Tagged("2.13.0")}, "node1": {"version": "2.13.0"}}
    assert FILTERS["drift_report"](facts)["consistent"]


SPEC = {"name": "train", "dependencies": ["python=3.11", "pip", "numpy=2.4.6", {"pip": ["torch==2.13.0"]}]}


def test_expectations_feed_the_report():
    expected = FILTERS["drift_expectations"](SPEC, spec_sha256=SPEC_SHA)
    assert expected["env.packages.numpy"] == {"version": "=2.4.6"}
    assert expected["env.name"] == {"equals": "train"}
    facts = fleet(2, [(0, "env.packages.torch", "2.12.0+cpu"), (1, "env.packages.torch", "2.12.0+cpu")])
    report = FILTERS["drift_report"](facts, expected=expected)
    assert [(d["field"], d["source"]) for d in report["drift"]] == [("env.packages.torch", "spec")]


def test_expectations_with_locks():
    explicit = "@EXPLICIT\nhttps://x.invalid/linux-64/numpy-2.4.7-py311_0.conda\n"
    assert FILTERS["drift_expectations"](SPEC, lock=explicit)["env.packages.numpy"] == {"version": "==2.4.7"}
    conda_lock = {"version": 1, "metadata": {"platforms": ["linux-64"]},
                  "package": [{"name": "numpy", "version": "2.4.8", "manager": "conda", "platform": "linux-64", "url": "u"}]}
    assert FILTERS["drift_expectations"](SPEC, lock=conda_lock)["env.packages.numpy"] == {"version": "==2.4.8"}


@pytest.mark.parametrize("name,args", [
    ("drift_report", (["not", "a", "mapping"],)),
    ("drift_report", ({"a": {}}, None, {"x": "sometimes"})),
    ("drift_expectations", ({"name": "x", "dependencies": ["numpy==="]},)),
    ("drift_table", ({"not": "a report"},)),
    ("to_drift_markdown", ("text",)),
    ("to_drift_junit", ({},)),
    ("to_drift_prometheus", (None,)),
])
def test_errors_are_filter_errors(name, args):
    with pytest.raises(AnsibleFilterError, match=name):
        FILTERS[name](*args)


def test_loading_the_filters_leaves_the_engine_unimported():
    """Ansible imports every filter file of the collection, in every forked worker, to resolve any
    one filter (ip_networks, say): the engine and its imports wait for a drift filter's first call."""
    probe = ("import sys\n"
             "from ansible_collections.torchfleet.cluster.plugins.filter import drift\n"
             "drift.FilterModule().filters()\n"
             "print(' '.join(sorted(m for m in sys.modules if m.endswith(('.consistency', '.reports', '.envspec_expect'))"
             " or m.split('.')[0] in ('packaging', 'xml'))))\n")
    loaded = subprocess.run([sys.executable, "-c", probe], env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
                            capture_output=True, text=True, check=True).stdout.split()
    assert loaded == []
    assert FILTERS["drift_table"](FILTERS["drift_report"](fleet(2, []), generated_at=0))
