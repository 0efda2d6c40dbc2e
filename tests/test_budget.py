"""The budget's check, line by line, against costs written here by hand (`StackCost` of items
priced in this file), and the range a user can write for each key.

Every expected line is the budget's rule applied by hand: over the limit is refused, at it
passes; what cannot be priced, or is priced in another currency, is refused with its reason."""

from __future__ import annotations

from decimal import Decimal

import pytest

from infra.config import ConfigError, parse_config
from infra.pricing.budget import budget_problems, budget_refusals, has_budget
from infra.pricing.cost import Item, StackCost

IMAGE = "registry.example.com/tftrain/trainer:1"
# A stack every budget key applies to: a deadline (a run's most) and a sweep of two trials.
SWEPT = {
    "image": IMAGE,
    "job": {"activeDeadlineSeconds": 60},
    "sweep": {"parameters": {"hyperparams.learningRate": {"values": [0.001, 0.01]}}},
}


def config(**budget: float) -> object:
    return parse_config({**SWEPT, "budget": budget})


def steady(*items: Item) -> StackCost:
    return StackCost(steady=items, runs=(), deadline=None, is_sweep=False)


def test_every_unpriced_item_is_named_with_its_reason() -> None:
    cost = steady(
        Item("NAT gateway", why="no price of nat.internet"), Item("EIP", why="billed by use")
    )
    assert budget_problems(config(maxCnyPerHour=100), cost) == [
        "tftrain:budget.maxCnyPerHour: 100 CNY, but the stack per hour cannot be priced: "
        "unpriced NAT gateway (no price of nat.internet); EIP (billed by use). Add their "
        "prices (`tftrain prices refresh`) or remove the key"
    ]


def test_a_total_in_other_currencies_is_refused_naming_them_in_order() -> None:
    cost = steady(
        Item("NAT", "USD", Decimal("0.034")),
        Item("pool", "CNY", Decimal("1")),
        Item("NAS", "EUR", Decimal("0.01")),
    )
    assert budget_problems(config(maxCnyPerHour=100), cost) == [
        "tftrain:budget.maxCnyPerHour: 100 CNY, but part of the stack per hour is priced in "
        "EUR, USD only"
    ]


@pytest.mark.parametrize(
    ("hourly", "limit", "refused"),
    [
        # An amount at the limit passes; a hundredth of a yuan over is refused.
        ("2.50", 2.5, False),
        ("2.51", 2.5, True),
        ("2.49", 2.5, False),
        # Nothing priced at all costs 0, under any limit the config accepts.
        (None, 0.01, False),
    ],
)
def test_the_hourly_limit_is_inclusive(hourly: str | None, limit: float, refused: bool) -> None:
    items = (Item("pool", "CNY", Decimal(hourly)),) if hourly else ()
    problems = budget_problems(config(maxCnyPerHour=limit), steady(*items))
    expected = [f"tftrain:budget.maxCnyPerHour: {limit:g} CNY, but the stack per hour can cost "
                f"{hourly} CNY"]  # fmt: skip
    assert problems == (expected if refused else [])


def test_a_sweep_over_its_budget_is_refused_by_its_own_key() -> None:
    """Two trials, each 3 CNY/h for the 7200 s deadline: 2 x 3 x 2 = 12 CNY for the sweep;
    each run 6 CNY."""
    trial = (Item("worker", "CNY", Decimal(3)),)
    cost = StackCost(steady=(), runs=(trial, trial), deadline=7200, is_sweep=True)
    problems = budget_problems(config(maxCnyPerRun=6, maxCnyPerSweep=11.5), cost)
    assert problems == [
        "tftrain:budget.maxCnyPerSweep: 11.5 CNY, but the whole sweep can cost 12.00 CNY"
    ]


def test_a_stack_has_a_budget_only_when_a_key_is_set() -> None:
    assert not has_budget(config())
    assert has_budget(config(maxCnyPerHour=1, maxCnyPerRun=2, maxCnyPerSweep=3))
    assert has_budget(config(maxCnyPerRun=2))


def test_the_program_prices_the_bucket_from_the_repository_s_input_dir() -> None:
    """ack-gpu uploads trainer/data/mnist (relative to the repository root) to a bucket it
    creates: its hourly check reads that directory's size, and the committed table has no
    row for the CPU pool's ecs.g7.xlarge, so the hourly budget cannot be checked."""
    from infra.config import read_stack_file, stack_file

    raw = read_stack_file(stack_file("ack-gpu"))
    stack = parse_config({**raw, "budget": {"maxCnyPerHour": 100}})
    [problem] = budget_refusals(stack, "cn-hangzhou")
    assert problem.startswith(
        "tftrain:budget.maxCnyPerHour: 100 CNY, but the stack per hour cannot be priced: "
    )
    assert "CPU pool: ecs.g7.xlarge x 2 (no price of ecs.g7.xlarge in cn-hangzhou" in problem
    assert "OSS bucket" not in problem  # priced: its size is the directory's


@pytest.mark.parametrize(
    ("value", "accepted"),
    [(0.01, True), (1, True), (0, False), (-1, False), (True, False), ("inf", False)],
)
def test_each_budget_key_takes_an_amount_above_zero(value: object, accepted: bool) -> None:
    for key in ("maxCnyPerHour", "maxCnyPerRun", "maxCnyPerSweep"):
        raw = {**SWEPT, "budget": {key: value}}
        if accepted:
            parse_config(raw)
            continue
        with pytest.raises(ConfigError) as caught:
            parse_config(raw)
        assert [p.split(" = ")[0] for p in caught.value.problems] == [f"tftrain:budget.{key}"]
