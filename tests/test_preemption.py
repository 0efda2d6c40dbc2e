"""SIGTERM as the trainer's processes take it, without TensorFlow: a real child process per
case, its stdout a pipe (block-buffered, as under `kubectl logs` or the local launcher's log
file), signalled by this test. What must hold:

- every line printed on the way out reaches the log, and the exit status is 143, what a
  shell reports for a child ended by SIGTERM (128 + signal 15, POSIX), which Kubernetes and
  the launcher restart (not 2, "a person must act");
- a ps asks the chief for a save by a request file, serves until the chief has saved (the
  request gone), and leaves at once when nothing is left to save;
- the chief's side of the handshake (`Notice`) reads the request, and says it has saved.

The chief's loop that acts on the notice is tested with fakes in test_train_to_end.py.
"""

from __future__ import annotations

import gc
import io
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from trainer import preemption, process_exit
from trainer.preemption import Notice, Preempted

ROOT = Path(__file__).resolve().parent.parent
SIGTERMED = 143  # 128 + SIGTERM (15): a shell's status for a child ended by SIGTERM
WAIT = 30.0  # an upper bound on a loaded machine; every wait below ends on an event


def child_env() -> dict[str, str]:
    """This environment, the trainer importable, stdout buffered as a pipe is by default."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONUNBUFFERED", None)
    return env


def start(children: list[subprocess.Popen[str]], then: str, *args: str) -> subprocess.Popen[str]:
    """A Python child that installs the notice, says `ready` (flushed), then prints until
    SIGTERM (a server's main loop only waits; a trainer's prints), then runs `then`.

    Its stdout is a pipe and is *not* line-buffered, so only an explicit flush before
    `os._exit` gets the last lines out; and the signal comes while it prints. Listed in
    `children` at once, so it is stopped and reaped whatever happens next.
    """
    program = (
        "import pathlib, sys, time\n"
        "from trainer import preemption\n"
        "notice = preemption.Notice(pathlib.Path(sys.argv[1])).install()\n"
        "sys.stdout.write('ready\\n')\n"
        "sys.stdout.flush()\n"
        "while not notice.signalled():\n"
        "    print('serving', file=sys.stderr)\n"
        "    print('serving', end='')\n"
        "    sys.stdout.flush()\n"
        "    time.sleep(0.001)  # a pipe this test does not read yet fills in minutes, not ms\n"
        "sys.stdout.write('\\n')\n"
        f"{textwrap.dedent(then)}\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", program, *args],
        cwd=ROOT,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    children.append(child)
    assert child.stdout is not None
    assert child.stdout.readline() == "ready\n"
    return child


def finish(child: subprocess.Popen[str]) -> tuple[int, list[str]]:
    out, err = child.communicate(timeout=WAIT)
    assert set(err.splitlines()) <= {"serving"}, err  # no traceback
    return child.returncode, [line for line in out.splitlines() if line.replace("serving", "")]


def wait_for(predicate: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


@pytest.fixture
def children() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for child in started:
        if child.poll() is None:
            child.kill()
        child.communicate()  # reaped, its pipes closed


def test_the_exit_status_is_a_shell_s_for_sigterm() -> None:
    assert preemption.EXIT_PREEMPTED == SIGTERMED


def test_exit_now_keeps_what_was_printed_but_not_flushed(tmp_path: Path) -> None:
    """`exit_now` skips Python's teardown (os._exit), which would drop buffered output."""
    program = (
        "import sys\nfrom trainer.process_exit import exit_now\n"
        "print('saved a checkpoint at step 40')\n"
        "sys.stderr.write('a last warning')\n"
        "exit_now(143)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        143,
        "saved a checkpoint at step 40\n",
        "a last warning",
    )


def test_a_ps_worker_leaves_at_once_and_says_why(tmp_path: Path, children: list) -> None:
    child = start(children, "preemption.exit_at_once('worker:1', lambda: False)", str(tmp_path))
    child.send_signal(signal.SIGTERM)
    assert finish(child) == (
        SIGTERMED,
        ["worker:1: SIGTERM; the chief re-runs this worker's steps elsewhere"],
    )


PS = """
preemption.PS_GRACE_SECONDS = float(sys.argv[3])
preemption.serve_until_saved(
    pathlib.Path(sys.argv[1]), "ps:0", lambda: sys.argv[2] == "complete"
)
"""


