"""What the review calls reachable from the internet (`public_endpoints`), case by case.

The expected answers come from Alibaba Cloud's documentation, not from the code: a
LoadBalancer Service gets an internet SLB unless its annotation
`service.beta.kubernetes.io/alibaba-cloud-loadbalancer-address-type` says `intranet` (the
cloud controller manager's default is internet); an ACK cluster's API server is public with
`slbInternetEnabled`, an ASK one with `endpointPublicAccessEnabled`; an elastic IP is an
address on the internet, and its association only attaches it.
"""

from __future__ import annotations

from typing import Any

import pytest

from infra.render.exposure import isolation_lines, public_endpoints
from infra.render.parsed import CloudResource, Render

ADDRESS_TYPE = "service.beta.kubernetes.io/alibaba-cloud-loadbalancer-address-type"
ACK = "alicloud:cs/managedKubernetes:ManagedKubernetes  cluster"
ASK = "alicloud:cs/serverlessKubernetes:ServerlessKubernetes  cluster"


def _service(kind: str = "Service", spec_type: str | None = "LoadBalancer", **meta: Any) -> dict:
    spec = {"type": spec_type} if spec_type is not None else {}
    return {"kind": kind, "metadata": {"name": "tb", **meta}, "spec": spec}


@pytest.mark.parametrize(
    ("obj", "public"),
    [
        (_service(), True),  # no annotation: the SLB is internet-facing
        (_service(annotations=None), True),
        (_service(annotations={ADDRESS_TYPE: "internet"}), True),
        (_service(annotations={"other": "intranet"}), True),
        (_service(annotations={ADDRESS_TYPE: "intranet"}), False),
        (_service(spec_type="ClusterIP"), False),
        (_service(spec_type="NodePort"), False),
        (_service(spec_type=None), False),
        # Only a Service gets a load balancer, whatever another object's spec holds.
        (_service(kind="Deployment"), False),
    ],
    ids=[
        "lb-default",
        "lb-null-annotations",
        "lb-internet",
        "lb-unrelated-annotation",
        "lb-intranet",
        "cluster-ip",
        "node-port",
        "no-type",
        "not-a-service",
    ],
)
def test_a_load_balancer_service_is_public_unless_its_slb_is_intranet(
    obj: dict, public: bool
) -> None:
    title = f"{obj['kind']} tftrain/tb"
    render = Render(objects={title: obj}, cloud={})
    assert public_endpoints(render) == ({title} if public else set())


@pytest.mark.parametrize(
    ("title", "inputs", "public"),
    [
        (ACK, {"slbInternetEnabled": "true"}, True),
        (ACK, {"slbInternetEnabled": "false"}, False),
        (ACK, {}, False),
        (ASK, {"endpointPublicAccessEnabled": "true"}, True),
        (ASK, {"endpointPublicAccessEnabled": "false"}, False),
        (ASK, {"endpointPublicAccessEnabled": "false", "slbInternetEnabled": "true"}, True),
        (ASK, {}, False),
        ("alicloud:ecs/eipAddress:EipAddress  api", {}, True),
        ("alicloud:ecs/eip:Eip  api", {}, True),
        ("alicloud:ecs/eipAssociation:EipAssociation  api", {}, False),
        ("alicloud:vpc/natGateway:NatGateway  nat", {}, False),
        ("alicloud:vpc/network:Network  vpc", {"cidrBlock": "192.168.0.0/16"}, False),
    ],
    ids=[
        "ack-internet-api",
        "ack-intranet-api",
        "ack-unset",
        "ask-public-api",
        "ask-private-api",
        "either-key-public",
        "ask-unset",
        "eip-address",
        "eip",
        "eip-association",
        "nat",
        "vpc",
    ],
)
def test_a_cloud_resource_is_public_for_an_internet_api_server_or_an_elastic_ip(
    title: str, inputs: dict[str, str], public: bool
) -> None:
    render = Render(objects={}, cloud={title: CloudResource(inputs=dict(inputs))})
    assert public_endpoints(render) == ({title} if public else set())


