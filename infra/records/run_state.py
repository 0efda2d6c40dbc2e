"""What a run's directory says about the run: read, never written.

The replica supervisors (`infra/lifecycle/supervise.sh`) keep, in the run's output dir:
  .tftrain-run/succeeded.KEY            the run succeeded
  .tftrain-run/failed.KEY.G             it failed in deploy generation G: "<replica> exit
                                        <code> attempt <n> on <host>"
  .tftrain-run/attempts/KEY.G.NAME.N/   attempt N of replica NAME: its `start` (epoch s),
                                        `beat` (epoch s, every 5 s while its supervisor
                                        lives) and, once ended, `exit` ("<status> <how>")
  replicas/NAME/logs/KEY.G.NAME.N.log   that attempt's output, ending "... ended: exit S"
and the trainer (any trainer) its TensorBoard event files and, optionally, metrics.txt
("<name> <number>" lines). `read_run` turns them into one `RunState`, which the status
command prints and the post-run report renders, so both say the same thing.

The state is that of the run's newest key and generation: a relaunch (locally) or a changed
deploy (in the cluster) starts counting attempts again, and the earlier ones are history.
A run is "running" only while an attempt that has not ended still beats: one whose
supervisor died (a replica killed whole, a full volume) is "lost" once its heartbeat is older
than `lost_after` seconds, as the supervisors themselves judge it. A local launch's record
(`launcher.G`, infra/records/launch_record.py) tells sooner where this machine can check it:
a launcher gone without ending took its supervisors with it.
"""

from __future__ import annotations

import re
import signal
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from infra.lifecycle import LOST_AFTER_SECONDS, OUTCOMES_DIR
from infra.records.launch_record import Launch, read_launch
from infra.records.tensorboard_scalars import Point, read_run_scalars
from infra.replica_plan.plan import LOGS_DIR, REPLICAS_DIR

METRICS_FILE = "metrics.txt"
_ENDED = re.compile(r"^tftrain-supervise: (\S+) attempt (\d+) ended: exit (\d+)\b", re.MULTILINE)
# How an attempt ended (its `exit` record): its command ended by itself; the run's success or
# failure stopped it; it was told to stop from outside (preemption, Ctrl-C) and given back.
EXITED, RUN_ENDED, GIVEN_BACK = "exited", "run-ended", "given-back"
RESUME = "run the same command again to continue from its last checkpoint"
_TAIL_BYTES = 64 * 1024
_CLAIM = re.compile(r"^(?P<key>.+)\.(?P<generation>[^.]+)\.(?P<replica>[^.]+)\.(?P<number>\d+)$")


@dataclass(frozen=True)
class Attempt:
    replica: str
    number: int
    started: float  # epoch seconds
    last_output: float  # its last sign of life: its heartbeat, its log's last write
    exit_code: int | None  # None: not ended (running, or its supervisor was killed)
    log: Path | None
    how: str | None = None  # EXITED, RUN_ENDED, GIVEN_BACK; None: not recorded

    @property
    def ended(self) -> bool:
        return self.exit_code is not None


@dataclass(frozen=True)
class Failure:
    replica: str
    exit_code: int | None  # None: lost (it stopped beating on its last attempt, no exit seen)
    attempt: int
    host: str

    def describe(self) -> str:
        if self.exit_code is None:
            return "lost on its last attempt (killed with its supervisor: no heartbeat)"
        return describe_exit(self.exit_code)


