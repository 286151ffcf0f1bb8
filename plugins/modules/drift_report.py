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
  - Compares each host with what was built on it (C(env.build_changes) of the facts, from the package list the
    M(torchfleet.cluster.conda_env) module records in its build stamp), so every package added, removed or changed since
    the build is drift with source C(build), also when every node changed the same way and the spec does not name the
    package. A host already reported for a field by the majority or the spec is not repeated under C(build).
  - Version pins mean what conda's match-spec says (C(==2.13) is 2.13 or 2.13.0, not 2.13.1), exactly as the
    M(torchfleet.cluster.conda_env) build's pin check reads them.
  - Warns (RV(report.warnings)) about pip mixed into conda on the nodes (a package installed by both; numpy, scipy,
    the BLAS stack or CUDA wheels, C(nvidia-*) or C(+cu) torch builds, from pip over conda), with the reason.
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
  compare_builds:
    description:
      - Compare build strings too, across hosts (C(env.builds.<name>), C(env.packages_sha256)) and against what was
        built on each host (a package rebuilt with another build string of the same version, such as a CPU and a CUDA
        build, is drift naming that package).
      - Turn it off for a fleet of mixed architectures, whose build strings differ by design; versions, added and
        removed packages are still compared.
    type: bool
    default: true
  provenance_is_drift:
    description:
      - Compare the provenance fields C(env.stamp.collection_version) and C(env.stamp.spec_file) (which collection
        version built the environment, from which checkout path) like any other field.
      - By default they are reported under RV(report.provenance) and never make the audit fail, since a node built after a
        collection upgrade, or from another checkout, holds the same environment.
    type: bool
    default: false
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
    report_version:
      description: Version of the report's layout.
      type: int
      returned: always
      sample: 1
    generated_at:
      description: When the report was made, UTC, ISO 8601.
      type: str
      returned: always
      sample: "2026-12-03T18:00:00Z"
    timestamp:
      description: RV(report.generated_at) as seconds since the epoch.
      type: float
      returned: always
    consistent:
      description: No drift and no probe failure among the compared hosts (and at least one host compared).
      type: bool
      returned: always
    passed:
      description: RV(report.consistent) and no host unreachable.
      type: bool
      returned: always
    reference_host:
      description: The host whose value wins a tie for the majority (null when no host was compared).
      type: str
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
      description: Host to message, for hosts whose probe ran and failed (the message says why, with rc and stderr).
      type: dict
      returned: always
    summary:
      description:
        - Counts. C(hosts), C(compared), C(unreachable), C(failed), C(drifted_hosts), C(consistent_hosts),
          C(fields_checked), C(drifted_fields), C(drift_entries), C(spec_fields), C(ignored_fields), C(build_entries).
      type: dict
      returned: always
    drift:
      description:
        - Each field that differs, per source, with the deviant hosts and their values. C(source) is C(majority) (differs
          from the other hosts), C(spec) (fails the spec) or C(build) (differs from what was built on that host; then
          C(expected) is the built value, null for a package added since the build, and a host value of null means the
          package was removed). C(rule) is C(exact), C(constraint), C(min_version) or C(build).
      type: list
      elements: dict
      returned: always
      sample: [{"field": "env.packages.numpy", "expected": "2.4.6", "source": "spec", "rule": "constraint", "tie": false,
                "hosts": {"node2": null}},
               {"field": "env.packages.six", "expected": null, "source": "build", "rule": "build", "tie": false,
                "hosts": {"node0": "1.17.0", "node1": "1.17.0", "node2": "1.17.0"}}]
    per_host:
      description: Host to C(status) (C(ok), C(drift), C(unreachable), C(failed)) and C(drift_fields).
      type: dict
      returned: always
    baseline:
      description: The majority value of every field checked.
      type: dict
      returned: always
    tolerated:
      description: Field to host to value, for values a minimum-of-the-majority rule tolerated (newer than the minimum).
      type: dict
      returned: always
    spec:
      description: The spec compared with (C(file), C(sha256), C(name), C(lock_file), C(lock_sha256), C(fields)), or null.
      type: dict
      returned: always
    provenance:
      description:
        - Field to the values held, most common first (C([{value, hosts}])), for the fields that are information, not drift
          (C(env.stamp.collection_version), C(env.stamp.spec_file), and any field with the rule C(info)).
      type: dict
      returned: always
      sample: {"env.stamp.collection_version": [{"value": "0.1.0", "hosts": ["node0", "node1"]},
                                                {"value": "0.2.0", "hosts": ["node2"]}]}
    build:
      description:
        - The comparison with what was built. C(compare_builds) (O(compare_builds)), C(unrecorded) (compared hosts whose
          build stamp records no package list, built by an older collection) and C(entries) (drift entries with source
          C(build)).
      type: dict
      returned: always
    warnings:
      description:
        - pip mixed into conda on the nodes, one item per package, kind and detail, with C(hosts). C(kind) is C(two_copies)
          (installed by conda and again by pip) or C(pip_over_conda) (a numeric or CUDA package from pip); C(reason) says why
          it matters. Warnings do not make the audit fail.
      type: list
      elements: dict
      returned: always
    changed_since:
      description:
        - What changed since the previous report, or null without one. C(previous_generated_at), C(hosts_added),
          C(hosts_removed), C(became_unreachable), C(became_failed) (host to why its probe failed), C(became_reachable),
          C(changes) (C([{field, before, after, hosts}])) and C(changed).
      type: dict
      returned: always
lines:
  description: The verdict and the drift table, one line each, for M(ansible.builtin.debug); then probe failures, warnings and provenance.
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
