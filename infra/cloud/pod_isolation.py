"""The ASK job's pod firewall: ECI enforces no NetworkPolicy, so security groups do its work.

Every ECI pod is an instance with its own network interface in a vSwitch and security groups
(the pod annotations `k8s.aliyun.com/eci-vswitch` and `k8s.aliyun.com/eci-security-group`,
`infra/manifests/placement.py`). An ASK stack that makes its own cluster puts its pods on the
network's pod vSwitch (`network.podVswitchCidr`, the only CIDR the NAS access rule admits) and
into two groups of its own:

- `replicas` (every training pod): TCP 2222 only from members of the same group; nothing else,
  members included (the group's internal policy is `Drop`, so membership alone opens nothing);
- `tensorboard`: TCP 6006 from what `tensorboard.*` exposes (below); nothing else.

Both are basic groups ("normal"): only those may name a security group as a rule's source.
Egress stays open, as the NetworkPolicies leave it (registries, OSS, datasets); the cluster's
own group (where ASK's DNS runs) gets a rule admitting DNS from the pod vSwitch: a CIDR, not
the groups, since ASK may have made that group an advanced one, which cannot name a group.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
from pulumi_alicloud import ecs

from infra.cloud.naming import physical_name, resource_tags
from infra.config import StackConfig
from infra.manifests.tensorboard import PORT as TENSORBOARD_PORT
from infra.topology import TF_PORT

REPLICAS = "replicas"
TENSORBOARD = "tensorboard"
CLUSTER = "cluster"  # the cluster's own security group (`ServerlessKubernetes.security_group_id`)
GROUPS = (REPLICAS, TENSORBOARD)  # the stack's own, which a rule may name as its source
DNS_PORT = 53
# A basic group whose members reach each other only through its rules; an advanced
# ("enterprise") group could not name a security group as a source at all.
GROUP_TYPE = "normal"
INNER_ACCESS = "Drop"
ANYWHERE = "0.0.0.0/0"


@dataclass(frozen=True)
class IngressRule:
    """Admit `protocol`/`port` into group `into` from `source`: a group's name or a CIDR."""

    into: str
    protocol: str
    port: int
    source: str


def tensorboard_sources(config: StackConfig) -> tuple[str, ...]:
    """Who may open TensorBoard's port, as its Service exposes it: a load balancer's clients
    (a CLB's TCP listener keeps the client's address) are `allowedSourceRanges`, or any
    address that routes to the intranet load balancer; a ClusterIP's are the VPC's (other
    pods of the cluster; `kubectl port-forward` reaches the pod through the API server)."""
    board = config.tensorboard
    if not board.enabled:
        return ()
    if board.service_type == "LoadBalancer":
        return board.allowed_source_ranges or (ANYWHERE,)
    return (config.network.vpc_cidr,)


def ingress_rules(config: StackConfig) -> list[IngressRule]:
    """Every ingress rule the stack adds, in registration order."""
    rules = [IngressRule(REPLICAS, "tcp", TF_PORT, REPLICAS)]
    rules += [IngressRule(TENSORBOARD, "tcp", TENSORBOARD_PORT, cidr)
              for cidr in tensorboard_sources(config)]  # fmt: skip
    pods = config.network.pod_vswitch_cidr
    rules += [IngressRule(CLUSTER, protocol, DNS_PORT, pods) for protocol in ("udp", "tcp")]
    return rules


def _rule_name(name: str, rule: IngressRule, index: int) -> str:
    source = rule.source if rule.source in GROUPS else f"cidr-{index}"
    return f"{name}-{rule.into}-{rule.protocol}-{rule.port}-from-{source}"


class EciPodFirewall(pulumi.ComponentResource):
    """The job's security groups (module docstring) in `vpc_id`, and their ingress rules.

    Outputs: `replicas_group_id`, `tensorboard_group_id` ("" without TensorBoard)."""

    replicas_group_id: pulumi.Output[str]
    tensorboard_group_id: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        config: StackConfig,
        vpc_id: pulumi.Input[str],
        cluster_group_id: pulumi.Input[str],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tftrain:cloud:EciPodFirewall", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        groups: dict[str, pulumi.Input[str]] = {CLUSTER: cluster_group_id}
        for group in GROUPS:
            if group == TENSORBOARD and not config.tensorboard.enabled:
                continue
            groups[group] = ecs.SecurityGroup(
                f"{name}-{group}",
                security_group_name=physical_name(name, group),
                security_group_type=GROUP_TYPE,
                inner_access_policy=INNER_ACCESS,
                vpc_id=vpc_id,
                description=f"tftrain ECI pods of the job's {group}",
                tags=resource_tags(name),
                opts=child,
            ).id
        for index, rule in enumerate(ingress_rules(config)):
            _register_rule(_rule_name(name, rule, index), rule, groups, child)
        self.replicas_group_id = pulumi.Output.from_input(groups[REPLICAS])
        self.tensorboard_group_id = pulumi.Output.from_input(groups.get(TENSORBOARD, ""))
        self.register_outputs(
            {
                "replicas_group_id": self.replicas_group_id,
                "tensorboard_group_id": self.tensorboard_group_id,
            }
        )


def _register_rule(
    name: str,
    rule: IngressRule,
    groups: Mapping[str, pulumi.Input[str]],
    opts: pulumi.ResourceOptions,
) -> ecs.SecurityGroupRule:
    """One ingress rule; a group as the source needs `nic_type` intranet (the provider's
    check), and in a VPC group every rule is intranet anyway."""
    source = groups.get(rule.source)
    return ecs.SecurityGroupRule(
        name,
        security_group_id=groups[rule.into],
        type="ingress",
        ip_protocol=rule.protocol,
        port_range=f"{rule.port}/{rule.port}",
        nic_type="intranet",
        policy="accept",
        priority=1,
        source_security_group_id=source,
        cidr_ip=None if source is not None else rule.source,
        description=f"tftrain: {rule.protocol.upper()} {rule.port} from {rule.source}",
        opts=opts,
    )
