"""What one pod may request on a node, against numbers worked by hand from ACK's documents.

The reserve (ACK "Node resource reservation policy"): CPU 6 % of core 1, 1 % of core 2, 0.5 %
of cores 3-4, 0.25 % above; memory min(11 MiB x 256 pods + 255 MiB = 3071 MiB, 25 % of
capacity); eviction 100 MiB; capacity = nominal GiB x 1024 x 7,925,980 / 8,388,608 (ACK's
example node). DaemonSets with Terway: 350m + 130m + 100m + 10m = 590m and
200 + 176 + 200 + 80 = 656 MiB. Autoscaled pools: at most 70 % of the node.
"""

from __future__ import annotations

import pytest

from infra.config import ConfigError, parse_config
from infra.config.instance_types import instance_shape
from infra.config.node_fit import Room, ack_node_room, eci_room, reserved_millicores

# (type, autoscaled, millicores, MiB, GPUs), each worked out below its row.
ACK_ROOMS = [
    # 4000 - 80 - 590 = 3330, capped at 2800. 15 GiB: 15360 x 0.944852 = 14512.9 capacity,
    # - 3071 - 100 - 656 = 10685.9, under the cap 10752.
    ("ecs.gn6i-c4g1.xlarge", True, 2800, 10685, 1),
    # The same node in a fixed pool: no cap.
    ("ecs.gn6i-c4g1.xlarge", False, 3330, 10685, 1),
    # 16 GiB: 15480.5 - 3071 - 100 - 656 = 11653.5.
    ("ecs.g7.xlarge", False, 3330, 11653, 0),
    # ... and capped at 70 %: 2800m and 11468.8 MiB.
    ("ecs.g7.xlarge", True, 2800, 11468, 0),
    # 8 vCPUs: reserve 60 + 10 + 10 + 4 x 2.5 = 90; 8000 - 90 - 590 = 7320.
    # 32 GiB: 30960.9 - 3071 - 100 - 656 = 27133.9.
    ("ecs.g7.2xlarge", False, 7320, 27133, 0),
    # 8 GiB, ACK's example node: capacity 7740.2 MiB, the reserve is its 25 % cap (1935.1):
    # 7740.2 - 1935.1 - 100 = 5705.2 allocatable (the example reports 5688.2), - 656 = 5049.2.
    ("ecs.c7.xlarge", False, 3330, 5049, 0),
]


@pytest.mark.parametrize(("name", "autoscaled", "millicores", "mib", "gpus"), ACK_ROOMS)
def test_ack_room_matches_the_hand_worked_numbers(
    name: str, autoscaled: bool, millicores: int, mib: int, gpus: int
) -> None:
    shape = instance_shape(name)
    assert shape is not None
    assert ack_node_room(shape, "terway", autoscaled) == Room(millicores, mib, gpus)


@pytest.mark.parametrize(("vcpus", "reserved"), [(1, 60), (2, 70), (4, 80), (8, 90), (64, 230)])
def test_cpu_reserve_tiers(vcpus: int, reserved: int) -> None:
    assert reserved_millicores(vcpus) == reserved


def test_flannel_nodes_leave_more_than_terway_ones() -> None:
    # kube-flannel-ds asks 100m/50Mi where Terway's two containers ask 350m/200Mi.
    shape = instance_shape("ecs.g7.xlarge")
    assert shape is not None
    assert ack_node_room(shape, "flannel", False) == Room(3580, 11803, 0)


def test_an_eci_pod_has_the_whole_type() -> None:
    shape = instance_shape("ecs.gn6i-c4g1.xlarge")
    assert shape is not None
    assert eci_room(shape) == Room(4000, 15360, 1)


def test_a_gpu_type_without_memory_facts_checks_cpu_only() -> None:
    shape = instance_shape("ecs.gn7i-c32g1.8xlarge")
    assert shape is not None and shape.memory_gib is None
    assert ack_node_room(shape, "terway", True).memory_mib is None


def test_an_eci_type_without_memory_facts_checks_cpu_only() -> None:
    shape = instance_shape("ecs.gn7i-c32g1.8xlarge")
    assert shape is not None
    assert eci_room(shape) == Room(32000, None, 1)


def test_a_request_over_the_room_is_refused_with_where_the_number_comes_from() -> None:
    # ecs.g7.xlarge in a fixed pool leaves 11653 MiB (ACK_ROOMS above).
    with pytest.raises(ConfigError) as raised:
        parse_config(
            {
                "image": "registry.example.com/tftrain/trainer:1",
                "cluster": {"kind": "ack", "cpuPool": {"size": 2}},
                "network": {"zoneId": "cn-hangzhou-i"},
                "ps": {"memory": "12Gi"},
            }
        )
    assert str(raised.value) == (
        "invalid stack config:\n"
        '  - tftrain:ps.memory = "12Gi": must be at most 11653Mi: what one ecs.g7.xlarge node '
        "of cluster.cpuPool can give a pod, after ACK's reserve, the node's DaemonSets and, if "
        'the pool autoscales, ACK\'s 70 % guidance (docs/deploy.md "Sizing requests")'
    )
