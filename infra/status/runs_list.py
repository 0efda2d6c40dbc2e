"""`tftrain list`: every run on this machine, across stacks, newest first.

A run is a `runs/STACK/JOB/RUN_ID/` directory the local launcher left (`infra.records.run_state`
reads it). The trials of a sweep are one line, the sweep's, with its trials beneath: a run is a
trial when the stack file's sweep names its run id, or when the sweep's comparison
(`sweep-results.csv` beside the trials) lists it.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.config import ConfigError, load_stack
from infra.local.plan import REPO
from infra.records.run_state import RunState, read_run
from infra.status.local import headline_metric, run_dirs, run_record

PROG = "tftrain list"
SWEEP_RESULTS = "sweep-results.csv"  # infra.sweep.cli RESULTS

EXAMPLES = """\
examples:
  tftrain list                         every run here, newest first; a sweep's trials beneath it
  tftrain list --stack dev-sweep       one stack's runs
  tftrain list --json                  the same as JSON, for scripts

exit status:
  0  listed (also: no runs yet)
  2  bad arguments
"""


@dataclass(frozen=True)
class Listed:
    stack: str
    state: RunState

    @property
    def started(self) -> float:
        return self.state.started or 0.0


@dataclass(frozen=True)
class Sweep:
    stack: str
    job: str
    trials: list[Listed]

    @property
    def started(self) -> float:
        return min(trial.started for trial in self.trials)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="List every run on this machine (runs/STACK/JOB/RUN_ID), newest first.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--stack", metavar="STACK", help="only this stack's runs")
    parser.add_argument(
        "--runs-dir", type=Path, metavar="DIR", help="where the runs are (default: runs/)"
    )
    parser.add_argument(
        "--stacks-dir", type=Path, metavar="DIR", help="where Pulumi.STACK.yaml lives"
    )
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    return parser.parse_args(argv)


def trial_ids(stack: str, job_dir: Path, stacks_dir: Path | None) -> set[str]:
    """The run ids of the stack's sweep: its stack file's trials and its last comparison's."""
    ids: set[str] = set()
    try:
        config = load_stack(stack, stacks_dir)
        ids |= {trial.job.run_id for trial in config.trials}
    except (ConfigError, OSError):
        pass  # a stack file since removed or broken: its comparison may still say
    try:
        with (job_dir / SWEEP_RESULTS).open() as stream:
            ids |= {row["run_id"] for row in csv.DictReader(stream) if row.get("run_id")}
    except (OSError, KeyError, csv.Error):
        pass
    return ids


def collect(runs_root: Path, only: str | None, stacks_dir: Path | None) -> list[Listed | Sweep]:
    """Every run under runs_root, a sweep's trials grouped, newest first."""
    entries: list[Listed | Sweep] = []
    stacks = [runs_root / only] if only else sorted(p for p in runs_root.glob("*") if p.is_dir())
    for stack_dir in stacks:
        by_job: dict[Path, list[Listed]] = {}
        for run_dir in run_dirs(stack_dir):
            state = read_run(run_dir, with_scalars=False)
            if state is not None:
                by_job.setdefault(run_dir.parent, []).append(Listed(stack_dir.name, state))
        for job_dir, runs in by_job.items():
            trials = trial_ids(stack_dir.name, job_dir, stacks_dir)
            swept = [r for r in runs if r.state.directory.name in trials]
            entries += [r for r in runs if r not in swept]
            if swept:
                swept.sort(key=lambda r: r.started, reverse=True)
                entries.append(Sweep(stack_dir.name, job_dir.name, swept))
    return sorted(entries, key=lambda e: e.started, reverse=True)


def _when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch)) if epoch else "-"


def _metric(state: RunState) -> str:
    found = headline_metric(state)
    return "-" if found is None else f"{found[0]} {found[1]:.4g}"


def _row(stack: str, state: RunState, indent: str = "") -> list[str]:
    wall = state.wall_seconds
    return [
        stack,
        state.directory.parent.name,
        indent + state.directory.name,
        state.outcome,
        "-" if state.step is None else str(state.step),
        _metric(state),
        _when(state.started or 0.0),
        "-" if wall is None else f"{wall:.1f}s",
    ]


HEADER = ["STACK", "JOB", "RUN ID", "OUTCOME", "STEP", "METRIC", "STARTED", "WALL"]


def _sweep_outcome(sweep: Sweep) -> str:
    outcomes = [t.state.outcome for t in sweep.trials]
    counts = {o: outcomes.count(o) for o in dict.fromkeys(outcomes)}
    return ", ".join(f"{n} {o}" for o, n in counts.items())


def rows(entries: Sequence[Listed | Sweep]) -> Iterator[list[str]]:
    for entry in entries:
        if isinstance(entry, Listed):
            yield _row(entry.stack, entry.state)
            continue
        count = len(entry.trials)
        yield [entry.stack, entry.job, f"sweep ({count} trial{'s' * (count != 1)})",
               _sweep_outcome(entry), "-", "-", _when(entry.started), "-"]  # fmt: skip
        for trial in entry.trials:
            yield _row(trial.stack, trial.state, indent="  ")


def table(entries: Sequence[Listed | Sweep]) -> str:
    lines = [HEADER, *rows(entries)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADER))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )


def as_json(entries: Sequence[Listed | Sweep]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for entry in entries:
        if isinstance(entry, Listed):
            out.append({"stack": entry.stack, "kind": "run", **run_record(entry.state)})
        else:
            trials = [
                {"stack": t.stack, "kind": "run", **run_record(t.state)} for t in entry.trials
            ]
            out.append({"stack": entry.stack, "kind": "sweep", "job": entry.job, "trials": trials})
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    root = args.runs_dir.resolve() if args.runs_dir else REPO / "runs"
    entries = collect(root, args.stack, args.stacks_dir) if root.is_dir() else []
    if args.json:
        print(json.dumps(as_json(entries)))
    elif not entries:
        print(f"no runs on this machine (none under {root}); start one with: tftrain run STACK")
    else:
        print(table(entries))
    return 0


if __name__ == "__main__":
    sys.exit(main())
