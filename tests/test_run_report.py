"""A run directory read back (`infra.records.run_state`) and rendered (`infra.records.report`): the
records and logs are written here by hand in the formats `supervise.sh`'s header states, so the
expected outcome comes from that contract, not from the reader.
"""

from __future__ import annotations

import os
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from infra.config import parse_config
from infra.records.report import (
    MASK,
    _seconds,
    _when,
    config_that_ran,
    outcome_lines,
    series,
    write_report,
)
from infra.records.run_state import read_run
from tests.chart_helpers import SVG, chart_texts

KEY, OLD, NEW = "run-1a2b3c4d", "0123456789ab", "ba9876543210"
IMAGE = "registry.example.com/tftrain/trainer:1"


def _attempt(run: Path, generation: str, replica: str, n: int, when: float, log: str = "") -> None:
    claim = run / ".tftrain-run" / "attempts" / f"{KEY}.{generation}.{replica}.{n}"
    claim.mkdir(parents=True)
    os.utime(claim, (when, when))
    if log:
        logs = run / "replicas" / replica / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        path = logs / f"{KEY}.{generation}.{replica}.{n}.log"
        path.write_text(log)
        os.utime(path, (when + 30, when + 30))


def _beating(run: Path, generation: str, replica: str, n: int) -> None:
    """The attempt's supervisor alive: its `start` and a fresh `beat` (epoch s, now), as
    supervise.sh writes them; an attempt with no beat for 30 s reads as lost."""
    claim = run / ".tftrain-run" / "attempts" / f"{KEY}.{generation}.{replica}.{n}"
    now = f"{int(time.time())}\n"
    (claim / "start").write_text(now)
    (claim / "beat").write_text(now)


def _ended(replica: str, n: int, code: int) -> str:
    return f"tftrain-supervise: {replica} attempt {n} ended: exit {code}\n"


def failed_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    # An earlier launch (generation OLD) that succeeded nothing: history, not this run's state.
    _attempt(run, OLD, "mnist-chief-0", 1, 1000.0, "old\n" + _ended("mnist-chief-0", 1, 1))
    _attempt(run, NEW, "mnist-chief-0", 1, 2000.0, "training\n" + _ended("mnist-chief-0", 1, 2))
    _attempt(run, NEW, "mnist-worker-1", 1, 2001.0,
             "started\nkilled\n" + _ended("mnist-worker-1", 1, 137))  # fmt: skip
    _attempt(
        run, NEW, "mnist-worker-1", 2, 2040.0,
        "Traceback (most recent call last):\nValueError: --learning-rate must be > 0\n"
        + _ended("mnist-worker-1", 2, 2)
        + f"tftrain-supervise: run {KEY} cannot succeed (mnist-worker-1 exit 2, final)\n",
    )  # fmt: skip
    (run / ".tftrain-run" / f"failed.{KEY}.{NEW}").write_text(
        "mnist-worker-1 exit 2 attempt 2 on host-a\n"
    )
    return run


def test_a_failed_run_names_the_replica_attempt_exit_and_last_lines(tmp_path: Path) -> None:
    state = read_run(failed_run(tmp_path))
    assert state is not None
    assert (state.key, state.generation, state.outcome) == (KEY, NEW, "failed")
    assert state.failure is not None
    assert (state.failure.replica, state.failure.attempt, state.failure.exit_code) == (
        "mnist-worker-1", 2, 2
    )  # fmt: skip
    assert [a.number for a in state.attempts["mnist-worker-1"]] == [1, 2]
    assert [a.exit_code for a in state.attempts["mnist-worker-1"]] == [137, 2]
    assert [a.number for a in state.attempts["mnist-chief-0"]] == [1]  # not the old launch's
    assert state.result(state.attempts["mnist-worker-1"][0]) == "killed by SIGKILL (exit 137)"
    assert state.result(state.attempts["mnist-worker-1"][1]) == "exit 2"
    assert state.result(state.attempts["mnist-chief-0"][0]) == "stopped at the run's end: exit 2"
    assert state.wall_seconds == 2070.0 - 2000.0

    config = parse_config({"image": IMAGE, "hyperparams": {"maxSteps": 5}})
    report = write_report(state, "Run x: failed", config_that_ran(config))
    text = report.read_text()
    outcome = text.split("## Outcome")[1].split("## Metrics")[0]
    assert "**Failed**: `mnist-worker-1` attempt 2 exit 2 on `host-a`" in outcome
    assert "ValueError: --learning-rate must be > 0" in outcome
    # Wall time: from its first start (2001) to its last output (2040 + 30).
    assert "| mnist-worker-1 | 2 | 1 | 69.0s | exit 2 |" in text
    assert "No loss scalar in the event files." in text  # this trainer wrote none
    assert "maxSteps: 5" in text


