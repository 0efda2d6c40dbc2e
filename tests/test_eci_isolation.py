"""ASK: the job's ECI pods on a vSwitch and behind security groups of their own.

ECI enforces no NetworkPolicy, so on ASK the security groups and the NAS access rule are the
isolation (docs/security.md). Each test runs the whole program under the mock harness
(`infra/mock_deploy.py`) for stacks/Pulumi.ask-eci.yaml, or for it with one section changed,
and compares what it registers with tables written by hand from that stack file: its VPC
192.168.0.0/16, cluster vSwitch 192.168.0.0/20, pod vSwitch 192.168.64.0/18 (the
`network.podVswitchCidr` default), TensorBoard an intranet load balancer. Ids are the mock's
`<resource name>-id`; ASK's own group for the cluster is `sg-cluster-ask-id`.
"""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest
from packaging.version import Version

from infra.render.exposure import isolation_lines
from infra.render.parsed import CloudResource, Render
from tests.pulumi_mocks import Recorded, run_program, stack_raw
from tests.shared_values import SHARED_SCOPE

SECURITY_GROUP = "alicloud:ecs/securityGroup:SecurityGroup"
RULE = "alicloud:ecs/securityGroupRule:SecurityGroupRule"
ACCESS_RULE = "alicloud:nas/accessRule:AccessRule"
SWITCH = "alicloud:vpc/switch:Switch"
VPC = "network-vpc-id"
REPLICAS = "pods-replicas-id"
TENSORBOARD = "pods-tensorboard-id"
CLUSTER_GROUP = "sg-cluster-ask-id"
POD_VSWITCH = "network-pod-vswitch-id"
POD_CIDR = "192.168.64.0/18"
ECI_VSWITCH = "k8s.aliyun.com/eci-vswitch"
ECI_SECURITY_GROUP = "k8s.aliyun.com/eci-security-group"

# DNS into the cluster's own group (where ASK's CoreDNS answers) from the pod vSwitch: a
# CIDR, which a basic and an advanced group alike accept as a source.
DNS_FROM_THE_PODS = {
    (CLUSTER_GROUP, "udp", "53/53", POD_CIDR),
    (CLUSTER_GROUP, "tcp", "53/53", POD_CIDR),
}
TF_PORT_FROM_REPLICAS_ONLY = {(REPLICAS, "tcp", "2222/2222", REPLICAS)}


def ask(**sections: dict[str, Any]) -> dict[str, Any]:
    return stack_raw("ask-eci", sections)


def rule_table(recorded: Recorded) -> set[tuple[str, str, str, str]]:
    """(into group, protocol, ports, source group or CIDR) of every rule; each rule is checked
    to be an intranet ingress accept, with exactly one source."""
    table = set()
    for rule in recorded.of_type(RULE):
        inputs = rule.inputs
        assert (inputs["type"], inputs["nicType"], inputs["policy"]) == (
            "ingress",
            "intranet",
            "accept",
        ), rule.name
        sources = [inputs[key] for key in ("sourceSecurityGroupId", "cidrIp") if key in inputs]
        assert len(sources) == 1, rule.name
        table.add((inputs["securityGroupId"], inputs["ipProtocol"], inputs["portRange"], *sources))
    return table


@pytest.fixture(scope=SHARED_SCOPE)
def ask_eci() -> Recorded:
    return run_program("ask-eci")


def test_tf_port_only_from_the_replicas_group_and_tensorboard_from_its_intranet_clients(
    ask_eci: Recorded,
) -> None:
    # An intranet load balancer without allowedSourceRanges: whatever routes to it.
    assert rule_table(ask_eci) == {
        *TF_PORT_FROM_REPLICAS_ONLY,
        (TENSORBOARD, "tcp", "6006/6006", "0.0.0.0/0"),
        *DNS_FROM_THE_PODS,
    }


