"""One child process of the local launcher (`infra.local.process`), with real short-lived
processes: its output prefixed and in order, its process group gone when it ends, SIGTERM then
SIGKILL after the grace the caller gives (measured against that grace, not a guess), and what
runs between fork and exec. The launcher around it: test_local_launcher.py."""

from __future__ import annotations

import io
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from infra.local.noise import StartupNoise
from infra.local.process import Child, PrefixedOutput, kill, spawn, stop
from tests.cluster_helpers import alive, wait_until


def _sh(
    tmp_path: Path,
    script: str,
    output: PrefixedOutput,
    name: str = "r-ps-0",
    enter: Callable[[], None] | None = None,
) -> Child:
    return spawn(name, ["sh", "-c", script], dict(os.environ), tmp_path, output, enter)


def test_lines_are_prefixed_to_one_width_in_order() -> None:
    out = io.StringIO()
    output = PrefixedOutput(["r-ps-0", "r-chief-0"], out)
    output.line("r-ps-0", "serving")
    output.line("r-chief-0", "step 1")
    assert out.getvalue() == "[r-ps-0]    serving\n[r-chief-0] step 1\n"


def test_a_reader_gone_away_stops_the_output_not_the_launcher() -> None:
    class Closed(io.StringIO):
        writes = 0

        def write(self, text: str) -> int:
            Closed.writes += 1
            raise BrokenPipeError

    output = PrefixedOutput(["a"], Closed())
    output.line("a", "one")
    output.line("a", "two")  # not tried again
    assert Closed.writes == 1


def test_a_childs_output_is_its_lines_stdout_and_stderr_in_order(tmp_path: Path) -> None:
    out = io.StringIO()
    output = PrefixedOutput(["r-ps-0"], out, StartupNoise())
    child = _sh(tmp_path, "echo one; echo two >&2; printf 'three\\r\\n'; printf 'bad \\377\\n'; "
                "printf 'spaces kept  \\nends in X\\n'; pwd; readlink /proc/self/fd/0",
                output)  # fmt: skip
    assert child.popen.wait(timeout=30) == 0
    child.reader.join(timeout=30)
    assert out.getvalue().splitlines() == [
        "[r-ps-0] one",
        "[r-ps-0] two",
        "[r-ps-0] three",
        "[r-ps-0] bad \ufffd",
        "[r-ps-0] spaces kept  ",  # only the line's end is cut
        "[r-ps-0] ends in X",
        f"[r-ps-0] {tmp_path}",  # started where it was asked to
        "[r-ps-0] /dev/null",  # reads nothing of the launcher's terminal
    ]
    assert child.poll() == 0 and child.ended is not None and child.returncode == 0
    # Its reader: named for it, and never keeping the launcher alive at exit.
    assert (child.reader.name, child.reader.daemon) == ("output-r-ps-0", True)


def test_what_a_child_left_behind_dies_with_it(tmp_path: Path) -> None:
    output = PrefixedOutput(["r-ps-0"], io.StringIO())
    pid_file = tmp_path / "left"
    child = _sh(tmp_path, f"sleep 120 & echo $! > {pid_file}; exit 3", output)
    assert wait_until(lambda: child.poll() is not None, 30)
    left = int(pid_file.read_text())
    assert child.returncode == 3
    assert wait_until(lambda: not alive(left), 10)  # like a container's last process


def test_enter_runs_in_the_child_before_its_command(tmp_path: Path) -> None:
    marker = tmp_path / "entered"

    def enter() -> None:  # system calls only, as the launcher's own (netns.py)
        os.close(os.open(marker, os.O_CREAT | os.O_WRONLY, 0o600))

    output = PrefixedOutput(["r-ps-0"], io.StringIO())
    child = _sh(tmp_path, f"test -e {marker}", output, enter=enter)
    assert child.popen.wait(timeout=30) == 0  # the command saw what enter made


