"""The names and labels that tie a run stack's claims to the volumes its platform issued to
its namespace (`run_access.py`): the platform makes the volumes, the run the claims."""

from __future__ import annotations

from infra.manifests.common import APP, NAMESPACE_LABEL

DATA_ROLE, INPUT_ROLE, EXPORT_ROLE = "data", "input", "export"
# The claim of each volume in the run namespace (its PersistentVolume's claimRef).
CLAIMS = {role: f"tftrain-{role}" for role in (DATA_ROLE, INPUT_ROLE, EXPORT_ROLE)}
# The node publish Secret an issued OSS volume names when the run brings an AccessKey (no RRSA).
OSS_CREDENTIALS_SECRET = "tftrain-oss-credentials"


def issued_labels(namespace: str, role: str) -> dict[str, str]:
    """A volume issued to `namespace`, and what its claim there selects it by."""
    return {"app.kubernetes.io/name": APP, NAMESPACE_LABEL: namespace, "tftrain.io/volume": role}


def issued_volume_name(namespace: str, role: str) -> str:
    """Cluster-scoped, so qualified by namespace."""
    return f"tftrain-{namespace}-{role}"
