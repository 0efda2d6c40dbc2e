"""Facts about the cluster that the manifests need but the stack config does not hold.

Some facts are decided by the cloud layer while `pulumi up` runs (the NAS mount-target domain
is known only once the mount target exists). The manifest builders never look inside a fact,
they only place it into an object, so the same builders serve both targets: the program
passes a `pulumi.Output[str]`, the offline render a readable placeholder string.

This module imports nothing from Pulumi: the offline render runs with PyYAML alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from infra.config import StackConfig

# The ACK GPU node pool's label and taint: infra/cloud/cluster.py labels and taints the pool
# with these, the manifests select and tolerate them; they live here so the manifests need no
# cloud import.
GPU_NODE_LABEL = ("tftrain.io/accelerator", "nvidia-gpu")
GPU_TAINT_KEY = "nvidia.com/gpu"
# The ACK spot GPU pool's label, and its taint `tftrain.io/capacity=spot:NoSchedule`: only
# pods of a `<group>.spot: true` group select and tolerate it, so nothing else lands on
# nodes that may be reclaimed.
SPOT_NODE_LABEL = ("tftrain.io/capacity", "spot")

# What the offline render shows where the program has the NAS mount target's domain.
NAS_DOMAIN_PLACEHOLDER = "<nas-mount-target-domain>"
# ... and where it has the id of the TensorBoard load balancer's access-control list.
LOAD_BALANCER_ACL_PLACEHOLDER = "<tensorboard-slb-acl-id>"
# ... the OSS endpoint the program derives from alicloud:region, and the RRSA role it makes.
OSS_ENDPOINT_PLACEHOLDER = "<oss-region-internal-endpoint>"
OSS_ROLE_PLACEHOLDER = "<oss-rrsa-role-name>"
# ... and the bucket it names from the account (data.createBucket without data.bucket).
OSS_BUCKET_PLACEHOLDER = "<tftrain-<stack>-<account-id>>"
# ... and the ids of the pod vSwitch and the security groups of an isolated ASK stack's pods,
# as the cloud section of the render names those resources' ids.
ECI_VSWITCH_PLACEHOLDER = "<network-pod-vswitch.id>"
ECI_REPLICAS_GROUP_PLACEHOLDER = "<pods-replicas.id>"
ECI_TENSORBOARD_GROUP_PLACEHOLDER = "<pods-tensorboard.id>"


def internal_oss_endpoint(region: str) -> str:
    """The region's internal OSS endpoint: no internet egress, no traffic charge from the VPC."""
    return f"oss-{region}-internal.aliyuncs.com"


# A fact is a plain string offline and a pulumi.Output[str] in the program.
Fact = Any


@dataclass(frozen=True)
class EciNetwork:
    """Where an isolated ASK stack's ECI pods sit (`ClusterConfig.isolates_eci_pods`): the
    pod vSwitch, and the security groups of the replicas and of TensorBoard ("" without)."""

    vswitch_id: Fact
    replicas_group_id: Fact
    tensorboard_group_id: Fact = ""


def offline_eci_network(config: StackConfig) -> EciNetwork:
    """The ids the program learns once the cloud has made them, as the offline render shows
    them."""
    board = ECI_TENSORBOARD_GROUP_PLACEHOLDER if config.tensorboard.enabled else ""
    return EciNetwork(ECI_VSWITCH_PLACEHOLDER, ECI_REPLICAS_GROUP_PLACEHOLDER, board)


@dataclass(frozen=True)
class ClusterFacts:
    cluster_kind: str
    # The NFS endpoint the PersistentVolume mounts: NAS mount-target domain or config nfsServer.
    nfs_server: Fact
    # The CLB access-control list of TensorBoard's load balancer ("" when the program makes
    # none: no allowedSourceRanges, or an existing cluster).
    load_balancer_acl_id: Fact = ""
    # The OSS input/export (StackConfig.uses_oss): the endpoint host, and the RAM role the CSI
    # plugin assumes when data.credentials is rrsa ("" otherwise).
    oss_endpoint: Fact = ""
    oss_role_name: Fact = ""
    oss_bucket: Fact = ""  # data.bucket, the name the stack derives, or the platform's
    # The pods' own vSwitch and security groups (ask, `ClusterConfig.isolates_eci_pods`).
    eci_network: EciNetwork | None = None


def needs_load_balancer_acl(config: StackConfig) -> bool:
    """Whether the cloud layer makes a CLB ACL for TensorBoard (ack/ask with an allow-list)."""
    board = config.tensorboard
    return (
        config.cluster.kind != "existing"
        and board.enabled
        and board.service_type == "LoadBalancer"
        and bool(board.allowed_source_ranges)
    )


def cluster_facts(
    config: StackConfig,
    nas_domain: Fact | None = None,
    load_balancer_acl_id: Fact | None = None,
    oss_endpoint: Fact | None = None,
    oss_role_name: Fact | None = None,
    oss_bucket: Fact | None = None,
    eci_network: EciNetwork | None = None,
) -> ClusterFacts:
    """Facts for `config`; a fact the program does not pass gets its offline placeholder. A
    run stack's volumes are its platform's, so it needs none of the storage facts."""
    storage = config.storage
    if storage.kind == "nas":
        server: Fact = NAS_DOMAIN_PLACEHOLDER if nas_domain is None else nas_domain
    elif storage.kind == "nfs":
        server = storage.nfs_server
    else:
        server = ""
    acl_id: Fact = ""
    if needs_load_balancer_acl(config):
        acl_id = (
            LOAD_BALANCER_ACL_PLACEHOLDER if load_balancer_acl_id is None else load_balancer_acl_id
        )
    data = config.data
    endpoint: Fact = ""
    role: Fact = ""
    bucket: Fact = ""
    if config.uses_oss:
        endpoint = data.endpoint or (
            OSS_ENDPOINT_PLACEHOLDER if oss_endpoint is None else oss_endpoint
        )
        bucket = data.bucket or (OSS_BUCKET_PLACEHOLDER if oss_bucket is None else oss_bucket)
    if config.uses_oss and config.oss_credentials == "rrsa":
        role = data.rrsa_role_name or (
            OSS_ROLE_PLACEHOLDER if oss_role_name is None else oss_role_name
        )
    if not config.cluster.isolates_eci_pods:
        eci_network = None
    elif eci_network is None:
        eci_network = offline_eci_network(config)
    return ClusterFacts(
        cluster_kind=config.cluster.kind,
        nfs_server=server,
        load_balancer_acl_id=acl_id,
        oss_endpoint=endpoint,
        oss_role_name=role,
        oss_bucket=bucket,
        eci_network=eci_network,
    )
