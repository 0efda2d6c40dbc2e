"""The user's bucket: its input prefix read-only in every training pod, its export prefix
writable in the one replica that ends the run. Two static PersistentVolumes of the Alibaba
Cloud CSI OSS plugin, each bound by label selector by its claim, as the NAS pair is
(storage.py). docs/cloud-evidence.md has the driver source lines for every attribute.

- Read-only input: the PV and the claim are ReadOnlyMany and the pod mounts it readOnly. The
  plugin turns a reader-only access mode (or a read-only publish) into ossfs's `ro` option,
  so even the mount itself refuses writes.
- The export target: ReadWriteMany, `<bucket>/<exportPrefix>`, with ossfs showing the files
  as the trainer's uid/gid so the non-root supervisor can write there. Only the replica that
  ends the run mounts it (infra.lifecycle.ends_run): no other replica can touch the bucket.
- Credentials: `rrsa` names a RAM role that the plugin's ossfs pods assume through the
  cluster's OIDC provider (no key anywhere); `secret` names a Secret of the job's namespace
  (keys akId/akSecret) that the user creates with kubectl, sent to the plugin as the node
  publish secret. Neither puts an AccessKey in the stack's config, state or render.
"""

from __future__ import annotations

from typing import Any

from infra.cluster_facts import ClusterFacts
from infra.config import StackConfig
from infra.manifests.common import metadata, stable_labels, volume_labels
from infra.manifests.security import RUN_AS
from infra.run_data import export_env, input_env

OSS_CSI_DRIVER = "ossplugin.csi.alibabacloud.com"
INPUT_VOLUME = "input"
EXPORT_VOLUME = "export"
# Where the replica that ends the run sees `<bucket>/<exportPrefix>`.
EXPORT_PATH = "/export"
# A PV needs a capacity and a claim a request no larger; OSS has no size, ossfs ignores it.
NOMINAL_CAPACITY = "1Ti"


def oss_enabled(config: StackConfig) -> bool:
    return bool(config.data.bucket)


def _name(config: StackConfig, role: str) -> str:
    return f"{config.job.name}-{role}"


def _pv_name(config: StackConfig, role: str) -> str:
    # Cluster-scoped: qualified by namespace, as the NAS PV is.
    return f"{config.job.namespace}-{config.job.name}-{role}"


def _labels(config: StackConfig, role: str) -> dict[str, str]:
    return {**volume_labels(config), "tftrain.io/volume": role}


def _attributes(config: StackConfig, facts: ClusterFacts, prefix: str, writer: bool) -> dict:
    data = config.data
    attributes: dict[str, Any] = {
        "bucket": data.bucket,
        "url": facts.oss_endpoint,
        # ossfs mounts this directory of the bucket; "/" + a prefix ending in "/".
        "path": f"/{prefix}",
    }
    if writer:
        attributes["otherOpts"] = f"-o uid={RUN_AS} -o gid={RUN_AS}"
    if config.oss_credentials == "rrsa":
        attributes["authType"] = "rrsa"
        attributes["roleName"] = facts.oss_role_name
    return attributes


def _persistent_volume(
    config: StackConfig, facts: ClusterFacts, role: str, prefix: str, writer: bool
) -> dict[str, Any]:
    csi: dict[str, Any] = {
        "driver": OSS_CSI_DRIVER,
        "volumeHandle": _pv_name(config, role),
        "volumeAttributes": _attributes(config, facts, prefix, writer),
    }
    if config.oss_credentials == "secret":
        csi["nodePublishSecretRef"] = {
            "name": config.data.credentials_secret,
            "namespace": config.job.namespace,
        }
    if not writer:
        csi["readOnly"] = True
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": metadata(_pv_name(config, role), _labels(config, role)),
        "spec": {
            "capacity": {"storage": NOMINAL_CAPACITY},
            "accessModes": ["ReadWriteMany" if writer else "ReadOnlyMany"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "",
            "volumeMode": "Filesystem",
            "csi": csi,
        },
    }


def _claim(config: StackConfig, role: str, writer: bool) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": metadata(_name(config, role), stable_labels(config), config.job.namespace),
        "spec": {
            "accessModes": ["ReadWriteMany" if writer else "ReadOnlyMany"],
            "storageClassName": "",
            "volumeMode": "Filesystem",
            "selector": {"matchLabels": _labels(config, role)},
            "resources": {"requests": {"storage": NOMINAL_CAPACITY}},
        },
    }


def oss_objects(config: StackConfig, facts: ClusterFacts) -> list[dict[str, Any]]:
    """The input PV + claim and the export PV + claim, or nothing without a bucket."""
    if not oss_enabled(config):
        return []
    data = config.data
    return [
        _persistent_volume(config, facts, INPUT_VOLUME, data.input_prefix, writer=False),
        _claim(config, INPUT_VOLUME, writer=False),
        _persistent_volume(config, facts, EXPORT_VOLUME, data.export_prefix, writer=True),
        _claim(config, EXPORT_VOLUME, writer=True),
    ]


def oss_volumes(config: StackConfig, ends_run: bool) -> list[dict[str, Any]]:
    if not oss_enabled(config):
        return []
    roles = (INPUT_VOLUME, EXPORT_VOLUME) if ends_run else (INPUT_VOLUME,)
    return [
        {"name": role, "persistentVolumeClaim": {"claimName": _name(config, role)}}
        for role in roles
    ]


def oss_mounts(config: StackConfig, ends_run: bool) -> list[dict[str, Any]]:
    if not oss_enabled(config):
        return []
    mounts: list[dict[str, Any]] = [
        {"name": INPUT_VOLUME, "mountPath": config.data.input_path, "readOnly": True}
    ]
    if ends_run:
        mounts.append({"name": EXPORT_VOLUME, "mountPath": EXPORT_PATH})
    return mounts


def oss_env(config: StackConfig, ends_run: bool) -> dict[str, str]:
    """TFTRAIN_INPUT_DIR everywhere; the bundled trainer's TFTRAIN_DATA_DIR points at it
    unless job.dataDir names another path; TFTRAIN_EXPORT_DIR where the export is mounted."""
    if not oss_enabled(config):
        return {}
    return {
        **input_env(config, config.data.input_path),
        **(export_env(config, EXPORT_PATH) if ends_run else {}),
    }
