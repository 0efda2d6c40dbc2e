"""What the internet can reach (public endpoints) and what the stack does not isolate where
its NetworkPolicies are not enforced (ASK)."""

from __future__ import annotations

from infra.manifests.network_policy import NOT_ENFORCED
from infra.manifests.tensorboard import SLB_ADDRESS_TYPE
from infra.render.parsed import Render, kind_of_title, value_at


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
    """What the stack does not isolate, where its policies are not enforced (ASK)."""
    unenforced = any(
        NOT_ENFORCED in (obj["metadata"].get("annotations") or {})
        for obj in new.objects.values()
        if obj.get("kind") == "NetworkPolicy"
    )
    if not unenforced:
        return []
    return [
        "Isolation: none from this stack on ASK: ECI enforces no NetworkPolicy (any pod in the "
        "VPC reaches the replicas' TCP 2222) and the NAS access rule admits the pods' vSwitch "
        "read-write as root (no_squash); docs/security.md says how to add it"
    ]
