"""The zone preflight: `network.zoneId` must sell the pools' instance types and the NAS storage
type before anything is registered (infra/cloud/zone_offers.py), under the fake cloud."""

from __future__ import annotations

import inspect
from typing import Any

import pulumi
import pytest
from pulumi_alicloud.ecs import outputs as ecs_outputs
from pulumi_alicloud.nas import outputs as nas_outputs

from infra import mock_deploy
from infra.cloud.zone_offers import (
    GET_INSTANCE_TYPES,
    GET_NAS_ZONES,
    check_instance_types,
    check_nas_storage,
)
from infra.config import read_stack_file, stack_file
from tests.pulumi_mocks import (
    MOCK_NAS_ZONES,
    MOCK_TYPE_ZONES,
    PlausibleCloud,
    Recorded,
    stack_config_map,
)

TYPES, NAS_ZONES = GET_INSTANCE_TYPES, GET_NAS_ZONES


def run(stack: str | dict[str, Any], cloud: PlausibleCloud | None = None) -> Recorded:
    config, name = stack_config_map(stack)
    return mock_deploy.run_program(
        config, stack=name, secret_keys=[], answers=cloud or PlausibleCloud(), raise_errors=False
    )


def calls(run: Recorded, token: str) -> list[dict[str, Any]]:
    return [args for called, args in run.calls if called == token]


def with_zone(stack: str, zone: str, **storage: str) -> dict[str, Any]:
    raw = read_stack_file(stack_file(stack))
    raw["network"] = {**raw["network"], "zoneId": zone}
    raw["storage"] = {**raw["storage"], **storage}
    return raw


def test_each_pool_type_and_the_nas_type_are_looked_up_and_found() -> None:
    recorded = run("ack-gpu")
    assert recorded.error is None
    asked = sorted(args["instanceType"] for args in calls(recorded, TYPES))
    assert asked == ["ecs.g7.xlarge", "ecs.gn6i-c4g1.xlarge"]
    # Asked region-wide (no availabilityZone), so a miss can name the zones that sell it.
    assert all("availabilityZone" not in args for args in calls(recorded, TYPES))
    assert calls(recorded, NAS_ZONES) == [{"fileSystemType": "standard"}]


def test_a_gpu_type_sold_out_in_the_zone_stops_before_anything_is_registered() -> None:
    sold_out = {**MOCK_TYPE_ZONES, "ecs.gn6i-c4g1.xlarge": ("cn-hangzhou-h", "cn-hangzhou-j")}
    recorded = run("ack-gpu", PlausibleCloud(type_zones=sold_out))
    assert isinstance(recorded.error, pulumi.RunError)
    message = str(recorded.error)
    assert (
        "tftrain:cluster.gpuPool.instanceTypes: ecs.gn6i-c4g1.xlarge is not on sale in "
        "tftrain:network.zoneId cn-hangzhou-i" in message
    )
    assert "sold in: cn-hangzhou-h, cn-hangzhou-j" in message
    assert "\n" not in message
    assert recorded.resources == []


def test_a_type_sold_nowhere_is_refused_not_skipped() -> None:
    # An empty answer cannot confirm the offer: refused.
    recorded = run("ack-cpu", PlausibleCloud(type_zones={}))
    assert "tftrain:cluster.cpuPool.instanceTypes: ecs.g7.2xlarge is not on sale" in str(
        recorded.error
    )
    assert "ECS lists no zone here selling it" in str(recorded.error)
    assert recorded.resources == []


def test_capacity_nas_in_a_zone_without_it_is_refused() -> None:
    recorded = run(with_zone("ack-cpu", "cn-hangzhou-h", nasStorageType="Capacity"))
    assert (
        "tftrain:storage.nasStorageType = 'Capacity': NAS offers no Capacity NFS file systems "
        "in tftrain:network.zoneId cn-hangzhou-h; zones that do: cn-hangzhou-i, cn-hangzhou-j, "
        "cn-hangzhou-k" in str(recorded.error)
    )
    assert recorded.resources == []


def test_performance_nas_in_that_zone_is_fine() -> None:
    assert "cn-hangzhou-h" in MOCK_NAS_ZONES
    assert run(with_zone("ack-cpu", "cn-hangzhou-h")).error is None


def test_ask_checks_the_nas_only() -> None:
    recorded = run("ask-eci")
    assert recorded.error is None
    assert calls(recorded, TYPES) == []
    assert len(calls(recorded, NAS_ZONES)) == 1
    assert "no zone" in str(run("ask-eci", PlausibleCloud(nas_zones={})).error)


