"""Restarts and resume: the local launcher applies the stack's restart policy the way
Kubernetes applies it to each replica's Job, and the trainer picks up where it left off.

Fast (default suite): the restart and backoff mechanics with the fake TFJob-style trainer
of `cluster_helpers`, and the real trainer's configuration and data errors, which must end
the job once the backoff limit is used up rather than hang.

Slow (`-m slow`): the real trainer on the dev topology (1 ps, 2 workers, chief) under the
real launcher, small data, with one replica SIGKILLed (a crash) or SIGTERMed (a preemption
notice) mid-run at a step drawn by a seeded RNG (`tests/fault_harness.py` drives the runs and
parses what the launcher prints).
"""

from __future__ import annotations

import random
import re
import signal
import time
from dataclasses import replace
from pathlib import Path

import pytest

from infra.local.cli import main
from infra.local.supervisor import Backoff
from tests.cluster_helpers import (
    Launcher,
    all_pids,
    assert_all_gone,
    fake_stacks_dir,
    launcher_args,
    reaping,
    starts,
    summary_line,
)
from tests.fault_harness import AFTER_TRAINING, CHIEF, Fault, Outcome, RunConfig, run

SMALL_RUN = RunConfig()
WORKER_0 = "mnist-worker-0"
# Measured on SMALL_RUN: 0.981-0.983 test accuracy without a fault, 0.976-0.983 with one
# (asynchronous ps updates make every run differ a little). The floor sits below that
# spread; it catches a resume that lost the model late in the run. A model lost early
# would still reach it, which the cost check below catches instead.
ACCURACY_FLOOR = 0.965
# A fresh model's first 10 steps average a cost of ~2 (and still ~1.2 over steps 10-20);
# a model restored from any checkpoint (step >= 50) is below 0.4.
RESTORED_COST_CEILING = 1.0


@pytest.fixture
def stacks_dir(tmp_path: Path) -> Path:
    return fake_stacks_dir(tmp_path)


def test_backoff_delays_double_up_to_the_cap() -> None:
    assert [Backoff(limit=6).delay(n) for n in range(1, 7)] == [1, 2, 4, 8, 10, 10]


