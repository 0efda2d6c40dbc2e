"""The Alibaba Cloud components under Pulumi mocks: what each would ask the cloud to create.

Every test builds its components inside a fresh mock runtime, records each registered
resource (type token, name, inputs as the engine sees them: camelCase keys, numbers as
floats), and resolves the components' outputs, including whether they are secret. The cloud
is the tests' one fake cloud (`tests.pulumi_mocks.PlausibleCloud`, through `CloudMocks`).
"""

from __future__ import annotations

import importlib
import ipaddress
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import pulumi
import pytest
import yaml

from infra.cloud import (
    GPU_NODE_LABEL,
    GPU_TAINT_KEY,
    AckCluster,
    AskCluster,
    LoadBalancerAcl,
    NasStorage,
    Network,
    needs_pod_vswitch,
)
from infra.cloud.cluster import AUTOSCALER_ROLE, created_only
from infra.cloud.kubernetes_version import check_offered
from infra.config import StackConfig, parse_config, read_stack_file, stack_file
from infra.render.provider_sdk import (
    argument_docs,
    deprecated_arguments,
    resource_is_deprecated,
    sdk_source,
    snake,
)
from tests.pulumi_mocks import (
    EXISTING_VSWITCH_ZONE,
    EXISTING_VSWITCHES,
    MOCK_DEFAULT_K8S_VERSION,
    MOCK_INTERNET_API,
    MOCK_INTRANET_API,
    MOCK_OFFERED_K8S_VERSIONS,
    CloudMocks,
    PlausibleCloud,
    Registered,
    all_stacks,
    merged,
    run_program,
)

# ACK "Specify a custom GPU driver version for a node": the pool label, a CUDA 12 driver.
DRIVER_LABEL = {"key": "ack.aliyun.com/nvidia-driver-version", "value": "570.133.20"}
# How the SDK's docstrings say an argument is read only at creation (the provider's words).
CREATE_ONLY = re.compile(
    r"Only works for \*\*Create\*\* Operation|cannot be modified|can not be modified|"
    r"does not support modif|cannot be changed",
    re.IGNORECASE,
)
VPC = "alicloud:vpc/network:Network"
VSWITCH = "alicloud:vpc/switch:Switch"
NAT = "alicloud:vpc/natGateway:NatGateway"
EIP = "alicloud:ecs/eipAddress:EipAddress"
EIP_ASSOCIATION = "alicloud:ecs/eipAssociation:EipAssociation"
SNAT = "alicloud:vpc/snatEntry:SnatEntry"
ACK = "alicloud:cs/managedKubernetes:ManagedKubernetes"
ASK = "alicloud:cs/serverlessKubernetes:ServerlessKubernetes"
NODE_POOL = "alicloud:cs/nodePool:NodePool"
AUTOSCALER = "alicloud:cs/autoscalingConfig:AutoscalingConfig"
FILE_SYSTEM = "alicloud:nas/fileSystem:FileSystem"
ACCESS_GROUP = "alicloud:nas/accessGroup:AccessGroup"
ACCESS_RULE = "alicloud:nas/accessRule:AccessRule"
MOUNT_TARGET = "alicloud:nas/mountTarget:MountTarget"
SLB_ACL = "alicloud:slb/acl:Acl"
SLB_ACL_ENTRY = "alicloud:slb/aclEntryAttachment:AclEntryAttachment"
VERSION_LOOKUP = "alicloud:cs/getKubernetesVersion:getKubernetesVersion"


@dataclass
class Resolved:
    value: Any
    secret: bool


def deploy(
    build: Callable[[], Mapping[str, pulumi.Output[Any]]],
    stack_name: str = "test",
    mocks: CloudMocks | None = None,
) -> tuple[CloudMocks, dict[str, Resolved]]:
    """Run `build` in a fresh mock runtime; return the recorded resources and its outputs."""
    mocks = mocks or CloudMocks()
    pulumi.runtime.set_mocks(mocks, project="tftrain", stack=stack_name, preview=False)
    resolved: dict[str, Resolved] = {}

    async def resolve(outputs: Mapping[str, pulumi.Output[Any]]) -> None:
        for key, output in outputs.items():
            resolved[key] = Resolved(await output.future(), await output.is_secret())

    @pulumi.runtime.test
    def program() -> pulumi.Output[None]:
        return pulumi.Output.from_input(resolve(build()))

    program()
    return mocks, resolved


def stack(name: str, **overrides: Any) -> StackConfig:
    """A checked-in stack, with some keys replaced (nested mappings are merged).

    Where a test brings its own network, pod and service ranges move out of the private
    blocks it uses for VPCs, which the config model would otherwise reject as overlapping, and
    Terway's pod vSwitch takes the last quarter of its VPC.
    """
    raw = read_stack_file(stack_file(name))
    if "network" in overrides:
        vpc = ipaddress.ip_network(overrides["network"].get("vpcCidr", "192.168.0.0/16"))
        pod_vswitch = str(list(vpc.subnets(prefixlen_diff=2))[-1])
        moved = {"podCidr": "100.96.0.0/16", "serviceCidr": "100.104.0.0/20"}
        raw = merged(raw, {"network": {**moved, "podVswitchCidr": pod_vswitch}})
    return parse_config(merged(raw, overrides))


def network_outputs(network: Network) -> dict[str, pulumi.Output[Any]]:
    return {
        "vpc_id": network.vpc_id,
        "vswitch_id": network.vswitch_id,
        "vpc_cidr": network.vpc_cidr,
        "vswitch_cidr": network.vswitch_cidr,
        "zone_id": network.zone_id,
    }


def build_network(config: StackConfig) -> Callable[[], dict[str, pulumi.Output[Any]]]:
    return lambda: network_outputs(Network("tft", config.network))


def build_ack(config: StackConfig, uses_gpu: bool | None = None) -> Callable[[], dict]:
    def build() -> dict[str, pulumi.Output[Any]]:
        network = Network("tft", config.network, pod_vswitch=needs_pod_vswitch(config.cluster))
        gpu = config.uses_gpu if uses_gpu is None else uses_gpu
        cluster = AckCluster("tft", config.cluster, network, uses_gpu=gpu)
        return {
            "cluster_id": cluster.cluster_id,
            "kubeconfig": cluster.kubeconfig,
            "version": cluster.version,
            "node_pool_ids": pulumi.Output.all(*(pool.id for pool in cluster.node_pools)),
        }

    return build


def build_ask(config: StackConfig) -> Callable[[], dict]:
    def build() -> dict[str, pulumi.Output[Any]]:
        network = Network("tft", config.network)
        cluster = AskCluster("tft", config.cluster, network)
        assert cluster.node_pools == []
        return {"cluster_id": cluster.cluster_id, "kubeconfig": cluster.kubeconfig}

    return build


