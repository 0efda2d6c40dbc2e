"""One comparison of a sweep's trials: what each one's run directory holds, in one table.

A row per trial: its number and run id, its point, the metric (its last value by step, read
from the run's TensorBoard event files, `infra.records.tensorboard_scalars`), the steps trained, the
wall time between its first and last event, its outcome (the supervisors' records, or an export's
marker) and its directory. Rows are sorted by the metric's goal; trials without the metric
come last. The best trial is the first succeeded row with the metric.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from infra.config import StackConfig
from infra.config.sweep_points import point_text
from infra.lifecycle import OUTCOMES_DIR, run_key
from infra.records.run_state import read_run
from infra.records.tensorboard_scalars import Point, flat_run_scalars, latest, series

# export.sh's marker: an exported run directory is complete once it is there.
EXPORTED_MARKER = "_TFTRAIN_EXPORTED"
COLUMNS = ("trial", "run_id", "point", "metric", "steps", "wall_seconds", "outcome", "path")


@dataclass(frozen=True)
class TrialResult:
    number: int
    run_id: str
    point: dict[str, object]
    metric: float | None
    steps: int | None
    wall_seconds: float | None
    outcome: str
    path: Path
    curve: tuple[Point, ...]  # the metric over steps (or the loss, for the plot)
    curve_tag: str = ""
    scalar_tags: tuple[str, ...] = ()  # every scalar the trial wrote: named when the metric is not


def outcome(config: StackConfig, run_dir: Path, trained: bool) -> str:
    """What the supervisors recorded for this run (or an export's marker says). `trained`:
    the trial wrote scalars, so without records or a marker it is `incomplete` (an export
    copy cut short, records left behind), not `not started`."""
    if not run_dir.is_dir():
        return "not started"
    records = run_dir / OUTCOMES_DIR
    key = run_key(config)
    if (records / f"succeeded.{key}").exists() or (run_dir / EXPORTED_MARKER).exists():
        return "succeeded"
    if any(records.glob(f"failed.{key}.*")):
        return "failed"
    # Running, stopped from outside, or lost (its supervisors died): as `status` reads it.
    state = read_run(run_dir, with_scalars=False)
    if state is not None:
        return state.outcome
    return "incomplete" if trained else "not started"


def trial_result(number: int, trial: StackConfig, run_dir: Path, metric: str) -> TrialResult:
    scalars = flat_run_scalars(run_dir) if run_dir.is_dir() else {}
    points = [p for values in scalars.values() for p in values]
    curve, curve_tag = series(scalars, metric), metric
    if len(curve) < 2 and series(scalars, "loss"):  # one final value is no curve: the loss is
        curve, curve_tag = series(scalars, "loss"), "loss"
    return TrialResult(
        number=number,
        run_id=trial.job.run_id,
        point=dict(trial.trial_point),
        metric=latest(scalars, metric),
        steps=max((p.step for p in points), default=None),
        wall_seconds=(
            max(p.wall_time for p in points) - min(p.wall_time for p in points) if points else None
        ),
        outcome=outcome(trial, run_dir, trained=bool(points)),
        path=run_dir,
        curve=tuple(curve),
        curve_tag=curve_tag,
        scalar_tags=tuple(sorted(scalars)),
    )


def compare(config: StackConfig, runs_dir: Path) -> list[TrialResult]:
    """Every trial's result (`runs_dir/<run id>`), best first."""
    assert config.sweep is not None
    metric = config.sweep.metric
    results = [
        trial_result(number, trial, runs_dir / trial.job.run_id, metric.name)
        for number, trial in enumerate(config.trials, 1)
    ]
    sign = -1 if metric.goal == "maximize" else 1
    return sorted(results, key=lambda r: (r.metric is None, sign * (r.metric or 0.0), r.number))


def swept_keys(results: Sequence[TrialResult]) -> list[str]:
    """The swept parameters, one column each, in the sweep's order."""
    return list(dict.fromkeys(key for result in results for key in result.point))


def header(results: Sequence[TrialResult], metric: str) -> list[str]:
    """The table's columns: the metric's column carries its name, in CSV and Markdown."""
    return ["trial", "run_id", *swept_keys(results), metric, *COLUMNS[4:7], "best", "path"]


def _cells(result: TrialResult, keys: Sequence[str], best: TrialResult | None) -> list[str]:
    return [
        str(result.number),
        result.run_id,
        *(str(result.point.get(key, "")) for key in keys),
        "" if result.metric is None else f"{result.metric:.6g}",
        "" if result.steps is None else str(result.steps),
        "" if result.wall_seconds is None else f"{result.wall_seconds:.1f}",
        result.outcome,
        "best" if result is best else "",
        str(result.path),
    ]


def to_csv(results: Sequence[TrialResult], metric: str) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header(results, metric))
    keys, best = swept_keys(results), best_trial(results)
    writer.writerows(_cells(result, keys, best) for result in results)
    return out.getvalue()


def to_markdown(results: Sequence[TrialResult], metric: str, goal: str) -> str:
    columns = header(results, metric)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    keys, best = swept_keys(results), best_trial(results)
    for result in results:
        cells = [cell.replace("|", "\\|") for cell in _cells(result, keys, best)]
        if result is best:
            cells = [f"**{cell}**" if cell else cell for cell in cells]
        lines.append("| " + " | ".join(cells) + " |")
    verdict = (
        f"Best ({goal} {metric}): trial {best.number}, {best.run_id} "
        f"({point_text(best.point)}): {best.metric:.6g}"
        if best
        else f"No succeeded trial has logged {metric} yet."
    )
    return "\n".join([*lines, "", verdict]) + "\n"


def to_records(results: Sequence[TrialResult], metric: str) -> list[dict[str, object]]:
    """The table for scripts (`tftrain compare --json`)."""
    best = best_trial(results)
    return [
        {
            "trial": r.number,
            "run_id": r.run_id,
            "point": r.point,
            "metric": {"name": metric, "value": r.metric},
            "steps": r.steps,
            "wall_seconds": r.wall_seconds,
            "outcome": r.outcome,
            "best": r is best,
            "path": str(r.path),
        }
        for r in results
    ]


def missing_metric(results: Sequence[TrialResult], metric: str) -> str | None:
    """When trials wrote scalars but none the sweep's metric: a line naming what they wrote."""
    if any(r.metric is not None for r in results):
        return None
    tags = sorted({tag for r in results for tag in r.scalar_tags})
    if not tags:
        return None
    return (
        f"no trial has written the scalar {metric!r} (tftrain:sweep.metric.name); "
        f"the scalars they wrote: {', '.join(tags)}"
    )


def best_trial(results: Sequence[TrialResult]) -> TrialResult | None:
    """The first succeeded trial with the metric (a failed one's last value is no result)."""
    return next((r for r in results if r.metric is not None and r.outcome == "succeeded"), None)
