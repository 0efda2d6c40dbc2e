"""The training loop's watchdog (trainer/watchdog.py) on a hand-driven clock: when it speaks,
what it says, and that a beat silences it."""

from __future__ import annotations

import threading
import time

import pytest

from trainer.watchdog import Watchdog

START = 1_800_000_000.0  # 2027-01-15 08:00:00 UTC (date -u -d @1800000000)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


def test_silent_while_steps_finish_then_says_who_since_when_and_whom_it_waits_on() -> None:
    clock = Clock()
    dog = Watchdog("chief:0", 300, "worker:0, ps:0", clock=clock)
    clock.now += 299
    assert dog.check() is None  # start-up within the limit
    dog.beat("step 50")
    clock.now += 299
    assert dog.check() is None
    clock.now += 2  # 301 s after the beat at START + 299 s (08:04:59 UTC)
    assert dog.check() == (
        "tftrain: chief:0: no progress for 301s (since 08:04:59 UTC, at step 50); "
        "waiting on worker:0, ps:0: look at their logs\n"
    )
    assert dog.check() is None  # once per period, not once per look
    clock.now += 300
    assert "no progress for 601s (since 08:04:59 UTC" in (dog.check() or "")
    dog.beat("step 100")
    clock.now += 100
    assert dog.check() is None


def test_a_stall_in_start_up_is_said_too() -> None:
    clock = Clock()
    dog = Watchdog("worker:1", 60, "worker:0", clock=clock)
    clock.now += 61
    assert "worker:1: no progress for 61s (since 08:00:00 UTC, at start-up)" in (dog.check() or "")


def test_the_thread_writes_the_line_and_stops() -> None:
    written = threading.Event()
    lines: list[str] = []

    def write(line: str) -> None:
        lines.append(line)
        written.set()

    dog = Watchdog("worker:0", 0.2, "worker:1", write=write).start()
    try:
        assert written.wait(30), "no line from a watchdog that never got a beat"
    finally:
        dog.stop()
    assert lines[0].startswith("tftrain: worker:0: no progress for 0s")


class Stop:
    """The watchdog's stop event on the hand-driven clock: each wait lets its timeout pass,
    and it is set after `rounds` waits."""

    def __init__(self, clock: Clock, rounds: int) -> None:
        self.clock, self.rounds = clock, rounds
        self.waits: list[float] = []

    def wait(self, timeout: float) -> bool:
        self.waits.append(timeout)
        self.clock.now += timeout
        return len(self.waits) > self.rounds


def test_the_thread_looks_four_times_a_period_and_at_least_every_10_s() -> None:
    """A stall is said at most a quarter of the limit late, and never more than 10 s late."""
    clock = Clock()
    lines: list[str] = []
    dog = Watchdog("ps:0", 8, "chief:0", write=lines.append, clock=clock)
    dog._stopped = Stop(clock, rounds=9)  # type: ignore[assignment]
    dog._watch()  # returns once stopped: after the 10th wait
    assert dog._stopped.waits == [2.0] * 10  # type: ignore[attr-defined]
    assert [line.split(" (")[0] for line in lines] == [
        "tftrain: ps:0: no progress for 8s",  # 4 looks, 8 s
        "tftrain: ps:0: no progress for 16s",  # the next period, not every look
    ]

    clock, lines = Clock(), []
    dog = Watchdog("ps:0", 300, "chief:0", write=lines.append, clock=clock)
    dog._stopped = Stop(clock, rounds=30)  # type: ignore[assignment]
    dog._watch()
    assert dog._stopped.waits == [10.0] * 31  # type: ignore[attr-defined]
    assert [line.split(" (")[0] for line in lines] == ["tftrain: ps:0: no progress for 300s"]


def test_without_a_writer_the_line_goes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    clock = Clock()
    dog = Watchdog("worker:0", 4, "worker:1", clock=clock)
    dog._stopped = Stop(clock, rounds=4)  # type: ignore[assignment]
    dog._watch()
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "tftrain: worker:0: no progress for 4s (since 08:00:00 UTC, at start-up); "
        "waiting on worker:1: look at their logs\n"
    )


def test_the_watching_thread_is_named_and_does_not_keep_a_process_alive() -> None:
    """`tftrain-watchdog` in a thread dump (py-spy, faulthandler); a daemon, so a trainer
    whose main thread has ended exits without stopping it."""
    before = set(threading.enumerate())
    dog = Watchdog("worker:0", 60, "worker:1").start()
    try:
        (thread,) = set(threading.enumerate()) - before
        assert (thread.name, thread.daemon, thread.is_alive()) == ("tftrain-watchdog", True, True)
    finally:
        dog.stop()
    thread.join(timeout=5)
    assert not thread.is_alive()  # stopped at once, not after its 10 s look


def test_the_time_is_utc_whatever_the_process_s_time_zone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A pod's TZ (or the laptop's, locally) does not change the line: 08:00:00 UTC is
    16:00 in Shanghai, which the line must not say."""
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    time.tzset()
    try:
        clock = Clock()
        dog = Watchdog("worker:1", 60, "worker:0", clock=clock)
        clock.now += 61
        assert "(since 08:00:00 UTC, at start-up)" in (dog.check() or "")
    finally:
        monkeypatch.undo()
        time.tzset()