def build_nas(config: StackConfig) -> Callable[[], dict]:
    def build() -> dict[str, pulumi.Output[Any]]:
        network = Network("tft", config.network)
        storage = NasStorage("tft", config.storage, network)
        return {
            "file_system_id": storage.file_system_id,
            "mount_target_domain": storage.mount_target_domain,
            **network_outputs(network),
        }

    return build


# --- Network -----------------------------------------------------------------------------


def test_new_network_creates_vpc_and_vswitch_in_the_configured_zone() -> None:
    mocks, out = deploy(build_network(stack("ack-gpu")))

    vpc = mocks.one(VPC)
    vswitch = mocks.one(VSWITCH)
    assert vpc.inputs["cidrBlock"] == "192.168.0.0/16"
    assert vswitch.inputs["vpcId"] == vpc.id
    assert vswitch.inputs["cidrBlock"] == "192.168.0.0/20"
    assert vswitch.inputs["zoneId"] == "cn-hangzhou-i"
    assert not mocks.calls_to("alicloud:index/getZones:getZones")
    assert out["vpc_id"].value == vpc.id
    assert out["vswitch_id"].value == vswitch.id
    assert out["vpc_cidr"].value == "192.168.0.0/16"
    assert out["vswitch_cidr"].value == "192.168.0.0/20"
    assert out["zone_id"].value == "cn-hangzhou-i"


def test_a_new_vswitch_never_looks_its_zone_up() -> None:
    # The config refuses a cloud stack without zoneId; the component refuses it too, rather
    # than pick a zone that may differ on the next run and replace vSwitch, NAS and cluster.
    config = stack("ack-gpu")
    unzoned = replace(config.network, zone_id="")

    with pytest.raises(ValueError, match=r"network\.zoneId"):
        deploy(lambda: network_outputs(Network("tft", unzoned)))


def test_existing_vpc_gets_a_new_vswitch_but_no_new_vpc() -> None:
    config = stack(
        "ack-gpu",
        network={
            "vpcId": "vpc-existing",
            "vpcCidr": "172.16.0.0/12",
            "vswitchCidr": "172.16.0.0/20",
        },
    )
    mocks, out = deploy(build_network(config))

    assert mocks.of_type(VPC) == []
    assert mocks.one(VSWITCH).inputs["vpcId"] == "vpc-existing"
    assert out["vpc_id"].value == "vpc-existing"
    # For an existing VPC the configured CIDR stands for the real one.
    assert out["vpc_cidr"].value == "172.16.0.0/12"


@pytest.mark.parametrize(
    ("vpc_id", "vpc_cidr", "problem"),
    [
        ("vpc-missing", "172.16.0.0/12", "tftrain:network.vpcId = 'vpc-missing': no such VPC"),
        (
            "vpc-existing",
            "172.16.0.0/16",
            "tftrain:network.vpcCidr = '172.16.0.0/16': must be the CIDR of vpc-existing, "
            "172.16.0.0/12",
        ),
    ],
)
def test_existing_vpc_must_exist_and_have_the_configured_cidr(
    vpc_id: str, vpc_cidr: str, problem: str
) -> None:
    config = stack(
        "ack-gpu",
        network={"vpcId": vpc_id, "vpcCidr": vpc_cidr, "vswitchCidr": "172.16.0.0/20"},
    )

    with pytest.raises(ValueError, match=re.escape(problem)):
        deploy(build_network(config))


def test_existing_vpc_and_vswitch_are_reused_with_the_vswitch_real_zone_and_cidr() -> None:
    config = stack(
        "ack-gpu",
        network={
            "vpcId": "vpc-existing",
            "vswitchId": "vsw-existing",
            "vpcCidr": "172.16.0.0/12",
            "vswitchCidr": "172.16.0.0/20",
        },
    )
    mocks, out = deploy(build_network(config))

    assert mocks.of_type(VPC) == []
    assert mocks.of_type(VSWITCH) == []
    (lookup,) = mocks.calls_to("alicloud:vpc/getSwitches:getSwitches")
    assert lookup["ids"] == ["vsw-existing"]
    assert out["vpc_id"].value == "vpc-existing"
    assert out["vswitch_id"].value == "vsw-existing"
    assert out["vswitch_cidr"].value == EXISTING_VSWITCHES["vsw-existing"]
    assert out["zone_id"].value == EXISTING_VSWITCH_ZONE
    # Egress is still added, in the existing network.
    assert mocks.one(NAT).inputs["vpcId"] == "vpc-existing"
    assert mocks.one(SNAT).inputs["sourceVswitchId"] == "vsw-existing"


@pytest.mark.parametrize(
    ("vpc_id", "vswitch_id", "problem"),
    [
        ("vpc-existing", "vsw-missing", "no such vSwitch"),
        ("vpc-other", "vsw-existing", "it belongs to vpc-existing, not vpcId vpc-other"),
        (
            "vpc-existing",
            "vsw-secondary",
            "its CIDR 100.64.0.0/20 is outside 172.16.0.0/12",
        ),
    ],
)
def test_existing_vswitch_must_be_in_the_primary_cidr_of_the_configured_vpc(
    vpc_id: str, vswitch_id: str, problem: str
) -> None:
    config = stack(
        "ack-gpu",
        network={
            "vpcId": vpc_id,
            "vswitchId": vswitch_id,
            "vpcCidr": "172.16.0.0/12",
            "vswitchCidr": "172.16.0.0/20",
        },
    )

    message = f"tftrain:network.vswitchId = '{vswitch_id}': {problem}"
    with pytest.raises(ValueError, match=re.escape(message)):
        deploy(build_network(config))


def test_nat_egress_by_default_enhanced_nat_with_eip_and_snat_for_the_vswitch() -> None:
    mocks, _ = deploy(build_network(stack("ack-gpu")))

    vswitch, nat, eip = mocks.one(VSWITCH), mocks.one(NAT), mocks.one(EIP)
    association, snat = mocks.one(EIP_ASSOCIATION), mocks.one(SNAT)
    assert nat.inputs["natType"] == "Enhanced"
    assert nat.inputs["paymentType"] == "PayAsYouGo"
    assert nat.inputs["vswitchId"] == vswitch.id
    # An internet NAT billed by LCU (SDK: PayByLcu only for enhanced NAT); the EIP pay-as-you-go
    # by traffic, capped at 100 Mbit/s (docs/cloud-evidence.md).
    assert nat.inputs["networkType"] == "internet"
    assert nat.inputs["internetChargeType"] == "PayByLcu"
    assert nat.inputs["vpcId"] == vswitch.inputs["vpcId"]
    assert eip.inputs["paymentType"] == "PayAsYouGo"
    assert eip.inputs["internetChargeType"] == "PayByTraffic"
    assert eip.inputs["bandwidth"] == "100"
    assert association.inputs["allocationId"] == eip.id
    assert association.inputs["instanceId"] == nat.id
    assert association.inputs["instanceType"] == "Nat"
    assert snat.inputs["snatTableId"] == nat.outputs["snatTableIds"]
    assert snat.inputs["sourceVswitchId"] == vswitch.id
    assert snat.inputs["snatIp"] == eip.outputs["ipAddress"]


