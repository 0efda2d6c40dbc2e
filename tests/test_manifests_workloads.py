"""`infra.manifests.workloads`: each replica's headless Service and Job, against values worked
out by hand from the TFJob contract (replica `<job>-<type>-<i>` at
`<job>-<type>-<i>.<namespace>.svc:2222`, Kubeflow's `training.kubeflow.org/*` labels and its
`tensorflow` container), the Kubernetes Job API (podFailurePolicy needs `restartPolicy:
Never`; ttl, deadline and suspend are optional fields) and the downward API; checked against
the newest OpenAPI schema kubernetes-validate ships.
"""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest
from kubernetes_validate.utils import all_versions
from packaging.version import Version

from infra.config import parse_config
from infra.manifests.workloads import replica_jobs, replica_service
from infra.platform.cluster_facts import cluster_facts
from infra.topology import build_topology

NEWEST_SCHEMA = max(all_versions(), key=Version)
IMAGE = "registry.example.com/tftrain/trainer:1"


def stack(job: dict[str, Any] | None = None, **more: Any) -> Any:
    return parse_config(
        {
            "image": IMAGE,
            "job": {"name": "mnist", "namespace": "team-a", "runId": "r1", **(job or {})},
            "chief": {"number": 1},
            "ps": {"number": 1},
            "worker": {"number": 2, "cpu": "1500m", "memory": "2Gi"},
            **more,
        }
    )


def labels(kind: str, index: int) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": "tftrain",
        "app.kubernetes.io/instance": "mnist",
        "tftrain.io/run-id": "r1",
        "app.kubernetes.io/component": kind,
        "tftrain.io/job": "mnist",
        "tftrain.io/replica-type": kind,
        "tftrain.io/replica-index": str(index),
        "training.kubeflow.org/job-name": "mnist",
        "training.kubeflow.org/replica-type": kind,
        "training.kubeflow.org/replica-index": str(index),
    }


def jobs_of(config: Any, secret: frozenset[str] = frozenset()) -> dict[str, dict[str, Any]]:
    made = replica_jobs(config, cluster_facts(config), build_topology(config), secret)
    for job in made:
        kubernetes_validate.validate(job, NEWEST_SCHEMA, strict=True)
    return {job["metadata"]["name"]: job for job in made}


def test_each_replica_has_a_headless_service_selecting_only_its_pod() -> None:
    config = stack()
    topology = build_topology(config)
    services = {r.name: replica_service(config, r) for r in topology.replicas}
    assert sorted(services) == ["mnist-chief-0", "mnist-ps-0", "mnist-worker-0", "mnist-worker-1"]
    worker = services["mnist-worker-1"]
    assert worker == {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "mnist-worker-1",
            "namespace": "team-a",
            "labels": labels("worker", 1),
        },
        "spec": {
            "clusterIP": "None",
            "selector": {
                "tftrain.io/job": "mnist",
                "tftrain.io/run-id": "r1",
                "tftrain.io/replica-type": "worker",
                "tftrain.io/replica-index": "1",
            },
            "publishNotReadyAddresses": True,
            "ports": [{"name": "tfjob-port", "port": 2222, "targetPort": 2222, "protocol": "TCP"}],
        },
    }
    for service in services.values():
        kubernetes_validate.validate(service, NEWEST_SCHEMA, strict=True)


