"""Where each cloud resource sits in the stack's component tree, what it waits for and how it
is tagged, for every stack that creates cloud resources; and the ASK cluster's own inputs.

A resource's URN carries its parent's type: a resource moved to another parent is, to the
engine, another resource, and the next `up` replaces it (for the cluster: a new cluster). So
the tree is held here as a rule: every cloud resource under the component whose Pulumi name
its own name starts with, every component at the stack's root.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
import pytest

from infra.cloud import AskCluster, Network
from infra.mock_deploy import Recorded, Registration
from tests.pulumi_mocks import CloudMocks, PlausibleCloud, run_program, stack_raw
from tests.test_cloud_components import ASK, deploy, server_of, stack

CLOUD_STACKS = ("ack-cpu", "ack-gpu", "ask-eci", "platform-ack")
SPOT = "ack-gpu with a spot pool"
PUBLIC_BOARD = "ack-gpu with an internet-facing TensorBoard"
# The cloud components the program makes, by Pulumi name (infra/program.py): hand-listed.
COMPONENTS = {
    "network": "tftrain:cloud:Network",
    "nas": "tftrain:cloud:NasStorage",
    "pods": "tftrain:cloud:EciPodFirewall",
    "data": "tftrain:cloud:OssBucket",
    "oss-access": "tftrain:cloud:OssRrsaAccess",
    "tensorboard": "tftrain:cloud:LoadBalancerAcl",
}
CLUSTER_COMPONENT = {"ack": "tftrain:cloud:AckCluster", "ask": "tftrain:cloud:AskCluster"}
CLUSTER_RESOURCE = {
    "ack": "alicloud:cs/managedKubernetes:ManagedKubernetes",
    "ask": "alicloud:cs/serverlessKubernetes:ServerlessKubernetes",
}
SNAT = "alicloud:vpc/snatEntry:SnatEntry"
EIP_ASSOCIATION = "alicloud:ecs/eipAssociation:EipAssociation"
ALWAYS_TAGGED = {
    *CLUSTER_RESOURCE.values(),
    "alicloud:cs/nodePool:NodePool",
    "alicloud:vpc/network:Network",
    "alicloud:vpc/switch:Switch",
    "alicloud:vpc/natGateway:NatGateway",
    "alicloud:ecs/eipAddress:EipAddress",
    "alicloud:nas/fileSystem:FileSystem",
    "alicloud:ecs/securityGroup:SecurityGroup",
    "alicloud:slb/acl:Acl",
}
NODE_POOL = "alicloud:cs/nodePool:NodePool"
AUTOSCALER = "alicloud:cs/autoscalingConfig:AutoscalingConfig"
# The provider's reference for cs.ServerlessKubernetes `cluster_spec`: "ack.standard" or
# "ack.pro.small" (Pro: the managed control plane with an SLA, what ACK Serverless sells now).
ASK_PRO_SPEC = "ack.pro.small"


def _cluster_kind(recorded: Recorded) -> str:
    return "ask" if recorded.of_type(CLUSTER_RESOURCE["ask"]) else "ack"


def _by_urn(recorded: Recorded) -> dict[str, Registration]:
    return {resource.urn: resource for resource in recorded.resources}


def _components_sit_at_the_root_under_their_names(deployed: tuple[str, Recorded]) -> None:
    stack_name, recorded = deployed
    expected = {**COMPONENTS, "cluster": CLUSTER_COMPONENT[_cluster_kind(recorded)]}
    # Pulumi's URN: urn:pulumi:<stack>::<project>::<parent types$>type::<name>.
    root = f"urn:pulumi:{stack_name}::tftrain::pulumi:pulumi:Stack::tftrain-{stack_name}"
    components = [r for r in recorded.resources if r.type.startswith("tftrain:cloud:")]
    assert "cluster" in {r.name for r in components}
    for resource in components:
        # The platform stack grants each run stack that reads OSS a role of its own.
        named = "oss-access" if resource.name.startswith("oss-access-") else resource.name
        assert expected[named] == resource.type
        assert resource.parent == root, resource.name
        # A top-level resource's URN has no parent type: the engine leaves the root's out.
        assert resource.urn == f"urn:pulumi:{stack_name}::tftrain::{resource.type}::{resource.name}"


def _every_cloud_resource_sits_under_the_component_it_is_named_after(
    deployed: tuple[str, Recorded],
) -> None:
    _, recorded = deployed
    by_urn = _by_urn(recorded)
    cloud = [r for r in recorded.resources if r.type.startswith("alicloud:") and r.custom]
    assert cloud
    for resource in cloud:
        parent = by_urn[resource.parent]
        assert parent.type.startswith("tftrain:cloud:"), (resource.name, parent.type)
        assert resource.name.startswith(f"{parent.name}-"), (resource.name, parent.name)


def _the_cluster_is_created_after_the_nat_that_lets_its_pods_pull_images(
    deployed: tuple[str, Recorded],
) -> None:
    _, recorded = deployed
    by_urn = _by_urn(recorded)
    (cluster,) = [
        r for r in recorded.resources if r.type == CLUSTER_RESOURCE[_cluster_kind(recorded)]
    ]
    snat = {r.urn for r in recorded.resources if r.type == SNAT}
    assert snat, "a new network has a SNAT entry per vSwitch"
    assert snat <= set(cluster.dependencies), sorted(by_urn[u].name for u in cluster.dependencies)


def _every_tagged_resource_names_its_project_stack_and_component(
    deployed: tuple[str, Recorded],
) -> None:
    stack_name, recorded = deployed
    by_urn = _by_urn(recorded)
    tagged = [r for r in recorded.resources if r.custom and isinstance(r.inputs.get("tags"), dict)]
    # What bills by the hour carries the tags, so a stack's cost can be found by them; the
    # security groups too, so a stack's firewall can be found in the console.
    billed = [r for r in recorded.resources if r.type in ALWAYS_TAGGED]
    assert billed and all(r in tagged for r in billed), [r.name for r in billed if r not in tagged]
    for resource in tagged:
        assert resource.inputs["tags"] == {
            "app": "tftrain",
            "pulumi-stack": stack_name,
            "pulumi-component": by_urn[resource.parent].name,
            "managed-by": "pulumi",
        }, resource.name


# --- ASK's own inputs and outputs -------------------------------------------------------------


def _ask(config_overrides: Mapping[str, Any], mocks: CloudMocks | None = None) -> tuple:
    config = stack("ask-eci", **config_overrides)

    def build() -> dict[str, pulumi.Output[Any]]:
        cluster = AskCluster("cluster", config.cluster, Network("network", config.network))
        return {
            "cluster_id": cluster.cluster_id,
            "kubeconfig": cluster.kubeconfig,
            "version": cluster.version,
            "security_group_id": cluster.security_group_id,
        }

    return deploy(build, stack_name="ask-eci", mocks=mocks)


def test_an_unnamed_ask_cluster_is_a_pro_cluster_named_by_project_stack_and_component() -> None:
    mocks, out = _ask({})
    ask = mocks.one(ASK)
    assert ask.inputs["clusterSpec"] == ASK_PRO_SPEC
    assert ask.inputs["name"] == "tftrain-ask-eci-cluster"
    (credential,) = mocks.calls_to("alicloud:cs/getClusterCredential:getClusterCredential")
    assert credential["clusterId"] == ask.id == out["cluster_id"].value
    assert out["version"].value == ask.outputs["version"]
    assert out["security_group_id"].value == ask.outputs["securityGroupId"]


def _created_public() -> PlausibleCloud:
    """An ASK cluster created with an internet endpoint, whatever the stack says now."""
    return PlausibleCloud(strict=True, created_with={ASK: {"endpointPublicAccessEnabled": True}})


def test_turning_an_ask_api_server_private_after_creation_stops_naming_the_key() -> None:
    """ASK reads endpoint_public_access_enabled at creation only: the program must say so,
    not report a private cluster that still answers on the internet."""
    with pytest.raises(Exception, match=r"tftrain:cluster\.publicApiServer = false"):
        _ask({}, mocks=CloudMocks(cloud=_created_public()))


def test_a_public_ask_cluster_reads_no_intranet_endpoint() -> None:
    mocks, out = _ask({"cluster": {"publicApiServer": True}})
    assert not [r for r in mocks.resources if r.existing_id]
    assert out["kubeconfig"].secret is True
    assert server_of(out["kubeconfig"].value) != ""


def test_a_refused_api_server_change_reaches_nothing_inside_the_cluster() -> None:
    """The kubeconfig waits for the check: the Kubernetes provider never gets one, so no
    workload is created or changed by an `up` that stops on the check."""
    recorded = run_program("ask-eci", cloud=_created_public(), raise_errors=False)
    assert "tftrain:cluster.publicApiServer = false" in str(recorded.error)
    assert [r.type for r in recorded.resources if "kubernetes:" in r.type] == []


def _snat_entries_are_created_after_the_eip_is_bound(deployed: tuple[str, Recorded]) -> None:
    """A SNAT entry names the EIP's address, which the NAT can use only once it is bound."""
    _, recorded = deployed
    bindings = {r.urn for r in recorded.resources if r.type == EIP_ASSOCIATION}
    assert len(bindings) == 1
    for snat in recorded.of_type(SNAT):
        assert bindings <= set(snat.dependencies), snat.name


