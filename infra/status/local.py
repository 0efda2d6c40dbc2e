"""Runs launched on this machine: what `runs/<stack>/<job>/<run id>/` holds, printed.

The run state comes from `infra.run_state` (the supervisors' records and per-attempt logs,
the trainer's event files and metrics.txt), the same reader the post-run report uses.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

from infra.lifecycle import OUTCOMES_DIR
from infra.report import REPORT_DIR, REPORT_FILE, series
from infra.run_state import RunState, log_tail

FAILURE_LINES = 10
# The metric a reader looks for first, when metrics.txt has it.
PREFERRED_METRICS = ("test_accuracy", "accuracy", "val_accuracy")


def run_dirs(root: Path) -> list[Path]:
    """Every run directory below `root` (`<job>/<run id>`, or `root` itself), newest first."""
    found = [p.parent for p in root.glob(f"*/*/{OUTCOMES_DIR}")]
    found += [root] if (root / OUTCOMES_DIR).is_dir() else []
    return sorted(found, key=lambda p: (p / OUTCOMES_DIR).stat().st_mtime, reverse=True)


def metric_text(state: RunState) -> str:
    """The run's headline metric: metrics.txt's, else the newest accuracy scalar."""
    for name in PREFERRED_METRICS:
        if name in state.metrics:
            return f"{name} {state.metrics[name]:.4f}"
    if state.metrics:
        name, value = next(iter(state.metrics.items()))
        return f"{name} {value:g}"
    accuracies = series(state, "acc")
    if accuracies:
        name, points = max(accuracies.items(), key=lambda item: item[1][-1].step)
        return f"{name} {points[-1].value:.4f} (step {points[-1].step})"
    return "no metric yet"


def _ago(epoch: float | None) -> str:
    return "-" if epoch is None else f"{max(0.0, time.time() - epoch):.0f}s ago"


def _outcome(state: RunState) -> str:
    if state.outcome == "running":
        return f"running (last output {_ago(state.last_activity)})"
    return state.describe()


def describe_run(state: RunState, shown_from: Path) -> Iterator[str]:
    wall = state.wall_seconds
    step = state.step if state.step is not None else "-"
    where = (
        state.directory.relative_to(shown_from)
        if state.directory.is_relative_to(shown_from)
        else state.directory
    )
    yield f"{where}: {_outcome(state)}"
    yield f"  step {step}, {metric_text(state)}, wall time {wall or 0:.1f}s"
    for replica, attempts in state.attempts.items():
        last = attempts[-1]
        status = state.result(last)
        count = len(attempts)
        restarts = f", {count - 1} restart{'s' * (count > 2)}" if count > 1 else ""
        log = last.log.relative_to(state.directory) if last.log else "no log"
        yield f"  {replica:<20} {count} attempt{'s' * (count > 1)}{restarts}: {status}; {log}"
    attempt = state.failed_attempt()
    if attempt is not None and attempt.log is not None:
        yield f"  last lines of {attempt.log}:"
        for line in log_tail(attempt.log, FAILURE_LINES):
            yield f"    | {line}"
    report = state.directory / REPORT_DIR / REPORT_FILE
    if report.exists():
        yield f"  report: {report}"
