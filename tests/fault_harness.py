"""The fault-run driver: the dev stack's topology under the local launcher, one replica signalled.

Runs of one small configuration (1 ps, 2 workers, chief; the first 8,192 training
examples; a checkpoint every 50 steps): a baseline with no fault, or a run in which
worker 1, the chief or the ps gets SIGKILL (a crash) or SIGTERM (a preemption notice) once
the chief has logged a given step. The launcher restarts the replica on its port
(`job.backoffLimit`); after a chief or ps fault the restarted chief resumes from the latest
checkpoint: after a SIGKILL the last periodic one, after a SIGTERM the one the chief saved at
its current step (`trainer.preemption`). `run` returns what happened (`Outcome`).

tests/test_fault_tolerance.py asserts on what it returns; `python -m bench.fault_runs`
draws the fault steps and prints the table in docs/benchmarks.md.
"""

from __future__ import annotations

import math
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHIEF = "mnist-chief-0"
# Worker 1, not worker 0: the run must not depend on which worker is lost.
TARGETS = {"worker": "mnist-worker-1", "chief": CHIEF, "ps": "mnist-ps-0"}
FAULTS = tuple(TARGETS)
SIGNALS = ("KILL", "TERM")
# A kill trigger that is not a step: the chief's accuracy line, printed after the final
# checkpoint and before the export and the supervisor's end-of-run marker.
AFTER_TRAINING = "Test-Accuracy"

# `[name]   text`, as the launcher prefixes every line.
_LINE = re.compile(r"^\[(?P<name>[^\]]+)\] +(?P<text>.*)$")
_STARTED = re.compile(r"^started (?P<name>\S+) \(pid (?P<pid>\d+)\)$")
_STEP = re.compile(r"^Step: (?P<step>\d+)/\d+ .*Cost: (?P<cost>[\d.]+)")
_PREEMPTED = re.compile(r"^tftrain: preempted \(.*\): saved a checkpoint at step (?P<step>\d+)")
_RESUMED = re.compile(r"^Resumed from checkpoint \S+ at step (?P<step>\d+)")
_ACCURACY = re.compile(r"^Test-Accuracy: (?P<accuracy>[\d.]+)$")
_SUMMARY_ROW = re.compile(
    r"^ *(?P<name>mnist-\S+) +(?P<status>exit -?\d+|killed by \S+|running|not started)"
    r"(?: +[\d.]+s(?:  (?P<restarts>\d+) restarts?)?)?"
)


@dataclass(frozen=True)
class RunConfig:
    """The small run: long enough that a kill lands mid-run, short enough for a test."""

    train_examples: int = 8192
    epochs: int = 8
    batch_size: int = 128
    checkpoint_steps: int = 50
    log_steps: int = 10
    # Small, so the chief hears of progress often and a kill lands near the step it waited for.
    steps_per_execution: int = 5
    backoff_limit: int = 3
    timeout: float = 300.0  # the launcher's --timeout: a hang fails the run, not the caller
    # Other stack keys, e.g. a MultiWorkerMirrored topology (no chief, no ps); `primary`
    # is then the replica that logs progress and saves: worker 0.
    extra_overrides: tuple[str, ...] = ()
    primary: str = CHIEF

    @property
    def final_step(self) -> int:
        return self.epochs * math.ceil(self.train_examples / self.batch_size)

    def overrides(self) -> list[str]:
        values = {
            "hyperparams.epochs": self.epochs,
            "hyperparams.batchSize": self.batch_size,
            "hyperparams.checkpointSteps": self.checkpoint_steps,
            "hyperparams.logSteps": self.log_steps,
            "hyperparams.stepsPerExecution": self.steps_per_execution,
            "job.backoffLimit": self.backoff_limit,
        }
        # Small data: the trainer's own knob, through job.env as a replica gets any env.
        values["job.env.TFTRAIN_TRAIN_EXAMPLES"] = self.train_examples
        return [*(f"{key}={value}" for key, value in values.items()), *self.extra_overrides]

    def command(self, output_dir: Path) -> list[str]:
        sets = [arg for override in self.overrides() for arg in ("--set", override)]
        return [sys.executable, "-m", "infra.local", "dev", *sets,
                "--output-dir", str(output_dir), "--timeout", f"{self.timeout:g}"]  # fmt: skip

    def shell_command(self, output_dir: Path) -> str:
        """The command as a person would type it."""
        argv = ["python", *self.command(output_dir)[1:]]
        return shlex.join(argv)

    def random_step(self, rng: random.Random) -> int:
        """A logged step past the first checkpoint and at least a checkpoint before the end."""
        first = self.checkpoint_steps // self.log_steps + 1
        last = (self.final_step - self.checkpoint_steps) // self.log_steps
        return self.log_steps * rng.randint(first, last)


