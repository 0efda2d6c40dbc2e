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


def _generations(config: Any, facts: Any, sections: frozenset[str] = frozenset()) -> set[str]:
    commands = [
        job["spec"]["template"]["spec"]["containers"][0]["command"]
        for job in replica_jobs(config, facts, build_topology(config), sections)
    ]
    return {command[command.index("--generation") + 1] for command in commands}


def test_the_deploy_generation_is_the_reviews_whatever_ids_the_eci_network_gets() -> None:
    """An isolated ASK stack's pods name a vSwitch and security groups the program makes during
    `up`; the review (`render`) knows only placeholders. The generation the review shows must
    be the one the Jobs get, or every `up` would look like a new deploy."""
    from infra.platform.cluster_facts import EciNetwork

    config = stack(cluster={"kind": "ask"}, network={"zoneId": "cn-hangzhou-i"})
    review = _generations(config, cluster_facts(config))
    made = EciNetwork("vsw-made", "sg-replicas-made", "sg-board-made")
    deployed = _generations(config, cluster_facts(config, eci_network=made))
    assert len(review) == 1
    assert deployed == review
    # While the pods themselves name the made ones.
    (job, *_) = replica_jobs(
        config, cluster_facts(config, eci_network=made), build_topology(config)
    )
    annotations = job["spec"]["template"]["metadata"]["annotations"]
    assert annotations["k8s.aliyun.com/eci-vswitch"] == "vsw-made"
    assert annotations["k8s.aliyun.com/eci-security-group"] == "sg-replicas-made"


GPU_WORKER = {"number": 1, "gpuCount": 1, "spot": True, "cpu": "2", "memory": "8Gi"}


def test_a_spot_gpu_worker_on_ack_asks_for_its_gpu_on_the_spot_pool() -> None:
    config = stack(
        worker=GPU_WORKER,
        cluster={"kind": "ack", "gpuPool": {"instanceTypes": ["ecs.gn6i-c4g1.xlarge"]},
                 "spotGpuPool": {"maxSize": 2}},
        network={"zoneId": "cn-hangzhou-i"},
    )  # fmt: skip
    jobs = jobs_of(config)
    pod = jobs["mnist-worker-0"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["resources"] == {
        "requests": {"cpu": "2", "memory": "8Gi"},
        # The device plugin's resource: a GPU is asked for as a limit (Kubernetes "Schedule GPUs").
        "limits": {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "1"},
    }
    # The spot pool's nodes carry this label and taint (infra/cloud/cluster.py).
    spot = {
        "key": "tftrain.io/capacity",
        "operator": "Equal",
        "value": "spot",
        "effect": "NoSchedule",
    }
    assert pod["nodeSelector"] == {"tftrain.io/capacity": "spot"}
    assert pod["tolerations"] == [spot]
    # A CPU replica asks for no GPU and no spot node.
    chief = jobs["mnist-chief-0"]["spec"]["template"]["spec"]
    assert "nvidia.com/gpu" not in chief["containers"][0]["resources"]["limits"]
    assert "nodeSelector" not in chief


def test_a_spot_gpu_worker_on_ask_is_a_spot_gpu_eci_instance() -> None:
    # Alibaba Cloud "Annotations for ECI-based pods": the instance type, the GPU driver and
    # the spot bid (SpotAsPriceGo: the market price).
    config = stack(
        worker=GPU_WORKER,
        cluster={"kind": "ask", "eciGpuSpec": "ecs.gn6i-c4g1.xlarge"},
        network={"zoneId": "cn-hangzhou-i"},
    )
    template = jobs_of(config)["mnist-worker-0"]["spec"]["template"]
    annotations = template["metadata"]["annotations"]
    assert annotations["k8s.aliyun.com/eci-use-specs"] == "ecs.gn6i-c4g1.xlarge"
    assert annotations["k8s.aliyun.com/eci-spot-strategy"] == "SpotAsPriceGo"
    assert annotations["k8s.aliyun.com/eci-gpu-driver-version"] == "tesla=550"
    assert template["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"


def test_only_the_replica_that_ends_the_run_mounts_the_oss_export() -> None:
    """The chief writes the export when the run succeeds (export.sh); every replica reads the
    input, read-only."""
    config = stack(
        cluster={"kind": "ack"},
        network={"zoneId": "cn-hangzhou-i"},
        data={"bucket": "team-data-01", "inputPrefix": "mnist/", "exportPrefix": "exports/"},
    )
    for name, job in jobs_of(config).items():
        pod = job["spec"]["template"]["spec"]
        mounts = {m["name"]: m for m in pod["containers"][0]["volumeMounts"]}
        claims = {v["name"] for v in pod["volumes"] if "persistentVolumeClaim" in v}
        assert mounts["input"] == {"name": "input", "mountPath": "/input", "readOnly": True}
        ends_run = name == "mnist-chief-0"
        assert ("export" in mounts) == ("export" in claims) == ends_run, name


def test_an_init_checkpoint_in_the_buckets_input_is_read_where_the_pods_mount_it() -> None:
    config = stack(
        {"initCheckpoint": "/input/pretrained/ckpt-5"},
        cluster={"kind": "ack"},
        network={"zoneId": "cn-hangzhou-i"},
        data={"bucket": "team-data-01", "inputPrefix": "mnist/", "exportPrefix": "exports/"},
    )
    for made in jobs_of(config).values():
        (container,) = made["spec"]["template"]["spec"]["containers"]
        wanted = {"name": "TFTRAIN_INIT_CHECKPOINT", "value": "/input/pretrained/ckpt-5"}
        assert wanted in container["env"]


def test_a_secret_env_value_is_not_part_of_the_deploy_generation() -> None:
    """The review has a placeholder where `up` has the decrypted value (a section the engine
    hands over marked secret): both must show the same generation."""
    from infra.config.types import SECRET_PLACEHOLDER

    review = stack({"env": {"TOKEN": SECRET_PLACEHOLDER}})
    deployed = stack({"env": {"TOKEN": "s3cr3t"}})
    shown = _generations(review, cluster_facts(review))
    assert _generations(deployed, cluster_facts(deployed), frozenset({"job"})) == shown
