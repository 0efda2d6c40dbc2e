"""A sweep through the local launcher, with real processes: each trial a full run.

The fast test runs a tiny trainer of a user's kind (it knows nothing of tftrain: it logs the
`test_accuracy` scalar to an event file with TensorBoard's record writer, from the learning
rate in its environment); the slow one runs the bundled trainer on the dev-sweep stack.
"""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from infra.config import load_stack
from infra.local.cli import main
from infra.local.sweep import core_slices

LR = "hyperparams.learningRate"
# A user's trainer: accuracy = 10 x learning rate, logged as a TF1 scalar at step 7.
TRAINER = """
import os, pathlib, time
from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.summary.writer.record_writer import RecordWriter
hold = pathlib.Path(os.environ.get("HOLD", "/nonexistent"))
for _ in range(600):  # while the test holds the trial (a file, so the run id is the same)
    if not hold.exists():
        break
    time.sleep(0.1)
lr = float(os.environ["TFTRAIN_LEARNING_RATE"])
out = pathlib.Path(os.environ["TFTRAIN_OUTPUT_DIR"]) / "eval"
out.mkdir(parents=True, exist_ok=True)
value = summary_pb2.Summary.Value(tag="test_accuracy", simple_value=10 * lr)
event = event_pb2.Event(step=7, wall_time=time.time(), summary=summary_pb2.Summary(value=[value]))
with open(out / "events.out.tfevents.1.user", "wb") as stream:
    RecordWriter(stream).write(event.SerializeToString())
"""


def write_sweep_stack(directory: Path) -> None:
    config: dict[str, Any] = {
        "tftrain:image": "registry.example.com/me/trainer:1",
        "tftrain:job": {
            "name": "mnist",
            "command": ["python", "-c", TRAINER],
            "env": {"HOLD": str(directory / "hold")},
            "backoffLimit": 0,
        },
        "tftrain:chief": {"number": 0},
        "tftrain:ps": {"number": 0},
        "tftrain:worker": {"number": 1},
        "tftrain:tensorboard": {"enabled": False},
        "tftrain:sweep": {"parameters": {LR: {"values": [0.01, 0.05]}}, "parallel": 2},
    }
    (directory / "Pulumi.sweep.yaml").write_text(yaml.safe_dump({"config": config}))


def test_cores_are_shared_out_among_the_trials_at_once() -> None:
    assert core_slices([0, 1], 2) == [{0}, {1}]
    assert core_slices([0, 1, 2, 3], 3) == [{0, 1}, {2}, {3}]
    assert core_slices([0, 1], 3) == [{0}, {1}, {0}]  # more trials than cores: they share
    assert core_slices([0, 1, 2, 3], 1) == [{0, 1, 2, 3}]


