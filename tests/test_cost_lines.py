"""The review's cost lines, whole, for sides priced by hand (`StackCost` of items written here):
how amounts are shown, what each line compares, and what a side that cannot be priced says."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from infra.config import parse_config
from infra.config.stack_file import read_stack
from infra.pricing.cost import Item, StackCost, Totals
from infra.pricing.table import parse_table
from infra.render.cost_lines import Side, cost_lines, money, price_side

TABLE_HEADER = (
    "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,Region,AvailabilityZone,"
    "Price,SpotPrice,Unit,Currency,Source,FetchedOn\n"
)
TABLE = parse_table(
    TABLE_HEADER
    + "ecs.g7.xlarge,4,16,,,cn-hangzhou,,1.5,,hour,CNY,https://example.com/g7,2026-11-01\n",
    Path("t.csv"),
)
TODAY = date(2026, 11, 27)
IMAGE = "registry.example.com/tftrain/trainer:1"
HEADER = "Cost (Alibaba Cloud list prices, t.csv of 2026-11-01):"
POOL = Item("pool", "CNY", Decimal(2))
LB = Item("lb", why="no price")
WORKER = Item("worker", "CNY", Decimal(4))


def side(deadline: int | None, runs: tuple = ((WORKER,),), steady: tuple = (POOL, LB)) -> Side:
    job = {"activeDeadlineSeconds": deadline} if deadline else {}
    config = parse_config({"image": IMAGE, "job": job})
    return Side(config, StackCost(steady, runs, deadline, is_sweep=len(runs) > 1))


@pytest.mark.parametrize(
    ("amounts", "shown"),
    [
        ({}, "0 CNY"),
        ({"CNY": Decimal(0)}, "0 CNY"),
        ({"CNY": Decimal("1")}, "1.00 CNY"),  # from 1 up: cents
        ({"CNY": Decimal("0.9999")}, "0.9999 CNY"),  # below 1: 4 decimals
        ({"CNY": Decimal("0.0001")}, "0.0001 CNY"),
        ({"CNY": Decimal("0.00009")}, "0.000090 CNY"),  # below 0.0001: 6
        ({"USD": Decimal("0.034"), "CNY": Decimal("12.5")}, "12.50 CNY + 0.0340 USD"),
    ],
)
def test_an_amount_shows_enough_decimals_never_to_read_0(amounts: dict, shown: str) -> None:
    assert money(Totals(amounts)) == shown
    assert money(Totals(amounts, (LB,))) == f"{shown} + unpriced"


def test_a_new_stack_s_lines_compare_none_with_its_cost() -> None:
    """Per hour 2 CNY and an unpriced item; a run 4 CNY/h for 1800 s: 2.00 at most."""
    assert cost_lines(Side(), side(1800), TABLE, TODAY) == [
        HEADER,
        "  per hour, kept running: none → 2.00 CNY + unpriced",
        "  one run at most: none → 2.00 CNY (replicas x price x 1800 s job.activeDeadlineSeconds)",
        "  pool: 2.00 CNY/h",
        "  per run, worker: 4.00 CNY/h",
        "  unpriced: lb: no price",
    ]


def test_a_run_without_a_deadline_is_unbounded() -> None:
    assert cost_lines(side(None), side(None), TABLE, TODAY)[1:3] == [
        "  per hour, kept running: 2.00 CNY + unpriced, unchanged",
        "  one run at most: unbounded (no job.activeDeadlineSeconds; 4.00 CNY per hour), unchanged",
    ]


def test_a_sweep_counts_its_trials_and_a_removed_stack_reads_none() -> None:
    """Two trials of 4 CNY/h for 3600 s: 4.00 a run, 8.00 the sweep."""
    sweep = side(3600, runs=((WORKER,), (WORKER,)))
    assert cost_lines(sweep, Side(), TABLE, TODAY)[1:4] == [
        "  per hour, kept running: 2.00 CNY + unpriced → none",
        "  one run at most: 4.00 CNY → none",
        "  whole sweep at most (0 trials): 8.00 CNY → none",
    ]
    assert cost_lines(Side(), sweep, TABLE, TODAY)[3] == (
        "  whole sweep at most (2 trials): none → 8.00 CNY"
    )


def test_a_stack_without_a_run_has_no_run_line_and_none_beside_one() -> None:
    platform = side(None, runs=())
    lines = cost_lines(platform, platform, TABLE, TODAY)
    assert [line for line in lines if line.startswith("  one run")] == []
    assert cost_lines(platform, side(600), TABLE, TODAY)[2] == (
        "  one run at most: none (no run) → 0.6667 CNY (replicas x price x 600 s "
        "job.activeDeadlineSeconds)"
    )  # 4 CNY/h for 600 s: 0.6667


def test_a_side_that_does_not_validate_is_named_and_not_priced(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(f"config:\n  tftrain:image: {IMAGE}\n  tftrain:worker:\n    number: -1\n")
    bad = price_side(read_stack(path), TABLE)
    assert bad.config is None and bad.cost is None
    assert bad.problem.startswith("its stack file does not validate here (tftrain:worker.number")
    lines = cost_lines(bad, side(1800), TABLE, TODAY)
    assert lines[1] == f"  before: not priced: {bad.problem}"
    assert lines[2] == "  per hour, kept running: not priced → 2.00 CNY + unpriced"
    assert lines[3].startswith("  one run at most: not priced → 2.00 CNY")


def test_an_unpriced_item_is_listed_once_though_both_the_pool_and_the_run_have_it() -> None:
    both = side(1800, runs=((WORKER, LB),))
    lines = cost_lines(both, both, TABLE, TODAY)
    assert [line for line in lines if "unpriced:" in line] == ["  unpriced: lb: no price"]


def test_a_budget_within_every_key_says_so() -> None:
    config = parse_config(
        {"image": IMAGE, "job": {"activeDeadlineSeconds": 1800}, "budget": {"maxCnyPerRun": 2}}
    )
    within = Side(config, StackCost((POOL,), ((WORKER,),), 1800, is_sweep=False))
    assert cost_lines(Side(), within, TABLE, TODAY)[-1] == (
        "Budget: within every key of tftrain:budget"
    )


def test_the_same_total_over_other_unpriced_items_is_a_change_on_its_line() -> None:
    """Both sides 2 CNY + unpriced per hour: one unpriced item gone is named, per hour; on
    the run line, one unpriced item swapped for another is named, though the hour's read
    alike."""
    nat = Item("nat", why="no price")
    fewer = cost_lines(side(1800, steady=(POOL, LB, nat)), side(1800), TABLE, TODAY)
    assert fewer[1] == (
        "  per hour, kept running: 2.00 CNY + unpriced on both sides, but the unpriced items "
        "changed: -nat"
    )
    swapped = cost_lines(side(1800, runs=((WORKER, LB),)), side(1800, runs=((WORKER, nat),)),
                         TABLE, TODAY)  # fmt: skip
    assert swapped[1] == "  per hour, kept running: 2.00 CNY + unpriced, unchanged"
    assert swapped[2] == (
        "  one run at most: 2.00 CNY + unpriced on both sides, but the unpriced items changed: "
        "-lb; +nat (replicas x price x 1800 s job.activeDeadlineSeconds)"
    )


def test_an_empty_table_is_named_without_a_date_and_warned_about() -> None:
    empty = parse_table(TABLE_HEADER, Path("empty.csv"))
    assert cost_lines(Side(), Side(), empty, TODAY)[:2] == [
        "Cost (Alibaba Cloud list prices, empty.csv):",
        "  the price table empty.csv has no rows: every item is unpriced",
    ]


def test_the_side_after_the_change_is_named_when_it_cannot_be_priced() -> None:
    broken = Side(problem="its stack file does not validate here (x)")
    assert cost_lines(side(1800), broken, TABLE, TODAY)[1] == (
        "  after: not priced: its stack file does not validate here (x)"
    )


ACK_CPU_POOL = """\
  tftrain:network:
    zoneId: cn-hangzhou-i
  tftrain:cluster:
    kind: ack
    cpuPool:
      instanceTypes: [ecs.g7.xlarge]
      size: 2
