"""GPU instance sizes read from the type name, against Alibaba Cloud's instance family tables."""

from __future__ import annotations

import pytest

from infra.config.instance_types import (
    GpuInstanceSize,
    InstanceShape,
    cpu_cores,
    gpu_instance_size,
    instance_shape,
    memory_mib,
)

# (type, vCPUs, GPUs) as the ECS "Instance families" GPU tables list them.
DOCUMENTED = [
    ("ecs.gn6i-c4g1.xlarge", 4, 1),  # NVIDIA T4
    ("ecs.gn6i-c8g1.2xlarge", 8, 1),
    ("ecs.gn6i-c24g1.24xlarge", 96, 4),
    ("ecs.gn6v-c8g1.2xlarge", 8, 1),  # NVIDIA V100
    ("ecs.gn6v-c8g1.16xlarge", 64, 8),
    ("ecs.gn7i-c32g1.32xlarge", 128, 4),  # NVIDIA A10
]


@pytest.mark.parametrize(("name", "vcpus", "gpus"), DOCUMENTED)
def test_documented_gpu_types(name: str, vcpus: int, gpus: int) -> None:
    assert gpu_instance_size(name) == GpuInstanceSize(vcpus=vcpus, gpus=gpus)


@pytest.mark.parametrize("name", ["ecs.g7.xlarge", "ecs.gn6i-c4g1.3large", "", "gn6i-c4g1.xlarge"])
def test_names_off_the_pattern_are_not_guessed(name: str) -> None:
    assert gpu_instance_size(name) is None


@pytest.mark.parametrize(("quantity", "cores"), [("500m", 0.5), ("2", 2.0), ("2.5", 2.5)])
def test_cpu_cores(quantity: str, cores: float) -> None:
    assert cpu_cores(quantity) == cores


# (type, vCPUs, GiB, GPUs) as the ECS "Instance families" tables list them.
SHAPES = [
    ("ecs.g7.xlarge", 4, 16, 0),
    ("ecs.g7.2xlarge", 8, 32, 0),
    ("ecs.c7.large", 2, 4, 0),
    ("ecs.r7.4xlarge", 16, 128, 0),
    ("ecs.gn6i-c4g1.xlarge", 4, 15, 1),
    ("ecs.gn6v-c8g1.2xlarge", 8, 32, 1),
]


@pytest.mark.parametrize(("name", "vcpus", "gib", "gpus"), SHAPES)
def test_documented_shapes(name: str, vcpus: int, gib: int, gpus: int) -> None:
    assert instance_shape(name) == InstanceShape(vcpus, gib, gpus)


@pytest.mark.parametrize("name", ["ecs.hfg7.xlarge", "ecs.t6-c1m2.large", "ecs.g4.xlarge"])
def test_other_families_are_not_guessed(name: str) -> None:
    assert instance_shape(name) is None


@pytest.mark.parametrize(("quantity", "mib"), [("512Mi", 512), ("4Gi", 4096), ("1048576", 1)])
def test_memory_mib(quantity: str, mib: float) -> None:
    assert memory_mib(quantity) == mib


@pytest.mark.parametrize(
    ("name", "size"),
    [
        # The rule, C vCPUs for every G GPUs, where G is not 1: c4g2 at 2 vCPUs is 1 GPU, at
        # 8 vCPUs 4 GPUs.
        ("ecs.gnx-c4g2.large", GpuInstanceSize(vcpus=2, gpus=1)),
        ("ecs.gnx-c4g2.2xlarge", GpuInstanceSize(vcpus=8, gpus=4)),
        # 4 vCPUs of a c8g1 family would be half a GPU: no such type, not guessed.
        ("ecs.gn6i-c8g1.xlarge", None),
        ("ecs.gnx-c3g2.xlarge", None),
    ],
)
def test_the_gpu_ratio_gives_whole_gpus_or_nothing(name: str, size: object) -> None:
    found = gpu_instance_size(name)
    assert found == size
    if found is not None:
        assert type(found.gpus) is int  # a count, written into the price table as one


def test_a_quantity_that_is_not_one_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"^not a Kubernetes quantity: 'lots'$"):
        memory_mib("lots")
