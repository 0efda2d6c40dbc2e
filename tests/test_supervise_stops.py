"""How an attempt stops, held to the supervisor's header (infra/lifecycle/supervise.sh) and
docs/lifecycle.md "Lifecycle", with bounds measured against the value each case configures:

- a trainer told to stop (SIGTERM) keeps every line it prints while it stops, in the attempt's
  log and on stdout, and its save: the log's copier ignores SIGTERM and the supervisor waits
  for the command;
- an attempt told to stop has said so (its `term` record): killed afterwards (the platform's
  SIGKILL at the end of the pod's grace), it is not "lost" although it stopped beating;
- a lost peer is called lost after --lost-after s of silence, not after twice that;
- a follower of a succeeded run gets --finish-grace s, not twice that, before SIGTERM, and
  reads "stopping at the run's end" in `status` while its stop grace runs, never "lost";
- the export waits for an --await replica that never ends --await-limit s, not twice that.

Times are read from events the scripts leave (the success record's mtime, the time a trap
wrote, the silence the failure record states), so a loaded machine stretches only the waits,
never the bounds' meaning. Each bound sits below twice the configured value: a doubled
timeout fails it.
"""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

from infra.records.run_state import read_run
from infra.status.local import describe_run
from tests.cluster_helpers import wait_until
from tests.test_supervise_script import Run, at_once, finish, started, trapping


def _clock(path: Path) -> str:
    """A shell command writing the current time, in seconds with fractions, to `path`."""
    return f"date +%s.%N > {path}.partial && mv {path}.partial {path}"


def _time_in(path: Path) -> float:
    return float(path.read_text())


# --- SIGTERM while the trainer prints and saves -----------------------------------------------


def test_a_trainer_printing_while_it_stops_keeps_its_lines_and_its_save(tmp_path: Path) -> None:
    at_once(_a_trainer_printing_while_it_stops_keeps_its_lines_and_its_save, tmp_path, pid1=True)


def _a_trainer_printing_while_it_stops_keeps_its_lines_and_its_save(
    run: Run, tmp_path: Path
) -> None:
    # Its handler prints 20 lines over a second, then saves and exits 0; SIGTERM goes to the
    # whole group as PID 1 sends it, the log's copier (tee) included.
    logs, flag, save = tmp_path / "logs", tmp_path / "serving", tmp_path / "ckpt-final"
    handler = (
        "i=0; while [ $i -lt 20 ]; do echo stopping-$i; i=$((i + 1)); sleep 0.05; done; "
        f"echo saving > {save}.partial && mv {save}.partial {save}; echo saved; exit 0"
    )
    process = run.start(
        "--ends-run", *trapping(flag, handler), replica="r-chief-0", backoff=0,
        options=("--logs", str(logs)),
        env={**os.environ, "TMPDIR": str(tmp_path)},  # its own, as a container's /tmp is
    )  # fmt: skip
    assert wait_until(flag.exists, 10)
    run.signal(process, signal.SIGTERM)
    status, out = finish(process)
    assert status == 143, out  # told to stop: its Job runs it again
    assert save.read_text() == "saving\n", out
    expected = [f"stopping-{i}" for i in range(20)] + ["saved"]
    # The trainer's own shell may say its `sleep` was "Terminated": its output too.
    printed = [line for line in out.splitlines() if line != "Terminated"]
    assert [line for line in printed if not line.startswith("tftrain-supervise")] == expected, out
    log = [line for line in (logs / "r1.g1.r-chief-0.1.log").read_text().splitlines()
           if line != "Terminated"]  # fmt: skip
    # One truth: the attempt ended 143 (given back), its command's own 0 said beside it.
    assert log == [
        *expected,
        "tftrain-supervise: r-chief-0 attempt 1 ended: exit 143 (its command: exit 0; given "
        "back: told to stop from outside, not counted against the backoff limit)",
    ], log
    assert not run.succeeded.exists() and not run.failed.exists()


