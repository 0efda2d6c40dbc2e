"""A local sweep's parts that decide without starting anything (infra/local/sweep.py): each
trial's launcher command line, its env, where the trials' runs go, which trials are done and
how the machine's cores are shared out. The sweep run itself: tests/test_sweep_local.py."""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from infra.config import parse_config
from infra.lifecycle import run_key
from infra.local import sweep as sweep_module
from infra.local.cli import parse_args
from infra.local.plan import REPO
from infra.local.process import kill, spawn
from infra.local.supervisor import Stopped
from infra.local.sweep import (
    SweepRun,
    _pin,
    core_slices,
    refused_options,
    run_sweep,
    runs_dir,
    succeeded,
    trial_argv,
    trial_environ,
)

IMAGE = "registry.example.com/tftrain/trainer:1"
SWEPT = {
    "image": IMAGE,
    "sweep": {"parameters": {"hyperparams.learningRate": {"values": [0.01, 0.05]}}},
}


def test_a_trial_runs_the_launcher_with_this_launchs_options(tmp_path: Path) -> None:
    args = parse_args(["sw", "--set", "a=1", "--set", "b=2"])
    assert trial_argv(args, tmp_path / "run-1", "run-1") == [
        sys.executable, "-P", "-m", "infra.local", "sw", "--trial", "run-1",
        "--output-dir", str(tmp_path / "run-1"), "--set", "a=1", "--set", "b=2",
        "--stop-grace", "45.0",
    ]  # fmt: skip


def test_every_option_a_trial_takes_is_passed_on_as_an_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    args = parse_args(
        ["sw", "--stacks-dir", "st", "--input", "in", "--export", "ex", "--timeout", "90",
         "--grace", "7", "--stop-grace", "3", "--fresh"]
    )  # fmt: skip
    argv = trial_argv(args, Path("/r/run-2"), "run-2")
    assert argv[3:] == [
        "infra.local", "sw", "--trial", "run-2", "--output-dir", "/r/run-2",
        "--stacks-dir", str(tmp_path / "st"), "--input", str(tmp_path / "in"),
        "--export", str(tmp_path / "ex"), "--timeout", "90.0", "--grace", "7.0",
        "--stop-grace", "3.0", "--fresh",
    ]  # fmt: skip


def test_a_trials_launcher_finds_the_checkout_first_and_keeps_the_callers_path() -> None:
    env = trial_environ({"HOME": "/h", "PYTHONPATH": "/mine"})
    assert env == {"HOME": "/h", "PYTHONPATH": f"{REPO}{os.pathsep}/mine"}
    assert trial_environ({"PYTHONPATH": ""})["PYTHONPATH"] == str(REPO)
    assert trial_environ({}) == {"PYTHONPATH": str(REPO)}


def test_the_trials_runs_go_under_the_output_dir_or_the_jobs_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = parse_config(SWEPT)
    monkeypatch.chdir(tmp_path)
    assert runs_dir(parse_args(["sw", "--output-dir", "out"]), config) == tmp_path / "out"
    assert runs_dir(parse_args(["sw"]), config) == REPO / "runs" / "sw" / "mnist"


def test_a_trial_is_done_once_its_own_success_is_recorded(tmp_path: Path) -> None:
    [trial, other] = parse_config(SWEPT).trials
    outcomes = tmp_path / ".tftrain-run"
    assert not succeeded(tmp_path, trial)
    outcomes.mkdir()
    (outcomes / f"succeeded.{run_key(other)}").write_text("")
    assert not succeeded(tmp_path, trial)
    (outcomes / f"failed.{run_key(trial)}.g").write_text("")
    assert not succeeded(tmp_path, trial)
    (outcomes / f"succeeded.{run_key(trial)}").write_text("")
    assert succeeded(tmp_path, trial)