def test_a_local_sweep_runs_every_trial_and_writes_the_comparison(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_sweep_stack(tmp_path)
    runs = tmp_path / "runs"
    args = ["sweep", "--stacks-dir", str(tmp_path), "--output-dir", str(runs)]
    assert main(args) == 0
    out = capfd.readouterr().out
    config = load_stack("sweep", tmp_path)
    ids = [trial.job.run_id for trial in config.trials]
    with (runs / "sweep-results.csv").open() as stream:
        table = list(csv.DictReader(stream))
    # One row per trial, the metric filled (10 x its learning rate), best first.
    assert [(r["run_id"], r["test_accuracy"], r["outcome"]) for r in table] == [
        (ids[1], "0.5", "succeeded"),
        (ids[0], "0.1", "succeeded"),
    ]
    assert f"Best (maximize test_accuracy): trial 2, {ids[1]}" in out
    assert (runs / "sweep-results.svg").is_file() and (runs / "sweep-results.md").is_file()
    # Each trial ran as its own run, in its own directory, under its own replica names.
    for run_id in ids:
        assert (runs / run_id / "eval").is_dir()
        assert f"[mnist-{run_id}-worker-0]" in out
    # A rerun continues with what is not done: nothing here.
    assert main(args) == 0
    again = capfd.readouterr().out
    assert again.count("(succeeded before: not run again)") == 2
    assert "started trial" not in again


def test_trials_start_where_the_users_single_runs_start(tmp_path: Path) -> None:
    # `python t.py`, relative to the user's project, as they would run it once: every trial
    # finds it (it used to start in the checkout: "can't open file").
    project = tmp_path / "project"
    project.mkdir()
    (project / "t.py").write_text(TRAINER)
    write_sweep_stack(tmp_path)
    stack = tmp_path / "Pulumi.sweep.yaml"
    document = yaml.safe_load(stack.read_text())
    document["config"]["tftrain:job"]["command"] = ["python", "t.py"]
    stack.write_text(yaml.safe_dump(document))
    runs = tmp_path / "runs"
    done = subprocess.run(
        [sys.executable, "-m", "infra.local", "sweep", "--stacks-dir", str(tmp_path),
         "--output-dir", str(runs)],
        cwd=project, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    with (runs / "sweep-results.csv").open() as stream:
        outcomes = [row["outcome"] for row in csv.DictReader(stream)]
    assert outcomes == ["succeeded", "succeeded"]


def test_an_unknown_trial_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_sweep_stack(tmp_path)
    assert main(["sweep", "--stacks-dir", str(tmp_path), "--trial", "run-00000000"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "--trial run-00000000: not a trial of sweep" in line


def test_a_dry_run_lists_the_trials(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_sweep_stack(tmp_path)
    assert main(["sweep", "--stacks-dir", str(tmp_path), "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(": ", 1)[1] for line in lines] == [f"{LR}=0.01", f"{LR}=0.05"]


@pytest.mark.slow  # two trials that must be stopped mid-run, then run again
def test_ctrl_c_stops_every_trial_and_a_rerun_continues(tmp_path: Path) -> None:
    write_sweep_stack(tmp_path)
    (tmp_path / "hold").touch()
    runs = tmp_path / "runs"
    command = [sys.executable, "-m", "infra.local", "sweep", "--stacks-dir", str(tmp_path)]
    command += ["--output-dir", str(runs), "--stop-grace", "2"]
    driver = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=Path.cwd())
    assert driver.stdout is not None
    started = 0
    deadline = time.monotonic() + 60
    while started < 2 and time.monotonic() < deadline:
        started += "started trial" in driver.stdout.readline()
    time.sleep(3)  # the trials' launchers start their replicas
    driver.send_signal(signal.SIGINT)
    assert driver.wait(timeout=60) == 128 + signal.SIGINT
    # Nothing of the trials is left running.
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True)
    assert left.stdout.strip() == "", left.stdout
    (tmp_path / "hold").unlink()
    rerun = subprocess.run(command, capture_output=True, text=True, env={**os.environ})
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert rerun.stdout.count("started trial") == 2


@pytest.mark.slow  # the bundled trainer twice: TensorFlow's start-up dominates
def test_the_dev_sweep_stack_runs_to_completion(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    assert main(["dev-sweep", "--output-dir", str(runs), "--set", "hyperparams.maxSteps=20"]) == 0
    out = capfd.readouterr().out  # the comparison prints from a process of its own
    with (runs / "sweep-results.csv").open() as stream:
        table = list(csv.DictReader(stream))
    assert len(table) == 2 and all(row["test_accuracy"] for row in table)
    assert len({row["run_id"] for row in table}) == 2
    assert "| trial | run_id | hyperparams.learningRate | test_accuracy |" in out


def test_a_trial_gets_its_secret_env_from_this_shell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_sweep_stack(tmp_path)
    path = tmp_path / "Pulumi.sweep.yaml"
    document = yaml.safe_load(path.read_text())
    document["config"]["tftrain:job"]["env"]["TOKEN"] = {"secure": "AAABAG9wYXF1ZQ=="}
    path.write_text(yaml.safe_dump(document))
    run_id = load_stack("sweep", tmp_path).trials[0].job.run_id
    args = ["sweep", "--stacks-dir", str(tmp_path), "--trial", run_id, "--dry-run"]
    # Not in this shell: the trial cannot start, and says which name it needs.
    monkeypatch.delenv("TOKEN", raising=False)
    assert main(args) == 2
    assert "TOKEN" in capsys.readouterr().err
    # In it: the trial takes it, and even a dry run prints it masked, never in clear.
    monkeypatch.setenv("TOKEN", "from-the-shell")
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "TOKEN=[secret]" in out
    assert "from-the-shell" not in out
