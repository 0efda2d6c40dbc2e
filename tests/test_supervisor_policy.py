"""The local launcher's policy (`infra.local.supervisor`), in process and without processes:
each replica exit turned into what happens to the job, as the module's docstring states the
Kubernetes semantics (the primary's exit 0 succeeds; 2, 126, 127 are final; other failures
restart up to job.backoffLimit per replica; a given-back attempt restarts uncounted), the
supervisors' records read back, and what the launcher says. Exits are fed by fake children;
the records are written by hand in supervise.sh's formats. The same policy with real
processes: test_local_launcher.py and test_fault_tolerance.py."""

from __future__ import annotations

import io
import signal
from dataclasses import dataclass
from pathlib import Path

import pytest

from infra.local.plan import ProcessSpec
from infra.local.ports import PortReservation
from infra.local.process import PrefixedOutput
from infra.local.supervisor import (
    Backoff,
    CannotStart,
    Decision,
    RunFailures,
    Supervisor,
    Timing,
    describe,
    exit_status,
    exited,
)

CHIEF, WORKER, PS = "r-chief-0", "r-worker-0", "r-ps-0"
GEN = "0123456789ab"
KEY = "run-1a2b3c4d.cafe"


@dataclass
class FakeChild:
    """What the supervisor reads of a child: its name, whether and how it ended."""

    name: str
    returncode: int | None = None
    started: float = 100.0
    ended: float | None = None
    stopped_by_launcher: bool = False
    pid: int = 4242

    def poll(self) -> int | None:
        if self.returncode is not None and self.ended is None:
            self.ended = self.started + 10.0
        return self.returncode


def _spec(name: str) -> ProcessSpec:
    return ProcessSpec(name, ("true",), {})


def _supervisor(
    tmp_path: Path, limit: int = 1, names: tuple[str, ...] = (CHIEF, WORKER, PS)
) -> tuple[Supervisor, io.StringIO]:
    out = io.StringIO()
    outcomes = tmp_path / ".tftrain-run"
    (outcomes / "attempts").mkdir(parents=True, exist_ok=True)
    supervisor = Supervisor(
        [_spec(name) for name in names],
        CHIEF,
        PrefixedOutput(["launcher"], out),  # "[launcher] " then the text
        PortReservation([]),
        Timing(grace=50.0, stop_grace=5.0),
        backoff=Backoff(limit=limit),
        run_failures=RunFailures(outcomes, GEN, KEY),
    )
    supervisor.replicas = {name: FakeChild(name) for name in names}  # type: ignore[misc]
    return supervisor, out


def _given_back(tmp_path: Path, replica: str, number: int) -> None:
    claim = tmp_path / ".tftrain-run" / "attempts" / f"{KEY}.{GEN}.{replica}.{number}"
    claim.mkdir(parents=True, exist_ok=True)
    (claim / "exit").write_text("143 given-back\n")


@pytest.mark.parametrize(
    ("code", "status"), [(0, 0), (1, 1), (2, 2), (-9, 137), (-15, 143), (-2, 130)]
)
def test_a_killed_child_has_the_shells_status(code: int, status: int) -> None:
    assert exit_status(code) == status


@pytest.mark.parametrize(
    ("code", "text", "raw"),
    [
        (None, "running", None),
        (0, "exit 0", "0"),
        (3, "exit 3", "3"),
        (-9, "killed by SIGKILL", "-9 (SIGKILL)"),
        (-15, "killed by SIGTERM", "-15 (SIGTERM)"),
        (-40, "killed by signal 40", "-40 (signal 40)"),  # real-time: no name
    ],
)
def test_an_exit_is_named_and_its_raw_code_kept(code: int | None, text: str, raw: str) -> None:
    assert describe(code) == text
    if code is not None:
        assert exited(code) == raw


