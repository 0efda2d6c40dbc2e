"""The Kubernetes cluster a stack trains on: ACK managed with node pools, or Serverless ASK.

Both expose the same outputs (`cluster_id`, `kubeconfig`, `node_pools`), so the program builds
its Kubernetes provider the same way for either.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pulumi
import yaml
from pulumi_alicloud import cs
from pulumi_alicloud import ram as ramsdk

from infra.cloud.kubernetes_version import cluster_version
from infra.cloud.naming import physical_name, resource_tags
from infra.cloud.network import Network
from infra.config import PROJECT
from infra.config.model import ClusterConfig, NodePoolConfig
from infra.platform.cluster_facts import GPU_NODE_LABEL, GPU_TAINT_KEY, SPOT_NODE_LABEL
from infra.platform.gpu_driver import ACK_GPU_DRIVER, ACK_GPU_DRIVER_LABEL

# Nodes of the GPU pool carry GPU_NODE_LABEL and this taint (infra.platform.cluster_facts).
# Manifests give GPU replicas the matching nodeSelector and toleration; everything else (ps, chief,
# TensorBoard) stays off the GPUs.
GPU_TAINT_VALUE = "present"
GPU_TAINT_EFFECT = "NoSchedule"
# Every GPU pool's nodes get the driver the image's CUDA needs (infra/platform/gpu_driver.py).
GPU_DRIVER_POOL_LABEL: cs.NodePoolLabelArgsDict = {
    "key": ACK_GPU_DRIVER_LABEL,
    "value": ACK_GPU_DRIVER,
}
# Nodes of the spot GPU pool: bid at the market price (cs.NodePool `spot_strategy`).
SPOT_STRATEGY = "SpotAsPriceGo"

# Pro: its control plane comes with an SLA (ack.standard has none).
CLUSTER_SPEC = "ack.pro.small"
# ESSD is supported by the current families (g7, gn6i); the provider would default to the older
# ultra disk.
NODE_DISK_CATEGORY = "cloud_essd"
NODE_IMAGE_TYPE = "AliyunLinux3"

# Addons, applied only when the cluster is created (the provider's rule):
# - the CSI plugin and provisioner, which mount the NAS PersistentVolume on the nodes;
# - no NGINX ingress: it would open a public load balancer nobody asked for.
# The NVIDIA driver and device plugin need no addon: ACK installs them on GPU instances.
COMMON_ACK_ADDONS: tuple[cs.ManagedKubernetesAddonArgsDict, ...] = (
    {"name": "csi-plugin"},
    {"name": "csi-provisioner"},
    {"name": "nginx-ingress-controller", "disabled": True},
)
# The pod network. Terway with its NetworkPolicy option is what enforces the job's
# NetworkPolicies (pods get addresses from the pod vSwitch); Flannel ignores NetworkPolicy.
NETWORK_PLUGIN_ADDONS: dict[str, cs.ManagedKubernetesAddonArgsDict] = {
    "terway": {
        "name": "terway-eniip",
        "config": json.dumps({"NetworkPolicy": "true", "IPVlan": "false", "ENITrunking": "false"}),
    },
    "flannel": {"name": "flannel"},
}

# The RAM role ACK's managed cluster-autoscaler acts with; granted once per account in the
# console (ACK's cloud resource authorization), so a stack checks it instead of owning it.
AUTOSCALER_ROLE = "AliyunCSManagedAutoScalerRole"
# Cluster-autoscaler settings: scale GPU pools up from zero nodes and back down once idle.
AUTOSCALER_SETTINGS: dict[str, Any] = {
    "scaler_type": "cluster-autoscaler",
    "scale_up_from_zero": True,
    "scale_down_enabled": True,
    "unneeded_duration": "10m",
    "expander": "least-waste",
}


def created_only(key: str, wanted: bool) -> Callable[[bool | None], bool]:
    """A check that the cluster still has what `key` asks for; ACK reads it only at creation.

    Changing such a key cannot be applied (ACK ignores it; ASK would replace the cluster with
    its data), so `pulumi preview`/`up` stop with this error instead of pretending.
    """

    def check(created: bool | None) -> bool:
        if created is not None and bool(created) != wanted:
            raise ValueError(
                f"{PROJECT}:{key} = {json.dumps(wanted)}: the cluster was created with "
                f"{json.dumps(bool(created))} and ACK applies it only at creation; set it back, "
                "or create a new stack with the value you want (see docs/deploy.md, Reaching the "
                "cluster)"
            )
        return wanted

    return check


def needs_pod_vswitch(config: ClusterConfig) -> bool:
    """Whether the cluster's pods take addresses from a pod vSwitch: ACK with Terway, and an
    ASK stack's own ECI pods (annotated onto it, `infra/cloud/pod_isolation.py`)."""
    return config.has_pod_vswitch


