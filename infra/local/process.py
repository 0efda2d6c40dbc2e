"""One child process in its own process group, its output streamed with a name prefix.

Why each piece:
- `start_new_session`: the child and anything it forks form one process group, so a single
  `killpg` stops all of it, and a Ctrl-C at the terminal reaches only the launcher, which
  then stops the children in order (SIGTERM, then SIGKILL) instead of racing them.
- `PR_SET_PDEATHSIG`: if the launcher itself is SIGKILLed (no handler, no `finally`), the
  kernel sends SIGKILL to each child. It fires when the *thread* that forked exits, so
  children must be spawned from the main thread (the supervisor does). Grandchildren are
  not covered: the replica supervisor script (the child) watches itself and kills its
  command (the grandchild) when it is gone.
- `enter`: a replica joins the run's private network (netns.py) in the same preexec_fn,
  so its command, and anything the command forks, never sees the machine's interfaces.
- stdout and stderr share one pipe, read line by line on a thread per child, so lines of a
  replica keep their order and one chatty replica never blocks on a full pipe.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from infra.local.noise import StartupNoise

_PR_SET_PDEATHSIG = 1


class PrefixedOutput:
    """Writes lines as `[name] text`, names padded to one width so the text lines up."""

    def __init__(
        self, names: Sequence[str], stream: IO[str], noise: StartupNoise | None = None
    ) -> None:
        self._width = max(len(name) for name in names) + 2
        self._stream = stream
        self._noise = noise or StartupNoise()
        self._lock = threading.Lock()
        self._closed = False

    def line(self, name: str, text: str) -> None:
        with self._lock:
            if self._closed:
                return
            try:
                self._stream.write(f"{f'[{name}]':<{self._width}} {text}\n")
                self._stream.flush()
            except (BrokenPipeError, ValueError):
                # The reader went away (`... | head`): keep draining the children's pipes
                # regardless, or they would block on a full pipe and never finish.
                self._closed = True

    def pump(self, name: str, pipe: IO[bytes]) -> threading.Thread:
        def run() -> None:
            with pipe:
                for raw in iter(pipe.readline, b""):
                    text = raw.decode(errors="replace").rstrip("\r\n")
                    if self._noise.shows(text):
                        self.line(name, text)

        # Daemon: a grandchild that keeps the pipe open must not keep the launcher alive.
        thread = threading.Thread(target=run, name=f"output-{name}", daemon=True)
        thread.start()
        return thread


def _die_with_parent(
    enter: Callable[[], None] | None = None,
) -> Callable[[], None] | None:
    """A preexec_fn asking the kernel to SIGKILL the child when the launcher dies (Linux),
    then calling `enter` (joining the run's private network: see netns.py)."""
    if not sys.platform.startswith("linux"):
        return enter
    # Resolved here, in the parent: after fork, other threads may hold locks (the import
    # lock, stdout), so the child does nothing but two system calls before exec.
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    launcher = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != launcher:  # the launcher died before prctl took effect
            os._exit(1)
        if enter is not None:
            enter()

    return preexec


@dataclass
class Child:
    """A started process; `returncode` follows Popen (negative: killed by that signal)."""

    name: str
    popen: subprocess.Popen[bytes]
    started: float
    reader: threading.Thread
    ended: float | None = None
    stopped_by_launcher: bool = field(default=False)

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    def poll(self) -> int | None:
        """The exit code once the process has exited; also stops what it left behind."""
        if self.ended is not None:
            return self.popen.returncode
        code = self.popen.poll()
        if code is not None:
            self.ended = time.monotonic()
            # Like a container whose main process ended: nothing of it may outlive it.
            self.signal_group(signal.SIGKILL)
            self.reader.join(timeout=2)
        return code

    def signal_group(self, signum: int) -> None:
        # The group id is the child's pid (new session). After the child is reaped the
        # group lives on only while something of it does, so this never hits a stranger.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signum)


def spawn(
    name: str,
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    output: PrefixedOutput,
    enter: Callable[[], None] | None = None,
) -> Child:
    """Start `argv`; `enter`, if given, runs in the child just before exec."""
    popen = subprocess.Popen(
        list(argv),
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=_die_with_parent(enter),  # system calls only: see _die_with_parent
    )
    assert popen.stdout is not None
    return Child(name, popen, time.monotonic(), output.pump(name, popen.stdout))


def stop(children: Sequence[Child], grace: float) -> None:
    """SIGTERM every live child, SIGKILL the groups of what is left after `grace` seconds.

    SIGTERM goes to the child alone, as the kubelet sends it to a container's PID 1: the
    replica supervisor passes it on to the command, which hears it once.
    """
    live = [child for child in children if child.poll() is None]
    for child in live:
        child.stopped_by_launcher = True
        with contextlib.suppress(ProcessLookupError):
            child.popen.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    while any(child.poll() is None for child in live) and time.monotonic() < deadline:
        time.sleep(0.05)
    kill(live)


def kill(children: Sequence[Child]) -> None:
    """SIGKILL and reap: the last resort of `stop`, `finally` blocks and atexit."""
    for child in children:
        if child.poll() is None:
            child.stopped_by_launcher = True
            child.signal_group(signal.SIGKILL)
    for child in children:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.popen.wait(timeout=5)
        child.poll()
