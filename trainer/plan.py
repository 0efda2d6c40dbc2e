"""Decide what this process does from the requested strategy and its `TF_CONFIG` task.

Pure Python, like `tf_config`: every combination that cannot work is refused here, before
TensorFlow starts, with a message naming `--strategy / TFTRAIN_STRATEGY`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from trainer.errors import UsageError
from trainer.tf_config import ClusterConfig

STRATEGIES = ("auto", "parameter_server", "multi_worker_mirrored", "single")


class Role(Enum):
    TRAINER = "trainer"  # runs the training loop itself: one process, or an MWMS worker
    COORDINATOR = "coordinator"  # the ParameterServerStrategy chief: schedules steps
    SERVER = "server"  # a ParameterServerStrategy ps or worker: serves until stopped
    EVALUATOR = "evaluator"  # evaluates each new checkpoint
    IDLE = "idle"  # strategy `single` in a cluster: only the chief trains, the others exit


class PlanError(UsageError):
    """The strategy does not fit the cluster; the message says what would."""


@dataclass(frozen=True)
class Plan:
    strategy: str  # parameter_server, multi_worker_mirrored or single (never auto)
    role: Role
    # The one process that writes checkpoints, summaries and the export.
    is_writer: bool


def make_plan(requested: str, config: ClusterConfig | None) -> Plan:
    if requested not in STRATEGIES:
        raise PlanError(f"unknown strategy {requested!r}; allowed: {', '.join(STRATEGIES)}")
    if config is None:
        if requested in ("auto", "single"):
            return Plan("single", Role.TRAINER, is_writer=True)
        raise PlanError(
            f"--strategy / TFTRAIN_STRATEGY {requested} needs a cluster in TF_CONFIG; "
            "use auto or single to train in one process"
        )
    strategy = _resolve(requested, config)
    task = config.task
    if task.type == "evaluator":
        return Plan(strategy, Role.EVALUATOR, is_writer=False)
    # TensorFlow's convention: the chief, or worker 0 when there is no chief, is in charge.
    leader = ("chief", 0) if config.has("chief") else ("worker", 0)
    is_leader = (task.type, task.index) == leader
    if strategy == "parameter_server":
        role = Role.COORDINATOR if task.type == "chief" else Role.SERVER
        return Plan(strategy, role, is_writer=task.type == "chief")
    if strategy == "multi_worker_mirrored":
        return Plan(strategy, Role.TRAINER, is_writer=is_leader)
    return Plan(strategy, Role.TRAINER if is_leader else Role.IDLE, is_writer=is_leader)


def _resolve(requested: str, config: ClusterConfig) -> str:
    strategy = requested
    if requested == "auto":
        strategy = "parameter_server" if config.has("ps") else "multi_worker_mirrored"
    if strategy == "parameter_server" and not (
        config.has("ps") and config.has("chief") and config.has("worker")
    ):
        raise PlanError(
            "--strategy / TFTRAIN_STRATEGY parameter_server needs ps, worker and chief (or "
            f"master) tasks in the TF_CONFIG cluster; it has {sorted(config.cluster)}"
        )
    if strategy == "multi_worker_mirrored" and config.has("ps"):
        raise PlanError(
            "--strategy / TFTRAIN_STRATEGY multi_worker_mirrored uses no ps, but the TF_CONFIG "
            "cluster has ps tasks; use auto or parameter_server"
        )
    if strategy == "multi_worker_mirrored" and not (config.has("worker") or config.has("chief")):
        raise PlanError("multi_worker_mirrored needs worker or chief tasks in the cluster")
    return strategy