def test_a_child_asks_to_die_with_the_launcher(tmp_path: Path) -> None:
    # PR_SET_PDEATHSIG, read back from /proc: SIGKILL, as the docstring promises.
    if not sys.platform.startswith("linux"):
        pytest.skip("Linux only")
    probe = (
        "import ctypes, signal; sig = ctypes.c_int(); "
        "ctypes.CDLL(None).prctl(2, ctypes.byref(sig), 0, 0, 0); print(sig.value)"
    )
    out = io.StringIO()
    child = spawn("r-ps-0", [sys.executable, "-c", probe], dict(os.environ), tmp_path,
                  PrefixedOutput(["r-ps-0"], out))  # fmt: skip
    assert child.popen.wait(timeout=30) == 0
    child.reader.join(timeout=30)
    assert out.getvalue() == f"[r-ps-0] {int(signal.SIGKILL)}\n"


def test_stop_terms_the_child_and_waits_for_it(tmp_path: Path) -> None:
    output = PrefixedOutput(["r-ps-0"], io.StringIO())
    ready = tmp_path / "ready"
    # Exits the moment SIGTERM arrives (no sleep to finish first).
    script = (
        "import signal, sys, pathlib; "
        "signal.signal(signal.SIGTERM, lambda *_: sys.exit(0)); "
        f"pathlib.Path({str(ready)!r}).touch(); signal.pause()"
    )
    child = spawn("r-ps-0", [sys.executable, "-c", script], dict(os.environ), tmp_path, output)
    assert wait_until(ready.exists, 30)
    grace = 20.0
    begun = time.monotonic()
    stop([child], grace)
    # It exited on SIGTERM: stop returns once it has, polling every few hundredths of a
    # second, not after the grace nor a second later.
    assert time.monotonic() - begun < 1.0
    assert child.returncode == 0 and child.stopped_by_launcher


def test_stop_kills_what_outstays_the_grace_after_the_grace(tmp_path: Path) -> None:
    output = PrefixedOutput(["r-ps-0"], io.StringIO())
    ready = tmp_path / "ready"
    child = _sh(tmp_path, f"trap '' TERM; touch {ready}; while :; do sleep 0.1; done", output)
    done = _sh(tmp_path, "exit 0", output, name="r-chief-0")
    assert done.popen.wait(timeout=30) == 0
    assert wait_until(ready.exists, 30)
    grace = 2.0
    begun = time.monotonic()
    stop([child, done], grace)
    took = time.monotonic() - begun
    # At least the grace; well under twice it (a doubled grace fails here).
    assert grace <= took < 2 * grace, took
    assert child.returncode == -signal.SIGKILL and child.stopped_by_launcher
    assert not done.stopped_by_launcher  # it had ended by itself


def test_kill_kills_the_whole_group_and_reaps(tmp_path: Path) -> None:
    output = PrefixedOutput(["r-ps-0"], io.StringIO())
    pid_file = tmp_path / "inner"
    child = _sh(tmp_path, f"sleep 120 & echo $! > {pid_file}; wait", output)
    assert wait_until(pid_file.exists, 30) and wait_until(lambda: pid_file.read_text(), 30)
    inner = int(pid_file.read_text())
    kill([child])
    assert child.returncode == -signal.SIGKILL and child.stopped_by_launcher
    assert child.ended is not None
    assert wait_until(lambda: not alive(inner), 10)


def test_a_child_reads_nothing_from_the_launchers_terminal(tmp_path: Path) -> None:
    # What the user types at the launcher (fd 0) is not a replica's: a replica that reads its
    # stdin sees end of file at once, rather than taking the keys or waiting on them.
    typed_r, typed_w = os.pipe()
    os.write(typed_w, b"typed by the user\n")
    os.close(typed_w)
    saved = os.dup(0)
    os.dup2(typed_r, 0)
    try:
        out = io.StringIO()
        probe = "import sys; print(repr(sys.stdin.read()))"
        child = spawn("r-ps-0", [sys.executable, "-c", probe], dict(os.environ), tmp_path,
                      PrefixedOutput(["r-ps-0"], out))  # fmt: skip
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(typed_r)
    assert child.popen.wait(timeout=30) == 0
    child.reader.join(timeout=30)
    assert out.getvalue() == "[r-ps-0] ''\n"
