"""The review's cost lines: CNY per hour before → after, the most a run and a sweep can cost,
what is unpriced and why, and the stack's budget, from `infra.pricing`.

Both sides are priced with today's table and today's config model: the review compares what
the two stack files ask for, not what prices were when REV was written.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path

from infra.config import ConfigError, StackConfig, parse_config
from infra.config.stack_file import StackFile
from infra.pricing.budget import budget_problems, has_budget
from infra.pricing.cost import Item, StackCost, Totals, stack_cost, totals
from infra.pricing.table import PriceTable

PROJECT_ROOT = Path(__file__).resolve().parents[2]
REGION_KEY = "alicloud:region"
# A Decimal, not the float 0.0001 (a little above it), so 0.0001 itself shows 4 decimals.
_TEN_THOUSANDTH = Decimal("0.0001")


@dataclass(frozen=True)
class Side:
    """One side of the change, priced; `problem` says why it could not be."""

    config: StackConfig | None = None
    cost: StackCost | None = None
    problem: str = ""


def price_side(stack: StackFile | None, table: PriceTable, project: Path = PROJECT_ROOT) -> Side:
    if stack is None:
        return Side()  # no such stack on this side: nothing runs
    try:
        config = parse_config(stack.config)
    except ConfigError as error:
        return Side(problem=f"its stack file does not validate here ({error.problems[0]})")
    region = stack.entries.get(REGION_KEY)
    # No region: what is looked up by region says so; an existing cluster's nodes need none.
    return Side(
        config, stack_cost(config, table, region if isinstance(region, str) else "", project)
    )


def money(found: Totals) -> str:
    """`1.25 CNY + 0.034 USD`, `0 CNY`; amounts under 1 with 4 decimals."""
    parts = [f"{_amount(amount)} {currency}" for currency, amount in sorted(found.amounts.items())]
    text = " + ".join(parts) or "0 CNY"
    return f"{text} + unpriced" if found.unpriced else text


def _amount(amount: Decimal) -> str:
    """Cents from 1 up; below, enough decimals that a small amount is not shown as 0."""
    if amount == 0:
        return "0"
    places = 2 if amount >= 1 else 4 if amount >= _TEN_THOUSANDTH else 6
    return f"{amount:.{places}f}"


def _change(old: Side, new: Side, pick: str) -> str:
    """`before → after`, or `after, unchanged`; the same text over different unpriced items
    (a pool of unpriced nodes grown) is a change too, said by naming them."""
    before, after = _side_text(old, pick), _side_text(new, pick)
    gone = _unpriced_names(old, pick) - _unpriced_names(new, pick)
    came = _unpriced_names(new, pick) - _unpriced_names(old, pick)
    if before != after:
        return f"{before} → {after}"
    if not gone and not came:
        return f"{after}, unchanged"
    moved = [f"-{name}" for name in sorted(gone)] + [f"+{name}" for name in sorted(came)]
    return f"{after} on both sides, but the unpriced items changed: {'; '.join(moved)}"


def _unpriced_names(side: Side, pick: str) -> set[str]:
    if side.cost is None:
        return set()
    cost = side.cost
    items = cost.steady if pick == "hour" else tuple(i for run in cost.runs for i in run)
    return {item.what for item in items if not item.priced}


def _side_text(side: Side, pick: str) -> str:
    if side.problem:
        return "not priced"
    if side.cost is None:
        return "none"
    cost = side.cost
    if pick == "hour":
        return money(totals(cost.steady))
    if not cost.runs:
        return "none (no run)"
    if cost.deadline is None:
        return f"unbounded (no job.activeDeadlineSeconds; {money(totals(cost.runs[0]))} per hour)"
    return money(cost.largest_run() if pick == "run" else cost.sweep_most())


def _unpriced(items: tuple[Item, ...]) -> list[str]:
    unique = dict.fromkeys(f"{item.what}: {item.why}" for item in items if not item.priced)
    return [f"  unpriced: {line}" for line in unique]


def _items(side: Side) -> list[str]:
    if side.cost is None:
        return []
    cost = side.cost
    lines = [f"  {item.what}: {money(totals((item,)))}/h" for item in cost.steady if item.priced]
    run_items = tuple(item for run in cost.runs for item in run)
    lines += (
        [
            f"  per run, {item.what}: {money(totals((item,)))}/h"
            for item in cost.runs[0]
            if item.priced
        ]
        if cost.runs
        else []
    )
    return lines + _unpriced(cost.steady + run_items)


def cost_lines(old: Side, new: Side, table: PriceTable, today: date) -> list[str]:
    source = f"{table.path.name} of {table.date}" if table.date else table.path.name
    lines = [f"Cost (Alibaba Cloud list prices, {source}):"]
    if warning := table.age_warning(today):
        lines.append(f"  {warning}")
    for side, name in ((old, "before"), (new, "after")):
        if side.problem:
            lines.append(f"  {name}: not priced: {side.problem}")
    lines.append(f"  per hour, kept running: {_change(old, new, 'hour')}")
    if (new.cost and new.cost.runs) or (old.cost and old.cost.runs):
        deadline = new.config.job.active_deadline_seconds if new.config else None
        basis = f" (replicas x price x {deadline} s job.activeDeadlineSeconds)" if deadline else ""
        lines.append(f"  one run at most: {_change(old, new, 'run')}{basis}")
    if (new.cost and new.cost.is_sweep) or (old.cost and old.cost.is_sweep):
        trials = len(new.cost.runs) if new.cost else 0
        lines.append(f"  whole sweep at most ({trials} trials): {_change(old, new, 'sweep')}")
    lines += _items(new)
    return lines + budget_lines(new)


def budget_lines(side: Side) -> list[str]:
    if side.config is None or side.cost is None:
        return []
    if not has_budget(side.config):
        return []
    problems = budget_problems(side.config, side.cost)
    if not problems:
        return ["Budget: within every key of tftrain:budget"]
    return ["Budget: REFUSED, `pulumi up` would stop before creating anything:"] + [
        f"  {problem}" for problem in problems
    ]
