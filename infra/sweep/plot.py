"""The comparison as a picture: the metric against each swept parameter, and the trials'
curves. Needs matplotlib (requirements-dev.txt): `results` writes no PNG without it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from infra.sweep.results import TrialResult, best_trial


def matplotlib_missing() -> str | None:
    """Why no plot can be drawn here, or None."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return "matplotlib is not installed (pip install matplotlib): no PNG written"
    return None


def _numeric(values: Sequence[Any]) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


def _against(axes: Any, key: str, results: Sequence[TrialResult], metric: str) -> None:
    measured = [r for r in results if r.metric is not None]
    values = [r.point.get(key) for r in measured]
    best = best_trial(results)
    if _numeric(values):
        axes.scatter(values, [r.metric for r in measured])
        if best is not None:  # the best trial, ringed and named
            axes.scatter([best.point.get(key)], [best.metric], s=160, facecolors="none",
                         edgecolors="tab:red", label=f"best: trial {best.number}")  # fmt: skip
            axes.legend(fontsize="small")
        positive = [float(v) for v in values if float(v) > 0]
        if len(positive) == len(values) and values and max(positive) >= 10 * min(positive):
            axes.set_xscale("log")
    else:
        labels = sorted({str(v) for v in values})
        axes.scatter([labels.index(str(v)) for v in values], [r.metric for r in measured])
        axes.set_xticks(range(len(labels)), labels)
    axes.set_xlabel(key)
    axes.set_ylabel(metric)


def plot(results: Sequence[TrialResult], metric: str, path: Path) -> None:
    """Write the PNG to `path`: one panel per swept key, then the curves."""
    import matplotlib

    matplotlib.use("Agg")  # no display: a file only
    import matplotlib.pyplot as plt

    keys = list(dict.fromkeys(key for r in results for key in r.point))
    figure, panels = plt.subplots(1, len(keys) + 1, figsize=(4.5 * (len(keys) + 1), 4))
    for axes, key in zip(panels, keys, strict=False):
        _against(axes, key, results, metric)
    curves = panels[-1]
    for result in results:
        if result.curve:
            steps = [p.step for p in result.curve]
            best = " (best)" if result is best_trial(results) else ""
            curves.plot(steps, [p.value for p in result.curve], label=f"{result.number}{best}")
    curves.set_xlabel("step")
    tags = sorted({r.curve_tag for r in results if r.curve})
    curves.set_ylabel(", ".join(tags))
    curves.set_title("training curves (legend: trial number)")
    if any(r.curve for r in results):
        curves.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
