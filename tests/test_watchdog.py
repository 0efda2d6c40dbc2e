"""The training loop's watchdog (trainer/watchdog.py) on a hand-driven clock: when it speaks,
what it says, and that a beat silences it."""

from __future__ import annotations

import threading

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
