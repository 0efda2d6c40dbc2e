"""Names and labels shared by every object of a stack, and the Namespace itself.

Two label sets, on purpose:
- `stable_labels` for objects that outlive a training run (Namespace, storage, TensorBoard):
  a new run must not touch them. The PVC's selector in particular is immutable, so a
  run id in the PV labels would replace the PVC on every run and strand the Retain PV.
- `run_labels` (stable + `tftrain.io/run-id`) for the objects of one run (Jobs, Services,
  ImageCache), so `kubectl -l tftrain.io/run-id=...` finds exactly one run.
"""

from __future__ import annotations

import base64

from infra.config import StackConfig

APP = "tftrain"
RUN_ID_LABEL = "tftrain.io/run-id"
JOB_LABEL = "tftrain.io/job"
REPLICA_TYPE_LABEL = "tftrain.io/replica-type"
REPLICA_INDEX_LABEL = "tftrain.io/replica-index"
# Kubeflow training-operator labels, so TFJob tooling and dashboards recognise the pods.
KUBEFLOW_JOB_LABEL = "training.kubeflow.org/job-name"
KUBEFLOW_TYPE_LABEL = "training.kubeflow.org/replica-type"
KUBEFLOW_INDEX_LABEL = "training.kubeflow.org/replica-index"

PSS_LEVEL = "restricted"


NAMESPACE_LABEL = "tftrain.io/namespace"


def stable_labels(config: StackConfig) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": APP,
        "app.kubernetes.io/instance": config.job.name,
    }


def run_labels(config: StackConfig) -> dict[str, str]:
    return {**stable_labels(config), RUN_ID_LABEL: config.job.run_id}


def metadata(
    name: str,
    labels: dict[str, str],
    namespace: str | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, object]:
    """ObjectMeta with keys only when they have content (keeps the render minimal)."""
    meta: dict[str, object] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    return meta


def pod_metadata(labels: dict[str, str], annotations: dict[str, str]) -> dict[str, object]:
    """A pod template's metadata; annotations only when there are any."""
    meta: dict[str, object] = {"labels": dict(labels)}
    if annotations:
        meta["annotations"] = dict(annotations)
    return meta


def pss_namespace(name: str, labels: dict[str, str]) -> dict[str, object]:
    """A Namespace where Pod Security Admission enforces "restricted" on every pod."""
    pss = {
        "pod-security.kubernetes.io/enforce": PSS_LEVEL,
        "pod-security.kubernetes.io/enforce-version": "latest",
        "pod-security.kubernetes.io/warn": PSS_LEVEL,
        "pod-security.kubernetes.io/audit": PSS_LEVEL,
    }
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata(name, {**labels, **pss})}


def namespace(config: StackConfig) -> dict[str, object]:
    """The job's namespace (a run stack's is its platform's: `run_access.py`)."""
    return pss_namespace(config.job.namespace, stable_labels(config))


def base64_text(text: str) -> str:
    """A Secret's `data` value: the UTF-8 bytes of `text`, base64-encoded."""
    return base64.b64encode(text.encode()).decode()


def claim_ref(namespace: str, name: str) -> dict[str, str]:
    """A PersistentVolume's pre-binding to one claim (Kubernetes: Reserving a
    PersistentVolume): no claim in another namespace can bind it, whatever its labels and
    size. The controller adds the claim's uid when it binds."""
    return {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": name}