def test_no_nat_eip_or_snat_when_nat_gateway_is_off() -> None:
    mocks, _ = deploy(build_network(stack("ask-eci", network={"natGateway": False})))

    for typ in (NAT, EIP, EIP_ASSOCIATION, SNAT):
        assert mocks.of_type(typ) == [], typ
    assert len(mocks.of_type(VSWITCH)) == 1


# --- ACK ---------------------------------------------------------------------------------


def node_vswitch(mocks: CloudMocks) -> Registered:
    return next(switch for switch in mocks.of_type(VSWITCH) if switch.name == "tft-vswitch")


def server_of(kubeconfig: str) -> str:
    return yaml.safe_load(kubeconfig)["clusters"][0]["cluster"]["server"]


def test_ack_cluster_is_private_uses_the_stack_network_and_installs_nas_csi() -> None:
    mocks, out = deploy(build_ack(stack("ack-gpu")))

    ack = mocks.one(ACK)
    assert ack.inputs["slbInternetEnabled"] is False
    assert ack.inputs["newNatGateway"] is False
    assert ack.inputs["vswitchIds"] == [node_vswitch(mocks).id]
    assert ack.inputs["serviceCidr"] == "172.21.0.0/20"
    addons = {addon["name"]: addon for addon in ack.inputs["addons"]}
    assert {"csi-plugin", "csi-provisioner"} <= addons.keys()
    assert addons["nginx-ingress-controller"]["disabled"] is True
    assert out["cluster_id"].value == ack.id


def test_latest_version_lets_ack_choose_at_creation_and_never_upgrades_behind_the_user() -> None:
    mocks, out = deploy(build_ack(stack("ack-gpu")))

    # Unset: ACK creates the newest version it offers; an unset optional+computed argument
    # never shows a diff, so a later ACK release changes nothing on `pulumi up`.
    assert "version" not in mocks.one(ACK).inputs
    assert out["version"].value == MOCK_DEFAULT_K8S_VERSION
    assert mocks.calls_to(VERSION_LOOKUP) == []  # nothing to check


def _program_with_version(kind: str, version: str) -> Any:
    raw = read_stack_file(stack_file(kind))
    return run_program(merged(raw, {"cluster": {"kubernetesVersion": version}}), raise_errors=False)


@pytest.mark.parametrize(
    ("kind", "cluster_type", "profile"),
    [("ack-gpu", ACK, "Default"), ("ask-eci", ASK, "Serverless")],
)
def test_explicit_version_ack_offers_is_passed_so_raising_it_upgrades_on_purpose(
    kind: str, cluster_type: str, profile: str
) -> None:
    recorded = _program_with_version(kind, "1.33.3-aliyun.1")

    assert recorded.error is None
    (cluster,) = recorded.of_type(cluster_type)
    assert cluster.inputs["version"] == "1.33.3-aliyun.1"
    (lookup,) = [args for token, args in recorded.calls if token == VERSION_LOOKUP]
    assert (lookup["clusterType"], lookup["profile"]) == ("ManagedKubernetes", profile)
    assert "kubernetesVersion" not in lookup  # every version new clusters can be created on


@pytest.mark.parametrize("kind", ["ack-gpu", "ask-eci"])
def test_a_version_ack_does_not_offer_stops_before_anything_is_registered(kind: str) -> None:
    # 1.31 left ACK's list on 30 Sep 2025; the config's format check alone accepts it.
    recorded = _program_with_version(kind, "1.31.1-aliyun.1")

    message = (
        "tftrain:cluster.kubernetesVersion = '1.31.1-aliyun.1': ACK does not offer it for new "
        "ManagedKubernetes clusters"
    )
    assert message in str(recorded.error)
    assert ", ".join(MOCK_OFFERED_K8S_VERSIONS) in str(recorded.error)
    assert recorded.resources == []  # not even the network: nothing to clean up


def test_an_offline_render_asks_nothing_and_checks_nothing() -> None:
    # The offline render's lookup has no result at all (None); a provider answers a list.
    assert check_offered("1.31.1-aliyun.1", "ack", None) == "1.31.1-aliyun.1"


def test_a_deploy_whose_lookup_lists_no_versions_refuses_the_pinned_one() -> None:
    with pytest.raises(pulumi.RunError, match=r"ACK listed no versions .* cannot be checked"):
        check_offered("1.31.1-aliyun.1", "ack", [])


def test_terway_enforces_network_policy_with_pods_on_their_own_vswitch_and_snat() -> None:
    mocks, _ = deploy(build_ack(stack("ack-cpu")))

    ack = mocks.one(ACK)
    addons = {addon["name"]: addon for addon in ack.inputs["addons"]}
    assert "flannel" not in addons
    assert json.loads(addons["terway-eniip"]["config"])["NetworkPolicy"] == "true"
    pods = next(switch for switch in mocks.of_type(VSWITCH) if switch.name == "tft-pod-vswitch")
    assert pods.inputs["cidrBlock"] == "192.168.64.0/18"
    assert pods.inputs["zoneId"] == node_vswitch(mocks).inputs["zoneId"]
    assert ack.inputs["podVswitchIds"] == [pods.id]
    assert "podCidr" not in ack.inputs
    assert sorted(snat.inputs["sourceVswitchId"] for snat in mocks.of_type(SNAT)) == sorted(
        [pods.id, node_vswitch(mocks).id]
    )


def test_flannel_uses_the_pod_cidr_and_no_pod_vswitch() -> None:
    mocks, _ = deploy(build_ack(stack("ack-cpu", cluster={"networkPlugin": "flannel"})))

    ack = mocks.one(ACK)
    assert "flannel" in {addon["name"] for addon in ack.inputs["addons"]}
    assert ack.inputs["podCidr"] == "10.64.0.0/16"
    assert "podVswitchIds" not in ack.inputs
    assert [switch.name for switch in mocks.of_type(VSWITCH)] == ["tft-vswitch"]
    assert len(mocks.of_type(SNAT)) == 1


def test_ack_api_server_is_public_only_when_configured() -> None:
    mocks, _ = deploy(build_ack(stack("ack-gpu", cluster={"publicApiServer": True})))

    assert mocks.one(ACK).inputs["slbInternetEnabled"] is True