def _with_server(kubeconfig: str, server: str) -> str:
    """`kubeconfig` pointing at `server` (the credential API hands out the internet one)."""
    document = yaml.safe_load(kubeconfig)
    for entry in document.get("clusters", []):
        entry["cluster"]["server"] = server
    return yaml.safe_dump(document, sort_keys=False)


def _kubeconfig(
    parent: pulumi.Resource,
    cluster_id: pulumi.Output[str],
    intranet_endpoint: pulumi.Output[str] | None,
    endpoint_check: pulumi.Output[bool],
) -> pulumi.Output[str]:
    """The cluster's long-lived kubeconfig, as a secret so it is encrypted in state.

    No `temporary_duration_minutes`: a temporary credential (at most 3 days) stored in the
    Kubernetes provider's state would make `pulumi destroy`/`refresh` fail once it expired.
    The provider always requests the internet kubeconfig; for a private API server its server
    is replaced by `intranet_endpoint` (reachable from inside the VPC). `endpoint_check` fails
    the run when the public/private choice was changed after creation.
    """
    credential = cs.get_cluster_credential_output(
        cluster_id=cluster_id, opts=pulumi.InvokeOutputOptions(parent=parent)
    )
    if intranet_endpoint is None:
        kubeconfig = pulumi.Output.all(credential.kube_config, endpoint_check).apply(
            lambda args: args[0]
        )
    else:
        kubeconfig = pulumi.Output.all(
            credential.kube_config, intranet_endpoint, endpoint_check
        ).apply(lambda args: _with_server(args[0], args[1]))
    return pulumi.Output.secret(kubeconfig)


def _autoscaler_role_check(found: Sequence[str]) -> bool:
    if AUTOSCALER_ROLE not in found:
        raise ValueError(
            f"{PROJECT}:cluster.gpuPool.maxSize / cpuPool.maxSize: node autoscaling needs the RAM "
            f"role {AUTOSCALER_ROLE} and the Auto Scaling service; authorize both once per "
            "account in the ACK console (see docs/deploy.md, GPU autoscaling)"
        )
    return True


def _autoscaling_config(
    resource_name: str, cluster: cs.ManagedKubernetes, parent: pulumi.Resource
) -> cs.AutoscalingConfig:
    """The cluster autoscaler, once the account's prerequisites are checked."""
    roles = ramsdk.get_roles_output(
        name_regex=f"^{AUTOSCALER_ROLE}$", opts=pulumi.InvokeOutputOptions(parent=parent)
    )
    prerequisites = roles.names.apply(_autoscaler_role_check)
    return cs.AutoscalingConfig(
        resource_name,
        cluster_id=pulumi.Output.all(cluster.id, prerequisites).apply(lambda args: args[0]),
        **AUTOSCALER_SETTINGS,
        opts=pulumi.ResourceOptions(parent=parent),
    )


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
    depends_on: Sequence[pulumi.Resource] = (),
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
        opts=pulumi.ResourceOptions(parent=parent, depends_on=list(depends_on)),
    )


def _spot_gpu_pool(
    name: str,
    cluster: cs.ManagedKubernetes,
    network: Network,
    config: ClusterConfig,
    tags: dict[str, str],
    parent: pulumi.Resource,
    autoscaler: Sequence[pulumi.Resource],
) -> cs.NodePool:
    """The GPU pool's spot twin: same instance types, scales from 0 to
    `spotGpuPool.maxSize`, labelled and tainted so that only `spot` groups land there."""
    pool = NodePoolConfig(
        instance_types=config.gpu_pool.instance_types,
        size=0,
        min_size=0,
        max_size=config.spot_gpu_pool.max_size,
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
        labels=[{"key": key, "value": value}, GPU_DRIVER_POOL_LABEL],
        taints=[{"key": key, "value": value, "effect": "NoSchedule"}],
        spot=True,
        depends_on=autoscaler,
    )