def _autoscaling_pools_are_created_after_the_autoscaler(deployed: tuple[str, Recorded]) -> None:
    """ACK scales a pool only once the cluster autoscaler is configured: a pool made first
    would wait at zero nodes with pending GPU pods."""
    _, recorded = deployed
    autoscalers = {r.urn for r in recorded.resources if r.type == AUTOSCALER}
    scaling = [r for r in recorded.resources if r.type == NODE_POOL and "scalingConfig" in r.inputs]
    assert bool(autoscalers) == bool(scaling)
    for pool in scaling:
        assert autoscalers <= set(pool.dependencies), pool.name


def _an_ack_cluster_gets_rrsa_exactly_when_its_pods_take_a_ram_role(
    deployed: tuple[str, Recorded],
) -> None:
    """RRSA (the cluster's OIDC provider) is what lets a pod's service account assume the OSS
    reader role; the ACK console's default leaves it off. Certificate authority data is not
    written into the state (the provider's advice for cluster security)."""
    _, recorded = deployed
    takes_role = any(r.type == "tftrain:cloud:OssRrsaAccess" for r in recorded.resources)
    if _cluster_kind(recorded) == "ask":
        # ASK has no RRSA switch: ECI mounts OSS with a RAM user's key (docs/data.md).
        assert not takes_role
        return
    (cluster,) = [r for r in recorded.resources if r.type == CLUSTER_RESOURCE["ack"]]
    assert cluster.inputs.get("enableRrsa", False) is takes_role
    assert cluster.inputs["skipSetCertificateAuthority"] is True
    assert cluster.inputs["clusterSpec"] == ASK_PRO_SPEC  # ACK's Pro spec has the same name


