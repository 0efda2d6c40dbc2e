"""The fault harness's own bookkeeping, against hand-written chief histories: which chief the
fault ended, and how many logged steps had to run again."""

from __future__ import annotations

import signal

from tests.fault_harness import Fault, Incarnation, Outcome


def _outcome(*chiefs: Incarnation, step_at_kill: int) -> Outcome:
    return Outcome(
        fault=Fault(kind="ps", at=320, signal=signal.SIGTERM),
        command="",
        status=0,
        seconds=0.0,
        lines=[],
        line_times=[],
        planned_step=512,
        incarnations={"mnist-chief-0": list(chiefs)},
        primary="mnist-chief-0",
        step_at_kill=step_at_kill,
    )


def test_a_chief_that_crashed_at_start_is_not_the_one_the_fault_ended() -> None:
    # Seen in CI under load: the first chief died before its first step (exit 139) and was
    # restarted; the second trained to 320, saved at 350 on the ps's notice; the third
    # resumed at 350. Nothing had to run again.
    crashed = Incarnation(pid=1)
    preempted = Incarnation(pid=2, steps=[310, 320], preempted_step=350)
    resumed = Incarnation(pid=3, steps=[360], resumed_step=350)
    outcome = _outcome(crashed, preempted, resumed, step_at_kill=320)
    assert outcome.last_step_before_fault == 350
    assert outcome.steps_lost == 0


def test_a_chief_killed_after_its_last_save_loses_the_steps_since() -> None:
    killed = Incarnation(pid=2, steps=[300, 310, 320])
    resumed = Incarnation(pid=3, steps=[310], resumed_step=300)
    assert _outcome(killed, resumed, step_at_kill=320).steps_lost == 20
