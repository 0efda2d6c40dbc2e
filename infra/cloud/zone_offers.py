"""Before anything is billed: the zone the stack builds in sells what the stack will ask for.

A pool whose instance type is sold out in `network.zoneId`, or a NAS storage type the zone
does not offer, fails with NoStock / InvalidZone after the VPC, NAT, EIP and often the
cluster exist (~20 minutes, billed). Two blocking lookups, made before the first resource
registers (as `kubernetes_version.require_offered_version` is), refuse such a stack at once:

- `ecs.get_instance_types(instance_type=...)` (its token, invoked directly as
  `oss.require_usable_bucket` does: the typed wrapper cannot return the offline render's
  unknown result): ECS DescribeAvailableResource over the region,
  sold-out zones left out (the provider skips `SoldOut` entries), then the type's
  `availability_zones`. Asked without `availability_zone`, so a miss can name the zones that
  do sell it.
- `nas.get_zones(file_system_type="standard")`: NAS DescribeZones, each zone with the
  (storage type, protocol) pairs it offers.

An unknown result (`None` below) is the offline render's answer (it asks no cloud): nothing
is checked and the render shows the lookups. Any answer from a provider is a list, and an
empty one cannot confirm the offer: refused, never skipped.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pulumi

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


def check_instance_type(
    key: str, instance_type: str, zone: str, found: Sequence[Mapping[str, Any]] | None
) -> None:
    """Refuse unless `found` (the lookup's `instance_types`) sells `instance_type` in `zone`."""
    if found is None:
        return
    zones = sorted(
        {z for entry in found if entry.get("id") == instance_type
         for z in entry.get("availabilityZones") or ()}
    )  # fmt: skip
    if zone in zones:
        return
    where = f"sold in: {', '.join(zones)}" if zones else "ECS lists no zone here selling it"
    raise pulumi.RunError(
        f"{PROJECT}:{key}: {instance_type} is not on sale in {PROJECT}:network.zoneId {zone} "
        f"(sold out or not offered there); {where}. Pick another instance type, or a zone "
        "that sells it (a new zone replaces the vSwitch, cluster and NAS)"
    )


def check_nas_storage(
    storage_type: str, zone: str, zones: Sequence[Mapping[str, Any]] | None
) -> None:
    """Refuse unless `zones` (the NAS lookup's) offers `storage_type` NFS in `zone`."""
    if zones is None:
        return
    offering = sorted(
        {z.get("zoneId", "") for z in zones
         if any(str(t.get("storageType", "")).lower() == storage_type.lower()
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
        for instance_type in instance_types:
            found = _lookup(GET_INSTANCE_TYPES, {"instanceType": instance_type}, "instanceTypes")
            check_instance_type(key, instance_type, network.zone_id, found)
    # A re-attached file system (storage.fileSystemId) exists already: nothing to buy.
    if config.storage.kind == "nas" and not config.storage.file_system_id:
        zones = _lookup(GET_NAS_ZONES, {"fileSystemType": FILE_SYSTEM_TYPE}, "zones")
        check_nas_storage(config.storage.nas_storage_type, network.zone_id, zones)


def _lookup(token: str, args: dict[str, Any], field: str) -> list[Mapping[str, Any]] | None:
    """The lookup's list `field`; None only when the result is unknown (offline)."""
    result = pulumi.runtime.invoke(token, args, pulumi.InvokeOptions())
    if not result.is_known:
        return None
    return list((result.value or {}).get(field) or ())
