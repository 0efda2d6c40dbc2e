"""Per replica: a headless Service (its stable DNS name) and a batch/v1 Job (its process).

This is the TFJob contract from infra/topology.py made concrete: replica `<job>-<type>-<i>`
is reachable at `<job>-<type>-<i>.<namespace>.svc:2222` because a headless Service of that
name selects exactly that replica's pod.

Job pod templates are immutable. pulumi-kubernetes treats `.spec.template` of a Job as
replace-on-change and, since the Job keeps its name, deletes the old Job before creating the
new one; so a config change that reaches the template (hyperparameters, replica counts via
TF_CONFIG, images, the run id label) restarts the replica as a new run.
"""

from __future__ import annotations

from typing import Any

from infra.cluster_facts import ClusterFacts
from infra.config.model import ReplicaGroup, StackConfig
from infra.lifecycle import TERMINATION_GRACE_SECONDS, deploy_generation, ends_run, supervision
from infra.manifests.common import (
    JOB_LABEL,
    KUBEFLOW_INDEX_LABEL,
    KUBEFLOW_JOB_LABEL,
    KUBEFLOW_TYPE_LABEL,
    REPLICA_INDEX_LABEL,
    REPLICA_TYPE_LABEL,
    RUN_ID_LABEL,
    metadata,
    pod_metadata,
    run_labels,
)
from infra.manifests.lifecycle import (
    EXPORT_SCRIPT_PATH,
    SCRIPT_PATH,
    gang_labels,
    lifecycle_mount,
    lifecycle_volume,
    pod_failure_policy,
)
from infra.manifests.oss import oss_enabled, oss_env, oss_mounts, oss_volumes
from infra.manifests.placement import placement
from infra.manifests.security import harden, resources
from infra.manifests.storage import data_mount, data_volume
from infra.run_data import init_checkpoint_env, resolve_init_checkpoint
from infra.topology import TF_PORT, Replica, Topology
from infra.trainer_env import replica_env

PORT_NAME = "tfjob-port"
# Kubeflow's TFJob requires this container name; keeping it lets TFJob tooling find logs.
CONTAINER_NAME = "tensorflow"
# pulumi-kubernetes would otherwise wait for every Job to *complete* (a whole training run)
# and time out after 10 minutes. Waiting until the Job has started keeps `pulumi up` short
# while deletes are still awaited, so a replaced Job is gone before its successor is created
# (`pulumi.com/skipAwait` would skip that wait too and race on the reused name). waitFor
# overrides the built-in Job await since pulumi-kubernetes 4.18.4 (#3329).
JOB_WAIT_FOR = {"pulumi.com/waitFor": "jsonpath={.status.startTime}"}


def replica_selector(config: StackConfig, replica: Replica) -> dict[str, str]:
    """Labels that pick exactly one replica's pod of the current run."""
    return {
        JOB_LABEL: config.job.name,
        RUN_ID_LABEL: config.job.run_id,
        REPLICA_TYPE_LABEL: replica.type,
        REPLICA_INDEX_LABEL: str(replica.index),
    }


def replica_labels(config: StackConfig, replica: Replica) -> dict[str, str]:
    return {
        **run_labels(config),
        "app.kubernetes.io/component": replica.type,
        **replica_selector(config, replica),
        KUBEFLOW_JOB_LABEL: config.job.name,
        KUBEFLOW_TYPE_LABEL: replica.type,
        KUBEFLOW_INDEX_LABEL: str(replica.index),
    }


def replica_service(config: StackConfig, replica: Replica) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(replica.name, replica_labels(config, replica), config.job.namespace),
        "spec": {
            "clusterIP": "None",
            "selector": replica_selector(config, replica),
            # Peers dial each other while they start, before any readiness: publish the
            # pod's address as soon as it has one.
            "publishNotReadyAddresses": True,
            "ports": [
                {"name": PORT_NAME, "port": replica.port, "targetPort": TF_PORT, "protocol": "TCP"}
            ],
        },
    }