def test_a_replicas_job_runs_its_pod_once_per_attempt_under_the_supervisor() -> None:
    config = stack()
    job = jobs_of(config)["mnist-worker-1"]
    assert job["metadata"]["labels"] == labels("worker", 1)
    assert job["metadata"]["namespace"] == "team-a"
    spec = job["spec"]
    assert spec["backoffLimit"] == 3  # the config's default
    for absent in ("ttlSecondsAfterFinished", "activeDeadlineSeconds", "suspend"):
        assert absent not in spec
    failure = spec["podFailurePolicy"]["rules"]
    assert failure[0]["onExitCodes"]["containerName"] == "tensorflow"
    template = spec["template"]
    assert template["metadata"]["labels"] == labels("worker", 1)
    pod = template["spec"]
    assert pod["restartPolicy"] == "Never"
    assert pod["terminationGracePeriodSeconds"] > 30  # longer than Kubernetes' default
    (container,) = pod["containers"]
    assert container["name"] == "tensorflow"
    assert container["image"] == IMAGE
    assert container["command"][:2] == ["/bin/sh", "/etc/tftrain-lifecycle/supervise.sh"]
    assert container["ports"] == [{"name": "tfjob-port", "containerPort": 2222, "protocol": "TCP"}]
    assert container["resources"] == {
        "requests": {"cpu": "1500m", "memory": "2Gi"},
        "limits": {"cpu": "1500m", "memory": "2Gi"},
    }
    env = {var["name"]: var for var in container["env"]}
    assert env["POD_NAME"] == {
        "name": "POD_NAME",
        "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
    }
    assert env["POD_NAMESPACE"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    # 1500m in whole cores, rounded up: 2 (divisor 1).
    assert env["TF_NUM_INTRAOP_THREADS"] == {
        "name": "TF_NUM_INTRAOP_THREADS",
        "valueFrom": {
            "resourceFieldRef": {
                "containerName": "tensorflow",
                "resource": "limits.cpu",
                "divisor": "1",
            }
        },
    }
    assert env["TF_NUM_INTEROP_THREADS"] == {"name": "TF_NUM_INTEROP_THREADS", "value": "2"}
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    assert mounts["data"] == {"name": "data", "mountPath": "/data"}
    assert mounts["tftrain-lifecycle"]["readOnly"] is True
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["data"] == {"name": "data", "persistentVolumeClaim": {"claimName": "mnist-data"}}
    assert volumes["tftrain-lifecycle"]["configMap"]["name"] == "mnist-lifecycle"


@pytest.mark.parametrize(
    ("job", "expected"),
    [
        ({"ttlSecondsAfterFinished": 0}, {"ttlSecondsAfterFinished": 0}),
        ({"activeDeadlineSeconds": 1}, {"activeDeadlineSeconds": 1}),
        ({"suspend": True}, {"suspend": True}),
        ({"backoffLimit": 0}, {"backoffLimit": 0}),
    ],
)
def test_the_jobs_optional_fields_follow_the_config(
    job: dict[str, Any], expected: dict[str, Any]
) -> None:
    for made in jobs_of(stack(job)).values():
        assert made["spec"].items() >= expected.items()


def test_container_args_only_when_the_job_has_some() -> None:
    plain = jobs_of(stack())["mnist-chief-0"]["spec"]["template"]["spec"]["containers"][0]
    assert "args" not in plain
    given = jobs_of(stack({"args": ["--epochs", "3"]}))["mnist-chief-0"]
    (container,) = given["spec"]["template"]["spec"]["containers"]
    assert container["args"][-2:] == ["--epochs", "3"]


def test_a_secret_env_value_is_read_from_the_stacks_secret_and_never_written() -> None:
    raw_job = {"name": "mnist", "namespace": "team-a", "runId": "r1", "env": {"TOKEN": "t0ken"}}
    config = parse_config(
        {"image": IMAGE, "job": raw_job, "chief": {"number": 1}, "worker": {"number": 1}},
        ("job",),
    )
    jobs = jobs_of(config, frozenset({"job"}))
    assert sorted(jobs) == ["mnist-chief-0", "mnist-ps-0", "mnist-worker-0"]
    for made in jobs.values():
        (container,) = made["spec"]["template"]["spec"]["containers"]
        env = {var["name"]: var for var in container["env"]}
        # One key per (group, name) in the Secret: `<group>.<NAME>`.
        group = made["metadata"]["labels"]["tftrain.io/replica-type"]
        assert env["TOKEN"] == {
            "name": "TOKEN",
            "valueFrom": {"secretKeyRef": {"name": "mnist-env", "key": f"{group}.TOKEN"}},
        }
        assert "t0ken" not in str(made)
    # Not marked secret by the engine: a plain value.
    (container,) = jobs_of(config)["mnist-chief-0"]["spec"]["template"]["spec"]["containers"]
    assert {"name": "TOKEN", "value": "t0ken"} in container["env"]


def test_every_replica_starts_from_the_named_runs_checkpoints() -> None:
    """`job.initCheckpoint: run:<id>`: that run's checkpoints on the volume, in every pod
    (`<mountPath>/<job>/<run id>/checkpoints`)."""
    for made in jobs_of(stack({"initCheckpoint": "run:r0"})).values():
        (container,) = made["spec"]["template"]["spec"]["containers"]
        assert {
            "name": "TFTRAIN_INIT_CHECKPOINT",
            "value": "/data/mnist/r0/checkpoints",
        } in container["env"]
