"""Boundary tables for the ranges a user writes: each end accepted, one past it refused with
a message naming the key and what is allowed. The bounds are written here by hand from
docs/config.md and docs/hyperparameters.md (never read from the model), and a sweep's range
is checked where its values are forced (min = max), so the expected points need no draw."""

from __future__ import annotations

from typing import Any

import pytest

from infra.config import ConfigError, StackConfig, parse_config
from infra.config.sweep_points import point_text

IMAGE = "registry.example.com/tftrain/trainer:1"
INT32_MAX = 2**31 - 1

# (key path, lowest, highest) a user may write.
INTEGER_RANGES = [
    ("hyperparams.epochs", 1, 100000),
    ("hyperparams.batchSize", 1, 65536),
    ("hyperparams.checkpointSteps", 1, INT32_MAX),
    ("hyperparams.logSteps", 1, INT32_MAX),
    ("hyperparams.stepsPerExecution", 1, 1000),
    ("hyperparams.maxSteps", 0, INT32_MAX),
    ("hyperparams.keepCheckpoints", 2, 1000),
    ("job.backoffLimit", 0, 100),
    ("sweep.seed", 0, INT32_MAX),
    ("sweep.parallel", 1, 1000),
]


def _set(raw: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    section, name = key.split(".")
    return {**raw, section: {**raw.get(section, {}), name: value}}


def _base(key: str) -> dict[str, Any]:
    raw: dict[str, Any] = {"image": IMAGE}
    if key.startswith("sweep."):
        raw["sweep"] = {"method": "random", "samples": 1,
                        "parameters": {"hyperparams.learningRate": {"values": [0.01]}}}  # fmt: skip
    return raw


def _problems(raw: dict[str, Any]) -> list[str]:
    try:
        parse_config(raw)
    except ConfigError as error:
        return list(error.problems)
    return []


@pytest.mark.parametrize(("key", "low", "high"), INTEGER_RANGES)
def test_every_integer_key_takes_its_ends_and_refuses_one_past(
    key: str, low: int, high: int
) -> None:
    for inside in (low, high):
        assert _problems(_set(_base(key), key, inside)) == [], (key, inside)
    for outside in (low - 1, high + 1):
        assert _problems(_set(_base(key), key, outside)) == [
            f"tftrain:{key} = {outside}: must be an integer from {low} to {high}"
        ]


def _random(parameter: dict[str, Any], key: str = "hyperparams.learningRate",
            samples: int = 3) -> dict[str, Any]:  # fmt: skip
    sweep = {"method": "random", "samples": samples, "parameters": {key: parameter}}
    return {"image": IMAGE, "sweep": sweep}


def _points(config: StackConfig) -> list[dict[str, Any]]:
    return [trial.trial_point for trial in config.trials]


LR, BS, STEPS = "hyperparams.learningRate", "hyperparams.batchSize", "hyperparams.maxSteps"


@pytest.mark.parametrize(
    ("key", "parameter", "points"),
    [
        # min = max: every draw is that value; the same run three times is one trial.
        (LR, {"min": 0.5, "max": 0.5}, [0.5]),
        (LR, {"min": 1e-5, "max": 1e-5, "distribution": "log_uniform"}, [1e-5]),
        (BS, {"min": 2, "max": 2, "distribution": "int_uniform"}, [2]),
        # The only whole number between 2.5 and 3 is 3, both ends included.
        (BS, {"min": 2.5, "max": 3, "distribution": "int_uniform"}, [3]),
        (BS, {"min": 2, "max": 2.9, "distribution": "int_uniform"}, [2]),
        (STEPS, {"min": 0, "max": 0, "distribution": "int_uniform"}, [0]),  # min 0: allowed
    ],
    ids=["uniform-equal", "log-equal", "int-2..2", "int-2.5..3", "int-2..2.9", "int-0..0"],
)
def test_a_range_forced_to_one_value_draws_it(
    key: str, parameter: dict[str, Any], points: list[Any]
) -> None:
    config = parse_config(_random(parameter, key))
    assert _points(config) == [{key: point} for point in points]


WHERE = 'tftrain:sweep.parameters["{key}"]'


@pytest.mark.parametrize(
    ("key", "parameter", "problem"),
    [
        (LR, {"min": 1, "max": 0.5}, "{where}.min = 1.0: must be at most max 0.5"),
        (
            LR,
            {"min": 0, "max": 1, "distribution": "log_uniform"},
            "{where}.min = 0.0: must be > 0 for log_uniform",
        ),
        (
            LR,
            {"min": -1, "max": 1, "distribution": "log_uniform"},
            "{where}.min = -1.0: must be > 0 for log_uniform",
        ),
        (
            BS,
            {"min": 2.5, "max": 2.9, "distribution": "int_uniform"},
            "{where}: min 2.5 and max 2.9 hold no whole number (int_uniform)",
        ),
        (LR, {"min": 0.1}, "{where}: must have values, or both min and max"),
        (LR, {"max": 0.1}, "{where}: must have values, or both min and max"),
        (
            LR,
            {"values": [0.1], "min": 0.1, "max": 0.2},
            "{where}: values, or min and max, not both",
        ),
    ],
    ids=["min>max", "log-min-0", "log-min<0", "int-none", "min-only", "max-only", "both"],
)
def test_a_range_that_holds_nothing_is_refused_by_key(
    key: str, parameter: dict[str, Any], problem: str
) -> None:
    assert _problems(_random(parameter, key)) == [problem.format(where=WHERE.format(key=key))]


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        (STEPS, -1, "tftrain:hyperparams.maxSteps = -1: must be an integer from 0 to 2147483647"),
        (BS, 0, "tftrain:hyperparams.batchSize = 0: must be an integer from 1 to 65536"),
        (BS, 65537, "tftrain:hyperparams.batchSize = 65537: must be an integer from 1 to 65536"),
    ],
)
def test_a_drawn_value_outside_the_keys_range_names_the_trial(
    key: str, value: int, problem: str
) -> None:
    parameter = {"min": value, "max": value, "distribution": "int_uniform"}
    assert _problems(_random(parameter, key, samples=1)) == [
        f"tftrain:sweep trial 1 ({key}={value}): {problem}"
    ]