"""


def _priced(tmp_path: Path, region_line: str, cluster: str) -> Side:
    path = tmp_path / "Pulumi.s.yaml"
    path.write_text(f"config:\n{region_line}  tftrain:image: {IMAGE}\n{cluster}")
    return price_side(read_stack(path), TABLE)


@pytest.mark.parametrize("region", ["", "  alicloud:region: ''\n", "  alicloud:region: 5\n"])
def test_without_a_region_what_is_priced_by_region_says_the_key(
    tmp_path: Path, region: str
) -> None:
    # Alibaba's prices are per region: the pool's nodes are looked up in none.
    no_region = _priced(tmp_path, region, ACK_CPU_POOL)
    assert no_region.problem == "" and no_region.cost is not None
    [pool] = [item for item in no_region.cost.steady if "ecs.g7.xlarge" in item.what]
    assert pool.why == (
        "no price of ecs.g7.xlarge: its stack file sets no alicloud:region, whose prices apply"
    )
    assert not any(" in  in " in item.why for item in no_region.cost.steady)
    # The same stack in cn-hangzhou: 2 nodes at the table's 1.5 CNY an hour.
    priced = _priced(tmp_path, "  alicloud:region: cn-hangzhou\n", ACK_CPU_POOL)
    assert priced.cost is not None
    [pool] = [item for item in priced.cost.steady if "ecs.g7.xlarge" in item.what]
    assert (pool.currency, pool.hourly, pool.why) == ("CNY", Decimal(3), "")


def test_an_existing_cluster_needs_no_region_to_say_why_nothing_is_priced(
    tmp_path: Path,
) -> None:
    side = _priced(tmp_path, "", "")
    assert side.problem == "" and side.cost is not None
    assert [item.why for item in side.cost.steady] == [
        "not this stack's (it runs on a cluster it did not create)"
    ]
