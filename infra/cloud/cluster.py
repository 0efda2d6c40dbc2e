"""The Kubernetes cluster a stack trains on: ACK managed with node pools, or Serverless ASK.

Both expose the same outputs (`cluster_id`, `kubeconfig`, `node_pools`), so the program builds
its Kubernetes provider the same way for either.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
from pulumi_alicloud import cs

from infra.cloud.naming import physical_name, resource_tags
from infra.cloud.network import Network
from infra.cluster_facts import SPOT_NODE_LABEL
from infra.config import ClusterConfig, NodePoolConfig

# Nodes of the GPU pool carry this label and taint. Manifests give GPU replicas the matching
# nodeSelector and toleration; everything else (ps, chief, TensorBoard) stays off the GPUs.
GPU_NODE_LABEL = ("tftrain.io/accelerator", "nvidia-gpu")
GPU_TAINT_KEY = "nvidia.com/gpu"
GPU_TAINT_VALUE = "present"
GPU_TAINT_EFFECT = "NoSchedule"
# Nodes of the spot GPU pool: bid at the market price (cs.NodePool `spot_strategy`).
SPOT_STRATEGY = "SpotAsPriceGo"

# Pro: its control plane comes with an SLA (ack.standard has none).
CLUSTER_SPEC = "ack.pro.small"
# How long an issued kubeconfig stays valid. ACK's default lasts years; a short-lived one bounds
# the damage of a leaked stack output. Every `pulumi up`/`preview` issues a fresh one.
DEFAULT_CREDENTIAL_MINUTES = 24 * 60
# ESSD is supported by the current families (g7, gn6i); the provider would default to the older
# ultra disk.
NODE_DISK_CATEGORY = "cloud_essd"
NODE_IMAGE_TYPE = "AliyunLinux3"

# Addons, applied only when the cluster is created (the provider's rule):
# - flannel, because `pod_cidr` is a Flannel setting (Terway would need pod vSwitches);
# - the CSI plugin and provisioner, which mount the NAS PersistentVolume on the nodes;
# - no NGINX ingress: it would open a public load balancer nobody asked for.
# The NVIDIA driver and device plugin need no addon: ACK installs them on GPU instances.
ACK_ADDONS: tuple[cs.ManagedKubernetesAddonArgsDict, ...] = (
    {"name": "flannel"},
    {"name": "csi-plugin"},
    {"name": "csi-provisioner"},
    {"name": "nginx-ingress-controller", "disabled": True},
)


def _kubeconfig(
    parent: pulumi.Resource, cluster_id: pulumi.Output[str], minutes: int
) -> pulumi.Output[str]:
    """A temporary kubeconfig of the cluster, as a secret so it is encrypted in state."""
    credential = cs.get_cluster_credential_output(
        cluster_id=cluster_id,
        temporary_duration_minutes=minutes,
        opts=pulumi.InvokeOutputOptions(parent=parent),
    )
    return pulumi.Output.secret(credential.kube_config)


def _node_pool(
    resource_name: str,
    cluster: cs.ManagedKubernetes,
    network: Network,
    pool: NodePoolConfig,
    scaling_type: str,
    tags: dict[str, str],
    parent: pulumi.Resource,
    labels: Sequence[cs.NodePoolLabelArgsDict] = (),
    taints: Sequence[cs.NodePoolTaintArgsDict] = (),
    spot: bool = False,
) -> cs.NodePool:
    """A node pool of `cluster`: a fixed size, or an autoscaling range when `max_size` is set."""
    autoscaling = pool.max_size > 0
    scaling: cs.NodePoolScalingConfigArgsDict | None = (
        {"enable": True, "min_size": pool.min_size, "max_size": pool.max_size, "type": scaling_type}
        if autoscaling
        else None
    )
    # No password or key pair: nodes are not reachable over SSH (operate them with kubectl or
    # ECS Cloud Assistant). No public IPs: egress is the network's NAT.
    return cs.NodePool(
        resource_name,
        cluster_id=cluster.id,
        node_pool_name=resource_name,
        vswitch_ids=[network.vswitch_id],
        instance_types=list(pool.instance_types),
        image_type=NODE_IMAGE_TYPE,
        system_disk_category=NODE_DISK_CATEGORY,
        system_disk_size=pool.disk_size,
        # The 4.x provider types desired_size as a string; autoscaling pools set none.
        desired_size=None if autoscaling else str(pool.size),
        scaling_config=scaling,
        labels=list(labels) or None,
        taints=list(taints) or None,
        # Spot: bid at the market price; when ECS announces a reclaim, the scaling group
        # starts a replacement before the node goes (spot_instance_remedy).
        spot_strategy=SPOT_STRATEGY if spot else None,
        spot_instance_remedy=True if spot else None,
        tags=tags,
        opts=pulumi.ResourceOptions(parent=parent),
    )


def _spot_gpu_pool(
    name: str,
    cluster: cs.ManagedKubernetes,
    network: Network,
    config: ClusterConfig,
    tags: dict[str, str],
    parent: pulumi.Resource,
) -> cs.NodePool:
    """The GPU pool's spot twin: same instance types, scales from 0 to
    `spot_gpu_pool_max_size`, labelled and tainted so that only `spot` groups land there."""
    pool = NodePoolConfig(
        instance_types=config.gpu_pool.instance_types,
        size=0,
        min_size=0,
        max_size=config.spot_gpu_pool_max_size,
        disk_size=config.gpu_pool.disk_size,
    )
    key, value = SPOT_NODE_LABEL
    return _node_pool(
        f"{name}-spot-gpu-pool",
        cluster,
        network,
        pool,
        "gpu",
        tags,
        parent,
        labels=[{"key": key, "value": value}],
        taints=[{"key": key, "value": value, "effect": "NoSchedule"}],
        spot=True,
    )


class AckCluster(pulumi.ComponentResource):
    """An ACK managed (Pro) cluster in `network`, a CPU node pool and, for GPU jobs, a GPU pool.

    The API server gets an internet load balancer only when `config.public_api_server`.
    The pod and service CIDRs come from `network.config`. `node_pools` lists the pools (CPU
    first); the Kubernetes provider should depend on them, since a cluster without nodes
    accepts objects it cannot run.

    Outputs: `cluster_id`, `kubeconfig` (secret).
    """

    cluster_id: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    node_pools: list[cs.NodePool]

    def __init__(
        self,
        name: str,
        config: ClusterConfig,
        network: Network,
        uses_gpu: bool,
        opts: pulumi.ResourceOptions | None = None,
        credential_minutes: int = DEFAULT_CREDENTIAL_MINUTES,
    ) -> None:
        super().__init__("tftrain:cloud:AckCluster", name, None, opts)
        tags = resource_tags(name)
        cluster = cs.ManagedKubernetes(
            f"{name}-ack",
            name=config.name or physical_name(name),
            cluster_spec=CLUSTER_SPEC,
            version=config.kubernetes_version,
            # Control-plane vSwitches (`worker_vswitch_ids` is deprecated in the 4.x
            # provider); the nodes' vSwitches are set per node pool below.
            vswitch_ids=[network.vswitch_id],
            pod_cidr=network.config.pod_cidr,
            service_cidr=network.config.service_cidr,
            # The Network component owns egress; a second, cluster-made NAT would be a hidden
            # cost and a second way out.
            new_nat_gateway=False,
            slb_internet_enabled=config.public_api_server,
            # Keep the cluster CA out of Pulumi state; the credential data source serves it.
            skip_set_certificate_authority=True,
            addons=list(ACK_ADDONS),
            tags=tags,
            # Wait for the NAT and SNAT entry: nodes pull images while they join.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[network]),
        )
        self.cluster_id = cluster.id

        # The pools wait for the cluster through their cluster_id input.
        self.node_pools = [
            _node_pool(f"{name}-cpu-pool", cluster, network, config.cpu_pool, "cpu", tags, self)
        ]
        gpu_pool = config.gpu_pool
        if uses_gpu and (gpu_pool.size > 0 or gpu_pool.max_size > 0):
            self.node_pools.append(
                _node_pool(
                    f"{name}-gpu-pool",
                    cluster,
                    network,
                    gpu_pool,
                    "gpu",
                    tags,
                    self,
                    labels=[{"key": GPU_NODE_LABEL[0], "value": GPU_NODE_LABEL[1]}],
                    taints=[
                        {"key": GPU_TAINT_KEY, "value": GPU_TAINT_VALUE, "effect": GPU_TAINT_EFFECT}
                    ],
                )
            )

        if config.spot_gpu_pool_max_size:
            self.node_pools.append(_spot_gpu_pool(name, cluster, network, config, tags, self))

        self.kubeconfig = _kubeconfig(self, self.cluster_id, credential_minutes)
        self.register_outputs({"cluster_id": self.cluster_id, "kubeconfig": self.kubeconfig})


class AskCluster(pulumi.ComponentResource):
    """A Serverless Kubernetes (ASK) cluster in `network`: every pod is an ECI instance.

    ECI pods get vSwitch addresses and no public IPs, so public images come in through the
    network's NAT. The API server is internal unless `config.public_api_server`. CoreDNS is
    the service discovery, because TF_CONFIG addresses are `<pod>.<namespace>.svc` names.
    `node_pools` is always empty (no nodes to wait for) so the program treats both kinds alike.

    Outputs: `cluster_id`, `kubeconfig` (secret).
    """

    cluster_id: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    node_pools: list[cs.NodePool]

    def __init__(
        self,
        name: str,
        config: ClusterConfig,
        network: Network,
        opts: pulumi.ResourceOptions | None = None,
        credential_minutes: int = DEFAULT_CREDENTIAL_MINUTES,
    ) -> None:
        super().__init__("tftrain:cloud:AskCluster", name, None, opts)
        # No addons: ECI mounts NAS and NFS volumes itself, and the defaults cover the rest.
        cluster = cs.ServerlessKubernetes(
            f"{name}-ask",
            name=config.name or physical_name(name),
            cluster_spec=CLUSTER_SPEC,
            version=config.kubernetes_version,
            vpc_id=network.vpc_id,
            vswitch_ids=[network.vswitch_id],
            service_cidr=network.config.service_cidr,
            service_discovery_types=["CoreDNS"],
            new_nat_gateway=False,
            endpoint_public_access_enabled=config.public_api_server,
            tags=resource_tags(name),
            # Wait for the NAT and SNAT entry: the first pods pull public images.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[network]),
        )
        self.cluster_id = cluster.id
        self.node_pools = []

        self.kubeconfig = _kubeconfig(self, self.cluster_id, credential_minutes)
        self.register_outputs({"cluster_id": self.cluster_id, "kubeconfig": self.kubeconfig})
