"""A sweep in the render and the review (infra/render/sweep.py): what the render states before
the objects (worked out by hand from the trials' replicas, GPUs and deadline), and the review's
trial lines read back from two render texts written here."""

from __future__ import annotations

from typing import Any

import pytest

from infra.config import parse_config
from infra.render.sweep import gpu_hours, parse_sweep, sweep_lines, sweep_section

IMAGE = "registry.example.com/tftrain/trainer:1"
LR = "hyperparams.learningRate"
DEADLINE_NOTE = "job.activeDeadlineSeconds, which counts from a Job's creation, waiting included"


def _config(parameters: dict[str, Any], parallel: int, **sections: Any):
    sweep = {"parameters": parameters, "parallel": parallel}
    return parse_config(
        {"image": IMAGE, "cluster": {"kind": "existing"}, "sweep": sweep, **sections}
    )


def _facts(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("# sweep ")]


def test_the_render_states_the_trials_and_what_the_busiest_trials_hold_at_once() -> None:
    # worker.gpuCount 1, 4, 2 with 2 workers: 2, 8 and 4 GPUs a trial; chief, 2 workers and
    # a ps are 4 replicas a trial. Two at once: at most 8 replicas and 8 + 4 = 12 GPUs.
    # Over all trials 14 GPUs, each Job stopped at 1800 s: 14 x 0.5 h = 7 GPU-hours.
    config = _config(
        {"worker.gpuCount": {"values": [1, 4, 2]}},
        2,
        worker={"number": 2},
        job={"activeDeadlineSeconds": 1800},
        hyperparams={"batchSize": 96},  # split over the chief and 2 workers
    )
    text = sweep_section(config)
    assert text.startswith(
        "# ===== Sweep: each trial is a run of its own (run id, Jobs, Services, directory) =====\n"
    )
    assert _facts(text) == [
        "# sweep method: grid",
        "# sweep trials: 3",
        "# sweep at-once: 2 trials (sweep.parallel), at most 8 replicas and 12 GPUs",
        f"# sweep gpu-hours: 7 (14 GPUs over all trials x 1800 s {DEADLINE_NOTE})",
        "# sweep metric: test_accuracy (maximize)",
    ]
    trials = [line for line in text.splitlines() if line.startswith("# trial ")]
    assert [line.rsplit(": ", 1)[1] for line in trials] == [
        "worker.gpuCount=1",
        "worker.gpuCount=4",
        "worker.gpuCount=2",
    ]
    assert [trial.job.run_id for trial in config.trials] == [
        line.split(" ")[2].rstrip(":") for line in trials
    ]
    assert text.endswith("\n") and not text.endswith("\n\n")


def test_sweeping_the_worker_count_sizes_the_peak_by_the_largest_trials() -> None:
    # Workers 1, 3, 2 beside a chief and a ps: 3, 5 and 4 replicas; two at once: 5 + 4 = 9.
    # (A batch of 96 splits evenly over 2, 4 and 3 training replicas.)
    workers = {"worker.number": {"values": [1, 3, 2]}}
    config = _config(workers, 2, hyperparams={"batchSize": 96})
    assert "at most 9 replicas and 0 GPUs" in _facts(sweep_section(config))[2]
    everything = _config(workers, 3, hyperparams={"batchSize": 96})
    assert "3 trials (sweep.parallel), at most 12 replicas" in _facts(sweep_section(everything))[2]


@pytest.mark.parametrize(
    ("sections", "hours"),
    [
        ({}, "0 (no trial requests a GPU)"),
        (
            {"worker": {"number": 1, "gpuCount": 1}},
            "unbounded: job.activeDeadlineSeconds is unset (2 GPUs over all trials)",
        ),
        (
            {"worker": {"number": 1, "gpuCount": 2}, "job": {"activeDeadlineSeconds": 5400}},
            f"6 (4 GPUs over all trials x 5400 s {DEADLINE_NOTE})",
        ),
        (
            {"worker": {"number": 1, "gpuCount": 1}, "job": {"activeDeadlineSeconds": 900}},
            f"0.5 (2 GPUs over all trials x 900 s {DEADLINE_NOTE})",
        ),
    ],
    ids=["cpu", "no-deadline", "whole-number", "half-hour"],
)
def test_gpu_hours_over_two_trials(sections: dict[str, Any], hours: str) -> None:
    config = _config({LR: {"values": [0.1, 0.2]}}, 2, **sections)
    assert gpu_hours(config) == hours


