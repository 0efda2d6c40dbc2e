"""`tftrain status` for runs on this machine (`infra.status.local`): what it prints for a run
directory written by hand in the supervisor's formats (tests/test_run_report.py's helpers),
line by line, and which metric leads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from infra.records.run_state import Failure, RunState, read_run
from infra.records.tensorboard_scalars import Point
from infra.status.local import (
    describe_run,
    headline_metric,
    inert,
    metric_text,
    pasteable,
    run_dirs,
    run_record,
    runs_root,
)
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


def _state(tmp_path: Path, **kw: object) -> RunState:
    fields: dict = {
        "directory": tmp_path / "run", "key": KEY, "generation": NEW, "outcome": "succeeded",
        "failure": None, "attempts": {}, "metrics": {}, "scalars": {},
    }  # fmt: skip
    return RunState(**(fields | kw))


def test_an_accuracy_scalar_leads_when_metrics_txt_has_none(tmp_path: Path) -> None:
    # The newest-stepped accuracy series, named with its directory below the run's.
    scalars = {
        ".": {"accuracy": [Point(10, 0.5, 1.0), Point(20, 0.61234, 2.0)]},
        "eval": {"val_accuracy": [Point(30, 0.7, 3.0)], "loss": [Point(40, 0.1, 4.0)]},
    }
    state = _state(tmp_path, scalars=scalars)
    assert metric_text(state) == "eval/val_accuracy 0.7000 (step 30)"
    assert headline_metric(state) == ("eval/val_accuracy", 0.7)
    assert metric_text(_state(tmp_path, scalars={".": {"loss": [Point(1, 2.0, 1.0)]}})) == (
        "no metric yet"
    )
    # metrics.txt first, whatever the scalars say.
    state = _state(tmp_path, scalars=scalars, metrics={"loss": 0.25})
    assert metric_text(state) == "loss 0.25"


def test_a_running_run_says_how_long_ago_it_last_spoke(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    claim = tmp_path / "run" / ".tftrain-run" / "attempts" / f"{KEY}.{NEW}.mnist-chief-0.1"
    claim.mkdir(parents=True)
    (claim / "start").write_text("1000\n")
    (claim / "beat").write_text("1020\n")
    monkeypatch.setattr(time, "time", lambda: 1027.0)
    state = read_run(tmp_path / "run")
    assert state is not None
    monkeypatch.chdir(tmp_path)
    assert list(describe_run(state)) == [
        "run: running (last output 7s ago)",
        "  step -, no metric yet, wall time 27.0s",  # to now, while it runs
        "  mnist-chief-0        1 attempt: running; no log",  # its log could not be written
    ]
    assert run_record(state)["replicas"] == [
        {"name": "mnist-chief-0", "attempts": 1, "result": "running", "log": None}
    ]


def test_status_json_of_a_failed_run_names_the_failure_and_the_report(tmp_path: Path) -> None:
    run = failed_run(tmp_path)
    (run / "report").mkdir()
    (run / "report" / "report.md").write_text("# x\n")
    state = read_run(run)
    assert state is not None
    record = run_record(state)
    assert record["failure"] == {
        "replica": "mnist-worker-1", "attempt": 2, "exit_code": 2, "cause": "exit 2"
    }  # fmt: skip
    assert record["report"] == str(run / "report" / "report.md")
    assert (record["outcome"], record["metric"], record["step"]) == ("failed", None, None)
    assert (record["job"], record["run_id"]) == (tmp_path.name, "run")
    assert record["started"] == "1970-01-01T00:33:20Z"  # 2000 s after the epoch
    assert record["wall_seconds"] == 70.0
    assert [(r["name"], r["attempts"], r["result"]) for r in record["replicas"]] == [
        ("mnist-chief-0", 1, "stopped at the run's end: exit 2"),
        ("mnist-worker-1", 2, "exit 2"),
    ]
    failure = Failure("r-ps-0", None, 3, "")
    lost = run_record(_state(tmp_path / "bare", outcome="failed", failure=failure))
    assert lost["failure"] == {
        "replica": "r-ps-0", "attempt": 3, "exit_code": None,
        "cause": "lost on its last attempt (killed with its supervisor: no heartbeat)",
    }  # fmt: skip
    assert lost["started"] is None and lost["wall_seconds"] is None and lost["report"] is None


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain\ttabbed", "plain\ttabbed"),  # a tab moves nothing
        ("\x1b[31mred", "\\x1b[31mred"),
        ("a\rb", "a\\rb"),
        ("del\x7f", "del\\x7f"),
        ("c1\x85\x9b", "c1\\x85\\x9b"),
        ("\u202eevil", "\\u202eevil"),
        ("\u2066iso\u2069", "\\u2066iso\\u2069"),
        ("naïve — ok", "naïve — ok"),
    ],
)
def test_log_lines_show_controls_as_escapes(text: str, shown: str) -> None:
    assert inert(text) == shown


def test_a_path_is_pasted_relative_below_here_else_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "here" / "runs").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "here")
    assert pasteable(tmp_path / "here" / "runs" / "a.log") == "runs/a.log"
    assert pasteable(Path("runs")) == "runs"
    assert pasteable(tmp_path / "elsewhere") == str(tmp_path / "elsewhere")
    assert runs_root("dev", Path("runs")) == tmp_path / "here" / "runs"
    assert runs_root("dev", None) == Path(__file__).resolve().parents[1] / "runs" / "dev"


def test_the_newest_accuracy_leads_whatever_its_name(tmp_path: Path) -> None:
    scalars = {
        ".": {"accuracy": [Point(30, 0.9, 3.0)]},
        "eval": {"val_accuracy": [Point(20, 0.7, 2.0)]},  # sorts after "accuracy", older
    }
    assert headline_metric(_state(tmp_path, scalars=scalars)) == ("accuracy", 0.9)


def test_a_run_with_no_time_between_start_and_last_sign_says_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claim = tmp_path / "run" / ".tftrain-run" / "attempts" / f"{KEY}.{NEW}.mnist-chief-0.1"
    claim.mkdir(parents=True)
    (claim / "start").write_text("1000\n")  # killed at once: no beat, no log, no exit
    state = read_run(tmp_path / "run")
    assert state is not None and state.wall_seconds == 0.0
    monkeypatch.chdir(tmp_path)
    assert list(describe_run(state))[1] == "  step -, no metric yet, wall time 0.0s"