def test_rule_names_are_stable_and_unique(ask_eci: Recorded) -> None:
    # A rule's name is its URN: a new name replaces the rule on the next `up`. The order the
    # engine registers them in follows when each group's id resolves: not part of the contract.
    assert sorted(rule.name for rule in ask_eci.of_type(RULE)) == [
        "pods-cluster-tcp-53-from-cidr-3",
        "pods-cluster-udp-53-from-cidr-2",
        "pods-replicas-tcp-2222-from-replicas",
        "pods-tensorboard-tcp-6006-from-cidr-1",
    ]
    ranges = {"public": True, "allowedSourceRanges": ["203.0.113.0/24", "198.51.100.7/32"]}
    names = [rule.name for rule in run_program(ask(tensorboard=ranges)).of_type(RULE)]
    assert len(set(names)) == len(names) == 5


def test_the_groups_are_the_stacks_basic_groups_whose_members_share_nothing_else(
    ask_eci: Recorded,
) -> None:
    groups = {group.name: group.inputs for group in ask_eci.of_type(SECURITY_GROUP)}
    assert sorted(groups) == ["pods-replicas", "pods-tensorboard"]
    for inputs in groups.values():
        # Basic ("normal"): only those may name a group as a rule's source. Drop: being in
        # the same group opens no port; only the rules above do.
        assert inputs["securityGroupType"] == "normal"
        assert inputs["innerAccessPolicy"] == "Drop"
        assert inputs["vpcId"] == VPC


@pytest.mark.parametrize(
    ("tensorboard", "sources"),
    [
        # ClusterIP: in-cluster clients, from anywhere in the VPC.
        ({"serviceType": "ClusterIP"}, {"192.168.0.0/16"}),
        # A public load balancer: its allow-list, nothing else (a CLB keeps client addresses).
        (
            {"public": True, "allowedSourceRanges": ["203.0.113.0/24", "198.51.100.7/32"]},
            {"203.0.113.0/24", "198.51.100.7/32"},
        ),
    ],
    ids=["cluster-ip", "public-allow-list"],
)
def test_tensorboard_port_is_open_exactly_as_its_service_exposes_it(
    tensorboard: dict[str, Any], sources: set[str]
) -> None:
    table = rule_table(run_program(ask(tensorboard=tensorboard)))
    expected = {(TENSORBOARD, "tcp", "6006/6006", source) for source in sources}
    assert {rule for rule in table if rule[0] == TENSORBOARD} == expected
    assert table >= TF_PORT_FROM_REPLICAS_ONLY


def test_without_tensorboard_there_is_no_tensorboard_group_and_no_6006() -> None:
    recorded = run_program(ask(tensorboard={"enabled": False}))
    assert [group.name for group in recorded.of_type(SECURITY_GROUP)] == ["pods-replicas"]
    assert rule_table(recorded) == {*TF_PORT_FROM_REPLICAS_ONLY, *DNS_FROM_THE_PODS}


def test_nas_admits_the_pod_vswitch_alone(ask_eci: Recorded) -> None:
    switches = {switch.name: switch.inputs for switch in ask_eci.of_type(SWITCH)}
    assert switches["network-pod-vswitch"]["cidrBlock"] == POD_CIDR
    assert switches["network-pod-vswitch"]["zoneId"] == switches["network-vswitch"]["zoneId"]
    rules = [rule.inputs for rule in ask_eci.of_type(ACCESS_RULE)]
    # Not the cluster's vSwitch 192.168.0.0/20, not the VPC: the job's pods only. Root is
    # not squashed: the mounter creates and chmods /tftrain/<namespace> as root.
    assert [(r["sourceCidrIp"], r["rwAccessType"], r["userAccessType"]) for r in rules] == [
        (POD_CIDR, "RDWR", "no_squash")
    ]
    # A mount target whose group has no rule refuses every client: it waits for the rule.
    (mount_target,) = ask_eci.of_type("alicloud:nas/mountTarget:MountTarget")
    assert (
        "urn:pulumi:ask-eci::tftrain::tftrain:cloud:NasStorage$alicloud:nas/accessRule:AccessRule"
        "::nas-access-rule"
    ) in mount_target.dependencies


def test_the_nas_rule_follows_the_configured_pod_vswitch() -> None:
    recorded = run_program(ask(network={"podVswitchCidr": "192.168.128.0/20"}))
    assert [rule.inputs["sourceCidrIp"] for rule in recorded.of_type(ACCESS_RULE)] == [
        "192.168.128.0/20"
    ]


