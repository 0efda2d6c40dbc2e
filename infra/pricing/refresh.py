"""`tftrain prices refresh`: today's prices from the user's own account, into a new table.

Alibaba's price APIs, called through its SDK packages with the caller's credentials
(`ALIBABA_CLOUD_ACCESS_KEY_ID` / `ALIBABA_CLOUD_ACCESS_KEY_SECRET`, or the `ALICLOUD_ACCESS_KEY`
/ `ALICLOUD_SECRET_KEY` the Pulumi provider reads):
- ECS `DescribePrice` (PriceUnit Hour): every ECS instance type the stacks name (node pools,
  ECI GPU specs) and every ECS row the table already has, in each stack's region;
- ECI `DescribeContainerGroupPrice`: the price of a pod per second is vCPUs x vCPU price +
  GiB x GiB price (its example: 2 vCPUs and 4 GiB cost 0.00012252 = 2 x 0.000049 + 4 x
  0.00000613), so two pods that differ only in memory (2 vCPU/4 GiB, 2 vCPU/8 GiB) give both.
The new table is written to a temporary file beside the old one and renamed over it (atomic
on POSIX): a failed or interrupted refresh leaves the old table whole. Rows the APIs do not
cover (NAT, OSS, NAS, read from billing pages) are kept with their own source and date.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from infra.config import ConfigError
from infra.config.instance_types import instance_shape
from infra.config.stack_file import read_stack
from infra.pricing.table import TABLE, PriceRow, PriceTableError, load_table, table_text

STACKS = Path(__file__).resolve().parents[2] / "stacks"
KEY_ENVS = (
    ("ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET"),
    ("ALICLOUD_ACCESS_KEY", "ALICLOUD_SECRET_KEY"),
)
# The two ECI pods whose prices give the vCPU and the GiB price (see the module docstring).
_ECI_PROBES = ((2, 4), (2, 8))


class RefreshError(Exception):
    """The refresh cannot run or an API refused it; the old table is untouched."""


@dataclass(frozen=True)
class Endpoints:
    """Where the APIs are: Alibaba's regional endpoints, or a fake in tests."""

    ecs: str = "ecs.{region}.aliyuncs.com"
    eci: str = "eci.{region}.aliyuncs.com"
    protocol: str = "https"


def credentials(env: dict[str, str]) -> tuple[str, str]:
    for key_id, secret in KEY_ENVS:
        if env.get(key_id) and env.get(secret):
            return env[key_id], env[secret]
    names = " and ".join(f"{a} / {b}" for a, b in KEY_ENVS)
    raise RefreshError(f"no Alibaba Cloud credentials in the environment: set {names}")


def wanted(stacks_dir: Path) -> dict[str, set[str]]:
    """{region: ECS instance types} named by the stack files (node pools, ECI GPU specs)."""
    found: dict[str, set[str]] = {}
    for path in sorted(stacks_dir.glob("Pulumi.*.yaml")):
        try:
            entries = read_stack(path).entries
        except ConfigError:
            continue  # the render names what is wrong with it
        region = entries.get("alicloud:region")
        cluster = entries.get("tftrain:cluster")
        if not isinstance(region, str) or not isinstance(cluster, dict):
            continue
        types = {cluster.get("eciGpuSpec")}
        for pool in ("cpuPool", "gpuPool"):
            section = cluster.get(pool)
            types |= set(section.get("instanceTypes") or []) if isinstance(section, dict) else set()
        found.setdefault(region, set()).update(t for t in types if isinstance(t, str) and t)
    return found


def _client(module: Any, key: tuple[str, str], endpoint: str, protocol: str) -> Any:
    from alibabacloud_tea_openapi.utils_models import Config

    config = Config(
        access_key_id=key[0], access_key_secret=key[1], endpoint=endpoint, protocol=protocol
    )
    return module.Client(config)


def _call(what: str, call: Any) -> Any:
    try:
        return call()
    except Exception as error:  # the SDK raises its own and urllib's errors alike
        raise RefreshError(f"{what} failed: {error}") from None


