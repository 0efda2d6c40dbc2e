"""A stack's budget (`tftrain:budget`) against what it costs (`infra.pricing.cost`).

Checked by the review and by the program before it registers anything: a key is refused when
the priced total exceeds it, and also when the total cannot be known (an unpriced item, a
total in another currency): a budget that passes only what can be priced would pass anything.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from infra.config import PROJECT, StackConfig
from infra.pricing.cost import StackCost, Totals, stack_cost, totals
from infra.pricing.table import TABLE, PriceTableError, load_table

CURRENCY = "CNY"
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def _problem(key: str, limit: float, what: str, found: Totals) -> str | None:
    prefix = f"{PROJECT}:budget.{key}: {limit:g} CNY"
    if found.unpriced:
        names = "; ".join(f"{item.what} ({item.why})" for item in found.unpriced)
        return (
            f"{prefix}, but {what} cannot be priced: unpriced {names}. Add their prices "
            "(`tftrain prices refresh`) or remove the key"
        )
    others = sorted(currency for currency in found.amounts if currency != CURRENCY)
    if others:
        return f"{prefix}, but part of {what} is priced in {', '.join(others)} only"
    amount = found.amounts.get(CURRENCY, Decimal(0))
    if amount > Decimal(str(limit)):
        return f"{prefix}, but {what} can cost {amount:.2f} CNY"
    return None


def budget_problems(config: StackConfig, cost: StackCost) -> list[str]:
    """One line per budget key the stack's cost exceeds (or cannot be checked against)."""
    budget = config.budget
    checks = []
    if budget.max_cny_per_hour is not None:
        checks.append(
            ("maxCnyPerHour", budget.max_cny_per_hour, "the stack per hour", totals(cost.steady))
        )
    if budget.max_cny_per_run is not None and cost.runs:
        checks.append(
            ("maxCnyPerRun", budget.max_cny_per_run, "its dearest run", cost.largest_run())
        )
    if budget.max_cny_per_sweep is not None and cost.is_sweep:
        checks.append(
            ("maxCnyPerSweep", budget.max_cny_per_sweep, "the whole sweep", cost.sweep_most())
        )
    return [p for key, limit, what, found in checks if (p := _problem(key, limit, what, found))]


def has_budget(config: StackConfig) -> bool:
    budget = config.budget
    limits = (budget.max_cny_per_hour, budget.max_cny_per_run, budget.max_cny_per_sweep)
    return any(limit is not None for limit in limits)


def budget_refusals(config: StackConfig, region: str, table_path: Path = TABLE) -> list[str]:
    """What the program refuses before it registers anything: [] without a budget."""
    if not has_budget(config):
        return []
    try:
        table = load_table(table_path)
    except PriceTableError as error:
        return [f"{PROJECT}:budget: cannot be checked: {error}"]
    return budget_problems(config, stack_cost(config, table, region, PROJECT_ROOT))
