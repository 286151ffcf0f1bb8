#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

# The work is done by the action plugin plugins/action/fabric_report.py, on the controller.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: fabric_report
short_description: Judge the fabric measurements of the torch nodes, name the slow node or link, and write the reports
version_added: 0.1.0
author:
  - torchfleet developers (@torchfleet)
description:
  - Runs on the controller only (an action plugin); it never contacts a node. Run it once, with C(run_once=true) and
    C(delegate_to=localhost), after the fabric job of the C(torchfleet.cluster.fabric) role ended.
  - Finds the result line (C(TORCHFLEET_FABRIC_RESULT <json>)) in O(log_lines), the end of the job's log on
    O(reporter), and validates it as data from a node - JSON of the expected shape, finite numbers in sane ranges,
    node names that are exactly O(members) in rank order - before anything else uses it. An unusable result fails the
    task naming O(reporter) and the field.
  - Each node's bandwidth is the best it reached with any measured peer and its latency the lowest; the fleet's are
    the medians over the nodes. A directed link fails below the C(bandwidth_fraction) of O(thresholds) times the fleet's
    bandwidth or below its C(bandwidth_floor_gbs), or above C(latency_factor) times the fleet's latency or above
    C(latency_ceiling_us). A node with two or more measured peers whose every pair failed is reported as the node, not
    as its links.
  - With O(report_dir) it writes C(fabric-latest.json), C(fabric-latest.md), C(fabric-latest.junit.xml),
    C(torchfleet_fabric.prom) and a timestamped copy C(fabric-<UTC time>.json), keeping the newest O(keep), and names
    the links that got worse than in the previous C(fabric-latest.json).
options:
  log_lines:
    description: The end of the fabric job's log on O(reporter) (the C(log_tail) of M(torchfleet.cluster.torchrun_job)).
    type: list
    elements: str
    required: true
  reporter:
    description: Inventory name of the node whose log holds the result (rank 0, the master), for the messages.
    type: str
    required: true
  members:
    description: Inventory names of the job's nodes in node-rank order; the result must name exactly these.
    type: list
    elements: str
    required: true
  thresholds:
    description:
      - C(bandwidth_fraction) (default 0.5, above 0 and at most 1), C(bandwidth_floor_gbs) (GB/s, 0 for none),
        C(latency_factor) (default 3, at least 1), C(latency_ceiling_us) (0 for none) and C(busbw_floor_gbs) (the
        all-reduce bus bandwidth at the largest size, GB/s, 0 for none). Missing or null keys take the defaults.
    type: dict
    default: {}
  report_dir:
    description: Directory on the controller for the reports; none are written without it.
    type: path
  keep:
    description: Timestamped JSON copies kept in O(report_dir); 0 keeps all.
    type: int
    default: 10
  compare_previous:
    description: Compare with the previous C(fabric-latest.json) of O(report_dir) and name the links that got worse.
    type: bool
    default: true
  degradation_fraction:
    description: A link got worse when its bandwidth is below this fraction of the previous run's, or its latency above
      the previous run's divided by it.
    type: float
    default: 0.8
  max_rows:
    description: Links listed in RV(lines).
    type: int
    default: 50
extends_documentation_fragment:
  - torchfleet.cluster.attributes
attributes:
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
  check_mode:
    support: full
    details:
      - It only reads its inputs and writes the reports on the controller; the role does not start the job in check mode.
  diff_mode:
    support: none
notes:
  - Bandwidths are in GB/s (10^9 bytes per second) as nccl-tests reports them; the Prometheus gauges use bytes per second.
seealso:
  - module: torchfleet.cluster.torchrun_job
'''

EXAMPLES = r'''
- name: Judge the fabric and write the reports
  torchfleet.cluster.fabric_report:
    log_lines: "{{ fabric_job.job.log_tail }}"
    reporter: node0
    members: [node0, node1, node2]
    thresholds:
      bandwidth_fraction: 0.5
      latency_factor: 3
    report_dir: reports
  run_once: true
  delegate_to: localhost
  register: fabric_verdict
'''

RETURN = r'''
passed:
  description: True when no node, link or all-reduce finding was made.
  returned: always
  type: bool
summary:
  description: One line, the first of RV(lines) - pass or fail, the slowest link and the all-reduce bus bandwidth at the largest size.
  returned: always
  type: str
  sample: "torchfleet fabric: PASS (3 nodes, 6 directed links (gloo); slowest link node1 -> node2 1.912 GB/s, 61.0 us; ...)"
lines:
  description: RV(summary), each finding, each degraded link and the link table, one line each.
  returned: always
  type: list
  elements: str
failures:
  description: One message per finding, naming the node or the link, the measured and the expected value.
  returned: always
  type: list
  elements: str
  sample: ["node node2 is slow towards all 2 measured peers: node2 -> node0 bandwidth 0.02 GB/s (expected at least 1.1 GB/s, 0.5 x fleet median 2.2 GB/s)"]
report:
  description:
    - The report as written to C(fabric-latest.json) - C(passed), C(generated_at), C(timestamp), C(hosts), C(master),
      C(backend), C(torch), C(world_size), C(settings) (with the C(*_SOCKET_IFNAME) and C(NCCL_IB_*) values the job ran
      with), C(pairs), C(seconds), C(thresholds), C(limits) (C(fleet_bandwidth_gbs), C(fleet_latency_us),
      C(expected_bandwidth_gbs), C(latency_limit_us)), C(slow_nodes), C(findings), C(links) (C(src), C(dst),
      C(bandwidth_gbs), C(latency_us), C(problems)), C(allreduce) (C(bytes), C(seconds), C(algbw_gbs), C(busbw_gbs)),
      C(largest_allreduce), C(slowest_link), C(degraded) and C(previous_generated_at).
  returned: always
  type: dict
files:
  description: The files written, by kind (C(json), C(markdown), C(junit), C(prometheus), C(generation), C(pruned)).
  returned: always
  type: dict
'''
