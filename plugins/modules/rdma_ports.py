#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: rdma_ports
short_description: Read a node's InfiniBand and RoCE ports from sysfs and the NCCL settings they imply
version_added: 0.1.0
description:
  - Lists every port of every device under C(/sys/class/infiniband) with its state, link layer, network
    interfaces and used GIDs (index, address, C(IB/RoCE v1) or C(RoCE v2), the netdev it belongs to).
  - Works out C(NCCL_IB_HCA) and C(NCCL_IB_GID_INDEX) for the node's training interface and address.
    Every ACTIVE InfiniBand port is chosen. An ACTIVE RoCE port is chosen only where one of its RoCE v2 GIDs is
    O(address) on O(interface), because NCCL pairs the ranks' HCAs by position and a RoCE port on another network
    cannot reach the peers.
  - The GID index is returned only when every chosen port is RoCE and all use the same index; otherwise NCCL
    chooses it (since NCCL 2.21 it picks a RoCE v2 GID itself).
  - Only reads files. No verbs device is opened and no tool (C(ibv_devinfo), C(show_gids)) runs.
author:
  - torchfleet developers (@torchfleet)
extends_documentation_fragment:
  - torchfleet.cluster.attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
options:
  interface:
    description:
      - The node's training interface, for example C(eth1) or C(bond0); empty when the node has none.
    type: str
    default: ''
  address:
    description:
      - The node's training address on O(interface); empty accepts any address of a RoCE v2 GID on O(interface).
    type: str
    default: ''
  sysfs:
    description:
      - Where sysfs is mounted.
    type: path
    default: /sys
seealso:
  - name: NCCL environment variables
    description: NCCL_IB_HCA and NCCL_IB_GID_INDEX.
    link: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html
'''

EXAMPLES = r'''
- name: Read the RDMA ports and the NCCL settings for the training interface
  torchfleet.cluster.rdma_ports:
    interface: eth1
    address: 10.20.0.11
  register: rdma

- name: Show what NCCL would be told
  ansible.builtin.debug:
    msg: "NCCL_IB_HCA={{ rdma.nccl_ib_hca }} ({{ rdma.reason }})"
'''

RETURN = r'''
ports:
  description: Every port of every RDMA device, in device and port order.
  returned: always
  type: list
  elements: dict
  sample:
    - device: mlx5_0
      port: 1
      state: ACTIVE
      link_layer: Ethernet
      netdevs: [eth1]
      gids:
        - {index: 3, address: 10.20.0.11, type: RoCE v2, ndev: eth1}
nccl_ib_hca:
  description: C(NCCL_IB_HCA) naming the chosen ports exactly (C(=dev:port,...)); empty when no port is chosen.
  returned: always
  type: str
  sample: "=mlx5_0:1"
nccl_ib_gid_index:
  description: C(NCCL_IB_GID_INDEX) of the chosen RoCE ports; null when NCCL should choose it.
  returned: always
  type: int
  sample: 3
reason:
  description: Which ports were chosen and why, or why none was.
  returned: always
  type: str
  sample: RoCE ports mlx5_0:1 with a RoCE v2 GID for 10.20.0.11 on eth1 (GID index 3)
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.torchfleet.cluster.plugins.module_utils._probe import rdma_sysfs


def main():
    module = AnsibleModule(argument_spec=rdma_sysfs.ARGUMENT_SPEC, supports_check_mode=True,
                           **rdma_sysfs.MODULE_OPTIONS)
    rdma_sysfs.run(module)


if __name__ == '__main__':
    main()