@pytest.mark.parametrize(
    ("exits", "decisions"),
    [
        # (replica, code) in order → what each decides, backoffLimit 1.
        ([(CHIEF, 0)], [Decision.SUCCEED]),
        ([(WORKER, 0), (CHIEF, 0)], [Decision.CONTINUE, Decision.SUCCEED]),
        ([(CHIEF, 0), (CHIEF, 0)], [Decision.SUCCEED, Decision.CONTINUE]),
        ([(WORKER, 2)], [Decision.FAIL]),
        ([(WORKER, 126)], [Decision.FAIL]),
        ([(PS, 127)], [Decision.FAIL]),
        ([(WORKER, 1), (WORKER, 1)], [Decision.RESTART, Decision.FAIL]),
        ([(WORKER, -9), (PS, -9)], [Decision.RESTART, Decision.RESTART]),  # per replica
        ([(WORKER, 1), (WORKER, 137)], [Decision.RESTART, Decision.FAIL]),
        # After the job succeeded: a final code is no failure of the job, a replica's own
        # restarts still apply (its Job would restart it), past them nothing changes.
        ([(CHIEF, 0), (WORKER, 2)], [Decision.SUCCEED, Decision.RESTART]),
        ([(CHIEF, 0), (WORKER, 1), (WORKER, 1)],
         [Decision.SUCCEED, Decision.RESTART, Decision.CONTINUE]),
        # Once the job failed, nothing else changes it.
        ([(WORKER, 2), (PS, 1), (CHIEF, 0)], [Decision.FAIL, Decision.CONTINUE, Decision.CONTINUE]),
    ],
)  # fmt: skip
def test_each_exit_decides_as_a_job_with_its_backoff_limit(
    tmp_path: Path, exits: list[tuple[str, int]], decisions: list[Decision]
) -> None:
    supervisor, _ = _supervisor(tmp_path, limit=1)
    seen = []
    for name, code in exits:
        child = supervisor.replicas[name]
        decision = supervisor.decide(child, code)
        seen.append(decision)
        # What _handle_exits does with it, for the next exit's sake.
        if decision is Decision.RESTART:
            supervisor._schedule_restart(child, code)
        elif decision is Decision.SUCCEED:
            supervisor.succeeded_at = 1.0
        elif decision is Decision.FAIL:
            supervisor.failed = child
    assert seen == decisions


def test_a_given_back_attempt_restarts_uncounted_past_the_limit(tmp_path: Path) -> None:
    supervisor, out = _supervisor(tmp_path, limit=0)
    worker = supervisor.replicas[WORKER]
    _given_back(tmp_path, WORKER, 1)
    assert supervisor.decide(worker, 143) is Decision.RESTART
    supervisor._schedule_restart(worker, 143)
    assert out.getvalue().splitlines() == [
        "[launcher] r-worker-0 exited 143; given back (told to stop from outside), not "
        "counted: restart in 1.0s"
    ]
    # Its next attempt (10: numbers compare as numbers, not text) exited by itself: counted.
    claim = tmp_path / ".tftrain-run" / "attempts" / f"{KEY}.{GEN}.{WORKER}.10"
    claim.mkdir()
    (claim / "exit").write_text("1 exited\n")
    assert supervisor.decide(worker, 1) is Decision.FAIL


def test_restarts_are_counted_per_replica_and_delayed_doubling(tmp_path: Path) -> None:
    supervisor, out = _supervisor(tmp_path, limit=3)
    worker = supervisor.replicas[WORKER]
    for code in (1, -9, 1):
        assert supervisor.decide(worker, code) is Decision.RESTART
        supervisor._schedule_restart(worker, code)
    assert supervisor.decide(worker, 1) is Decision.FAIL
    assert out.getvalue().splitlines() == [
        "[launcher] r-worker-0 exited 1; restart 1 of 3 in 1.0s",
        "[launcher] r-worker-0 exited -9 (SIGKILL); restart 2 of 3 in 2.0s",
        "[launcher] r-worker-0 exited 1; restart 3 of 3 in 4.0s",
    ]
    assert supervisor.earlier_exits[WORKER] == [1, -9, 1]


