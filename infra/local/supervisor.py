"""Runs the replicas of one job and decides, replica exit by replica exit, how it ends.

The policy lives in one method, `Supervisor.decide`, with the semantics of the stack's
Kubernetes objects: the job succeeds when the primary replica (chief, else worker 0) exits
0; a final exit code (2: a usage error; 126/127: the command cannot run) fails the job at
once, as the Jobs' podFailurePolicy does; a replica that exits otherwise non-zero or is
killed is restarted, with the same env on the same port, up to `job.backoffLimit` times;
one more failure fails the job. In the cluster every replica is its own Job, so the limit
counts per replica; the Job controller's new pod is, locally, a new process. An attempt its
supervisor gave back (told to stop from outside: its `exit` record says `given-back`) is
restarted without counting, as the Jobs' podFailurePolicy ignores disruptions.

Stopped itself (Ctrl-C, SIGTERM, SIGHUP), the launcher stops the replica that ends the run
first and the others once it has exited: the chief saves its checkpoint while its ps and
workers still serve it, so the work is kept and nothing waits on a peer already gone.

Every replica runs under the same supervisor script as in the cluster (`infra.lifecycle`),
so once the primary has succeeded the others end by themselves within seconds; the
`grace` timer here is only a safety net for a replica that does not.
"""

from __future__ import annotations

import enum
import signal
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from infra.lifecycle import FINAL_EXIT_CODES, TERMINATION_GRACE_SECONDS, lost_bound
from infra.local import process
from infra.local.netns import PrivateNetwork
from infra.local.plan import ProcessSpec
from infra.local.ports import PortReservation
from infra.records.run_state import GIVEN_BACK, Failure, read_failure

LAUNCHER = "launcher"
EXIT_TIMEOUT = 124  # what timeout(1) returns
EXIT_CANNOT_START = 127  # what a shell returns for a command it cannot run
_POLL_SECONDS = 0.1


class Stopped(Exception):
    """Raised in the main thread by the launcher's SIGINT/SIGTERM/SIGHUP handler."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


# SIGHUP too: closing the terminal must not orphan a training cluster.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def raise_stopped(signum: int, _frame: FrameType | None) -> None:
    """The launcher's handler for STOP_SIGNALS: the main thread's work ends with Stopped."""
    raise Stopped(signum)


class CannotStart(Exception):
    """The stack's command of one replica is missing or not executable."""

    def __init__(self, name: str, error: OSError) -> None:
        where = f"{error.filename}: " if error.filename else ""
        super().__init__(f"cannot start {name}: {where}{error.strerror or error}")


class Decision(enum.Enum):
    CONTINUE = "continue"  # nothing changes for the others
    RESTART = "restart"  # start the replica again after its backoff delay
    SUCCEED = "succeed"  # the job is done: let the others exit by themselves, within grace
    FAIL = "fail"  # the job failed: the others end by themselves (their supervisors), within grace


