"""`python -m infra.local <stack>` for a stack with a sweep: its trials, `parallel` at a time.

Each trial is a full run of the launcher (`python -m infra.local <stack> --trial <run id>`,
a child process of its own): the same replicas, supervisors, restarts and outcome records as
any run, in its own directory `runs/<stack>/<job>/<run id>`. What the sweep adds:
- a trial whose run already succeeded is not run again (its supervisors' record says so), so
  a rerun after Ctrl-C, a failure or a new point continues with the trials not yet done;
- the machine's cores are shared out: each running trial is pinned to its own slice of them
  (CPU affinity, inherited by its replicas), and the bundled trainer splits a slice among
  the trial's processes, so trials do not thrash each other;
- Ctrl-C (or SIGTERM, SIGHUP) stops every running trial the way the launcher stops a run;
- once the trials have ended, the comparison (`infra.sweep`) is printed and written.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from infra.config import StackConfig
from infra.config.sweep import at_once
from infra.config.sweep_points import point_text
from infra.lifecycle import OUTCOMES_DIR, run_key
from infra.local import process
from infra.local.plan import REPO, default_output_dir
from infra.local.supervisor import (
    LAUNCHER,
    STOP_SIGNALS,
    Stopped,
    describe,
    exit_status,
    raise_stopped,
)

_POLL_SECONDS = 0.2


def runs_dir(args: argparse.Namespace, config: StackConfig) -> Path:
    """Where the trials' run directories go: --output-dir, else runs/<stack>/<job>."""
    if args.output_dir:
        return args.output_dir.resolve()
    return default_output_dir(args.stack, config.trials[0]).parent


def succeeded(run_dir: Path, trial: StackConfig) -> bool:
    return (run_dir / OUTCOMES_DIR / f"succeeded.{run_key(trial)}").exists()


def trial_argv(args: argparse.Namespace, run_dir: Path, run_id: str) -> list[str]:
    """The launcher's command line for one trial: this launch's options, one trial."""
    # -P: the trial's launcher starts where the user's single runs start (their project), and
    # must not import a `trainer` of theirs for its own; infra comes from TRIAL_PYTHONPATH.
    argv = [sys.executable, "-P", "-m", "infra.local", args.stack, "--trial", run_id]
    argv += ["--output-dir", str(run_dir)]
    if args.stacks_dir:
        argv += ["--stacks-dir", str(args.stacks_dir.resolve())]
    for assignment in args.set:
        argv += ["--set", assignment]
    for flag, path in (("--input", args.input), ("--export", args.export)):
        if path:
            argv += [flag, str(path.resolve())]
    # Unset options keep their defaults in the trial too (--grace is derived from the run).
    for flag, value in (("--timeout", args.timeout), ("--grace", args.grace)):
        if value is not None:
            argv += [flag, str(value)]
    argv += ["--stop-grace", str(args.stop_grace)]
    return argv + (["--fresh"] if args.fresh else [])


def trial_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """The sweep's env for a trial's launcher, with the checkout on PYTHONPATH: it starts in
    the user's directory, from which `infra` need not be importable. Its replicas get only
    what the plan gives them (`infra.local.plan.HOST_ENV`), never this PYTHONPATH."""
    paths = [str(REPO), *filter(None, [environ.get("PYTHONPATH")])]
    return {**environ, "PYTHONPATH": os.pathsep.join(paths)}


def core_slices(cores: Sequence[int], parallel: int) -> list[set[int]]:
    """`parallel` slices of the machine's cores: each trial its own, as even as possible; with
    more trials than cores, trials share a core."""
    if parallel >= len(cores):
        return [{cores[i % len(cores)]} for i in range(parallel)]
    size, extra = divmod(len(cores), parallel)
    slices, start = [], 0
    for i in range(parallel):
        end = start + size + (i < extra)
        slices.append(set(cores[start:end]))
        start = end
    return slices


def _pin(child: process.Child, cores: set[int]) -> None:
    # Before the trial's launcher has started its replicas (it first reads the stack), which
    # inherit the affinity. Linux only; elsewhere the trials share the machine unpinned.
    if hasattr(os, "sched_setaffinity"):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(child.pid, cores)