@pytest.mark.parametrize(
    ("records", "found"),
    [
        ({}, None),
        ({f"failed.{KEY}.{GEN}": "r-ps-0 exit 3 attempt 2 on h\n"}, ("r-ps-0", 3, 2)),
        ({f"failed.{KEY}.otherg": "r-ps-0 exit 3 attempt 2 on h\n"}, None),  # another deploy
        ({f"failed.{KEY}.{GEN}": "garbled\n"}, None),
        ({f"failed.{KEY}.{GEN}": "r-chief-0 lost attempt 1 on h: no heartbeat\n"},
         ("r-chief-0", None, 1)),
    ],
)  # fmt: skip
def test_the_runs_failure_is_read_from_this_generations_record(
    tmp_path: Path, records: dict[str, str], found: tuple | None
) -> None:
    for name, text in records.items():
        (tmp_path / name).write_text(text)
    failure = RunFailures(tmp_path, GEN, KEY).read()
    got = None if failure is None else (failure.replica, failure.exit_code, failure.attempt)
    assert got == found


def test_success_is_the_keys_record_and_given_back_the_latest_attempts(tmp_path: Path) -> None:
    failures = RunFailures(tmp_path, GEN, KEY)
    assert not failures.succeeded()
    (tmp_path / "succeeded.run-other.beef").write_text("r-chief-0\n")
    assert not failures.succeeded()  # another run's success
    assert RunFailures(tmp_path, GEN).succeeded()  # any run's, with no key given
    (tmp_path / f"succeeded.{KEY}").write_text("r-chief-0\n")
    assert failures.succeeded()
    assert not failures.given_back(WORKER)  # no attempt at all
    claims = tmp_path / "attempts"
    (claims / f"{KEY}.{GEN}.{WORKER}.1").mkdir(parents=True)
    assert not failures.given_back(WORKER)  # running: no exit record yet
    (claims / f"{KEY}.{GEN}.{WORKER}.1" / "exit").write_text("143 given-back\n")
    assert failures.given_back(WORKER)
    assert not failures.given_back(PS)
    (claims / f"{KEY}.otherg.{WORKER}.2").mkdir()  # another deploy's attempt: not this one's
    (claims / f"{KEY}.{GEN}.{WORKER}.tmp").mkdir()  # not an attempt's name
    assert failures.given_back(WORKER)


def test_the_run_failing_names_the_recorded_replica_and_the_limit(tmp_path: Path) -> None:
    # The worker stopped by the run's end exits 2 first; the failure the supervisors
    # recorded is the ps's exit 3 on its last attempt.
    supervisor, out = _supervisor(tmp_path, limit=2)
    (tmp_path / ".tftrain-run" / f"failed.{KEY}.{GEN}").write_text(
        "r-ps-0 exit 3 attempt 3 on host-a\n"
    )
    supervisor.replicas[WORKER].returncode = 2
    supervisor.replicas[PS].returncode = 3
    assert supervisor._handle_exits() is None
    assert supervisor.failed is supervisor.replicas[PS]
    assert supervisor.outcome == (
        "FAILED: r-ps-0 exit 3 after 2 restarts: job.backoffLimit 2 reached"
    )
    assert out.getvalue().splitlines() == [
        "[launcher] FAILED: r-ps-0 exit 3 after 2 restarts: job.backoffLimit 2 reached; the "
        "others end with the run: r-chief-0"
    ]
    assert supervisor._status() == 3


