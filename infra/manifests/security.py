"""The one place that makes a pod satisfy Pod Security Standards "restricted".

Jobs and TensorBoard both pass their pod spec through `harden`, so a new workload cannot
forget a setting and the Namespace's `enforce: restricted` label never rejects our pods.
"""

from __future__ import annotations

from typing import Any

# The numeric user and group of the trainer image (docker/Dockerfile.*). Numeric, because the
# kubelet can only verify `runAsNonRoot` for numeric users; >= 10000, because image scanners
# flag lower uids as able to collide with a real user of the node (distributions hand out
# 1000 upwards to people).
RUN_AS = 10000

TMP_VOLUME = "tmp"
# The root filesystem is read-only; TensorFlow, TensorBoard and Python still need a
# writable temp dir (tf.io temp files, TensorBoard's plugin cache, ~/.keras), so /tmp
# is a pod-private emptyDir, and HOME points into it unless the container sets its own
# (a training replica's is on the volume: infra/replica_plan/plan.py).
TMP_PATH = "/tmp"
TMP_SIZE_LIMIT = "2Gi"


def pod_security_context() -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "runAsUser": RUN_AS,
        "runAsGroup": RUN_AS,
        # fsGroup makes volumes that support ownership management (emptyDir, block
        # volumes) group-writable for the trainer; NFS/NAS ignore it, see storage.py.
        "fsGroup": RUN_AS,
        "fsGroupChangePolicy": "OnRootMismatch",
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def container_security_context() -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def _with_home(env: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if any(var["name"] == "HOME" for var in env):
        return env
    return [*env, {"name": "HOME", "value": TMP_PATH}]


def harden(pod_spec: dict[str, Any]) -> dict[str, Any]:
    """`pod_spec` with the restricted security settings, /tmp and HOME on every container."""
    containers = [
        {
            **container,
            "env": _with_home(container.get("env", [])),
            "securityContext": container_security_context(),
            "volumeMounts": [
                *container.get("volumeMounts", []),
                {"name": TMP_VOLUME, "mountPath": TMP_PATH},
            ],
        }
        for container in pod_spec["containers"]
    ]
    return {
        **pod_spec,
        # Training code never talks to the API server: no token in the pod to steal.
        "automountServiceAccountToken": False,
        # Service env vars would add one set per replica Service (thousands with many
        # workers) to every container; replicas find each other through TF_CONFIG DNS.
        "enableServiceLinks": False,
        "securityContext": pod_security_context(),
        "containers": containers,
        "volumes": [
            *pod_spec.get("volumes", []),
            {"name": TMP_VOLUME, "emptyDir": {"sizeLimit": TMP_SIZE_LIMIT}},
        ],
    }


def resources(cpu: str, memory: str, gpus: int = 0) -> dict[str, Any]:
    """Requests equal to limits (Guaranteed QoS; ECI sizes the instance from them)."""
    limits: dict[str, Any] = {"cpu": cpu, "memory": memory}
    if gpus:
        limits["nvidia.com/gpu"] = str(gpus)
    return {"requests": {"cpu": cpu, "memory": memory}, "limits": limits}
