# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/launch: NCCL_IB_HCA and NCCL_IB_GID_INDEX in cluster.env come from the plan's reading of the node's
RDMA ports only where it was asked exactly what launch would ask, from launch's own reading otherwise, and
from the override variables where they are set."""

from __future__ import annotations

import os

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.torchfleet.cluster.tests.unit.roles.role_templar import load_plugins

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "launch")
NODE = {
    "inventory_hostname": "node1",
    "cluster_facts": {"master": "node0", "ranks": ["node0", "node1"], "node_rank": 1, "interface": "eth1",
                      "user": "trainer", "ports": {"rpc": 29500, "ddp": 12355, "rendezvous": 29400},
                      "addresses": {"node0": "10.20.0.10", "node1": "10.20.0.11"}, "master_address": "10.20.0.10"},
    "_launch_master_address": "10.20.0.10",
    "_launch_prefix": "/opt/miniconda3/envs/train",
    "_launch_nproc": 1,
}
ASKED = {"interface": "eth1", "address": "10.20.0.11"}
ROCE = {"changed": False, "nccl_ib_hca": "=mlx5_0:1", "nccl_ib_gid_index": 3, "reason": "RoCE ports mlx5_0:1"}


@pytest.fixture(autouse=True, scope="module")
def plugins():
    load_plugins()


def rdma_settings(**variables):
    loader = DataLoader()
    scope = dict(loader.load_from_file(os.path.join(ROLE, "defaults", "main.yml")))
    scope.update(loader.load_from_file(os.path.join(ROLE, "vars", "main.yml"), trusted_as_template=True))
    scope.update(NODE)
    scope.update(variables)
    settings = Templar(loader=loader, variables=scope).template(trust_as_template("{{ _launch_settings }}"))
    return {key: value for key, value in settings.items() if key.startswith("NCCL_IB_")}


def planned(answer, asked=None):
    return {"cluster_plan": {"answers": {"launch_rdma": answer}},
            "cluster_plan_checks": {"launch_rdma": {"module": "rdma_ports", "params": asked or ASKED}}}


def test_the_plans_reading_is_written():
    assert rdma_settings(**planned(ROCE)) == {"NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_GID_INDEX": "3"}


def test_launchs_own_reading_is_written_where_there_is_no_plan():
    assert rdma_settings(_launch_rdma_read=ROCE) == {"NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_GID_INDEX": "3"}


def test_a_plan_asked_about_another_interface_is_not_taken():
    other = dict(ROCE, nccl_ib_hca="=mlx5_1:1")
    assert rdma_settings(_launch_rdma_read=ROCE, **planned(other, {"interface": "eth2", "address": "10.99.0.11"})) == {
        "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_GID_INDEX": "3"}


def test_a_failed_plan_answer_is_no_answer():
    assert rdma_settings(_launch_rdma_read=ROCE, **planned({"failed": True, "msg": "x"})) == {
        "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_GID_INDEX": "3"}


def test_a_node_without_rdma_ports_gets_no_key():
    assert rdma_settings(**planned({"nccl_ib_hca": "", "nccl_ib_gid_index": None})) == {}


def test_infiniband_without_a_gid_index_writes_only_the_ports():
    assert rdma_settings(**planned({"nccl_ib_hca": "=mlx5_0:1,mlx5_1:1", "nccl_ib_gid_index": None})) == {
        "NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1"}


@pytest.mark.parametrize("hca, gid_index, expected", [
    ("=mlx5_2:1", 7, {"NCCL_IB_HCA": "=mlx5_2:1", "NCCL_IB_GID_INDEX": "7"}),
    ("", -1, {}),
    ("^=mlx5_bond_0", None, {"NCCL_IB_HCA": "^=mlx5_bond_0", "NCCL_IB_GID_INDEX": "3"}),
])
def test_the_override_variables_win(hca, gid_index, expected):
    assert rdma_settings(launch_nccl_ib_hca=hca, launch_nccl_ib_gid_index=gid_index, **planned(ROCE)) == expected


def test_nothing_is_read_when_both_are_given():
    scope_variables = {"launch_nccl_ib_hca": "", "launch_nccl_ib_gid_index": -1}
    loader = DataLoader()
    scope = dict(loader.load_from_file(os.path.join(ROLE, "vars", "main.yml"), trusted_as_template=True))
    scope.update(scope_variables)
    assert Templar(loader=loader, variables=scope).template(trust_as_template("{{ _launch_rdma_wanted }}")) is False