@pytest.mark.parametrize(
    ("limit", "code", "outcome"),
    [
        (0, 1, "FAILED: r-worker-0 exit 1 (job.backoffLimit 0: no restarts)"),
        (1, 1, "FAILED: r-worker-0 exit 1 after 1 restart: job.backoffLimit 1 reached"),
        (3, 2, "FAILED: r-worker-0 exit 2 (exit code 2 is final: no restarts, like the Jobs' "
               "podFailurePolicy)"),
        (3, 127, "FAILED: r-worker-0 exit 127 (exit code 127 is final: no restarts, like the "
                 "Jobs' podFailurePolicy)"),
    ],
)  # fmt: skip
def test_a_failure_without_a_record_says_why_nothing_restarts(
    tmp_path: Path, limit: int, code: int, outcome: str
) -> None:
    supervisor, _ = _supervisor(tmp_path, limit=limit)
    supervisor._counted[WORKER] = limit
    supervisor.replicas[WORKER].returncode = code
    supervisor._handle_exits()
    assert supervisor.outcome == outcome
    assert supervisor._status() == code


@pytest.mark.parametrize(("code", "how"), [(-9, "killed by SIGKILL"), (None, "silent")])
def test_a_replica_lost_on_its_last_attempt_is_named_so(
    tmp_path: Path, code: int | None, how: str
) -> None:
    supervisor, _ = _supervisor(tmp_path)
    (tmp_path / ".tftrain-run" / f"failed.{KEY}.{GEN}").write_text(
        "r-ps-0 lost attempt 2 on host-a: no heartbeat for 31s\n"
    )
    supervisor.replicas[PS].returncode = code
    supervisor.replicas[WORKER].returncode = 2  # stopped by the run's failure
    supervisor._handle_exits()
    assert supervisor.outcome == (
        f"FAILED: r-ps-0 lost on its last attempt ({how}, its supervisor with it: no heartbeat)"
    )


def test_the_primarys_success_gives_the_others_the_grace(tmp_path: Path) -> None:
    supervisor, out = _supervisor(tmp_path)
    supervisor.replicas[CHIEF].returncode = 0
    assert supervisor._handle_exits() is None
    assert supervisor.outcome == "succeeded: r-chief-0 exit 0"
    assert out.getvalue().splitlines() == [
        "[launcher] r-chief-0 succeeded; giving the others up to 50s to exit by themselves: "
        "r-worker-0, r-ps-0"
    ]
    for name in (WORKER, PS):
        supervisor.replicas[name].returncode = -15
    supervisor._handle_exits()
    assert supervisor._status() == 0  # the primary's, whatever the others returned


def test_a_stopped_sidecar_is_said_and_training_goes_on(tmp_path: Path) -> None:
    supervisor, out = _supervisor(tmp_path)
    supervisor.sidecars = {"tensorboard": FakeChild("tensorboard", returncode=-9)}  # type: ignore[dict-item]
    assert supervisor._handle_exits() is None
    assert supervisor.outcome == "" and supervisor.failed is None
    assert out.getvalue().splitlines() == [
        "[launcher] tensorboard killed by SIGKILL; training goes on"
    ]


def test_the_summary_is_a_line_a_process_the_total_and_the_outcome(tmp_path: Path) -> None:
    supervisor, _ = _supervisor(tmp_path, limit=2)
    supervisor._first_started = {CHIEF: 100.0, WORKER: 100.0}
    chief, worker = supervisor.replicas[CHIEF], supervisor.replicas[WORKER]
    chief.returncode, chief.ended = 0, 160.0
    worker.started, worker.returncode, worker.ended = 130.0, -15, 163.5  # its second process
    worker.stopped_by_launcher = True
    del supervisor.replicas[PS]  # never started: the run failed to start it
    supervisor.earlier_exits[WORKER] = [1]
    supervisor.succeeded_at = 160.0
    supervisor.published_at = 158.0  # the supervisors' success record: the time that counts
    supervisor.outcome = "succeeded: r-chief-0 exit 0"
    assert supervisor.summary(64.25, Path("/out")) == [
        "  r-chief-0   exit 0                60.0s",
        "  r-worker-0  killed by SIGTERM     63.5s  1 restart (after exit 1) (stopped by the "
        "launcher) (ended 5.5s after the run's success was published)",
        "  r-ps-0      not started",
        "  total 64.2s; output dir /out",
        "  restarts: 1 (up to 2 per replica: job.backoffLimit)",
        "  succeeded: r-chief-0 exit 0",
    ]


