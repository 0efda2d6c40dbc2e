"""The shared volume: one statically provisioned PersistentVolume and the claim that binds it.

The PV carries the stack's `storage.pvLabels`; the PVC selects exactly those labels and asks
for no StorageClass (`""`), so it binds to this PV and never triggers dynamic provisioning.
`Retain` keeps checkpoints and TensorBoard logs when the stack is destroyed.

Write access for the non-root trainer (uid 1000):
- nas: the NAS CSI plugin mounts NFSv3, which ignores fsGroup; its `mode` volume attribute
  makes the plugin chmod the mount root after mounting (non-recursive), so uid 1000 can
  create the job directory. The file system is private to the stack's VPC and job.
- nfs: the export must be writable by uid 1000 (e.g. `all_squash,anonuid=1000`).
- hostPath: the node directory must be writable by uid 1000
  (`install -d -o 1000 -g 1000 /var/lib/tftrain`); kind/minikube provisioner dirs are.
"""

from __future__ import annotations

from typing import Any

from infra.cluster_facts import ClusterFacts
from infra.config import StackConfig
from infra.manifests.common import metadata, stable_labels

NAS_CSI_DRIVER = "nasplugin.csi.alibabacloud.com"
# ACK's recommended NFS options for NAS: v3, no lock daemon, TCP, no reserved source port
# (so a reconnecting node can reuse its connection).
NAS_MOUNT_OPTIONS = ("nolock,tcp,noresvport", "vers=3")
NAS_ROOT_MODE = "777"
DATA_VOLUME = "data"


def pv_name(config: StackConfig) -> str:
    # PersistentVolumes are cluster-scoped: qualify by namespace so two stacks of the same
    # job name on one cluster do not collide.
    return f"{config.job.namespace}-{config.job.name}-data"


def pvc_name(config: StackConfig) -> str:
    return f"{config.job.name}-data"


def pv_labels(config: StackConfig) -> dict[str, str]:
    return {**stable_labels(config), **config.storage.pv_labels}


def _volume_source(config: StackConfig, facts: ClusterFacts) -> dict[str, Any]:
    storage = config.storage
    if storage.kind == "nas":
        return {
            "mountOptions": list(NAS_MOUNT_OPTIONS),
            "csi": {
                "driver": NAS_CSI_DRIVER,
                # A static PV's handle only has to be unique per driver: the PV name is.
                "volumeHandle": pv_name(config),
                "volumeAttributes": {
                    "server": facts.nfs_server,
                    "path": "/",
                    "mode": NAS_ROOT_MODE,
                },
            },
        }
    if storage.kind == "nfs":
        return {"nfs": {"server": facts.nfs_server, "path": storage.nfs_path}}
    return {"hostPath": {"path": storage.host_path, "type": "DirectoryOrCreate"}}


def persistent_volume(config: StackConfig, facts: ClusterFacts) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": metadata(pv_name(config), pv_labels(config)),
        "spec": {
            "capacity": {"storage": config.storage.size},
            "accessModes": ["ReadWriteMany"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "",
            "volumeMode": "Filesystem",
            **_volume_source(config, facts),
        },
    }


def persistent_volume_claim(config: StackConfig) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": metadata(pvc_name(config), stable_labels(config), config.job.namespace),
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "storageClassName": "",
            "volumeMode": "Filesystem",
            "selector": {"matchLabels": pv_labels(config)},
            "resources": {"requests": {"storage": config.storage.size}},
        },
    }


def data_volume(config: StackConfig) -> dict[str, Any]:
    return {"name": DATA_VOLUME, "persistentVolumeClaim": {"claimName": pvc_name(config)}}


def data_mount(config: StackConfig, read_only: bool = False) -> dict[str, Any]:
    mount: dict[str, Any] = {"name": DATA_VOLUME, "mountPath": config.storage.mount_path}
    if read_only:
        mount["readOnly"] = True
    return mount
