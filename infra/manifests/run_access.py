"""What a platform stack issues each run namespace (`cluster.runNamespaces`), so that a run
stack needs nothing cluster-wide and can touch nothing outside its namespace.

Per namespace:
- the Namespace (Pod Security "restricted" enforced: the run's credentials cannot relax it);
- the run stack's identity: ServiceAccount `tftrain-deployer`, a Role granting only the
  namespaced kinds a run stack creates or reads (`ROLE_RULES`, no wildcard), its RoleBinding,
  and a `kubernetes.io/service-account-token` Secret whose token the platform turns into the
  namespace's kubeconfig (`namespace_kubeconfig`, a Pulumi secret output);
- the cluster-scoped objects the run needs and its credentials must not create: its
  PersistentVolumes, each pre-bound (`claimRef`) to a claim of fixed name in that namespace.
  The NAS volume mounts `/tftrain/<namespace>`; the OSS export volume `<exportPrefix><namespace>/`
  with, on ACK, a RAM role per namespace whose policy writes only there.

A run stack renders the claims (`storage.py`, `oss.py`) by the names and labels here. Pure: no
Pulumi import; a fact is a string offline and a `pulumi.Output` in the program.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from infra.config import StackConfig
from infra.manifests.common import APP, claim_ref, metadata, pss_namespace
from infra.manifests.issued_names import (
    CLAIMS,
    DATA_ROLE,
    EXPORT_ROLE,
    INPUT_ROLE,
    OSS_CREDENTIALS_SECRET,
    issued_labels,
    issued_volume_name,
)
from infra.manifests.oss import NOMINAL_CAPACITY, oss_volume
from infra.manifests.storage import nas_subdir_of, nas_volume
from infra.platform.cluster_facts import ClusterFacts

DEPLOYER = "tftrain-deployer"
TOKEN_SECRET = f"{DEPLOYER}-token"
TOKEN_KEY = "token"  # the key the token controller fills in the Secret's data
SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"
# NAS enforces no PersistentVolume capacity (the volume is the whole directory): a ceiling
# every claim's `storage.size` fits under, so the platform need not know a run's.
NAS_NOMINAL_CAPACITY = "1Pi"

_MANAGE = ["get", "list", "watch", "create", "update", "patch", "delete"]
_READ = ["get", "list", "watch"]
# What a run stack's `pulumi up`/`destroy` creates and deletes (infra/manifests: Secrets,
# NetworkPolicies, claims, the supervisor's ConfigMap, Services, Jobs, TensorBoard's
# Deployment), and what the provider's await logic, `tftrain status` and `tftrain logs` read
# (pods and their logs, events, a Deployment's ReplicaSets, a Service's endpoints). No
# `pods/exec`, no RBAC or ServiceAccount object: nothing to grant itself more with.
ROLE_RULES: list[dict[str, list[str]]] = [
    {
        "apiGroups": [""],
        "resources": ["configmaps", "persistentvolumeclaims", "secrets", "services"],
        "verbs": _MANAGE,
    },
    {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": _MANAGE},
    {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": _MANAGE},
    {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": _MANAGE},
    {"apiGroups": [""], "resources": ["endpoints", "events", "pods", "pods/log"], "verbs": _READ},
    # `kubectl port-forward` to TensorBoard (its ClusterIP Service: stack output
    # tensorboardPortForward) opens a stream to a pod of the namespace.
    {"apiGroups": [""], "resources": ["pods/portforward"], "verbs": ["create"]},
    {"apiGroups": ["apps"], "resources": ["replicasets"], "verbs": _READ},
    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": _READ},
    {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": _READ},
]


@dataclass(frozen=True)
class IssuedStorage:
    """The platform's storage, as its issued volumes mount it."""

    cluster_kind: str
    nfs_server: Any = None  # the NAS mount target; None: the platform has no NAS
    oss_bucket: Any = None  # None: the platform has no bucket
    oss_endpoint: Any = ""
    input_prefix: str = ""
    export_prefix: str = ""


def export_prefix_of(export_prefix: str, namespace: str) -> str:
    """Where a run namespace's exports go: its own directory under the platform's prefix."""
    return f"{export_prefix}{namespace}/"


def _access_objects(namespace: str) -> list[dict[str, Any]]:
    labels = {"app.kubernetes.io/name": APP}
    role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": DEPLOYER}
    subject = {"kind": "ServiceAccount", "name": DEPLOYER, "namespace": namespace}
    return [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": metadata(DEPLOYER, labels, namespace),
            # Its token is for `pulumi up` outside the cluster, never mounted into a pod.
            "automountServiceAccountToken": False,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": metadata(DEPLOYER, labels, namespace),
            "rules": [dict(rule) for rule in ROLE_RULES],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": metadata(DEPLOYER, labels, namespace),
            "roleRef": role_ref,
            "subjects": [subject],
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": metadata(
                TOKEN_SECRET, labels, namespace, {"kubernetes.io/service-account.name": DEPLOYER}
            ),
            "type": SERVICE_ACCOUNT_TOKEN,
        },
    ]