@pytest.mark.parametrize("zone", [{}, {"zoneId": "cn-hangzhou-k"}])
def test_an_existing_vswitch_brings_its_zone_and_is_not_checked(zone: dict[str, str]) -> None:
    # A zoneId beside the vSwitch is not the zone anything is bought in: the vSwitch's is.
    raw = read_stack_file(stack_file("ack-cpu"))
    raw["network"] = {
        "vpcId": "vpc-existing",
        "vswitchId": "vsw-existing",
        "vpcCidr": "172.16.0.0/12",  # the mock cloud's vSwitch is 172.16.8.0/21
        "podVswitchCidr": "172.20.0.0/18",
        "serviceCidr": "10.96.0.0/20",
        **zone,
    }
    recorded = run(raw, PlausibleCloud(type_zones={}, nas_zones={}))
    assert recorded.error is None
    assert recorded.of_type("alicloud:cs/nodePool:NodePool")
    assert calls(recorded, TYPES) == calls(recorded, NAS_ZONES) == []


def test_the_offline_render_s_answer_checks_nothing() -> None:
    # None: no cloud was asked (a provider always answers a list).
    check_instance_types("cluster.cpuPool.instanceTypes", "cn-hangzhou-i", {"ecs.g7.xlarge": None})
    check_nas_storage("Performance", "cn-hangzhou-i", None)


def test_the_tokens_and_arguments_are_the_sdk_s() -> None:
    # Invoked directly (the typed wrappers cannot return the render's unknown result), so the
    # token and argument names are checked against the installed SDK's own wrappers.
    from pulumi_alicloud.ecs import get_instance_types
    from pulumi_alicloud.nas import get_zones

    ecs_source = inspect.getsource(get_instance_types)
    nas_source = inspect.getsource(get_zones)
    assert f"'{GET_INSTANCE_TYPES}'" in ecs_source
    assert "__args__['instanceType'] = instance_type" in ecs_source
    assert f"'{GET_NAS_ZONES}'" in nas_source
    assert "__args__['fileSystemType'] = file_system_type" in nas_source
    # The result fields read: instanceTypes[].id/availabilityZones, zones[].zoneId/instanceTypes.
    assert '@pulumi.getter(name="availabilityZones")' in inspect.getsource(ecs_outputs)
    assert '@pulumi.getter(name="storageType")' in inspect.getsource(nas_outputs)


# NAS DescribeZones answers, written by hand in the shape pulumi-alicloud's nas.get_zones
# returns (zones[].zoneId, zones[].instanceTypes[].storageType / protocolType).
SMB_ONLY_IN_H = [
    {
        "zoneId": "cn-hangzhou-h",
        "instanceTypes": [{"storageType": "Performance", "protocolType": "SMB"}],
    },
    {
        "zoneId": "cn-hangzhou-i",
        "instanceTypes": [
            {"storageType": "Performance", "protocolType": "NFS"},
            {"storageType": "Capacity", "protocolType": "nfs"},
        ],
    },
]


def test_a_zone_offering_the_storage_type_only_over_smb_is_refused() -> None:
    # The PersistentVolume mounts NFS: an SMB-only offer is no offer.
    with pytest.raises(pulumi.RunError) as raised:
        check_nas_storage("Performance", "cn-hangzhou-h", SMB_ONLY_IN_H)
    assert str(raised.value) == (
        "tftrain:storage.nasStorageType = 'Performance': NAS offers no Performance NFS file "
        "systems in tftrain:network.zoneId cn-hangzhou-h; zones that do: cn-hangzhou-i. Use the "
        "other storage type, or a zone that offers it"
    )


@pytest.mark.parametrize("storage_type", ["Performance", "performance", "Capacity"])
def test_an_nfs_offer_of_the_type_in_the_zone_passes(storage_type: str) -> None:
    # The provider's answers differ in case from the config's values: compared without it.
    check_nas_storage(storage_type, "cn-hangzhou-i", SMB_ONLY_IN_H)


def test_a_zone_offering_another_storage_type_is_refused() -> None:
    with pytest.raises(pulumi.RunError, match="zones that do: cn-hangzhou-i"):
        check_nas_storage("Capacity", "cn-hangzhou-h", SMB_ONLY_IN_H)


def test_an_offer_without_a_zone_id_is_neither_listed_nor_matched() -> None:
    nameless = [{"instanceTypes": [{"storageType": "Capacity", "protocolType": "NFS"}]}]
    with pytest.raises(pulumi.RunError) as raised:
        check_nas_storage("Capacity", "", [*nameless, *SMB_ONLY_IN_H])
    assert str(raised.value).endswith("zones that do: cn-hangzhou-i. Use the other storage "
                                      "type, or a zone that offers it")  # fmt: skip
    with pytest.raises(pulumi.RunError) as raised:
        check_nas_storage("Capacity", "cn-hangzhou-h", nameless)
    assert str(raised.value) == (
        "tftrain:storage.nasStorageType = 'Capacity': NAS offers no Capacity NFS file systems "
        "in tftrain:network.zoneId cn-hangzhou-h; NAS lists no zone that does. Use the other "
        "storage type, or a zone that offers it"
    )