# --- A peer told to stop, then killed, on its last attempt ----------------------------------


def test_a_peer_told_to_stop_then_killed_on_its_last_attempt_is_not_lost(tmp_path: Path) -> None:
    at_once(_a_peer_told_to_stop_then_killed_on_its_last_attempt_is_not_lost, tmp_path, pid1=True)


def _a_peer_told_to_stop_then_killed_on_its_last_attempt_is_not_lost(
    run: Run, tmp_path: Path
) -> None:
    # The chief, on its last attempt, is preempted: SIGTERM (it says so), its trainer ignores
    # it, and at the end of the pod's grace the kubelet kills the container whole. Its Job
    # runs it again; the ps must not fail the run for a silence it was told about.
    lost_after = 1
    peers = ("--peers", "r-chief-0 r-ps-0", "--lost-after", str(lost_after))
    chief_flag, ps_flag = tmp_path / "chief", tmp_path / "ps"
    chief = run.start(
        "--ends-run", *trapping(chief_flag, ""), replica="r-chief-0", backoff=0, options=peers
    )
    ps = run.start(
        "--follows-run", "sh", "-c", started(ps_flag), replica="r-ps-0", backoff=0,
        options=peers,
    )  # fmt: skip
    assert wait_until(lambda: chief_flag.exists() and ps_flag.exists(), 10)
    claim = run.attempt("r-chief-0", 1)
    run.signal(chief, signal.SIGTERM)
    assert wait_until((claim / "term").exists, 10)
    os.kill(run.supervisor_pid(chief), signal.SIGKILL)  # PID 1 dies: its namespace with it
    finish(chief)
    chief_beat = int((claim / "beat").read_text())
    # Wait for the ps to have judged its peers past the silence: it beats, then judges, so a
    # beat two seconds past the bound means the judgement one second past it is done.
    ps_beat = run.attempt("r-ps-0", 1) / "beat"
    assert wait_until(lambda: int(ps_beat.read_text() or 0) >= chief_beat + lost_after + 2, 20)
    assert not run.failed.exists(), run.failed.read_text()
    assert ps.poll() is None
    # The chief's retry succeeds; the run ends as any other.
    assert finish(run.start("--ends-run", "true", replica="r-chief-0", backoff=1))[0] == 0
    status, out = finish(ps)
    assert status == 0 and "lost" not in out, out


# --- Bounds against the configured value ---------------------------------------------------


def test_a_lost_peer_is_called_lost_after_its_silence_not_twice_it(tmp_path: Path) -> None:
    at_once(_a_lost_peer_is_called_lost_after_its_silence_not_twice_it, tmp_path, pid1=False)


def _a_lost_peer_is_called_lost_after_its_silence_not_twice_it(run: Run, tmp_path: Path) -> None:
    # A ps on its last attempt whose record stops beating (its node lost): the chief judges
    # it. The failure record states the silence the chief measured when it called it lost:
    # more than --lost-after, and less than twice it (it looks once a second).
    lost_after = 4
    flag = tmp_path / "chief"
    chief = run.start(
        "--ends-run", "sh", "-c", started(flag), replica="r-chief-0", backoff=0,
        options=("--peers", "r-chief-0 r-ps-0", "--lost-after", str(lost_after)),
    )  # fmt: skip
    assert wait_until(flag.exists, 10)
    ghost = run.attempt("r-ps-0", 1)
    ghost.mkdir(parents=True)
    (ghost / "beat").write_text(f"{int(time.time())}\n")  # then never again
    status, out = finish(chief, 30)
    assert status == 2, out
    record = run.failed.read_text()
    assert record.startswith("r-ps-0 lost attempt 1 on "), record
    silence = re.search(r"no heartbeat for (\d+)s", record)
    assert silence is not None, record
    assert lost_after < int(silence.group(1)) < 2 * lost_after, record


def test_a_follower_gets_its_finish_grace_not_twice_it(tmp_path: Path) -> None:
    at_once(_a_follower_gets_its_finish_grace_not_twice_it, tmp_path, pid1=False)


