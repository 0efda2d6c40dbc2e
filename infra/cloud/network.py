"""The stack's VPC, vSwitch and NAT egress.

Nodes and ECI pods get no public IPs: the only way out to the internet (public images, pip) is
an enhanced NAT gateway with one EIP and an SNAT entry for the vSwitch, created before the
cluster. ASK is told not to create its own NAT (`new_nat_gateway=False`, which its provider
sends); ACK's provider drops a false value, so ACK uses this NAT (and would make its own without
one: `network.natGateway: false` is refused on ack). One visible egress path either way.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

import pulumi
from pulumi_alicloud import ecs, vpc

from infra.cloud.naming import physical_name, resource_tags
from infra.config import PROJECT
from infra.config.model import NetworkConfig

# Pay-by-traffic EIP: a training stack pulls images in bursts and is idle otherwise, so a
# per-GB price beats a fixed bandwidth. The bandwidth is only a cap (1-200 Mbit/s allowed).
NAT_EIP_BANDWIDTH_MBPS = "100"


def _existing_vpc_cidr(
    config: NetworkConfig, found: Sequence[vpc.outputs.GetNetworksVpcResult]
) -> str:
    """`config.vpc_cidr`, once checked against the existing VPC it stands for."""
    key = f"{PROJECT}:network.vpcId = {config.vpc_id!r}"
    if len(found) != 1:
        raise ValueError(f"{key}: no such VPC in this region")
    if found[0].cidr_block != config.vpc_cidr:
        # The NAS rule admits vpcCidr: a wrong value locks nodes out or lets others in.
        raise ValueError(
            f"{PROJECT}:network.vpcCidr = {config.vpc_cidr!r}: must be the CIDR of "
            f"{config.vpc_id}, {found[0].cidr_block}"
        )
    return config.vpc_cidr


def _existing_vswitch(
    config: NetworkConfig, found: Sequence[vpc.outputs.GetSwitchesVswitchResult]
) -> vpc.outputs.GetSwitchesVswitchResult:
    """The configured vSwitch, which must exist, in the configured VPC's primary CIDR."""
    key = f"{PROJECT}:network.vswitchId = {config.vswitch_id!r}"
    if len(found) != 1:
        raise ValueError(f"{key}: no such vSwitch in this region")
    vswitch = found[0]
    if vswitch.vpc_id != config.vpc_id:
        raise ValueError(f"{key}: it belongs to {vswitch.vpc_id}, not vpcId {config.vpc_id}")
    # A vSwitch in a secondary VPC CIDR would be outside the NAS access rule.
    inside = ipaddress.ip_network(vswitch.cidr_block).subnet_of(
        ipaddress.ip_network(config.vpc_cidr)  # type: ignore[arg-type]
    )
    if not inside:
        raise ValueError(f"{key}: its CIDR {vswitch.cidr_block} is outside {config.vpc_cidr}")
    return vswitch


