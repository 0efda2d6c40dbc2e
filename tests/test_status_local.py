"""`tftrain status` for runs on this machine (`infra.status.local`): what it prints for a run
directory written by hand in the supervisor's formats (tests/test_run_report.py's helpers),
line by line, and which metric leads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from infra.records.run_state import read_run
from infra.status.local import describe_run, metric_text, run_dirs
from tests.test_run_report import KEY, NEW, _attempt, _ended, failed_run


def test_a_failed_run_prints_its_failure_attempts_and_last_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = read_run(failed_run(tmp_path))
    assert state is not None
    monkeypatch.chdir(tmp_path)  # every path printed relative to where the user stands
    lines = list(describe_run(state))
    logs = f"logs/{KEY}.{NEW}"
    assert lines == [
        "run: FAILED: mnist-worker-1 attempt 2 exit 2",
        "  step -, no metric yet, wall time 70.0s",  # from 2000 to the last output, 2070
        f"  mnist-chief-0        1 attempt: stopped at the run's end: exit 2; "
        f"run/replicas/mnist-chief-0/{logs}.mnist-chief-0.1.log",
        f"  mnist-worker-1       2 attempts, 1 restart: exit 2; "
        f"run/replicas/mnist-worker-1/{logs}.mnist-worker-1.2.log",
        f"  last lines of run/replicas/mnist-worker-1/{logs}.mnist-worker-1.2.log:",
        "    | Traceback (most recent call last):",
        "    | ValueError: --learning-rate must be > 0",
        "    | tftrain-supervise: mnist-worker-1 attempt 2 ended: exit 2",
        f"    | tftrain-supervise: run {KEY} cannot succeed (mnist-worker-1 exit 2, final)",
    ]


def test_a_stopped_run_and_three_attempts_read_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    for n in (1, 2, 3):
        # Each preempted (SIGTERM) and given back, as today's supervisor records it.
        _attempt(run, NEW, "mnist-chief-0", n, 2000.0 + n, _ended("mnist-chief-0", n, 143))
        claim = run / ".tftrain-run" / "attempts" / f"{KEY}.{NEW}.mnist-chief-0.{n}"
        (claim / "start").write_text(f"{2000 + n}\n")
        (claim / "exit").write_text("143 given-back\n")
    (run / "report").mkdir()
    (run / "report" / "report.md").write_text("# x\n")
    state = read_run(run)
    assert state is not None
    monkeypatch.chdir(run)
    lines = list(describe_run(state))
    assert lines[0] == (
        ".: stopped from outside before it ended (Ctrl-C, a preemption, --timeout); "
        "run the same command again to continue from its last checkpoint"
    )
    assert lines[2] == (
        "  mnist-chief-0        3 attempts, 2 restarts: given back (told to stop from outside, "
        "not counted as a failure): killed by SIGTERM (exit 143); "
        f"replicas/mnist-chief-0/logs/{KEY}.{NEW}.mnist-chief-0.3.log"
    )
    assert lines[-1] == "  report: report/report.md"


@pytest.mark.parametrize(
    ("metrics", "text"),
    [
        ("loss 0.5\naccuracy 0.25\ntest_accuracy 0.9912\n", "test_accuracy 0.9912"),
        ("loss 0.5\nval_accuracy 0.8\naccuracy 0.25\n", "accuracy 0.2500"),
        ("loss 0.5\nval_accuracy 0.8\n", "val_accuracy 0.8000"),
        ("loss 0.5\nglobal_step 20\n", "loss 0.5"),
        ("", "no metric yet"),
    ],
)
def test_the_headline_metric_prefers_test_accuracy(tmp_path: Path, metrics: str, text: str) -> None:
    run = tmp_path / "run"
    _attempt(run, NEW, "mnist-chief-0", 1, 2000.0, "step 1\n")
    (run / "metrics.txt").write_text(metrics)
    state = read_run(run)
    assert state is not None and metric_text(state) == text


def test_runs_are_listed_newest_first(tmp_path: Path) -> None:
    for name, when in (("job/run-a", 1000), ("job/run-b", 3000), ("other/run-c", 2000)):
        records = tmp_path / name / ".tftrain-run"
        records.mkdir(parents=True)
        os.utime(records, (when, when))
    (tmp_path / "job" / "not-a-run").mkdir()
    assert run_dirs(tmp_path) == [tmp_path / "job/run-b", tmp_path / "other/run-c",
                                  tmp_path / "job/run-a"]  # fmt: skip
    assert run_dirs(tmp_path / "job" / "run-a") == [tmp_path / "job" / "run-a"]


def test_how_long_ago_reads_in_whole_seconds_never_negative() -> None:
    import time

    from infra.status.local import _ago

    assert _ago(None) == "-"
    assert _ago(time.time() - 5.2) == "5s ago"
    assert _ago(time.time() + 100) == "0s ago"  # a clock ahead of this one's
