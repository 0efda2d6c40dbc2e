"""NetworkPolicies: only the run's own replicas reach its TensorFlow ports.

TensorFlow's gRPC servers authenticate nobody: whoever opens a connection to a ps or worker
can read and overwrite the model's variables and run ops in that pod. So:

- `<job>-default-deny`: every pod of the namespace is isolated for ingress; what is not
  admitted below is dropped.
- `<job>-training` (a sweep: `<job>-<run id>-training` per trial): the current run's
  replicas (job + run-id labels) accept the TF port from each other only (same namespace,
  same labels), and may open it to each other.
- `<job>-tensorboard`: TensorBoard accepts its HTTP port only. A LoadBalancer Service admits
  every source: with externalTrafficPolicy Cluster (the default) the SLB's traffic arrives
  SNATed from a node, with Local or ENI-direct backends it keeps the client's address (any VPC,
  VPN or, if public, internet address); the SLB itself is where clients are narrowed. A
  ClusterIP Service admits pods of any namespace (`kubectl port-forward` enters the pod's
  network namespace and is not subject to policies).
- `<job>-egress`: the job's pods (replicas of every run, TensorBoard) may reach DNS on any
  address (CoreDNS, NodeLocal DNSCache's link-local address, the VPC resolver) and any address
  except the ECS instance metadata service, whose node RAM-role credentials a compromised
  trainer must not obtain. NAS/NFS and hostPath volumes are mounted by the node, not from the
  pod, so no egress rule concerns them.

The selectors and labels come from the same functions as the pods' (workloads.py,
tensorboard.py), so a label change cannot silently leave a pod unprotected.
"""

from __future__ import annotations

from typing import Any

from infra.config import StackConfig
from infra.manifests.common import JOB_LABEL, RUN_ID_LABEL, metadata, stable_labels
from infra.manifests.tensorboard import PORT as TENSORBOARD_PORT
from infra.manifests.tensorboard import tensorboard_labels
from infra.topology import TF_PORT

API_VERSION = "networking.k8s.io/v1"
KIND = "NetworkPolicy"
DNS_PORT = 53
# Alibaba Cloud's ECS instance metadata service (also serves the node's RAM-role STS token).
METADATA_SERVICE = "100.100.100.200/32"
TRAINING = "training"


def run_selector(config: StackConfig) -> dict[str, str]:
    """Every replica pod of the current run, whatever its type and index."""
    return {JOB_LABEL: config.job.name, RUN_ID_LABEL: config.job.run_id}


def _policy(config: StackConfig, suffix: str, spec: dict[str, Any]) -> dict[str, Any]:
    name = f"{config.run_name if suffix == TRAINING else config.job.name}-{suffix}"
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": metadata(name, stable_labels(config), config.job.namespace),
        "spec": spec,
    }


def _tcp(port: int) -> dict[str, Any]:
    return {"protocol": "TCP", "port": port}


def default_deny(config: StackConfig) -> dict[str, Any]:
    return _policy(config, "default-deny", {"podSelector": {}, "policyTypes": ["Ingress"]})


def training_policy(config: StackConfig) -> dict[str, Any]:
    """One per run: a sweep's trials each admit their own replicas only."""
    peers = [{"podSelector": {"matchLabels": run_selector(config)}}]
    return _policy(
        config,
        TRAINING,
        {
            "podSelector": {"matchLabels": run_selector(config)},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": [{"from": peers, "ports": [_tcp(TF_PORT)]}],
            "egress": [{"to": peers, "ports": [_tcp(TF_PORT)]}],
        },
    )


def tensorboard_policy(config: StackConfig) -> dict[str, Any]:
    rule: dict[str, Any] = {"ports": [_tcp(TENSORBOARD_PORT)]}
    if config.tensorboard.service_type == "ClusterIP":
        rule = {"from": [{"namespaceSelector": {}}], **rule}
    return _policy(
        config,
        "tensorboard",
        {
            "podSelector": {"matchLabels": tensorboard_labels(config)},
            "policyTypes": ["Ingress"],
            "ingress": [rule],
        },
    )


def egress_policy(config: StackConfig) -> dict[str, Any]:
    dns = [{"protocol": protocol, "port": DNS_PORT} for protocol in ("UDP", "TCP")]
    outside = [
        {"ipBlock": {"cidr": "0.0.0.0/0", "except": [METADATA_SERVICE]}},
        {"ipBlock": {"cidr": "::/0"}},
    ]
    return _policy(
        config,
        "egress",
        {
            "podSelector": {"matchLabels": stable_labels(config)},
            "policyTypes": ["Egress"],
            "egress": [{"ports": dns}, {"to": outside}],
        },
    )


# On ASK every pod is an ECI instance and nothing enforces NetworkPolicies (docs/security.md):
# the objects say so to whoever reads them in the cluster, and the review says it too.
NOT_ENFORCED = "tftrain.io/not-enforced"
NOT_ENFORCED_ON_ECI = "ECI (cluster.kind ask) enforces no NetworkPolicy: see docs/security.md"


def network_policies(config: StackConfig) -> list[dict[str, Any]]:
    """The namespace's policies, with the training policy of every run (a sweep's trials)."""
    training = [training_policy(run) for run in config.runs]
    policies = [default_deny(config), *training, egress_policy(config)]
    if config.tensorboard.enabled:
        policies.append(tensorboard_policy(config))
    if config.cluster.kind == "ask":
        for policy in policies:
            policy["metadata"].setdefault("annotations", {})[NOT_ENFORCED] = NOT_ENFORCED_ON_ECI
    return policies