def test_every_eci_pod_is_annotated_onto_the_pod_vswitch_and_into_its_group(
    ask_eci: Recorded,
) -> None:
    templates = [
        (obj["kind"], obj["metadata"]["name"], obj["spec"]["template"]["metadata"])
        for obj in ask_eci.kube_objects()
        if obj.get("kind") in ("Job", "Deployment")
    ]
    # chief, ps and two workers, then TensorBoard.
    assert sorted(name for _, name, _ in templates) == [
        "mnist-chief-0",
        "mnist-ps-0",
        "mnist-tensorboard",
        "mnist-worker-0",
        "mnist-worker-1",
    ]
    for kind, name, meta in templates:
        group = TENSORBOARD if kind == "Deployment" else REPLICAS
        assert meta["annotations"][ECI_VSWITCH] == POD_VSWITCH, name
        assert meta["annotations"][ECI_SECURITY_GROUP] == group, name


def test_the_annotated_objects_validate_against_the_clusters_openapi_schema(
    ask_eci: Recorded,
) -> None:
    # The version test_manifests_schema.py picks for `latest`: the newest schema shipped.
    version = max(kubernetes_validate.utils.all_versions(), key=Version)
    checked = 0
    for obj in ask_eci.kube_objects():
        if obj.get("kind") in ("Job", "Deployment"):
            kubernetes_validate.validate(obj, version, strict=True)
            checked += 1
    assert checked == 5


def test_ack_keeps_its_nodes_vswitch_rule_and_makes_no_security_group() -> None:
    recorded = run_program("ack-gpu")
    assert recorded.of_type(SECURITY_GROUP) == []
    assert recorded.of_type(RULE) == []
    # ACK's NFS clients are the nodes, in the cluster's vSwitch (ack-gpu: 192.168.0.0/20).
    assert [r.inputs["sourceCidrIp"] for r in recorded.of_type(ACCESS_RULE)] == ["192.168.0.0/20"]
    for obj in recorded.kube_objects():
        if obj.get("kind") in ("Job", "Deployment"):
            annotations = obj["spec"]["template"]["metadata"].get("annotations", {})
            assert ECI_VSWITCH not in annotations
            assert ECI_SECURITY_GROUP not in annotations


def test_an_ask_platform_isolates_nothing_and_its_nas_rule_stays_on_the_cluster_vswitch() -> None:
    platform = {
        "cluster": {"kind": "ask", "role": "platform"},
        "network": {"zoneId": "cn-hangzhou-i"},
        "storage": {"kind": "nas"},
    }
    recorded = run_program(platform)
    assert recorded.error is None
    assert recorded.of_type(SECURITY_GROUP) == []
    assert [switch.name for switch in recorded.of_type(SWITCH)] == ["network-vswitch"]
    assert [r.inputs["sourceCidrIp"] for r in recorded.of_type(ACCESS_RULE)] == ["192.168.0.0/20"]


def test_the_review_says_an_ask_run_stack_is_not_isolated() -> None:
    # A run stack on an ASK platform: unenforced policies, and no cloud side of its own.
    policy = {
        "kind": "NetworkPolicy",
        "metadata": {"name": "p", "annotations": {"tftrain.io/not-enforced": "ECI"}},
    }
    [line] = isolation_lines(Render(objects={"NetworkPolicy t/p": policy}, cloud={}))
    assert line.startswith("Isolation: none from this stack on ASK")
    # Without unenforced policies (ack, existing) the review has no isolation line.
    assert isolation_lines(Render(objects={}, cloud={})) == []