def _a_follower_gets_its_finish_grace_not_twice_it(run: Run, tmp_path: Path) -> None:
    # The evaluator still scores at the run's success: SIGTERM comes --finish-grace s after
    # the success record (a watcher looks every half second), never before, never at twice.
    finish_grace = 2
    flag, heard = tmp_path / "evaluating", tmp_path / "sigterm-at"
    evaluator = run.start(
        "--follows-run", *trapping(flag, f"{_clock(heard)}; exit 0"), replica="r-evaluator-0",
        options=("--finish-grace", str(finish_grace)),
    )  # fmt: skip
    assert wait_until(flag.exists, 10)
    assert finish(run.start("--ends-run", "true", replica="r-chief-0"))[0] == 0
    status, out = finish(evaluator)
    assert status == 0, out
    after = _time_in(heard) - run.succeeded.stat().st_mtime
    assert finish_grace <= after < 1.75 * finish_grace, (after, out)


def test_a_follower_in_its_stop_grace_reads_stopping_not_lost(tmp_path: Path) -> None:
    at_once(_a_follower_in_its_stop_grace_reads_stopping_not_lost, tmp_path, pid1=False)


def _a_follower_in_its_stop_grace_reads_stopping_not_lost(run: Run, tmp_path: Path) -> None:
    # The worker's trainer ignores SIGTERM: after the chief's success its supervisor waits out
    # the stop grace, beating. What `status` shows then is what is happening.
    flag, heard = tmp_path / "serving", tmp_path / "told"
    worker = run.start(
        "--follows-run", *trapping(flag, f"touch {heard}"), replica="r-worker-0", grace=4,
    )  # fmt: skip
    assert wait_until(flag.exists, 10)
    assert finish(run.start("--ends-run", "true", replica="r-chief-0"))[0] == 0
    assert wait_until(heard.exists, 10)
    state = read_run(run.outcomes.parent, with_scalars=False)
    assert state is not None and state.outcome == "succeeded"
    attempt = state.attempts["r-worker-0"][0]
    assert re.fullmatch(r"stopping at the run's end \(last heartbeat \ds ago\)",
                        state.result(attempt)), state  # fmt: skip
    line = next(line for line in describe_run(state) if "r-worker-0" in line)
    assert "stopping at the run's end" in line and "lost" not in line, line
    status, out = finish(worker)
    assert status == 0, out
    state = read_run(run.outcomes.parent, with_scalars=False)
    assert state is not None
    # Its supervisor's status, 0, as docs/lifecycle.md states; the SIGKILL is in its output.
    assert state.result(state.attempts["r-worker-0"][0]) == "stopped at the run's end: exit 0"
    assert "did not stop within 4s of SIGTERM: SIGKILL" in out, out


def test_the_export_waits_its_await_limit_not_twice_it(tmp_path: Path) -> None:
    at_once(_the_export_waits_its_await_limit_not_twice_it, tmp_path, pid1=False)


def _the_export_waits_its_await_limit_not_twice_it(run: Run, tmp_path: Path) -> None:
    # The evaluator's attempt never ends (its node is gone, its record stays): the export runs
    # --await-limit s after the success, said, and not later than twice that.
    limit = 2
    hung = run.attempt("r-evaluator-0", 1)
    hung.mkdir(parents=True)
    hook, ran = tmp_path / "export.sh", tmp_path / "exported-at"
    hook.write_text(_clock(ran) + "\n")
    chief = run.start(
        "--ends-run", "true", replica="r-chief-0", on_success=hook,
        options=("--await", "r-evaluator-0", "--await-limit", str(limit)),
    )  # fmt: skip
    status, out = finish(chief, 30)
    assert status == 0, out
    assert f"waiting for r-evaluator-0 to finish (up to {limit}s)" in out
    after = _time_in(ran) - run.succeeded.stat().st_mtime
    assert limit <= after < 1.75 * limit, (after, out)
