"""SIGTERM, the notice Kubernetes gives before it takes a pod away (spot reclaim, ECI
release, eviction, node drain): save the current step, then exit with `EXIT_PREEMPTED`.

Only the processes that train hold the model, so what a replica does depends on its role:
- the chief (coordinator) under ParameterServerStrategy, the single process: finish the
  chunk of steps in flight, checkpoint at that step, exit.
- MultiWorkerMirrored workers: saving is collective, so one worker's notice must become
  everyone's at the same step. After every chunk the workers all-reduce "has anyone been
  told to stop" (`Executor.any_replica`), then all save and exit together.
- a ParameterServerStrategy ps: it holds the variables but cannot save them (the chief
  does the checkpoint I/O). It writes a request file on the shared output dir and keeps
  serving until the chief, having read it after its chunk and saved, deletes it (or
  `PS_GRACE_SECONDS` pass); then both exit, since every step needs the ps. A ps told to stop
  after the chief has already saved and left (the local launcher stops the chief first)
  finds the chief's `SAVED_NAME` note and exits at once: nobody is left to ask.
- a ParameterServerStrategy worker: nothing to save; the coordinator re-runs the closure it
  loses on another worker, so it exits at once.

The exit code is 128 + SIGTERM (143), what a shell reports for a SIGTERMed child: not 2
(the "bad config, fail fast" code), so Kubernetes and the local launcher restart the
replica, and the restarted chief resumes from the checkpoint just written.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import NoReturn

from trainer.process_exit import exit_now

EXIT_PREEMPTED = 128 + signal.SIGTERM
REQUEST_NAME = ".tftrain-preempt"
# Written by the chief once it has saved on a notice and is leaving; removed when one starts.
SAVED_NAME = ".tftrain-preempt-saved"
# Under Kubernetes' default terminationGracePeriodSeconds (30) with room for the exit.
PS_GRACE_SECONDS = 25.0
POLL_SECONDS = 0.1


class Preempted(Exception):
    """The trainer saved its step after a SIGTERM (its own or a peer's) and must exit."""

    def __init__(self, step: int, reason: str) -> None:
        self.step = step
        super().__init__(f"preempted ({reason}): saved a checkpoint at step {step}")


class Notice:
    """Remembers a SIGTERM for the training loop to act on between chunks of steps.

    The handler only sets a flag: TensorFlow calls in flight are not interrupted, and the
    loop saves at the next chunk boundary, where the model is consistent. Nor does it print:
    a handler runs between two bytecodes of the main thread, which may be inside a `print`
    itself, and a second write to the same buffered stream then raises (CPython's "reentrant
    call") and the process dies with its lines and without its save. Whatever a process
    does on SIGTERM it does in its main thread, after seeing the flag.
    """

    def __init__(self, output_dir: Path) -> None:
        self._request = output_dir / REQUEST_NAME
        self._saved = output_dir / SAVED_NAME
        self._signalled = False

    def install(self) -> Notice:
        signal.signal(signal.SIGTERM, self._on_sigterm)
        return self

    def _on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        self._signalled = True

    def signalled(self) -> bool:
        return self._signalled

    def acknowledge(self) -> None:
        """At start: forget a request an earlier chief never served, and its saved note."""
        self._request.unlink(missing_ok=True)
        self._saved.unlink(missing_ok=True)

    def saved(self, step: int) -> None:
        """Tell a waiting ps its request is served, and a ps told later that the chief has
        saved at `step` and left."""
        self._saved.write_text(f"{step}\n")
        self._request.unlink(missing_ok=True)

    def reason(self) -> str | None:
        """Why to stop, or None: this process got SIGTERM, or a ps asked for a save."""
        if self._signalled:
            return "SIGTERM"
        try:
            return self._request.read_text().strip() or "a peer's request"
        except OSError:
            return None


def wait_for_sigterm(notice: Notice) -> None:
    """Return once this process has had SIGTERM (a server's main loop, which has nothing
    else to do). Polled: Python re-runs an interrupted `time.sleep` after the handler."""
    while not notice.signalled():
        time.sleep(POLL_SECONDS)


def serve_until_saved(
    output_dir: Path, task: str, training_complete: Callable[[], bool]
) -> NoReturn:
    """A ps after SIGTERM: ask the chief for a checkpoint, serve until it is saved, exit.

    Once the final checkpoint exists there is nothing left to save (the SIGTERM is then
    usually the run's end stopping this ps), so it exits at once instead of waiting for a
    chief that has finished. The server's threads serve meanwhile; this is the main thread.
    """
    if training_complete():
        print(f"{task}: SIGTERM after the run's final checkpoint; nothing to save")
        exit_now(EXIT_PREEMPTED)
    try:
        step = (output_dir / SAVED_NAME).read_text().strip()
    except OSError:
        step = ""
    if step:
        print(f"{task}: SIGTERM after the chief saved at step {step} and left; exiting")
        exit_now(EXIT_PREEMPTED)
    request = output_dir / REQUEST_NAME
    request.write_text(f"{task} got SIGTERM\n")
    print(f"{task}: SIGTERM; serving until the chief has saved a checkpoint")
    deadline = time.monotonic() + PS_GRACE_SECONDS
    while request.exists():
        if time.monotonic() > deadline:
            print(f"{task}: no checkpoint within {PS_GRACE_SECONDS:g}s; exiting")
            break
        time.sleep(POLL_SECONDS)
    else:
        print(f"{task}: the chief has saved; exiting")
    exit_now(EXIT_PREEMPTED)


def exit_at_once(task: str, training_complete: Callable[[], bool]) -> NoReturn:
    """A ParameterServerStrategy worker after SIGTERM: nothing to save, exit, saying whether
    its steps are re-run elsewhere or the run had already finished them all."""
    if training_complete():
        print(f"{task}: SIGTERM after the run's final checkpoint; no steps left to run")
    else:
        print(f"{task}: SIGTERM; the chief re-runs this worker's steps elsewhere")
    exit_now(EXIT_PREEMPTED)