class SweepRun:
    """Starts pending trials as slots free up, until every trial has ended."""

    def __init__(self, args: argparse.Namespace, config: StackConfig) -> None:
        self.args = args
        self.config = config
        self.root = runs_dir(args, config)
        names = [LAUNCHER, *(f"trial {n}" for n in range(1, len(config.trials) + 1))]
        self.output = process.PrefixedOutput(names, sys.stdout)
        self.running: dict[int, tuple[process.Child, set[int]]] = {}
        self.ended: dict[int, int] = {}  # trial number: exit status

    def say(self, text: str) -> None:
        self.output.line(LAUNCHER, text)

    def _start(self, number: int, trial: StackConfig, cores: set[int]) -> None:
        name = f"trial {number}"
        argv = trial_argv(self.args, self.root / trial.job.run_id, trial.job.run_id)
        # Where the user started the sweep, as for a single run: `python t.py` resolves there.
        child = process.spawn(name, argv, trial_environ(os.environ), Path.cwd(), self.output)
        _pin(child, cores)
        self.running[number] = (child, cores)
        self.say(f"started {name}: {trial.job.run_id} ({point_text(trial.trial_point)})")

    def _reap(self) -> list[set[int]]:
        freed = []
        for number, (child, cores) in list(self.running.items()):
            code = child.poll()
            if code is not None:
                del self.running[number]
                self.ended[number] = exit_status(code)
                self.say(f"trial {number} ended: {describe(code)}")
                freed.append(cores)
        return freed

    def run(self, pending: list[tuple[int, StackConfig]]) -> int:
        cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0]
        free = core_slices(cores, at_once(self.config))
        try:
            while pending or self.running:
                free += self._reap()
                while pending and free:
                    number, trial = pending.pop(0)
                    self._start(number, trial, free.pop(0))
                time.sleep(_POLL_SECONDS)
        except Stopped as stop:
            self.say(f"{stop} received: stopping every running trial")
            self._stop()
            return 128 + stop.signum
        return 0 if all(code == 0 for code in self.ended.values()) else 1

    @property
    def children(self) -> list[process.Child]:
        return [child for child, _ in self.running.values()]

    def _stop(self) -> None:
        # Each trial's launcher stops its replicas (SIGTERM, then SIGKILL after stop-grace).
        process.stop(self.children, 2 * self.args.stop_grace + 5)


def run_sweep(args: argparse.Namespace, config: StackConfig, overrides: Sequence[str]) -> int:
    """Every trial not yet succeeded, `parallel` at a time; then the comparison. `overrides`:
    the launch's `--set` assignments, with --input/--export as theirs."""
    trials = list(enumerate(config.trials, 1))
    sweep = SweepRun(args, config)
    pending = [
        (n, t) for n, t in trials if args.fresh or not succeeded(sweep.root / t.job.run_id, t)
    ]
    waiting = {number for number, _ in pending}
    assert config.sweep is not None
    sweep.say(
        f"stack {args.stack}: sweep of {len(trials)} trials ({config.sweep.method}), "
        f"{at_once(config)} at a time (sweep.parallel)"
    )
    for number, trial in trials:
        done = "" if number in waiting else " (succeeded before: not run again)"
        sweep.say(f"trial {number}: {trial.job.run_id} {point_text(trial.trial_point)}{done}")
    previous = {signum: signal.signal(signum, raise_stopped) for signum in STOP_SIGNALS}
    try:
        status = sweep.run(pending)
    except Stopped as stop:  # a second signal while the first was stopping the trials
        status = 128 + stop.signum
    finally:
        for signum in previous:
            signal.signal(signum, signal.SIG_IGN)  # nothing may interrupt the last resort
        try:
            process.kill(sweep.children)  # each trial launcher's replicas die with it
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
    if status >= 128:
        sweep.say("stopped: run the same command again to continue with the trials not done")
    elif sweep.root.is_dir():
        compare_trials(args, overrides, sweep.root)
    sweep.say(f"exit status {status}")
    return status


def compare_trials(args: argparse.Namespace, overrides: Sequence[str], root: Path) -> None:
    """The comparison, by its own command (`infra.sweep` reads runs of the cluster too)."""
    argv = [sys.executable, "-m", "infra.sweep", args.stack, "--runs-dir", str(root)]
    if args.stacks_dir:
        argv += ["--stacks-dir", str(args.stacks_dir.resolve())]
    for assignment in overrides:
        argv += ["--set", assignment]
    sys.stdout.flush()
    subprocess.run(argv, cwd=REPO, check=False)


def add_trial_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trial",
        metavar="RUN_ID",
        help="a stack with a sweep: run only this trial (default: every trial not yet "
        "succeeded, sweep.parallel at a time; --output-dir is then the directory of the "
        "trials' RUN_ID directories, default runs/STACK/JOB)",
    )


def refused_options(args: argparse.Namespace) -> str | None:
    """Options of one run that a sweep cannot take, and why (None: none given)."""
    if args.tensorboard:
        return (
            "--tensorboard: serve the sweep's runs with python -m tensorboard.main --logdir "
            f"{Path('runs') / args.stack}"
        )
    return None