def with_gpu_types(*types: str) -> dict[str, Any]:
    raw = read_stack_file(stack_file("ack-gpu"))
    raw["cluster"]["gpuPool"] = {**raw["cluster"]["gpuPool"], "instanceTypes": list(types)}
    return raw


def test_one_sold_out_type_among_several_is_not_a_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    # The autoscaler picks among a pool's types: gn6v sells in cn-hangzhou-i, gn6i not here.
    warned: list[object] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *_, **__: warned.append(message))
    sold_out = {**MOCK_TYPE_ZONES, "ecs.gn6i-c4g1.xlarge": ("cn-hangzhou-h",)}
    raw = with_gpu_types("ecs.gn6i-c4g1.xlarge", "ecs.gn6v-c8g1.2xlarge")
    raw["worker"] = {**raw["worker"], "cpu": "2", "memory": "8Gi"}
    recorded = run(raw, PlausibleCloud(type_zones=sold_out))
    assert recorded.error is None
    assert recorded.of_type("alicloud:cs/nodePool:NodePool")
    # The preview says which type the pool will not get.
    assert [w for w in warned if "gn6i" in str(w)] == [
        "tftrain:cluster.gpuPool.instanceTypes: ecs.gn6i-c4g1.xlarge not on sale in "
        "tftrain:network.zoneId cn-hangzhou-i; the pool's other instance types are, and its "
        "nodes will be of those"
    ]


def test_a_pool_none_of_whose_types_is_on_sale_is_refused() -> None:
    sold_out = {**MOCK_TYPE_ZONES, "ecs.gn6i-c4g1.xlarge": ("cn-hangzhou-h",),
                "ecs.gn6v-c8g1.2xlarge": ("cn-hangzhou-k",)}  # fmt: skip
    raw = with_gpu_types("ecs.gn6i-c4g1.xlarge", "ecs.gn6v-c8g1.2xlarge")
    recorded = run(raw, PlausibleCloud(type_zones=sold_out))
    assert str(recorded.error).startswith(
        "tftrain:cluster.gpuPool.instanceTypes: none of ecs.gn6i-c4g1.xlarge, "
        "ecs.gn6v-c8g1.2xlarge is on sale in tftrain:network.zoneId cn-hangzhou-i"
    )
    assert "sold in: cn-hangzhou-h, cn-hangzhou-k" in str(recorded.error)
    assert recorded.resources == []


def test_a_type_no_zone_sells_is_refused_in_full_words() -> None:
    # ECS's listing (DescribeAvailableResource, sold-out zones left out) names no zone at all.
    with pytest.raises(pulumi.RunError) as refused:
        check_instance_types(
            "cluster.gpuPool.instanceTypes", "cn-hangzhou-i", {"ecs.gn7i-c8g1.2xlarge": []}
        )
    assert str(refused.value) == (
        "tftrain:cluster.gpuPool.instanceTypes: ecs.gn7i-c8g1.2xlarge is not on sale in "
        "tftrain:network.zoneId cn-hangzhou-i (sold out or not offered there); ECS lists no "
        "zone here selling it. Pick another instance type, or a zone that sells it (a new "
        "zone replaces the vSwitch, cluster and NAS)"
    )


def test_every_sold_out_type_of_a_pool_is_named_in_one_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    warned: list[object] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *_, **__: warned.append(message))
    sold_out = {
        **MOCK_TYPE_ZONES,
        "ecs.gn6i-c4g1.xlarge": ("cn-hangzhou-h",),
        "ecs.gn7i-c8g1.2xlarge": ("cn-hangzhou-h",),
    }
    raw = with_gpu_types("ecs.gn6i-c4g1.xlarge", "ecs.gn7i-c8g1.2xlarge", "ecs.gn6v-c8g1.2xlarge")
    raw["worker"] = {**raw["worker"], "cpu": "2", "memory": "8Gi"}
    recorded = run(raw, PlausibleCloud(type_zones=sold_out))
    assert recorded.error is None
    assert [w for w in warned if "gpuPool" in str(w)] == [
        "tftrain:cluster.gpuPool.instanceTypes: ecs.gn6i-c4g1.xlarge, ecs.gn7i-c8g1.2xlarge not "
        "on sale in tftrain:network.zoneId cn-hangzhou-i; the pool's other instance types are, "
        "and its nodes will be of those"
    ]
