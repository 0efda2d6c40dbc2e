"""Replica names, addresses and `TF_CONFIG` of every replica: pure Python, Kubeflow TFJob rules.

Kubeflow's TFJob is the contract, so a trainer written for TFJob runs unchanged here:
- cluster keys are the lower-case replica types (chief, master, worker, ps, evaluator, in
  the order `StackConfig.replica_groups` lists them and the launcher starts them). The
  evaluator only reads checkpoints, so
  by default it appears in no cluster list (TF2's shape); `job.evaluatorInCluster: true`
  lists it like any replica, the shape Kubeflow's training-operator has generated since
  its PR #1146, for trainers written against that;
- each replica is reachable at `<job>-<type>-<index>.<namespace>.svc:<port>` through a
  headless Service of the same name (a sweep's trial: `<job>-<run id>-<type>-<index>`);
- every replica's `TF_CONFIG` is `{"cluster", "task": {"type", "index"}, "environment": "cloud"}`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from infra.config import StackConfig

TF_PORT = 2222


@dataclass(frozen=True)
class Replica:
    type: str
    index: int
    name: str
    host: str
    port: int

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class Topology:
    job: str
    replicas: tuple[Replica, ...]
    evaluator_in_cluster: bool = False

    @property
    def cluster_spec(self) -> dict[str, list[str]]:
        """Every replica grouped by type; the evaluator only if `evaluator_in_cluster`."""
        spec: dict[str, list[str]] = {}
        for replica in self.replicas:
            if replica.type != "evaluator" or self.evaluator_in_cluster:
                spec.setdefault(replica.type, []).append(replica.address)
        return spec

    def tf_config(self, replica: Replica) -> dict[str, object]:
        return {
            "cluster": self.cluster_spec,
            "task": {"type": replica.type, "index": replica.index},
            "environment": "cloud",
        }

    def tf_config_json(self, replica: Replica) -> str:
        # Sorted keys keep the rendered manifests byte-identical between runs.
        return json.dumps(self.tf_config(replica), sort_keys=True, separators=(",", ":"))

    def with_addresses(self, addresses: Mapping[str, tuple[str, int]]) -> Topology:
        """The same replicas at other (host, port)s, keyed by replica name (local runs)."""
        missing = sorted({replica.name for replica in self.replicas} - set(addresses))
        if missing:
            raise ValueError(f"no address given for replicas: {', '.join(missing)}")
        moved = tuple(Replica(r.type, r.index, r.name, *addresses[r.name]) for r in self.replicas)
        return Topology(self.job, moved, self.evaluator_in_cluster)


def replica_name(job: str, replica_type: str, index: int) -> str:
    return f"{job}-{replica_type}-{index}"


def build_topology(config: StackConfig, port: int = TF_PORT) -> Topology:
    # A sweep's trial names its replicas after its run (`StackConfig.run_name`).
    job, namespace = config.run_name, config.job.namespace
    replicas = tuple(
        Replica(
            type=group.type,
            index=index,
            name=replica_name(job, group.type, index),
            host=f"{replica_name(job, group.type, index)}.{namespace}.svc",
            port=port,
        )
        for group in config.replica_groups
        for index in range(group.number)
    )
    return Topology(job, replicas, config.job.evaluator_in_cluster)
