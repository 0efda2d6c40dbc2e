"""A run with a restarted replica, read back while it runs (`infra.records.run_state.read_run`, what
`tftrain status` and the report show). The run directory is written by the real supervisor
(infra/lifecycle/supervise.sh, as the local launcher and the pods run it), not by hand: a
replica that failed once and runs its retry, and one preempted (its attempt given back: it
keeps its number and log, the retry claims the next number) that runs again. Either way the
run is running until its retry ends, as the supervisor's header defines an attempt's end.
One directory is written by hand: an older supervisor's layout (the retry of a given-back
attempt claimed the same number and appended to its log), still read as running."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from infra.records.run_state import read_run
from infra.status.local import describe_run
from tests.cluster_helpers import wait_until
from tests.test_supervise_script import SHELLS, Run, finish, started, trapping

REPLICA = "mnist-chief-0"


def _run(tmp_path: Path) -> tuple[Run, Path, tuple[str, ...]]:
    run_dir = tmp_path / "run"
    run = Run(run_dir / ".tftrain-run", SHELLS["dash"], pid1=False, run="run-1a2b3c4d")
    options = ("--logs", str(run_dir / "replicas" / REPLICA / "logs"))
    return run, run_dir, options


def test_a_retry_after_a_failure_is_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, run_dir, options = _run(tmp_path)
    first = run.start("--ends-run", "sh", "-c", "exit 1", replica=REPLICA, backoff=1,
                      options=options)  # fmt: skip
    assert finish(first)[0] == 1
    flag = tmp_path / "retry"
    retry = run.start("--ends-run", "sh", "-c", started(flag), replica=REPLICA, backoff=1,
                      options=options)  # fmt: skip
    try:
        assert wait_until(flag.exists, 10)
        state = read_run(run_dir, with_scalars=False)
        assert state is not None and state.outcome == "running"
        attempts = state.attempts[REPLICA]
        assert [(a.number, a.exit_code) for a in attempts] == [(1, 1), (2, None)]
        assert state.result(attempts[1]) == "running"
        # What `tftrain status` prints for it.
        monkeypatch.chdir(tmp_path)  # its paths, relative to where the user stands
        lines = list(describe_run(state))
        assert lines[0].startswith("run: running (last output "), lines
        log = f"run/replicas/{REPLICA}/logs/run-1a2b3c4d.g1.{REPLICA}.2.log"
        assert f"  {REPLICA:<20} 2 attempts, 1 restart: running; {log}" in lines
    finally:
        os.killpg(retry.pid, signal.SIGKILL)  # its group: the supervisor and the command
        finish(retry)


@pytest.mark.parametrize("code", [0, 143])
def test_a_preempted_replica_running_again_is_running(tmp_path: Path, code: int) -> None:
    # Preempted, its handler exits `code`: attempt 1 is given back (exit 143 either way: a
    # told-to-stop attempt never completes), keeping its number and log; the retry is 2.
    run, run_dir, options = _run(tmp_path)
    flag = tmp_path / "serving"
    first = run.start("--ends-run", *trapping(flag, f"exit {code}"), replica=REPLICA, backoff=0,
                      options=options)  # fmt: skip
    assert wait_until(flag.exists, 10)
    run.signal(first, signal.SIGTERM)
    assert finish(first)[0] == 143
    state = read_run(run_dir, with_scalars=False)
    assert state is not None and state.outcome == "stopped"  # nothing runs now
    again = tmp_path / "again"
    retry = run.start("--ends-run", "sh", "-c", started(again), replica=REPLICA, backoff=0,
                      options=options)  # fmt: skip
    try:
        assert wait_until(again.exists, 10)
        state = read_run(run_dir, with_scalars=False)
        assert state is not None and state.outcome == "running"
        given, attempt = state.attempts[REPLICA]
        assert (given.number, given.exit_code, given.how) == (1, 143, "given-back")
        assert (attempt.number, attempt.exit_code) == (2, None)
        assert state.result(given) == (
            "given back (told to stop from outside, not counted as a failure): "
            "killed by SIGTERM (exit 143)"
        )
        assert state.result(attempt) == "running"
        logs = run_dir / "replicas" / REPLICA / "logs"
        assert (given.log, attempt.log) == (
            logs / f"run-1a2b3c4d.g1.{REPLICA}.1.log",
            logs / f"run-1a2b3c4d.g1.{REPLICA}.2.log",
        )
    finally:
        os.killpg(retry.pid, signal.SIGKILL)  # its group: the supervisor and the command
        finish(retry)
    # Once the retry ends, its own end counts.
    done = run.start("--ends-run", "true", replica=REPLICA, backoff=1, options=options)
    assert finish(done)[0] == 0
    state = read_run(run_dir, with_scalars=False)
    assert state is not None and state.outcome == "succeeded"


def test_an_older_supervisors_retry_under_the_same_number_is_running(tmp_path: Path) -> None:
    # Written by hand: an older supervisor gave attempt 1 back and its retry claimed number 1
    # again, appending to the same log after the first one's "ended" line. The claim is live
    # (it beats, no exit record), so that line is not its end.
    run_dir = tmp_path / "run"
    claim = run_dir / ".tftrain-run" / "attempts" / f"run-1a2b3c4d.g1.{REPLICA}.1"
    claim.mkdir(parents=True)
    (claim / "beat").write_text(f"{int(time.time())}\n")
    logs = run_dir / "replicas" / REPLICA / "logs"
    logs.mkdir(parents=True)
    (logs / f"run-1a2b3c4d.g1.{REPLICA}.1.log").write_text(
        f"serving\ntftrain-supervise: {REPLICA} attempt 1 ended: exit 143\nserving again\n"
    )
    state = read_run(run_dir, with_scalars=False)
    assert state is not None and state.outcome == "running"
    ((attempt),) = state.attempts[REPLICA]
    assert (attempt.number, attempt.exit_code) == (1, None)
    assert state.result(attempt) == "running"
