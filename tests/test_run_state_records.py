"""The run reader's pieces against the supervisor's record formats (supervise.sh's header)
and POSIX's exit statuses, as tables worked by hand: a failure record of each form, an exit
status by signal, metrics.txt's lines, a log's tail."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from infra.records.run_state import (
    Failure,
    describe_exit,
    log_tail,
    read_failure,
    read_metrics,
    read_run,
)


@pytest.mark.parametrize(
    ("record", "failure"),
    [
        ("r-ps-0 exit 2 attempt 1 on host-a\n", Failure("r-ps-0", 2, 1, "host-a")),
        ("r-ps-0 exit 137 attempt 12 on n-7.local\n", Failure("r-ps-0", 137, 12, "n-7.local")),
        ("r-ps-0 exit 2 attempt 3\n", Failure("r-ps-0", 2, 3, "")),  # no host said
        ("r-chief-0 lost attempt 2 on host-b: no heartbeat for 31s (killed ...)\n",
         Failure("r-chief-0", None, 2, "host-b")),
        ("r-chief-0 lost attempt 2\n", Failure("r-chief-0", None, 2, "")),
        ("r-ps-0 exit 2 attempt 3 on\n", Failure("r-ps-0", 2, 3, "")),  # cut before the host
        ("r-chief-0 lost attempt 2 on\n", Failure("r-chief-0", None, 2, "")),
        ("r-chief-0 lost attempt 2 on host-b:\n", Failure("r-chief-0", None, 2, "host-b")),
        ("r-chief-0 lost attempt 2 on node-X: no heartbeat\n",
         Failure("r-chief-0", None, 2, "node-X")),
        ("r-ps-0 exit x attempt 1 on h\n", None),  # not a number
        ("r-ps-0 exit 2 attempt y on h\n", None),
        ("r-ps-0 lost attempt z on h\n", None),
        ("r-ps-0 exit 2\n", None),  # cut short
        ("r-ps-0 lost 2\n", None),
        ("", None),
    ],
)  # fmt: skip
def test_a_failure_record_of_each_form(
    tmp_path: Path, record: str, failure: Failure | None
) -> None:
    path = tmp_path / "failed.r1.g1"
    path.write_text(record)
    assert read_failure(path) == failure


def test_a_missing_failure_record_reads_as_none(tmp_path: Path) -> None:
    assert read_failure(tmp_path / "failed.r1.g1") is None


@pytest.mark.parametrize(
    ("code", "text"),
    [
        (0, "exit 0"),
        (2, "exit 2"),
        (128, "exit 128"),  # 128 + 0 is no signal
        (129, "killed by SIGHUP (exit 129)"),
        (130, "killed by SIGINT (exit 130)"),
        (137, "killed by SIGKILL (exit 137)"),
        (143, "killed by SIGTERM (exit 143)"),
        (255, "exit 255"),  # 128 + 127: no such signal
    ],
)
def test_an_exit_status_names_its_signal(code: int, text: str) -> None:
    assert describe_exit(code) == text


def test_metrics_are_name_number_lines_and_nothing_else(tmp_path: Path) -> None:
    (tmp_path / "metrics.txt").write_text(
        "test_accuracy 0.9912\nglobal_step 20\nloss 1e-3\nthree words here\nbad value\n\nx\n"
        "after_a_bad_one 7\n"
    )
    assert read_metrics(tmp_path / "metrics.txt") == {
        "test_accuracy": 0.9912, "global_step": 20.0, "loss": 0.001, "after_a_bad_one": 7.0
    }  # fmt: skip
    (tmp_path / "raw.txt").write_bytes(b"note \xff\xfe\nloss 0.5\n")  # a trainer's raw bytes
    assert read_metrics(tmp_path / "raw.txt") == {"loss": 0.5}
    assert read_metrics(tmp_path / "missing.txt") == {}


def test_a_logs_tail_is_its_last_lines_read_from_its_end(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    # 100 KiB of earlier output, then the lines that matter: the tail reads the last 64 KiB.
    log.write_text("x" * 100 * 1024 + "\n" + "".join(f"line {i}\n" for i in range(30)))
    assert log_tail(log, 3) == ["line 27", "line 28", "line 29"]
    assert log_tail(log, 0) == []
    assert len(log_tail(log, 10_000)[0]) < 64 * 1024  # never the whole file: its last 64 KiB
    log.write_bytes(b"ok\n\xff\xfe broken utf-8\n")  # a trainer's raw bytes
    assert log_tail(log, 2) == ["ok", "\ufffd\ufffd broken utf-8"]
    assert log_tail(tmp_path / "missing.log", 5) == []


def test_a_lost_attempt_reads_no_exit_and_the_step_comes_from_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from infra.records.run_state import read_run
    from tests.test_run_report import KEY, NEW, _attempt, _ended

    run = tmp_path / "run"
    _attempt(run, NEW, "mnist-chief-0", 1, 2000.0, "step 7\n")  # killed whole: no end line
    _attempt(run, NEW, "mnist-ps-0", 1, 2001.0, "serving\n" + _ended("mnist-ps-0", 1, 2))
    (run / ".tftrain-run" / f"failed.{KEY}.{NEW}").write_text(
        "mnist-chief-0 lost attempt 1 on host-c: no heartbeat for 31s\n"
    )
    (run / "metrics.txt").write_text("global_step 42\n")
    # Read at 2100: its last sign of life, its log's last write, was at 2030.
    monkeypatch.setattr(time, "time", lambda: 2100.0)
    state = read_run(run, with_scalars=False)
    assert state is not None and state.outcome == "failed" and state.step == 42
    chief, ps = state.attempts["mnist-chief-0"][0], state.attempts["mnist-ps-0"][0]
    assert state.result(chief) == "lost (no exit, no heartbeat for 70s)"
    assert state.failed_attempt() == chief
    assert state.result(ps) == "stopped at the run's end: exit 2"
    assert state.wall_seconds == 2031.0 - 2000.0  # its last output, not the clock
    assert state.started == 2000.0 and state.last_activity == 2031.0


def test_a_directory_no_replica_started_in_is_no_run(tmp_path: Path) -> None:
    from infra.records.run_state import read_run

    (tmp_path / ".tftrain-run" / "attempts").mkdir(parents=True)
    (tmp_path / ".tftrain-run" / "attempts" / "not-an-attempt").mkdir()
    assert read_run(tmp_path) is None


def test_a_failure_record_with_raw_bytes_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "failed.r1.g1"
    path.write_bytes(b"r-ps-0 exit 2 attempt 1 on h\xff\n")
    assert read_failure(path) == Failure("r-ps-0", 2, 1, "h\ufffd")


def test_a_logs_tail_starts_exactly_64_kib_before_its_end(tmp_path: Path) -> None:
    # 100 lines of 1024 bytes (1023 and a newline): the last 64 KiB are the last 64 lines,
    # whole, the first of them not cut by a byte.
    log = tmp_path / "a.log"
    log.write_text("".join(f"{i:04d}" + "a" * 1019 + "\n" for i in range(100)))
    tail = log_tail(log, 10_000)
    assert len(tail) == 64
    assert tail[0] == "0036" + "a" * 1019 and tail[-1] == "0099" + "a" * 1019


def test_only_an_attempts_own_end_line_is_its_end(tmp_path: Path) -> None:
    # A supervisor killed whole (no exit record, no beat), whose command printed end lines
    # of a peer and of another attempt of its own replica (a trainer tailing logs): none of
    # them is this attempt's end, so it has not ended.
    from infra.records.run_state import read_run
    from tests.test_run_report import KEY, NEW, _attempt

    run = tmp_path / "run"
    _attempt(run, NEW, "mnist-chief-0", 1, 2000.0,
             "tftrain-supervise: mnist-worker-0 attempt 1 ended: exit 0\n"
             "tftrain-supervise: mnist-chief-0 attempt 2 ended: exit 0\n")  # fmt: skip
    state = read_run(run, with_scalars=False)
    assert state is not None
    [chief] = state.attempts["mnist-chief-0"]
    assert chief.exit_code is None and state.outcome == "lost"
    log = run / "replicas" / "mnist-chief-0" / "logs" / f"{KEY}.{NEW}.mnist-chief-0.1.log"
    with log.open("a") as out:
        out.write("tftrain-supervise: mnist-chief-0 attempt 1 ended: exit 3\n")
    state = read_run(run, with_scalars=False)
    assert state is not None
    assert state.attempts["mnist-chief-0"][0].exit_code == 3 and state.outcome == "stopped"


@pytest.mark.parametrize(("age", "outcome"), [(29, "running"), (30, "running"), (31, "lost")])
def test_an_attempt_is_lost_only_once_its_beat_is_older_than_lost_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, age: int, outcome: str
) -> None:
    # supervise.sh judges a peer lost when `clock - beat -gt lost_after`: at exactly
    # lost_after it still lives.
    import time

    from infra.records.run_state import read_run

    claim = tmp_path / ".tftrain-run" / "attempts" / "run-1a2b3c4d.g1.mnist-chief-0.1"
    claim.mkdir(parents=True)
    (claim / "start").write_text("1000\n")
    (claim / "beat").write_text("1100\n")
    monkeypatch.setattr(time, "time", lambda: 1100.0 + age)
    state = read_run(tmp_path, with_scalars=False, lost_after=30)
    assert state is not None and state.outcome == outcome


def test_a_lost_run_names_each_silent_replica_and_how_long_it_has_been_silent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from infra.records.run_state import read_run
    from tests.test_run_report import NEW, _attempt, _ended

    run = tmp_path / "run"
    _attempt(run, NEW, "mnist-chief-0", 1, 2000.0, "step 7\n")  # last output at 2030
    _attempt(run, NEW, "mnist-ps-0", 1, 2001.0, "serving\n" + _ended("mnist-ps-0", 1, 137))
    _attempt(run, NEW, "mnist-ps-0", 2, 2040.0, "serving\n")  # last output at 2070
    _attempt(run, NEW, "mnist-worker-0", 1, 2002.0, "w\n" + _ended("mnist-worker-0", 1, 0))
    (run / "metrics.txt").write_text("global_step 42\n")
    monkeypatch.setattr(time, "time", lambda: 2101.0)
    state = read_run(run, with_scalars=False)
    assert state is not None and state.outcome == "lost"
    assert state.describe() == (
        "lost: no heartbeat from mnist-chief-0 attempt 1 (71s), mnist-ps-0 attempt 2 (31s) "
        "(its supervisor was killed: a killed launcher, a replica killed whole, a full "
        "volume) at step 42; run the same command again to continue from its last checkpoint"
    )


def test_a_success_stands_beside_a_failure_record(tmp_path: Path) -> None:
    # Both records, a success published first: the run succeeded (its reader's rule), and
    # its one line says so, not the failure.
    from infra.records.run_state import read_run
    from tests.test_run_report import KEY, NEW, _attempt, _ended

    run = tmp_path / "run"
    _attempt(run, NEW, "mnist-chief-0", 1, 2000.0, "done\n" + _ended("mnist-chief-0", 1, 0))
    (run / ".tftrain-run" / f"succeeded.{KEY}").write_text("mnist-chief-0\n")
    (run / ".tftrain-run" / f"failed.{KEY}.{NEW}").write_text("mnist-ps-0 exit 1 attempt 1\n")
    state = read_run(run, with_scalars=False)
    assert state is not None and state.outcome == "succeeded"
    assert state.describe() == "succeeded"


def test_records_with_raw_bytes_still_read(tmp_path: Path) -> None:
    from infra.records.run_state import read_run

    claim = tmp_path / ".tftrain-run" / "attempts" / "run-1a2b3c4d.g1.mnist-chief-0.1"
    claim.mkdir(parents=True)
    (claim / "start").write_bytes(b"1000\n\xff\n")
    (claim / "exit").write_bytes(b"143 given-back \xfe\n")
    state = read_run(tmp_path, with_scalars=False)
    assert state is not None
    [attempt] = state.attempts["mnist-chief-0"]
    assert (attempt.started, attempt.exit_code, attempt.how) == (1000.0, 143, "given-back")


def test_an_older_supervisors_records_still_read(tmp_path: Path) -> None:
    # An exit record of the status alone (no "how"), and a log without any claim: both
    # written by supervisors before today's, read for what they say.
    import os

    from infra.records.run_state import read_run

    claim = tmp_path / ".tftrain-run" / "attempts" / "run-1a2b3c4d.g1.mnist-chief-0.1"
    claim.mkdir(parents=True)
    (claim / "start").write_text("1000\n")
    (claim / "exit").write_text("143\n")
    logs = tmp_path / "replicas" / "mnist-ps-0" / "logs"
    logs.mkdir(parents=True)
    log = logs / "run-1a2b3c4d.g1.mnist-ps-0.1.log"
    log.write_text("serving\ntftrain-supervise: mnist-ps-0 attempt 1 ended: exit 0\n")
    os.utime(log, (1010, 1010))
    state = read_run(tmp_path, with_scalars=False)
    assert state is not None
    [chief], [ps] = state.attempts["mnist-chief-0"], state.attempts["mnist-ps-0"]
    assert (chief.exit_code, chief.how) == (143, None)
    assert state.result(chief) == "killed by SIGTERM (exit 143)"
    assert (ps.started, ps.exit_code, ps.how, ps.log) == (1010.0, 0, None, log)
    assert state.outcome == "stopped"


def test_the_newest_generation_is_the_one_started_last_whatever_its_name(tmp_path: Path) -> None:
    from infra.records.run_state import read_run

    for generation, start in (("ffffffffffff", 1000), ("000000000000", 2000)):
        claim = tmp_path / ".tftrain-run" / "attempts" / f"run-1a2b3c4d.{generation}.r-ps-0.1"
        claim.mkdir(parents=True)
        (claim / "start").write_text(f"{start}\n")
        (claim / "exit").write_text("0 exited\n")
    state = read_run(tmp_path, with_scalars=False)
    assert state is not None and state.generation == "000000000000"


def test_a_stray_entry_among_the_records_hides_no_attempt(tmp_path: Path) -> None:
    # A directory that is no attempt's claim, and an attempt known from its log alone.
    from infra.records.run_state import read_run

    (tmp_path / ".tftrain-run" / "attempts" / "stray").mkdir(parents=True)
    logs = tmp_path / "replicas" / "r-ps-0" / "logs"
    logs.mkdir(parents=True)
    (logs / "run-1a2b3c4d.g1.r-ps-0.1.log").write_text(
        "tftrain-supervise: r-ps-0 attempt 1 ended: exit 0\n"
    )
    state = read_run(tmp_path, with_scalars=False)
    assert state is not None and [a.exit_code for a in state.attempts["r-ps-0"]] == [0]


def test_an_unreadable_exit_record_leaves_the_logs_end_line_to_say(tmp_path: Path) -> None:
    # Beat, then an exit record cut short (not a status): the attempt has ended, so its
    # log's end line is its end.
    from infra.records.run_state import read_run

    claim = tmp_path / ".tftrain-run" / "attempts" / "run-1a2b3c4d.g1.r-ps-0.1"
    claim.mkdir(parents=True)
    (claim / "beat").write_text("1000\n")
    (claim / "exit").write_text("garbled\n")
    logs = tmp_path / "replicas" / "r-ps-0" / "logs"
    logs.mkdir(parents=True)
    (logs / "run-1a2b3c4d.g1.r-ps-0.1.log").write_text(
        "tftrain-supervise: r-ps-0 attempt 1 ended: exit 3\n"
    )
    state = read_run(tmp_path, with_scalars=False)
    assert state is not None and state.attempts["r-ps-0"][0].exit_code == 3


def test_scalars_are_read_only_when_asked_for(tmp_path: Path) -> None:
    from infra.records.run_state import read_run
    from tests.test_tensorboard_scalars import _float, _value, _write

    claim = tmp_path / ".tftrain-run" / "attempts" / "run-1a2b3c4d.g1.r-ps-0.1"
    claim.mkdir(parents=True)
    (claim / "start").write_text("1000\n")
    _write(tmp_path, [(5, 1000.0, [_value("loss", _float(0.5), "scalars")])])
    with_scalars = read_run(tmp_path)
    without = read_run(tmp_path, with_scalars=False)
    assert with_scalars is not None and with_scalars.step == 5
    assert without is not None and without.scalars == {} and without.step is None


@pytest.mark.parametrize(
    ("exit_record", "result"),
    [
        # supervise.sh's `exit` record, "<status> <how>": how the attempt ended decides.
        ("3 exited\n", "exit 3"),  # failed by itself after the run had failed
        ("2 exited\n", "exit 2"),
        ("2 run-ended\n", "stopped at the run's end: exit 2"),
        ("143 given-back\n",
         "given back (told to stop from outside, not counted as a failure): "
         "killed by SIGTERM (exit 143)"),
    ],
)  # fmt: skip
def test_how_a_peer_of_a_failed_run_ended_is_read_from_its_record(
    tmp_path: Path, exit_record: str, result: str
) -> None:
    from infra.records.run_state import read_run
    from tests.test_run_report import KEY, NEW, _attempt

    run = tmp_path / "run"
    _attempt(run, NEW, "mnist-ps-0", 1, 2000.0, "bad flag\n")
    _attempt(run, NEW, "mnist-worker-1", 1, 2001.0, "training\n")
    records = run / ".tftrain-run"
    (records / "attempts" / f"{KEY}.{NEW}.mnist-ps-0.1" / "exit").write_text("2 exited\n")
    (records / "attempts" / f"{KEY}.{NEW}.mnist-worker-1.1" / "exit").write_text(exit_record)
    (records / f"failed.{KEY}.{NEW}").write_text("mnist-ps-0 exit 2 attempt 1 on host-a\n")
    state = read_run(run, with_scalars=False)
    assert state is not None and state.outcome == "failed"
    assert state.result(state.attempts["mnist-ps-0"][0]) == "exit 2"
    assert state.result(state.attempts["mnist-worker-1"][0]) == result


def _beat_record(run: Path, replica: str, started: int, beat: int) -> None:
    """An attempt whose supervisor wrote `start` and `beat` and no `exit` (supervise.sh)."""
    claim = run / ".tftrain-run" / "attempts" / f"run-1a2b3c4d.g1.{replica}.1"
    claim.mkdir(parents=True)
    (claim / "start").write_text(f"{started}\n")
    (claim / "beat").write_text(f"{beat}\n")


@pytest.mark.parametrize("outcome", ["succeeded", "failed"])
@pytest.mark.parametrize(
    ("silence", "result"),
    [
        (0, "stopping at the run's end (last heartbeat 0s ago)"),
        (3, "stopping at the run's end (last heartbeat 3s ago)"),
        (30, "stopping at the run's end (last heartbeat 30s ago)"),  # -gt, as supervise.sh
        (31, "lost (no exit, no heartbeat for 31s)"),
    ],
)
def test_a_replica_still_beating_after_the_runs_end_is_stopping_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outcome: str, silence: int, result: str
) -> None:
    # The chief's success (or the ps's failure) is recorded; the worker's supervisor is
    # giving its command the stop grace and still beats.
    _beat_record(tmp_path, "mnist-chief-0", 1000, 1090)
    (
        tmp_path / ".tftrain-run" / "attempts" / "run-1a2b3c4d.g1.mnist-chief-0.1" / "exit"
    ).write_text("1 exited\n")
    _beat_record(tmp_path, "mnist-worker-0", 1001, 1100)
    records = tmp_path / ".tftrain-run"
    if outcome == "succeeded":
        (records / "succeeded.run-1a2b3c4d").write_text("mnist-chief-0\n")
    else:
        (records / "failed.run-1a2b3c4d.g1").write_text("mnist-chief-0 exit 1 attempt 1 on h\n")
    monkeypatch.setattr(time, "time", lambda: 1100.0 + silence)
    state = read_run(tmp_path, with_scalars=False, lost_after=30)
    assert state is not None and state.outcome == outcome
    assert state.result(state.attempts["mnist-worker-0"][0]) == result


def test_the_window_is_the_readers_lost_after_not_a_fixed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _beat_record(tmp_path, "mnist-worker-0", 1000, 1100)
    (tmp_path / ".tftrain-run" / "succeeded.run-1a2b3c4d").write_text("mnist-chief-0\n")
    monkeypatch.setattr(time, "time", lambda: 1105.0)
    short = read_run(tmp_path, with_scalars=False, lost_after=4)
    long = read_run(tmp_path, with_scalars=False, lost_after=5)
    assert short is not None and long is not None
    assert short.result(short.attempts["mnist-worker-0"][0]) == (
        "lost (no exit, no heartbeat for 5s)"
    )
    assert long.result(long.attempts["mnist-worker-0"][0]) == (
        "stopping at the run's end (last heartbeat 5s ago)"
    )
    # Read with no window given: the supervisors' default, 30 s.
    monkeypatch.setattr(time, "time", lambda: 1130.0)
    default = read_run(tmp_path, with_scalars=False)
    assert default is not None
    assert default.result(default.attempts["mnist-worker-0"][0]) == (
        "stopping at the run's end (last heartbeat 30s ago)"
    )
    monkeypatch.setattr(time, "time", lambda: 1131.0)  # read again, a second later
    later = read_run(tmp_path, with_scalars=False)
    assert later is not None
    assert later.result(later.attempts["mnist-worker-0"][0]) == (
        "lost (no exit, no heartbeat for 31s)"
    )


@pytest.mark.parametrize(("chief_beat", "silence"), [(1100, 2), (1060, 42)])
def test_only_the_replica_its_peers_judged_lost_is_lost_whatever_its_last_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chief_beat: int, silence: int
) -> None:
    # The failure record is the supervisors' verdict: a beat written late (a slow volume)
    # does not make the replica the run failed on read as stopping. The ps's supervisor,
    # beating 2 s ago, is stopping it: the verdict is the chief's alone.
    _beat_record(tmp_path, "mnist-chief-0", 1000, chief_beat)
    _beat_record(tmp_path, "mnist-ps-0", 1000, 1100)
    (tmp_path / ".tftrain-run" / "failed.run-1a2b3c4d.g1").write_text(
        "mnist-chief-0 lost attempt 1 on h: no heartbeat for 31s\n"
    )
    monkeypatch.setattr(time, "time", lambda: 1102.0)
    state = read_run(tmp_path, with_scalars=False, lost_after=30)
    assert state is not None and state.outcome == "failed"
    assert state.result(state.attempts["mnist-chief-0"][0]) == (
        f"lost (no exit, no heartbeat for {silence}s)"
    )
    assert state.result(state.attempts["mnist-ps-0"][0]) == (
        "stopping at the run's end (last heartbeat 2s ago)"
    )


def test_a_silent_replica_of_a_running_run_is_lost_while_its_peers_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its supervisor was killed; the run runs on until a peer's supervisor judges it.
    _beat_record(tmp_path, "mnist-chief-0", 1000, 1200)
    _beat_record(tmp_path, "mnist-ps-0", 1000, 1150)
    monkeypatch.setattr(time, "time", lambda: 1200.0)
    state = read_run(tmp_path, with_scalars=False, lost_after=30)
    assert state is not None and state.outcome == "running"
    assert state.result(state.attempts["mnist-chief-0"][0]) == "running"
    assert state.result(state.attempts["mnist-ps-0"][0]) == "lost (no exit, no heartbeat for 50s)"


def test_a_reading_is_one_snapshot_however_late_its_lines_are_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Read 20 s after the chief's last beat (running, lost_after 30); its line asked for
    # 40 s later still says what the reading saw, not "lost" under a "running" outcome.
    _beat_record(tmp_path, "mnist-chief-0", 1000, 1200)
    clock = iter([1220.0, 1260.0, 1260.0, 1260.0])
    monkeypatch.setattr(time, "time", lambda: next(clock))
    state = read_run(tmp_path, with_scalars=False, lost_after=30)
    assert state is not None and state.outcome == "running"
    assert state.result(state.attempts["mnist-chief-0"][0]) == "running"
    assert state.wall_seconds == 220.0  # started at 1000, read at 1220
