"""What one priced item costs, row by row, against a table written here with round prices.

Every amount is worked in its comment from TABLE's rows (a unit's hours: hour 1, vcpu-second
and gib-second 1/3600, gib-month 720), never read from the code."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from infra.pricing.cost import Item, Pricer, StackCost, totals
from infra.pricing.table import parse_table

HEADER = (
    "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,Region,AvailabilityZone,"
    "Price,SpotPrice,Unit,Currency,Source,FetchedOn\n"
)
ROWS = """\
ecs.a,4,16,,,r1,,2,0.5,hour,CNY,https://example.com/a,2026-11-01
ecs.a,4,16,,,r1,r1-z,3,,hour,CNY,https://example.com/a-z,2026-11-01
ecs.b,8,32,,,r1,,5,1,hour,CNY,https://example.com/b,2026-11-01
ecs.u,4,16,,,r1,,1,,hour,USD,https://example.com/u,2026-11-01
eci.vcpu,1,,,,r1,,0.0001,,vcpu-second,CNY,https://example.com/eci,2026-11-01
eci.memory,,1,,,r1,,0.00001,,gib-second,CNY,https://example.com/eci,2026-11-01
eci.vcpu,1,,,,r2,,0.0001,,vcpu-second,CNY,https://example.com/eci,2026-11-01
eci.memory,,1,,,r2,,0.00001,,gib-second,USD,https://example.com/eci,2026-11-01
eci.vcpu,1,,,,r3,,0.0001,,vcpu-second,CNY,https://example.com/eci,2026-11-01
eci.memory,,1,,,r4,,0.00001,,gib-second,CNY,https://example.com/eci,2026-11-01
eci.vcpu,1,,,,r5,,,0.00005,vcpu-second,CNY,https://example.com/eci,2026-11-01
eci.memory,,1,,,r5,,0.00001,,gib-second,CNY,https://example.com/eci,2026-11-01
nas.x,,,,,r1,,0.72,,gib-month,CNY,https://example.com/nas,2026-11-01
nas.spot-only,,,,,r1,,,0.72,gib-month,CNY,https://example.com/nas,2026-11-01
"""
TABLE = parse_table(HEADER + ROWS, Path("t.csv"))


def pricer(region: str = "r1", zone: str = "") -> Pricer:
    return Pricer(TABLE, region, zone)


def test_a_pool_is_priced_at_its_dearest_type_times_its_nodes() -> None:
    # ecs.a 2, ecs.b 5 CNY/h: a pool of either is bounded by 5; 3 nodes: 15.
    assert pricer().instances("pool", ("ecs.a", "ecs.b"), 3) == Item("pool", "CNY", Decimal(15))


def test_the_zone_s_own_row_wins_over_the_region_s() -> None:
    # ecs.a: 3 CNY/h in r1-z, 2 in the rest of r1; 2 nodes.
    assert pricer(zone="r1-z").instances("p", ("ecs.a",), 2).hourly == Decimal(6)
    assert pricer(zone="r1-y").instances("p", ("ecs.a",), 2).hourly == Decimal(4)
    assert pricer().instances("p", ("ecs.a",), 2).hourly == Decimal(4)


def test_spot_nodes_are_priced_at_the_spot_price() -> None:
    # Spot: ecs.a 0.5, ecs.b 1: bounded by 1; 2 nodes: 2.
    assert pricer().instances("s", ("ecs.a", "ecs.b"), 2, spot=True) == Item("s", "CNY", Decimal(2))


def test_types_without_a_price_are_named_and_nothing_is_estimated() -> None:
    assert pricer().instances("p", ("ecs.a", "ecs.c", "ecs.d"), 1) == Item(
        "p", why="no price of ecs.c, ecs.d in r1 in the table"
    )
    # The zone's row has no spot price, though the region's has: the zone's row is the one.
    assert pricer(zone="r1-z").instances("p", ("ecs.a",), 1, spot=True) == Item(
        "p", why="no spot price of ecs.a in r1 in the table"
    )


def test_types_priced_in_two_currencies_are_not_added_up() -> None:
    assert pricer().instances("p", ("ecs.a", "ecs.u"), 1) == Item(
        "p", why="ecs.a, ecs.u are priced in several currencies"
    )


def test_an_eci_pod_is_its_vcpus_and_gib_at_their_prices() -> None:
    """0.0001 CNY per vCPU-second is 0.36 an hour, 0.00001 per GiB-second 0.036: a pod of
    500m and 2Gi costs 0.18 + 0.072 = 0.252 CNY/h; 3 pods 0.756."""
    assert pricer().eci_pods("pods", "500m", "2Gi", 3, spot=False) == Item(
        "pods", "CNY", Decimal("0.756")
    )


@pytest.mark.parametrize(
    "region",
    [
        "r2",  # vCPU in CNY, memory in USD
        "r3",  # a vCPU price only
        "r4",  # a memory price only
        "r5",  # a vCPU row with a spot price but no price
        "r9",  # no ECI rows
    ],
)
def test_an_eci_pod_without_both_prices_in_one_currency_is_unpriced(region: str) -> None:
    assert pricer(region).eci_pods("pods", "1", "1Gi", 1, spot=False) == Item(
        "pods", why=f"no ECI vCPU and memory prices for {region} in the table"
    )


def test_eci_spot_pods_are_unpriced_as_a_market_price() -> None:
    assert pricer().eci_pods("pods", "1", "1Gi", 1, spot=True) == Item(
        "pods", why="ECI spot pods are billed at a market price"
    )


def test_stored_capacity_is_its_amount_at_the_hourly_price() -> None:
    # 0.72 CNY per GiB-month is 0.001 an hour (720 hours); 10 GiB: 0.01.
    assert pricer().stored("NAS", "nas.x", Decimal(10)) == Item("NAS", "CNY", Decimal("0.01"))
    assert pricer().stored("NAS", "nas.x", None, "size unknown") == Item("NAS", why="size unknown")
    for item in ("nas.y", "nas.spot-only"):  # no row, or a row without a price
        assert pricer().stored("NAS", item, Decimal(10)) == Item(
            "NAS", why=f"no {item} price for r1 in the table"
        )


def test_totals_add_up_by_currency_and_keep_the_unpriced() -> None:
    unpriced = Item("lb", why="no price")
    found = totals(
        (Item("a", "CNY", Decimal(2)), Item("b", "USD", Decimal(1)), Item("c", "CNY", Decimal(3)),
         unpriced),
        Decimal(2),
    )  # fmt: skip
    assert found.amounts == {"CNY": Decimal(10), "USD": Decimal(2)}
    assert found.unpriced == (unpriced,)


def test_a_run_s_most_is_its_hourly_cost_for_its_deadline() -> None:
    """Deadline 5400 s is 1.5 h. Trial 0: 4 CNY/h, 6 at most; trial 1: 2 CNY/h plus an
    unpriced item, 3 at most. The dearest run is the one that cannot be fully priced (its
    bound is unknown); the sweep: (4 + 2) x 1.5 = 9 plus the unpriced item."""
    lb = Item("lb", why="no price")
    runs = ((Item("w", "CNY", Decimal(4)),), (Item("w", "CNY", Decimal(2)), lb))
    cost = StackCost(steady=(), runs=runs, deadline=5400, is_sweep=True)
    assert cost.run_most(0).amounts == {"CNY": Decimal(6)}
    assert cost.run_most(1).amounts == {"CNY": Decimal(3)}
    assert cost.largest_run().unpriced == (lb,)
    assert cost.sweep_most().amounts == {"CNY": Decimal(9)}
    # Both priced, the dearer second: its 4 CNY for the 1 h deadline.
    cheap, dear = (Item("w", "CNY", Decimal(2)),), (Item("w", "CNY", Decimal(4)),)
    priced = StackCost(steady=(), runs=(cheap, dear), deadline=3600, is_sweep=True)
    assert priced.largest_run().amounts == {"CNY": Decimal(4)}
    assert StackCost(steady=(), runs=(), deadline=3600, is_sweep=False).largest_run().amounts == {}
