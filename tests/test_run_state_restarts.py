"""A run with a restarted replica, read back while it runs (`infra.records.run_state.read_run`, what
`tftrain status` and the report show). The run directory is written by the real supervisor
(infra/lifecycle/supervise.sh, as the local launcher and the pods run it), not by hand: a
replica that failed once and runs its retry, and one preempted (its attempt given back, the
same number claimed again, its log appended to) that runs again. Either way the run is
running until its retry ends, as the supervisor's header defines an attempt's end."""

from __future__ import annotations

import os
import signal
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


def test_a_retry_after_a_failure_is_running(tmp_path: Path) -> None:
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
        lines = list(describe_run(state, tmp_path))
        assert lines[0].startswith("run: running (last output "), lines
        log = f"replicas/{REPLICA}/logs/run-1a2b3c4d.g1.{REPLICA}.2.log"
        assert f"  {REPLICA:<20} 2 attempts, 1 restart: running; {log}" in lines
    finally:
        os.killpg(retry.pid, signal.SIGKILL)  # its group: the supervisor and the command
        finish(retry)


@pytest.mark.parametrize("code", [0, 143])
def test_a_preempted_replica_running_again_is_running(tmp_path: Path, code: int) -> None:
    # Preempted, its handler exits `code`: the attempt is given back and the retry claims
    # number 1 again, appending to the same log after the first one's "ended" line.
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
        ((attempt),) = state.attempts[REPLICA]
        assert (attempt.number, attempt.exit_code) == (1, None)
    finally:
        os.killpg(retry.pid, signal.SIGKILL)  # its group: the supervisor and the command
        finish(retry)
    # Once the retry ends, its own end counts.
    done = run.start("--ends-run", "true", replica=REPLICA, backoff=1, options=options)
    assert finish(done)[0] == 0
    state = read_run(run_dir, with_scalars=False)
    assert state is not None and state.outcome == "succeeded"
