"""A bench's child session (bench/session.py): whatever the child started is gone when the
bench moves on, after a normal end, a timeout, or a SIGTERM to the bench. Expectations from
the situation: a `sleep 60` started in the background would outlive its shell by a minute."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from bench.session import TIMED_OUT, run_session

ROOT = Path(__file__).resolve().parent.parent


def left_running(pid: int) -> bool:
    """Whether `pid` still runs (a zombie waiting for its reaper does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def stops(pid: int, seconds: float = 10.0) -> bool:
    """Whether `pid` stops within `seconds`: SIGKILL is delivered when it next runs."""
    deadline = time.monotonic() + seconds
    while left_running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def background_sleep(pid_file: Path, then: str) -> list[str]:
    """A shell that starts `sleep 60` in the background, writes its pid, then runs `then`."""
    script = f"sleep 60 & echo $! > {pid_file}.tmp; mv {pid_file}.tmp {pid_file}; {then}"
    return ["sh", "-c", script]


def wait_for(path: Path, seconds: float = 30.0) -> int:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never written"
        time.sleep(0.05)
    return int(path.read_text())


def test_what_the_child_left_behind_is_stopped_after_a_normal_end(tmp_path: Path) -> None:
    pid_file = tmp_path / "sleep.pid"
    with (tmp_path / "out").open("w") as out:
        assert run_session(background_sleep(pid_file, "exit 3"), tmp_path, out) == 3
    assert stops(wait_for(pid_file))


def test_a_timeout_stops_the_child_and_all_it_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "sleep.pid"
    started = time.monotonic()
    with (tmp_path / "out").open("w") as out:
        code = run_session(background_sleep(pid_file, "wait"), tmp_path, out, timeout=2.0)
    assert code == TIMED_OUT
    assert time.monotonic() - started < 30  # not the sleep's 60 s
    assert stops(wait_for(pid_file))


def test_sigterm_to_the_bench_stops_the_childs_session(tmp_path: Path) -> None:
    pid_file = tmp_path / "sleep.pid"
    code = (
        "import sys; from pathlib import Path; "
        "from bench.session import run_session, stop_on_sigterm; stop_on_sigterm(); "
        f"run_session({background_sleep(pid_file, 'wait')!r}, Path({str(tmp_path)!r}), "
        "sys.stdout)"
    )
    bench = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    try:
        sleeper = wait_for(pid_file)
        assert left_running(sleeper)  # the child's work was under way
        bench.send_signal(signal.SIGTERM)
        assert bench.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        if bench.poll() is None:
            bench.kill()
    assert stops(sleeper)
