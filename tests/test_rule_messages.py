"""What a user reads for the bundled trainer's topology and strategy rules and for partial pull
credentials (infra/config/rules.py), word for word: each problem names the key to change and
what it allows. The configs are worked by hand: the defaults are 1 chief, 2 workers and 1 ps
(README "Stack keys"), and a batch of 120 splits evenly over 1 to 6 replicas, so only the
rule under test speaks."""

from __future__ import annotations

from typing import Any

import pytest

from infra.config import ConfigError, parse_config

IMAGE = "registry.example.com/tftrain/trainer:1"
EVEN = {"batchSize": 120}
PARTIAL_CREDENTIALS = (
    "must be set when any of imageRegistry's server, username and password is: all three or none"
)

CASES: dict[str, tuple[dict[str, Any], list[str]]] = {
    # TFJob's older name for the chief is no name ParameterServerStrategy takes.
    "master-for-the-bundled-trainer": (
        {"chief": {"number": 0}, "master": {"number": 1}, "ps": {"number": 0}},
        [
            "tftrain:master.number = 1: must be 0 for the bundled trainer (its chief is "
            "chief.number 1)"
        ],
    ),
    "gpus-on-the-ps": (
        {"ps": {"gpuCount": 1}, "hyperparams": EVEN},
        [
            "tftrain:ps.gpuCount = 1: must be 0: the bundled trainer's parameter servers do no "
            "GPU work"
        ],
    ),
    # ParameterServerStrategy: the chief is the coordinator, the workers run its closures.
    "ps-without-a-chief": (
        {"chief": {"number": 0}, "hyperparams": EVEN},
        [
            "tftrain:chief.number = 0: must be 1 when ps.number > 0: ParameterServerStrategy "
            "needs a chief"
        ],
    ),
    "ps-without-workers": (
        {"worker": {"number": 0}, "hyperparams": EVEN},
        [
            "tftrain:worker.number = 0: must be >= 1 when ps.number > 0: the chief dispatches "
            "to workers"
        ],
    ),
    "parameter-server-strategy-without-ps": (
        {"ps": {"number": 0}, "hyperparams": {**EVEN, "strategy": "parameter_server"}},
        [
            'tftrain:hyperparams.strategy = "parameter_server": must be auto or '
            "multi_worker_mirrored with 0 ps"
        ],
    ),
    "mirrored-strategy-with-ps": (
        {"hyperparams": {**EVEN, "strategy": "multi_worker_mirrored"}},
        [
            'tftrain:hyperparams.strategy = "multi_worker_mirrored": must be auto or '
            "parameter_server when ps.number > 0"
        ],
    ),
    # MultiWorkerMirrored keeps one model copy per device, in lockstep.
    "mirrored-with-unequal-devices": (
        {
            "ps": {"number": 0},
            "chief": {"gpuCount": 2},
            "worker": {"gpuCount": 1},
            "hyperparams": EVEN,
        },
        [
            "tftrain:chief.gpuCount = 2: must be worker.gpuCount or both <= 1: as many devices "
            "on every replica"
        ],
    ),
    # 1 chief + 2 workers under MultiWorkerMirrored: 3 replicas in sync; 128 = 3 x 42 + 2.
    "batch-that-does-not-split": (
        {"ps": {"number": 0}, "hyperparams": {"batchSize": 128}},
        [
            "tftrain:hyperparams.batchSize = 128: must be a multiple of 3: "
            "multi_worker_mirrored splits each batch over 3 replicas"
        ],
    ),
    # Only the empty keys are named: a password is never shown.
    "registry-server-alone": (
        {"imageRegistry": {"server": "registry.example.com"}, "hyperparams": EVEN},
        [
            f'tftrain:imageRegistry.username = "": {PARTIAL_CREDENTIALS}',
            f'tftrain:imageRegistry.password = "": {PARTIAL_CREDENTIALS}',
        ],
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_each_problem_is_stated_word_for_word(name: str) -> None:
    overrides, problems = CASES[name]
    with pytest.raises(ConfigError) as raised:
        parse_config({"image": IMAGE, **overrides})
    assert str(raised.value).splitlines() == [
        "invalid stack config:",
        *(f"  - {problem}" for problem in problems),
    ]


def test_a_users_own_trainer_is_not_held_to_the_bundled_trainers_rules() -> None:
    own = {
        "image": "registry.example.com/team/trainer:1",
        "job": {"command": ["python", "t.py"]},
        "tensorboard": {"enabled": False},
    }
    for overrides, _ in CASES.values():
        if "imageRegistry" not in overrides:
            parse_config({**overrides, **own})