@dataclass(frozen=True)
class Fault:
    """Send `signal` to `kind`'s replica once the chief logs step `at` (or a line starting so)."""

    kind: str  # worker, chief or ps
    at: int | str
    signal: signal.Signals = signal.SIGKILL

    @property
    def name(self) -> str:
        return f"{self.kind}-{self.signal.name.removeprefix('SIG').lower()}"

    @property
    def target(self) -> str:
        return TARGETS[self.kind]

    def fires_on(self, step: int | None, text: str) -> bool:
        if isinstance(self.at, str):
            return text.startswith(self.at)
        return step is not None and step >= self.at


@dataclass
class Incarnation:
    """One process of a replica, and what it logged if it is the chief."""

    pid: int
    steps: list[int] = field(default_factory=list)
    costs: list[float] = field(default_factory=list)
    resumed_step: int | None = None
    preempted_step: int | None = None  # the step it saved on SIGTERM
    first_step_at: float | None = None  # seconds into the run of its first progress line


@dataclass
class Outcome:
    fault: Fault | None
    command: str
    status: int
    seconds: float
    lines: list[str]  # the launcher's output, as read
    line_times: list[float]  # seconds into the run, of each line
    planned_step: int
    incarnations: dict[str, list[Incarnation]]
    primary: str
    killed_at: float | None = None  # seconds into the run
    step_at_kill: int | None = None  # the chief's last logged step when the kill was sent
    accuracy: float | None = None
    final_status: dict[str, str] = field(default_factory=dict)  # from the launcher's summary
    restarts: dict[str, int] = field(default_factory=dict)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def timed_output(self) -> str:
        """The output with seconds into the run before each line: where the time went."""
        pairs = zip(self.line_times, self.lines, strict=True)
        return "".join(f"{at:7.2f} {line}" for at, line in pairs)

    @property
    def chief_runs(self) -> list[Incarnation]:
        return self.incarnations.get(self.primary, [])

    @property
    def last_step_before_fault(self) -> int | None:
        """K: the last step the chief logged before the fault ended it (all that the first
        chief logged, since lines already written may arrive after the kill was sent), or,
        if the chief carried on, its last step when the kill was sent."""
        if self.fault is None:
            return None
        # The chief the fault ended: the last one before the final chief that trained. A
        # chief that died before its first step (a start-up crash the launcher restarted,
        # seen once under load as exit 139) is not it.
        ended = [r for r in self.chief_runs[:-1] if r.steps or r.preempted_step is not None]
        first = ended[-1] if ended else None
        if first:
            # A chief saving on SIGTERM ran on past its last logged step, to the one it saved.
            return max([*first.steps[-1:], *filter(None, [first.preempted_step])])
        return self.step_at_kill

    @property
    def resumed_step(self) -> int | None:
        """R: where the restarted chief resumed, if the chief was restarted."""
        runs = self.chief_runs
        return runs[-1].resumed_step if len(runs) > 1 else None

    @property
    def recovery_seconds(self) -> float | None:
        """From the kill to the restarted chief's first progress line: the time training
        stood still (None when the chief carried on, as after a worker kill)."""
        runs = self.chief_runs
        if self.killed_at is None or len(runs) < 2 or runs[-1].first_step_at is None:
            return None
        return runs[-1].first_step_at - self.killed_at

    @property
    def steps_lost(self) -> int:
        """K - R: logged steps that had to run again; 0 when the chief carried on."""
        before, resumed = self.last_step_before_fault, self.resumed_step
        return before - resumed if before is not None and resumed is not None else 0

    @property
    def final_step(self) -> int | None:
        """The last chief's last step: logged, or resumed from if it had none left to run."""
        if not self.chief_runs:
            return None
        last = self.chief_runs[-1]
        return last.steps[-1] if last.steps else last.resumed_step