def test_ack_gpu_stack_gets_a_cpu_pool_and_a_labelled_tainted_gpu_pool() -> None:
    mocks, out = deploy(build_ack(stack("ack-gpu")))

    ack, vswitch = mocks.one(ACK), node_vswitch(mocks)
    pools = {pool.name: pool for pool in mocks.of_type(NODE_POOL)}
    assert pools.keys() == {"tft-cpu-pool", "tft-gpu-pool"}
    cpu, gpu = pools["tft-cpu-pool"], pools["tft-gpu-pool"]
    for pool in (cpu, gpu):
        assert pool.inputs["clusterId"] == ack.id
        assert pool.inputs["vswitchIds"] == [vswitch.id]
        assert pool.inputs["systemDiskSize"] == 120
    assert cpu.inputs["instanceTypes"] == ["ecs.g7.xlarge"]
    assert cpu.inputs["desiredSize"] == "2"
    assert "scalingConfig" not in cpu.inputs
    assert "labels" not in cpu.inputs
    assert "taints" not in cpu.inputs
    assert gpu.inputs["instanceTypes"] == ["ecs.gn6i-c4g1.xlarge"]
    assert gpu.inputs["labels"] == [
        {"key": GPU_NODE_LABEL[0], "value": GPU_NODE_LABEL[1]},
        DRIVER_LABEL,
    ]
    assert gpu.inputs["taints"] == [
        {"key": GPU_TAINT_KEY, "value": "present", "effect": "NoSchedule"}
    ]
    assert out["node_pool_ids"].value == [cpu.id, gpu.id]


def test_ack_gpu_pool_autoscales_from_zero_with_the_cluster_autoscaler_configured() -> None:
    mocks, _ = deploy(build_ack(stack("ack-gpu")))

    gpu = next(pool for pool in mocks.of_type(NODE_POOL) if pool.name == "tft-gpu-pool")
    # No GPU node is billed while idle: no fixed size, a range from zero.
    assert "desiredSize" not in gpu.inputs
    scaling = {"enable": True, "minSize": 0, "maxSize": 2, "type": "gpu"}
    assert gpu.inputs["scalingConfig"] == scaling
    autoscaler = mocks.one(AUTOSCALER)
    assert autoscaler.inputs["clusterId"] == mocks.one(ACK).id
    assert autoscaler.inputs["scaleUpFromZero"] is True
    assert autoscaler.inputs["scaleDownEnabled"] is True
    (roles,) = mocks.calls_to("alicloud:ram/getRoles:getRoles")
    assert re.fullmatch(roles["nameRegex"], AUTOSCALER_ROLE)


def test_autoscaling_stops_with_a_message_when_the_account_lacks_the_autoscaler_role() -> None:
    with pytest.raises(Exception, match=f"cluster.gpuPool.maxSize.*{AUTOSCALER_ROLE}"):
        deploy(
            build_ack(stack("ack-gpu")),
            mocks=CloudMocks(PlausibleCloud(autoscaler_role=False, strict=True)),
        )


def test_fixed_size_pools_need_no_autoscaler() -> None:
    mocks, _ = deploy(build_ack(stack("ack-cpu")))

    assert mocks.of_type(AUTOSCALER) == []
    assert mocks.calls_to("alicloud:ram/getRoles:getRoles") == []


def test_no_gpu_pool_when_no_replica_uses_a_gpu() -> None:
    mocks, out = deploy(build_ack(stack("ack-cpu")))

    (pool,) = mocks.of_type(NODE_POOL)
    assert pool.name == "tft-cpu-pool"
    assert pool.inputs["instanceTypes"] == ["ecs.g7.2xlarge"]
    assert pool.inputs["desiredSize"] == "3"
    assert out["node_pool_ids"].value == [pool.id]


def test_gpu_pool_config_alone_does_not_create_gpu_nodes() -> None:
    mocks, _ = deploy(build_ack(stack("ack-gpu"), uses_gpu=False))

    assert [pool.name for pool in mocks.of_type(NODE_POOL)] == ["tft-cpu-pool"]


def test_pool_with_max_size_autoscales_instead_of_a_fixed_size() -> None:
    config = stack("ack-gpu", cluster={"gpuPool": {"size": 0, "minSize": 0, "maxSize": 4}})
    mocks, _ = deploy(build_ack(config))

    gpu = next(pool for pool in mocks.of_type(NODE_POOL) if pool.name == "tft-gpu-pool")
    assert "desiredSize" not in gpu.inputs
    assert gpu.inputs["scalingConfig"] == {
        "enable": True,
        "minSize": 0,
        "maxSize": 4,
        "type": "gpu",
    }


def ack_with_gpu_workers(gpu_pool: Mapping[str, Any] | None = None) -> StackConfig:
    """An ACK stack with 3 GPU workers that says nothing about its GPU pool but `gpu_pool`."""
    cluster: dict[str, Any] = {"kind": "ack"}
    if gpu_pool is not None:
        cluster["gpuPool"] = dict(gpu_pool)
    return parse_config(
        {
            "image": "registry.example.com/tftrain/trainer:1",
            "cluster": cluster,
            "network": {"zoneId": "cn-hangzhou-i"},
            "worker": {"number": 3, "gpuCount": 1},
        }
    )


def test_an_unconfigured_gpu_pool_autoscales_from_zero_to_one_node_per_gpu_replica() -> None:
    mocks, _ = deploy(build_ack(ack_with_gpu_workers()))

    gpu = next(pool for pool in mocks.of_type(NODE_POOL) if pool.name == "tft-gpu-pool")
    assert "desiredSize" not in gpu.inputs
    scaling = {"enable": True, "minSize": 0, "maxSize": 3, "type": "gpu"}
    assert gpu.inputs["scalingConfig"] == scaling
    assert mocks.one(AUTOSCALER).inputs["scaleUpFromZero"] is True


def test_a_fixed_gpu_pool_only_when_its_size_is_set() -> None:
    mocks, _ = deploy(build_ack(ack_with_gpu_workers({"size": 3})))

    gpu = next(pool for pool in mocks.of_type(NODE_POOL) if pool.name == "tft-gpu-pool")
    assert gpu.inputs["desiredSize"] == "3"
    assert "scalingConfig" not in gpu.inputs
    assert mocks.of_type(AUTOSCALER) == []  # the default CPU pool is fixed too


