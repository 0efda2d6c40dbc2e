"""Runs launched on this machine: what `runs/<stack>/<job>/<run id>/` holds, printed.

The run state comes from `infra.records.run_state` (the supervisors' records and per-attempt logs,
the trainer's event files and metrics.txt), the same reader the post-run report uses.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from infra.lifecycle import OUTCOMES_DIR
from infra.local.plan import REPO
from infra.records.report import REPORT_DIR, REPORT_FILE, series
from infra.records.run_state import RunState, log_tail

FAILURE_LINES = 10
# The metric a reader looks for first, when metrics.txt has it.
PREFERRED_METRICS = ("test_accuracy", "accuracy", "val_accuracy")


# C0 and C1 controls but tab, DEL, and the bidirectional overrides: what can move the cursor,
# recolour or reorder what a terminal shows. A trainer's log must not paint "succeeded".
_UNSAFE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def inert(text: str) -> str:
    """`text` with every control character shown as its escape (`\\x1b`), never obeyed."""
    return _UNSAFE.sub(lambda match: repr(match[0])[1:-1], text)


def pasteable(path: Path) -> str:
    """A path a user can paste where they stand: relative to it when below it, else absolute."""
    path = path.absolute()
    return os.path.relpath(path) if path.is_relative_to(Path.cwd()) else str(path)


def runs_root(stack: str, runs_dir: Path | None) -> Path:
    """Where a stack's local runs are: `--runs-dir DIR`, else runs/STACK in the checkout."""
    return runs_dir.resolve() if runs_dir else REPO / "runs" / stack


def run_dirs(root: Path) -> list[Path]:
    """Every run directory below `root` (`<job>/<run id>`, or `root` itself), newest first."""
    found = [p.parent for p in root.glob(f"*/*/{OUTCOMES_DIR}")]
    found += [root] if (root / OUTCOMES_DIR).is_dir() else []
    return sorted(found, key=lambda p: (p / OUTCOMES_DIR).stat().st_mtime, reverse=True)


def metric_text(state: RunState) -> str:
    """The run's headline metric: metrics.txt's, else the newest accuracy scalar."""
    metric = headline_metric(state)
    if metric is None:
        return "no metric yet"
    name, value = metric
    if name in state.metrics:
        return f"{name} {value:.4f}" if name in PREFERRED_METRICS else f"{name} {value:g}"
    step = series(state, "acc")[name][-1].step
    return f"{name} {value:.4f} (step {step})"


def _ago(epoch: float | None) -> str:
    return "-" if epoch is None else f"{max(0.0, time.time() - epoch):.0f}s ago"


def _outcome(state: RunState) -> str:
    if state.outcome == "running":
        return f"running (last output {_ago(state.last_activity)})"
    return state.describe()


def describe_run(state: RunState) -> Iterator[str]:
    """The run as `tftrain status` prints it; every path pasteable, every log line inert."""
    wall = state.wall_seconds
    step = state.step if state.step is not None else "-"
    yield f"{pasteable(state.directory)}: {_outcome(state)}"
    yield f"  step {step}, {metric_text(state)}, wall time {wall or 0:.1f}s"
    for replica, attempts in state.attempts.items():
        last = attempts[-1]
        status = state.result(last)
        count = len(attempts)
        restarts = f", {count - 1} restart{'s' * (count > 2)}" if count > 1 else ""
        log = pasteable(last.log) if last.log else "no log"
        yield f"  {replica:<20} {count} attempt{'s' * (count > 1)}{restarts}: {status}; {log}"
    attempt = state.failed_attempt()
    if attempt is not None and attempt.log is not None:
        yield f"  last lines of {pasteable(attempt.log)}:"
        for line in log_tail(attempt.log, FAILURE_LINES):
            yield f"    | {inert(line)}"
    report = state.directory / REPORT_DIR / REPORT_FILE
    if report.exists():
        yield f"  report: {pasteable(report)}"


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def headline_metric(state: RunState) -> tuple[str, float] | None:
    """The metric `metric_text` shows, as (name, value)."""
    for name in PREFERRED_METRICS:
        if name in state.metrics:
            return name, state.metrics[name]
    if state.metrics:
        return next(iter(state.metrics.items()))
    accuracies = series(state, "acc")
    if accuracies:
        name, points = max(accuracies.items(), key=lambda item: item[1][-1].step)
        return name, points[-1].value
    return None


def run_record(state: RunState) -> dict[str, Any]:
    """The run for scripts (`--json`): what `describe_run` prints, as data, paths absolute."""
    metric = headline_metric(state)
    failure = state.failure
    report = state.directory / REPORT_DIR / REPORT_FILE
    return {
        "directory": str(state.directory),
        "job": state.directory.parent.name,
        "run_id": state.directory.name,
        "outcome": state.outcome,
        "step": state.step,
        "metric": None if metric is None else {"name": metric[0], "value": metric[1]},
        "started": _iso(state.started),
        "wall_seconds": state.wall_seconds,
        "failure": None
        if failure is None
        else {
            "replica": failure.replica,
            "attempt": failure.attempt,
            "exit_code": failure.exit_code,
            "cause": failure.describe(),
        },
        "replicas": [
            {
                "name": replica,
                "attempts": len(attempts),
                "result": state.result(attempts[-1]),
                "log": str(attempts[-1].log) if attempts[-1].log else None,
            }
            for replica, attempts in state.attempts.items()
        ],
        "report": str(report) if report.exists() else None,
    }
