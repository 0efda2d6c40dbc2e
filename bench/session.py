"""A bench's long child (mutmut, pytest) in a session of its own, ended with all it started.

Tests start trainers, launchers and shell supervisors. Killing only the child (or the bench,
by name) leaves those running, and they take the cores that the next benchmark measures. So
the child gets its own session, and on a timeout, Ctrl-C or SIGTERM to the bench, the whole
process group goes. Launchers started in it take their replicas' own groups down with them
(their death signal).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

TIMED_OUT = -1


def stop_on_sigterm() -> None:
    """SIGTERM ends the bench as Ctrl-C does: through its `finally` blocks, which stop its
    children's sessions (Python's default for SIGTERM is to die at once)."""
    signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))


def run_session(
    command: Sequence[str],
    cwd: Path,
    out: IO[str],
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """`command`'s exit code, or TIMED_OUT; its process group is gone when this returns or
    raises. `out` takes stdout and stderr."""
    child = subprocess.Popen(
        command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
    )
    try:
        return child.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return TIMED_OUT
    finally:
        # What it left, or all of it when cut short; an empty group is nothing left.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