def test_the_config_shown_masks_secrets(tmp_path: Path) -> None:
    env = {"WANDB_API_KEY": "abc123", "MODE": "fast", "TOKEN": {"secure": "v1:ciphertext"}}
    config = parse_config({"image": IMAGE, "job": {"env": env}})
    shown = config_that_ran(config)
    assert shown["job"]["env"] == {"WANDB_API_KEY": MASK, "MODE": "fast", "TOKEN": MASK}
    run = tmp_path / "run"
    _attempt(run, NEW, "mnist-chief-0", 1, 2000.0, _ended("mnist-chief-0", 1, 0))
    (run / ".tftrain-run" / f"succeeded.{KEY}").write_text(f"{KEY} mnist-chief-0 attempt 1\n")
    state = read_run(run)
    assert state is not None and state.outcome == "succeeded"
    text = write_report(state, "Run x", shown).read_text()
    assert "abc123" not in text and "ciphertext" not in text


def test_a_run_whose_attempt_has_not_ended_is_running(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _attempt(run, NEW, "mnist-chief-0", 1, 2000.0, "Step: 100, Epoch: 1\n")
    # Its supervisor beats (every 5 s): it is alive.
    claim = run / ".tftrain-run" / "attempts" / f"{KEY}.{NEW}.mnist-chief-0.1"
    (claim / "beat").write_text(f"{int(time.time())}\n")
    state = read_run(run)
    assert state is not None and state.outcome == "running"
    assert state.result(state.attempts["mnist-chief-0"][0]) == "running"
    assert read_run(tmp_path / "nothing") is None


# Names a user gives a secret in env, each worked by hand: masked, or shown as the plain
# setting it is.
SECRET_NAMES = [
    "DB_PASSWORD", "db_password", "PGPASSWORD", "MYSQL_PASSWD", "MYSQL_PWD", "DB_PASS",
    "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "WANDB_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS",
]  # fmt: skip
PLAIN_NAMES = ["MODE", "PASSES", "COMPASS_DIR", "LOG_LEVEL"]


def test_no_secret_named_env_value_is_printed_anywhere_in_the_report(tmp_path: Path) -> None:
    secrets = {name: f"value-of-{name.lower()}-s3cr3t" for name in SECRET_NAMES}
    plain = {name: f"plain-{name.lower()}" for name in PLAIN_NAMES}
    config = parse_config(
        {
            "image": IMAGE,
            "job": {"env": {**secrets, **plain}},
            "worker": {"number": 1, "env": {"DB_PASSWORD": "worker-db-s3cr3t"}},
        }
    )
    shown = config_that_ran(config)
    assert shown["job"]["env"] == {**dict.fromkeys(SECRET_NAMES, MASK), **plain}
    assert shown["worker"]["env"] == {"DB_PASSWORD": MASK}
    run = tmp_path / "run"
    _attempt(run, NEW, "mnist-chief-0", 1, 2000.0, _ended("mnist-chief-0", 1, 0))
    (run / ".tftrain-run" / f"succeeded.{KEY}").write_text(f"{KEY} mnist-chief-0 attempt 1\n")
    state = read_run(run)
    assert state is not None
    text = write_report(state, "Run x", shown).read_text()
    assert "s3cr3t" not in text
    for name, value in plain.items():
        assert f"{name}: {value}" in text


def test_the_whole_report_of_a_succeeded_run_with_a_restart(tmp_path: Path) -> None:
    # Worked by hand: the first start is 2000 (00:33:20 UTC), the last output 2040 (a log's
    # mtime is its claim's + 30); the worker's first attempt was killed (137), its second
    # stopped by the run's end with exit 2.
    run = tmp_path / "run"
    _attempt(run, NEW, "mnist-chief-0", 1, 2000.0, "training\n" + _ended("mnist-chief-0", 1, 0))
    _attempt(run, NEW, "mnist-worker-0", 1, 2001.0, "boom\n" + _ended("mnist-worker-0", 1, 137))
    _attempt(run, NEW, "mnist-worker-0", 2, 2010.0, "ok\n" + _ended("mnist-worker-0", 2, 2))
    (run / ".tftrain-run" / f"succeeded.{KEY}").write_text(f"{KEY} mnist-chief-0 attempt 1\n")
    (run / "metrics.txt").write_text("test_accuracy 0.9912\nglobal_step 20\n")
    state = read_run(run)
    assert state is not None
    text = write_report(state, "Run x", {"image": "img", "job": {"name": "mnist"}}).read_text()
    logs = f"logs/{KEY}.{NEW}"
    assert text == "\n".join(
        [
            "# Run x",
            "",
            f"- run dir: `{run}`",
            f"- run key: `{KEY}`, deploy generation `{NEW}`",
            "- started: 1970-01-01 00:33:20 UTC; wall time 40.0s; last step 20",
            "",
            "## Outcome",
            "",
            "**Succeeded.**",
            "",
            "## Metrics",
            "",
            "| metric | step | value | from |",
            "| --- | --- | --- | --- |",
            "| test_accuracy | - | 0.9912 | metrics.txt |",
            "| global_step | - | 20 | metrics.txt |",
            "",
            "## Plots",
            "",
            "No loss scalar in the event files.",
            "No accuracy scalar in the event files.",
            "",
            "## Replicas",
            "",
            "| replica | attempts | restarts | wall time | last exit | last log |",
            "| --- | --- | --- | --- | --- | --- |",
            f"| mnist-chief-0 | 1 | 0 | 30.0s | exit 0 | `replicas/mnist-chief-0/{logs}"
            ".mnist-chief-0.1.log` |",
            "| mnist-worker-0 | 2 | 1 | 39.0s | stopped at the run's end: exit 2 | "
            f"`replicas/mnist-worker-0/{logs}.mnist-worker-0.2.log` |",
            "",
            "## Config that ran",
            "",
            "```yaml",
            "image: img",
            "job:",
            "  name: mnist",
            "```",
            "",
        ]
    )
    assert not list((run / "report").glob(".*partial"))  # written under another name, renamed


@pytest.mark.parametrize(
    ("log", "record", "outcome", "first_line"),
    [
        (
            "step 3\n",
            None,
            "running",
            "**Running** (this report was written before the run ended).",
        ),
        (
            "step 3\n" + _ended("mnist-chief-0", 1, 143),
            None,
            "stopped",
            "**Stopped**: stopped from outside before it ended (Ctrl-C, a preemption, "
            "--timeout); run the same command again to continue from its last checkpoint.",
        ),
        (
            "step 3\n",
            "mnist-chief-0 lost attempt 1 on host-b: no heartbeat for 31s\n",
            "failed",
            "**Failed**: `mnist-chief-0` attempt 1 lost on its last attempt (killed with its "
            "supervisor: no heartbeat) on `host-b`",
        ),
        ("step 3\n", "garbled\n", "failed", "**Failed** (the failure record could not be read)."),
    ],
    ids=["running", "stopped", "lost", "unreadable"],
)
def test_each_outcome_reads_as_the_supervisors_records_say(
    tmp_path: Path, log: str, record: str | None, outcome: str, first_line: str
) -> None:
    run = tmp_path / "run"
    _attempt(run, NEW, "mnist-chief-0", 1, 2000.0, log)
    if outcome == "running":  # not ended, and its supervisor beats: alive
        _beating(run, NEW, "mnist-chief-0", 1)
    if record is not None:
        (run / ".tftrain-run" / f"failed.{KEY}.{NEW}").write_text(record)
    state = read_run(run)
    assert state is not None and state.outcome == outcome
    assert outcome_lines(state)[0] == first_line


def test_a_run_whose_supervisors_went_silent_reads_lost_with_the_way_on(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _attempt(run, NEW, "mnist-chief-0", 1, 2000.0, "step 3\n")  # not ended, no beat since 1970
    state = read_run(run)
    assert state is not None and state.outcome == "lost"
    (line,) = outcome_lines(state)
    assert line.startswith("**Lost**: lost: no heartbeat from mnist-chief-0 attempt 1 (")
    assert line.endswith(
        "(its supervisor was killed: a killed launcher, a replica killed whole, a full volume); "
        "run the same command again to continue from its last checkpoint."
    )


def test_the_config_that_ran_in_full() -> None:
    # The stack-file spelling (docs/config.md): camelCase keys, lists, empty values and the
    # namespace left out, a group of 0 replicas left out, env named like a secret masked.
    config = parse_config(
        {
            "image": IMAGE,
            "cluster": {"kind": "ack", "cpuPool": {"size": 2}},
            "network": {"zoneId": "cn-hangzhou-i"},
            "job": {
                "runId": "r1",
                "args": ["--a", "1"],
                "env": {"MODE": "fast", "DB_PASSWORD": "x"},
            },
            "worker": {"number": 1},
            "ps": {"number": 0},
            "hyperparams": {"maxSteps": 5},
            "data": {"bucket": "team-data-01", "inputPrefix": "in/", "exportPrefix": "exp/"},
        }
    )
    group = {"image": IMAGE, "imagePullPolicy": "IfNotPresent", "gpuCount": 0, "cpu": "1",
             "memory": "2Gi", "spot": False}  # fmt: skip
    assert config_that_ran(config) == {
        "image": IMAGE,
        "job": {
            "name": "mnist",
            "runId": "r1",
            "args": ["--a", "1"],
            "env": {"MODE": "fast", "DB_PASSWORD": MASK},
            "restartPolicy": "Never",
            "backoffLimit": 3,
            "suspend": False,
            "gangScheduling": True,
            "evaluatorInCluster": False,
            "evaluatorFinishSeconds": 600,
        },
        "chief": {"number": 1, **group},
        "worker": {"number": 1, **group},
        "hyperparams": {
            "epochs": 4,
            "batchSize": 128,
            "learningRate": 0.003,
            "strategy": "auto",
            "checkpointSteps": 500,
            "logSteps": 100,
            "stepsPerExecution": 50,
            "maxSteps": 5,
            "keepCheckpoints": 3,
        },
        "data": {"bucket": "team-data-01", "inputPath": "/input", "exportPrefix": "exp/"},
    }
    # Without a bucket, no data section.
    assert "data" not in config_that_ran(parse_config({"image": IMAGE}))


@pytest.mark.parametrize(
    ("epoch", "seconds", "when", "wall"),
    [(None, None, "-", "-"), (0.0, 0.04, "1970-01-01 00:00:00 UTC", "0.0s"),
     (86399.0, 12.25, "1970-01-01 23:59:59 UTC", "12.2s")],
)  # fmt: skip
def test_times_read_as_utc_and_seconds(
    epoch: float | None, seconds: float | None, when: str, wall: str
) -> None:
    assert _when(epoch) == when and _seconds(seconds) == wall


def test_scalars_are_plotted_and_their_last_values_listed(tmp_path: Path) -> None:
    from tests.test_sweep_results import tf2_scalar, write_events

    run = tmp_path / "run"
    _attempt(run, NEW, "mnist-chief-0", 1, 2000.0, _ended("mnist-chief-0", 1, 0))
    (run / ".tftrain-run" / f"succeeded.{KEY}").write_text(f"{KEY} mnist-chief-0 attempt 1\n")
    write_events(
        run / "train", [tf2_scalar("loss", 0.5, 10, 1.0), tf2_scalar("loss", 0.25, 20, 2.0)]
    )
    write_events(run / "eval", [tf2_scalar("accuracy", 0.75, 20, 3.0)])
    write_events(run, [tf2_scalar("epoch_loss", 2.0, 1, 1.0)])
    state = read_run(run)
    assert state is not None and state.step == 20
    text = write_report(state, "Run x", {"image": "img"}).read_text()
    assert "![loss](loss.svg)" in text and "![accuracy](accuracy.svg)" in text
    for plot in ("loss", "accuracy"):
        root = ElementTree.parse(run / "report" / f"{plot}.svg").getroot()
        assert root.tag == f"{SVG}svg"
    assert "| epoch_loss | 1 | 2 | ./ |" in text
    assert "| loss | 20 | 0.25 | train/ |" in text
    assert "| accuracy | 20 | 0.75 | eval/ |" in text
    # Both loss series on the loss plot, named by where they were logged.
    assert sorted(series(state, "loss")) == ["epoch_loss", "train/loss"]
    assert list(series(state, "acc")) == ["eval/accuracy"]


def test_a_plot_draws_each_series_by_step_with_its_name(tmp_path: Path) -> None:
    from infra.records.report import plot
    from infra.records.tensorboard_scalars import Point

    lines = {
        "train/loss": [Point(10, 0.5, 1.0), Point(20, 0.25, 2.0)],
        "loss": [Point(5, 1.0, 1.0)],
    }
    plot(tmp_path / "loss.svg", "loss", "Run x", lines)
    root = ElementTree.parse(tmp_path / "loss.svg").getroot()
    # 7 x 4 inches at 100 dpi, as the PNG was: a size that reads on a laptop and in a pull request.
    assert (root.get("width"), root.get("height")) == ("700", "400")
    texts = chart_texts(tmp_path / "loss.svg")
    # Titled with the run; 0.25 to 1.0 spans less than a decade: a linear axis.
    assert (texts["title"], texts["x-label"], texts["y-label"]) == (
        ["loss: Run x"], ["step"], ["loss"]
    )  # fmt: skip
    assert texts["legend-label"] == ["train/loss", "loss"]
    assert "note" not in texts  # no test metric: no value written beside a point
    groups = {
        g.get("data-label"): len(list(g.iter(f"{SVG}circle")))
        for g in root.iter(f"{SVG}g")
        if g.get("class") == "series"
    }
    assert groups == {"train/loss": 2, "loss": 1}  # a dot per point: one point is no line


def test_a_test_metric_is_named_with_its_value_and_a_wide_range_drawn_on_a_log_axis(
    tmp_path: Path,
) -> None:
    from infra.records.report import plot
    from infra.records.tensorboard_scalars import Point

    lines = {
        "train/loss": [Point(10, 2.0, 1.0), Point(20, 0.2, 2.0)],  # exactly a decade
        "eval/test_loss": [Point(20, 0.21234, 3.0)],
    }
    plot(tmp_path / "loss.svg", "loss", "Run x", lines)
    texts = chart_texts(tmp_path / "loss.svg")
    assert texts["y-label"] == ["loss (log scale)"]
    assert texts["legend-label"] == ["train/loss", "eval/test_loss = 0.2123"]
    assert texts["note"] == ["0.2123"]
    assert texts["y-tick"] == ["0.2", "0.5", "1", "2"]


def test_a_report_of_a_run_with_nothing_yet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import infra.records.report

    drawn: list[tuple[object, ...]] = []
    monkeypatch.setattr(infra.records.report, "plot", lambda *args: drawn.append(args))
    run = tmp_path / "run"
    _attempt(run, NEW, "mnist-chief-0", 1, 2000.0)  # claimed, no log yet
    _beating(run, NEW, "mnist-chief-0", 1)  # started just now, its supervisor beating
    state = read_run(run)
    assert state is not None and state.outcome == "running"
    where = tmp_path / "elsewhere" / "report"  # its parents made too
    config = {"job": {"name": "mnist"}, "image": "img"}  # shown in this order, not sorted
    for _ in range(2):  # written again over the first one
        text = write_report(state, "Run x", config, destination=where).read_text()
    assert drawn == []
    assert "; last step -\n" in text
    assert "\n## Metrics\n\nNo metrics: no metrics.txt and no scalars.\n" in text
    assert "| mnist-chief-0 | 1 | 0 | 0.0s | running | - |" in text
    assert "```yaml\njob:\n  name: mnist\nimage: img\n```" in text


def test_each_plot_is_drawn_under_its_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import infra.records.report
    from tests.test_sweep_results import tf2_scalar, write_events

    drawn: list[tuple[object, ...]] = []
    monkeypatch.setattr(infra.records.report, "plot", lambda *args: drawn.append(args))
    run = tmp_path / "run"
    _attempt(run, NEW, "mnist-chief-0", 1, 2000.0, _ended("mnist-chief-0", 1, 0))
    write_events(run / "train", [tf2_scalar("loss", 0.5, 10, 1.0)])
    write_events(run / "eval", [tf2_scalar("test_accuracy", 0.75, 10, 3.0)])
    state = read_run(run)
    assert state is not None
    write_report(state, "Run x", {"image": "img"})
    assert [(path, name, run_title, list(lines)) for path, name, run_title, lines in drawn] == [
        (run / "report" / "loss.svg", "loss", "Run x", ["train/loss"]),
        (run / "report" / "accuracy.svg", "accuracy", "Run x", ["eval/test_accuracy"]),
    ]


def test_a_failure_shows_its_last_lines_in_a_block_and_a_hostless_record_no_host(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    _attempt(run, NEW, "mnist-chief-0", 1, 2000.0, "boom\n" + _ended("mnist-chief-0", 1, 2))
    (run / ".tftrain-run" / f"failed.{KEY}.{NEW}").write_text("mnist-chief-0 exit 2 attempt 1\n")
    state = read_run(run)
    assert state is not None
    log = run / "replicas" / "mnist-chief-0" / "logs" / f"{KEY}.{NEW}.mnist-chief-0.1.log"
    assert outcome_lines(state) == [
        "**Failed**: `mnist-chief-0` attempt 1 exit 2",
        "",
        f"Last lines of `{log}`:",
        "",
        "```",
        "boom",
        "tftrain-supervise: mnist-chief-0 attempt 1 ended: exit 2",
        "```",
    ]


def test_a_failure_of_an_attempt_not_on_disk_has_no_lines(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _attempt(run, NEW, "mnist-chief-0", 1, 2000.0, "step 1\n")
    (run / ".tftrain-run" / f"failed.{KEY}.{NEW}").write_text("mnist-ps-0 exit 2 attempt 3 on h\n")
    state = read_run(run)
    assert state is not None
    assert outcome_lines(state) == ["**Failed**: `mnist-ps-0` attempt 3 exit 2 on `h`"]


def test_one_metric_is_a_table_of_one_row(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _attempt(run, NEW, "mnist-chief-0", 1, 2000.0, _ended("mnist-chief-0", 1, 0))
    (run / "metrics.txt").write_text("test_accuracy 0.5\n")
    state = read_run(run, with_scalars=False)
    assert state is not None
    text = write_report(state, "Run x", {"image": "img"}).read_text()
    assert "| metric | step | value | from |\n| --- | --- | --- | --- |\n" in text
    assert "| test_accuracy | - | 0.5 | metrics.txt |\n" in text