def exit_status(returncode: int) -> int:
    """A shell-style status: a child killed by signal N counts as 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def describe(returncode: int | None) -> str:
    if returncode is None:
        return "running"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:  # a real-time signal has no name
            return f"killed by signal {-returncode}"
    return f"exit {returncode}"


def exited(returncode: int) -> str:
    """`-9 (SIGKILL)` or `1`: the raw code, for the restart line a reader greps for."""
    if returncode >= 0:
        return str(returncode)
    return f"{returncode} ({describe(returncode).removeprefix('killed by ')})"


@dataclass(frozen=True)
class Timing:
    grace: float = float(
        lost_bound() + 5
    )  # after the run ended, for replicas to exit by themselves
    stop_grace: float = float(TERMINATION_GRACE_SECONDS)  # SIGTERM → SIGKILL, as a pod's
    timeout: float | None = None  # of the whole job


@dataclass(frozen=True)
class Backoff:
    """How often and how soon a failed replica comes back (Kubernetes' Job backoff, scaled).

    Kubernetes waits 10 s, doubling, capped at 6 minutes: there a restart may need a new
    node, an image pull or a network that is back, and a crash loop must not load the API
    server. Here the cause is a process that died, its port is free again at once, and each
    second of delay is a second every replica waits, so the delays are 1 s, doubling, capped
    at 10 s: still enough to keep a replica that fails at once from spinning two cores.
    """

    limit: int = 0  # restarts per replica: the stack's job.backoffLimit
    first_delay: float = 1.0
    max_delay: float = 10.0

    def delay(self, restart: int) -> float:
        """Seconds to wait before restart number `restart` (counted from 1)."""
        return min(self.first_delay * 2 ** (restart - 1), self.max_delay)


@dataclass(frozen=True)
class RunFailures:
    """Where the replicas' supervisors record that this launch's run failed, and the reader of
    it: the launcher reports their decision (which replica, which code) instead of guessing it
    from whichever exit it happens to see first."""

    outcomes: Path
    generation: str
    key: str = "*"  # the run key: whose success record to look for

    def read(self) -> Failure | None:
        for record in self.outcomes.glob(f"failed.*.{self.generation}"):
            failure = read_failure(record)
            if failure is not None:
                return failure
        return None

    def given_back(self, replica: str) -> bool:
        """Whether the replica's latest attempt of this launch was given back."""
        claims = self.outcomes.glob(f"attempts/*.{self.generation}.{replica}.*")
        numbered = [(int(c.name.rpartition(".")[2]), c) for c in claims if c.name[-1].isdigit()]
        if not numbered:
            return False
        try:
            words = (max(numbered)[1] / "exit").read_text().split()
        except OSError:
            return False
        return words[1:2] == [GIVEN_BACK]

    def succeeded(self) -> bool:
        """Whether the run's success is published."""
        return any(self.outcomes.glob(f"succeeded.{self.key}"))


class Supervisor:
    def __init__(
        self,
        replicas: Sequence[ProcessSpec],
        primary: str,
        output: process.PrefixedOutput,
        ports: PortReservation,
        timing: Timing,
        sidecars: Sequence[ProcessSpec] = (),
        backoff: Backoff | None = None,
        run_failures: RunFailures | None = None,
        network: PrivateNetwork | None = None,
    ) -> None:
        # Replicas join `network` (see netns.py); sidecars (TensorBoard) stay on the
        # machine's loopback, where the user's browser reaches them.
        self._enter_network = network.entering() if network is not None else None
        self._run_failures = run_failures
        self._specs = {spec.name: spec for spec in replicas}
        self._sidecar_specs = list(sidecars)
        self._primary = primary
        self._output = output
        self._ports = ports
        self._timing = timing
        self._backoff = backoff or Backoff()
        self.replicas: dict[str, process.Child] = {}  # the latest process of each replica
        self.sidecars: dict[str, process.Child] = {}
        # Per replica, the return code of each process a restart replaced, and how many of
        # them count against job.backoffLimit (not the given-back ones).
        self.earlier_exits: defaultdict[str, list[int]] = defaultdict(list)
        self._counted: defaultdict[str, int] = defaultdict(int)
        self.published_at: float | None = None  # when the success record was first seen
        self._first_started: dict[str, float] = {}
        self._restart_due: dict[str, float] = {}  # replica name → when to start it again
        self.succeeded_at: float | None = None  # when the primary exited 0
        self.failed: process.Child | None = None
        self.failed_at: float | None = None
        self.outcome = ""
        self.stopped = False  # by a signal to the launcher (Ctrl-C): the run can continue

    def say(self, text: str) -> None:
        self._output.line(LAUNCHER, text)

    @property
    def children(self) -> list[process.Child]:
        return [*self.sidecars.values(), *self.replicas.values()]

    def kill(self) -> None:
        """The last resort (SIGKILL, no grace), for `finally` blocks and atexit."""
        process.kill(self.children)

    def _start(self, spec: ProcessSpec) -> process.Child:
        # The port is freed for this replica only now; see ports.py.
        self._ports.release(spec.name)
        try:
            enter = self._enter_network if spec.name in self._specs else None
            child = process.spawn(spec.name, spec.argv, spec.env, spec.cwd, self._output, enter)
        except OSError as error:
            raise CannotStart(spec.name, error) from error
        # The pid is for whoever wants to inject a fault (`kill -9 <pid>`) or attach a tool.
        self.say(f"started {spec.name} (pid {child.pid})")
        return child

    def decide(self, child: process.Child, returncode: int) -> Decision:
        """The one place that turns a replica's exit into what happens to the job."""
        if self.failed is not None:
            return Decision.CONTINUE  # everything is being stopped; the summary reports it
        if returncode == 0:
            if child.name == self._primary and self.succeeded_at is None:
                return Decision.SUCCEED
            return Decision.CONTINUE
        if returncode in FINAL_EXIT_CODES and self.succeeded_at is None:
            return Decision.FAIL
        if self._run_failures and self._run_failures.given_back(child.name):
            return Decision.RESTART  # a disruption: not counted, as podFailurePolicy
        if self._counted[child.name] < self._backoff.limit:
            # Also after the job succeeded: in the cluster this replica's own Job is not
            # complete and would restart it; its supervisor then exits 0 at once.
            return Decision.RESTART
        if self.succeeded_at is not None:
            return Decision.CONTINUE  # the job's result stands; the summary reports this exit
        return Decision.FAIL

    def run(self) -> int:
        """Start everything, supervise until the job ends, stop what is left; the status."""
        started = time.monotonic()
        try:
            for spec in self._sidecar_specs:
                self.sidecars[spec.name] = self._start(spec)
            for spec in self._specs.values():
                self.replicas[spec.name] = self._start(spec)
                self._first_started[spec.name] = self.replicas[spec.name].started
            return self._supervise(started)
        except CannotStart as error:
            self.outcome = f"FAILED: {error}"
            self.say(f"{self.outcome}; stopping every replica")
            return EXIT_CANNOT_START
        except Stopped as stop:
            self.outcome = f"stopped by {stop}"
            self.stopped = True
            self._stop_in_order(stop)
            return 128 + stop.signum
        finally:
            process.stop(self.children, self._timing.stop_grace)  # SIGTERM, then SIGKILL

    def _stop_in_order(self, stop: Stopped) -> None:
        """The replica that ends the run first (it checkpoints, served by the others), then
        the rest; each gets the stop grace."""
        primary = self.replicas.get(self._primary)
        first = [primary] if primary is not None and primary.ended is None else []
        if first:
            self.say(f"{stop} received: stopping {self._primary} (it saves its checkpoint)")
            process.stop(first, self._timing.stop_grace)
        self.say("stopping the other replicas")
        process.stop(self.children, self._timing.stop_grace)

    def _supervise(self, started: float) -> int:
        timing = self._timing
        while True:
            status = self._handle_exits()
            if status is not None:
                return status
            now = time.monotonic()
            if self.published_at is None and self._run_failures and self._run_failures.succeeded():
                self.published_at = now
            self._start_due_restarts(now)
            if not self._restart_due and all(c.ended is not None for c in self.replicas.values()):
                return self._status()
            ended_at = self.succeeded_at if self.failed_at is None else self.failed_at
            if ended_at is not None and now - ended_at > timing.grace:
                left = [c.name for c in self.replicas.values() if c.ended is None]
                left += list(self._restart_due)  # waiting to restart: not started again
                how = "succeeded" if self.failed_at is None else "failed"
                self.say(
                    f"still running {timing.grace:g}s after the job {how}, "
                    f"terminating: {', '.join(left)}"
                )
                return self._status()
            if timing.timeout is not None and now - started > timing.timeout:
                self.outcome = f"timed out after {timing.timeout:g}s"
                self.say(f"--timeout: {self.outcome}; stopping every replica")
                return EXIT_TIMEOUT
            time.sleep(_POLL_SECONDS)

    def _handle_exits(self) -> int | None:
        """Acts on replicas that exited since the last look; a status if the job ended."""
        for child in self.sidecars.values():
            if child.ended is None and child.poll() is not None:
                self.say(f"{child.name} {describe(child.returncode)}; training goes on")
        # Poll everyone first, so "waiting for the others" is only said if someone is left.
        exited = [c for c in self.replicas.values() if c.ended is None and c.poll() is not None]
        for child in exited:
            returncode = child.returncode
            assert returncode is not None
            decision = self.decide(child, returncode)
            if decision is Decision.RESTART:
                self._schedule_restart(child, returncode)
            if decision is Decision.FAIL:
                # A supervisor has published the run's failure: the other supervisors stop
                # their replicas within a second, as in the cluster. Nothing restarts now.
                self.failed, self.failed_at = child, time.monotonic()
                self._restart_due.clear()
                self.outcome = self._failure_outcome(child, returncode)
                left = [c.name for c in self.replicas.values() if c.ended is None]
                self.say(
                    f"{self.outcome}; the others end with the run: {', '.join(left) or 'none left'}"
                )
            if decision is Decision.SUCCEED:
                self.succeeded_at = time.monotonic()
                self.outcome = f"succeeded: {child.name} exit 0"
                left = [c.name for c in self.replicas.values() if c.ended is None]
                if left:
                    self.say(
                        f"{child.name} succeeded; giving the others up to "
                        f"{self._timing.grace:g}s to exit by themselves: {', '.join(left)}"
                    )
        return None

    def _failure_outcome(self, child: process.Child, returncode: int) -> str:
        """What failed the run, as its supervisors recorded it: a replica stopped by the
        run's failure exits 2 too, and may be seen exiting before the one that failed it."""
        failure = self._run_failures.read() if self._run_failures else None
        if failure is not None and failure.replica in self.replicas:
            self.failed = self.replicas[failure.replica]
            if failure.exit_code is None:
                lost = self.failed.returncode
                how = describe(lost) if lost is not None else "silent"
                return (
                    f"FAILED: {self.failed.name} lost on its last attempt ({how}, its "
                    "supervisor with it: no heartbeat)"
                )
            child, returncode = self.failed, failure.exit_code
        why = self._final_note(returncode) or self._limit_note()
        return f"FAILED: {child.name} {describe(returncode)}{why}"

    @staticmethod
    def _final_note(returncode: int) -> str:
        if returncode not in FINAL_EXIT_CODES:
            return ""
        return f" (exit code {returncode} is final: no restarts, like the Jobs' podFailurePolicy)"

    def _limit_note(self) -> str:
        limit = self._backoff.limit
        if not limit:
            return " (job.backoffLimit 0: no restarts)"
        return f" after {limit} restart{'s' * (limit > 1)}: job.backoffLimit {limit} reached"

    def _schedule_restart(self, child: process.Child, returncode: int) -> None:
        self.earlier_exits[child.name].append(returncode)
        if self._run_failures and self._run_failures.given_back(child.name):
            delay = self._backoff.first_delay
            how = f"given back (told to stop from outside), not counted: restart in {delay:.1f}s"
        else:
            self._counted[child.name] += 1
            restart = self._counted[child.name]
            delay = self._backoff.delay(restart)
            how = f"restart {restart} of {self._backoff.limit} in {delay:.1f}s"
        self._restart_due[child.name] = time.monotonic() + delay
        self.say(f"{child.name} exited {exited(returncode)}; {how}")

    def _start_due_restarts(self, now: float) -> None:
        # From the main thread, like the first start: PR_SET_PDEATHSIG is per thread.
        for name, due in list(self._restart_due.items()):
            if now >= due:
                del self._restart_due[name]
                # The same spec: the same env, TF_CONFIG and port, which the peers' TF_CONFIG
                # names; the port was released for the first start and stays free.
                self.replicas[name] = self._start(self._specs[name])

    def _status(self) -> int:
        """The failed replica's status if the job failed, else the primary's (TFJob's rule)."""
        if self.failed is not None and self.failed.returncode is not None:
            return exit_status(self.failed.returncode)
        primary = self.replicas[self._primary]
        return exit_status(primary.returncode) if primary.returncode is not None else 1

    def summary(self, total: float, output_dir: Path) -> list[str]:
        """One line per process (started or not), the total time, the output dir, the outcome."""
        names = [spec.name for spec in (*self._sidecar_specs, *self._specs.values())]
        width = max(len(name) for name in names)
        lines = []
        for name in names:
            child = self.sidecars.get(name) or self.replicas.get(name)
            if child is None:
                lines.append(f"  {name:<{width}}  not started")
                continue
            note = " (stopped by the launcher)" if child.stopped_by_launcher else ""
            succeeded = self.published_at or self.succeeded_at
            if succeeded is not None and child.ended and name != self._primary:
                # From the success record, published before the chief's export waits for an
                # evaluator: an awaited evaluator ends after the success, before the chief.
                delta = child.ended - succeeded
                when = "after" if delta >= 0 else "before"
                note += f" (ended {abs(delta):.1f}s {when} the run's success was published)"
            if name in self._restart_due:
                note += " (was waiting to restart)"
            # Wall time since the replica's first start: the time the job spent on it.
            wall = (child.ended or time.monotonic()) - self._first_started.get(name, child.started)
            lines.append(
                f"  {name:<{width}}  {describe(child.returncode):<18} {wall:7.1f}s"
                f"{self._restarts_note(name)}{note}"
            )
        lines.append(f"  total {total:.1f}s; output dir {output_dir}")
        restarts = sum(len(codes) for codes in self.earlier_exits.values())
        if restarts:
            lines.append(
                f"  restarts: {restarts} (up to {self._backoff.limit} per replica: "
                "job.backoffLimit)"
            )
        if self.outcome:
            lines.append(f"  {self.outcome}")
        return lines

    def _restarts_note(self, name: str) -> str:
        codes = self.earlier_exits.get(name, [])
        if not codes:
            return ""
        count = len(codes)
        earlier = ", ".join(describe(code) for code in codes)
        return f"  {count} restart{'s' * (count > 1)} (after {earlier})"