def _env(config: StackConfig, topology: Topology, replica: Replica) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = [
        {"name": name, "value": value}
        for name, value in {
            **replica_env(config, topology, replica),
            **oss_env(config, ends_run(replica, topology)),
            **init_checkpoint_env(
                resolve_init_checkpoint(config, config.storage.mount_path, config.data.input_path)
            ),
        }.items()
    ]
    env += [
        {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}
        for name, path in (("POD_NAME", "metadata.name"), ("POD_NAMESPACE", "metadata.namespace"))
    ]
    return env


def _container(
    config: StackConfig,
    topology: Topology,
    group: ReplicaGroup,
    replica: Replica,
    generation: str,
) -> dict[str, Any]:
    export_script = EXPORT_SCRIPT_PATH if oss_enabled(config) else ""
    supervisor = supervision(config, topology, replica, config.output_dir, export_script)
    container: dict[str, Any] = {
        "name": CONTAINER_NAME,
        "image": group.image,
        "imagePullPolicy": group.image_pull_policy,
        # The stack's command under the supervisor, which ends it with the run; the args
        # stay the stack's, appended after the command as Kubernetes does.
        "command": supervisor.wrap(SCRIPT_PATH, config.job.command, generation),
    }
    if config.job.args:
        container["args"] = list(config.job.args)
    return {
        **container,
        "env": _env(config, topology, replica),
        "ports": [{"name": PORT_NAME, "containerPort": TF_PORT, "protocol": "TCP"}],
        "resources": resources(group.cpu, group.memory, group.gpu_count),
        "volumeMounts": [
            data_mount(config),
            lifecycle_mount(),
            *oss_mounts(config, supervisor.ends_run),
        ],
    }


def replica_job(
    config: StackConfig,
    facts: ClusterFacts,
    topology: Topology,
    replica: Replica,
    generation: str = "",
) -> dict[str, Any]:
    """One replica's Job; `generation` is the run's deploy generation (`replica_jobs`)."""
    group = next(g for g in config.replica_groups if g.type == replica.type)
    where = placement(config, facts, group.gpu_count, group.spot)
    labels = replica_labels(config, replica)
    pod_spec = harden(
        {
            # podFailurePolicy needs it; a retry is a new pod (infra/manifests/lifecycle.py).
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": TERMINATION_GRACE_SECONDS,
            **where.spec,
            "containers": [_container(config, topology, group, replica, generation)],
            "volumes": [
                data_volume(config),
                lifecycle_volume(config),
                *oss_volumes(config, ends_run(replica, topology)),
            ],
        }
    )
    spec: dict[str, Any] = {
        "backoffLimit": config.job.backoff_limit,
        "podFailurePolicy": pod_failure_policy(CONTAINER_NAME),
        "ttlSecondsAfterFinished": config.job.ttl_seconds_after_finished,
    }
    if config.job.active_deadline_seconds is not None:
        spec["activeDeadlineSeconds"] = config.job.active_deadline_seconds
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(replica.name, labels, config.job.namespace, JOB_WAIT_FOR),
        "spec": {
            **spec,
            "template": {
                "metadata": pod_metadata(
                    {**labels, **gang_labels(config, topology)}, where.annotations
                ),
                "spec": pod_spec,
            },
        },
    }


def replica_jobs(
    config: StackConfig, facts: ClusterFacts, topology: Topology
) -> list[dict[str, Any]]:
    """Every replica's Job, each told the run's deploy generation: a digest of all their pod
    templates as rendered without it (`infra.lifecycle.deploy_generation`)."""
    drafts = [replica_job(config, facts, topology, replica) for replica in topology.replicas]
    generation = deploy_generation(job["spec"]["template"] for job in drafts)
    return [replica_job(config, facts, topology, r, generation) for r in topology.replicas]