class AckCluster(pulumi.ComponentResource):
    """An ACK managed (Pro) cluster in `network`, a CPU node pool and, for GPU jobs, a GPU pool.

    The API server gets an internet endpoint only when `config.public_api_server` (creation
    only). With Terway (`config.network_plugin`) pods take addresses from the network's pod
    vSwitch and NetworkPolicies are enforced; with Flannel they come from `pod_cidr`. A pool
    with `max_size` autoscales, through the cluster autoscaler configured here. `node_pools`
    lists the pools (CPU first); the Kubernetes provider should depend on them, since a
    cluster without nodes accepts objects it cannot run.

    Outputs: `cluster_id`, `kubeconfig` (secret), `version`.
    """

    cluster_id: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    version: pulumi.Output[str]
    node_pools: list[cs.NodePool]

    def __init__(
        self,
        name: str,
        config: ClusterConfig,
        network: Network,
        uses_gpu: bool,
        opts: pulumi.ResourceOptions | None = None,
        enable_rrsa: bool = False,
    ) -> None:
        """`enable_rrsa`: the cluster's RRSA OIDC provider (for the OSS data's RAM role);
        ACK cannot turn it off again once on."""
        super().__init__("tftrain:cloud:AckCluster", name, None, opts)
        tags = resource_tags(name)
        if needs_pod_vswitch(config) and network.pod_vswitch_id is None:
            raise ValueError("Terway needs a Network built with pod_vswitch=True")
        cluster = _managed_cluster(name, config, network, enable_rrsa, tags, self)
        self.cluster_id = cluster.id
        self.version = cluster.version
        self.rrsa_metadata = cluster.rrsa_metadata
        self.node_pools = _node_pools(name, cluster, network, config, uses_gpu, tags, self)

        check = cluster.slb_internet_enabled.apply(
            created_only("cluster.publicApiServer", config.public_api_server)
        )
        intranet = None
        if not config.public_api_server:
            intranet = cluster.connections.apply(_intranet_endpoint)
        self.kubeconfig = _kubeconfig(self, self.cluster_id, intranet, check)
        self.register_outputs(
            {"cluster_id": self.cluster_id, "kubeconfig": self.kubeconfig, "version": self.version}
        )


def _managed_cluster(
    name: str,
    config: ClusterConfig,
    network: Network,
    enable_rrsa: bool,
    tags: dict[str, str],
    parent: pulumi.Resource,
) -> cs.ManagedKubernetes:
    terway = needs_pod_vswitch(config)
    return cs.ManagedKubernetes(
        f"{name}-ack",
        name=config.name or physical_name(name),
        cluster_spec=CLUSTER_SPEC,
        version=cluster_version(config),
        # Control-plane vSwitches (`worker_vswitch_ids` is deprecated in the 4.x
        # provider); the nodes' vSwitches are set per node pool.
        vswitch_ids=[network.vswitch_id],
        pod_vswitch_ids=[network.pod_vswitch_id] if terway else None,
        pod_cidr=None if terway else network.config.pod_cidr,
        service_cidr=network.config.service_cidr,
        # The Network component owns egress. The provider never sends a false value (a
        # `GetOk` on a bool), so ACK's snat_entry default applies: it uses the VPC's NAT,
        # which exists first, and would create one if none did (natGateway: false is
        # refused on ack for that reason). Kept to state the intent in the inputs.
        new_nat_gateway=False,
        slb_internet_enabled=config.public_api_server,
        # Keep the cluster CA out of Pulumi state; the credential data source serves it.
        skip_set_certificate_authority=True,
        addons=[NETWORK_PLUGIN_ADDONS[config.network_plugin], *COMMON_ACK_ADDONS],
        enable_rrsa=enable_rrsa or None,
        tags=tags,
        # Wait for the NAT and SNAT entry: nodes pull images while they join.
        opts=pulumi.ResourceOptions(
            parent=parent,
            depends_on=[network],
            # The provider reads slb_internet_enabled only at creation: a change is caught
            # by `created_only` instead of showing a diff that does nothing.
            ignore_changes=["slbInternetEnabled"],
        ),
    )


def _node_pools(
    name: str,
    cluster: cs.ManagedKubernetes,
    network: Network,
    config: ClusterConfig,
    uses_gpu: bool,
    tags: dict[str, str],
    parent: pulumi.Resource,
) -> list[cs.NodePool]:
    """The CPU pool, the GPU pool when the run uses GPUs, and the spot GPU pool if sized."""
    pools = [("cpu", config.cpu_pool, {})]
    gpu_pool = config.gpu_pool
    if uses_gpu and (gpu_pool.size > 0 or gpu_pool.max_size > 0):
        gpu_placement = {
            "labels": [
                {"key": GPU_NODE_LABEL[0], "value": GPU_NODE_LABEL[1]},
                GPU_DRIVER_POOL_LABEL,
            ],
            "taints": [
                {"key": GPU_TAINT_KEY, "value": GPU_TAINT_VALUE, "effect": GPU_TAINT_EFFECT}
            ],
        }
        pools.append(("gpu", gpu_pool, gpu_placement))
    # Autoscaling pools need the autoscaler configured before they are created.
    autoscaler = (
        [_autoscaling_config(f"{name}-autoscaler", cluster, parent)]
        if config.spot_gpu_pool.max_size or any(pool.max_size > 0 for _, pool, _ in pools)
        else []
    )
    # The pools wait for the cluster through their cluster_id input.
    node_pools = [
        _node_pool(
            f"{name}-{kind}-pool",
            cluster,
            network,
            pool,
            kind,
            tags,
            parent,
            depends_on=autoscaler,
            **placement,
        )
        for kind, pool, placement in pools
    ]
    if config.spot_gpu_pool.max_size:
        node_pools.append(_spot_gpu_pool(name, cluster, network, config, tags, parent, autoscaler))
    return node_pools


