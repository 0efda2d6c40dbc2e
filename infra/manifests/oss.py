"""The user's bucket: its input prefix read-only in every training pod, its export prefix
writable in the one replica that ends the run. Two static PersistentVolumes of the Alibaba
Cloud CSI OSS plugin, each bound by label selector by its claim, as the NAS pair is
(storage.py). docs/cloud-evidence.md has the driver source lines for every attribute.

- Read-only input: the PV and the claim are ReadOnlyMany and the pod mounts it readOnly. The
  plugin turns a reader-only access mode (or a read-only publish) into ossfs's `ro` option,
  so even the mount itself refuses writes.
- The export target: ReadWriteMany, `<bucket>/<exportPrefix>`. Only the replica that ends
  the run mounts it (infra.lifecycle.ends_run): no other replica can touch the bucket.
- Both show their files as the trainer's uid/gid, so the non-root trainer reads the input and
  the supervisor writes the export. On ACK the plugin adds `allow_other` itself; on ASK ECI
  mounts OSS and only does what `otherOpts` says, so it is set there.
- Credentials: `rrsa` names a RAM role that the plugin's ossfs pods assume through the
  cluster's OIDC provider (no key anywhere); `secret` names the node publish Secret: the one
  this stack makes in the job's namespace from the AccessKey Pulumi secrets
  (`data.accessKeyId`/`accessKeySecret`; its data is a Pulumi secret, `[secret]` offline), or
  `data.credentialsSecret`, `<namespace>/<name>` of one the user manages.
- The bucket's name is a fact (`ClusterFacts.oss_bucket`): the stack may derive it from the
  account, or a run stack take its platform's.
"""

from __future__ import annotations

from typing import Any

from infra.config import StackConfig
from infra.manifests.common import (
    base64_text,
    claim_ref,
    metadata,
    stable_labels,
    volume_labels,
)
from infra.manifests.security import RUN_AS
from infra.platform.cluster_facts import ClusterFacts
from infra.replica_plan.run_data import export_env, input_env

OSS_CSI_DRIVER = "ossplugin.csi.alibabacloud.com"
INPUT_VOLUME = "input"
EXPORT_VOLUME = "export"
# Where the replica that ends the run sees `<bucket>/<exportPrefix>`.
EXPORT_PATH = "/export"
# A PV needs a capacity and a claim a request no larger; OSS has no size, ossfs ignores it.
NOMINAL_CAPACITY = "1Ti"


# The keys the plugin reads from a node publish Secret (pkg/oss/utils.go
# parseCredentialsFromSecret).
KEY_ID, KEY_SECRET = "akId", "akSecret"


def oss_enabled(config: StackConfig) -> bool:
    return config.uses_oss


def owns_credentials_secret(config: StackConfig) -> bool:
    """Whether the stack makes the node publish Secret (from the AccessKey secrets)."""
    return config.oss_credentials == "secret" and bool(config.data.access_key_id)


def credentials_secret_ref(config: StackConfig) -> dict[str, str]:
    """The Secret the volumes name: the stack's own, or the user's `<namespace>/<name>`."""
    if owns_credentials_secret(config):
        return {"name": f"{config.job.name}-oss-credentials", "namespace": config.job.namespace}
    namespace, name = config.data.credentials_secret.split("/", 1)
    return {"name": name, "namespace": namespace}


def credentials_secret(config: StackConfig) -> dict[str, Any]:
    """The node publish Secret made from `data.accessKeyId`/`accessKeySecret`."""
    data = config.data
    ref = credentials_secret_ref(config)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(ref["name"], stable_labels(config), ref["namespace"]),
        "type": "Opaque",
        "data": {
            KEY_ID: base64_text(data.access_key_id),
            KEY_SECRET: base64_text(data.access_key_secret),
        },
    }


def mount_options(config: StackConfig) -> str:
    """ossfs options: files as the trainer's uid/gid; on ASK also `allow_other`, which ECI
    (unlike ACK's plugin) does not add, so a non-root container could not see the mount."""
    options = [f"uid={RUN_AS}", f"gid={RUN_AS}"]
    if config.cluster.kind == "ask":
        options.append("allow_other")
    return " ".join(f"-o {option}" for option in options)


def _name(config: StackConfig, role: str) -> str:
    return f"{config.job.name}-{role}"


def _pv_name(config: StackConfig, role: str) -> str:
    # Cluster-scoped: qualified by namespace, as the NAS PV is.
    return f"{config.job.namespace}-{config.job.name}-{role}"


def _labels(config: StackConfig, role: str) -> dict[str, str]:
    return {**volume_labels(config), "tftrain.io/volume": role}


def _attributes(config: StackConfig, facts: ClusterFacts, prefix: str) -> dict:
    attributes: dict[str, Any] = {
        "bucket": facts.oss_bucket,
        "url": facts.oss_endpoint,
        # ossfs mounts this directory of the bucket; "/" + a prefix ending in "/".
        "path": f"/{prefix}",
        "otherOpts": mount_options(config),
    }
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
        "volumeAttributes": _attributes(config, facts, prefix),
    }
    if config.oss_credentials == "secret":
        csi["nodePublishSecretRef"] = credentials_secret_ref(config)
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
            "claimRef": claim_ref(config.job.namespace, _name(config, role)),
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
    """The stack's credentials Secret (if it makes one), the input PV + claim and the export
    PV + claim; nothing without a bucket. The Secret comes first: the PVs name it."""
    if not oss_enabled(config):
        return []
    data = config.data
    return [
        *([credentials_secret(config)] if owns_credentials_secret(config) else []),
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


def pod_export_dir(config: StackConfig) -> str:
    """Where a pod exports: the mounted export prefix, and in it the run stack's namespace.
    Run stacks of one platform share its export prefix; with `<namespace>/` between it and
    `<job>/<runId>/`, two teams' runs that derive the same run id (the same settings) no longer
    export to one directory, where the first one's marker would make the second skip."""
    if config.cluster.role == "run":
        return f"{EXPORT_PATH}/{config.job.namespace}"
    return EXPORT_PATH


def oss_env(config: StackConfig, ends_run: bool) -> dict[str, str]:
    """TFTRAIN_INPUT_DIR everywhere; the bundled trainer's TFTRAIN_DATA_DIR points at it
    unless job.dataDir names another path; TFTRAIN_EXPORT_DIR where the export goes."""
    if not oss_enabled(config):
        return {}
    return {
        **input_env(config, config.data.input_path),
        **(export_env(config, pod_export_dir(config)) if ends_run else {}),
    }
