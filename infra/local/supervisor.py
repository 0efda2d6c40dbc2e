"""Runs the replicas of one job and decides, replica exit by replica exit, how it ends.

The policy lives in one method, `Supervisor.decide`, with Kubernetes' TFJob semantics:
the job succeeds when the primary replica (chief, else worker 0) exits 0, and fails when
any replica exits non-zero. A restart policy (`restartPolicy: OnFailure` up to
`backoffLimit`) slots in there as one more decision that calls `_start` again.
"""

from __future__ import annotations

import enum
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from infra.local import process
from infra.local.plan import ProcessSpec
from infra.local.ports import PortReservation

LAUNCHER = "launcher"
EXIT_TIMEOUT = 124  # what timeout(1) returns
EXIT_CANNOT_START = 127  # what a shell returns for a command it cannot run
_POLL_SECONDS = 0.1


class Stopped(Exception):
    """Raised in the main thread by the launcher's SIGINT/SIGTERM/SIGHUP handler."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


class CannotStart(Exception):
    """The stack's command of one replica is missing or not executable."""

    def __init__(self, name: str, error: OSError) -> None:
        self.name = name
        where = f"{error.filename}: " if error.filename else ""
        super().__init__(f"cannot start {name}: {where}{error.strerror or error}")


class Decision(enum.Enum):
    CONTINUE = "continue"  # nothing changes for the others
    SUCCEED = "succeed"  # the job is done: let the others exit by themselves, within grace
    FAIL = "fail"  # the job failed: stop everything now


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


@dataclass(frozen=True)
class Timing:
    grace: float = 30.0  # after the job succeeded, for ps/workers to exit by themselves
    stop_grace: float = 5.0  # SIGTERM → SIGKILL
    timeout: float | None = None  # of the whole job


class Supervisor:
    def __init__(
        self,
        replicas: Sequence[ProcessSpec],
        primary: str,
        cwd: Path,
        output: process.PrefixedOutput,
        ports: PortReservation,
        timing: Timing,
        sidecars: Sequence[ProcessSpec] = (),
    ) -> None:
        self._specs = {spec.name: spec for spec in replicas}
        self._sidecar_specs = list(sidecars)
        self._primary = primary
        self._cwd = cwd
        self._output = output
        self._ports = ports
        self._timing = timing
        self.replicas: dict[str, process.Child] = {}
        self.sidecars: dict[str, process.Child] = {}
        self.succeeded_at: float | None = None  # when the primary exited 0
        self.failed: process.Child | None = None
        self.outcome = ""

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
            return process.spawn(spec.name, spec.argv, spec.env, self._cwd, self._output)
        except OSError as error:
            raise CannotStart(spec.name, error) from error

    def decide(self, child: process.Child, returncode: int) -> Decision:
        """The one place that turns a replica's exit into what happens to the job."""
        if self.succeeded_at is not None or self.failed is not None:
            return Decision.CONTINUE  # already ending; the summary reports this exit
        if returncode != 0:
            return Decision.FAIL
        if child.name == self._primary:
            return Decision.SUCCEED
        return Decision.CONTINUE

    def run(self) -> int:
        """Start everything, supervise until the job ends, stop what is left; the status."""
        started = time.monotonic()
        try:
            for spec in self._sidecar_specs:
                self.sidecars[spec.name] = self._start(spec)
            for spec in self._specs.values():
                self.replicas[spec.name] = self._start(spec)
            return self._supervise(started)
        except CannotStart as error:
            self.outcome = f"FAILED: {error}"
            self.say(f"{self.outcome}; stopping every replica")
            return EXIT_CANNOT_START
        except Stopped as stop:
            self.outcome = f"stopped by {stop}"
            self.say(f"{stop} received: stopping every replica")
            return 128 + stop.signum
        finally:
            process.stop(self.children, self._timing.stop_grace)  # SIGTERM, then SIGKILL

    def _supervise(self, started: float) -> int:
        timing = self._timing
        while True:
            status = self._handle_exits()
            if status is not None:
                return status
            now = time.monotonic()
            if all(child.ended is not None for child in self.replicas.values()):
                return self._primary_status()
            if self.succeeded_at is not None and now - self.succeeded_at > timing.grace:
                left = [c.name for c in self.replicas.values() if c.ended is None]
                self.say(
                    f"still running {timing.grace:g}s after the job succeeded, "
                    f"terminating: {', '.join(left)}"
                )
                return self._primary_status()
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
            if decision is Decision.FAIL:
                self.failed = child
                self.outcome = f"FAILED: {child.name} {describe(returncode)}"
                self.say(f"{self.outcome}; stopping every replica")
                return exit_status(returncode)
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

    def _primary_status(self) -> int:
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
            lines.append(
                f"  {name:<{width}}  {describe(child.returncode):<18} {child.wall_time:7.1f}s{note}"
            )
        lines.append(f"  total {total:.1f}s; output dir {output_dir}")
        if self.outcome:
            lines.append(f"  {self.outcome}")
        return lines
