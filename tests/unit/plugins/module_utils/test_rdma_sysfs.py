# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL_IB_HCA and NCCL_IB_GID_INDEX from sysfs trees of RDMA nodes (fixtures/rdma_sysfs)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible.module_utils.testing import patch_module_args

from ansible_collections.torchfleet.cluster.plugins.module_utils._probe import rdma_sysfs
from ansible_collections.torchfleet.cluster.plugins.modules import rdma_ports
from ansible_collections.torchfleet.cluster.tests.unit.plugins.modules.module_exits import ExitJson, FailJson

FIXTURES = os.path.join(os.path.dirname(__file__), 'fixtures', 'rdma_sysfs')
NODES = sorted(name[:-len('.yml')] for name in os.listdir(FIXTURES) if name.endswith('.yml'))


def load(name):
    with open(os.path.join(FIXTURES, name + '.yml')) as fixture:
        return yaml.safe_load(fixture)


def build_tree(root, tree):
    for relative, content in tree.items():
        path = os.path.join(str(root), relative)
        if relative.endswith('/'):
            os.makedirs(path, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as attribute:
            attribute.write('%s\n' % content)
    return str(root)


def run_module(params):
    with patch_module_args(params):
        with pytest.raises((ExitJson, FailJson)) as caught:
            rdma_ports.main()
    return caught.value.args[0]


@pytest.mark.usefixtures('module_exits')
@pytest.mark.parametrize('name', NODES)
def test_each_recorded_node_gets_the_settings_its_case_says(name, tmp_path, monkeypatch):
    node = load(name)
    warned = []
    monkeypatch.setattr(rdma_ports.AnsibleModule, 'warn', lambda module, warning: warned.append(warning))
    result = run_module(dict(sysfs=build_tree(tmp_path, node['tree']), interface=node['interface'],
                             address=node['address']))
    assert not result.get('failed'), result
    assert result['changed'] is False
    assert (result['nccl_ib_hca'], result['nccl_ib_gid_index'], result['reason']) == (
        node['expected']['hca'], node['expected']['gid_index'], node['expected']['reason']), node['case']
    assert warned == node.get('warnings', [])


def test_ports_list_what_sysfs_says_and_skip_unused_gids(tmp_path):
    ports, refused = rdma_sysfs.read_ports(build_tree(tmp_path, load('roce_single_nic')['tree']))
    assert refused == []
    assert ports == [dict(device='mlx5_0', port=1, state='ACTIVE', link_layer='Ethernet', netdevs=['eth1'], gids=[
        dict(index=0, address='fe80::a5c:9bff:fe2a:31c4', type='IB/RoCE v1', ndev='eth1'),
        dict(index=1, address='fe80::a5c:9bff:fe2a:31c4', type='RoCE v2', ndev='eth1'),
        dict(index=2, address='10.20.0.11', type='IB/RoCE v1', ndev='eth1'),
        dict(index=3, address='10.20.0.11', type='RoCE v2', ndev='eth1'),
    ])]


def roce_port(device, index, ndev='eth1', address='10.20.0.11'):
    return dict(device=device, port=1, state='ACTIVE', link_layer='Ethernet', netdevs=[ndev],
                gids=[dict(index=index, address=address, type='RoCE v2', ndev=ndev)])


def test_roce_ports_with_different_gid_indexes_leave_the_index_to_nccl():
    settings = rdma_sysfs.nccl_settings([roce_port('mlx5_0', 3), roce_port('mlx5_1', 5)], 'eth1', '10.20.0.11')
    assert settings['hca'] == '=mlx5_0:1,mlx5_1:1'
    assert settings['gid_index'] is None
    assert settings['reason'].endswith('the GID index is left to NCCL (the RoCE ports use different indexes)')


def test_without_an_address_any_roce_v2_gid_on_the_interface_is_taken():
    settings = rdma_sysfs.nccl_settings([roce_port('mlx5_0', 3)], 'eth1', '')
    assert (settings['hca'], settings['gid_index']) == ('=mlx5_0:1', 3)


def test_a_gid_without_a_netdev_belongs_to_the_devices_own_interface():
    port = roce_port('mlx5_0', 3)
    port['gids'][0]['ndev'] = None
    assert rdma_sysfs.nccl_settings([port], 'eth1', '10.20.0.11')['gid_index'] == 3
    assert rdma_sysfs.nccl_settings([port], 'eth2', '10.20.0.11')['hca'] == ''


def test_roce_v1_gids_are_not_chosen():
    port = roce_port('mlx5_0', 2)
    port['gids'][0]['type'] = 'IB/RoCE v1'
    assert rdma_sysfs.nccl_settings([port], 'eth1', '10.20.0.11')['hca'] == ''


@pytest.mark.usefixtures('module_exits')
@pytest.mark.parametrize('params, message', [
    (dict(interface='eth1;id'), "interface 'eth1;id' is not a Linux interface name"),
    (dict(interface='eth1', address='10.20.0'), "address '10.20.0' is not an IP address"),
    (dict(sysfs='sys'), "sysfs must be an absolute path, got 'sys'"),
])
def test_unusable_inputs_fail_naming_the_input(params, message):
    result = run_module(params)
    assert result['failed'] is True
    assert result['msg'] == message
