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
    measured = [r for r in results if r.metric is not None]
    values = [r.point.get(key) for r in measured]
    best = best_trial(results)
    categories: list[str] = []
    if _numeric(values):
        xs = [float(v) for v in values]
        positive = [x for x in xs if x > 0]
        log = bool(xs) and len(positive) == len(xs) and max(xs) >= 10 * min(xs)
    else:
        categories = sorted({str(v) for v in values})
        xs = [float(categories.index(str(v))) for v in values]
        log = False
    ys = [r.metric for r in measured if r.metric is not None]
    ringed = None
    if best is not None and best in measured:
        x = xs[measured.index(best)]
        ringed = Series(f"best: trial {best.number}", [(x, ys[measured.index(best)])])
    trials = Series("", list(zip(xs, ys, strict=True)), joined=False)
    return Panel("", key, metric, [trials], x_log=log,
                 categories=categories, ringed=ringed)  # fmt: skip


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