@pytest.mark.parametrize(
    ("cores", "parallel", "slices"),
    [
        ([0], 1, [{0}]),
        ([0, 1, 2, 3, 4], 2, [{0, 1, 2}, {3, 4}]),
        ([2, 5, 7], 3, [{2}, {5}, {7}]),
        ([0, 1, 2, 3, 4, 5, 6], 3, [{0, 1, 2}, {3, 4}, {5, 6}]),
        ([4, 6], 5, [{4}, {6}, {4}, {6}, {4}]),
    ],
)
def test_cores_are_split_evenly_the_first_slices_taking_the_rest(
    cores: list[int], parallel: int, slices: list[set[int]]
) -> None:
    assert core_slices(cores, parallel) == slices


def test_a_sweep_refuses_tensorboard_and_says_how_to_serve_its_runs() -> None:
    assert refused_options(parse_args(["sw"])) is None
    assert refused_options(parse_args(["sw", "--tensorboard"])) == (
        "--tensorboard: serve the sweep's runs with python -m tensorboard.main --logdir runs/sw"
    )


def swept(values: int) -> Any:
    rates = [round(0.001 * (n + 1), 3) for n in range(values)]
    return parse_config(
        {"image": IMAGE, "sweep": {"parameters": {"hyperparams.learningRate": {"values": rates}}}}
    )


def test_the_sweeps_runs_go_where_a_single_runs_would(tmp_path: Path) -> None:
    assert SweepRun(parse_args(["sw"]), swept(2)).root == REPO / "runs" / "sw" / "mnist"
    out = tmp_path / "out"
    assert SweepRun(parse_args(["sw", "--output-dir", str(out)]), swept(2)).root == out


@pytest.mark.parametrize(("trials", "width"), [(99, len("[launcher]")), (100, len("[trial 100]"))])
def test_the_launchers_lines_line_up_with_every_trials(
    capsys: pytest.CaptureFixture[str], trials: int, width: int
) -> None:
    sweep = SweepRun(parse_args(["sw"]), swept(trials))
    sweep.say("hello")
    sweep.output.line(f"trial {trials}", "last")
    assert capsys.readouterr().out == (
        f"{'[launcher]':<{width}} hello\n{f'[trial {trials}]':<{width}} last\n"
    )


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity: Linux")
def test_a_trial_is_pinned_to_its_cores_and_a_gone_one_is_let_be() -> None:
    [first, *_] = sorted(os.sched_getaffinity(0))
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as child:
        try:
            _pin(SimpleNamespace(pid=child.pid), {first})  # type: ignore[arg-type]
            assert os.sched_getaffinity(child.pid) == {first}
        finally:
            child.kill()
    _pin(SimpleNamespace(pid=child.pid), {first})  # type: ignore[arg-type]  # reaped: no error


def test_stopping_a_sweep_stops_its_running_trials(capsys: pytest.CaptureFixture[str]) -> None:
    sweep = SweepRun(parse_args(["sw", "--stop-grace", "1"]), swept(2))
    child = spawn("trial 1", [sys.executable, "-c", "import time; time.sleep(60)"],
                  dict(os.environ), Path.cwd(), sweep.output)  # fmt: skip
    sweep.running[1] = (child, {0})
    try:
        sweep._stop()
        assert child.poll() is not None
        assert child.stopped_by_launcher
    finally:
        kill([child])


# A trial's launcher stood in by a tiny program: where it started, then its exit status (the
# trial's run id picks it: the second trial fails).
TRIAL = """
import os, sys
print("cwd", os.getcwd(), flush=True)
sys.exit(3 if sys.argv[1] == "{failing}" else 0)
"""


