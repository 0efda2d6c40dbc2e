"""Can `pulumi up` on this machine reach the private API server it is about to use?

A private API server (the default) has only a VPC address. From a laptop, a first `up` would
build the VPC, NAT, cluster, pools and NAS (~20 minutes, billed) and then fail on every
Kubernetes object. So the program asks before anything is registered:

- a cluster of this stack that exists already: the endpoint its kubeconfig names is probed
  once the kubeconfig is known (`kubeconfig_reachable`): unreachable stops `up` before any
  Kubernetes object is sent, and `preview` warns (a review may run elsewhere);
- no cluster yet: this machine can reach the new one only if it sits in the stack's existing
  VPC (`network.vpcId`; the ECS metadata service says which VPC it is in) or that VPC is joined
  to this machine's network (`network.vpnJoined`); a new VPC cannot be either, so `preview` and
  `up` refuse before the first billed resource and name the ways out.

A platform stack sends no Kubernetes object and is not checked; a run stack probes its
platform's kubeconfig the same way. The offline render asks no cloud (its lookup answers
nothing) and checks nothing here.
"""

from __future__ import annotations

import re
import socket
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import pulumi
import yaml

from infra.cloud.lookup import listed
from infra.config import PROJECT
from infra.config.model import ClusterConfig, NetworkConfig

# The ECS metadata service in its hardened mode (a token first), which also serves the normal
# mode: https://www.alibabacloud.com/help/en/ecs/user-guide/view-instance-metadata
METADATA = "http://100.100.100.200/latest"
_TOKEN_TTL_HEADER = "X-aliyun-ecs-metadata-token-ttl-seconds"
_TOKEN_HEADER = "X-aliyun-ecs-metadata-token"
_METADATA_TIMEOUT = 1.0  # the service answers locally or not at all (off ECS)
_PROBE_TIMEOUT = 5.0

WAYS_OUT = (
    "set cluster.publicApiServer: true (before the first up), run pulumi from an ECS instance "
    "in an existing VPC named by network.vpcId, or set network.vpnJoined: true when that VPC is "
    "joined to this machine's network (VPN, Express Connect, CEN); see docs/deploy.md, "
    "Reaching the cluster"
)


def this_machine_vpc() -> str | None:
    """The VPC this machine is in when it is an ECS instance, else None."""
    # Off ECS the address does not route: no proxy may answer for it.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        token_request = urllib.request.Request(
            f"{METADATA}/api/token", method="PUT", headers={_TOKEN_TTL_HEADER: "60"}
        )
        with opener.open(token_request, timeout=_METADATA_TIMEOUT) as response:
            token = response.read(512).decode().strip()
        vpc_request = urllib.request.Request(
            f"{METADATA}/meta-data/vpc-id", headers={_TOKEN_HEADER: token}
        )
        with opener.open(vpc_request, timeout=_METADATA_TIMEOUT) as response:
            return response.read(128).decode().strip() or None
    except (OSError, urllib.error.URLError, UnicodeDecodeError):
        return None


def connects(endpoint: str, timeout: float = _PROBE_TIMEOUT) -> bool:
    """Whether a TCP connection to the API server `endpoint` (an https URL) opens from here."""
    parts = urlsplit(endpoint if "//" in endpoint else f"https://{endpoint}")
    if not parts.hostname:
        return False
    try:
        with socket.create_connection((parts.hostname, parts.port or 443), timeout=timeout):
            return True
    except OSError:
        return False


def first_up_problem(network: NetworkConfig, exists: bool, machine_vpc: str | None) -> str | None:
    """Why a private API server of a stack cannot be reached from here on this `up`, or None."""
    if exists or network.vpn_joined:
        return None
    if network.vpc_id and machine_vpc == network.vpc_id:
        return None
    where = (
        f"this machine is not in network.vpcId {network.vpc_id}"
        if network.vpc_id
        else "the stack creates a new VPC, which no machine is in yet"
    )
    return (
        f"{PROJECT}:cluster.publicApiServer = false: the cluster's API server would only have a "
        f"VPC address and {where}, so every Kubernetes object would fail after ~20 minutes of "
        f"billed cloud resources. Nothing was created. To go on: {WAYS_OUT}"
    )


# cs.get_clusters, through `infra.cloud.lookup` (an offline render's unknown result checks
# nothing; an empty list is a cluster that does not exist yet).
GET_CLUSTERS = "alicloud:cs/getClusters:getClusters"


def _cluster_exists(clusters: Sequence[Mapping[str, Any]], name: str) -> bool:
    return any(found.get("clusterName") == name for found in clusters)


def require_reachable_api_server(
    cluster: ClusterConfig, network: NetworkConfig, cluster_name: str
) -> None:
    """Stop the program before anything is registered when a private API server this stack
    creates could not be reached from this machine (see the module docstring)."""
    if cluster.public_api_server:
        return
    found = listed(GET_CLUSTERS, {"nameRegex": f"^{re.escape(cluster_name)}$"}, "clusters")
    if found is None:  # the offline render: no cloud to ask
        return
    exists = _cluster_exists(found, cluster_name)
    machine_vpc = None if exists or network.vpn_joined else this_machine_vpc()
    problem = first_up_problem(network, exists, machine_vpc)
    if problem is not None:
        raise pulumi.RunError(problem)


def kubeconfig_reachable(kubeconfig: str, key: str) -> str:
    """`kubeconfig`, once the API server its first cluster names opens from here."""
    (entry, *_) = yaml.safe_load(kubeconfig)["clusters"]
    check_reachable(entry["cluster"]["server"], key)
    return kubeconfig


def check_reachable(endpoint: str, key: str = f"{PROJECT}:cluster.publicApiServer = false") -> str:
    """`endpoint` when it opens from here; otherwise `up` stops before any Kubernetes object
    is sent and `preview` warns (it may run where the cluster is not reachable, e.g. in CI).
    `key`: what the message names (a run stack: its platformStack, whose cluster it is)."""
    if connects(endpoint):
        return endpoint
    message = (
        f"{key}: this machine cannot reach the cluster's API server {endpoint}; run pulumi "
        "from where it is reachable (a private one: inside the stack's VPC or a network joined "
        "to it; docs/deploy.md, Reaching the cluster)"
    )
    if pulumi.runtime.is_dry_run():
        pulumi.log.warn(message + "; `pulumi up` from here would stop at this point")
        return endpoint
    raise pulumi.RunError(message)