def test_a_replica_ending_before_the_success_was_published_says_before(tmp_path: Path) -> None:
    supervisor, _ = _supervisor(tmp_path, names=(CHIEF, WORKER))
    chief, worker = supervisor.replicas[CHIEF], supervisor.replicas[WORKER]
    chief.returncode, chief.ended = 0, 170.0
    worker.returncode, worker.ended = 0, 150.0  # an awaited evaluator, say
    supervisor.earlier_exits[WORKER] = [1, -9]
    supervisor._restart_due[WORKER] = 999.0
    supervisor.published_at = 160.0
    lines = supervisor.summary(70.0, Path("/out"))
    assert lines[1] == (
        "  r-worker-0  exit 0                50.0s  2 restarts (after exit 1, killed by SIGKILL) "
        "(ended 10.0s before the run's success was published) (was waiting to restart)"
    )


def test_a_command_that_cannot_start_names_the_file() -> None:
    missing = FileNotFoundError(2, "No such file or directory", "/opt/none/python")
    assert str(CannotStart("r-ps-0", missing)) == (
        "cannot start r-ps-0: /opt/none/python: No such file or directory"
    )
    assert str(CannotStart("r-ps-0", PermissionError(13, "Permission denied"))) == (
        "cannot start r-ps-0: Permission denied"
    )


def test_a_stop_signal_is_named() -> None:
    from infra.local.supervisor import Stopped

    assert str(Stopped(signal.SIGINT)) == "SIGINT" and Stopped(signal.SIGHUP).signum == 1


def test_a_stop_signal_raises_stopped_in_the_main_thread() -> None:
    from infra.local.supervisor import Stopped, raise_stopped

    with pytest.raises(Stopped) as stop:
        raise_stopped(signal.SIGTERM, None)
    assert stop.value.signum == signal.SIGTERM and str(stop.value) == "SIGTERM"


def _stops(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[str], float]]:
    """process.stop's calls, as (the names it was given, the grace)."""
    from infra.local import supervisor as module

    calls: list[tuple[list[str], float]] = []

    def stop(children: list[FakeChild], grace: float) -> None:
        calls.append(([c.name for c in children], grace))
        for child in children:
            child.returncode = -15 if child.returncode is None else child.returncode
            child.poll()

    monkeypatch.setattr(module.process, "stop", stop)
    return calls


def test_stopped_the_primary_is_stopped_first_then_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from infra.local.supervisor import Stopped

    calls = _stops(monkeypatch)
    supervisor, out = _supervisor(tmp_path)
    started = iter(FakeChild(name) for name in (CHIEF, WORKER, PS))
    monkeypatch.setattr(supervisor, "_start", lambda spec: next(started))

    def interrupted(started_at: float) -> int:
        raise Stopped(signal.SIGINT)  # Ctrl-C while supervising

    monkeypatch.setattr(supervisor, "_supervise", interrupted)
    assert supervisor.run() == 128 + signal.SIGINT
    assert (supervisor.outcome, supervisor.stopped) == ("stopped by SIGINT", True)
    # The chief alone first (it saves its checkpoint, served by the others), then the
    # rest; the stop grace each time; the last call is run()'s own safety net.
    assert calls == [([CHIEF], 5.0), ([CHIEF, WORKER, PS], 5.0), ([CHIEF, WORKER, PS], 5.0)]
    assert out.getvalue().splitlines() == [
        "[launcher] SIGINT received: stopping r-chief-0 (it saves its checkpoint)",
        "[launcher] stopping the other replicas",
    ]


def test_stopped_after_the_primary_ended_the_others_are_stopped_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from infra.local.supervisor import Stopped

    calls = _stops(monkeypatch)
    supervisor, out = _supervisor(tmp_path)
    supervisor.replicas[CHIEF].returncode = 0
    supervisor.replicas[CHIEF].poll()
    supervisor._stop_in_order(Stopped(signal.SIGHUP))
    assert calls == [([CHIEF, WORKER, PS], 5.0)]
    assert out.getvalue() == "[launcher] stopping the other replicas\n"


