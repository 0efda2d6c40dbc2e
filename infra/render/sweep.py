"""A sweep in the render and in the review: its trials (points), what runs at once, and the
most GPU-hours it can bill.

The render states the sweep as comment lines before the Kubernetes objects, so a pull request's
diff shows every trial that will run and what it holds; the summary compares the two sides'
trials by run id: a trial is created, kept (its run id unchanged: its objects are untouched,
and a trial that succeeded is not run again) or removed (its objects deleted).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from infra.config import StackConfig
from infra.config.sweep import at_once
from infra.config.sweep_points import point_text

BANNER = "# ===== Sweep"
_TRIAL = re.compile(r"^# trial (?P<run>\S+): (?P<point>.*)$")
_FACT = re.compile(r"^# sweep (?P<key>[a-z-]+): (?P<value>.*)$")


def _replicas(config: StackConfig) -> int:
    return sum(group.number for group in config.replica_groups)


def _gpus(config: StackConfig) -> int:
    return sum(group.number * group.gpu_count for group in config.replica_groups)


def _peak(values: list[int], parallel: int) -> int:
    """The most that `parallel` trials running together can hold."""
    return sum(sorted(values, reverse=True)[:parallel])


def gpu_hours(config: StackConfig) -> str:
    """The most GPU-hours the trials can bill: their GPUs x activeDeadlineSeconds (a Job is
    stopped at its deadline)."""
    gpus = sum(_gpus(trial) for trial in config.trials)
    if not gpus:
        return "0 (no trial requests a GPU)"
    deadline = config.job.active_deadline_seconds
    if deadline is None:
        return f"unbounded: job.activeDeadlineSeconds is unset ({gpus} GPUs over all trials)"
    return (
        f"{gpus * deadline / 3600:g} ({gpus} GPUs over all trials x {deadline} s "
        "job.activeDeadlineSeconds, which counts from a Job's creation, waiting included)"
    )


def _distinct_note(config: StackConfig) -> str:
    """Random draws from `values` can repeat a point: a repeat is the same run, run once."""
    samples = config.sweep.samples if config.sweep else None
    if samples and samples > len(config.trials):
        return f" ({samples} samples drew {len(config.trials)} distinct points)"
    return ""


def sweep_section(config: StackConfig) -> str:
    """The sweep's comment lines ("" for a stack without one)."""
    sweep = config.sweep
    if sweep is None or not config.trials:
        return ""
    parallel = at_once(config)
    replicas = _peak([_replicas(trial) for trial in config.trials], parallel)
    gpus = _peak([_gpus(trial) for trial in config.trials], parallel)
    lines = [
        f"{BANNER}: each trial is a run of its own (run id, Jobs, Services, directory) =====",
        f"# sweep method: {sweep.method}",
        f"# sweep trials: {len(config.trials)}{_distinct_note(config)}",
        f"# sweep at-once: {parallel} trials (sweep.parallel), at most {replicas} replicas "
        f"and {gpus} GPUs",
        f"# sweep gpu-hours: {gpu_hours(config)}",
        f"# sweep metric: {sweep.metric.name} ({sweep.metric.goal})",
        *(f"# trial {t.job.run_id}: {point_text(t.trial_point)}" for t in config.trials),
    ]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class SweepRender:
    trials: dict[str, str]  # run id: point
    facts: dict[str, str]  # at-once, gpu-hours, ...


def parse_sweep(text: str) -> SweepRender | None:
    """The sweep a render states, or None if it states none."""
    if f"\n{BANNER}" not in f"\n{text}":
        return None
    trials, facts = {}, {}
    for line in text.splitlines():
        if trial := _TRIAL.match(line):
            trials[trial["run"]] = trial["point"]
        elif fact := _FACT.match(line):
            facts[fact["key"]] = fact["value"]
    return SweepRender(trials, facts)


def sweep_lines(old_text: str, new_text: str) -> list[str]:
    """The review's lines on the sweep: trials created, kept and removed, then what runs at
    once and the GPU-hours; empty when neither side has a sweep."""
    old, new = parse_sweep(old_text), parse_sweep(new_text)
    if old is None and new is None:
        return []
    before = old.trials if old else {}
    after = new.trials if new else {}
    created = [run for run in after if run not in before]
    removed = [run for run in before if run not in after]
    kept = [run for run in after if run in before]
    lines = [
        f"Sweep: {len(after)} trials: created {len(created)}, kept {len(kept)} (untouched; "
        f"a succeeded one is not run again), removed {len(removed)}"
    ]
    if before and after and not kept:
        lines.append("  every trial changes: a key all trials share changed, so all run anew")
    lines += [f"  + {run}: {after[run]}" for run in created]
    lines += [f"  - {run}: {before[run]}" for run in removed]
    if new is not None:
        lines.append(f"  at once: {new.facts.get('at-once', '?')}")
        lines.append(f"  GPU-hours at most: {new.facts.get('gpu-hours', '?')}")
    return lines