def test_no_sweep_states_nothing() -> None:
    assert sweep_section(parse_config({"image": IMAGE})) == ""


def test_random_draws_that_repeat_a_point_say_how_many_were_distinct() -> None:
    sweep = {
        "method": "random",
        "samples": 5,
        "seed": 1,
        "parameters": {LR: {"values": [0.1]}},
        "parallel": 1,
    }
    config = parse_config({"image": IMAGE, "sweep": sweep})
    assert "# sweep trials: 1 (5 samples drew 1 distinct points)" in sweep_section(config)


def test_random_draws_all_distinct_need_no_note() -> None:
    # Three draws from a continuous range: three distinct points.
    sweep = {
        "method": "random",
        "samples": 3,
        "seed": 1,
        "parameters": {LR: {"min": 0.001, "max": 0.1}},
        "parallel": 3,
    }
    config = parse_config({"image": IMAGE, "cluster": {"kind": "existing"}, "sweep": sweep})
    assert "# sweep trials: 3\n" in sweep_section(config)


def _render(trials: dict[str, str], **facts: str) -> str:
    lines = ["# Stack s", "# ===== Sweep: each trial is a run of its own ====="]
    lines += [f"# sweep {key}: {value}" for key, value in facts.items()]
    lines += [f"# trial {run}: {point}" for run, point in trials.items()]
    return "\n".join([*lines, "---", "# Job t/x", "kind: Job"]) + "\n"


KEPT = "(untouched; a succeeded one is not run again)"
FACTS = {"at-once": "2 trials (sweep.parallel)", "gpu-hours": "0 (no trial requests a GPU)"}


def test_parse_sweep_reads_the_trials_and_facts_or_answers_none() -> None:
    text = _render({"m-a": "lr=0.1", "m-b": "lr=0.2"}, **FACTS, method="grid")
    parsed = parse_sweep(text)
    assert parsed is not None
    assert parsed.trials == {"m-a": "lr=0.1", "m-b": "lr=0.2"}
    assert parsed.facts == {**FACTS, "method": "grid"}
    assert parse_sweep("") is None
    assert parse_sweep("# Stack s\n---\n# Job t/x\n") is None
    # The banner only counts at the start of a line.
    assert parse_sweep("# note: # ===== Sweep\n") is None
    assert parse_sweep("# ===== Sweep: x\n") is not None


def test_sweep_lines_created_kept_removed() -> None:
    old = _render({"m-a": "lr=0.1", "m-b": "lr=0.2"}, **FACTS)
    new = _render({"m-b": "lr=0.2", "m-c": "lr=0.3", "m-d": "lr=0.4"}, **FACTS)
    assert sweep_lines(old, new) == [
        f"Sweep: 3 trials: created 2, kept 1 {KEPT}, removed 1",
        "  + m-c: lr=0.3",
        "  + m-d: lr=0.4",
        "  - m-a: lr=0.1",
        "  at once: 2 trials (sweep.parallel)",
        "  GPU-hours at most: 0 (no trial requests a GPU)",
    ]


def test_sweep_lines_when_every_trial_changes_or_a_side_has_no_sweep() -> None:
    old = _render({"m-a": "lr=0.1"}, **FACTS)
    new = _render({"m-b": "lr=0.1"})  # no facts stated
    assert sweep_lines(old, new) == [
        f"Sweep: 1 trials: created 1, kept 0 {KEPT}, removed 1",
        "  every trial changes: a key all trials share changed, so all run anew",
        "  + m-b: lr=0.1",
        "  - m-a: lr=0.1",
        "  at once: ?",
        "  GPU-hours at most: ?",
    ]
    plain = "# Stack s\n---\n# Job t/x\nkind: Job\n"
    assert sweep_lines(plain, new)[:2] == [
        f"Sweep: 1 trials: created 1, kept 0 {KEPT}, removed 0",
        "  + m-b: lr=0.1",
    ]
    assert sweep_lines(old, plain) == [
        f"Sweep: 0 trials: created 0, kept 0 {KEPT}, removed 1",
        "  - m-a: lr=0.1",
    ]
    assert sweep_lines(plain, plain) == []
    assert sweep_lines("", "") == []
