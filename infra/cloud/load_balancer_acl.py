"""The allow-list of an opt-in TensorBoard load balancer.

ACK's cloud controller does not turn a Service's `loadBalancerSourceRanges` into anything on a
Classic Load Balancer (CLB, the default): it only enforces an existing CLB access-control list
named by annotations (see infra/manifests/tensorboard.py). This component creates that list.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
from pulumi_alicloud import slb

from infra.cloud.naming import physical_name, resource_tags


class LoadBalancerAcl(pulumi.ComponentResource):
    """An IPv4 CLB access-control list holding exactly `cidrs`. Output: `acl_id`."""

    acl_id: pulumi.Output[str]

    def __init__(
        self, name: str, cidrs: Sequence[str], opts: pulumi.ResourceOptions | None = None
    ) -> None:
        if not cidrs:
            # An empty CLB ACL admits everyone, whitelist or not: never create one.
            raise ValueError("LoadBalancerAcl needs at least one CIDR")
        super().__init__("tftrain:cloud:LoadBalancerAcl", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        acl = slb.Acl(
            f"{name}-acl",
            name=physical_name(name),
            ip_version="ipv4",
            tags=resource_tags(name),
            opts=child,
        )
        # One attachment per entry: the ACL's own entry list is deprecated in the provider.
        for cidr in cidrs:
            slb.AclEntryAttachment(
                f"{name}-entry-{cidr.replace('/', '-')}",
                acl_id=acl.id,
                entry=cidr,
                opts=child,
            )
        self.acl_id = acl.id
        self.register_outputs({"acl_id": self.acl_id})
