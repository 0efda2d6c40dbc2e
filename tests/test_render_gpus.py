"""The review's GPU lines: the `nvidia.com/gpu` limits of the training Jobs by replica group
and ECI spec, and GPU node pools with more nodes than GPU pods. Expected lines are worked out
by hand from the Jobs below (one pod per Job; a pod's GPUs are its containers' limits summed,
as the device plugin allocates them)."""

from __future__ import annotations

from typing import Any

import pytest

from infra.render.gpus import gpu_lines, gpu_pool_lines
from infra.render.parsed import CloudResource, Render

GPU = "nvidia.com/gpu"
SPEC = "k8s.aliyun.com/eci-use-specs"
POOL = "alicloud:cs/nodePool:NodePool"


def _job(kind: str | None, *gpus: int | None, eci: str | None = None) -> dict[str, Any]:
    containers = [
        {"name": f"c{i}"}
        if n is None
        else {"name": f"c{i}", "resources": {"limits": {GPU: str(n), "cpu": "4"}}}
        for i, n in enumerate(gpus)
    ]
    template: dict[str, Any] = {"spec": {"containers": containers}}
    if eci is not None:
        template["metadata"] = {"annotations": {SPEC: eci}}
    labels = {} if kind is None else {"tftrain.io/replica-type": kind}
    metadata = {"name": "j", "labels": labels}
    return {"kind": "Job", "metadata": metadata, "spec": {"template": template}}


def _render(*jobs: dict[str, Any], cloud: dict[str, CloudResource] | None = None) -> Render:
    objects: dict[str, dict[str, Any]] = {f"Job t/j-{i}": job for i, job in enumerate(jobs)}
    # Not a training Job: its GPUs are nobody's.
    objects["Deployment t/d"] = {"kind": "Deployment", "spec": {"template": {}}}
    return Render(objects=objects, cloud=cloud or {})


def test_no_gpus_on_either_side_is_one_line() -> None:
    cpu = _render(_job("worker", 0), _job("ps", None))
    assert gpu_lines(cpu, cpu) == ["GPUs requested: none"]
    assert gpu_lines(_render(), _render()) == ["GPUs requested: none"]


def test_a_worker_added() -> None:
    old = _render(_job("worker", 1), _job("worker", 1), _job("ps", 0))
    new = _render(_job("worker", 1), _job("worker", 1), _job("worker", 1), _job("ps", 0))
    assert gpu_lines(old, new) == [
        "GPUs requested: 2 → 3",
        "  worker: 2 (2 replicas x 1 GPU) → 3 (3 replicas x 1 GPU)",
    ]


def test_the_same_gpus_are_unchanged_and_a_new_shape_of_the_same_total_is_shown() -> None:
    two_by_one = _render(_job("worker", 1), _job("worker", 1))
    assert gpu_lines(two_by_one, two_by_one) == [
        "GPUs requested: 2, unchanged",
        "  worker: 2 (2 replicas x 1 GPU), unchanged",
    ]
    one_by_two = _render(_job("worker", 2))
    assert gpu_lines(two_by_one, one_by_two) == [
        "GPUs requested: 2, unchanged",
        "  worker: 2 (2 replicas x 1 GPU) → 2 (1 replica x 2 GPUs)",
    ]


def test_groups_in_order_with_their_eci_spec_and_gpu_less_groups_left_out() -> None:
    old = _render(_job("ps", 0))
    new = _render(
        _job("worker", 1, eci="ecs.gn6i-c4g1.xlarge"),
        _job("worker", 2, eci="ecs.gn6i-c8g1.2xlarge"),
        _job("chief", 1, 1),  # two containers: one pod with 2 GPUs
        _job("ps", 0),
        _job(None, 1),  # a Job without its replica type
        _job("evaluator", 0, None),
    )
    assert gpu_lines(old, new) == [
        "GPUs requested: 0 → 6",
        "  ?: 0 → 1 (1 replica x 1 GPU)",
        "  chief: 0 → 2 (1 replica x 2 GPUs)",
        "  worker on ECI ecs.gn6i-c4g1.xlarge: 0 → 1 (1 replica x 1 GPU)",
        "  worker on ECI ecs.gn6i-c8g1.2xlarge: 0 → 2 (1 replica x 2 GPUs)",
    ]