def test_trials_run_one_slot_at_a_time_and_a_failed_one_fails_the_sweep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = swept(2)  # parallel unset: one trial at a time
    first, second = (trial.job.run_id for trial in config.trials)
    program = TRIAL.format(failing=second)
    monkeypatch.setattr(
        sweep_module,
        "trial_argv",
        lambda args, run_dir, run_id: [sys.executable, "-c", program, run_id],
    )
    monkeypatch.chdir(tmp_path)
    sweep = SweepRun(parse_args(["sw"]), config)
    assert sweep.run(list(enumerate(config.trials, 1))) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"[launcher] started trial 1: {first} (hyperparams.learningRate=0.001)"
    assert f"[trial 1]  cwd {tmp_path}" in lines  # where the user started the sweep
    assert lines.index("[launcher] trial 1 ended: exit 0") < lines.index(
        f"[launcher] started trial 2: {second} (hyperparams.learningRate=0.002)"
    )
    assert lines[-1] == "[launcher] trial 2 ended: exit 3"
    assert sweep.ended == {1: 0, 2: 3}


@pytest.mark.skipif(
    len(getattr(os, "sched_getaffinity", lambda _: ())(0)) < 2, reason="needs two cores"
)
def test_trials_at_once_each_get_a_core_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each trial waits (at most 60 s) until the sweep has pinned it, then says where.
    cores = sorted(os.sched_getaffinity(0))
    program = (
        "import os, time\n"
        "deadline = time.monotonic() + 60\n"
        f"while len(os.sched_getaffinity(0)) == {len(cores)} and time.monotonic() < deadline:\n"
        "    time.sleep(0.01)\n"
        "print('cores', sorted(os.sched_getaffinity(0)), flush=True)\n"
    )
    monkeypatch.setattr(
        sweep_module, "trial_argv", lambda args, run_dir, run_id: [sys.executable, "-c", program]
    )
    config = parse_config({**SWEPT, "sweep": {**SWEPT["sweep"], "parallel": len(cores)}})
    sweep = SweepRun(parse_args(["sw", "--output-dir", str(tmp_path)]), config)
    assert sweep.run(list(enumerate(config.trials, 1))) == 0
    said = re.findall(r"cores \[(.*)\]", capsys.readouterr().out)
    expected = [set(s) for s in core_slices(cores, len(cores))][: len(config.trials)]
    assert sorted(said) == sorted(", ".join(map(str, sorted(s))) for s in expected)


def test_a_sweep_says_its_plan_skips_succeeded_trials_and_ends_with_its_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = swept(2)
    first, second = config.trials
    done = tmp_path / "runs" / first.job.run_id / ".tftrain-run"
    done.mkdir(parents=True)
    (done / f"succeeded.{run_key(first)}").write_text("")
    started = []
    monkeypatch.setattr(
        sweep_module,
        "trial_argv",
        lambda args, run_dir, run_id: started.append(run_id) or [sys.executable, "-c", "pass"],
    )
    monkeypatch.setattr(sweep_module, "compare_trials", lambda args, overrides, root: None)
    args = parse_args(["sw", "--output-dir", str(tmp_path / "runs")])
    assert run_sweep(args, config, []) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [
        "[launcher] stack sw: sweep of 2 trials (grid), 1 at a time (sweep.parallel)",
        f"[launcher] trial 1: {first.job.run_id} hyperparams.learningRate=0.001 (succeeded "
        "before: not run again)",
        f"[launcher] trial 2: {second.job.run_id} hyperparams.learningRate=0.002",
    ]
    assert started == [second.job.run_id]
    assert lines[-1] == "[launcher] exit status 0"


def test_a_second_signal_while_stopping_ends_the_sweep_with_its_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(self: SweepRun, pending: list[Any]) -> int:
        raise Stopped(signal.SIGINT)

    compared = []
    monkeypatch.setattr(SweepRun, "run", interrupted)
    monkeypatch.setattr(sweep_module, "compare_trials", lambda *args: compared.append(args))
    (tmp_path / "runs").mkdir()
    args = parse_args(["sw", "--output-dir", str(tmp_path / "runs")])
    assert run_sweep(args, swept(2), []) == 128 + 2
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2:] == [
        "[launcher] stopped: run the same command again to continue with the trials not done",
        "[launcher] exit status 130",
    ]
    assert compared == []  # no comparison of a sweep cut short


