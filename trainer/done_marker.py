"""The file the chief writes in the output dir when everything is saved.

ps and worker servers have no way to learn from TensorFlow that training is over (they
would sit in `server.join()` forever and their Kubernetes Jobs would never complete), so
they poll this file and exit 0 when it appears. The evaluator uses it the same way.

A marker left by an earlier run must not stop a new one. The chief deletes it when it
starts, but a server may start before the chief does, so a server only accepts a marker
written after the server itself started: it remembers what was there at its start and
waits for something different. Comparing with that snapshot, rather than comparing mtimes
with the local clock, also holds when a shared volume's clock differs from the pod's.

A server may also start after the chief has finished: Kubernetes restarts a ps or worker
that failed while the chief was writing its last files, and no new marker ever comes. So
the marker records the final step, and a marker found at start counts as "done" when it
names the final step this process would train to and the checkpoint of that step exists:
then the run in this directory is complete, and a chief that starts again only evaluates
and exports, without the cluster (`train_loop`), so nothing waits for this server. A marker
of an earlier run with other settings (another final step) is still ignored.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

MARKER_NAME = ".tftrain-done"


def clear(output_dir: Path) -> None:
    (output_dir / MARKER_NAME).unlink(missing_ok=True)


def write(output_dir: Path, final_step: int) -> None:
    """Write the marker atomically, with unique content so every run's marker differs."""
    marker = output_dir / MARKER_NAME
    partial = marker.with_name(f"{MARKER_NAME}.{os.getpid()}.tmp")
    record = {"final_step": final_step, "id": str(uuid.uuid4()), "written": round(time.time(), 3)}
    partial.write_text(json.dumps(record) + "\n")
    os.replace(partial, marker)


def recorded_final_step(text: str) -> int | None:
    """The final step a marker's content records; None for any other content."""
    try:
        step = json.loads(text).get("final_step")
    except (ValueError, AttributeError):  # not JSON, or JSON but not an object
        return None
    return step if isinstance(step, int) else None


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

    @property
    def found_at_start(self) -> bool:
        return self._at_start is not None

    def is_done(self) -> bool:
        state = self._state()
        return state is not None and state != self._at_start

    def finished_before_start(self, final_step: int, saved_step: int | None) -> bool:
        """Whether the run was complete when this watcher started: the marker then present
        records `final_step`, and `saved_step` (the latest checkpoint's) is that step."""
        if self._at_start is None or saved_step != final_step:
            return False
        return recorded_final_step(self._at_start[1]) == final_step

    def wait(self, poll_seconds: float = 0.5) -> None:
        while not self.is_done():
            time.sleep(poll_seconds)
