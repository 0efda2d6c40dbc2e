"""Where a trainer's start-up time goes, as one log line before its first step.

Start-up is paid by every replica on every (re)start, and on a cluster it is where image
pulls, slow volumes and unreachable peers show up; a line per process that splits it into
phases says which one to look at.
"""

from __future__ import annotations

import time


class StartupClock:
    def __init__(self) -> None:
        self.started = time.monotonic()
        self._last = self.started
        self._laps: list[tuple[str, float]] = []

    def lap(self, phase: str) -> None:
        """The phase that just ended."""
        now = time.monotonic()
        self._laps.append((phase, now - self._last))
        self._last = now

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def summary(self) -> str:
        phases = ", ".join(f"{phase} {seconds:.1f}s" for phase, seconds in self._laps)
        return f"Start-up: {self._last - self.started:.1f}s ({phases})"
