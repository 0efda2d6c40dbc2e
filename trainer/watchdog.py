"""A training process that stops advancing says so, instead of waiting in silence.

A replica can wait forever without failing: a deadlocked server (issue 41), a peer that is
stopped but not dead (a worker in SIGSTOP blocks `coordinator.join()` with no timeout), a
collective whose partner never arrives. Its container stays Running, the replica
supervisor's heartbeat (`infra/lifecycle/supervise.sh`) keeps beating, because the process
is alive, and the run would sit until `activeDeadlineSeconds`. Liveness is the
supervisor's to judge; progress only the trainer can see, so the training loop beats here
once per chunk of steps, and a thread writes one line to stderr when no beat came for
`--stall-seconds`, and again each further period: which replica, since when, where (start-up
or the last step), and whom it waits on. The launcher and `kubectl logs` show it as any line.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime


class Watchdog:
    def __init__(
        self,
        replica: str,
        limit: float,
        waits_on: str,
        write: Callable[[str], object] | None = None,  # default: sys.stderr's write
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._replica, self._limit, self._waits_on = replica, limit, waits_on
        self._write, self._clock = write, clock
        self._lock = threading.Lock()
        self._since = clock()
        self._at = "start-up"
        self._reported = 0  # stall periods already reported since the last beat
        self._stopped = threading.Event()

    def beat(self, at: str) -> None:
        """Training got somewhere: `at` says where ("step 400")."""
        with self._lock:
            self._since, self._at, self._reported = self._clock(), at, 0

    def check(self) -> str | None:
        """The line to write now, if the loop has stalled for another period."""
        with self._lock:
            stalled = self._clock() - self._since
            periods = int(stalled // self._limit)
            if periods <= self._reported:
                return None
            self._reported = periods
            since = datetime.fromtimestamp(self._since, UTC).strftime("%H:%M:%S UTC")
            return (
                f"tftrain: {self._replica}: no progress for {stalled:.0f}s (since {since}, "
                f"at {self._at}); waiting on {self._waits_on}: look at their logs\n"
            )

    def start(self) -> Watchdog:
        threading.Thread(target=self._watch, name="tftrain-watchdog", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopped.set()

    def _watch(self) -> None:
        while not self._stopped.wait(min(self._limit / 4, 10.0)):
            line = self.check()
            if line:
                (self._write or sys.stderr.write)(line)