def test_spot_gpu_pool_scales_from_zero_on_spot_instances_behind_its_own_taint() -> None:
    config = stack("ack-gpu", cluster={"spotGpuPool": {"maxSize": 3}}, worker={"spot": True})
    mocks, out = deploy(build_ack(config))

    pools = {pool.name: pool for pool in mocks.of_type(NODE_POOL)}
    assert pools.keys() == {"tft-cpu-pool", "tft-gpu-pool", "tft-spot-gpu-pool"}
    spot, gpu = pools["tft-spot-gpu-pool"], pools["tft-gpu-pool"]
    assert spot.inputs["instanceTypes"] == gpu.inputs["instanceTypes"]
    assert spot.inputs["spotStrategy"] == "SpotAsPriceGo"
    assert spot.inputs["spotInstanceRemedy"] is True
    assert "desiredSize" not in spot.inputs
    assert spot.inputs["scalingConfig"] == {
        "enable": True,
        "minSize": 0,
        "maxSize": 3,
        "type": "gpu",
    }
    assert spot.inputs["labels"] == [{"key": "tftrain.io/capacity", "value": "spot"}, DRIVER_LABEL]
    assert spot.inputs["taints"] == [
        {"key": "tftrain.io/capacity", "value": "spot", "effect": "NoSchedule"}
    ]
    # The on-demand pools stay on-demand.
    assert all(
        "spotStrategy" not in pools[name].inputs for name in ("tft-cpu-pool", "tft-gpu-pool")
    )
    assert out["node_pool_ids"].value[-1] == spot.id


def test_private_ack_kubeconfig_is_a_long_lived_secret_pointing_at_the_intranet_endpoint() -> None:
    mocks, out = deploy(build_ack(stack("ack-gpu")))

    assert out["kubeconfig"].secret is True
    assert server_of(out["kubeconfig"].value) == MOCK_INTRANET_API
    assert out["cluster_id"].secret is False
    (credential,) = mocks.calls_to("alicloud:cs/getClusterCredential:getClusterCredential")
    assert credential["clusterId"] == mocks.one(ACK).id
    # A temporary credential would expire under the state: destroy/refresh would get 401.
    assert "temporaryDurationMinutes" not in credential


def test_public_ack_kubeconfig_keeps_the_internet_endpoint() -> None:
    _, out = deploy(build_ack(stack("ack-gpu", cluster={"publicApiServer": True})))

    assert out["kubeconfig"].secret is True
    assert server_of(out["kubeconfig"].value) == MOCK_INTERNET_API


@pytest.mark.parametrize(
    ("stack_name", "field_name"),
    [("ack-gpu", "slbInternetEnabled"), ("ask-eci", "endpointPublicAccessEnabled")],
)
def test_public_api_server_is_kept_from_creation_not_diffed(
    stack_name: str, field_name: str
) -> None:
    recorded = run_program(stack_name)

    (cluster,) = [r for r in recorded.resources if r.type in (ACK, ASK)]
    assert cluster.ignore_changes == (field_name,)


@pytest.mark.parametrize("created", [True, False])
def test_changing_public_api_server_after_creation_is_rejected_naming_the_key(
    created: bool,
) -> None:
    check = created_only("cluster.publicApiServer", not created)
    with pytest.raises(ValueError, match=r"tftrain:cluster.publicApiServer = .*only at creation"):
        check(created)
    assert created_only("cluster.publicApiServer", created)(created) is created
    assert created_only("cluster.publicApiServer", created)(None) is created  # not created yet


# --- ASK ---------------------------------------------------------------------------------


def test_ask_cluster_is_private_by_default_in_the_stack_vswitch() -> None:
    mocks, out = deploy(build_ask(stack("ask-eci")))

    ask = mocks.one(ASK)
    assert ask.inputs["endpointPublicAccessEnabled"] is False
    assert ask.inputs["newNatGateway"] is False
    assert ask.inputs["vpcId"] == mocks.one(VPC).id
    assert ask.inputs["vswitchIds"] == [mocks.one(VSWITCH).id]
    assert ask.inputs["serviceCidr"] == "172.21.0.0/20"
    assert ask.inputs["serviceDiscoveryTypes"] == ["CoreDNS"]
    # ECI pods have no public IPs: the NAT is how they pull public images.
    assert len(mocks.of_type(SNAT)) == 1
    assert mocks.of_type(NODE_POOL) == []
    assert out["kubeconfig"].secret is True
    assert server_of(out["kubeconfig"].value) == MOCK_INTRANET_API
    (credential,) = mocks.calls_to("alicloud:cs/getClusterCredential:getClusterCredential")
    assert "temporaryDurationMinutes" not in credential
    assert out["cluster_id"].value == ask.id


def test_the_ask_endpoint_is_read_from_the_cluster_by_its_id_not_listed() -> None:
    """DescribeClusters (the serverless list) is being switched off, and the list that stays
    (cs.get_clusters, DescribeClustersForRegion) has no endpoint: the cluster is read by its id
    (ManagedKubernetes, which manages ACK Serverless clusters too), whose `connections` carry
    the VPC endpoint (TF: from DescribeClusterDetail's master_url)."""
    mocks, out = deploy(build_ask(stack("ask-eci")))
    (read,) = mocks.of_type(ACK)
    assert read.existing_id == mocks.one(ASK).id
    assert not [token for token, _ in mocks.calls if "KubernetesClusters" in token]
    assert server_of(out["kubeconfig"].value) == MOCK_INTRANET_API


@dataclass
class NoEndpointCloud(PlausibleCloud):
    """A cluster whose read reports no connection at all (the answer is known, and empty)."""

    def outputs(self, type_token: str, resource_id: str, inputs: Mapping[str, Any]) -> dict:
        found = super().outputs(type_token, resource_id, inputs)
        return {**found, "connections": []} if type_token == ACK else found


def test_an_ask_cluster_reporting_no_endpoint_stops_with_a_message_not_an_index_error() -> None:
    mocks = CloudMocks(cloud=NoEndpointCloud(strict=True))
    message = r"has risen: the cluster reports no intranet API server endpoint$"
    with pytest.raises(Exception, match=message) as raised:
        deploy(build_ask(stack("ask-eci")), mocks=mocks)
    assert not isinstance(raised.value, IndexError)


def test_ask_api_server_is_public_only_when_configured() -> None:
    mocks, _ = deploy(build_ask(stack("ask-eci", cluster={"publicApiServer": True})))

    assert mocks.one(ASK).inputs["endpointPublicAccessEnabled"] is True


