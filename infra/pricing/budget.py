"""A stack's budget (`tftrain:budget`) against what it costs (`infra.pricing.cost`).

Checked by the review and by the program before it registers anything: a key is refused when
the priced total exceeds it, and also when the total cannot be known (an unpriced item, a
total in another currency): a budget that passes only what can be priced would pass anything.
"""

from __future__ import annotations

from decimal import Decimal

from infra.config import PROJECT, StackConfig
from infra.pricing.cost import StackCost, Totals, totals

CURRENCY = "CNY"


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
        checks.append(("maxCnyPerHour", budget.max_cny_per_hour, "the stack per hour", totals(cost.steady)))
    if budget.max_cny_per_run is not None and cost.runs:
        checks.append(("maxCnyPerRun", budget.max_cny_per_run, "its dearest run", cost.largest_run()))
    if budget.max_cny_per_sweep is not None and cost.is_sweep:
        checks.append(("maxCnyPerSweep", budget.max_cny_per_sweep, "the whole sweep", cost.sweep_most()))
    return [p for key, limit, what, found in checks if (p := _problem(key, limit, what, found))]