def test_mixed_shapes_in_one_group_and_a_group_removed() -> None:
    old = _render(_job("worker", 1), _job("worker", 2), _job("worker", 0), _job("chief", 1))
    new = _render(_job("worker", 1))
    assert gpu_lines(old, new) == [
        "GPUs requested: 4 → 1",
        "  chief: 1 (1 replica x 1 GPU) → 0",
        "  worker: 3 (1 replica x 1 GPU + 1 replica x 2 GPUs) → 1 (1 replica x 1 GPU)",
    ]


def test_a_group_moving_onto_eci_is_two_groups_and_a_job_may_carry_no_labels() -> None:
    # ACK → ASK: the same workers, now on an ECI GPU spec.
    old = _render(_job("worker", 1), _job("worker", 1))
    on_eci = _job("worker", 1, eci="ecs.gn6i-c4g1.xlarge")
    new = _render(on_eci, on_eci)
    assert gpu_lines(old, new) == [
        "GPUs requested: 2, unchanged",
        "  worker: 2 (2 replicas x 1 GPU) → 0",
        "  worker on ECI ecs.gn6i-c4g1.xlarge: 0 → 2 (2 replicas x 1 GPU)",
    ]
    bare = _job(None, 1)
    del bare["metadata"]["labels"]
    assert gpu_lines(_render(), _render(bare)) == [
        "GPUs requested: 0 → 1",
        "  ?: 0 → 1 (1 replica x 1 GPU)",
    ]


def _pool(desired: str | None, gpu: bool = True) -> CloudResource:
    inputs = {"instanceTypes": "[ecs.gn6i-c4g1.xlarge]"}
    if gpu:
        inputs["labels"] = f"[{{key: {GPU}, value: 'true'}}]"
    if desired is not None:
        inputs["desiredSize"] = desired
    return CloudResource(inputs=inputs)


@pytest.mark.parametrize(
    ("pools", "gpu_jobs", "lines"),
    [
        ({}, 1, ["Idle GPU pool: none"]),
        ({"gpu": _pool("2")}, 2, ["Idle GPU pool: none"]),
        ({"gpu": _pool("2")}, 3, ["Idle GPU pool: none"]),
        (
            {"gpu": _pool("3")},
            1,
            ["Idle GPU pool: gpu has 3 nodes for 1 GPU replica: at least 2 nodes idle"],
        ),
        # The render writes a string value quoted.
        (
            {"gpu": _pool("'2'")},
            1,
            ["Idle GPU pool: gpu has 2 nodes for 1 GPU replica: at least 1 node idle"],
        ),
        (
            {"gpu": _pool("1")},
            0,
            ["Idle GPU pool: gpu has 1 node for 0 GPU replicas: at least 1 node idle"],
        ),
        # No fixed size (an autoscaled pool): nothing said.
        ({"gpu": _pool(None)}, 0, ["Idle GPU pool: none"]),
        ({"gpu": _pool("<computed>")}, 0, ["Idle GPU pool: none"]),
        # A CPU pool's nodes are not GPU nodes.
        ({"cpu": _pool("5", gpu=False)}, 0, ["Idle GPU pool: none"]),
        (
            {"b": _pool("4"), "a": _pool("3")},
            2,
            [
                "Idle GPU pool: a has 3 nodes for 2 GPU replicas: at least 1 node idle",
                "Idle GPU pool: b has 4 nodes for 2 GPU replicas: at least 2 nodes idle",
            ],
        ),
    ],
)
def test_an_idle_gpu_pool(pools: dict[str, CloudResource], gpu_jobs: int, lines: list[str]) -> None:
    cloud = {f"{POOL}  {name}": pool for name, pool in pools.items()}
    # Something else that mentions GPUs is not a pool.
    cloud["alicloud:ecs/instance:Instance  x"] = CloudResource(
        inputs={"desiredSize": "9", "tags": GPU}
    )
    # Two GPUs in one pod is one GPU replica: one node holds it; CPU replicas hold none.
    jobs = [_job("worker", 2) for _ in range(gpu_jobs)] + [_job("ps", 0)]
    assert gpu_pool_lines(_render(*jobs, cloud=cloud)) == lines