# --- NAS ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("network", "vswitch_cidr"),
    [
        ({}, "192.168.0.0/20"),
        ({"vpcCidr": "10.0.0.0/8", "vswitchCidr": "10.1.0.0/20"}, "10.1.0.0/20"),
        (
            {"vpcId": "vpc-existing", "vpcCidr": "172.16.0.0/12", "vswitchCidr": "172.16.0.0/20"},
            "172.16.0.0/20",
        ),
        (
            {"vpcId": "vpc-existing", "vpcCidr": "172.16.0.0/12", "vswitchId": "vsw-existing"},
            EXISTING_VSWITCHES["vsw-existing"],
        ),
    ],
)
def test_nas_access_rule_admits_only_the_cluster_vswitch(network: dict, vswitch_cidr: str) -> None:
    mocks, out = deploy(build_nas(stack("ack-gpu", network=network)))

    group, rule = mocks.one(ACCESS_GROUP), mocks.one(ACCESS_RULE)
    assert group.inputs["accessGroupType"] == "Vpc"
    assert rule.inputs["accessGroupName"] == group.inputs["accessGroupName"]
    # Not the VPC: only the addresses that mount (nodes, ECI pods) are admitted.
    assert rule.inputs["sourceCidrIp"] == vswitch_cidr == out["vswitch_cidr"].value
    assert rule.inputs["sourceCidrIp"] != out["vpc_cidr"].value
    assert rule.inputs["rwAccessType"] == "RDWR"
    # The CSI node plugin mounts, creates and chmods the PV's sub-directory as root.
    assert rule.inputs["userAccessType"] == "no_squash"


def test_nas_admits_each_given_client_cidr_with_one_rule() -> None:
    config = stack("ask-eci")

    def build() -> dict[str, pulumi.Output[Any]]:
        network = Network("tft", config.network)
        NasStorage("tft", config.storage, network, ["192.168.0.0/20", "192.168.16.0/20"])
        return {}

    mocks, _ = deploy(build)
    rules = mocks.of_type(ACCESS_RULE)
    # A rule's name is its URN: the first keeps the name it had when it was the only one.
    assert {rule.name: rule.inputs["sourceCidrIp"] for rule in rules} == {
        "tft-access-rule": "192.168.0.0/20",
        "tft-access-rule-1": "192.168.16.0/20",
    }
    # NAS: priority 1..100, 1 the highest (the provider's AccessRule docs).
    assert [rule.inputs["priority"] for rule in rules] == [1, 1]


def retained_children(config: StackConfig) -> dict[str, bool | None]:
    """retain_on_delete of every NAS child, by type token, as the engine would receive it."""
    seen: dict[str, bool | None] = {}

    def capture(args: pulumi.ResourceTransformationArgs) -> None:
        seen[args.type_] = args.opts.retain_on_delete

    def build() -> dict[str, pulumi.Output[Any]]:
        network = Network("tft", config.network)
        opts = pulumi.ResourceOptions(transformations=[capture])
        NasStorage("tft", config.storage, network, opts=opts)
        return {}

    deploy(build)
    return seen


def test_destroy_keeps_the_nas_file_system_by_default() -> None:
    seen = retained_children(stack("ack-gpu"))

    assert seen[FILE_SYSTEM] is True
    # The rest holds no data and must go, or the VPC and vSwitch could not be deleted.
    for token in (ACCESS_GROUP, ACCESS_RULE, MOUNT_TARGET):
        assert not seen[token]


def test_destroy_deletes_the_file_system_only_when_the_user_opts_out() -> None:
    seen = retained_children(stack("ack-gpu", storage={"retainOnDestroy": False}))

    assert seen[FILE_SYSTEM] is False


def test_nas_file_system_and_mount_target_in_the_stack_vswitch() -> None:
    mocks, out = deploy(build_nas(stack("ack-gpu")))

    file_system, mount_target = mocks.one(FILE_SYSTEM), mocks.one(MOUNT_TARGET)
    assert file_system.inputs["protocolType"] == "NFS"
    assert file_system.inputs["storageType"] == "Performance"
    assert file_system.inputs["encryptType"] == 1
    assert file_system.inputs["zoneId"] == "cn-hangzhou-i"
    assert mount_target.inputs["fileSystemId"] == file_system.id
    group_name = mocks.one(ACCESS_GROUP).inputs["accessGroupName"]
    assert mount_target.inputs["accessGroupName"] == group_name
    assert mount_target.inputs["vpcId"] == out["vpc_id"].value
    assert mount_target.inputs["vswitchId"] == out["vswitch_id"].value
    # CreateMountTarget's NetworkType: Vpc (the other, Classic, is the classic network's).
    assert mount_target.inputs["networkType"] == "Vpc"
    # The group and its rule name the file system's type (standard | extreme): one of another
    # type applies to nothing.
    parts = (FILE_SYSTEM, ACCESS_GROUP, ACCESS_RULE)
    assert [mocks.one(part).inputs["fileSystemType"] for part in parts] == ["standard"] * 3
    assert out["file_system_id"].value == file_system.id
    assert out["mount_target_domain"].value.endswith(".cn-hangzhou.nas.aliyuncs.com")


def test_nas_storage_type_follows_the_config() -> None:
    mocks, _ = deploy(build_nas(stack("ack-gpu", storage={"nasStorageType": "Capacity"})))

    assert mocks.one(FILE_SYSTEM).inputs["storageType"] == "Capacity"


KEPT_FILE_SYSTEM = "31a8e48eda"  # a General-purpose NAS id, as a destroyed stack left it


def test_a_kept_file_system_is_mounted_never_created_nor_owned() -> None:
    config = stack("ack-gpu", storage={"fileSystemId": KEPT_FILE_SYSTEM})
    mocks, out = deploy(build_nas(config))

    # Not registered at all: no destroy, replace or retention policy of the stack can reach it.
    assert mocks.of_type(FILE_SYSTEM) == []
    mount_target = mocks.one(MOUNT_TARGET)
    assert mount_target.inputs["fileSystemId"] == KEPT_FILE_SYSTEM
    assert mount_target.inputs["vswitchId"] == out["vswitch_id"].value
    assert (
        mount_target.inputs["accessGroupName"] == mocks.one(ACCESS_GROUP).inputs["accessGroupName"]
    )
    assert mocks.one(ACCESS_RULE).inputs["sourceCidrIp"] == out["vswitch_cidr"].value
    assert out["file_system_id"].value == KEPT_FILE_SYSTEM
    assert out["mount_target_domain"].value.startswith(f"{KEPT_FILE_SYSTEM}-")


def test_a_stack_re_attaching_a_file_system_exports_its_id_and_skips_the_nas_stock_check() -> None:
    raw = read_stack_file(stack_file("ack-cpu"))
    recorded = run_program(merged(raw, {"storage": {"fileSystemId": KEPT_FILE_SYSTEM}}))

    assert recorded.of_type(FILE_SYSTEM) == []
    (mount_target,) = recorded.of_type(MOUNT_TARGET)
    assert mount_target.inputs["fileSystemId"] == KEPT_FILE_SYSTEM
    assert recorded.outputs["nasFileSystemId"] == KEPT_FILE_SYSTEM
    assert not [token for token, _ in recorded.calls if token == "alicloud:nas/getZones:getZones"]


def test_nas_storage_refuses_other_storage_kinds() -> None:
    config = stack("ack-gpu", storage={"kind": "nfs", "nfsServer": "10.0.0.5"})

    def build() -> dict[str, pulumi.Output[Any]]:
        NasStorage("tft", config.storage, Network("tft", config.network))
        return {}

    with pytest.raises(ValueError, match=r"storage\.kind nas"):
        deploy(build)