@dataclass(frozen=True)
class RunState:
    directory: Path
    key: str
    generation: str
    # "running", "succeeded", "failed", "stopped" (every attempt ended, no outcome recorded:
    # stopped from outside), or "lost" (an attempt never ended and stopped beating)
    outcome: str
    failure: Failure | None
    attempts: dict[str, list[Attempt]]  # replica → its attempts, in order
    metrics: dict[str, float]
    scalars: dict[str, dict[str, list[Point]]] = field(default_factory=dict)
    # How long an attempt that has not ended may be silent before it is lost (see read_run).
    lost_after: float = LOST_AFTER_SECONDS
    launch: Launch = Launch.UNKNOWN  # a local launch's launcher, as far as this machine knows
    # When the records were read: every silence is measured to it, so the outcome and each
    # attempt's result are one snapshot (a clock read per line could cross lost_after between
    # a "running" outcome and a "lost" attempt).
    read_at: float = field(default_factory=time.time)

    @property
    def started(self) -> float | None:
        return min((a.started for runs in self.attempts.values() for a in runs), default=None)

    @property
    def last_activity(self) -> float | None:
        return max((a.last_output for runs in self.attempts.values() for a in runs), default=None)

    @property
    def wall_seconds(self) -> float | None:
        start = self.started
        end = self.read_at if self.outcome == "running" else self.last_activity
        return None if start is None or end is None else max(0.0, end - start)

    @property
    def step(self) -> int | None:
        """The newest step of any scalar, else metrics.txt's global_step."""
        steps = [p.step for tags in self.scalars.values() for ps in tags.values() for p in ps]
        if steps:
            return max(steps)
        step = self.metrics.get("global_step")
        return None if step is None else int(step)

    def describe(self) -> str:
        """The outcome in one line, for status and the report alike; for a run that did not
        end by itself, its last step and how to continue it."""
        if self.outcome in ("stopped", "lost"):
            silent = ", ".join(
                f"{a.replica} attempt {a.number} ({self.read_at - a.last_output:.0f}s)"
                for a in (runs[-1] for runs in self.attempts.values())
                if not a.ended
            )
            if self.outcome == "stopped":
                how = "stopped from outside before it ended (Ctrl-C, a preemption, --timeout)"
            elif self.launch is Launch.GONE:
                how = f"lost: its launcher was killed, and its replicas with it ({silent})"
            else:
                how = (
                    f"lost: no heartbeat from {silent} (its supervisor was killed: a killed "
                    "launcher, a replica killed whole, a full volume)"
                )
            step = "" if self.step is None else f" at step {self.step}"
            return f"{how}{step}; {RESUME}"
        if self.outcome == "failed" and self.failure is not None:
            failure = self.failure
            return f"FAILED: {failure.replica} attempt {failure.attempt} {failure.describe()}"
        return self.outcome

    def result(self, attempt: Attempt) -> str:
        """How an attempt ended, as a reader wants it: a replica the run's end stopped was
        stopped, whatever its command returned on SIGTERM."""
        failed = self.failure is not None and (self.failure.replica, self.failure.attempt) == (
            attempt.replica,
            attempt.number,
        )
        if attempt.exit_code is None:
            silence = self.read_at - attempt.last_output
            # The supervisors' own verdict stands even if a late log write looks recent.
            judged_lost = failed and self.failure is not None and self.failure.exit_code is None
            if self.launch is Launch.ENDED and not judged_lost:
                return "killed by the launcher as the run stopped (no exit recorded)"
            if self.launch is Launch.GONE and not judged_lost:
                return f"lost (no exit: its launcher was killed; last heartbeat {silence:.0f}s ago)"
            if not _beating(attempt, self.lost_after, self.read_at) or judged_lost:
                return f"lost (no exit, no heartbeat for {silence:.0f}s)"
            if self.outcome == "running":
                return "running"
            # The run's end is recorded and this attempt still beats: its supervisor is
            # stopping it (a follower's grace), not lost.
            return f"stopping at the run's end (last heartbeat {max(0.0, silence):.0f}s ago)"
        text = describe_exit(attempt.exit_code)
        if attempt.how == GIVEN_BACK:
            return f"given back (told to stop from outside, not counted as a failure): {text}"
        if attempt.how == RUN_ENDED:
            return f"stopped at the run's end: {text}"
        last = self.attempts.get(attempt.replica, [attempt])[-1] is attempt
        # Records without how an attempt ended (an older supervisor's): the last attempt of a
        # replica that is not the run's failure was stopped by the run's end.
        ended = self.outcome in ("succeeded", "failed")
        if attempt.how is None and attempt.exit_code and not failed and last and ended:
            return f"stopped at the run's end: {text}"
        return text

    def failed_attempt(self) -> Attempt | None:
        if self.failure is None:
            return None
        runs = self.attempts.get(self.failure.replica, [])
        return next((a for a in runs if a.number == self.failure.attempt), None)