def _volumes(namespace: str, storage: IssuedStorage, role_name: Any) -> list[dict[str, Any]]:
    def pv(role: str, capacity: str, access: str) -> dict[str, Any]:
        name = issued_volume_name(namespace, role)
        return {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": metadata(name, issued_labels(namespace, role)),
            "spec": {
                "capacity": {"storage": capacity},
                "accessModes": [access],
                "persistentVolumeReclaimPolicy": "Retain",
                "storageClassName": "",
                "volumeMode": "Filesystem",
                "claimRef": claim_ref(namespace, CLAIMS[role]),
            },
        }

    volumes = []
    if storage.nfs_server is not None:
        data = pv(DATA_ROLE, NAS_NOMINAL_CAPACITY, "ReadWriteMany")
        handle = data["metadata"]["name"]
        data["spec"].update(nas_volume(storage.nfs_server, nas_subdir_of(namespace), handle))
        volumes.append(data)
    if storage.oss_bucket is not None:
        secret_ref = None if role_name is not None else OSS_CREDENTIALS_SECRET
        prefixes = {
            INPUT_ROLE: storage.input_prefix,
            EXPORT_ROLE: export_prefix_of(storage.export_prefix, namespace),
        }
        for role, prefix in prefixes.items():
            writer = role == EXPORT_ROLE
            volume = pv(role, NOMINAL_CAPACITY, "ReadWriteMany" if writer else "ReadOnlyMany")
            handle = volume["metadata"]["name"]
            volume["spec"]["csi"] = oss_volume(
                storage.cluster_kind, storage.oss_bucket, storage.oss_endpoint, prefix,
                handle=handle, writer=writer, role_name=role_name,
                secret_ref={"name": secret_ref, "namespace": namespace} if secret_ref else None,
            )  # fmt: skip
            volumes.append(volume)
    return volumes


def issued_objects(
    namespace: str, storage: IssuedStorage, oss_role_name: Any = None
) -> list[dict[str, Any]]:
    """Everything the platform creates for run namespace `namespace`, in creation order.
    `oss_role_name`: the namespace's RRSA role (ACK); None: the run's AccessKey Secret."""
    return [
        pss_namespace(namespace, {"app.kubernetes.io/name": APP}),
        *_access_objects(namespace),
        *_volumes(namespace, storage, oss_role_name),
    ]


def issued_storage(config: StackConfig, facts: ClusterFacts) -> IssuedStorage:
    """Platform `config`'s storage as its issued volumes mount it (`facts`: the NAS mount
    target, the bucket and its endpoint, as the program or the render has them)."""
    return IssuedStorage(
        cluster_kind=config.cluster.kind,
        nfs_server=facts.nfs_server,  # the platform's NAS: a platform stores on nothing else
        oss_bucket=facts.oss_bucket if config.uses_oss else None,
        oss_endpoint=facts.oss_endpoint,
        input_prefix=config.data.input_prefix,
        export_prefix=config.data.export_prefix,
    )


def platform_objects(
    config: StackConfig, facts: ClusterFacts, role_names: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """What platform `config` issues all its run namespaces; `role_names`: each namespace's
    RRSA role (none: its runs bring an AccessKey)."""
    storage = issued_storage(config, facts)
    return [
        obj
        for namespace in config.cluster.run_namespaces
        for obj in issued_objects(namespace, storage, role_names.get(namespace))
    ]


def namespace_kubeconfig(admin_kubeconfig: str, namespace: str, token: str) -> str:
    """A kubeconfig for `namespace`'s ServiceAccount: the admin kubeconfig's cluster (its API
    server and CA, as issued by ACK), the ServiceAccount's token, the namespace as default."""
    admin = yaml.safe_load(admin_kubeconfig)
    contexts = {entry["name"]: entry["context"] for entry in admin.get("contexts", [])}
    current = contexts.get(admin.get("current-context", ""), {})
    clusters = {entry["name"]: entry["cluster"] for entry in admin["clusters"]}
    cluster = clusters.get(current.get("cluster", ""), admin["clusters"][0]["cluster"])
    name = f"tftrain-{namespace}"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": {"token": token}}],
        "contexts": [
            {"name": name, "context": {"cluster": name, "user": name, "namespace": namespace}}
        ],
        "current-context": name,
    }
    return yaml.safe_dump(config, sort_keys=False)
