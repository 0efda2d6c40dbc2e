"""The cluster's `version` argument, checked against the versions ACK offers at deploy time.

`latest` sends no version: ACK creates the cluster on the newest version it offers then, and
the optional+computed argument never diffs afterwards, so a new ACK release upgrades nothing.
An explicit version is looked up with the provider's `cs.get_kubernetes_version` data source
(ACK's DescribeKubernetesVersionMetadata, which without a query mode lists the versions new
clusters can be created on). A version ACK does not offer stops `preview`/`up` with a message
naming the key, instead of a CreateCluster error after the network is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
from pulumi_alicloud import cs

from infra.config import PROJECT
from infra.config.model import ClusterConfig
from infra.config.types import LATEST_VERSION

# (cluster_type, profile) of the data source per cluster kind: ASK is a managed cluster with
# the Serverless profile (the data source accepts only Kubernetes / ManagedKubernetes types).
VERSION_QUERY: dict[str, tuple[str, str]] = {
    "ack": ("ManagedKubernetes", "Default"),
    "ask": ("ManagedKubernetes", "Serverless"),
}


def offered_versions(metadatas: Sequence[Any] | None) -> list[str]:
    """The version strings of the data source's `metadatas`, newest first."""
    found = {str(getattr(entry, "version", "") or "") for entry in metadatas or ()}
    return sorted((v for v in found if v), key=_version_key, reverse=True)


def _version_key(version: str) -> tuple[int, ...]:
    numbers = version.replace("-aliyun.", ".").split(".")
    return tuple(int(n) if n.isdigit() else -1 for n in numbers)


def check_offered(wanted: str, kind: str, metadatas: Sequence[Any] | None) -> str:
    """`wanted` if ACK offers it for `kind`, else an error listing what it offers.

    `None` is the offline render's answer (it asks no cloud: the result stays unknown, and
    the render shows the lookup instead). Any answer from a provider is a list, and an empty
    one (no versions, an unexpected response) cannot confirm the version: refused too.
    """
    if metadatas is None:
        return wanted
    offered = offered_versions(metadatas)
    if wanted in offered:
        return wanted
    cluster_type, profile = VERSION_QUERY[kind]
    if not offered:
        raise pulumi.RunError(
            f"{PROJECT}:cluster.kubernetesVersion = {wanted!r}: ACK listed no versions for new "
            f"{cluster_type} clusters with profile {profile} in this region, so it cannot be "
            f"checked; use `{LATEST_VERSION}`, or retry when the version lookup answers"
        )
    raise pulumi.RunError(
        f"{PROJECT}:cluster.kubernetesVersion = {wanted!r}: ACK does not offer it for new "
        f"{cluster_type} clusters with profile {profile} in this region; offered: "
        f"{', '.join(offered)}. Pick one of them, or `{LATEST_VERSION}`, which keeps "
        "a running cluster on its version and creates a new one on the newest"
    )


def require_offered_version(config: ClusterConfig) -> None:
    """Stop the program when the stack pins a version ACK does not offer.

    A blocking lookup, called before the first cloud resource is registered: a refused
    version must leave nothing behind, and the network (VPC, NAT, EIP) is registered before
    the cluster. `preview` runs the same lookup, so a review sees the refusal too.
    """
    if config.kubernetes_version == LATEST_VERSION:
        return
    cluster_type, profile = VERSION_QUERY[config.kind]
    result = cs.get_kubernetes_version(cluster_type=cluster_type, profile=profile)
    check_offered(config.kubernetes_version, config.kind, result.metadatas)


def cluster_version(config: ClusterConfig) -> str | None:
    """The `version` input of an ACK or ASK cluster: none for `latest`, else the pinned one
    (which `require_offered_version` has checked)."""
    return None if config.kubernetes_version == LATEST_VERSION else config.kubernetes_version