def describe_exit(code: int) -> str:
    """`exit 3`, or `killed by SIGKILL (exit 137)`: a shell reports death by signal N as 128+N."""
    if code > 128:
        try:
            return f"killed by {signal.Signals(code - 128).name} (exit {code})"
        except ValueError:
            pass
    return f"exit {code}"


def read_metrics(path: Path) -> dict[str, float]:
    """metrics.txt's "<name> <number>" lines; any other line is skipped."""
    metrics: dict[str, float] = {}
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return metrics
    for line in text.splitlines():
        words = line.split()
        if len(words) == 2:
            try:
                metrics[words[0]] = float(words[1])
            except ValueError:
                continue
    return metrics


def log_tail(path: Path, lines: int) -> list[str]:
    """The last `lines` lines of a log, read from its end only."""
    try:
        with path.open("rb") as log:
            log.seek(0, 2)
            size = log.tell()
            log.seek(max(0, size - _TAIL_BYTES))
            text = log.read().decode(errors="replace")
    except OSError:
        return []
    return text.splitlines()[-lines:] if lines else []


def _exit_code(log: Path | None, replica: str, number: int) -> int | None:
    if log is None:
        return None
    ends = [m for m in _ENDED.finditer("\n".join(log_tail(log, 200)))]
    for match in reversed(ends):
        if match.group(1) == replica and int(match.group(2)) == number:
            return int(match.group(3))
    return None


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _words(path: Path) -> list[str]:
    try:
        return path.read_text(errors="replace").split()
    except OSError:
        return []


def _epoch(path: Path) -> float | None:
    """A record holding the writer's clock (`date +%s`), as written by the supervisor."""
    words = _words(path)
    return float(words[0]) if words and words[0].isdigit() else None


def _ending(claim: Path | None) -> tuple[int | None, str | None]:
    """The attempt's `exit` record: its status and how it ended, if written."""
    words = _words(claim / "exit") if claim else []
    if not words or not words[0].isdigit():
        return None, None
    return int(words[0]), words[1] if len(words) > 1 else None


def _names(run_dir: Path) -> dict[str, tuple[Path | None, Path | None]]:
    """Every attempt name KEY.G.NAME.N with its claim and its log, where they exist (a claim
    without a log: an attempt whose log could not be written; a log without a claim: records
    of an older supervisor, which gave a preempted attempt's claim back)."""
    found: dict[str, list[Path | None]] = defaultdict(lambda: [None, None])
    attempts = run_dir / OUTCOMES_DIR / "attempts"
    if attempts.is_dir():
        for claim in attempts.iterdir():
            found[claim.name][0] = claim
    for log in run_dir.glob(f"{REPLICAS_DIR}/*/{LOGS_DIR}/*.log"):
        found[log.name.removesuffix(".log")][1] = log
    return {name: (claim, log) for name, (claim, log) in found.items()}


def _attempts(run_dir: Path) -> dict[tuple[str, str], list[Attempt]]:
    """By (key, generation), the attempts of every replica."""
    out: dict[tuple[str, str], list[Attempt]] = defaultdict(list)
    for name, (claim, log) in _names(run_dir).items():
        match = _CLAIM.match(name)
        if not match:
            continue
        replica, number = match["replica"], int(match["number"])
        # Its own record of the start; the claim's mtime moves with every record written
        # into it, so it is only a fallback for records of older supervisors.
        started = (_epoch(claim / "start") or _mtime(claim)) if claim else None
        signs = [
            t
            for t in (_mtime(log) if log else None, _epoch(claim / "beat") if claim else None)
            if t
        ]
        started = started or min(signs, default=0.0)
        exit_code, how = _ending(claim)
        live = claim is not None and (claim / "beat").exists() and not (claim / "exit").exists()
        if exit_code is None and not live:
            # A live claim's log may hold an "ended" line of an earlier supervisor's attempt
            # given back under the same number and appended to: not this attempt's end.
            exit_code = _exit_code(log, replica, number)
        last = max([started, *signs])
        out[(match["key"], match["generation"])].append(
            Attempt(replica, number, started, last, exit_code, log, how)
        )
    return out


