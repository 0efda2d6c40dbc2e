"""What the internet can reach (public endpoints) and what isolates the job where its
NetworkPolicies are not enforced (ASK)."""

from __future__ import annotations

from infra.manifests.network_policy import NOT_ENFORCED
from infra.manifests.tensorboard import SLB_ADDRESS_TYPE
from infra.render.parsed import Render, kind_of_title, name_of_title, value_at


def public_endpoints(render: Render) -> set[str]:
    """Titles of what the internet can reach: a LoadBalancer Service whose SLB is not
    intranet (Alibaba Cloud's default is internet), an ACK cluster with an internet API server
    SLB (`slbInternetEnabled`) or an ASK one with a public endpoint
    (`endpointPublicAccessEnabled`), an elastic IP. An EIP's association is not a second
    endpoint: it only attaches the address already counted."""
    public = {
        title
        for title, obj in render.objects.items()
        if obj.get("kind") == "Service"
        and value_at(obj, "spec.type") == "LoadBalancer"
        and (value_at(obj, "metadata.annotations") or {}).get(SLB_ADDRESS_TYPE) != "intranet"
    }
    for title, resource in render.cloud.items():
        kind = kind_of_title(title)
        inputs = resource.inputs
        public_api = "true" in (
            inputs.get("slbInternetEnabled"),
            inputs.get("endpointPublicAccessEnabled"),
        )
        if public_api or (kind.startswith("Eip") and kind != "EipAssociation"):
            public.add(title)
    return public


def isolation_lines(new: Render) -> list[str]:
    """What isolates the job where its NetworkPolicies are not enforced (ASK): the security
    groups and NAS access rule of the render's cloud side, or nothing (a run stack on an ASK
    platform, whose pods share the platform cluster's vSwitch and group)."""
    unenforced = any(
        NOT_ENFORCED in (obj["metadata"].get("annotations") or {})
        for obj in new.objects.values()
        if obj.get("kind") == "NetworkPolicy"
    )
    if not unenforced:
        return []
    admits = _group_admits(new)
    if not admits:
        return [
            "Isolation: none from this stack on ASK: ECI enforces no NetworkPolicy (any pod in "
            "the VPC reaches the replicas' TCP 2222) and the platform's NAS access rule admits "
            "the cluster's vSwitch read-write as root (no_squash); docs/security.md"
        ]
    return [
        "Isolation: ECI enforces no NetworkPolicy on ASK; the stack's security groups and NAS "
        "rule do: "
        + "; ".join([*admits, *_nas_admits(new)])
        + "; any pod annotated into these groups or onto that vSwitch passes too "
        "(docs/security.md)"
    ]


def _group_admits(render: Render) -> list[str]:
    """`<group> admits <PROTOCOL> <port> from <source> only`, per ingress rule into one of
    the stack's own security groups (the rule into the cluster's group opens DNS to them)."""
    groups = {
        f"<{name_of_title(title)}.id>": name_of_title(title)
        for title in render.cloud
        if kind_of_title(title) == "SecurityGroup"
    }
    admits = []
    for title, resource in render.cloud.items():
        inputs = resource.inputs
        into = groups.get(inputs.get("securityGroupId"))
        if kind_of_title(title) != "SecurityGroupRule" or into is None:
            continue
        # A rule names one source: a group (the stack's by name, another by its id) or a CIDR.
        group = inputs.get("sourceSecurityGroupId")
        source = groups.get(group, group) if group else inputs["cidrIp"]
        low, high = inputs["portRange"].split("/")
        port = low if low == high else f"{low}-{high}"
        admits.append(f"{into} admits {inputs['ipProtocol'].upper()} {port} from {source}")
    return admits


def _nas_admits(render: Render) -> list[str]:
    """`NAS (<squash>, <access>) from <CIDR> only (<the vSwitch of that CIDR>)` per rule."""
    switches = {
        resource.inputs.get("cidrBlock"): name_of_title(title)
        for title, resource in render.cloud.items()
        if kind_of_title(title) == "Switch"
    }
    lines = []
    for title, resource in render.cloud.items():
        if kind_of_title(title) != "AccessRule":
            continue
        inputs = resource.inputs
        cidr = inputs.get("sourceCidrIp")
        lines.append(
            f"NAS ({inputs.get('userAccessType')}, {inputs.get('rwAccessType')}) from {cidr} "
            f"only ({switches.get(cidr, 'no vSwitch of the stack')})"
        )
    return lines