def test_stopping_gives_each_trials_launcher_time_to_stop_its_replicas(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A trial's launcher sends SIGTERM, waits --stop-grace, SIGKILLs and reaps; the sweep
    # waits for that twice over, plus 5 s to reap, before killing it: 2 * 4 + 5.
    waited = []
    monkeypatch.setattr(
        sweep_module.process, "stop", lambda children, timeout: waited.append(timeout)
    )
    SweepRun(parse_args(["sw", "--stop-grace", "4"]), swept(2))._stop()
    assert waited == [13]


def test_a_signal_while_trials_run_stops_them_and_gives_its_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def signalled(_seconds: float) -> None:
        raise Stopped(signal.SIGTERM)

    # The sweep's own clock only: the signal arrives while it waits between polls.
    monkeypatch.setattr(sweep_module, "time", SimpleNamespace(sleep=signalled))
    monkeypatch.setattr(
        sweep_module, "trial_argv", lambda args, run_dir, run_id: [sys.executable, "-c", "pass"]
    )
    stopped = []
    monkeypatch.setattr(SweepRun, "_stop", lambda self: stopped.append(True))
    sweep = SweepRun(parse_args(["sw", "--output-dir", str(tmp_path)]), swept(2))
    try:
        assert sweep.run(list(enumerate(swept(2).trials, 1))) == 128 + 15  # SIGTERM
    finally:
        kill(sweep.children)
    assert stopped == [True]
    out = capsys.readouterr().out.splitlines()
    assert "[launcher] SIGTERM received: stopping every running trial" in out


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity: Linux")
def test_a_sweep_started_on_one_core_shares_that_core_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`taskset -c N python -m infra.local STACK`: the trials get N, not the machine."""
    mine = os.sched_getaffinity(0)
    only = min(mine)
    program = "import os; print('cores', sorted(os.sched_getaffinity(0)), flush=True)"
    monkeypatch.setattr(
        sweep_module, "trial_argv", lambda args, run_dir, run_id: [sys.executable, "-c", program]
    )
    config = parse_config({**SWEPT, "sweep": {**SWEPT["sweep"], "parallel": 2}})
    sweep = SweepRun(parse_args(["sw", "--output-dir", str(tmp_path)]), config)
    os.sched_setaffinity(0, {only})
    try:
        assert sweep.run(list(enumerate(config.trials, 1))) == 0
    finally:
        os.sched_setaffinity(0, mine)
    assert re.findall(r"cores \[(.*)\]", capsys.readouterr().out) == [str(only)] * 2


def test_the_comparison_runs_with_the_launchs_stacks_and_assignments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = []
    monkeypatch.setattr(
        sweep_module.subprocess, "run", lambda argv, **options: ran.append((argv, options))
    )
    args = parse_args(["sw", "--stacks-dir", str(tmp_path)])
    sweep_module.compare_trials(args, ["a.b=1", "c=2"], tmp_path / "runs")
    assert ran == [
        (
            [sys.executable, "-m", "infra.sweep", "sw", "--runs-dir", str(tmp_path / "runs"),
             "--stacks-dir", str(tmp_path.resolve()), "--set", "a.b=1", "--set", "c=2"],
            # From the checkout, whatever the user's directory; its failure is its own to say.
            {"cwd": REPO, "check": False},
        )
    ]  # fmt: skip


def test_the_trial_option_says_what_it_takes_and_what_a_sweep_does_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # one line per option: no wrap inside a word
    parser = argparse.ArgumentParser(prog="infra.local")
    sweep_module.add_trial_option(parser)
    text = " ".join(parser.format_help().split())
    assert "[--trial RUN_ID]" in text
    assert (
        "--trial RUN_ID a stack with a sweep: run only this trial (default: every trial not "
        "yet succeeded, sweep.parallel at a time; --output-dir is then the directory of the "
        "trials' RUN_ID directories, default runs/STACK/JOB)"
    ) in text
