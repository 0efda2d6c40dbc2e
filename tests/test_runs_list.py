"""`tftrain list` (`infra.status.runs_list`): a sweep found by its stack file's trials or by
its comparison's CSV, its outcomes counted in its trials' order, one trial said as one, a stack
chosen with --stack, and the line for no runs. Runs laid out by hand in the supervisor's
formats (tests/test_everyday_verbs.py); the expected table worked out from those layouts."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.config import load_stack
from infra.status.runs_list import main as list_runs
from tests.test_everyday_verbs import T0, failed_run, succeeded_run


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    root = tmp_path / "runs"
    # dev-sweep's two trials (their run ids as its stack file makes them), and a run of the
    # same job that is no trial of it.
    failing, passing = (trial.job.run_id for trial in load_stack("dev-sweep").trials)
    failed_run(root / "dev-sweep" / "mnist" / failing, T0 + 600)
    succeeded_run(root / "dev-sweep" / "mnist" / passing, T0)
    succeeded_run(root / "dev-sweep" / "mnist" / "run-plain000", T0 + 1200)
    # A stack whose file is gone: its sweep known only from its comparison's CSV.
    succeeded_run(root / "gone" / "mnist" / "run-eeee5555", T0 + 60)
    (root / "gone" / "mnist" / "sweep-results.csv").write_text(
        "trial,run_id,test_accuracy\n1,run-eeee5555,0.95\n2,,\n"
    )
    (root / "gone" / "mnist" / "no-replica-yet" / ".tftrain-run").mkdir(parents=True)
    yield root
    monkeypatch.delenv("TZ")
    time.tzset()


def test_a_sweep_by_stack_file_or_by_csv_counts_its_trials_outcomes(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failing, passing = (trial.job.run_id for trial in load_stack("dev-sweep").trials)
    assert list_runs(["--runs-dir", str(runs)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split() for line in lines] == [
        ["STACK", "JOB", "RUN", "ID", "OUTCOME", "STEP", "METRIC", "STARTED", "WALL"],
        ["dev-sweep", "mnist", "run-plain000", "succeeded", "120", "test_accuracy", "0.95",
         "2026-09-21", "14:06", "31.0s"],
        ["gone", "mnist", "sweep", "(1", "trial)", "1", "succeeded", "-", "-",
         "2026-09-21", "13:47", "-"],
        ["gone", "mnist", "run-eeee5555", "succeeded", "120", "test_accuracy", "0.95",
         "2026-09-21", "13:47", "31.0s"],
        ["dev-sweep", "mnist", "sweep", "(2", "trials)", "1", "failed,", "1", "succeeded",
         "-", "-", "2026-09-21", "13:46", "-"],
        ["dev-sweep", "mnist", failing, "failed", "-", "-", "2026-09-21", "13:56", "12.0s"],
        ["dev-sweep", "mnist", passing, "succeeded", "120", "test_accuracy", "0.95",
         "2026-09-21", "13:46", "31.0s"],
    ]  # fmt: skip
    # Columns line up; a trial's run id is indented two under its sweep's.
    column = lines[0].index("RUN ID")
    assert lines[1].index("run-plain000") == column
    assert lines[2].index("sweep (1 trial)") == column
    assert lines[3].index("run-eeee5555") == column + 2
    assert lines[0].index("OUTCOME") == lines[4].index("1 failed, 1 succeeded")


def test_one_stack_and_as_json(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert list_runs(["--runs-dir", str(runs), "--stack", "gone", "--json"]) == 0
    [sweep] = json.loads(capsys.readouterr().out)
    assert {k: sweep[k] for k in ("stack", "kind", "job")} == {
        "stack": "gone", "kind": "sweep", "job": "mnist"
    }  # fmt: skip
    [trial] = sweep["trials"]
    assert (trial["stack"], trial["kind"], trial["run_id"], trial["outcome"]) == (
        "gone", "run", "run-eeee5555", "succeeded"
    )  # fmt: skip
    assert list_runs(["--runs-dir", str(runs), "--stack", "dev-sweep", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(e["kind"], e.get("run_id")) for e in listed] == [
        ("run", "run-plain000"), ("sweep", None)
    ]  # fmt: skip


def test_no_runs_says_where_it_looked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for root in (tmp_path / "missing", tmp_path):
        assert list_runs(["--runs-dir", str(root)]) == 0
        assert capsys.readouterr().out == (
            f"no runs on this machine (none under {root}); start one with: tftrain run STACK\n"
        )
    assert list_runs(["--runs-dir", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
