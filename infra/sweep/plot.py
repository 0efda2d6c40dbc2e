"""The comparison as a picture (SVG, `infra.charts`): the metric against each swept parameter,
the best trial circled, then the trials' training curves."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from infra import charts
from infra.charts import Panel, Series
from infra.sweep.results import TrialResult, best_trial

PANEL_WIDTH = 450


def _numeric(values: Sequence[Any]) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


def against(key: str, results: Sequence[TrialResult], metric: str) -> Panel:
    """The metric of each trial that has one, against its value of `key`: a number on a
    linear or (when the positive values span a decade) log axis, anything else a category."""
    values = [r.point.get(key) for r in results if r.metric is not None]
    categories = [] if _numeric(values) else sorted({str(v) for v in values})

    def place(value: Any) -> float:
        return float(categories.index(str(value))) if categories else float(value)

    points = [(place(r.point.get(key)), r.metric) for r in results if r.metric is not None]
    xs = [x for x, _ in points]
    log = not categories and bool(xs) and min(xs) > 0 and max(xs) >= 10 * min(xs)
    best = best_trial(results)  # a succeeded trial with the metric: one of the points
    ringed = None
    if best is not None and best.metric is not None:
        ringed = Series(f"best: trial {best.number}", [(place(best.point.get(key)), best.metric)])
    trials = Series("", points, joined=False)
    return Panel("", key, metric, [trials], x_log=log, categories=categories, ringed=ringed)


def curves(results: Sequence[TrialResult]) -> Panel:
    """Each trial's curve over steps, named by its number, the best one said."""
    best = best_trial(results)
    series = [
        Series(f"{r.number}{' (best)' if r is best else ''}", [(p.step, p.value) for p in r.curve])
        for r in results
        if r.curve
    ]
    tags = sorted({r.curve_tag for r in results if r.curve})
    return Panel("training curves (legend: trial number)", "step", ", ".join(tags), series)


def plot(results: Sequence[TrialResult], metric: str, path: Path) -> None:
    """Write the SVG to `path`: one panel per swept key, then the curves."""
    keys = list(dict.fromkeys(key for r in results for key in r.point))
    panels = [against(key, results, metric) for key in keys] + [curves(results)]
    charts.write(path, panels, PANEL_WIDTH)