def test_a_ps_serves_until_the_chief_has_saved(tmp_path: Path, children: list) -> None:
    child = start(children, PS, str(tmp_path), "training", "25")
    request = tmp_path / ".tftrain-preempt"
    child.send_signal(signal.SIGTERM)
    wait_for(request.exists, "the ps's request for a checkpoint")
    assert request.read_text() == "ps:0 got SIGTERM\n"
    # The chief reads the request as its reason to stop...
    chief = Notice(tmp_path)
    assert chief.reason() == "ps:0 got SIGTERM"
    time.sleep(0.3)  # ...while the ps keeps serving: it has not left
    assert child.poll() is None
    chief.saved(52)  # ...saves at step 52 and says so
    assert finish(child) == (
        SIGTERMED,
        [
            "ps:0: SIGTERM; serving until the chief has saved a checkpoint",
            "ps:0: the chief has saved; exiting",
        ],
    )
    assert (tmp_path / ".tftrain-preempt-saved").read_text() == "52\n"
    assert not request.exists()


# --- The same steps in this process (the exit stood in for), each branch -------------------


RunPs = Callable[..., tuple[int, list[str]]]


class Exited(Exception):
    def __init__(self, status: int) -> None:
        self.status = status


@pytest.fixture
def ps(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> RunPs:
    """Run a ps's SIGTERM steps here: `(output_dir, complete, grace) -> (status, lines)`."""

    def fake_exit(status: int) -> NoReturn:
        raise Exited(status)

    monkeypatch.setattr(preemption, "exit_now", fake_exit)

    def run(output_dir: Path, complete: bool = False, grace: float = 25.0) -> tuple[int, list]:
        monkeypatch.setattr(preemption, "PS_GRACE_SECONDS", grace)
        with pytest.raises(Exited) as stop:
            preemption.serve_until_saved(output_dir, "ps:0", lambda: complete)
        return stop.value.status, capsys.readouterr().out.splitlines()

    return run


def chief_saves(output_dir: Path, step: int) -> threading.Thread:
    """The chief, in a thread: waits for the ps's request, then saves at `step`."""

    def save() -> None:
        wait_for((output_dir / ".tftrain-preempt").exists, "the ps's request")
        Notice(output_dir).saved(step)

    thread = threading.Thread(target=save)
    thread.start()
    return thread


def test_the_ps_s_steps_serve_until_the_chief_has_saved(tmp_path: Path, ps: RunPs) -> None:
    chief = chief_saves(tmp_path, 52)
    assert ps(tmp_path) == (
        SIGTERMED,
        [
            "ps:0: SIGTERM; serving until the chief has saved a checkpoint",
            "ps:0: the chief has saved; exiting",
        ],
    )
    chief.join()


def test_a_ps_gives_up_on_a_chief_that_never_saves(tmp_path: Path, ps: RunPs) -> None:
    grace = 0.5
    started = time.monotonic()
    assert ps(tmp_path, grace=grace) == (
        SIGTERMED,
        [
            "ps:0: SIGTERM; serving until the chief has saved a checkpoint",
            "ps:0: no checkpoint within 0.5s; exiting",
        ],
    )
    assert time.monotonic() - started >= grace  # it waited its whole grace
    assert (tmp_path / ".tftrain-preempt").read_text() == "ps:0 got SIGTERM\n"


def test_a_ps_after_the_final_checkpoint_leaves_without_asking(tmp_path: Path, ps: RunPs) -> None:
    (tmp_path / ".tftrain-preempt-saved").write_text("30\n")  # complete wins over the note
    assert ps(tmp_path, complete=True) == (
        SIGTERMED,
        ["ps:0: SIGTERM after the run's final checkpoint; nothing to save"],
    )
    assert not (tmp_path / ".tftrain-preempt").exists()


def test_a_ps_told_after_the_chief_saved_and_left_leaves_at_once(tmp_path: Path, ps: RunPs) -> None:
    Notice(tmp_path).saved(30)  # the chief's note, as it leaves
    assert ps(tmp_path) == (
        SIGTERMED,
        ["ps:0: SIGTERM after the chief saved at step 30 and left; exiting"],
    )
    assert not (tmp_path / ".tftrain-preempt").exists()


def test_an_empty_saved_note_is_no_save(tmp_path: Path, ps: RunPs) -> None:
    """A note cut short (empty) names no step: the ps asks and waits as if there were none."""
    (tmp_path / ".tftrain-preempt-saved").write_text("\n")
    chief = chief_saves(tmp_path, 8)
    assert ps(tmp_path)[1][-1] == "ps:0: the chief has saved; exiting"
    chief.join()


def test_a_worker_s_steps_say_why_it_leaves(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def fake_exit(status: int) -> NoReturn:
        raise Exited(status)

    monkeypatch.setattr(preemption, "exit_now", fake_exit)
    with pytest.raises(Exited) as stop:
        preemption.exit_at_once("worker:3", lambda: False)
    assert stop.value.status == SIGTERMED
    assert capsys.readouterr().out == (
        "worker:3: SIGTERM; the chief re-runs this worker's steps elsewhere\n"
    )
    # Stopped because the run has ended: its steps are all done, none is re-run.
    with pytest.raises(Exited) as stop:
        preemption.exit_at_once("worker:3", lambda: True)
    assert stop.value.status == SIGTERMED
    assert capsys.readouterr().out == (
        "worker:3: SIGTERM after the run's final checkpoint; no steps left to run\n"
    )


def test_a_server_s_main_loop_returns_on_sigterm(tmp_path: Path, own_sigterm: None) -> None:
    notice = Notice(tmp_path).install()
    assert notice.signalled() is False
    started = time.monotonic()
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM))
    timer.start()
    preemption.wait_for_sigterm(notice)
    waited = time.monotonic() - started
    timer.join()  # the signal is in before this test's handler goes
    assert 0.2 <= waited < WAIT  # it returned on the signal, not before
    assert notice.signalled() is True


