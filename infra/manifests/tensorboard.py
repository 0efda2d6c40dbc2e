"""TensorBoard over the logs root, so every run of the job shows side by side.

TensorBoard outlives runs: it carries only the stable labels, and its Deployment selector
never changes (selectors are immutable). It mounts the shared volume read-only.

Exposure: a LoadBalancer Service gets an *intranet* SLB unless `tensorboard.public` is set;
TensorBoard has no authentication, so the internet-facing SLB is an explicit opt-in, and the
config then requires `tensorboard.allowedSourceRanges`. Those ranges are rendered twice, for two
controllers: `spec.loadBalancerSourceRanges` (the Kubernetes field, enforced by controllers that
implement it) and, on ack/ask, the annotations that make Alibaba's cloud controller attach the
stack's CLB access-control list as a whitelist to every listener: for a CLB it ignores the
field (docs/cloud-evidence.md).
"""

from __future__ import annotations

from typing import Any

from infra.config import StackConfig
from infra.manifests.common import metadata, pod_metadata, stable_labels
from infra.manifests.placement import placement
from infra.manifests.registry import image_pull_secrets
from infra.manifests.security import harden, resources
from infra.manifests.storage import data_mount, data_volume
from infra.platform.cluster_facts import ClusterFacts

PORT = 6006
PORT_NAME = "http"
COMPONENT = "tensorboard"
_SLB = "service.beta.kubernetes.io/alibaba-cloud-loadbalancer-"
SLB_ADDRESS_TYPE = _SLB + "address-type"
SLB_ACL_STATUS = _SLB + "acl-status"
SLB_ACL_ID = _SLB + "acl-id"
SLB_ACL_TYPE = _SLB + "acl-type"


def tensorboard_name(config: StackConfig) -> str:
    return f"{config.job.name}-{COMPONENT}"


def tensorboard_labels(config: StackConfig) -> dict[str, str]:
    """Labels and selector alike: stable across runs, because selectors are immutable."""
    return {**stable_labels(config), "app.kubernetes.io/component": COMPONENT}


def _probe(initial_delay: int, failures: int) -> dict[str, Any]:
    return {
        "httpGet": {"path": "/", "port": PORT_NAME},
        "initialDelaySeconds": initial_delay,
        "periodSeconds": 10,
        "failureThreshold": failures,
    }


def tensorboard_deployment(config: StackConfig, facts: ClusterFacts) -> dict[str, Any]:
    board = config.tensorboard
    where = placement(config, facts, gpus=0, tensorboard=True)
    container = {
        "name": COMPONENT,
        "image": board.image,
        "imagePullPolicy": "IfNotPresent",
        "command": [
            "tensorboard",
            "--logdir",
            config.logs_root,
            "--host",
            "0.0.0.0",
            "--port",
            str(PORT),
        ],
        "ports": [{"name": PORT_NAME, "containerPort": PORT, "protocol": "TCP"}],
        "readinessProbe": _probe(initial_delay=5, failures=3),
        # Loading many event files can stall the UI for a while: be patient before a restart.
        "livenessProbe": _probe(initial_delay=30, failures=6),
        "resources": resources(board.cpu, board.memory),
        "volumeMounts": [data_mount(config, read_only=True)],
    }
    pod_spec = harden(
        {
            **where.spec,
            **image_pull_secrets(config),
            "containers": [container],
            "volumes": [data_volume(config)],
        }
    )
    name = tensorboard_name(config)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata(name, tensorboard_labels(config), config.job.namespace),
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": tensorboard_labels(config)},
            "template": {
                "metadata": pod_metadata(tensorboard_labels(config), where.annotations),
                "spec": pod_spec,
            },
        },
    }


def tensorboard_service(config: StackConfig, facts: ClusterFacts) -> dict[str, Any]:
    board = config.tensorboard
    annotations: dict[str, Any] = {}
    spec: dict[str, Any] = {}
    if board.service_type == "LoadBalancer":
        annotations[SLB_ADDRESS_TYPE] = "internet" if board.public else "intranet"
        if board.allowed_source_ranges:
            spec["loadBalancerSourceRanges"] = list(board.allowed_source_ranges)
        if facts.load_balancer_acl_id:
            annotations |= {
                SLB_ACL_STATUS: "on",
                SLB_ACL_ID: facts.load_balancer_acl_id,
                SLB_ACL_TYPE: "white",
            }
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(
            tensorboard_name(config), tensorboard_labels(config), config.job.namespace, annotations
        ),
        "spec": {
            "type": board.service_type,
            "selector": tensorboard_labels(config),
            "ports": [
                {"name": PORT_NAME, "port": PORT, "targetPort": PORT_NAME, "protocol": "TCP"}
            ],
            **spec,
        },
    }
