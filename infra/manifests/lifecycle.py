"""The run's lifecycle as Kubernetes expresses it, for every replica's Job.

- End with the chief: the supervisor script (`infra/lifecycle`) in a ConfigMap, mounted
  read-only into every training pod; the container's command is `/bin/sh <script> ...`
  followed by the stack's command. An image without /bin/sh cannot run it: its pods fail
  with a "no such file" container error (see docs/lifecycle.md, Lifecycle).
- Fail fast, survive disruptions: `podFailurePolicy` fails the Job at once on a final exit
  code (a usage error, a command that cannot run) and does not count pods that a
  preemption, eviction or drain took away (`DisruptionTarget`) against `backoffLimit`.
  Both need `restartPolicy: Never`: a retry is a new pod, created by the Job controller.
- A deadline for the run: `job.activeDeadlineSeconds` on every Job.
- All-or-nothing start on ACK: the coscheduling labels of ACK's kube-scheduler, which
  creates a PodGroup from them and binds none of its pods until `min-available` of them
  fit (https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/
  work-with-gang-scheduling, "Labels" method). They are the keys of the original
  (lightweight) coscheduling plugin of kubernetes-sigs/scheduler-plugins, which ACK kept;
  upstream has since moved to `scheduling.x-k8s.io/pod-group` plus a PodGroup object.
  ASK has no nodes to pack (every pod is its own ECI instance) and an existing cluster may
  not run the plugin: no labels there.
"""

from __future__ import annotations

import hashlib
from typing import Any

from infra.config import StackConfig
from infra.lifecycle import (
    EXPORT_SCRIPT,
    EXPORT_SCRIPT_NAME,
    FINAL_EXIT_CODES,
    SCRIPT,
    SCRIPT_NAME,
)
from infra.manifests.common import metadata, stable_labels
from infra.topology import Topology

VOLUME = "tftrain-lifecycle"
MOUNT_PATH = "/etc/tftrain-lifecycle"
SCRIPT_PATH = f"{MOUNT_PATH}/{SCRIPT_NAME}"
EXPORT_SCRIPT_PATH = f"{MOUNT_PATH}/{EXPORT_SCRIPT_NAME}"
READ_ONLY_MODE = 0o444
POD_GROUP_LABEL = "pod-group.scheduling.sigs.k8s.io/name"
POD_GROUP_MIN_LABEL = "pod-group.scheduling.sigs.k8s.io/min-available"
_MAX_LABEL_VALUE = 63


def config_map_name(config: StackConfig) -> str:
    return f"{config.job.name}-lifecycle"


def lifecycle_config_map(config: StackConfig, exports: bool = False) -> dict[str, Any]:
    """The supervisor script, and export.sh when the stack exports its runs (`exports`).
    Stable labels: it is the same for every run."""
    scripts = {SCRIPT_NAME: SCRIPT, **({EXPORT_SCRIPT_NAME: EXPORT_SCRIPT} if exports else {})}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(config_map_name(config), stable_labels(config), config.job.namespace),
        "data": {name: path.read_text() for name, path in scripts.items()},
    }


def lifecycle_volume(config: StackConfig) -> dict[str, Any]:
    return {
        "name": VOLUME,
        "configMap": {"name": config_map_name(config), "defaultMode": READ_ONLY_MODE},
    }


def lifecycle_mount() -> dict[str, Any]:
    return {"name": VOLUME, "mountPath": MOUNT_PATH, "readOnly": True}


def pod_failure_policy(container: str) -> dict[str, Any]:
    return {
        "rules": [
            {
                "action": "FailJob",
                "onExitCodes": {
                    "containerName": container,
                    "operator": "In",
                    "values": list(FINAL_EXIT_CODES),
                },
                # Empty, not absent: the API of Kubernetes 1.26-1.29 marks the field required
                # (an existing cluster may run one); an empty list still means "exit codes".
                "onPodConditions": [],
            },
            {
                "action": "Ignore",
                "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
            },
        ]
    }


def gang_labels(config: StackConfig, topology: Topology) -> dict[str, str]:
    """One PodGroup per run, needing every replica; empty unless gang scheduling applies."""
    if not (config.job.gang_scheduling and config.cluster.kind == "ack"):
        return {}
    return {
        POD_GROUP_LABEL: pod_group_name(config),
        POD_GROUP_MIN_LABEL: str(len(topology.replicas)),
    }


def pod_group_name(config: StackConfig) -> str:
    """`<job>-<run id>`, or `<job>-<hash of the run id>` when that would exceed a label value."""
    name = f"{config.job.name}-{config.job.run_id}"
    if len(name) <= _MAX_LABEL_VALUE:
        return name
    digest = hashlib.sha256(config.job.run_id.encode()).hexdigest()[:10]
    return f"{config.job.name}-{digest}"
