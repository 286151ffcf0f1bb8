#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

# The work is done by the action plugin plugins/action/drift_report.py, on the controller.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: drift_report
short_description: Compare the torch nodes with each other and with the spec, and write the drift reports
version_added: 0.1.0
author:
  - torchfleet developers (@torchfleet)
description:
  - Runs on the controller only (an action plugin); it never contacts a node. Run it once, for example with
    C(run_once=true) and C(delegate_to=localhost), after M(torchfleet.cluster.torch_facts) ran on every node.
  - Takes each host's registered M(torchfleet.cluster.torch_facts) result (O(probe_var)); an unreachable result makes the
    host unreachable, a failed one a probe failure. A host without a result falls back to its C(ansible_facts.torch).
  - Flattens the facts to dotted fields (C(version), C(gpus.0.name), C(env.packages.numpy)) and compares every field
    against the majority of the compared hosts and against the spec (O(spec_file), O(lock_file), O(expected)), so that
    drift that moved every node the same way is caught too.
  - Ties for the majority go to the value of O(reference_host), else to the value of the earliest host in inventory order;
    those entries say C(tie=true).
  - With O(report_dir) it writes C(latest.json), C(latest.md), C(latest.junit.xml), C(torchfleet_drift.prom) and a
    timestamped copy C(drift-<UTC time>.json), keeping the newest O(keep) copies. Every file is written to a temporary
    name and renamed into place.
