"""What an ECS instance type offers, read from its name (and, for GPU memory, a table).

Alibaba Cloud names GPU types `ecs.<family>-c<C>g<G>.<size>`: C vCPUs for every G GPUs, and
the size gives the vCPUs (`large` 2, `xlarge` 4, `<N>xlarge` 4N). So `ecs.gn6i-c4g1.xlarge` has
4 vCPUs and 1 GPU, `ecs.gn6i-c24g1.24xlarge` 96 vCPUs and 4 GPUs (the GPU instance family tables
in "Instance families", Alibaba Cloud ECS documentation, list the same numbers). A name that does
not follow the pattern is not guessed at: callers skip their check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from infra.config.types import FACTORS, QUANTITY

_GPU_TYPE = re.compile(
    r"^ecs\.[a-z0-9]+-c(?P<c>[1-9][0-9]*)g(?P<g>[1-9][0-9]*)\.(?:(?P<n>[1-9][0-9]*)?(?P<x>x))?large$"
)


@dataclass(frozen=True)
class GpuInstanceSize:
    vcpus: int
    gpus: int


def gpu_instance_size(instance_type: str) -> GpuInstanceSize | None:
    match = _GPU_TYPE.match(instance_type)
    if not match:
        return None
    vcpus = _size_vcpus(match)
    ratio_cpus, ratio_gpus = int(match["c"]), int(match["g"])
    if (vcpus * ratio_gpus) % ratio_cpus:
        return None
    return GpuInstanceSize(vcpus=vcpus, gpus=vcpus * ratio_gpus // ratio_cpus)


def cpu_cores(quantity: str) -> float:
    """A validated Kubernetes CPU quantity (`500m`, `2`, `2.5`) in cores."""
    if quantity.endswith("m"):
        return float(quantity[:-1]) / 1000
    return float(quantity)


# Memory (GiB) of the GPU types whose memory the name does not give, from the same tables.
_GPU_MEMORY_GIB = {
    "ecs.gn6i-c4g1.xlarge": 15,
    "ecs.gn6i-c8g1.2xlarge": 31,
    "ecs.gn6i-c16g1.4xlarge": 62,
    "ecs.gn6i-c24g1.6xlarge": 93,
    "ecs.gn6i-c24g1.12xlarge": 186,
    "ecs.gn6i-c24g1.24xlarge": 372,
    "ecs.gn6v-c8g1.2xlarge": 32,
    "ecs.gn6v-c8g1.16xlarge": 256,
    "ecs.gn7i-c8g1.2xlarge": 30,
    "ecs.gn7i-c16g1.4xlarge": 60,
}
# General-purpose (g), compute-optimized (c) and memory-optimized (r) families of the 5th
# generation on: the family letter is the GiB per vCPU ("Instance families": 1:4, 1:2, 1:8),
# the size the vCPUs as for GPU types. `ecs.g7.xlarge` is 4 vCPUs, 16 GiB.
_GiB_PER_VCPU = {"c": 2, "g": 4, "r": 8}
_CPU_TYPE = re.compile(
    r"^ecs\.(?P<family>[cgr])[5-9][a-z]*\.(?:(?P<n>[1-9][0-9]*)?(?P<x>x))?large$"
)


@dataclass(frozen=True)
class InstanceShape:
    """What one instance of a type has: vCPUs, memory (GiB), GPUs (0 for none)."""

    vcpus: int
    memory_gib: int | None  # None: a GPU type whose memory is not in the table
    gpus: int


def instance_shape(instance_type: str) -> InstanceShape | None:
    """The shape of an ECS type read from its name (and the GPU memory table), or None."""
    gpu = gpu_instance_size(instance_type)
    if gpu is not None:
        return InstanceShape(gpu.vcpus, _GPU_MEMORY_GIB.get(instance_type), gpu.gpus)
    match = _CPU_TYPE.match(instance_type)
    if not match:
        return None
    vcpus = _size_vcpus(match)
    return InstanceShape(vcpus, vcpus * _GiB_PER_VCPU[match["family"]], 0)


def _size_vcpus(match: re.Match[str]) -> int:
    """`large` 2, `xlarge` 4, `<N>xlarge` 4N."""
    return 4 * int(match["n"] or 1) if match["x"] else 2


def memory_mib(quantity: str) -> float:
    """A validated Kubernetes memory quantity (`512Mi`, `4Gi`, `1G`, bytes) in MiB."""
    match = QUANTITY.fullmatch(quantity)
    if match is None:
        raise ValueError(f"not a Kubernetes quantity: {quantity!r}")
    return float(match.group(1)) * FACTORS[match.group(2) or ""] / 2**20
