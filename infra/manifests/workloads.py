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

from dataclasses import replace
from typing import Any

from infra.config.model import StackConfig
from infra.lifecycle import TERMINATION_GRACE_SECONDS, deploy_generation
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
from infra.manifests.registry import image_pull_secrets
from infra.manifests.secret_env import secret_env_names, secret_env_ref
from infra.manifests.security import TMP_PATH, harden, resources
from infra.manifests.storage import data_mount, data_volume
from infra.platform.cluster_facts import ClusterFacts, offline_eci_network
from infra.replica_plan.plan import EnvVar, Place, ReplicaPlan, replica_plans
from infra.replica_plan.run_data import init_checkpoint_env, resolve_init_checkpoint
from infra.topology import TF_PORT, Replica, Topology

PORT_NAME = "tfjob-port"
# Kubeflow's TFJob requires this container name; keeping it lets TFJob tooling find logs.
CONTAINER_NAME = "tensorflow"
# What `pulumi up` waits for on each Job (`pulumi.com/waitFor`, which replaces the built-in
# Job await since pulumi-kubernetes 4.18.4, #3329): not the whole training run (the built-in
# await, with a 10-minute timeout), and not just `.status.startTime`, which the Job controller
# sets before any pod has an image, so a run whose pods all sit in ImagePullBackOff counted as
# deployed. A Job is up once one of its pods has run: `ready` (running now), or `succeeded` /
# `failed` (ran and ended: a short run, or a trainer that exits at once, must not hold `up`
# until the timeout). A pod that never pulls its image, or is never scheduled, has none of
# them, and `up` fails on that Job after the timeout, naming it.
# The expression is RFC 9535 JSONPath (pulumi-kubernetes >= 4.24, requirements.txt): a
# filter over the Job's top-level members, of which only `status` has these counters (they
# are scalars, and a filter selects from a collection); it uses no `=`, which older parsers
# split the annotation on. Deletes are still awaited, so a replaced Job is gone before its
# successor with the same name is created (`pulumi.com/skipAwait` would skip that too).
JOB_WAIT_FOR = {
    "pulumi.com/waitFor": "jsonpath={$[?@.ready > 0 || @.succeeded > 0 || @.failed > 0]}",
    # 30 minutes, not the default 10: a GPU pool autoscaled from 0 nodes, a gang that starts
    # only once every replica fits, and multi-GB GPU images pulled on fresh nodes all pass
    # before the first pod runs.
    "pulumi.com/timeoutSeconds": str(30 * 60),
}


# A sweep's trial may wait its turn (`sweep.parallel`, docs/hyperparameters.md):
# its pods exist but stay Pending, held by gang scheduling until the GPU pool has room for
# all of them. Such a Job is up once its pods exist (`active`): `up` must not wait, and time
# out, for trials queued behind others. The price: a trial whose image cannot be pulled is
# found by `kubectl get pods`, not by `up`.
TRIAL_WAIT_FOR = {
    **JOB_WAIT_FOR,
    "pulumi.com/waitFor": (
        "jsonpath={$[?@.active > 0 || @.ready > 0 || @.succeeded > 0 || @.failed > 0]}"
    ),
}


# A suspended Job has no pod to wait for: it is up once its controller has stopped its pods
# and says so (the Job condition `Suspended`, KEP-2232), not after the 30 minutes above.
SUSPENDED_WAIT_FOR = {
    **JOB_WAIT_FOR,
    "pulumi.com/waitFor": (
        "jsonpath={$.status.conditions[?@.type == 'Suspended' && @.status == 'True']}"
    ),
}


def _wait_for(config: StackConfig) -> dict[str, str]:
    if config.job.suspend:
        return SUSPENDED_WAIT_FOR
    return TRIAL_WAIT_FOR if config.is_trial else JOB_WAIT_FOR


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


def pod_place(config: StackConfig, topology: Topology) -> Place:
    """A pod's side of the replica plan: Service addresses, the volume, the ConfigMap's
    scripts, the pod's /tmp and the bucket's mounts."""
    export_script = EXPORT_SCRIPT_PATH if oss_enabled(config) else ""
    init_checkpoint = init_checkpoint_env(
        resolve_init_checkpoint(config, config.storage.mount_path, config.data.input_path)
    )
    return Place(
        topology=topology,
        output_dir=config.output_dir,
        supervisor=SCRIPT_PATH,
        export_script=export_script,
        scratch=lambda _replica: TMP_PATH,
        data_env=lambda ends: {**oss_env(config, ends), **init_checkpoint},
    )