# --- TensorBoard load balancer allow-list -------------------------------------------------


def test_load_balancer_acl_holds_exactly_the_allowed_ranges() -> None:
    cidrs = ["203.0.113.0/24", "198.51.100.7/32"]
    mocks, out = deploy(lambda: {"acl_id": LoadBalancerAcl("tensorboard", cidrs).acl_id})

    acl = mocks.one(SLB_ACL)
    assert acl.inputs["ipVersion"] == "ipv4"
    assert acl.inputs["name"] == "tftrain-test-tensorboard"
    entries = mocks.of_type(SLB_ACL_ENTRY)
    assert sorted(entry.inputs["entry"] for entry in entries) == sorted(cidrs)
    assert {entry.inputs["aclId"] for entry in entries} == {acl.id} == {out["acl_id"].value}
    # An entry's name is its URN: the same ranges keep the same entries on the next `up`.
    assert sorted(entry.name for entry in entries) == [
        "tensorboard-entry-198.51.100.7-32",
        "tensorboard-entry-203.0.113.0-24",
    ]
    # The deprecated in-resource entry list is not used.
    assert "entryLists" not in acl.inputs


def test_load_balancer_acl_refuses_an_empty_list_which_would_admit_everyone() -> None:
    with pytest.raises(ValueError, match=r"^LoadBalancerAcl needs at least one CIDR$"):
        deploy(lambda: {"acl_id": LoadBalancerAcl("tensorboard", []).acl_id})


# --- The whole cloud layer ---------------------------------------------------------------


@pytest.mark.parametrize("stack_name", ["ack-gpu", "ack-cpu", "ask-eci"])
def test_all_components_together_have_unique_resource_names(stack_name: str) -> None:
    config = stack(stack_name)

    def build() -> dict[str, pulumi.Output[Any]]:
        # The program may give every component the same name; their children must not clash.
        network = Network("tftrain", config.network, pod_vswitch=needs_pod_vswitch(config.cluster))
        if config.cluster.kind == "ack":
            cluster: AckCluster | AskCluster = AckCluster(
                "tftrain", config.cluster, network, uses_gpu=config.uses_gpu
            )
        else:
            cluster = AskCluster("tftrain", config.cluster, network)
        storage = NasStorage("tftrain", config.storage, network)
        return {"kubeconfig": cluster.kubeconfig, "domain": storage.mount_target_domain}

    mocks, out = deploy(build)

    # What the stack creates: not what it reads by id (the ASK cluster's endpoint).
    cloud = [r for r in mocks.resources if r.type.startswith("alicloud:") and not r.existing_id]
    names = [r.name for r in cloud]
    assert len(names) == len(set(names)), sorted(names)
    components = {r.type for r in mocks.resources if r.type.startswith("tftrain:cloud:")}
    cluster_component = "AckCluster" if config.cluster.kind == "ack" else "AskCluster"
    assert components == {
        "tftrain:cloud:Network",
        "tftrain:cloud:NasStorage",
        f"tftrain:cloud:{cluster_component}",
    }
    assert out["kubeconfig"].secret is True
    # Everything taggable carries the stack's tags, so it can be found and costed.
    for resource in cloud:
        if "tags" in resource.inputs:
            assert resource.inputs["tags"]["app"] == "tftrain"
    assert all(
        "tags" in r.inputs for r in cloud if r.type in (VPC, VSWITCH, NAT, EIP, ACK, ASK, NODE_POOL)
    )


def test_cloud_side_names_carry_project_and_stack_so_stacks_can_share_an_account() -> None:
    config = stack("ack-gpu")

    def build() -> dict[str, pulumi.Output[Any]]:
        network = Network("network", config.network, pod_vswitch=True)
        AckCluster("cluster", config.cluster, network, uses_gpu=True)
        NasStorage("nas", config.storage, network)
        return {}

    # Stack names may hold characters cloud names may not.
    mocks, _ = deploy(build, stack_name="team_a.gpu")

    assert mocks.one(VPC).inputs["vpcName"] == "tftrain-team-a-gpu-network"
    assert mocks.one(NAT).inputs["natGatewayName"] == "tftrain-team-a-gpu-network"
    assert mocks.one(EIP).inputs["addressName"] == "tftrain-team-a-gpu-network-nat"
    snat_names = sorted(snat.inputs["snatEntryName"] for snat in mocks.of_type(SNAT))
    assert snat_names == ["tftrain-team-a-gpu-network-pods", "tftrain-team-a-gpu-network-vswitch"]
    # What the console shows next to them: whose egress they are.
    assert mocks.one(NAT).inputs["description"] == "tftrain egress of network"
    assert mocks.one(EIP).inputs["description"] == "tftrain NAT egress address of network"
    assert mocks.one(ACK).inputs["name"] == "tftrain-team-a-gpu-cluster"
    assert mocks.one(ACCESS_GROUP).inputs["accessGroupName"] == "tftrain-team-a-gpu-nas"
    assert mocks.one(ACK).inputs["tags"]["pulumi-stack"] == "team_a.gpu"


def test_configured_cluster_name_wins_and_long_names_are_cut_to_63() -> None:
    config = stack("ask-eci", cluster={"name": "mnist-ask"})

    def build() -> dict[str, pulumi.Output[Any]]:
        network = Network("n" * 80, config.network)
        AskCluster("cluster", config.cluster, network)
        return {}

    mocks, _ = deploy(build)

    assert mocks.one(ASK).inputs["name"] == "mnist-ask"
    vpc_name = mocks.one(VPC).inputs["vpcName"]
    assert len(vpc_name) == 63
    assert vpc_name.startswith("tftrain-test-nnn")


# --- Against the installed provider SDK --------------------------------------------------
# The SDK is generated from the provider schema: a deprecated argument is logged as
# "<name> is deprecated:" and documented as such; a creation-only one is documented with
# "Only works for **Create** Operation" (or "cannot be modified"). Mocks accept both silently;
# `infra.render.provider_sdk` reads the docstrings, for these tests and the render's summary.


# The Terraform provider's documentation can deprecate a resource or data source without a
# schema flag (so nothing is logged): the SDK's docstring for it then opens with this notice.
_DEPRECATION_NOTICE = re.compile(r'"""\s*> \*\*(?:DEPRECATED|DEPRECATION NOTICE):\*\*')