def test_the_review_reads_each_rule_and_the_nas_rule_off_the_render() -> None:
    policy = {
        "kind": "NetworkPolicy",
        "metadata": {"name": "p", "annotations": {"tftrain.io/not-enforced": "ECI"}},
    }
    group, rule, nas, switch = (
        "alicloud:ecs/securityGroup:SecurityGroup  a",
        "alicloud:ecs/securityGroupRule:SecurityGroupRule  a-1",
        "alicloud:nas/accessRule:AccessRule  n",
        "alicloud:vpc/switch:Switch  s",
    )
    cloud = {
        group: CloudResource(),
        rule: CloudResource(
            {
                "securityGroupId": "<a.id>",
                "ipProtocol": "tcp",
                "portRange": "9/9",
                "cidrIp": "10.1.0.0/16",
            }
        ),
        # From a group that is not the stack's: named by its id.
        "alicloud:ecs/securityGroupRule:SecurityGroupRule  a-2": CloudResource(
            {
                "securityGroupId": "<a.id>",
                "ipProtocol": "udp",
                "portRange": "7/8",
                "sourceSecurityGroupId": "sg-other",
            }
        ),
        # Into a group that is not the stack's (the cluster's): not the job's isolation.
        "alicloud:ecs/securityGroupRule:SecurityGroupRule  c-1": CloudResource(
            {
                "securityGroupId": "<computed>",
                "ipProtocol": "udp",
                "portRange": "53/53",
                "sourceSecurityGroupId": "<a.id>",
            }
        ),
        nas: CloudResource(
            {"sourceCidrIp": "10.2.0.0/24", "userAccessType": "x_squash", "rwAccessType": "RO"}
        ),
        switch: CloudResource({"cidrBlock": "10.2.0.0/24"}),
        # A client range that is none of the stack's vSwitches is named as such.
        "alicloud:nas/accessRule:AccessRule  m": CloudResource(
            {"sourceCidrIp": "10.3.0.0/24", "userAccessType": "y_squash", "rwAccessType": "RW"}
        ),
    }
    [line] = isolation_lines(Render(objects={"NetworkPolicy t/p": policy}, cloud=cloud))
    assert line == (
        "Isolation: ECI enforces no NetworkPolicy on ASK; the stack's security groups and NAS "
        "rule do: a admits TCP 9 from 10.1.0.0/16; a admits UDP 7-8 from sg-other; "
        "NAS (x_squash, RO) from 10.2.0.0/24 only "
        "(s); NAS (y_squash, RW) from 10.3.0.0/24 only (no vSwitch of the stack); any pod "
        "annotated into these groups or onto that vSwitch passes too (docs/security.md)"
    )


@pytest.mark.parametrize(
    ("cache", "auto", "legacy"), [(False, "false", None), (True, "true", "true")]
)
def test_eci_is_told_whether_to_use_an_image_cache(
    cache: bool, auto: str, legacy: str | None
) -> None:
    # docs/cloud-evidence.md, ECI pod annotations: eci-auto-imc, and the older eci-image-cache
    # that ECI still reads. The automatic cache defaults to on (and makes caches of its own),
    # so off is said too.
    recorded = run_program(ask(cluster={"imageCache": cache}))
    for obj in recorded.kube_objects():
        if obj.get("kind") in ("Job", "Deployment"):
            annotations = obj["spec"]["template"]["metadata"]["annotations"]
            assert annotations["k8s.aliyun.com/eci-auto-imc"] == auto
            assert annotations.get("k8s.aliyun.com/eci-image-cache") == legacy
            assert annotations[ECI_VSWITCH] == POD_VSWITCH


def test_the_pod_vswitch_reaches_out_through_the_stacks_nat(ask_eci: Recorded) -> None:
    snats = {snat.name: snat.inputs for snat in ask_eci.of_type("alicloud:vpc/snatEntry:SnatEntry")}
    assert snats["network-pod-snat"]["sourceVswitchId"] == POD_VSWITCH
    assert snats["network-pod-snat"]["snatEntryName"] == "tftrain-ask-eci-network-pods"
    assert snats["network-snat"]["sourceVswitchId"] == "network-vswitch-id"
    pod_vswitch = next(s for s in ask_eci.of_type(SWITCH) if s.name == "network-pod-vswitch")
    assert pod_vswitch.inputs["vswitchName"] == "tftrain-ask-eci-network-pods"
    assert pod_vswitch.inputs["description"] == "tftrain pod addresses (ECI) of network"


