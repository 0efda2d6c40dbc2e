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


HELP = """\
usage: tftrain list [-h] [--stack STACK] [--runs-dir DIR] [--stacks-dir DIR] [--json]

List every run on this machine (runs/STACK/JOB/RUN_ID), newest first.

options:
  -h, --help        show this help message and exit
  --stack STACK     only this stack's runs
  --runs-dir DIR    where the runs are (default: runs/)
  --stacks-dir DIR  where Pulumi.STACK.yaml lives
  --json            print JSON for scripts

examples:
  tftrain list                         every run here, newest first; a sweep's trials beneath it
  tftrain list --stack dev-sweep       one stack's runs
  tftrain list --json                  the same as JSON, for scripts

exit status:
  0  listed (also: no runs yet)
  2  bad arguments
"""


def test_the_help_in_full(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as done:
        list_runs(["--help"])
    assert done.value.code == 0
    assert capsys.readouterr().out == HELP


def test_a_sweep_of_a_stack_file_elsewhere_and_its_comparison_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --stacks-dir: the sweep's stack file is there, not in the checkout; its comparison's
    # CSV names one more run (a trial of an earlier version of the sweep).
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    source = Path(__file__).resolve().parents[1] / "stacks" / "Pulumi.dev-sweep.yaml"
    (stacks / "Pulumi.my-sweep.yaml").write_text(source.read_text())
    trials = [t.job.run_id for t in load_stack("my-sweep", stacks).trials]
    job = tmp_path / "runs" / "my-sweep" / "mnist"
    for n, run_id in enumerate([*trials, "run-older000"]):
        succeeded_run(job / run_id, T0 + 60 * n)
    (job / "sweep-results.csv").write_text("trial,run_id\n1,run-older000\n")
    args = ["--runs-dir", str(tmp_path / "runs"), "--stacks-dir", str(stacks), "--json"]
    assert list_runs(args) == 0
    [sweep] = json.loads(capsys.readouterr().out)
    assert sweep["kind"] == "sweep"
    assert sorted(t["run_id"] for t in sweep["trials"]) == sorted([*trials, "run-older000"])


def test_the_list_reads_no_event_files_and_pads_no_line_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # metrics.txt only: an accuracy scalar is `status`'s to show (the list stays fast).
    from tests.test_tensorboard_scalars import _float, _value, _write

    run = tmp_path / "runs" / "dev" / "mnist" / "run-aaaa1111"
    succeeded_run(run, T0)
    (run / "metrics.txt").unlink()
    _write(run, [(5, T0, [_value("accuracy", _float(0.5), "scalars")])])
    assert list_runs(["--runs-dir", str(tmp_path / "runs")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[3:6] == ["succeeded", "-", "-"]  # no step, no metric
    assert all(line == line.rstrip() for line in lines)


def test_by_default_the_checkouts_runs_are_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from infra.status import runs_list

    monkeypatch.setattr(runs_list, "REPO", tmp_path)
    assert list_runs([]) == 0
    assert capsys.readouterr().out == (
        f"no runs on this machine (none under {tmp_path / 'runs'}); start one with: "
        "tftrain run STACK\n"
    )
    succeeded_run(tmp_path / "runs" / "dev" / "mnist" / "run-aaaa1111", T0)
    assert list_runs([]) == 0
    assert "run-aaaa1111" in capsys.readouterr().out