options:
  hosts:
    description: Hosts to compare, in order. Defaults to C(ansible_play_hosts_all), the inventory order of the play.
    type: list
    elements: str
  probe_var:
    description: Name of the variable each host registered the M(torchfleet.cluster.torch_facts) result in.
    type: str
    default: drift_audit_probe
  facts:
    description:
      - Host name to torch facts (or V(null) when unreachable). When given, O(hosts) and O(probe_var) are not used.
    type: dict
  spec_file:
    description:
      - The versioned C(environment.yml) on the controller. Adds the expectations C(env.name), C(env.spec_sha256) (the
        file's SHA-256, compared with the nodes' build stamps) and one C(env.packages.<name>) per dependency.
      - Validated first; an error names the file and line.
      - A relative path is looked up in the current directory, then in the play's C(files) search path.
    type: path
  lock_file:
    description: An explicit (C(conda list --explicit)) or conda-lock lock; every package in it must have exactly its version.
    type: path
  lock_platform:
    description: Platform whose packages are taken from a conda-lock file.
    type: str
    default: linux-64
  expected:
    description:
      - >-
        More expectations, field to value. A string that starts with an operator or holds C(*), C(,) or C(|) is a version
        constraint; C({version: ...}) or C({equals: ...}) says so explicitly. These win over the spec's.
    type: dict
    default: {}
  rules:
    description:
      - Per-field rules; keys are field names or glob patterns (exact names first, then globs in order).
      - >-
        V(exact) (the default), V(ignore), C({min: VERSION}) (reported with source C(spec)) or C({min: majority}) (newer
        values are tolerated and listed under C(tolerated)).
    type: dict
    default: {}
  ignore:
    description: Glob patterns of fields to leave out, for example C(env.packages.pip) or C(env.stamp.*).
    type: list
    elements: str
    default: []
  use_defaults:
    description:
      - >-
        Apply the built-in rules, ignore C(gpus.*.uuid), C(gpus.*.serial) and C(gpus.*.pci_bus_id) (unique per device)
        and treat C(driver) as a minimum (C({min: majority})).
    type: bool
    default: true
  reference_host:
    description: Host whose value wins a tie. Defaults to C(torch_master), else the first host.
    type: str
  report_dir:
    description: Directory on the controller to write the reports to; created when missing. Nothing is written without it.
    type: path
  keep:
    description: Timestamped JSON copies to keep in O(report_dir), newest first; V(0) keeps all.
    type: int
    default: 10
  textfile_dir:
    description: Also write C(torchfleet_drift.prom) into this directory (node_exporter's textfile collector directory).
    type: path
  compare_previous:
    description: Compare with the previous C(latest.json) in O(report_dir) and report C(changed_since).
    type: bool
    default: true
  write_in_check_mode:
    description:
      - Write the reports in check mode too. They are the audit's output on the controller; nodes are never touched.
    type: bool
    default: true
  fail_on_drift:
    description:
      - Fail when the report did not pass (drift, a probe failure or an unreachable host), with the table as message.
      - Playbooks usually leave this off and fail in a later task, after printing the table.
    type: bool
    default: false
  max_rows:
    description: Rows of the console table in RV(lines).
    type: int
    default: 50
attributes:
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
  async:
    description: Supports being used with the C(async) keyword.
    support: none
  bypass_host_loop:
    description: Forces a 'global' task that does not execute per host.
    support: none
    details:
      - Use C(run_once=true).
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details:
      - The nodes are only read. Reports are written in check mode unless O(write_in_check_mode=false).
  diff_mode:
    description: Returns details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
  platform:
    description: Target OS/families that can be operated against.
    support: full
    platforms: posix
notes:
  - The task is C(changed) when the report differs from the previous C(latest.json) in anything but its timestamps, so a
    steady state audits as C(ok).
seealso:
  - module: torchfleet.cluster.torch_facts
  - plugin: torchfleet.cluster.drift_report
    plugin_type: filter
'''

EXAMPLES = r'''
- name: Probe every node once
  torchfleet.cluster.torch_facts:
    python: /opt/miniconda3/envs/train/bin/python
  register: drift_audit_probe
  ignore_unreachable: true
  ignore_errors: true

- name: Compare and write the reports
  torchfleet.cluster.drift_report:
    spec_file: inventories/prod/environment.yml
    report_dir: reports
    rules:
      driver:
        min: "550.54"
    ignore:
      - env.packages.pip
  register: drift
  run_once: true
  delegate_to: localhost

- name: Show the verdict
  ansible.builtin.debug:
    msg: "{{ drift.lines }}"
  run_once: true
'''

RETURN = r'''
report:
  description: The whole report, as written to C(latest.json).
  returned: always
  type: dict
  contains:
    consistent:
      description: No drift and no probe failure among the compared hosts (and at least one host compared).
      type: bool
      returned: always
    passed:
      description: RV(report.consistent) and no host unreachable.
      type: bool
      returned: always
    hosts:
      description: Every host, in inventory order.
      type: list
      elements: str
      returned: always
    unreachable:
      description: Hosts that could not be reached.
      type: list
      elements: str
      returned: always
    failed:
      description: Host to message, for hosts whose probe failed.
      type: dict
      returned: always
    drift:
      description: Each field that differs, per source (C(majority) or C(spec)), with the deviant hosts and their values.
      type: list
      elements: dict
      returned: always
      sample: [{"field": "env.packages.numpy", "expected": "2.4.6", "source": "spec", "rule": "constraint", "tie": false,
                "hosts": {"node2": null}}]
    summary:
      description: Counts of hosts and fields.
      type: dict
      returned: always
    per_host:
      description: Host to C(status) (C(ok), C(drift), C(unreachable), C(failed)) and C(drift_fields).
      type: dict
      returned: always
    baseline:
      description: The majority value of every field checked.
      type: dict
      returned: always
    changed_since:
      description: What changed since the previous report, or null without one.
      type: dict
      returned: always
lines:
  description: The verdict and the drift table, one line each, for M(ansible.builtin.debug).
  returned: always
  type: list
  elements: str
verdict:
  description: The first line of RV(lines).
  returned: always
  type: str
  sample: "torchfleet drift audit: CONSISTENT (3/3 hosts compared)"
consistent:
  description: Same as RV(report.consistent).
  returned: always
  type: bool
passed:
  description: Same as RV(report.passed).
  returned: always
  type: bool
files:
  description: The files written, by kind (C(json), C(markdown), C(junit), C(prometheus), C(generation), C(pruned), C(textfile)).
  returned: always
  type: dict
'''