def test_a_replica_that_cannot_start_fails_the_run_with_127(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _stops(monkeypatch)
    supervisor, out = _supervisor(tmp_path)
    supervisor.replicas = {}  # none started yet
    started = []

    def spawn(name: str, *args: object) -> FakeChild:
        if name == WORKER:
            raise FileNotFoundError(2, "No such file or directory", str(tmp_path / "nope"))
        started.append(name)
        return FakeChild(name)

    from infra.local import supervisor as module

    monkeypatch.setattr(module.process, "spawn", spawn)
    assert supervisor.run() == 127
    assert started == [CHIEF]  # nothing after the one that cannot start
    assert supervisor.outcome == (
        f"FAILED: cannot start r-worker-0: {tmp_path / 'nope'}: No such file or directory"
    )
    assert out.getvalue().splitlines() == [
        "[launcher] started r-chief-0 (pid 4242)",
        f"[launcher] {supervisor.outcome}; stopping every replica",
    ]
    assert calls == [([CHIEF], 5.0)]


def test_a_restart_is_due_its_delay_from_now(tmp_path: Path) -> None:
    import time

    supervisor, _ = _supervisor(tmp_path, limit=2)
    worker = supervisor.replicas[WORKER]
    before = time.monotonic()
    supervisor._schedule_restart(worker, 1)
    supervisor._schedule_restart(worker, 1)  # the second: 2 s
    after = time.monotonic()
    assert before + 2.0 <= supervisor._restart_due[WORKER] <= after + 2.0


def test_without_the_supervisors_records_the_exit_seen_decides(tmp_path: Path) -> None:
    supervisor, _ = _supervisor(tmp_path, limit=0)
    supervisor._run_failures = None  # no outcomes directory to read
    supervisor.replicas[WORKER].returncode = 1
    assert supervisor._handle_exits() is None
    assert supervisor.outcome == "FAILED: r-worker-0 exit 1 (job.backoffLimit 0: no restarts)"


def test_a_failure_with_no_status_yet_exits_1_not_2(tmp_path: Path) -> None:
    # The records name the ps, lost and not yet reaped; the worker stopped by the run's end
    # exited 2; the chief still runs. The launcher's help: N is the failing replica's status
    # (1 when there is none), 2 means bad arguments, which this is not.
    supervisor, _ = _supervisor(tmp_path)
    (tmp_path / ".tftrain-run" / f"failed.{KEY}.{GEN}").write_text(
        "r-ps-0 lost attempt 2 on host-a: no heartbeat for 31s\n"
    )
    supervisor.replicas[WORKER].returncode = 2
    supervisor._handle_exits()
    assert supervisor.failed is supervisor.replicas[PS]
    assert supervisor._status() == 1


def test_replicas_join_the_private_network_and_get_their_port_sidecars_do_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from infra.local import supervisor as module

    def enter() -> None:  # what the private network hands each replica
        raise AssertionError("called only in a child")

    class Network:
        def entering(self) -> object:
            return enter

    released: list[str] = []

    class Ports:
        def release(self, name: str) -> None:
            released.append(name)

    spawned: list[tuple[str, Path, object]] = []

    def spawn(name: str, argv: object, env: object, cwd: Path, output: object,
              joins: object) -> FakeChild:  # fmt: skip
        spawned.append((name, cwd, joins))
        return FakeChild(name)

    monkeypatch.setattr(module.process, "spawn", spawn)
    replica = ProcessSpec(CHIEF, ("true",), {}, tmp_path / "work")
    sidecar = ProcessSpec("tensorboard", ("true",), {}, tmp_path / "tb")
    supervisor = Supervisor([replica], CHIEF, PrefixedOutput(["launcher"], io.StringIO()),
                            Ports(), Timing(), sidecars=[sidecar], network=Network())  # type: ignore[arg-type]  # fmt: skip
    supervisor._start(sidecar)
    supervisor._start(replica)
    assert spawned == [("tensorboard", tmp_path / "tb", None), (CHIEF, tmp_path / "work", enter)]
    assert released == ["tensorboard", CHIEF]


class _Clock:
    """The supervisor's clock, advanced by its own polls: each sleep runs the next step of the
    run (exits, records) and moves time on by the sleep."""

    def __init__(self, steps: list) -> None:
        self.now, self._steps = 1000.0, steps

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        if self._steps:
            self._steps.pop(0)()


def _clocked(monkeypatch: pytest.MonkeyPatch, steps: list) -> _Clock:
    from infra.local import supervisor as module

    clock = _Clock(steps)
    monkeypatch.setattr(module, "time", clock)
    return clock


def _ends(child: FakeChild, code: int) -> None:
    child.returncode = code


def test_the_success_is_timed_from_its_record_seen_before_the_primary_exits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The chief publishes the success, then waits 0.1 s (an evaluator) before it exits: the
    # record's time is the first poll's, 1000.0, and stays so; the exit is seen at 1000.1.
    supervisor, _ = _supervisor(tmp_path, names=(CHIEF, WORKER))
    (tmp_path / ".tftrain-run" / f"succeeded.{KEY}").write_text("r-chief-0\n")
    chief, worker = supervisor.replicas[CHIEF], supervisor.replicas[WORKER]
    _clocked(monkeypatch, [lambda: (_ends(worker, 0), _ends(chief, 0))])
    assert supervisor._supervise(1000.0) == 0
    assert (supervisor.published_at, supervisor.succeeded_at) == (1000.0, 1000.1)


def test_replicas_left_after_a_failure_are_ended_after_the_grace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The worker fails at once (limit 0); the ps never exits by itself: 50 s later (the
    # grace) the launcher ends the run, naming it.
    supervisor, out = _supervisor(tmp_path, limit=0, names=(CHIEF, WORKER, PS))
    supervisor._timing = Timing(grace=50.0, stop_grace=5.0, timeout=500.0)
    supervisor.replicas[WORKER].returncode = 3
    _clocked(monkeypatch, [lambda: _ends(supervisor.replicas[CHIEF], 2)])
    assert supervisor._supervise(1000.0) == 3
    assert out.getvalue().splitlines() == [
        "[launcher] FAILED: r-worker-0 exit 3 (job.backoffLimit 0: no restarts); the others "
        "end with the run: r-chief-0, r-ps-0",
        "[launcher] still running 50s after the job failed, terminating: r-ps-0",
    ]


def test_a_run_past_its_timeout_is_said_and_ends_124(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    supervisor, out = _supervisor(tmp_path, names=(CHIEF, WORKER))
    supervisor._timing = Timing(grace=50.0, stop_grace=5.0, timeout=30.0)
    clock = _clocked(monkeypatch, [])
    assert supervisor._supervise(1000.0) == 124
    assert 1030.0 < clock.now < 1030.2  # the first poll past 30 s
    assert supervisor.outcome == "timed out after 30s"
    assert out.getvalue() == "[launcher] --timeout: timed out after 30s; stopping every replica\n"


def test_a_failure_with_every_replica_gone_says_none_left(tmp_path: Path) -> None:
    supervisor, out = _supervisor(tmp_path, limit=0)
    for child in supervisor.replicas.values():
        child.returncode = 1
    supervisor._handle_exits()
    assert out.getvalue().splitlines() == [
        "[launcher] FAILED: r-chief-0 exit 1 (job.backoffLimit 0: no restarts); the others end "
        "with the run: none left"
    ]


def test_a_sidecars_end_is_said_once(tmp_path: Path) -> None:
    supervisor, out = _supervisor(tmp_path)
    supervisor.sidecars = {"tensorboard": FakeChild("tensorboard", returncode=1)}  # type: ignore[dict-item]
    supervisor._handle_exits()
    supervisor._handle_exits()
    assert out.getvalue() == "[launcher] tensorboard exit 1; training goes on\n"


def test_the_sidecar_is_started_first_and_stopped_with_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from infra.local import supervisor as module
    from infra.local.supervisor import Stopped

    calls = _stops(monkeypatch)
    out = io.StringIO()
    supervisor = Supervisor(
        [_spec(CHIEF), _spec(WORKER)],
        CHIEF,
        PrefixedOutput(["launcher"], out),
        PortReservation([]),
        Timing(grace=50.0, stop_grace=5.0),
        sidecars=[_spec("tensorboard")],
    )
    monkeypatch.setattr(module.process, "spawn", lambda name, *args: FakeChild(name))

    def interrupted(started_at: float) -> int:
        raise Stopped(signal.SIGTERM)

    monkeypatch.setattr(supervisor, "_supervise", interrupted)
    assert supervisor.run() == 128 + signal.SIGTERM
    assert list(supervisor.sidecars) == ["tensorboard"]
    assert calls[1:] == [(["tensorboard", CHIEF, WORKER], 5.0)] * 2
    assert out.getvalue().splitlines()[:3] == [
        "[launcher] started tensorboard (pid 4242)",
        "[launcher] started r-chief-0 (pid 4242)",
        "[launcher] started r-worker-0 (pid 4242)",
    ]


def test_the_summary_has_the_sidecar_and_every_replica_after_one_not_started(
    tmp_path: Path,
) -> None:
    supervisor, _ = _supervisor(tmp_path, names=(CHIEF, WORKER, PS))
    supervisor._sidecar_specs = [_spec("tensorboard")]
    supervisor.sidecars = {  # type: ignore[dict-item]
        "tensorboard": FakeChild("tensorboard", returncode=-15, ended=170.0,
                                 stopped_by_launcher=True),
    }  # fmt: skip
    chief, ps = supervisor.replicas[CHIEF], supervisor.replicas[PS]
    chief.returncode, chief.ended = 0, 160.0
    ps.returncode, ps.ended = 0, 160.5  # half a second after the success: still "after"
    del supervisor.replicas[WORKER]
    supervisor.published_at = 160.0
    assert supervisor.summary(71.0, Path("/out")) == [
        "  tensorboard  killed by SIGTERM     70.0s (stopped by the launcher) (ended 10.0s after "
        "the run's success was published)",
        "  r-chief-0    exit 0                60.0s",
        "  r-worker-0   not started",
        "  r-ps-0       exit 0                60.5s (ended 0.5s after the run's success was "
        "published)",
        "  total 71.0s; output dir /out",
    ]


def test_a_replica_ending_as_the_success_is_published_ended_after_it(tmp_path: Path) -> None:
    supervisor, _ = _supervisor(tmp_path, names=(CHIEF, WORKER))
    chief, worker = supervisor.replicas[CHIEF], supervisor.replicas[WORKER]
    chief.returncode, chief.ended = 0, 160.0
    worker.returncode, worker.ended = 0, 160.0
    supervisor.published_at = 160.0
    assert supervisor.summary(60.0, Path("/out"))[1] == (
        "  r-worker-0  exit 0                60.0s (ended 0.0s after the run's success was "
        "published)"
    )


def test_a_run_that_ends_by_itself_is_not_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `stopped` is what makes the launcher say how to continue the run: only after a signal.
    from infra.local import supervisor as module

    calls = _stops(monkeypatch)
    supervisor, _ = _supervisor(tmp_path, names=(CHIEF,))
    monkeypatch.setattr(module.process, "spawn", lambda name, *args: FakeChild(name))
    monkeypatch.setattr(supervisor, "_supervise", lambda started_at: 0)
    assert supervisor.run() == 0
    assert supervisor.stopped is False and supervisor.outcome == ""
    assert calls == [([CHIEF], 5.0)]  # the safety net alone
