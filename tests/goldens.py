"""Golden consequence summaries: a stack change each, the summary `--diff` opens with.

Before and after are built here from the checked-in stacks (not from git history), so the
goldens depend only on what the program renders. When the rendered objects change on
purpose, regenerate them and review every changed line by hand:

    .venv/bin/python -m tests.goldens
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from infra.config import PROJECT, read_stack_entries, stack_file
from infra.render import render_stack
from infra.render.summary import summarize
from tests.run_ids import run_id
from tests.shared_values import shared

GOLDEN_DIR = Path(__file__).resolve().parent / "goldens"
Edit = Callable[[dict[str, Any]], None]


def _set(path: str, value: Any) -> Edit:
    """An edit setting `tftrain:<first>.<rest...>` to `value`, like `pulumi config set --path`."""
    first, *rest = path.split(".")

    def edit(entries: dict[str, Any]) -> None:
        node = entries.setdefault(f"{PROJECT}:{first}", {})
        for key in rest[:-1]:
            node = node.setdefault(key, {})
        node[rest[-1]] = value

    return edit


def _both(*edits: Edit) -> Edit:
    def edit(entries: dict[str, Any]) -> None:
        for each in edits:
            each(entries)

    return edit


def _pin_run_id(entries: dict[str, Any]) -> None:
    """`job.runId` set to the id the stack derives now, as someone continuing a run would."""
    prefix = f"{PROJECT}:"
    raw = {
        key.removeprefix(prefix): value for key, value in entries.items() if key.startswith(prefix)
    }
    _set("job.runId", run_id(raw))(entries)


def _no_edit(entries: dict[str, Any]) -> None:
    """A no-op: the stack file is rewritten (comments and key order lost), nothing else."""


@dataclass(frozen=True)
class Case:
    name: str
    stack: str
    edit: Edit

    @property
    def golden(self) -> Path:
        return GOLDEN_DIR / f"{self.name}.txt"


CASES = (
    Case("learning-rate", "ack-gpu", _set("hyperparams.learningRate", 0.01)),
    Case("worker-added", "ack-cpu", _set("worker.number", 5)),
    # Two GPUs per worker need an ECI type with two: ecs.gn6i-c24g1.12xlarge (48 vCPUs, 2 T4s).
    Case(
        "gpu-added",
        "ask-eci",
        _both(_set("worker.gpuCount", 2), _set("cluster.eciGpuSpec", "ecs.gn6i-c24g1.12xlarge")),
    ),
    Case(
        "tensorboard-public",
        "ack-gpu",
        _both(
            _set("tensorboard.public", True),
            _set("tensorboard.allowedSourceRanges", ["203.0.113.0/24"]),
        ),
    ),
    Case("no-op", "ack-gpu", _no_edit),
    # ASK's public API endpoint is an argument of the cluster, not an SLB of the stack's own.
    Case("ask-public-api-server", "ask-eci", _set("cluster.publicApiServer", True)),
    Case("gpu-worker-removed", "ack-gpu", _set("worker.number", 1)),
    Case("cpu-pool-grown", "ack-cpu", _set("cluster.cpuPool.size", 4)),
    # The autoscaled GPU pool made a fixed 3 nodes for 2 one-GPU workers: one node idles.
    Case(
        "gpu-pool-fixed-oversized",
        "ack-gpu",
        _both(_set("cluster.gpuPool.maxSize", 0), _set("cluster.gpuPool.size", 3)),
    ),
    # A pinned run id keeps the run's directory: the new learning rate continues from the
    # checkpoints instead of starting over.
    Case(
        "run-id-pinned-learning-rate",
        "ack-gpu",
        _both(_pin_run_id, _set("hyperparams.learningRate", 0.01)),
    ),
    # Replaces the provider schema forces (infra/render/force_new_fields.py), and what follows
    # from a replaced resource's new id.
    Case("vswitch-cidr-changed", "ack-gpu", _set("network.vswitchCidr", "192.168.16.0/20")),
    Case("nas-storage-type-changed", "ack-gpu", _set("storage.nasStorageType", "Capacity")),
    Case("zone-changed", "ask-eci", _set("network.zoneId", "cn-hangzhou-k")),
    # The training data moves to another prefix: every training pod reads the new one.
    Case("input-prefix-changed", "ack-gpu", _set("data.inputPrefix", "mnist-v2/")),
    # Pull credentials for the stack's own registry, the password as `pulumi config set
    # --secret --path` writes it.
    Case(
        "registry-credentials-added",
        "ask-eci",
        _both(
            _set("imageRegistry.server", "registry-vpc.cn-hangzhou.aliyuncs.com"),
            _set("imageRegistry.username", "tftrain"),
            _set("imageRegistry.password", {"secure": "v1:AAAAgoldenCiphertext=="}),
        ),
    ),
    # A run stack: only its own Kubernetes objects; the platform is not part of its render.
    Case("run-learning-rate", "run-ack", _set("hyperparams.learningRate", 0.01)),
    # The same run pointed at another platform: another cluster.
    Case(
        "run-moved-platform",
        "run-ack",
        _set("cluster.platformStack", "organization/tftrain/platform-ack-2"),
    ),
    # A platform: what its replacements do to every run stack on it.
    Case("platform-zone-changed", "platform-ack", _set("network.zoneId", "cn-hangzhou-k")),
    Case("platform-cpu-pool-grown", "platform-ack", _set("cluster.cpuPool.size", 3)),
    Case(
        "platform-service-cidr-changed",
        "platform-ack",
        _set("network.serviceCidr", "172.22.0.0/20"),
    ),
)


def _render(stack: str, entries: dict[str, Any]) -> str:
    with tempfile.TemporaryDirectory(prefix="tftrain-golden-") as tmp:
        stacks_dir = Path(tmp)
        text = yaml.safe_dump({"config": entries}, sort_keys=True)
        stack_file(stack, stacks_dir).write_text(text)
        return render_stack(stack, stacks_dir)


@shared
def _checked_in(stack: str) -> str:
    return render_stack(stack)


def summary_of(case: Case) -> str:
    """The summary of `case`: its stack as checked in → the stack after the edit."""
    after = copy.deepcopy(read_stack_entries(stack_file(case.stack)))
    case.edit(after)
    old, new = _checked_in(case.stack), _render(case.stack, after)
    return summarize(old, new, case.stack, "before", "after")


def main() -> None:
    GOLDEN_DIR.mkdir(exist_ok=True)
    for case in CASES:
        case.golden.write_text(summary_of(case), encoding="utf-8")
        print(f"wrote {case.golden.relative_to(Path.cwd())}")


if __name__ == "__main__":
    main()
