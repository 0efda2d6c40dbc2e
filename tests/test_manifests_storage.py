"""`infra.manifests.storage`: the shared volume and its claim for each storage kind, written
out by hand from the Kubernetes PersistentVolume docs (static provisioning: `""` as the class,
a selector on the volume's labels, `claimRef` reserving it, `Retain`), the NAS CSI plugin's
attributes (docs/cloud-evidence.md) and nfs(5)'s options; and checked against the OpenAPI
schema of the newest Kubernetes kubernetes-validate ships.
"""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest
from kubernetes_validate.utils import all_versions
from packaging.version import Version

from infra.config import parse_config, read_stack_file, stack_file
from infra.manifests.storage import (
    data_mount,
    data_volume,
    persistent_volume,
    persistent_volume_claim,
)
from infra.platform.cluster_facts import cluster_facts

NEWEST_SCHEMA = max(all_versions(), key=Version)
IMAGE = "registry.example.com/tftrain/trainer:1"
STORAGE = {"size": "8Gi", "mountPath": "/mnt/train", "pvLabels": {"train": "mnist"}}
STABLE = {"app.kubernetes.io/name": "tftrain", "app.kubernetes.io/instance": "mnist"}
PV_LABELS = {**STABLE, "train": "mnist"}
STATIC = {
    "capacity": {"storage": "8Gi"},
    "accessModes": ["ReadWriteMany"],
    "persistentVolumeReclaimPolicy": "Retain",
    "storageClassName": "",
    "volumeMode": "Filesystem",
    "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "team-a", "name": "mnist-data"},
}


def stack(storage: dict[str, Any], **more: Any) -> Any:
    return parse_config(
        {
            "image": IMAGE,
            "job": {"name": "mnist", "namespace": "team-a"},
            "storage": {**STORAGE, **storage},
            **more,
        }
    )


CASES = {
    "nfs": (
        {"kind": "nfs", "nfsServer": "10.0.0.5", "nfsPath": "/exports/train"},
        {},
        {"nfs": {"server": "10.0.0.5", "path": "/exports/train"}},
    ),
    "hostPath": (
        {"kind": "hostPath", "hostPath": "/srv/tftrain"},
        {"cluster": {"kind": "existing", "name": "kind-local"}},
        {"hostPath": {"path": "/srv/tftrain", "type": "DirectoryOrCreate"}},
    ),
}


@pytest.mark.parametrize("kind", CASES)
def test_the_volume_and_its_claim_bind_only_each_other(kind: str) -> None:
    storage, more, source = CASES[kind]
    made = stack(storage, **more)
    volume = persistent_volume(made, cluster_facts(made))
    assert volume == {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "team-a-mnist-data", "labels": PV_LABELS},
        "spec": {**STATIC, **source},
    }
    claim = persistent_volume_claim(made)
    assert claim == {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "mnist-data", "namespace": "team-a", "labels": STABLE},
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "storageClassName": "",
            "volumeMode": "Filesystem",
            "selector": {"matchLabels": PV_LABELS},
            "resources": {"requests": {"storage": "8Gi"}},
        },
    }
    for obj in (volume, claim):
        kubernetes_validate.validate(obj, NEWEST_SCHEMA, strict=True)
    assert data_volume(made) == {
        "name": "data",
        "persistentVolumeClaim": {"claimName": "mnist-data"},
    }
    assert data_mount(made) == {"name": "data", "mountPath": "/mnt/train"}
    assert data_mount(made, read_only=True) == {
        "name": "data",
        "mountPath": "/mnt/train",
        "readOnly": True,
    }


def test_a_nas_volume_mounts_its_namespaces_directory_through_the_csi_plugin() -> None:
    raw = read_stack_file(stack_file("ack-cpu"))
    raw["job"] = {**raw.get("job", {}), "name": "mnist", "namespace": "team-a"}
    raw["storage"] = {**raw["storage"], **STORAGE}
    made = parse_config(raw)
    facts = cluster_facts(made)
    volume = persistent_volume(made, facts)
    assert volume["spec"] == {
        **STATIC,
        "mountOptions": ["nolock,tcp,noresvport", "vers=3", "lookupcache=positive"],
        "csi": {
            "driver": "nasplugin.csi.alibabacloud.com",
            "volumeHandle": "team-a-mnist-data",
            "volumeAttributes": {
                "server": facts.nfs_server,
                "path": "/tftrain/team-a",
                "mode": "0733",
            },
        },
    }
    kubernetes_validate.validate(volume, NEWEST_SCHEMA, strict=True)


def test_a_run_stack_claims_the_volume_its_platform_issued_to_its_namespace() -> None:
    made = parse_config(read_stack_file(stack_file("run-ack")))
    namespace = made.job.namespace
    claim = persistent_volume_claim(made)
    assert claim["metadata"]["name"] == "tftrain-data"
    assert claim["spec"]["selector"] == {
        "matchLabels": {
            "app.kubernetes.io/name": "tftrain",
            "tftrain.io/namespace": namespace,
            "tftrain.io/volume": "data",
        }
    }
    assert data_volume(made)["persistentVolumeClaim"] == {"claimName": "tftrain-data"}