@pytest.mark.parametrize(
    ("samples", "problem"),
    [
        (0, "tftrain:sweep.samples = 0: {allowed}"),
        (1001, "tftrain:sweep.samples = 1001: {allowed}"),
    ],
)
def test_samples_past_either_end_are_refused(samples: int, problem: str) -> None:
    allowed = "must be unset (grid) or, for random, an integer from 1 to 1000"
    assert _problems(_random({"values": [0.1]}, samples=samples)) == [
        problem.format(allowed=allowed)
    ]
    assert len(_points(parse_config(_random({"min": 0.1, "max": 0.2}, samples=1)))) == 1


def _grid(parameter: dict[str, Any], **sweep: Any) -> dict[str, Any]:
    return {"image": IMAGE, "sweep": {"parameters": {LR: parameter}, **sweep}}


@pytest.mark.parametrize(
    ("raw", "problems"),
    [
        (_grid({"min": 0.1, "max": 0.2}),
         [f"{WHERE.format(key=LR)}: must list values for method grid (min/max are for method "
          "random)"]),
        (_grid({"values": [0.1]}, samples=2),
         ["tftrain:sweep.samples: unset for method grid (it runs every point)"]),
        (_grid({"values": [0.1]}, seed=3),
         ["tftrain:sweep.seed: 0 or unset for method grid (nothing is drawn)"]),
        (_grid({"values": [0.1], "min": 0.1}),
         [f"{WHERE.format(key=LR)}: values, or min and max, not both"]),
        (_grid({"values": [0.1], "max": 0.2}),
         [f"{WHERE.format(key=LR)}: values, or min and max, not both"]),
        (_grid({"values": [0.1]}, seed=0), []),
    ],
    ids=["grid-range", "grid-samples", "grid-seed", "values-and-min", "values-and-max", "seed-0"],
)  # fmt: skip
def test_a_grid_takes_values_only(raw: dict[str, Any], problems: list[str]) -> None:
    assert _problems(raw) == problems


def test_a_random_sweep_without_samples_draws_one_point() -> None:
    # A range, so that a second draw would be another trial, not the same one again.
    parameter = {"min": 0.1, "max": 0.2}
    raw = {"image": IMAGE, "sweep": {"method": "random", "parameters": {LR: parameter}}}
    (point,) = _points(parse_config(raw))
    assert 0.1 <= point[LR] <= 0.2


def test_an_unknown_key_without_a_likely_one_says_what_trials_vary() -> None:
    raw = {"image": IMAGE, "sweep": {"parameters": {"zzz.qqq": {"values": [1]}}}}
    assert _problems(raw) == [
        'tftrain:sweep.parameters["zzz.qqq"]: unknown stack key zzz.qqq; trials vary '
        "hyperparams.*, job.env.*, job.args and <group>.number, gpuCount, args, env.*"
    ]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (True, "true"),
        (False, "false"),
        (None, "null"),
        (3, "3"),
        (0.003, "0.003"),
        ("adam", "adam"),
        (["--opt", True], "[--opt, true]"),
        ({"a": None, "b": [1]}, "{a: null, b: [1]}"),
    ],
)
def test_a_point_reads_as_yaml_would_show_it(value: Any, text: str) -> None:
    assert point_text({"job.env.X": value, "hyperparams.epochs": 2}) == (
        f"job.env.X={text} hyperparams.epochs=2"
    )


def test_a_sweeps_job_name_leaves_room_for_the_run_id() -> None:
    # Replica names are <job>-<run id>-<type>-<index>, at most 63 characters: "-evaluator-999"
    # (14) and "-run-" plus 8 hex (13) leave 36 for the job name.
    def raw(name: str) -> dict[str, Any]:
        return {**_grid({"values": [0.1]}), "job": {"name": name}}

    assert _problems(raw("j" * 36)) == []
    assert _problems(raw("j" * 37)) == [
        f"tftrain:job.name = {'j' * 37!r}: must be at most 36 characters with a sweep (a "
        "trial's replicas are <job>-<run id>-<type>-<index>)"
    ]


def test_a_sweep_derives_run_ids_so_none_may_be_set() -> None:
    assert _problems({**_grid({"values": [0.1]}), "job": {"runId": "r1"}}) == [
        "tftrain:job.runId = 'r1': must be empty with a sweep: each trial's run id is derived "
        "from what it trains"
    ]


def test_every_trial_that_cannot_run_is_named_at_once() -> None:
    problems = _problems(
        {"image": IMAGE, "sweep": {"parameters": {STEPS: {"values": [-1, 4, -2]}}, "parallel": 3}}
    )
    assert [p.split(":", 2)[1] for p in problems] == [
        "sweep trial 1 (hyperparams.maxSteps=-1)",
        "sweep trial 3 (hyperparams.maxSteps=-2)",
    ]


def test_a_repeated_grid_value_is_named() -> None:
    (problem,) = _problems(_grid({"values": [0.1, 0.2, 0.1]}, parallel=3))
    assert problem.startswith(
        "tftrain:sweep trial 3 (hyperparams.learningRate=0.1): trains the same as "
        "(hyperparams.learningRate=0.1), run run-"
    )
    assert problem.endswith(": a repeated value, or a key the run id does not depend on")
