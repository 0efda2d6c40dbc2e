"""What an ECS GPU instance type offers, read from its name.

Alibaba Cloud names GPU types `ecs.<family>-c<C>g<G>.<size>`: C vCPUs for every G GPUs, and
the size gives the vCPUs (`large` 2, `xlarge` 4, `<N>xlarge` 4N). So `ecs.gn6i-c4g1.xlarge` has
4 vCPUs and 1 GPU, `ecs.gn6i-c24g1.24xlarge` 96 vCPUs and 4 GPUs (the GPU instance family tables
in "Instance families", Alibaba Cloud ECS documentation, list the same numbers). A name that does
not follow the pattern is not guessed at: callers skip their check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
    vcpus = 4 * int(match["n"] or 1) if match["x"] else 2
    ratio_cpus, ratio_gpus = int(match["c"]), int(match["g"])
    if (vcpus * ratio_gpus) % ratio_cpus:
        return None
    return GpuInstanceSize(vcpus=vcpus, gpus=vcpus * ratio_gpus // ratio_cpus)


def cpu_cores(quantity: str) -> float:
    """A validated Kubernetes CPU quantity (`500m`, `2`, `2.5`) in cores."""
    if quantity.endswith("m"):
        return float(quantity[:-1]) / 1000
    return float(quantity)