class _Watch:
    """Reads the launcher's output as it comes and fires the fault once."""

    def __init__(self, fault: Fault | None, primary: str) -> None:
        self.fault = fault
        self.primary = primary
        self.incarnations: dict[str, list[Incarnation]] = {}
        self.lines: list[str] = []
        self.times: list[float] = []
        self.started = time.monotonic()
        self.killed_at: float | None = None
        self.step_at_kill: int | None = None
        self.accuracy: float | None = None

    def feed(self, line: str) -> None:
        self.lines.append(line)
        self.times.append(time.monotonic() - self.started)
        match = _LINE.match(line.rstrip("\n"))
        if not match:
            return
        name, text = match["name"], match["text"]
        if name == "launcher" and (started := _STARTED.match(text)):
            self.incarnations.setdefault(started["name"], []).append(
                Incarnation(int(started["pid"]))
            )
        elif name == self.primary and self.incarnations.get(name):
            self._chief_line(self.incarnations[name][-1], text, self.times[-1])

    def _chief_line(self, chief: Incarnation, text: str, at: float) -> None:
        step = None
        if logged := _STEP.match(text):
            step = int(logged["step"])
            if not chief.steps:
                chief.first_step_at = at
            chief.steps.append(step)
            chief.costs.append(float(logged["cost"]))
        elif resumed := _RESUMED.match(text):
            chief.resumed_step = int(resumed["step"])
        elif preempted := _PREEMPTED.match(text):
            chief.preempted_step = int(preempted["step"])
        elif accuracy := _ACCURACY.match(text):
            self.accuracy = float(accuracy["accuracy"])
        if self.fault and self.killed_at is None and self.fault.fires_on(step, text):
            self._kill(self.fault, chief)

    def _kill(self, fault: Fault, chief: Incarnation) -> None:
        # The pid the launcher printed for the replica's latest process: the launcher's
        # child, so the pid cannot be reused before the launcher has seen it exit.
        os.kill(self.incarnations[fault.target][-1].pid, fault.signal)
        self.killed_at = time.monotonic() - self.started
        self.step_at_kill = chief.steps[-1] if chief.steps else None


def run(
    config: RunConfig, output_dir: Path, fault: Fault | None = None, echo: bool = False
) -> Outcome:
    """One launcher run, with at most one fault; `echo` streams the output meanwhile."""
    env = dict(os.environ)
    watch = _Watch(fault, config.primary)
    launcher = subprocess.Popen(
        config.command(output_dir),
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    # The launcher's --timeout ends a hung run; this is only in case the launcher hangs.
    backstop = threading.Timer(config.timeout + 60, launcher.kill)
    backstop.start()
    try:
        assert launcher.stdout is not None
        for line in launcher.stdout:
            watch.feed(line)
            if echo:
                print(line, end="", flush=True)
        status = launcher.wait()
    finally:
        backstop.cancel()
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
    final_status, restarts = _summary("".join(watch.lines))
    return Outcome(
        fault=fault,
        command=config.shell_command(output_dir),
        status=status,
        seconds=time.monotonic() - watch.started,
        lines=watch.lines,
        line_times=watch.times,
        planned_step=config.final_step,
        incarnations=watch.incarnations,
        primary=config.primary,
        killed_at=watch.killed_at,
        step_at_kill=watch.step_at_kill,
        accuracy=watch.accuracy,
        final_status=final_status,
        restarts=restarts,
    )


def _summary(output: str) -> tuple[dict[str, str], dict[str, int]]:
    """Each replica's final status and restart count, from the launcher's summary."""
    statuses: dict[str, str] = {}
    restarts: dict[str, int] = {}
    summary = output[output.rindex("summary:") :] if "summary:" in output else ""
    for line in summary.splitlines():
        match = _LINE.match(line)
        row = _SUMMARY_ROW.match(match["text"]) if match else None
        if row:
            statuses[row["name"]] = row["status"]
            restarts[row["name"]] = int(row["restarts"] or 0)
    return statuses, restarts