def ecs_row(client: Any, region: str, instance_type: str, today: Any) -> PriceRow:
    from alibabacloud_ecs20140526 import models

    request = models.DescribePriceRequest(
        region_id=region, resource_type="instance", instance_type=instance_type, price_unit="Hour"
    )
    body = _call(
        f"DescribePrice {instance_type} in {region}", lambda: client.describe_price(request)
    ).body
    price = body.price_info.price
    # The total includes a default system disk: the instance type's own line when listed.
    details = price.detail_infos.detail_info if price.detail_infos else []
    own = next((d.trade_price for d in details if d.resource == "instanceType"), None)
    shape = instance_shape(instance_type)  # the catalog's shape columns, read from the name
    return PriceRow(
        item=instance_type, region=region, zone="",
        price=Decimal(str(price.trade_price if own is None else own)),
        spot_price=None, unit="hour", currency=price.currency,
        source=f"ECS DescribePrice (RegionId {region}, PriceUnit Hour)", fetched_on=today,
        vcpus=str(shape.vcpus) if shape else "",
        memory_gib=str(shape.memory_gib) if shape and shape.memory_gib else "",
        accelerator_count=str(shape.gpus) if shape and shape.gpus else "",
    )  # fmt: skip


def eci_rows(client: Any, region: str, today: Any) -> list[PriceRow]:
    from alibabacloud_eci20180808 import models

    prices, currency = [], ""
    for cpu, memory in _ECI_PROBES:
        request = models.DescribeContainerGroupPriceRequest(
            region_id=region, cpu=cpu, memory=memory
        )
        what = f"DescribeContainerGroupPrice {cpu} vCPU {memory} GiB in {region}"
        price = _call(
            what, lambda r=request: client.describe_container_group_price(r)
        ).body.price_info.price
        prices.append(Decimal(str(price.trade_price)))
        currency = price.currency
    (cpu, low), (_, high) = _ECI_PROBES
    gib = (prices[1] - prices[0]) / (high - low)
    vcpu = (prices[0] - low * gib) / cpu
    source = f"ECI DescribeContainerGroupPrice (RegionId {region}; 2 vCPU with 4 and 8 GiB)"
    common = {"region": region, "zone": "", "spot_price": None, "currency": currency,
              "source": source, "fetched_on": today}  # fmt: skip
    return [
        PriceRow(item="eci.vcpu", price=vcpu, unit="vcpu-second", vcpus="1", **common),
        PriceRow(item="eci.memory", price=gib, unit="gib-second", memory_gib="1", **common),
    ]


def refresh_rows(
    old: Iterable[PriceRow],
    regions: dict[str, set[str]],
    key: tuple[str, str],
    endpoints: Endpoints,
) -> list[PriceRow]:
    """The new table's rows: the APIs' for what they price, the old rows for the rest."""
    from alibabacloud_eci20180808 import client as eci
    from alibabacloud_ecs20140526 import client as ecs

    today = datetime.now(UTC).date()
    rows = {(row.item, row.region, row.zone): row for row in old}
    for row in list(rows.values()):
        if row.item.startswith("ecs.") and not row.zone:
            regions.setdefault(row.region, set()).add(row.item)
    for region, types in sorted(regions.items()):
        ecs_client = _client(ecs, key, endpoints.ecs.format(region=region), endpoints.protocol)
        for name in sorted(types):
            fresh = ecs_row(ecs_client, region, name, today)
            if kept := rows.get((name, region, "")):  # the shape the API does not return
                fresh = replace(
                    fresh,
                    vcpus=kept.vcpus,
                    memory_gib=kept.memory_gib,
                    accelerator=kept.accelerator,
                    accelerator_count=kept.accelerator_count,
                )
            rows[(name, region, "")] = fresh
        eci_client = _client(eci, key, endpoints.eci.format(region=region), endpoints.protocol)
        for fresh in eci_rows(eci_client, region, today):
            rows[(fresh.item, region, "")] = fresh
    return list(rows.values())


def write_atomically(path: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def refresh(
    table: Path, stacks_dir: Path, env: dict[str, str], endpoints: Endpoints = Endpoints()
) -> int:
    """Refresh `table` in place; the number of rows the APIs priced."""
    key = credentials(env)
    old = load_table(table).rows if table.is_file() else ()
    rows = refresh_rows(old, wanted(stacks_dir), key, endpoints)
    write_atomically(table, table_text(rows))
    return sum(1 for row in rows if not row.source.startswith("http"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tftrain prices", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("refresh", help="rewrite the price table from your account's prices")
    run.add_argument("--table", type=Path, default=TABLE, help=f"default: {TABLE}")
    run.add_argument("--stacks-dir", type=Path, default=STACKS, help="whose instance types")
    args = parser.parse_args(argv)
    try:
        count = refresh(args.table, args.stacks_dir, dict(os.environ))
    except (RefreshError, PriceTableError) as error:
        print(f"error: {error}; {args.table} is unchanged", file=sys.stderr)
        return 1
    print(f"{args.table}: {count} rows priced from your account today")
    return 0


if __name__ == "__main__":
    sys.exit(main())
