"""The file the chief writes in the output dir when everything is saved.

ps and worker servers have no way to learn from TensorFlow that training is over (they
would sit in `server.join()` forever and their Kubernetes Jobs would never complete), so
they poll this file and exit 0 when it appears. The evaluator uses it the same way.

A marker left by an earlier run must not stop a new one. The chief deletes it when it
starts, but a server may start before the chief does, so a server only accepts a marker
written after the server itself started: it remembers what was there at its start and
waits for something different. Comparing with that snapshot, rather than comparing mtimes
with the local clock, also holds when a shared volume's clock differs from the pod's.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

MARKER_NAME = ".tftrain-done"


def clear(output_dir: Path) -> None:
    (output_dir / MARKER_NAME).unlink(missing_ok=True)


def write(output_dir: Path) -> None:
    """Write the marker atomically, with unique content so every run's marker differs."""
    marker = output_dir / MARKER_NAME
    partial = marker.with_name(f"{MARKER_NAME}.{os.getpid()}.tmp")
    partial.write_text(f"{uuid.uuid4()} {time.time():.3f}\n")
    os.replace(partial, marker)


class DoneWatcher:
    """Tells whether a marker has been written since this watcher was created."""

    def __init__(self, output_dir: Path) -> None:
        self._marker = output_dir / MARKER_NAME
        self._at_start = self._state()

    def _state(self) -> tuple[int, str] | None:
        try:
            return self._marker.stat().st_mtime_ns, self._marker.read_text()
        except OSError:  # absent, or replaced between stat and read: look again next time
            return None

    def is_done(self) -> bool:
        state = self._state()
        return state is not None and state != self._at_start

    def wait(self, poll_seconds: float = 0.5) -> None:
        while not self.is_done():
            time.sleep(poll_seconds)
