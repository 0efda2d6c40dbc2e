"""The shared volume: one statically provisioned PersistentVolume and the claim that binds it
(a run stack's volume is its platform's, issued to its namespace: `run_access.py`).

The PV carries the stack's `storage.pvLabels`; the PVC selects exactly those labels and asks
for no StorageClass (`""`), so it binds to this PV and never triggers dynamic provisioning.
`Retain`: deleting the claim or the volume object never deletes the data; the NAS file
system itself outlives `pulumi destroy` by default (`storage.retainOnDestroy`, cloud/nas.py).

Write access for the non-root trainer (uid 10000):
- nas: the PV mounts the sub-directory `/tftrain/<namespace>` of the file system, never its
  root. The NAS CSI node plugin refuses a `mode` on `/`; for a sub-directory it creates the
  directory when it is missing (as root, mode 0755) and then chmods the mounted directory to
  `mode`, non-recursively. Nothing chowns it, and the kubelet skips fsGroup for this
  ReadWriteMany CSI volume, so uid 10000 writes there as "other": `NAS_SUBDIR_MODE` grants
  "other" write and search but not listing, on this one directory only. Everything the trainer
  creates below it is its own (uid 10000, umask 022). docs/cloud-evidence.md has the source lines.
- nfs: the export must be writable by uid 10000 (e.g. `all_squash,anonuid=10000`).
- hostPath: the node directory must be writable by uid 10000
  (`install -d -o 10000 -g 10000 /var/lib/tftrain`); kind/minikube provisioner dirs are.
"""

from __future__ import annotations

from typing import Any

from infra.config import StackConfig
from infra.manifests.common import claim_ref, metadata, stable_labels
from infra.manifests.issued_names import CLAIMS, DATA_ROLE, issued_labels
from infra.platform.cluster_facts import ClusterFacts

NAS_CSI_DRIVER = "nasplugin.csi.alibabacloud.com"
# ACK's recommended NFS options for NAS: v3, no lock daemon, TCP, no reserved source port
# (so a reconnecting node can reuse its connection); and `lookupcache=positive`: nfs(5) says
# the client then "always revalidates negative entries before an application can use them",
# where by default a name found missing stays missing until the directory's cached
# attributes expire (acdirmin 30 s to acdirmax 60 s). The run's outcome records, heartbeats
# and the ps's preemption notice are new names another pod looks for: with it, one lookup
# RPC sees them at once. Their contents are read by opening the file, which close-to-open
# consistency (the default `cto`) revalidates with the server; attribute caching stays on
# for checkpoints and event files (docs/lifecycle.md "Lifecycle").
NAS_MOUNT_OPTIONS = ("nolock,tcp,noresvport", "vers=3", "lookupcache=positive")
# The stacks' directory on a NAS file system; one sub-directory per namespace, so stacks of
# different namespaces sharing a file system cannot see each other's runs through the PV.
NAS_SUBDIR_ROOT = "/tftrain"
# rwx for root (the owner), write + search but no listing for everyone else: uid 10000 can
# create `<job>/<run>` inside and reach it by name, without the mount being world-listable.
NAS_SUBDIR_MODE = "0733"
DATA_VOLUME = "data"


def pv_name(config: StackConfig) -> str:
    # PersistentVolumes are cluster-scoped: qualify by namespace so two stacks of the same
    # job name on one cluster do not collide.
    return f"{config.job.namespace}-{config.job.name}-data"


def pvc_name(config: StackConfig) -> str:
    """A run stack's claim binds the volume its platform issued to the namespace."""
    if config.cluster.role == "run":
        return CLAIMS[DATA_ROLE]
    return f"{config.job.name}-data"


def nas_subdir_of(namespace: str) -> str:
    return f"{NAS_SUBDIR_ROOT}/{namespace}"


def pv_labels(config: StackConfig) -> dict[str, str]:
    if config.cluster.role == "run":
        return issued_labels(config.job.namespace, DATA_ROLE)
    return {**stable_labels(config), **config.storage.pv_labels}


def nas_volume(server: Any, path: str, handle: str) -> dict[str, Any]:
    """A NAS PersistentVolume's source: `path` of the file system behind mount target `server`."""
    return {
        "mountOptions": list(NAS_MOUNT_OPTIONS),
        "csi": {
            "driver": NAS_CSI_DRIVER,
            # A static PV's handle only has to be unique per driver: the PV name is.
            "volumeHandle": handle,
            "volumeAttributes": {"server": server, "path": path, "mode": NAS_SUBDIR_MODE},
        },
    }


def _volume_source(config: StackConfig, facts: ClusterFacts) -> dict[str, Any]:
    storage = config.storage
    if storage.kind == "nas":
        return nas_volume(facts.nfs_server, nas_subdir_of(config.job.namespace), pv_name(config))
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
            # Reserved for this stack's claim: a claim in another namespace that matched
            # the size and labels could otherwise bind it and mount this run's directory.
            "claimRef": claim_ref(config.job.namespace, pvc_name(config)),
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