def test_a_replica_that_fails_once_comes_back_on_its_port(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The chief runs long enough for the restart to rejoin a run that has not ended yet.
    args = "job.args=[--fail-starts, 'worker:1:1', --chief-seconds, '4']"
    options = ("--set", "job.backoffLimit=2", "--set", args)
    with reaping(stacks_dir):
        status = main(launcher_args(stacks_dir, *options))
    out = capsys.readouterr().out
    assert status == 0, out
    assert re.search(
        r"^\[launcher\] +mnist-worker-1 exited 3; restart 1 of 2 in 1\.0s$", out, re.MULTILINE
    ), out
    runs = starts(stacks_dir)
    assert {name: len(records) for name, records in runs.items()} == {
        "chief-0": 1, "worker-0": 1, "worker-1": 2, "ps-0": 1
    }  # fmt: skip
    first, second = runs["worker-1"]
    # The same TF_CONFIG (so the same port, which its peers' TF_CONFIG names) and env.
    assert second["tf_config"] == first["tf_config"]
    assert second["env"] == first["env"]
    assert second["pid"] != first["pid"]
    assert "exit 0" in summary_line(out, "mnist-worker-1")
    assert "1 restart (after exit 3)" in summary_line(out, "mnist-worker-1")
    assert "restart" not in summary_line(out, "mnist-chief-0")
    assert "restarts: 1 (up to 2 per replica: job.backoffLimit)" in out
    assert_all_gone(all_pids(stacks_dir))


def test_a_replica_that_always_fails_ends_the_job_at_the_backoff_limit(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = ("--set", "job.backoffLimit=2", "--set", "job.args=[--hang, --fail, 'worker:1:3']")
    started = time.monotonic()
    with reaping(stacks_dir):
        status = main(launcher_args(stacks_dir, *options))
    seconds = time.monotonic() - started
    out = capsys.readouterr().out
    assert status == 3, out
    assert "mnist-worker-1 exited 3; restart 1 of 2 in 1.0s" in out
    assert "mnist-worker-1 exited 3; restart 2 of 2 in 2.0s" in out
    assert (
        "FAILED: mnist-worker-1 exit 3 after 2 restarts: job.backoffLimit 2 reached; "
        "the others end with the run"
    ) in out
    assert seconds >= 3  # both delays were waited out
    assert len(starts(stacks_dir)["worker-1"]) == 3
    # Attempt 3 of 3 was worker 1's last: its supervisor failed the run, and the chief's
    # supervisor stopped the chief with exit 2, as the Jobs would in the cluster.
    assert "attempt 3, its last of 3" in out
    assert "exit 2" in summary_line(out, "mnist-chief-0")
    assert_all_gone(all_pids(stacks_dir))


def test_stopping_the_launcher_during_a_backoff_delay_leaves_no_process(stacks_dir: Path) -> None:
    with reaping(stacks_dir):
        launcher = Launcher(
            stacks_dir,
            *("--set", "job.backoffLimit=3", "--set", "job.args=[--hang, --fail, 'worker:1:3']"),
        )
        try:
            launcher.wait_for_line(r"mnist-worker-1 exited 3; restart 1 of 3 in 1\.0s")
            launcher.popen.send_signal(signal.SIGTERM)
            assert launcher.finish() == 128 + signal.SIGTERM
        finally:
            launcher.close()
        assert len(starts(stacks_dir)["worker-1"]) == 1  # the pending restart never ran
        assert_all_gone(all_pids(stacks_dir))


def run_dev(tmp_path: Path, *overrides: str) -> int:
    """The dev stack with the real trainer, launched in this process; one restart each."""
    sets = [arg for override in ("job.backoffLimit=1", *overrides) for arg in ("--set", override)]
    return main(["dev", *sets, "--output-dir", str(tmp_path / "out"), "--timeout", "120"])


def test_a_trainer_usage_error_ends_the_job_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Every replica exits 2 before importing TensorFlow. Exit 2 is final (the Jobs'
    # podFailurePolicy fails the Job at once), so nothing is restarted despite the limit.
    status = run_dev(tmp_path, "job.args=[--strategy, multi_worker_mirrored]")
    out = capsys.readouterr().out
    assert status == 2, out
    assert "multi_worker_mirrored uses no ps, but the TF_CONFIG cluster has ps tasks" in out
    assert re.search(r"FAILED: mnist-\S+ exit 2 \(exit code 2 is final: no restarts", out), out
    assert "restart 1 of 1" not in out


def test_bad_data_ends_the_job_after_the_chiefs_restarts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "no-data"
    empty.mkdir()
    status = run_dev(tmp_path, f"job.dataDir={empty}")
    out = capsys.readouterr().out
    assert status == 1, out
    assert f"cannot read checksum file {empty}/SHA256SUMS" in out
    assert "FAILED: mnist-chief-0 exit 1 after 1 restart: job.backoffLimit 1 reached" in out


# --- the real trainer, one replica SIGKILLed mid-run ------------------------------------


def explain(outcome: Outcome) -> str:
    """The run's output with times, minus TensorFlow's noise, for a failed assertion."""
    noise = re.compile(r"\] +(I0000|E0000|W0000|WARNING|Additional GRPC|:UNKNOWN|This could)")
    return "".join(
        f"{at:7.2f} {line}"
        for at, line in zip(outcome.line_times, outcome.lines, strict=True)
        if not noise.search(line)
    )


def logged_steps(after: int, until: int) -> list[int]:
    """The steps a chief logs when it trains from step `after` to step `until`."""
    log = SMALL_RUN.log_steps
    return [step for step in range(after + 1, until + 1) if step % log == 0 or step == until]


def assert_completed(outcome: Outcome) -> None:
    """Every replica ended with exit 0 and the model is as good as a no-fault run's."""
    why = explain(outcome)
    assert outcome.status == 0, why
    assert outcome.final_status == dict.fromkeys(outcome.final_status, "exit 0"), why
    assert len(outcome.final_status) == 4, why
    assert outcome.final_step == SMALL_RUN.final_step, why
    assert outcome.accuracy is not None and outcome.accuracy >= ACCURACY_FLOOR, why


def kill_mid_run(
    tmp_path: Path, kind: str, signum: signal.Signals = signal.SIGKILL
) -> tuple[Outcome, Path]:
    # A step of its own for each replica kind; string seeds are stable across runs.
    step = SMALL_RUN.random_step(random.Random(f"fault-{kind}"))
    output_dir = tmp_path / "out"
    outcome = run(SMALL_RUN, output_dir, Fault(kind, step, signum))
    assert outcome.killed_at is not None, f"never reached step {step}\n{explain(outcome)}"
    return outcome, output_dir


@pytest.mark.slow
def test_a_killed_worker_is_restarted_and_the_chief_carries_on(tmp_path: Path) -> None:
    outcome, _ = kill_mid_run(tmp_path, "worker")
    why = explain(outcome)
    assert_completed(outcome)
    assert outcome.restarts == {**dict.fromkeys(outcome.restarts, 0), "mnist-worker-1": 1}, why
    # The coordinator re-ran the lost worker's steps elsewhere: one chief, no step lost
    # or logged twice.
    [chief] = outcome.chief_runs
    assert chief.resumed_step is None and chief.steps == logged_steps(0, SMALL_RUN.final_step)
    # The new worker served until its supervisor stopped it with the others.
    assert re.search(
        r"^\[mnist-worker-1\] +tftrain-supervise: run \S+ succeeded: stopping",
        outcome.output,
        re.MULTILINE,
    ), why


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["chief", "ps"])
def test_a_killed_chief_or_ps_resumes_from_the_last_checkpoint(tmp_path: Path, kind: str) -> None:
    outcome, output_dir = kill_mid_run(tmp_path, kind)
    why = explain(outcome)
    assert_completed(outcome)
    # A ps kill ends the chief too (every step needs the ps); the workers carry on.
    assert outcome.fault is not None
    restarted = {CHIEF, outcome.fault.target}
    assert outcome.restarts == {name: int(name in restarted) for name in outcome.restarts}, why
    first, resumed = outcome.chief_runs
    before, resumed_at = outcome.last_step_before_fault, outcome.resumed_step
    assert before is not None and resumed_at is not None, why
    # Checkpoints fall on multiples of checkpointSteps and a chunk of steps never crosses
    # one (the chief waits for all steps before saving), so at most one interval of steps
    # is ever unsaved: K - R <= checkpointSteps, with no slack for stepsPerExecution. K is
    # a logged step (every logSteps), so the steps run past K but lost are not counted.
    assert resumed_at % SMALL_RUN.checkpoint_steps == 0, why
    assert SMALL_RUN.checkpoint_steps <= resumed_at <= before, why
    assert before - resumed_at <= SMALL_RUN.checkpoint_steps, why
    # Each chief logged its own stretch with nothing skipped: the first from the start up
    # to K, the second from R to the end.
    assert first.steps == logged_steps(0, before), why
    assert resumed.steps == logged_steps(resumed_at, SMALL_RUN.final_step), why
    # The restored weights won over a fresh model (and, after a chief kill, over what the
    # surviving ps still held: a new chief creates new variables and fills them from the
    # checkpoint, so the old ones are never read).
    assert resumed.costs[0] < RESTORED_COST_CEILING, why
    assert (output_dir / "checkpoints" / f"ckpt-{SMALL_RUN.final_step}.index").exists()
    if kind == "ps":
        # The chief failed fast, with one line that names the step it resumes from.
        assert re.search(
            rf"\[{CHIEF}\] +tftrain: error: Parameter server unreachable \(UNAVAILABLE: .+\): "
            rf".*resumes from the latest checkpoint at step {resumed_at}$",
            outcome.output,
            re.MULTILINE,
        ), why


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["worker", "chief", "ps"])
def test_a_sigtermed_replica_loses_no_step(tmp_path: Path, kind: str) -> None:
    """SIGTERM is a preemption notice: the chief saves the step it reached (asked by the ps
    when the ps gets it), exits 143 and resumes exactly there; a worker just leaves."""
    outcome, _ = kill_mid_run(tmp_path, kind, signal.SIGTERM)
    why = explain(outcome)
    assert_completed(outcome)
    assert outcome.fault is not None
    target = outcome.fault.target
    given_back = "given back (told to stop from outside), not counted"
    assert re.search(
        rf"\[launcher\] +{target} exited 143; {re.escape(given_back)}", outcome.output
    ), why
    assert outcome.steps_lost == 0, why
    if kind == "worker":
        assert outcome.restarts == {name: int(name == target) for name in outcome.restarts}, why
        [chief] = outcome.chief_runs
        assert chief.steps == logged_steps(0, SMALL_RUN.final_step), why
        return
    # The chief stops too (a ps cannot go on without it saving, and vice versa).
    restarted = {CHIEF, target}
    assert outcome.restarts == {name: int(name in restarted) for name in outcome.restarts}, why
    assert f"{CHIEF} exited 143" in outcome.output, why
    first, resumed = outcome.chief_runs
    saved = first.preempted_step
    assert saved is not None and resumed.resumed_step == saved, why
    # Nothing ran twice: the first chief logged every interval up to the save (it drains
    # its progress before saving), the second every one after it.
    assert first.steps == list(range(SMALL_RUN.log_steps, saved + 1, SMALL_RUN.log_steps)), why
    assert resumed.steps == logged_steps(saved, SMALL_RUN.final_step), why
    assert resumed.costs[0] < RESTORED_COST_CEILING, why
    if kind == "ps":
        assert "ps:0: the chief has saved; exiting" in outcome.output, why
        assert "preempted (ps:0 got SIGTERM)" in outcome.output, why


@pytest.mark.slow
def test_multi_worker_mirrored_workers_agree_to_save_when_one_is_sigtermed(
    tmp_path: Path,
) -> None:
    """Under MWMS saving is collective: worker 1's notice reaches worker 0 through the
    per-chunk all-reduce, both save the same step and exit 143, and the run resumes there."""
    mwms = replace(SMALL_RUN, extra_overrides=("chief.number=0", "ps.number=0"), primary=WORKER_0)
    step = mwms.random_step(random.Random("fault-mwms"))
    outcome = run(mwms, tmp_path / "out", Fault("worker", step, signal.SIGTERM))
    why = explain(outcome)
    assert outcome.status == 0, why
    assert outcome.final_status == dict.fromkeys(outcome.final_status, "exit 0"), why
    assert outcome.restarts == {WORKER_0: 1, "mnist-worker-1": 1}, why
    first, resumed = outcome.chief_runs
    assert first.preempted_step is not None, why
    assert resumed.resumed_step == first.preempted_step, why
    assert outcome.steps_lost == 0, why
    assert outcome.final_step == mwms.final_step, why
    assert outcome.accuracy is not None and outcome.accuracy >= ACCURACY_FLOOR, why


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["worker", "chief"])
def test_a_replica_killed_after_training_completes_without_the_cluster(
    tmp_path: Path, kind: str
) -> None:
    """Killed after the final checkpoint, before the chief's success: a new worker ends with
    the run whether it restarts before the chief succeeds (stopped) or after (exits at
    once); a new chief does not need servers that may have been stopped."""
    fault = Fault(kind, AFTER_TRAINING)
    outcome = run(SMALL_RUN, tmp_path / "out", fault)
    why = explain(outcome)
    assert_completed(outcome)
    assert outcome.restarts == {name: int(name == fault.target) for name in outcome.restarts}, why
    if kind == "worker":
        assert re.search(
            r"^\[mnist-worker-1\] +tftrain-supervise: run \S+ "
            r"(succeeded: stopping|has already succeeded)",
            outcome.output,
            re.MULTILINE,
        ), why
    else:
        final = SMALL_RUN.final_step
        assert outcome.resumed_step == final and not outcome.chief_runs[-1].steps, why
        assert f"ckpt-{final} at step {final}: training is complete" in outcome.output, why


@pytest.mark.parametrize(
    ("message", "cause"),
    [
        (
            "Graph execution error:\n\n2 root error(s) found.\n  (0) UNAVAILABLE:  "
            "recvmsg:Connection reset by peer\nAdditional GRPC error information",
            "recvmsg:Connection reset by peer",
        ),
        ("Graph execution error:\n\nSocket closed\nAdditional GRPC error", "Socket closed"),
        ("", "no details"),
    ],
)
def test_a_lost_ps_is_one_line_naming_the_cause_and_the_resume_step(
    message: str, cause: str
) -> None:
    from tensorflow import errors

    from trainer.train_loop import _lost_message

    text = _lost_message(errors.UnavailableError(None, None, message), 300)
    assert text.startswith(f"Parameter server unreachable (UNAVAILABLE: {cause}): restart")
    assert text.endswith("it resumes from the latest checkpoint at step 300")
    assert "\n" not in text