def test_the_groups_and_rules_sit_under_one_firewall_component(ask_eci: Recorded) -> None:
    """A resource's URN is its parent chain's types and names: a renamed component type, or a
    child no longer parented to it, is another URN, which `pulumi up` replaces (the security
    groups deleted and created again under the running pods)."""
    (firewall,) = ask_eci.of_type("tftrain:cloud:EciPodFirewall")
    assert firewall.name == "pods"
    # The engine's URN: urn:pulumi:<stack>::<project>::<parent types$>type::<name>, the
    # root stack's type left out (pulumi/sdk/go/common/resource/urn.go NewURN).
    assert firewall.urn == "urn:pulumi:ask-eci::tftrain::tftrain:cloud:EciPodFirewall::pods"
    children = [
        r for r in ask_eci.resources
        if r.type in ("alicloud:ecs/securityGroup:SecurityGroup",
                      "alicloud:ecs/securityGroupRule:SecurityGroupRule")
    ]  # fmt: skip
    assert children
    assert {r.parent for r in children} == {firewall.urn}
    replicas = next(r for r in children if r.name == "pods-replicas")
    assert replicas.urn == (
        "urn:pulumi:ask-eci::tftrain::"
        "tftrain:cloud:EciPodFirewall$alicloud:ecs/securityGroup:SecurityGroup::pods-replicas"
    )


def test_each_group_is_named_and_described_for_the_console_and_tagged_for_the_bill(
    ask_eci: Recorded,
) -> None:
    """What a user finds in the ECS console's security group list: `<project>-<stack>-
    <component>-<group>` (unique per stack, so two stacks' groups never share a name)."""
    groups = {group.name: group.inputs for group in ask_eci.of_type(SECURITY_GROUP)}
    assert {name: (g["securityGroupName"], g["description"]) for name, g in groups.items()} == {
        "pods-replicas": (
            "tftrain-ask-eci-pods-replicas",
            "tftrain ECI pods of the job's replicas",
        ),
        "pods-tensorboard": (
            "tftrain-ask-eci-pods-tensorboard",
            "tftrain ECI pods of the job's tensorboard",
        ),
    }
    for inputs in groups.values():
        assert inputs["tags"] == {
            "app": "tftrain",
            "pulumi-stack": "ask-eci",
            "pulumi-component": "pods",
            "managed-by": "pulumi",
        }


def test_each_rule_says_what_it_admits_and_sits_at_the_highest_priority(
    ask_eci: Recorded,
) -> None:
    # ECS: priority 1..100, a smaller number wins (AuthorizeSecurityGroup's API reference).
    rules = ask_eci.of_type(RULE)
    assert {rule.name: rule.inputs["description"] for rule in rules} == {
        "pods-replicas-tcp-2222-from-replicas": "tftrain: TCP 2222 from replicas",
        "pods-tensorboard-tcp-6006-from-cidr-1": "tftrain: TCP 6006 from 0.0.0.0/0",
        "pods-cluster-udp-53-from-cidr-2": f"tftrain: UDP 53 from {POD_CIDR}",
        "pods-cluster-tcp-53-from-cidr-3": f"tftrain: TCP 53 from {POD_CIDR}",
    }
    assert [rule.inputs["priority"] for rule in rules] == [1, 1, 1, 1]


def test_the_network_is_named_and_described_for_the_console(ask_eci: Recorded) -> None:
    """What a user finds in the VPC console: `<project>-<stack>-<component>[-pods]`, and what
    each part is for; the pod vSwitch sits in the stack's VPC."""
    (vpc,) = ask_eci.of_type("alicloud:vpc/network:Network")
    assert (vpc.inputs["vpcName"], vpc.inputs["description"]) == (
        "tftrain-ask-eci-network",
        "tftrain network of network",
    )
    switches = {s.name: s.inputs for s in ask_eci.of_type(SWITCH)}
    assert {
        name: (s["vswitchName"], s["description"], s["vpcId"]) for name, s in switches.items()
    } == {
        "network-vswitch": (
            "tftrain-ask-eci-network",
            "tftrain nodes, pods and NAS mount target of network",
            VPC,
        ),
        "network-pod-vswitch": (
            "tftrain-ask-eci-network-pods",
            "tftrain pod addresses (ECI) of network",
            VPC,
        ),
    }
