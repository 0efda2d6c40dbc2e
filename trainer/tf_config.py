"""Parse a Kubeflow TFJob `TF_CONFIG` into a validated description of this process's task.

Pure Python on purpose (no TensorFlow): it runs before TensorFlow is imported, so a bad
`TF_CONFIG` is reported in a second instead of after a slow import or, worse, a hang while
TensorFlow waits for tasks that do not exist.

TFJob names the coordinator `master` in older operators; TensorFlow's
ParameterServerStrategy only knows `chief`, so `master` is renamed everywhere.

The evaluator comes in two shapes. TF2 wants it outside the training cluster (it only reads
checkpoints; a coordinator that knew of it would try to reach it), which is what tftrain
generates by default. Kubeflow's training-operator lists it in the cluster like any replica
(since PR #1146, 2020; `genClusterSpec` in pkg/controller.v1/tensorflow/tensorflow.go).
Both are accepted: an `evaluator` key is dropped here, so no cluster resolver built from
`ClusterConfig.cluster` ever dials it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from trainer.errors import UsageError

CLUSTER_TYPES = ("chief", "worker", "ps")
OUTSIDE_CLUSTER = "evaluator"  # accepted as a cluster key, never kept
TASK_TYPES = (*CLUSTER_TYPES, "evaluator")
ALIASES = {"master": "chief"}


class TFConfigError(UsageError):
    """`TF_CONFIG` is malformed; the message says what is wrong and what is allowed."""


@dataclass(frozen=True)
class Task:
    type: str
    index: int

    def __str__(self) -> str:
        return f"{self.type}:{self.index}"


@dataclass(frozen=True)
class ClusterConfig:
    """The training cluster (task type -> addresses, `master` already renamed, no
    evaluator) and this task."""

    cluster: dict[str, tuple[str, ...]]
    task: Task
    environment: str | None = None

    def peers(self) -> list[str]:
        """Every other task of the cluster, as `type:index`."""
        every = (
            Task(kind, index)
            for kind, addresses in self.cluster.items()
            for index in range(len(addresses))
        )
        return [str(task) for task in every if task != self.task]

    def has(self, task_type: str) -> bool:
        return bool(self.cluster.get(task_type))

    def hosts(self) -> list[str]:
        """Host names of every task, for `no_proxy`."""
        addresses = (address for tasks in self.cluster.values() for address in tasks)
        return sorted({address.rsplit(":", 1)[0] for address in addresses})

    def all_local(self) -> bool:
        """True when every task runs on this machine (the local launcher), so they share
        its CPU cores."""
        return all(host in ("localhost", "127.0.0.1", "[::1]") for host in self.hosts())


def parse_tf_config(raw: str | None) -> ClusterConfig | None:
    """Return the parsed config, or None when `TF_CONFIG` is unset or blank (one process)."""
    if raw is None or not raw.strip():
        return None
    try:
        document = json.loads(raw)
    except json.JSONDecodeError as error:
        raise TFConfigError(f"TF_CONFIG is not valid JSON ({error}): {raw[:200]!r}") from None
    if not isinstance(document, dict):
        raise TFConfigError("TF_CONFIG must be a JSON object with 'cluster' and 'task'")
    cluster = _parse_cluster(document.get("cluster"))
    task = _parse_task(document.get("task"), cluster)
    environment = document.get("environment")
    if environment is not None and not isinstance(environment, str):
        raise TFConfigError(f"TF_CONFIG environment must be a string, got {environment!r}")
    return ClusterConfig(cluster=cluster, task=task, environment=environment)


def _canonical(task_type: object) -> object:
    return ALIASES.get(task_type, task_type) if isinstance(task_type, str) else task_type


def _parse_cluster(cluster: object) -> dict[str, tuple[str, ...]]:
    if not isinstance(cluster, dict) or not cluster:
        raise TFConfigError(
            "TF_CONFIG needs a non-empty 'cluster' object mapping task types "
            f"{', '.join(CLUSTER_TYPES)} (or master) to lists of host:port, got {cluster!r}"
        )
    parsed: dict[str, tuple[str, ...]] = {}
    for key, addresses in cluster.items():
        task_type = _canonical(key)
        if task_type not in (*CLUSTER_TYPES, OUTSIDE_CLUSTER):
            raise TFConfigError(
                f"TF_CONFIG cluster has unknown task type {key!r}; allowed: "
                f"{', '.join(CLUSTER_TYPES)}, master or {OUTSIDE_CLUSTER}"
            )
        if task_type in parsed:
            raise TFConfigError("TF_CONFIG cluster lists both 'master' and 'chief'; use one")
        if not isinstance(addresses, list) or not all(_is_address(a) for a in addresses):
            raise TFConfigError(
                f"TF_CONFIG cluster[{key!r}] must be a list of 'host:port' strings, "
                f"got {addresses!r}"
            )
        if task_type != OUTSIDE_CLUSTER:  # Kubeflow's shape: no training task dials it
            parsed[task_type] = tuple(addresses)
    if len(parsed.get("chief", ())) > 1:
        raise TFConfigError(f"TF_CONFIG cluster may have one chief, got {parsed['chief']}")
    return parsed


def _is_address(address: object) -> bool:
    if not isinstance(address, str):
        return False
    host, _, port = address.rpartition(":")
    return bool(host) and port.isdigit()


def _parse_task(task: object, cluster: dict[str, tuple[str, ...]]) -> Task:
    if not isinstance(task, dict):
        raise TFConfigError(
            f'TF_CONFIG needs a \'task\' object like {{"type": "worker", "index": 0}}, got {task!r}'
        )
    task_type = _canonical(task.get("type"))
    if task_type not in TASK_TYPES:
        raise TFConfigError(
            f"TF_CONFIG task type {task.get('type')!r} is unknown; allowed: "
            f"{', '.join(TASK_TYPES)} or master"
        )
    index = task.get("index", 0)
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise TFConfigError(f"TF_CONFIG task index must be an integer >= 0, got {index!r}")
    if task_type != "evaluator":
        size = len(cluster.get(task_type, ()))
        if index >= size:
            raise TFConfigError(
                f"TF_CONFIG task {task_type}:{index} is not in the cluster, which has "
                f"{size} {task_type} task(s)"
            )
    return Task(type=task_type, index=index)