def pod_env(
    config: StackConfig, plan: ReplicaPlan, secret_sections: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """The plan's env as a container's: downward API fields and resources by reference, secret
    values by reference (secret_env.py), the rest as values (`$(VAR)` left for the kubelet to
    expand)."""
    secret = secret_env_names(config, plan.group, secret_sections)
    return [
        secret_env_ref(config, plan.group, var.name) if var.name in secret else _pod_var(var)
        for var in plan.env
    ]


def _pod_var(var: EnvVar) -> dict[str, Any]:
    if var.field_path:
        return {"name": var.name, "valueFrom": {"fieldRef": {"fieldPath": var.field_path}}}
    if var.resource:
        # Divisor 1: CPU in whole cores, rounded up (500m reads as 1).
        ref = {"containerName": CONTAINER_NAME, "resource": var.resource, "divisor": "1"}
        return {"name": var.name, "valueFrom": {"resourceFieldRef": ref}}
    return {"name": var.name, "value": var.value}


def _container(
    config: StackConfig, plan: ReplicaPlan, secret_sections: frozenset[str]
) -> dict[str, Any]:
    group, ends = plan.group, plan.ends_run
    container: dict[str, Any] = {
        "name": CONTAINER_NAME,
        "image": group.image,
        "imagePullPolicy": group.image_pull_policy,
        # The group's command under the supervisor, which ends it with the run and starts it
        # in the replica's own directory (infra/replica_plan/plan.py).
        "command": list(plan.command),
    }
    if plan.args:
        container["args"] = list(plan.args)
    return {
        **container,
        "env": pod_env(config, plan, secret_sections),
        "ports": [{"name": PORT_NAME, "containerPort": TF_PORT, "protocol": "TCP"}],
        "resources": resources(group.cpu, group.memory, group.gpu_count),
        "volumeMounts": [data_mount(config), lifecycle_mount(), *oss_mounts(config, ends)],
    }


def replica_job(
    config: StackConfig,
    facts: ClusterFacts,
    topology: Topology,
    plan: ReplicaPlan,
    secret_sections: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """One replica's Job from its plan (`replica_jobs`); `secret_sections`: the env sections
    the engine marked secret (secret_env.py)."""
    replica, group = plan.replica, plan.group
    where = placement(config, facts, group.gpu_count, group.spot)
    labels = replica_labels(config, replica)
    pod_spec = harden(
        {
            # podFailurePolicy needs it; a retry is a new pod (infra/manifests/lifecycle.py).
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": TERMINATION_GRACE_SECONDS,
            **where.spec,
            **image_pull_secrets(config),
            "containers": [_container(config, plan, secret_sections)],
            "volumes": [
                data_volume(config),
                lifecycle_volume(config),
                *oss_volumes(config, plan.ends_run),
            ],
        }
    )
    spec: dict[str, Any] = {
        "backoffLimit": config.job.backoff_limit,
        "podFailurePolicy": pod_failure_policy(CONTAINER_NAME),
    }
    if config.job.ttl_seconds_after_finished is not None:
        spec["ttlSecondsAfterFinished"] = config.job.ttl_seconds_after_finished
    if config.job.active_deadline_seconds is not None:
        spec["activeDeadlineSeconds"] = config.job.active_deadline_seconds
    if config.job.suspend:
        spec["suspend"] = True  # mutable: `up` patches the Jobs in place, nothing is replaced
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(
            replica.name,
            labels,
            config.job.namespace,
            _wait_for(config),
        ),
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
    config: StackConfig,
    facts: ClusterFacts,
    topology: Topology,
    secret_sections: frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """Every replica's Job, each told the run's deploy generation: a digest of all their pod
    templates as rendered without it (`infra.lifecycle.deploy_generation`)."""
    place = pod_place(config, topology)
    # Digested as the review shows them: the ids of the ECI pods' vSwitch and security groups
    # exist only once the program has made them, and the review's generation must be the
    # deploy's.
    offline = (
        replace(facts, eci_network=offline_eci_network(config)) if facts.eci_network else facts
    )
    drafts = [
        replica_job(config, offline, topology, plan, secret_sections)
        for plan in replica_plans(config, place, "")
    ]
    generation = deploy_generation(job["spec"]["template"] for job in drafts)
    return [
        replica_job(config, facts, topology, plan, secret_sections)
        for plan in replica_plans(config, place, generation)
    ]
