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
  account.
- A run stack makes only the claims (and its AccessKey Secret, on ASK): its volumes are the
  ones its platform issued to its namespace (`run_access.py`, by `oss_volume`), the export
  already `<exportPrefix><namespace>/`.
"""

from __future__ import annotations

from typing import Any

from infra.config import StackConfig
from infra.manifests.common import base64_text, claim_ref, metadata, stable_labels
from infra.manifests.issued_names import CLAIMS, OSS_CREDENTIALS_SECRET, issued_labels
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
    """The Secret the volumes name: the stack's own (a run stack's by the name its platform's
    volumes name), or the user's `<namespace>/<name>`."""
    if owns_credentials_secret(config):
        name = f"{config.job.name}-oss-credentials"
        if config.cluster.role == "run":
            name = OSS_CREDENTIALS_SECRET
        return {"name": name, "namespace": config.job.namespace}
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


def mount_options(cluster_kind: str) -> str:
    """ossfs options: files as the trainer's uid/gid; on ASK also `allow_other`, which ECI
    (unlike ACK's plugin) does not add, so a non-root container could not see the mount."""
    options = [f"uid={RUN_AS}", f"gid={RUN_AS}"]
    if cluster_kind == "ask":
        options.append("allow_other")
    return " ".join(f"-o {option}" for option in options)


def _name(config: StackConfig, role: str) -> str:
    if config.cluster.role == "run":
        return CLAIMS[role]  # the claim of the volume its platform issued
    return f"{config.job.name}-{role}"


def _pv_name(config: StackConfig, role: str) -> str:
    # Cluster-scoped: qualified by namespace, as the NAS PV is.
    return f"{config.job.namespace}-{config.job.name}-{role}"


def _labels(config: StackConfig, role: str) -> dict[str, str]:
    if config.cluster.role == "run":
        return issued_labels(config.job.namespace, role)
    return {**stable_labels(config), "tftrain.io/volume": role}


def oss_volume(
    cluster_kind: str,
    bucket: Any,
    endpoint: Any,
    prefix: str,
    *,
    handle: str,
    writer: bool,
    role_name: Any = None,
    secret_ref: dict[str, str] | None = None,
) -> dict[str, Any]:
    """An OSS PersistentVolume's `csi`: `<bucket>/<prefix>`, through RAM role `role_name`
    (rrsa) or the node publish Secret `secret_ref`."""
    attributes: dict[str, Any] = {
        "bucket": bucket,
        "url": endpoint,
        # ossfs mounts this directory of the bucket; "/" + a prefix ending in "/".
        "path": f"/{prefix}",
        "otherOpts": mount_options(cluster_kind),
    }
    if role_name is not None:
        attributes["authType"] = "rrsa"
        attributes["roleName"] = role_name
    csi: dict[str, Any] = {
        "driver": OSS_CSI_DRIVER,
        "volumeHandle": handle,
        "volumeAttributes": attributes,
    }
    if secret_ref is not None:
        csi["nodePublishSecretRef"] = secret_ref
    if not writer:
        csi["readOnly"] = True
    return csi


def _persistent_volume(
    config: StackConfig, facts: ClusterFacts, role: str, prefix: str, writer: bool
) -> dict[str, Any]:
    rrsa = config.oss_credentials == "rrsa"
    csi = oss_volume(
        config.cluster.kind, facts.oss_bucket, facts.oss_endpoint, prefix,
        handle=_pv_name(config, role), writer=writer,
        role_name=facts.oss_role_name if rrsa else None,
        secret_ref=None if rrsa else credentials_secret_ref(config),
    )  # fmt: skip
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
    # A run stack's volumes are its platform's (run_access.py): it makes only the claims.
    issued = config.cluster.role == "run"
    volumes = {
        INPUT_VOLUME: [] if issued else [
            _persistent_volume(config, facts, INPUT_VOLUME, data.input_prefix, writer=False)
        ],
        EXPORT_VOLUME: [] if issued else [
            _persistent_volume(config, facts, EXPORT_VOLUME, data.export_prefix, writer=True)
        ],
    }  # fmt: skip
    return [
        *([credentials_secret(config)] if owns_credentials_secret(config) else []),
        *volumes[INPUT_VOLUME],
        _claim(config, INPUT_VOLUME, writer=False),
        *volumes[EXPORT_VOLUME],
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
    unless job.dataDir names another path; TFTRAIN_EXPORT_DIR where the export goes."""
    if not oss_enabled(config):
        return {}
    return {
        **input_env(config, config.data.input_path),
        **(export_env(config, EXPORT_PATH) if ends_run else {}),
    }