class Network(pulumi.ComponentResource):
    """A VPC + vSwitch (new or existing) and, unless disabled, NAT egress for it.

    `config.vpc_id` / `config.vswitch_id` reuse what exists. For an existing VPC the CIDR
    reported as `vpc_cidr` (and used for the NAS access rule) is `config.vpc_cidr`, which must
    equal the existing VPC's CIDR; the deployment stops if it does not. For an existing
    vSwitch, its real zone and CIDR are read from the cloud, so `zoneId` / `vswitchCidr` in
    the stack config do not apply to it; it must lie in that VPC's primary CIDR. A new
    vSwitch goes into `config.zone_id`, which is never looked up (see the config rule).

    With `pod_vswitch`, a second vSwitch in the same zone (`config.pod_vswitch_cidr`) gives
    the pods their addresses (`pods`: whose, for its description: Terway's on ACK, the job's
    ECI pods on ASK), with its own SNAT entry; `pod_vswitch_id` and `pod_vswitch_cidr` are
    then set.

    Outputs: `vpc_id`, `vswitch_id`, `vpc_cidr`, `vswitch_cidr`, `zone_id`.
    `config` is kept so clusters can read the pod and service CIDRs of the same network.
    Depending on this component (`depends_on=[network]`) waits for the NAT and SNAT entry too.
    """

    vpc_id: pulumi.Output[str]
    vswitch_id: pulumi.Output[str]
    vpc_cidr: pulumi.Output[str]
    vswitch_cidr: pulumi.Output[str]
    zone_id: pulumi.Output[str]
    pod_vswitch_id: pulumi.Output[str] | None
    pod_vswitch_cidr: pulumi.Output[str] | None
    config: NetworkConfig

    def __init__(
        self,
        name: str,
        config: NetworkConfig,
        opts: pulumi.ResourceOptions | None = None,
        pod_vswitch: bool = False,
        pods: str = "Terway",
    ) -> None:
        super().__init__("tftrain:cloud:Network", name, None, opts)
        self.config = config
        child = pulumi.ResourceOptions(parent=self)
        tags = resource_tags(name)

        self._vpc(name, tags, child)
        self._vswitch(name, tags, child)
        self.pod_vswitch_id = self.pod_vswitch_cidr = None
        if pod_vswitch:
            # Terway requires pod vSwitches in the zones of the nodes' vSwitches; ECI pods stay
            # in the zone of the NAS mount target and of the cluster's vSwitch.
            switch = vpc.Switch(
                f"{name}-pod-vswitch",
                vswitch_name=physical_name(name, "pods"),
                vpc_id=self.vpc_id,
                cidr_block=config.pod_vswitch_cidr,
                zone_id=self.zone_id,
                description=f"tftrain pod addresses ({pods}) of {name}",
                tags=tags,
                opts=child,
            )
            self.pod_vswitch_id, self.pod_vswitch_cidr = switch.id, switch.cidr_block
        if config.nat_gateway:
            self._nat_egress(name, tags, child)

        self.register_outputs(
            {
                "vpc_id": self.vpc_id,
                "vswitch_id": self.vswitch_id,
                "vpc_cidr": self.vpc_cidr,
                "vswitch_cidr": self.vswitch_cidr,
                "zone_id": self.zone_id,
            }
        )

    def _vpc(self, name: str, tags: dict[str, str], child: pulumi.ResourceOptions) -> None:
        """The VPC named by `network.vpcId` (its CIDR looked up), or a new one."""
        config = self.config
        if config.vpc_id:
            self.vpc_id = pulumi.Output.from_input(config.vpc_id)
            self.vpc_cidr = vpc.get_networks_output(
                ids=[config.vpc_id], opts=pulumi.InvokeOutputOptions(parent=self)
            ).apply(lambda found: _existing_vpc_cidr(config, found.vpcs))
            return
        network = vpc.Network(
            f"{name}-vpc",
            vpc_name=physical_name(name),
            cidr_block=config.vpc_cidr,
            description=f"tftrain network of {name}",
            tags=tags,
            opts=child,
        )
        self.vpc_id = network.id
        self.vpc_cidr = network.cidr_block

    def _vswitch(self, name: str, tags: dict[str, str], child: pulumi.ResourceOptions) -> None:
        """The vSwitch named by `network.vswitchId` (CIDR and zone looked up), or a new one in
        `network.zoneId`."""
        config = self.config
        if config.vswitch_id:
            existing = vpc.get_switches_output(
                ids=[config.vswitch_id], opts=pulumi.InvokeOutputOptions(parent=self)
            ).apply(lambda found: _existing_vswitch(config, found.vswitches))
            self.vswitch_id = pulumi.Output.from_input(config.vswitch_id)
            self.vswitch_cidr = existing.cidr_block
            self.zone_id = existing.zone_id
            return
        # Never looked up: a lookup may answer differently next run, and a new zone
        # replaces the vSwitch, the NAS file system and the cluster (config requires it).
        if not config.zone_id:
            raise ValueError(f"{PROJECT}:network.zoneId must be set for a new vSwitch")
        self.zone_id = pulumi.Output.from_input(config.zone_id)
        switch = vpc.Switch(
            f"{name}-vswitch",
            vswitch_name=physical_name(name),
            vpc_id=self.vpc_id,
            cidr_block=config.vswitch_cidr,
            zone_id=self.zone_id,
            description=f"tftrain nodes, pods and NAS mount target of {name}",
            tags=tags,
            opts=child,
        )
        self.vswitch_id = switch.id
        self.vswitch_cidr = switch.cidr_block

    def _nat_egress(self, name: str, tags: dict[str, str], child: pulumi.ResourceOptions) -> None:
        """Enhanced NAT + EIP + SNAT so private nodes and pods reach public registries."""
        nat = vpc.NatGateway(
            f"{name}-nat",
            nat_gateway_name=physical_name(name),
            vpc_id=self.vpc_id,
            vswitch_id=self.vswitch_id,
            nat_type="Enhanced",
            network_type="internet",
            payment_type="PayAsYouGo",
            internet_charge_type="PayByLcu",
            description=f"tftrain egress of {name}",
            tags=tags,
            opts=child,
        )
        eip = ecs.EipAddress(
            f"{name}-nat-eip",
            address_name=physical_name(name, "nat"),
            payment_type="PayAsYouGo",
            internet_charge_type="PayByTraffic",
            bandwidth=NAT_EIP_BANDWIDTH_MBPS,
            description=f"tftrain NAT egress address of {name}",
            tags=tags,
            opts=child,
        )
        association = ecs.EipAssociation(
            f"{name}-nat-eip-association",
            allocation_id=eip.id,
            instance_id=nat.id,
            instance_type="Nat",
            opts=child,
        )
        # An SNAT entry may only use an EIP that is already bound to its NAT gateway.
        after_binding = pulumi.ResourceOptions.merge(
            child, pulumi.ResourceOptions(depends_on=[association])
        )
        sources = {"snat": ("vswitch", self.vswitch_id)}
        if self.pod_vswitch_id is not None:
            sources["pod-snat"] = ("pods", self.pod_vswitch_id)
        for suffix, (label, vswitch_id) in sources.items():
            vpc.SnatEntry(
                f"{name}-{suffix}",
                snat_table_id=nat.snat_table_ids,
                source_vswitch_id=vswitch_id,
                snat_ip=eip.ip_address,
                snat_entry_name=physical_name(name, label),
                opts=after_binding,
            )