def _member_is_deprecated(source: str, token: str) -> bool:
    """Whether the installed SDK marks the resource or function of `token` deprecated."""
    member = token.rsplit(":", 1)[1]  # a class (NodePool) or a function (getEips)
    flagged = (
        resource_is_deprecated(source, member)
        # A deprecated function's module warns on import and its body logs the deprecation.
        or bool(re.search(r"^warnings\.warn\(", source, re.MULTILINE))
        or f'pulumi.log.warn("""{snake(member)} is deprecated:' in source
    )
    return flagged or bool(_DEPRECATION_NOTICE.search(source))


# Deprecated in the installed provider and used knowingly; each entry says why. Only the
# resource's or function's own deprecation is excused: its deprecated arguments still fail.
KNOWN_DEPRECATIONS: dict[str, str] = {
    "alicloud:cs/serverlessKubernetes:ServerlessKubernetes": (
        "docs-only deprecation since provider 1.276.0 in favour of cs.ManagedKubernetes with "
        "profile Serverless; moving ask there replaces every running ASK cluster (another "
        "resource type, and profile is ForceNew) and its ASK arguments are not verified yet: "
        "docs/cloud-evidence.md, open follow-up"
    ),
}


def _problems_with_deprecations(recorded: Any) -> list[str]:
    problems = []
    for resource in recorded.resources:
        if not resource.type.startswith("alicloud:"):
            continue
        source = sdk_source(resource.type)
        deprecated = _member_is_deprecated(source, resource.type)
        if deprecated and resource.type not in KNOWN_DEPRECATIONS:
            problems.append(f"{resource.name}: {resource.type} is deprecated")
        used = {snake(key) for key in resource.inputs}
        problems += [
            f"{resource.name}: argument {name} is deprecated"
            for name in sorted(used & deprecated_arguments(source))
        ]
    for token, arguments in recorded.calls:
        if not token.startswith("alicloud:"):
            continue
        source = sdk_source(token)
        if _member_is_deprecated(source, token) and token not in KNOWN_DEPRECATIONS:
            problems.append(f"{token} is deprecated")
        used = {snake(key) for key, value in arguments.items() if value is not None}
        problems += [
            f"{token}: argument {name} is deprecated"
            for name in sorted(used & deprecated_arguments(source))
        ]
    return problems


@pytest.mark.parametrize("stack_name", all_stacks())
def test_no_argument_the_installed_provider_marks_deprecated(stack_name: str) -> None:
    assert _problems_with_deprecations(run_program(stack_name)) == []


def test_the_deprecation_check_reports_a_planted_deprecated_argument(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The check above would pass vacuously if it could not see a deprecated argument: plant
    one the 4.x provider really deprecates (the ACK control-plane vSwitches' old name)."""
    cluster_module = importlib.import_module("infra.cloud.cluster")
    real = cluster_module.cs.ManagedKubernetes

    def with_old_vswitch_argument(*args: Any, **kwargs: Any) -> Any:
        return real(*args, worker_vswitch_ids=kwargs["vswitch_ids"], **kwargs)

    monkeypatch.setattr(cluster_module.cs, "ManagedKubernetes", with_old_vswitch_argument)
    problems = _problems_with_deprecations(run_program("ack-gpu"))

    assert problems == ["cluster-ack: argument worker_vswitch_ids is deprecated"]


@pytest.mark.parametrize(
    ("module", "function", "token"),
    [
        # Deprecated in the provider schema: the module warns, the function logs.
        ("ecs", "get_eips_output", "alicloud:ecs/getEips:getEips"),
        # Deprecated in the provider's docs only, like the allowed ASK cluster list.
        (
            "cs",
            "get_managed_kubernetes_clusters_output",
            "alicloud:cs/getManagedKubernetesClusters:getManagedKubernetesClusters",
        ),
    ],
)
def test_the_deprecation_check_reports_a_planted_deprecated_data_source(
    monkeypatch: pytest.MonkeyPatch, module: str, function: str, token: str
) -> None:
    cluster_module = importlib.import_module("infra.cloud.cluster")
    deprecated = getattr(importlib.import_module(f"pulumi_alicloud.{module}"), function)
    real = cluster_module.ramsdk.get_roles_output

    def roles_and_a_deprecated_lookup(**kwargs: Any) -> Any:
        deprecated(opts=kwargs.get("opts"))
        return real(**kwargs)

    monkeypatch.setattr(cluster_module.ramsdk, "get_roles_output", roles_and_a_deprecated_lookup)
    problems = _problems_with_deprecations(run_program("ack-gpu"))

    assert problems == [f"{token} is deprecated"]


def test_every_known_deprecation_is_still_deprecated_and_still_used() -> None:
    """An allow-list entry the program no longer needs, or that a provider upgrade undid,
    must go, so the list never excuses more than the program does today."""
    used: set[str] = set()
    for stack_name in all_stacks():
        recorded = run_program(stack_name)
        used |= {resource.type for resource in recorded.resources}
        used |= {token for token, _ in recorded.calls}
    for token, reason in KNOWN_DEPRECATIONS.items():
        assert token in used, f"{token} is no longer used: remove it ({reason})"
        assert _member_is_deprecated(sdk_source(token), token), f"{token} is not deprecated"


# Edits users make to a running stack (README: tune, upgrade, resize, open the API server).
USER_EDITS: dict[str, dict[str, Any]] = {
    "ack-gpu": {
        "cluster": {
            "kubernetesVersion": "1.35.1-aliyun.1",
            "publicApiServer": True,
            "gpuPool": {"maxSize": 8, "instanceTypes": ["ecs.gn7i-c8g1.2xlarge"]},
            "cpuPool": {"size": 4, "diskSize": 200},
        },
        "storage": {"size": "50Gi"},
    },
    "ask-eci": {
        "cluster": {"kubernetesVersion": "1.35.1-aliyun.1", "publicApiServer": True},
        "storage": {"size": "50Gi"},
    },
}


@pytest.mark.parametrize("stack_name", sorted(USER_EDITS))
def test_fields_users_change_are_updatable_or_kept_from_creation(stack_name: str) -> None:
    """A changed creation-only argument would be silently ignored or replace the resource
    (with its data); each must be in ignore_changes, where the program checks it instead."""
    before = {r.name: r for r in run_program(stack_name).resources}
    raw = read_stack_file(stack_file(stack_name))
    after = run_program(merged(raw, USER_EDITS[stack_name])).resources

    problems = []
    for resource in after:
        old = before.get(resource.name)
        if old is None or not resource.type.startswith("alicloud:"):
            continue
        docs = argument_docs(sdk_source(resource.type))
        changed = {
            key
            for key in resource.inputs.keys() | old.inputs.keys()
            if resource.inputs.get(key) != old.inputs.get(key)
        }
        problems += [
            f"{resource.name}.{key}: creation-only, changed, not in ignore_changes"
            for key in sorted(changed)
            if CREATE_ONLY.search(docs.get(snake(key), "")) and key not in resource.ignore_changes
        ]
    assert problems == []
