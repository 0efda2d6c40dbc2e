"""`infra.manifests.security`: what `harden` makes of a pod spec, and the resources of a
container, worked out by hand from Pod Security Standards "restricted" (Kubernetes docs, "Pod
Security Standards") and the Guaranteed QoS rule (requests equal to limits, "Pod Quality of
Service Classes"). The schema test (test_manifests_schema.py) checks every pod of every
stack against the same rules; this one holds what `harden` adds to, and keeps of, any spec.
"""

from __future__ import annotations

import kubernetes_validate
from kubernetes_validate.utils import all_versions
from packaging.version import Version

from infra.manifests.security import harden, resources

NEWEST_SCHEMA = max(all_versions(), key=Version)

RESTRICTED_CONTAINER = {
    "runAsNonRoot": True,
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}


def test_harden_adds_the_restricted_settings_a_private_tmp_and_home() -> None:
    spec = {
        "restartPolicy": "Never",
        "containers": [
            {"name": "a", "image": "x:1", "env": [{"name": "HOME", "value": "/data/me"}]},
            {
                "name": "b",
                "image": "x:1",
                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
            },
        ],
        "volumes": [{"name": "data", "emptyDir": {}}],
    }
    assert harden(spec) == {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": 10000,
            "runAsGroup": 10000,
            "fsGroup": 10000,
            "fsGroupChangePolicy": "OnRootMismatch",
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [
            {
                "name": "a",
                "image": "x:1",
                # The container's own HOME is kept, no second one added.
                "env": [{"name": "HOME", "value": "/data/me"}],
                "securityContext": RESTRICTED_CONTAINER,
                "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
            },
            {
                "name": "b",
                "image": "x:1",
                "env": [{"name": "HOME", "value": "/tmp"}],
                "securityContext": RESTRICTED_CONTAINER,
                "volumeMounts": [
                    {"name": "data", "mountPath": "/data"},
                    {"name": "tmp", "mountPath": "/tmp"},
                ],
            },
        ],
        "volumes": [
            {"name": "data", "emptyDir": {}},
            {"name": "tmp", "emptyDir": {"sizeLimit": "2Gi"}},
        ],
    }
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": harden(spec)}
    kubernetes_validate.validate(pod, NEWEST_SCHEMA, strict=True)


def test_harden_leaves_the_spec_it_is_given_as_it_was() -> None:
    spec = {"containers": [{"name": "a", "image": "x:1"}]}
    harden(spec)
    assert spec == {"containers": [{"name": "a", "image": "x:1"}]}


def test_requests_equal_limits_and_gpus_are_limits_only() -> None:
    assert resources("2", "4Gi") == {
        "requests": {"cpu": "2", "memory": "4Gi"},
        "limits": {"cpu": "2", "memory": "4Gi"},
    }
    # Extended resources are given as limits (the request defaults to them), as a string.
    assert resources("500m", "1Gi", gpus=2) == {
        "requests": {"cpu": "500m", "memory": "1Gi"},
        "limits": {"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": "2"},
    }
    assert resources("1", "1Gi", gpus=1)["limits"]["nvidia.com/gpu"] == "1"
