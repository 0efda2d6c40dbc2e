"""`hyperparams.keepCheckpoints`: how many published checkpoints a run keeps. At least two,
so a damaged newest one always has an intact predecessor to resume from; it reaches the
trainer as `TFTRAIN_KEEP_CHECKPOINTS`, and changing it continues the same run."""

from __future__ import annotations

import pytest

from infra.config import ConfigError, parse_config
from infra.replica_plan.trainer_env import hyperparam_env
from tests.run_ids import run_id
from trainer.settings import parse_settings

MINIMAL = {"image": "registry.example.com/tftrain/trainer:1"}


def with_keep(value: object) -> dict:
    return {**MINIMAL, "hyperparams": {"keepCheckpoints": value}}


@pytest.mark.parametrize("value", [0, 1, 1001, 2.5, "three"])
def test_fewer_than_two_or_not_a_count_is_refused_by_key(value: object) -> None:
    with pytest.raises(ConfigError, match=r"tftrain:hyperparams\.keepCheckpoints"):
        parse_config(with_keep(value))


def test_the_default_keeps_a_predecessor_and_reaches_the_trainer() -> None:
    env = hyperparam_env(parse_config(MINIMAL))
    assert int(env["TFTRAIN_KEEP_CHECKPOINTS"]) >= 2
    env = hyperparam_env(parse_config(with_keep(7)))
    assert env["TFTRAIN_KEEP_CHECKPOINTS"] == "7"
    # The trainer reads the same variable the stack sets.
    assert parse_settings([], env).keep_checkpoints == 7


def test_changing_it_continues_the_same_run() -> None:
    assert run_id(with_keep(10)) == run_id(MINIMAL)
