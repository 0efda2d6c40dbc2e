"""The post-run report: a Markdown page and SVG plots, beside the run, once it has ended.

    <run dir>/report/report.md      outcome and cause, per-replica attempts and wall time,
                                    final metrics, the plots, the config that ran
    <run dir>/report/loss.svg       every scalar named like a loss, over steps
    <run dir>/report/accuracy.svg   every scalar named like an accuracy, over steps

Everything comes from `infra.records.run_state` (the supervisors' records and logs, the trainer's
event files and metrics.txt), so a user's trainer that logs scalars gets plots too. It is
rendered by whoever watches the run end with this project's Python (the local launcher at
the end of a launch, `python -m infra.status` for a run it finds ended), never inside the
trainer's image.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from infra import charts
from infra.charts import Panel, Series
from infra.config import StackConfig
from infra.records.run_state import RunState, log_tail
from infra.records.tensorboard_scalars import Point

REPORT_DIR = "report"
REPORT_FILE = "report.md"
# Plot name → what a scalar's tag must contain (case-insensitive) to be on it.
PLOTS = {"loss": "loss", "accuracy": "acc"}
FAILURE_LINES = 20
# Env names whose plain values are still not shown (a key pasted as plain text): any name
# holding one of these words, and PASS or PWD as a word of its own (DB_PASS, MYSQL_PWD).
_SECRET_NAME = re.compile(
    r"(?i)(password|passwd|secret|token|key|credential|(^|[_.-])(pass|pwd)($|[_.-]))"
)
MASK = "[masked]"


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _masked_env(env: Mapping[str, str]) -> dict[str, str]:
    return {name: MASK if _SECRET_NAME.search(name) else value for name, value in env.items()}


def _display(value: Any) -> Any:
    """Stack-file spelling (camelCase keys, lists for tuples), with secret-looking env masked."""
    if isinstance(value, Mapping):
        return {
            _camel(str(key)): (_masked_env(item) if key == "env" else _display(item))
            for key, item in value.items()
            if item not in (None, "", (), [], {})
        }
    if isinstance(value, list | tuple):
        return [_display(item) for item in value]
    return value


def config_that_ran(config: StackConfig) -> dict[str, Any]:
    """The sections that shape a run: job, its replica groups, hyperparameters, data. Secrets
    are Pulumi secrets, which read as `[secret]` here; env values named like one are masked."""
    job = {key: value for key, value in asdict(config.job).items() if key != "namespace"}
    shown: dict[str, Any] = {"image": config.image, "job": job}
    for group in config.replica_groups:
        if group.number:
            shown[group.type] = asdict(group)
    shown["hyperparams"] = asdict(config.hyperparams)
    data = {k: v for k, v in asdict(config.data).items() if k in ("input_path", "export_prefix")}
    if config.data.bucket:
        shown["data"] = {"bucket": config.data.bucket, **data}
    return _display(shown)


def _when(epoch: float | None) -> str:
    if epoch is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}s"


def series(state: RunState, fragment: str) -> dict[str, list[Point]]:
    """Every scalar whose tag contains `fragment`, named `<dir>/<tag>` (`<tag>` at the top)."""
    found = {}
    for directory, tags in state.scalars.items():
        for tag, points in tags.items():
            if fragment in tag.lower() and points:
                found[tag if directory == "." else f"{directory}/{tag}"] = points
    return found


@dataclass(frozen=True)
class PlotSpec:
    """What one plot says, decided before drawing: which run, which scale, which labels."""

    title: str
    log_scale: bool  # the values span a decade or more (a loss from 2.3 to 0.02)
    labels: dict[str, str]  # series name → legend label (a test metric with its value)


def plot_spec(name: str, run: str, lines: Mapping[str, Sequence[Point]]) -> PlotSpec:
    values = [p.value for points in lines.values() for p in points]
    log_scale = bool(values) and min(values) > 0 and max(values) >= 10 * min(values)
    labels = {
        series: f"{series} = {points[-1].value:.4f}" if "test" in series.lower() else series
        for series, points in lines.items()
    }
    return PlotSpec(f"{name}: {run}", log_scale, labels)


def plot(path: Path, name: str, run: str, lines: Mapping[str, Sequence[Point]]) -> None:
    """One SVG chart of `lines` (series name → points) over steps, 700 by 400 px."""
    spec = plot_spec(name, run, lines)
    # The test metric's value beside its last point too: the number the run is judged by.
    notes = {tag: f"{points[-1].value:.4f}" for tag, points in lines.items()}
    series = [
        Series(
            label, [(p.step, p.value) for p in lines[tag]], note="" if tag == label else notes[tag]
        )
        for tag, label in spec.labels.items()
    ]
    y_label = name + (" (log scale)" if spec.log_scale else "")
    charts.write(path, [Panel(spec.title, "step", y_label, series, y_log=spec.log_scale)], 700)


def outcome_lines(state: RunState) -> list[str]:
    """The outcome, and for a failed run the failing replica, attempt, exit and last lines."""
    if state.outcome == "succeeded":
        return ["**Succeeded.**"]
    if state.outcome == "running":
        return ["**Running** (this report was written before the run ended)."]
    if state.outcome in ("stopped", "lost"):
        return [f"**{state.outcome.capitalize()}**: {state.describe()}."]
    failure = state.failure
    if failure is None:
        return ["**Failed** (the failure record could not be read)."]
    lines = [
        f"**Failed**: `{failure.replica}` attempt {failure.attempt} "
        f"{failure.describe()}" + (f" on `{failure.host}`" if failure.host else "")
    ]
    attempt = state.failed_attempt()
    if attempt is not None and attempt.log is not None:
        tail = log_tail(attempt.log, FAILURE_LINES)
        lines += ["", f"Last lines of `{attempt.log}`:", "", "```", *tail, "```"]
    return lines


def _replica_rows(state: RunState) -> list[str]:
    rows = [
        "| replica | attempts | restarts | wall time | last exit | last log |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for replica, attempts in state.attempts.items():
        last = attempts[-1]
        wall = max(a.last_output for a in attempts) - min(a.started for a in attempts)
        exits = state.result(last)
        log = f"`{last.log.relative_to(state.directory)}`" if last.log else "-"
        rows.append(
            f"| {replica} | {len(attempts)} | {len(attempts) - 1} | {wall:.1f}s | {exits} | {log} |"
        )
    return rows


def _metric_rows(state: RunState) -> list[str]:
    rows = ["| metric | step | value | from |", "| --- | --- | --- | --- |"]
    for name, value in state.metrics.items():
        rows.append(f"| {name} | - | {value:g} | metrics.txt |")
    for directory, tags in state.scalars.items():
        for tag, points in tags.items():
            last = points[-1]
            rows.append(f"| {tag} | {last.step} | {last.value:.6g} | {directory}/ |")
    return rows if len(rows) > 2 else ["No metrics: no metrics.txt and no scalars."]


def write_report(
    state: RunState, title: str, config: Mapping[str, Any], destination: Path | None = None
) -> Path:
    """Render the report into `destination` (default `<run dir>/report`); its Markdown path."""
    out = destination or state.directory / REPORT_DIR
    out.mkdir(parents=True, exist_ok=True)
    plots = []
    for name, fragment in PLOTS.items():
        lines = series(state, fragment)
        if lines:
            plot(out / f"{name}.svg", name, title, lines)
            plots.append(f"![{name}]({name}.svg)")
        else:
            plots.append(f"No {name} scalar in the event files.")
    text = [
        f"# {title}",
        "",
        f"- run dir: `{state.directory}`",
        f"- run key: `{state.key}`, deploy generation `{state.generation}`",
        f"- started: {_when(state.started)}; wall time {_seconds(state.wall_seconds)}; "
        f"last step {state.step if state.step is not None else '-'}",
        "",
        "## Outcome",
        "",
        *outcome_lines(state),
        "",
        "## Metrics",
        "",
        *_metric_rows(state),
        "",
        "## Plots",
        "",
        *plots,
        "",
        "## Replicas",
        "",
        *_replica_rows(state),
        "",
        "## Config that ran",
        "",
        "```yaml",
        yaml.safe_dump(dict(config), sort_keys=False).rstrip(),
        "```",
        "",
    ]
    path = out / REPORT_FILE
    partial = path.with_name(f".{REPORT_FILE}.partial")
    partial.write_text("\n".join(text))
    partial.replace(path)
    return path