# --- The chief's notice, in this process ----------------------------------------------------


@pytest.fixture
def own_sigterm() -> Iterator[None]:
    previous = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, previous)


def test_notice_without_signal_or_request_is_no_reason(tmp_path: Path, own_sigterm: None) -> None:
    notice = Notice(tmp_path).install()
    assert (notice.reason(), notice.signalled()) == (None, False)


def test_notice_remembers_its_own_sigterm(tmp_path: Path, own_sigterm: None) -> None:
    notice = Notice(tmp_path).install()
    os.kill(os.getpid(), signal.SIGTERM)  # the handler runs before kill returns to Python code
    assert notice.reason() == "SIGTERM"


def test_notice_reads_a_ps_request_or_names_it(tmp_path: Path) -> None:
    notice = Notice(tmp_path)
    (tmp_path / ".tftrain-preempt").write_text("  ps:1 got SIGTERM \n")
    assert notice.reason() == "ps:1 got SIGTERM"
    (tmp_path / ".tftrain-preempt").write_text("")
    assert notice.reason() == "a peer's request"


def test_a_new_chief_forgets_an_unserved_request_and_an_old_saved_note(tmp_path: Path) -> None:
    (tmp_path / ".tftrain-preempt").write_text("ps:0 got SIGTERM\n")
    (tmp_path / ".tftrain-preempt-saved").write_text("12\n")
    notice = Notice(tmp_path)
    notice.acknowledge()
    assert sorted(tmp_path.iterdir()) == []
    assert notice.reason() is None
    notice.acknowledge()  # nothing there: no error


def test_saving_answers_the_request_and_leaves_the_step(tmp_path: Path) -> None:
    Notice(tmp_path).saved(7)  # no request: still the note for a ps told later
    assert (tmp_path / ".tftrain-preempt-saved").read_text() == "7\n"
    (tmp_path / ".tftrain-preempt").write_text("ps:0 got SIGTERM\n")
    Notice(tmp_path).saved(9)
    assert [p.name for p in tmp_path.iterdir()] == [".tftrain-preempt-saved"]
    assert (tmp_path / ".tftrain-preempt-saved").read_text() == "9\n"


def test_preempted_says_the_step_and_why() -> None:
    stop = Preempted(300, "SIGTERM")
    assert stop.step == 300
    assert str(stop) == "preempted (SIGTERM): saved a checkpoint at step 300"


def test_exit_now_has_everything_written_when_the_process_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same as the child above, seen from inside: at the moment of `os._exit` both
    streams' buffers are already in their files."""
    files = {"out": io.BytesIO(), "err": io.BytesIO()}
    streams = {name: io.TextIOWrapper(io.BufferedWriter(file)) for name, file in files.items()}
    written_at_exit: dict[str, object] = {}

    def record_exit(status: int) -> NoReturn:
        written_at_exit.update(status=status, **{n: f.getvalue() for n, f in files.items()})
        raise Exited(status)

    monkeypatch.setattr(sys, "stdout", streams["out"])
    monkeypatch.setattr(sys, "stderr", streams["err"])
    monkeypatch.setattr(os, "_exit", record_exit)
    print("saved a checkpoint at step 40")
    sys.stderr.write("a last warning")
    with pytest.raises(Exited):
        process_exit.exit_now(143)
    assert written_at_exit == {
        "status": 143,
        "out": b"saved a checkpoint at step 40\n",
        "err": b"a last warning",
    }


def test_a_kept_resource_outlives_its_last_reference() -> None:
    deleted: list[str] = []

    class Pipeline:
        def __del__(self) -> None:
            deleted.append("pipeline")

    process_exit.keep_until_exit(Pipeline())
    gc.collect()
    assert deleted == []