def test_every_public_thing_of_a_render_is_named_once() -> None:
    eip, association = (
        "alicloud:ecs/eipAddress:EipAddress  api",
        "alicloud:ecs/eipAssociation:EipAssociation  api",
    )
    render = Render(
        objects={
            "Service tftrain/tb": _service(),
            "Service tftrain/inner": _service(annotations={ADDRESS_TYPE: "intranet"}),
        },
        cloud={
            ACK: CloudResource(inputs={"slbInternetEnabled": "true"}),
            eip: CloudResource(),
            association: CloudResource(inputs={"allocationId": "<api.id>"}),
        },
    )
    assert public_endpoints(render) == {"Service tftrain/tb", ACK, eip}


NOT_ENFORCED = "tftrain.io/not-enforced"


def _policy(annotations: dict[str, str] | None) -> dict:
    return {"kind": "NetworkPolicy", "metadata": {"name": "p", "annotations": annotations}}


@pytest.mark.parametrize(
    "objects",
    [
        {},
        {"NetworkPolicy t/p": _policy(None)},
        {"NetworkPolicy t/p": _policy({"other": "x"})},
        # The marker counts on a NetworkPolicy only.
        {"Service t/s": {"kind": "Service", "metadata": {"annotations": {NOT_ENFORCED: "ECI"}}}},
    ],
    ids=["nothing", "no-annotations", "other-annotation", "marker-on-a-service"],
)
def test_no_isolation_line_where_the_policies_are_enforced(objects: dict) -> None:
    # The cloud side would have something to say: it is not asked.
    cloud = {"alicloud:ecs/securityGroup:SecurityGroup  a": CloudResource()}
    assert isolation_lines(Render(objects=objects, cloud=cloud)) == []


def test_one_unenforced_policy_among_enforced_ones_asks_for_the_isolation_line() -> None:
    objects = {
        "NetworkPolicy t/a": _policy(None),
        "NetworkPolicy t/b": _policy({NOT_ENFORCED: "ECI"}),
    }
    [line] = isolation_lines(Render(objects=objects, cloud={}))
    # What docs/security.md says of a run stack on an ASK platform, in one line.
    assert line == (
        "Isolation: none from this stack on ASK: ECI enforces no NetworkPolicy (any pod in the "
        "VPC reaches the replicas' TCP 2222) and the platform's NAS access rule admits the "
        "cluster's vSwitch read-write as root (no_squash); docs/security.md"
    )


def test_a_rule_from_the_stacks_own_group_names_it_and_groups_without_rules_admit_nothing() -> None:
    unenforced = {"NetworkPolicy t/p": _policy({NOT_ENFORCED: "x"})}
    group = "alicloud:ecs/securityGroup:SecurityGroup  "
    rule = "alicloud:ecs/securityGroupRule:SecurityGroupRule  "
    cloud = {
        group + "job": CloudResource(),
        group + "peer": CloudResource(),
        rule + "job-1": CloudResource(
            {
                "securityGroupId": "<job.id>",
                "ipProtocol": "tcp",
                "portRange": "2222/2222",
                "sourceSecurityGroupId": "<peer.id>",
            }
        ),
    }
    [line] = isolation_lines(Render(objects=unenforced, cloud=cloud))
    assert line == (
        "Isolation: ECI enforces no NetworkPolicy on ASK; the stack's security groups and NAS "
        "rule do: job admits TCP 2222 from peer; any pod annotated into these groups or onto "
        "that vSwitch passes too (docs/security.md)"
    )
    # Groups with no rule into them: nothing isolates, as with no group at all.
    del cloud[rule + "job-1"]
    [line] = isolation_lines(Render(objects=unenforced, cloud=cloud))
    assert line.startswith("Isolation: none from this stack on ASK")