RULES = (
    _snat_entries_are_created_after_the_eip_is_bound,
    _components_sit_at_the_root_under_their_names,
    _every_cloud_resource_sits_under_the_component_it_is_named_after,
    _the_cluster_is_created_after_the_nat_that_lets_its_pods_pull_images,
    _every_tagged_resource_names_its_project_stack_and_component,
    _autoscaling_pools_are_created_after_the_autoscaler,
    _an_ack_cluster_gets_rrsa_exactly_when_its_pods_take_a_ram_role,
)


# Stacks no checked-in stack file is: ack-gpu with a change (a stack given as a mapping is
# "test").
VARIANTS = {
    SPOT: {"cluster": {"spotGpuPool": {"maxSize": 2}}, "worker": {"spot": True}},
    PUBLIC_BOARD: {
        "tensorboard": {
            "public": True,
            "allowedSourceRanges": ["203.0.113.0/24", "198.51.100.7/32"],
        }
    },
}


@pytest.mark.parametrize("stack", [*CLOUD_STACKS, *VARIANTS])
def test_the_stacks_cloud_tree_follows_every_rule(stack: str) -> None:
    """Each rule above on one run of the program (a run per test, no cache shared between
    tests: a mutation run reruns exactly the tests that ran the code)."""
    if stack in VARIANTS:
        deployed = ("test", run_program(stack_raw("ack-gpu", VARIANTS[stack])))
    else:
        deployed = (stack, run_program(stack))
    broken = []
    for rule in RULES:
        try:
            rule(deployed)
        except AssertionError as error:
            broken.append(f"{rule.__name__}: {error}")
    assert not broken, "\n".join(broken)


def test_a_cluster_without_rrsa_metadata_says_what_to_check_and_starts_nothing() -> None:
    """ACK leaves rrsa_metadata empty when RRSA did not come on: the OSS role would trust no
    issuer, so the run stops before any volume, claim or pod, saying where to look."""
    empty = PlausibleCloud(created_with={CLUSTER_RESOURCE["ack"]: {"rrsaMetadata": {}}})
    recorded = run_program("ack-gpu", cloud=empty, raise_errors=False)
    assert str(recorded.error) == (
        "tftrain:data.credentials = rrsa: the cluster reports no RRSA ram_oidc_provider_arn (its "
        "rrsa_metadata is empty), so the OSS volumes' RAM role could not be trusted. Check in "
        "the ACK console that RRSA is on for the cluster, then `pulumi up` again, or use "
        "data.credentials: secret"
    )
    started = {o["kind"] for o in recorded.kube_objects()}
    assert not started & {"PersistentVolume", "PersistentVolumeClaim", "Job", "Deployment"}
