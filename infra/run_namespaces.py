"""A platform stack's run namespaces (`cluster.runNamespaces`): for each, what
`infra/manifests/run_access.py` builds (namespace, ServiceAccount, Role, RoleBinding, token
Secret, volumes), registered with the platform's own credential, plus on ACK the RAM role its
OSS volumes assume; and what run stacks read of it: one kubeconfig per namespace (a secret)
and the role names."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from infra.config import PROJECT, StackConfig
from infra.config.model import DataConfig
from infra.kube_resources import kube_resource
from infra.manifests.run_access import DEPLOYER, TOKEN_KEY, export_prefix_of, namespace_kubeconfig
from infra.platform.outputs import RUN_KUBECONFIGS, RUN_OSS_ROLE_NAMES


def namespace_data(data: DataConfig, namespace: str) -> DataConfig:
    """The platform's data as one run namespace's volumes see it: its own export directory."""
    return replace(data, export_prefix=export_prefix_of(data.export_prefix, namespace))


def _component(namespace: str) -> str:
    """`oss-access-<namespace>`: its physical name (`<project>-<stack>-…`, at most 63
    characters) names the RAM role and policy, so where the namespace would be cut off, a
    digest of it stands in (two long namespaces must not share a role)."""
    from infra.cloud import physical_name

    if physical_name("oss-access", namespace).endswith(f"-{namespace}"):
        return f"oss-access-{namespace}"
    return f"oss-access-{hashlib.sha256(namespace.encode()).hexdigest()[:12]}"


def namespace_roles(
    config: StackConfig, bucket: str, oidc_provider_arn: Any, issuer_url: Any, after: list
) -> dict[str, Any]:
    """On ACK with rrsa: a RAM role per run namespace (`OssRrsaAccess`), whose policy reads the
    platform's input prefix and writes `<export prefix><namespace>/` only."""
    from infra import cloud

    data = config.data
    return {
        namespace: cloud.OssRrsaAccess(
            _component(namespace),
            namespace_data(data, namespace),
            bucket,
            oidc_provider_arn=oidc_provider_arn,
            issuer_url=issuer_url,
            opts=pulumi.ResourceOptions(depends_on=after),
        )
        for namespace in config.cluster.run_namespaces
    }


def _token(data: Mapping[str, str] | None, namespace: str) -> str:
    """The ServiceAccount's token from its Secret (the provider waits until the token
    controller has filled it: pulumi-kubernetes #2048)."""
    encoded = (data or {}).get(TOKEN_KEY)
    if not encoded:
        raise pulumi.RunError(
            f"{PROJECT}:cluster.runNamespaces: the token Secret of {namespace}/{DEPLOYER} has no "
            f"{TOKEN_KEY}: the cluster's token controller did not fill it; `pulumi up` again"
        )
    return base64.b64decode(encoded).decode()


def _register(
    objects: list[dict[str, Any]],
    provider: k8s.Provider,
    volumes_after: list[pulumi.Resource],
    roles: Mapping[str, Any],
) -> dict[tuple[str, str], pulumi.Resource]:
    """Each object after its namespace; the token Secret after its ServiceAccount (the token
    controller needs it: pulumi-kubernetes #4396); a volume after the storage it mounts and
    the RAM role of its namespace."""
    registered: dict[tuple[str, str], pulumi.Resource] = {}
    for obj in objects:
        kind, meta = obj["kind"], obj["metadata"]
        deps = [registered[("Namespace", meta["namespace"])]] if "namespace" in meta else []
        if kind == "Secret":
            deps.append(registered[("ServiceAccount", meta["namespace"])])
        if kind == "RoleBinding":
            deps.append(registered[("Role", meta["namespace"])])
        if kind == "PersistentVolume":
            role = roles.get(obj["spec"]["claimRef"]["namespace"])
            deps += [*volumes_after, *([role] if role else [])]
        resource = kube_resource(obj, pulumi.ResourceOptions(provider=provider, depends_on=deps))
        registered[(kind, meta.get("namespace", meta["name"]))] = resource
    return registered


def issue_namespaces(
    config: StackConfig,
    admin: tuple[k8s.Provider, pulumi.Output[str]] | None,
    objects: list[dict[str, Any]],
    roles: Mapping[str, Any],
    volumes_after: list[pulumi.Resource],
) -> dict[str, Any]:
    """Register what the platform issues its run namespaces (`objects`) with its own provider
    and kubeconfig (`admin`); return the platform outputs run stacks read."""
    kubeconfigs: dict[str, pulumi.Output[str]] = {}
    if admin is not None:
        provider, admin_kubeconfig = admin
        registered = _register(objects, provider, volumes_after, roles)
        for namespace in config.cluster.run_namespaces:
            data = registered[("Secret", namespace)].data  # type: ignore[attr-defined]
            kubeconfigs[namespace] = pulumi.Output.all(admin_kubeconfig, data).apply(
                lambda args, ns=namespace: namespace_kubeconfig(args[0], ns, _token(args[1], ns))
            )
    exports: dict[str, Any] = {RUN_KUBECONFIGS: pulumi.Output.secret(kubeconfigs)}
    if roles:
        exports[RUN_OSS_ROLE_NAMES] = {ns: role.role_name for ns, role in roles.items()}
    return exports