def _intranet_endpoint(connections: Sequence[Any]) -> str:
    """The API server's VPC address from a cluster's `connections` (the SDK's list of one)."""
    endpoint = getattr(connections[0], "api_server_intranet", None) if connections else None
    if not endpoint:
        raise ValueError("the cluster reports no intranet API server endpoint")
    return str(endpoint)


def _ask_intranet_endpoint(
    name: str, cluster: cs.ServerlessKubernetes, parent: pulumi.Resource
) -> pulumi.Output[str]:
    """The ASK cluster's VPC endpoint, read once the cluster exists.

    `ServerlessKubernetes` has no `connections`, and the cluster list the provider still
    supports (`cs.get_clusters`, DescribeClustersForRegion, as `api_server_reach` uses it)
    reports no endpoint at all; the serverless list (DescribeClusters) is deprecated and being
    switched off. `ManagedKubernetes`, which manages ACK Serverless clusters too (its
    `profile: Serverless`), reads them with DescribeClusterDetail and sets `connections` from
    its `master_url`: so the cluster is read, never listed, and nothing indexes a list that may
    be empty. Offline the read answers nothing and nothing is checked (the one lookup rule);
    an empty answer stops the run naming the endpoint (`_intranet_endpoint`).
    """
    found = cs.ManagedKubernetes.get(
        f"{name}-ask-endpoint", cluster.id, opts=pulumi.ResourceOptions(parent=parent)
    )
    return found.connections.apply(_intranet_endpoint)


class AskCluster(pulumi.ComponentResource):
    """A Serverless Kubernetes (ASK) cluster in `network`: every pod is an ECI instance.

    ECI pods get vSwitch addresses and no public IPs, so public images come in through the
    network's NAT. The API server is internal unless `config.public_api_server` (creation
    only). CoreDNS is the service discovery, because TF_CONFIG addresses are
    `<pod>.<namespace>.svc` names. `node_pools` is always empty (no nodes to wait for) so the
    program treats both kinds alike.

    Outputs: `cluster_id`, `kubeconfig` (secret), `version`, `security_group_id` (the group
    ASK made for the cluster: where its pods sit unless annotated into another).
    """

    cluster_id: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    version: pulumi.Output[str]
    security_group_id: pulumi.Output[str]
    node_pools: list[cs.NodePool]

    def __init__(
        self,
        name: str,
        config: ClusterConfig,
        network: Network,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tftrain:cloud:AskCluster", name, None, opts)
        # No addons: ECI mounts NAS and NFS volumes itself, and the defaults cover the rest.
        cluster = cs.ServerlessKubernetes(
            f"{name}-ask",
            name=config.name or physical_name(name),
            cluster_spec=CLUSTER_SPEC,
            version=cluster_version(config),
            vpc_id=network.vpc_id,
            vswitch_ids=[network.vswitch_id],
            service_cidr=network.config.service_cidr,
            # Read at creation only: without it ASK installs no DNS and `*.svc` names fail.
            service_discovery_types=["CoreDNS"],
            new_nat_gateway=False,
            endpoint_public_access_enabled=config.public_api_server,
            tags=resource_tags(name),
            # Wait for the NAT and SNAT entry: the first pods pull public images.
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[network],
                # A change would replace the cluster (ForceNew): `created_only` rejects it.
                ignore_changes=["endpointPublicAccessEnabled"],
            ),
        )
        self.cluster_id = cluster.id
        self.version = cluster.version
        self.security_group_id = cluster.security_group_id
        self.node_pools = []
        check = cluster.endpoint_public_access_enabled.apply(
            created_only("cluster.publicApiServer", config.public_api_server)
        )
        intranet = None
        if not config.public_api_server:
            intranet = _ask_intranet_endpoint(name, cluster, self)
        self.kubeconfig = _kubeconfig(self, self.cluster_id, intranet, check)
        self.register_outputs(
            {"cluster_id": self.cluster_id, "kubeconfig": self.kubeconfig, "version": self.version}
        )
