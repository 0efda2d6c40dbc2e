"""Before anything is billed: the zone the stack builds in sells what the stack will ask for.

A pool whose instance type is sold out in `network.zoneId`, or a NAS storage type the zone
does not offer, fails with NoStock / InvalidZone after the VPC, NAT, EIP and often the
cluster exist (~20 minutes, billed). Two blocking lookups, made before the first resource
registers (as `kubernetes_version.require_offered_version` is), refuse such a stack at once:

- `ecs.get_instance_types(instance_type=...)` (through `infra.cloud.lookup`): ECS
  DescribeAvailableResource over the region, sold-out zones left out (the provider skips
  `SoldOut` entries), then the type's `availability_zones`. Asked without
  `availability_zone`, so a miss can name the zones that do sell it. A pool is refused only
  when none of its types is on sale there (the autoscaler picks among them); a sold-out one
  among others is a warning.
- `nas.get_zones(file_system_type="standard")`: NAS DescribeZones, each zone with the
  (storage type, protocol) pairs it offers.

An unknown result (`None` below) is the offline render's answer (it asks no cloud): nothing
is checked and the render shows the lookups. Any answer from a provider is a list, and an
empty one cannot confirm the offer: refused, never skipped (`infra.cloud.lookup`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pulumi

from infra.cloud.lookup import listed
from infra.cloud.nas import FILE_SYSTEM_TYPE
from infra.config import PROJECT, StackConfig

GET_INSTANCE_TYPES = "alicloud:ecs/getInstanceTypes:getInstanceTypes"
GET_NAS_ZONES = "alicloud:nas/getZones:getZones"


def pools_in_use(config: StackConfig) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(key, instance types) of every ACK node pool the stack creates."""
    cluster = config.cluster
    if cluster.kind != "ack":
        return
    yield "cluster.cpuPool.instanceTypes", cluster.cpu_pool.instance_types
    gpu = cluster.gpu_pool
    if gpu.size or gpu.max_size or cluster.spot_gpu_pool.max_size:
        yield "cluster.gpuPool.instanceTypes", gpu.instance_types


def selling_zones(instance_type: str, found: Sequence[Mapping[str, Any]]) -> list[str]:
    """The zones `found` (the lookup's `instance_types`) sells `instance_type` in."""
    return sorted(
        {z for entry in found if entry.get("id") == instance_type
         for z in entry.get("availabilityZones") or ()}
    )  # fmt: skip


def check_instance_types(
    key: str, zone: str, found: Mapping[str, Sequence[Mapping[str, Any]] | None]
) -> list[str]:
    """Refuse a pool none of whose types (`found`: each type's lookup) is on sale in `zone`;
    otherwise the types that are not (the autoscaler uses the others, so only a warning)."""
    if any(answer is None for answer in found.values()):
        return []  # the offline render: no cloud was asked
    zones = {name: selling_zones(name, answer or ()) for name, answer in found.items()}
    missing = [name for name, sold_in in zones.items() if zone not in sold_in]
    if len(missing) < len(zones):
        return missing
    elsewhere = sorted({z for sold_in in zones.values() for z in sold_in})
    where = f"sold in: {', '.join(elsewhere)}" if elsewhere else "ECS lists no zone here selling it"
    named = (
        f"{missing[0]} is not on sale"
        if len(missing) == 1
        else f"none of {', '.join(missing)} is on sale"
    )
    raise pulumi.RunError(
        f"{PROJECT}:{key}: {named} in {PROJECT}:network.zoneId {zone} "
        f"(sold out or not offered there); {where}. Pick another instance type, or a zone "
        "that sells it (a new zone replaces the vSwitch, cluster and NAS)"
    )


def check_nas_storage(
    storage_type: str, zone: str, zones: Sequence[Mapping[str, Any]] | None
) -> None:
    """Refuse unless `zones` (the NAS lookup's) offers `storage_type` NFS in `zone`."""
    if zones is None:
        return
    offering = sorted(  # an answer without a zone id names no zone to offer or to list
        {zone_id for z in zones
         if (zone_id := z.get("zoneId"))
         and any(str(t.get("storageType", "")).lower() == storage_type.lower()
                and str(t.get("protocolType", "")).upper() == "NFS"
                for t in z.get("instanceTypes") or ())}
    )  # fmt: skip
    if zone in offering:
        return
    where = f"zones that do: {', '.join(offering)}" if offering else "NAS lists no zone that does"
    raise pulumi.RunError(
        f"{PROJECT}:storage.nasStorageType = {storage_type!r}: NAS offers no {storage_type} NFS "
        f"file systems in {PROJECT}:network.zoneId {zone}; {where}. Use the other storage "
        "type, or a zone that offers it"
    )


def require_zone_offers(config: StackConfig) -> None:
    """Stop the program when `network.zoneId` does not sell the stack's node or NAS types.

    With `network.vswitchId` the zone is the vSwitch's, read later from the cloud: nothing
    is checked here (that vSwitch's zone already holds the user's other resources).
    """
    network = config.network
    if network.vswitch_id or not network.zone_id:
        return
    for key, instance_types in pools_in_use(config):
        found = {
            name: listed(GET_INSTANCE_TYPES, {"instanceType": name}, "instanceTypes")
            for name in instance_types
        }
        sold_out = check_instance_types(key, network.zone_id, found)
        if sold_out:
            pulumi.log.warn(
                f"{PROJECT}:{key}: {', '.join(sold_out)} not on sale in {PROJECT}:network.zoneId "
                f"{network.zone_id}; the pool's other instance types are, and its nodes will be "
                "of those"
            )
    # A re-attached file system (storage.fileSystemId) exists already: nothing to buy.
    if config.storage.kind == "nas" and not config.storage.file_system_id:
        zones = listed(GET_NAS_ZONES, {"fileSystemType": FILE_SYSTEM_TYPE}, "zones")
        check_nas_storage(config.storage.nas_storage_type, network.zone_id, zones)
