"""`tftrain compare --runs-dir` on an export copy, as its help text offers ("a copy of the
bucket's <exportPrefix><job>/"): trials exported by export.sh itself, which leaves the run's
records (.tftrain-run/) behind and writes its marker instead. The expected table is the one
the event files written here make, worked by hand."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from infra.config import parse_config
from infra.lifecycle import EXPORT_SCRIPT, OUTCOMES_DIR, run_key
from infra.sweep import cli
from infra.sweep.cli import main
from infra.sweep.results import compare, to_csv, to_markdown
from tests.test_sweep_results import lay_out, rows, sweep, tf2_scalar, write_events, write_stack


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
    stacks, runs, bucket = tmp_path / "stacks", tmp_path / "volume", tmp_path / "bucket"
    stacks.mkdir()
    write_stack(stacks, {"parameters": {"hyperparams.learningRate": {"values": [0.001, 0.01, 0.1]}},
                         "parallel": 3})  # fmt: skip
    config = sweep()
    first, second, third = (t.job.run_id for t in config.trials)
    lay_out(runs, config)  # trial 1: 0.91 at step 100; trial 2: 0.95 at 120; 3 never ran
    for run_id in (first, second):
        _export(runs / run_id, bucket)
    # A third copy, interrupted before its marker: not a result yet. Without the marker and
    # without the run's records (they stay behind), but with its scalars: incomplete, never
    # "not started" beside a metric and a step count.
    partial = bucket / "mnist" / third
    shutil.copytree(runs / first / "eval", partial / "eval")
    exports = bucket / "mnist"
    assert not (exports / first / ".tftrain-run").exists()  # the records stayed behind

    assert main(["s", "--stacks-dir", str(stacks), "--runs-dir", str(exports)]) == 0
    printed = capsys.readouterr().out
    table = rows((exports / "sweep-results.csv").read_text())
    assert [
        (r["trial"], r["test_accuracy"], r["steps"], r["outcome"], r["best"]) for r in table
    ] == [
        ("2", "0.95", "120", "succeeded", "best"),
        ("1", "0.91", "100", "succeeded", ""),
        ("3", "0.91", "100", "incomplete", ""),
    ]
    assert f"Best (maximize test_accuracy): trial 2, {second}" in printed
    assert (exports / "best").resolve() == (exports / second).resolve()


def _stacks(tmp_path: Path, **job: str) -> Path:
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    write_stack(stacks, {"parameters": {"hyperparams.learningRate": {"values": [0.001, 0.01, 0.1]}},
                         "parallel": 3})  # fmt: skip
    return stacks


def test_the_help_says_what_each_option_takes(capsys: pytest.CaptureFixture[str]) -> None:
    # docs/hyperparameters.md "Compare": `tftrain compare STACK [--runs-dir DIR] [--json]`.
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    raw = capsys.readouterr().out
    # The examples and exit codes keep their lines, as the module writes them.
    assert "\nexit status:\n  0  compared\n  1  no trial has written" in raw
    text = " ".join(raw.split())
    assert text.startswith(
        "usage: tftrain compare [-h] [--stacks-dir DIR] [--runs-dir DIR] "
        "[--set KEY=VALUE] [--json] STACK"
    )
    assert (
        "A sweep's trials in one table, best first; written beside the runs as "
        "sweep-results.csv, .md and .svg, with `best` linking the best trial's directory." in text
    )
    assert "STACK a stack with a sweep" in text
    assert "--stacks-dir DIR where the stack files are (stacks/)" in text
    assert "--runs-dir DIR the directory holding the trials' RUN_ID/ directories" in text
    assert "directories (default: runs/STACK/JOB, where the local launcher writes) --set" in text
    assert "--set KEY=VALUE as for tftrain run" in text
    assert "--json print the trials as JSON (the files are written too)" in text
    assert "Reads each trial's run directory" not in text  # the module's docstring is not it
    assert text.endswith(
        "exit status: 0 compared 1 no trial has written the sweep's metric (the scalars found "
        "are named) 2 a bad stack, a stack without a sweep, or no such directory"
    )


def test_the_command_says_what_it_wrote_honours_set_and_relinks_best(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stacks, runs, exports = _stacks(tmp_path), tmp_path / "runs", tmp_path / "exports"
    config = sweep()
    first, second, _ = (t.job.run_id for t in config.trials)
    lay_out(runs, config)  # trial 1: 0.91; trial 2: 0.95
    (exports / "mnist" / first).mkdir(parents=True)  # the launcher exported trial 1
    (runs / "best").symlink_to("gone")  # a link an earlier comparison left, now dangling
    args = ["s", "--stacks-dir", str(stacks), "--runs-dir", str(runs)]
    args += ["--set", "sweep.metric.goal=minimize", "--set", f"data.localExportDir={exports}"]
    assert main(args) == 0
    out = capsys.readouterr().out
    printed = out.splitlines()
    # The table as written to sweep-results.md, then what was written and linked.
    assert out.startswith((runs / "sweep-results.md").read_text() + "\nwritten in ")
    # Minimize: the lowest metric, trial 1's 0.91, is the best.
    assert (
        f"Best (minimize test_accuracy): trial 1, {first} (hyperparams.learningRate=0.001): 0.91"
        in printed
    )
    assert f"written in {runs}: sweep-results.csv, sweep-results.md, sweep-results.svg" in printed
    assert f"{runs / 'best'} → {first} (the best trial)" in printed
    assert f"{exports / 'mnist' / 'best'} → {first} (its export)" in printed
    assert (runs / "best").resolve() == (runs / first).resolve()
    assert (exports / "mnist" / "best").resolve() == (exports / "mnist" / first).resolve()
    table = (runs / "sweep-results.md").read_text().splitlines()
    # A column per swept key; the metric's column under its own name; the best row marked.
    assert table[0] == (
        "| trial | run_id | hyperparams.learningRate | test_accuracy | steps | wall_seconds "
        "| outcome | best | path |"
    )
    assert table[1] == "|---|---|---|---|---|---|---|---|---|"
    assert table[2] == (
        f"| **1** | **{first}** | **0.001** | **0.91** | **100** | **12.5** | **succeeded** "
        f"| **best** | **{runs / first}** |"
    )
    assert table[3] == (
        f"| 2 | {second} | 0.01 | 0.95 | 120 | 30.0 | succeeded |  | {runs / second} |"
    )
    third = config.trials[2].job.run_id
    assert table[4] == f"| 3 | {third} | 0.1 |  |  |  | not started |  | {runs / third} |"
    assert table[5:] == [
        "",
        f"Best (minimize test_accuracy): trial 1, {first} (hyperparams.learningRate=0.001): 0.91",
    ]


def test_without_a_succeeded_trial_there_is_no_best(tmp_path: Path) -> None:
    config = sweep()
    lay_out(tmp_path, config)
    for trial in config.trials[:2]:  # still running: no outcome yet, its supervisor beating
        records = tmp_path / trial.job.run_id / OUTCOMES_DIR
        (records / f"succeeded.{run_key(trial)}").unlink()
        claim = records / "attempts" / f"{run_key(trial)}.0123456789ab.mnist-chief-0.1"
        claim.mkdir(parents=True)
        now = f"{int(time.time())}\n"
        (claim / "start").write_text(now)
        (claim / "beat").write_text(now)
    text = to_markdown(compare(config, tmp_path), "test_accuracy", "maximize")
    assert text.endswith("\n\nNo succeeded trial has logged test_accuracy yet.\n")
    second = config.trials[1].job.run_id
    assert text.splitlines()[2] == (
        f"| 2 | {second} | 0.01 | 0.95 | 120 | 30.0 | running |  | {tmp_path / second} |"
    )


def test_compare_without_run_dirs_or_a_good_stack_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stacks = _stacks(tmp_path)
    missing = tmp_path / "nowhere"
    assert main(["s", "--stacks-dir", str(stacks), "--runs-dir", str(missing)]) == 2
    assert capsys.readouterr().err == (
        f"tftrain compare: no run directory {missing}: has the sweep run?\n"
    )
    assert main(["s", "--stacks-dir", str(stacks), "--set", "hyperparams.epochs=0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tftrain compare: ") and "tftrain:hyperparams.epochs = 0" in err


def test_the_plot_gets_the_results_and_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn = []
    monkeypatch.setattr(cli, "plot", lambda *args: drawn.append(args))
    stacks, runs = _stacks(tmp_path), tmp_path / "runs"
    config = sweep()
    lay_out(runs, config)
    assert main(["s", "--stacks-dir", str(stacks), "--runs-dir", str(runs)]) == 0
    ((results, metric, path),) = drawn
    assert [r.run_id for r in results] == [config.trials[i].job.run_id for i in (1, 0, 2)]
    assert (metric, path) == ("test_accuracy", runs / "sweep-results.svg")
    printed = capsys.readouterr().out.splitlines()
    assert f"written in {runs}: sweep-results.csv, sweep-results.md, sweep-results.svg" in printed


def test_by_default_compare_reads_the_launchers_runs_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The local launcher writes runs/<stack>/<job>/<run id>/ under the project root.
    stacks = _stacks(tmp_path)
    name = f"s-none-{os.getpid()}"
    (stacks / "Pulumi.s.yaml").rename(stacks / f"Pulumi.{name}.yaml")
    assert main([name, "--stacks-dir", str(stacks)]) == 2
    expected = Path(__file__).resolve().parent.parent / "runs" / name / "mnist"
    assert capsys.readouterr().err == (
        f"tftrain compare: no run directory {expected}: has the sweep run?\n"
    )


def F32(value: float) -> object:
    """A float32 event value, as TensorBoard keeps it."""
    return pytest.approx(value, rel=1e-6)


def test_each_result_carries_its_curve_for_the_plot(tmp_path: Path) -> None:
    config = sweep()
    lay_out(tmp_path, config)
    by_trial = {r.number: r for r in compare(config, tmp_path)}
    # Trial 1 logged test_accuracy once: its loss (two points) is the curve instead.
    assert by_trial[1].curve_tag == "loss"
    assert [(p.step, p.value) for p in by_trial[1].curve] == [(50, F32(0.9)), (100, F32(0.4))]
    # Trial 2 logged it twice: that is its curve.
    assert by_trial[2].curve_tag == "test_accuracy"
    assert [(p.step, p.value) for p in by_trial[2].curve] == [(40, 0.5), (120, F32(0.95))]
    assert by_trial[3].curve == () and by_trial[3].curve_tag == "test_accuracy"
    assert by_trial[3].path == tmp_path / config.trials[2].job.run_id


def test_the_files_use_newlines_and_escape_a_pipe_in_a_point(tmp_path: Path) -> None:
    config = parse_config(
        {
            "image": "registry.example.com/tftrain/trainer:1",
            "sweep": {"parameters": {"job.env.MODE": {"values": ["a|b"]}}},
        }
    )
    results = compare(config, tmp_path)
    assert to_csv(results, "test_accuracy") == (
        "trial,run_id,job.env.MODE,test_accuracy,steps,wall_seconds,outcome,best,path\n"
        f"1,{config.trials[0].job.run_id},a|b,,,,not started,,"
        f"{tmp_path / config.trials[0].job.run_id}\n"
    )
    row = to_markdown(results, "test_accuracy", "maximize").splitlines()[2]
    assert row == (
        f"| 1 | {config.trials[0].job.run_id} | a\\|b |  |  |  | not started |  "
        f"| {tmp_path / config.trials[0].job.run_id} |"
    )


def test_a_metric_of_zero_sorts_as_zero(tmp_path: Path) -> None:
    config = sweep()
    first, second, third = config.trials
    for trial, value in ((first, 0.0), (second, 0.5), (third, -0.5)):
        write_events(tmp_path / trial.job.run_id, [tf2_scalar("test_accuracy", value, 1, 1.0)])
    assert [r.metric for r in compare(config, tmp_path)] == [0.5, 0.0, -0.5]


def test_a_two_point_metric_is_the_curve_even_with_a_loss(tmp_path: Path) -> None:
    config = sweep()
    run = tmp_path / config.trials[0].job.run_id
    write_events(run / "eval", [tf2_scalar("test_accuracy", 0.5, 1, 1.0),
                                tf2_scalar("test_accuracy", 0.75, 2, 2.0)])  # fmt: skip
    write_events(run / "train", [tf2_scalar("loss", 2.0, 1, 1.0), tf2_scalar("loss", 1.0, 2, 2.0)])
    (result,) = [r for r in compare(config, tmp_path) if r.number == 1]
    assert result.curve_tag == "test_accuracy" and [p.step for p in result.curve] == [1, 2]


def test_results_that_cannot_be_written_exit_2_and_say_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stacks, runs = _stacks(tmp_path), tmp_path / "runs"
    lay_out(runs, sweep())
    (runs / "sweep-results.csv").mkdir()  # where the file goes, a directory
    assert main(["s", "--stacks-dir", str(stacks), "--runs-dir", str(runs)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tftrain compare: [Errno 21] Is a directory: "), err
