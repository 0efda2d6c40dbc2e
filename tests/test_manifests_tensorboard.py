"""`infra.manifests.tensorboard`: TensorBoard's Deployment and Service, written out by hand:
TensorBoard's own flags (`--logdir`, `--host`, `--port`, default port 6006), Alibaba's cloud
controller annotations for a CLB (address type, access-control list as a whitelist:
docs/cloud-evidence.md), the Kubernetes Service and probe fields; checked against the newest
OpenAPI schema kubernetes-validate ships.
"""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest
from kubernetes_validate.utils import all_versions
from packaging.version import Version

from infra.config import parse_config
from infra.manifests.tensorboard import tensorboard_deployment, tensorboard_service
from infra.platform.cluster_facts import EciNetwork, cluster_facts

NEWEST_SCHEMA = max(all_versions(), key=Version)
IMAGE = "registry.example.com/tftrain/trainer:1"
LABELS = {
    "app.kubernetes.io/name": "tftrain",
    "app.kubernetes.io/instance": "mnist",
    "app.kubernetes.io/component": "tensorboard",
}
SLB = "service.beta.kubernetes.io/alibaba-cloud-loadbalancer-"
PORTS = [{"name": "http", "port": 6006, "targetPort": "http", "protocol": "TCP"}]


def ack(tensorboard: dict[str, Any]) -> Any:
    return parse_config(
        {
            "image": IMAGE,
            "cluster": {"kind": "ack"},
            "network": {"zoneId": "cn-hangzhou-i"},
            "job": {"name": "mnist", "namespace": "team-a"},
            "storage": {"mountPath": "/mnt/train"},
            "tensorboard": tensorboard,
        }
    )


SERVICES = {
    "public-behind-acl": (
        {"public": True, "allowedSourceRanges": ["203.0.113.0/24"]},
        "acl-0123",
        {
            SLB + "address-type": "internet",
            SLB + "acl-status": "on",
            SLB + "acl-id": "acl-0123",
            SLB + "acl-type": "white",
        },
        {"type": "LoadBalancer", "loadBalancerSourceRanges": ["203.0.113.0/24"]},
    ),
    "intranet": ({}, None, {SLB + "address-type": "intranet"}, {"type": "LoadBalancer"}),
    "cluster-ip": ({"serviceType": "ClusterIP"}, None, None, {"type": "ClusterIP"}),
}


@pytest.mark.parametrize("case", SERVICES)
def test_the_service_exposes_the_http_port_as_configured(case: str) -> None:
    board, acl, annotations, spec = SERVICES[case]
    config = ack(board)
    service = tensorboard_service(config, cluster_facts(config, load_balancer_acl_id=acl))
    metadata: dict[str, Any] = {"name": "mnist-tensorboard", "namespace": "team-a"}
    metadata["labels"] = LABELS
    if annotations:
        metadata["annotations"] = annotations
    assert service == {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata,
        "spec": {**spec, "selector": LABELS, "ports": PORTS},
    }
    kubernetes_validate.validate(service, NEWEST_SCHEMA, strict=True)


def test_the_deployment_serves_every_run_of_the_job_read_only() -> None:
    config = ack({"cpu": "250m", "memory": "512Mi"})
    deployment = tensorboard_deployment(config, cluster_facts(config))
    kubernetes_validate.validate(deployment, NEWEST_SCHEMA, strict=True)
    assert deployment["metadata"] == {
        "name": "mnist-tensorboard",
        "namespace": "team-a",
        "labels": LABELS,
    }
    spec = deployment["spec"]
    assert spec["replicas"] == 1
    assert spec["selector"] == {"matchLabels": LABELS}
    assert spec["template"]["metadata"]["labels"] == LABELS
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    assert container["name"] == "tensorboard"
    assert container["image"] == IMAGE
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["command"] == [
        "tensorboard", "--logdir", "/mnt/train/mnist", "--host", "0.0.0.0", "--port", "6006",
    ]  # fmt: skip
    assert container["ports"] == [{"name": "http", "containerPort": 6006, "protocol": "TCP"}]
    http = {"path": "/", "port": "http"}
    assert container["readinessProbe"] == {
        "httpGet": http, "initialDelaySeconds": 5, "periodSeconds": 10, "failureThreshold": 3,
    }  # fmt: skip
    assert container["livenessProbe"] == {
        "httpGet": http, "initialDelaySeconds": 30, "periodSeconds": 10, "failureThreshold": 6,
    }  # fmt: skip
    assert container["resources"] == {
        "requests": {"cpu": "250m", "memory": "512Mi"},
        "limits": {"cpu": "250m", "memory": "512Mi"},
    }
    assert {"name": "data", "mountPath": "/mnt/train", "readOnly": True} in container[
        "volumeMounts"
    ]
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "mnist-data"}} in pod["volumes"]
    assert "imagePullSecrets" not in pod


def test_on_ack_tensorboard_stays_off_the_gpu_nodes() -> None:
    # TensorBoard needs no GPU: it runs on the system pool, never on a billed GPU node or
    # one that tolerates the GPU pool's taint.
    config = parse_config(
        {
            "image": IMAGE,
            "cluster": {"kind": "ack", "gpuPool": {"instanceTypes": ["ecs.gn6i-c4g1.xlarge"]}},
            "network": {"zoneId": "cn-hangzhou-i"},
            "job": {"name": "mnist", "namespace": "team-a"},
            "worker": {"gpuCount": 1},
        }
    )
    pod = tensorboard_deployment(config, cluster_facts(config))["spec"]["template"]["spec"]
    assert "nodeSelector" not in pod
    assert "tolerations" not in pod


def test_on_isolated_ask_tensorboard_sits_in_its_own_security_group() -> None:
    # An ASK stack that makes its cluster gives TensorBoard a group of its own, apart from the
    # replicas' (docs/security.md); ECI reads the pod's vSwitch and group from annotations
    # (Alibaba Cloud "Annotations for ECI-based pods").
    config = parse_config(
        {
            "image": IMAGE,
            "cluster": {"kind": "ask"},
            "network": {"zoneId": "cn-hangzhou-i"},
            "job": {"name": "mnist", "namespace": "team-a"},
        }
    )
    network = EciNetwork("vsw-pods", "sg-replicas", "sg-board")
    deployment = tensorboard_deployment(config, cluster_facts(config, eci_network=network))
    template = deployment["spec"]["template"]
    assert template["metadata"]["annotations"] == {
        "k8s.aliyun.com/eci-auto-imc": "true",
        "k8s.aliyun.com/eci-image-cache": "true",
        "k8s.aliyun.com/eci-security-group": "sg-board",
        "k8s.aliyun.com/eci-vswitch": "vsw-pods",
    }
    assert "nodeSelector" not in template["spec"]
    kubernetes_validate.validate(deployment, NEWEST_SCHEMA, strict=True)
