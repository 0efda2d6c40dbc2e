"""`tftrain compare --runs-dir` on an export copy, as its help text offers ("a copy of the
bucket's <exportPrefix><job>/"): trials exported by export.sh itself, which leaves the run's
records (.tftrain-run/) behind and writes its marker instead. The expected table is the one
the event files written here make, worked by hand."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from infra.lifecycle import EXPORT_SCRIPT
from infra.sweep import cli
from infra.sweep.cli import main
from tests.test_sweep_results import lay_out, rows, sweep, write_stack


def _export(output: Path, export_root: Path) -> None:
    env = {
        "PATH": os.environ["PATH"],
        "TFTRAIN_OUTPUT_DIR": str(output),
        "TFTRAIN_EXPORT_DIR": str(export_root),
        "TFTRAIN_JOB_NAME": "mnist",
    }
    done = subprocess.run(
        ["sh", str(EXPORT_SCRIPT)], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def test_compare_reads_an_export_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli, "matplotlib_missing", lambda: "matplotlib is not installed")
    stacks, runs, bucket = tmp_path / "stacks", tmp_path / "volume", tmp_path / "bucket"
    stacks.mkdir()
    write_stack(stacks, {"parameters": {"hyperparams.learningRate": {"values": [0.001, 0.01, 0.1]}},
                         "parallel": 3})  # fmt: skip
    config = sweep()
    first, second, third = (t.job.run_id for t in config.trials)
    lay_out(runs, config)  # trial 1: 0.91 at step 100; trial 2: 0.95 at 120; 3 never ran
    for run_id in (first, second):
        _export(runs / run_id, bucket)
    # A third copy, interrupted before its marker: not a result yet.
    partial = bucket / "mnist" / third
    shutil.copytree(runs / first / "eval", partial / "eval")
    exports = bucket / "mnist"
    assert not (exports / first / ".tftrain-run").exists()  # the records stayed behind

    assert main(["s", "--stacks-dir", str(stacks), "--runs-dir", str(exports)]) == 0
    printed = capsys.readouterr().out
    table = rows((exports / "sweep-results.csv").read_text())
    assert [(r["trial"], r["metric"], r["steps"], r["outcome"]) for r in table] == [
        ("2", "0.95", "120", "succeeded"),
        ("1", "0.91", "100", "succeeded"),
        ("3", "0.91", "100", "running or stopped"),
    ]
    assert f"Best (maximize test_accuracy): trial 2, {second}" in printed
    assert (exports / "best").resolve() == (exports / second).resolve()
