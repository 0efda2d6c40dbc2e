"""Records that tell what happened in every ending, not only the polite ones (issue 35):
the start of an attempt as recorded (not its claim's mtime), a supervisor that died without
a word (a SIGKILLed launcher) read as lost once its heartbeat is old, an attempt given back
on SIGTERM recorded and counted as the Job counts it, and a volume filled by a log that
still gets the outcome. Real processes: the launcher with the fake TFJob-style trainer
(`cluster_helpers`), or one supervisor on a small tmpfs.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from infra.lifecycle import TERMINATION_GRACE_SECONDS
from infra.local.cli import main as launch
from infra.local.plan import REPO
from infra.records.run_state import RESUME, read_run
from infra.status.local import describe_run
from tests.cluster_helpers import (
    WAIT,
    Launcher,
    fake_stacks_dir,
    launcher_args,
    reaping,
    records,
    summary_line,
    wait_until,
)


@pytest.fixture
def stacks_dir(tmp_path: Path) -> Path:
    return fake_stacks_dir(tmp_path)


def test_wall_times_come_from_the_recorded_starts(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The chief trains 3 s after every replica has started: the run's wall time is at least
    # that, however late the records written into each claim (beat, exit) moved its mtime.
    with reaping(stacks_dir):
        code = launch(launcher_args(stacks_dir, "--set", "job.args=[--chief-seconds, '3']"))
    out = capsys.readouterr().out
    assert code == 0, out
    state = read_run(stacks_dir / "out", with_scalars=False)
    assert state is not None and state.outcome == "succeeded"
    assert state.wall_seconds is not None and state.wall_seconds >= 3.0, state
    chief = state.attempts["mnist-chief-0"][0]
    assert chief.last_output - chief.started >= 3.0, chief
    shown = "\n".join(describe_run(state))
    wall = float(re.search(r"wall time ([\d.]+)s", shown)[1])  # type: ignore[index]
    assert wall >= 3.0, shown


def test_a_sigkilled_launcher_leaves_a_lost_run_with_how_to_continue(stacks_dir: Path) -> None:
    launcher = Launcher(stacks_dir, "--set", "job.args=[--hang]")
    try:
        with reaping(stacks_dir):
            assert wait_until(lambda: len(records(stacks_dir)) == 4, WAIT)
            # No handler, no `finally`: the supervisors die by their parent-death signal.
            os.kill(launcher.popen.pid, signal.SIGKILL)
            launcher.popen.wait(timeout=WAIT)
            run_dir = stacks_dir / "out"
            # Lost at once, by the default 30 s window: its launcher's record names a process
            # that is gone, so no heartbeat needs to age first.
            state = read_run(run_dir, with_scalars=False)
            assert state is not None and state.outcome == "lost", state
            text = state.describe()
            assert text.startswith("lost: its launcher was killed, and its replicas with it (")
            assert RESUME in text, text
            assert all(
                state.result(runs[-1]).startswith("lost (no exit: its launcher was killed; ")
                for runs in state.attempts.values()
            ), state
    finally:
        launcher.close()


def test_replicas_the_launcher_had_to_kill_read_killed_by_it_not_lost(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The others ignore SIGTERM: their supervisors would wait 2 s (their stop grace), but the
    # launcher's own grace is 0.5 s, so it SIGKILLs them before they record an exit.
    options = ("--set", "job.args=[--ignore-sigterm]", "--grace", "0", "--stop-grace", "0.5")
    with reaping(stacks_dir):
        code = launch(launcher_args(stacks_dir, *options))
    out = capsys.readouterr().out
    assert code == 0, out
    state = read_run(stacks_dir / "out", with_scalars=False)
    assert state is not None and state.outcome == "succeeded", out
    killed = "killed by the launcher as the run stopped (no exit recorded)"
    results = {name: state.result(runs[-1]) for name, runs in state.attempts.items()}
    assert results.pop("mnist-chief-0") == "exit 0", results
    assert set(results.values()) == {killed}, results
    report = (stacks_dir / "out" / "report" / "report.md").read_text()
    assert report.count(f"| {killed} |") == 3, report


def _started_pid(launcher: Launcher, name: str) -> int:
    return int(launcher.wait_for_line(rf"started {name} \(pid (\d+)\)")[1])


def test_a_sigtermed_attempt_is_given_back_not_counted_and_keeps_its_own_log(
    stacks_dir: Path, tmp_path: Path
) -> None:
    # backoffLimit 0: a failure of worker 1 would end the run. A SIGTERM from outside (a
    # preemption) is not a failure: given back, restarted, the run goes on and succeeds.
    go = tmp_path / "go"
    args = f"job.args=[--chief-until, '{go}']"
    launcher = Launcher(stacks_dir, "--set", args, "--set", "job.backoffLimit=0")
    try:
        with reaping(stacks_dir):
            pid = _started_pid(launcher, "mnist-worker-1")
            assert wait_until(lambda: "worker-1" in records(stacks_dir), WAIT)
            os.kill(pid, signal.SIGTERM)  # to its supervisor, as the kubelet sends it
            launcher.wait_for_line(r"mnist-worker-1 exited 143; given back")
            launcher.wait_for_line(r"started mnist-worker-1 \(pid \d+\)")
            go.touch()
            assert launcher.finish() == 0, launcher.text()
    finally:
        launcher.close()
    out = launcher.text()
    assert "restart 1 of" not in out, out
    run_dir = stacks_dir / "out"
    logs = sorted((run_dir / "replicas" / "mnist-worker-1" / "logs").glob("*.log"))
    assert [log.name.rsplit(".", 2)[1] for log in logs] == ["1", "2"]  # one log per attempt
    first = logs[0].read_text().splitlines()
    ended = [line for line in first if " attempt 1 ended: " in line]
    assert ended == [
        "tftrain-supervise: mnist-worker-1 attempt 1 ended: exit 143 (its command: exit 143; "
        "given back: told to stop from outside, not counted against the backoff limit)"
    ], first
    assert " attempt 1 ended: " not in logs[1].read_text()
    state = read_run(run_dir, with_scalars=False)
    assert state is not None and state.outcome == "succeeded"
    one, two = state.attempts["mnist-worker-1"]
    assert (one.exit_code, one.how, two.how) == (143, "given-back", "run-ended")
    assert state.result(one).startswith("given back (told to stop from outside")
    # The follower stopped by the run's success: what its supervisor and the launcher say.
    assert state.result(two) == "stopped at the run's end: exit 0"
    assert "exit 0" in summary_line(out, "mnist-worker-1")
    shown = "\n".join(describe_run(state))
    assert "killed by SIGTERM" not in shown, shown


def test_ctrl_c_stops_the_primary_first_and_says_how_to_continue(
    stacks_dir: Path, tmp_path: Path
) -> None:
    # The fake chief never ends by itself here; Ctrl-C (SIGINT to the launcher) must stop the
    # chief before its ps and workers, and leave a run that reads as stopped, not running.
    launcher = Launcher(stacks_dir, "--set", "job.args=[--hang]")
    try:
        with reaping(stacks_dir):
            assert wait_until(lambda: len(records(stacks_dir)) == 4, WAIT)
            begun = time.monotonic()
            launcher.popen.send_signal(signal.SIGINT)
            assert launcher.finish() == 128 + signal.SIGINT, launcher.text()
            assert time.monotonic() - begun < WAIT
    finally:
        launcher.close()
    out = launcher.text()
    first = out.index("stopping mnist-chief-0 (it saves its checkpoint)")
    assert first < out.index("stopping the other replicas"), out
    assert f"stopped: {RESUME}" in out, out
    state = read_run(stacks_dir / "out", with_scalars=False)
    assert state is not None and state.outcome == "stopped", state
    assert all(runs[-1].how == "given-back" for runs in state.attempts.values()), state
    assert state.describe().startswith("stopped from outside"), state.describe()
    del tmp_path, begun


@pytest.mark.slow
def test_ctrl_c_on_the_dev_run_under_cpu_load_keeps_the_step_and_stops_promptly(
    tmp_path: Path,
) -> None:
    # The real trainer on the dev stack (chief, 2 workers, ps), every core kept busy by
    # other processes, Ctrl-C mid-training: the chief saves the step it reached, nothing is
    # SIGKILLed, the ps does not wait on a chief already gone, and the run reads stopped.
    run_dir = tmp_path / "run"
    argv = [sys.executable, "-m", "infra.local", "dev", "--output-dir", str(run_dir)]
    argv += ["--set", "hyperparams.maxSteps=200000", "--set", "hyperparams.logSteps=20"]
    launcher = subprocess.Popen(
        argv,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    assert launcher.stdout is not None
    stdout = launcher.stdout
    reader = threading.Thread(target=lambda: lines.extend(stdout), daemon=True)
    reader.start()
    burners: list[subprocess.Popen[bytes]] = []
    try:
        assert wait_until(lambda: any("[mnist-chief-0]" in x and "Step: " in x for x in lines), 600)
        burners = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(os.cpu_count() or 2)
        ]
        begun = time.monotonic()
        launcher.send_signal(signal.SIGINT)
        code = launcher.wait(timeout=2 * TERMINATION_GRACE_SECONDS + 30)
        seconds = time.monotonic() - begun
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(launcher.pid, signal.SIGKILL)
    reader.join(timeout=10)
    out = "".join(lines)
    print(f"Ctrl-C to the launcher's exit under load: {seconds:.1f}s")  # shown with -s
    assert code == 128 + signal.SIGINT, out[-3000:]
    # Well inside one stop grace: the chief's chunk and save, then the others at once.
    assert seconds < TERMINATION_GRACE_SECONDS, (seconds, out[-3000:])
    assert "no checkpoint within" not in out and "SIGKILL" not in out, out[-3000:]
    saved = re.search(r"saved a checkpoint at step (\d+)", out)
    assert saved, out[-3000:]
    assert (run_dir / "checkpoints" / f"ckpt-{saved[1]}.index").exists()
    assert f"stopped: {RESUME}" in out
    state = read_run(run_dir, with_scalars=False)
    assert state is not None and state.outcome == "stopped", state
