"""The GPUs a change requests, by replica group and ECI spec, and GPU node pools with more
nodes than GPU replicas to fill them."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from infra.manifests.common import REPLICA_TYPE_LABEL
from infra.manifests.placement import ECI_USE_SPECS
from infra.render.parsed import Render, kind_of_title, name_of_title, training_jobs

GPU_RESOURCE = "nvidia.com/gpu"


@dataclass(frozen=True, order=True)
class _GpuGroup:
    replica_type: str
    eci_spec: str


def _gpus(render: Render) -> dict[_GpuGroup, list[int]]:
    """GPUs per replica of each group, in replica order (Jobs are titled by index)."""
    groups: dict[_GpuGroup, list[int]] = {}
    for job in training_jobs(render).values():
        template = job["spec"]["template"]
        annotations = template.get("metadata", {}).get("annotations", {})
        group = _GpuGroup(
            job["metadata"].get("labels", {}).get(REPLICA_TYPE_LABEL, "?"),
            annotations.get(ECI_USE_SPECS, ""),
        )
        limits = [
            int(c.get("resources", {}).get("limits", {}).get(GPU_RESOURCE, 0))
            for c in template["spec"]["containers"]
        ]
        groups.setdefault(group, []).append(sum(limits))
    return groups


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _gpu_side(per_replica: list[int]) -> str:
    """`3 (3 replicas x 1 GPU)`: the group's total, then replicas x GPUs each."""
    shapes = Counter(gpus for gpus in per_replica if gpus)
    terms = " + ".join(
        f"{_plural(n, 'replica')} x {_plural(gpus, 'GPU')}" for gpus, n in sorted(shapes.items())
    )
    return f"{sum(per_replica)} ({terms})" if terms else "0"


def gpu_lines(old: Render, new: Render) -> list[str]:
    before, after = _gpus(old), _gpus(new)
    total_before, total_after = (sum(map(sum, side.values())) for side in (before, after))
    if not total_before and not total_after:
        return ["GPUs requested: none"]
    if total_before == total_after:
        lines = [f"GPUs requested: {total_after}, unchanged"]
    else:
        lines = [f"GPUs requested: {total_before} → {total_after}"]
    for group in sorted(before.keys() | after.keys()):
        old_side, new_side = before.get(group, []), after.get(group, [])
        if not any(old_side) and not any(new_side):
            continue
        where = f" on ECI {group.eci_spec}" if group.eci_spec else ""
        if _gpu_side(old_side) == _gpu_side(new_side):
            change = f"{_gpu_side(new_side)}, unchanged"
        else:
            change = f"{_gpu_side(old_side)} → {_gpu_side(new_side)}"
        lines.append(f"  {group.replica_type}{where}: {change}")
    return lines


def gpu_pool_lines(new: Render) -> list[str]:
    """GPU node pools with more nodes than GPU replicas: each GPU replica is one pod, so at
    least the surplus nodes hold no GPU work (and are billed by the hour)."""
    gpu_pods = sum(1 for gpus in _gpus(new).values() for n in gpus if n)
    lines = []
    for title, resource in sorted(new.cloud.items()):
        inputs = resource.inputs
        if kind_of_title(title) != "NodePool" or not any(
            GPU_RESOURCE in v for v in inputs.values()
        ):
            continue
        digits = inputs.get("desiredSize", "").strip("'")
        nodes = int(digits) if digits.isdigit() else 0
        if nodes > gpu_pods:
            name = name_of_title(title)
            idle = nodes - gpu_pods
            lines.append(
                f"Idle GPU pool: {name} has {_plural(nodes, 'node')} for "
                f"{_plural(gpu_pods, 'GPU replica')}: at least {_plural(idle, 'node')} idle"
            )
    return lines or ["Idle GPU pool: none"]