def read_failure(path: Path) -> Failure | None:
    """A `failed.KEY.G` record, or None if it cannot be read."""
    try:
        words = path.read_text(errors="replace").split()
    except OSError:
        return None
    # supervise.sh writes "<replica> exit <code> attempt <n> on <host>", or, for a replica
    # that stopped beating on its last attempt, "<replica> lost attempt <n> on <host>: ...".
    if len(words) >= 5 and words[1] == "exit" and words[2].isdigit() and words[4].isdigit():
        return Failure(words[0], int(words[2]), int(words[4]), words[6] if len(words) > 6 else "")
    if len(words) >= 4 and words[1] == "lost" and words[3].isdigit():
        host = words[5].rstrip(":") if len(words) > 5 else ""
        return Failure(words[0], None, int(words[3]), host)
    return None


def read_run(
    run_dir: Path, with_scalars: bool = True, lost_after: float = LOST_AFTER_SECONDS
) -> RunState | None:
    """The run in `run_dir`, or None if no replica ever started there. An attempt that has
    not ended and has shown no sign of life for `lost_after` s is lost."""
    by_generation = _attempts(run_dir)
    if not by_generation:
        return None
    # The newest key and generation: the one whose latest attempt started last.
    key, generation = max(by_generation, key=lambda kg: max(a.started for a in by_generation[kg]))
    attempts: dict[str, list[Attempt]] = defaultdict(list)
    for attempt in sorted(by_generation[(key, generation)], key=lambda a: a.number):
        attempts[attempt.replica].append(attempt)
    outcomes = run_dir / OUTCOMES_DIR
    failure = read_failure(outcomes / f"failed.{key}.{generation}")
    launch = read_launch(outcomes, generation)
    # Once the attempts are read: a beat written while they were read is not in the future.
    read_at = time.time()
    if (outcomes / f"succeeded.{key}").exists():
        outcome = "succeeded"
    elif (outcomes / f"failed.{key}.{generation}").exists():
        outcome = "failed"
    else:
        # Each replica's latest attempt: an earlier one killed whole was replaced.
        latest = [runs[-1] for runs in attempts.values()]
        outcome = _unended_outcome(latest, lost_after, launch, read_at)
    return RunState(
        directory=run_dir,
        key=key,
        generation=generation,
        outcome=outcome,
        failure=failure,
        attempts=dict(sorted(attempts.items())),
        metrics=read_metrics(run_dir / METRICS_FILE),
        scalars=read_run_scalars(run_dir) if with_scalars else {},
        lost_after=lost_after,
        launch=launch,
        read_at=read_at,
    )


def _unended_outcome(
    attempts: list[Attempt], lost_after: float, launch: Launch, read_at: float
) -> str:
    """With no outcome record: running while an attempt that has not ended still beats
    (and its launcher, where this machine can tell, still runs)."""
    silent = [a for a in attempts if not a.ended]
    if not silent or launch is Launch.ENDED:  # the launcher stopped what had not ended
        return "stopped"
    if launch is Launch.GONE:
        return "lost"
    return "running" if any(_beating(a, lost_after, read_at) for a in silent) else "lost"


def _beating(attempt: Attempt, lost_after: float, read_at: float) -> bool:
    """An attempt that has not ended still shows signs of life: silent at `read_at` for at
    most `lost_after` s, the supervisors' own rule (supervise.sh judges a peer lost past it)."""
    return read_at - attempt.last_output <= lost_after
