"""The rules about who runs what, as a table: TFJob's topologies for any command, the bundled
trainer's own rules only for the bundled trainer, commands for users' images, env names.

Each row states its expectation by hand: the key refused (None: accepted).
"""

from __future__ import annotations

from typing import Any

import pytest

from infra.config import ConfigError, parse_config

OURS = "registry.example.com/tftrain/trainer:1"
THEIRS = "registry.example.com/team/dist-mnist:1"
CUSTOM = {"command": ["python", "/app/dist_mnist.py"]}
BOARD = {"tensorboard": {"image": "registry.example.com/tensorflow/tensorflow:2.21.0"}}
THREE_WORKERS = {"chief": {"number": 0}, "worker": {"number": 3}, "ps": {"number": 0}}
BUNDLED = ["python3", "-m", "trainer"]
NO_CHIEF = {"chief": {"number": 0}, "worker": {"number": 2}, "ps": {"number": 1}}


def _theirs(**sections: Any) -> dict[str, Any]:
    return {"image": THEIRS, **BOARD, "job": CUSTOM, **sections}


ROWS: list[tuple[str, dict[str, Any], str | None]] = [
    # TFJob's classic topology: ps + workers, worker 0 is the chief.
    ("their ps+workers without chief", _theirs(**NO_CHIEF), None),
    ("bundled ps without chief", {"image": OURS, **NO_CHIEF}, "chief.number"),
    # The bundled trainer's batch split is not a rule for anyone else.
    ("their 3 workers, batch 128", _theirs(**THREE_WORKERS), None),
    ("bundled 3 workers, batch 128", {"image": OURS, **THREE_WORKERS}, "hyperparams.batchSize"),
    ("their ps with GPUs", _theirs(ps={"number": 1, "gpuCount": 1}), None),
    ("bundled ps with GPUs", {"image": OURS, "ps": {"number": 1, "gpuCount": 1}}, "ps.gpuCount"),
    # master is the chief's older name: one or the other, for anyone.
    ("their master instead of chief", _theirs(chief={"number": 0}, master={"number": 1}), None),
    ("chief and master", _theirs(master={"number": 1}), "master.number"),
    ("bundled master", {"image": OURS, "chief": {"number": 0}, "master": {"number": 1}},
     "master.number"),
    ("nobody to end the run", _theirs(chief={"number": 0}, worker={"number": 0}),
     "worker.number"),
    # A user's image needs its command; the bundled image does not.
    ("their image, no command", {"image": THEIRS, **BOARD}, "job.command"),
    ("their image, every group's own command",
     {"image": THEIRS, **BOARD, "chief": CUSTOM, "worker": CUSTOM, "ps": CUSTOM}, None),
    ("their image, one group without a command",
     {"image": THEIRS, **BOARD, "chief": CUSTOM, "worker": CUSTOM}, "job.command"),
    ("bundled image, no command", {"image": OURS}, None),
    ("bundled command named in full", {"image": OURS, "job": {"command": BUNDLED}, **THREE_WORKERS},
     "hyperparams.batchSize"),
    # TensorBoard: tftrain's image has it, a user's may not.
    ("their image, TensorBoard image unset", {"image": THEIRS, "job": CUSTOM}, "tensorboard.image"),
    ("their image, TensorBoard off", {"image": THEIRS, "job": CUSTOM,
                                      "tensorboard": {"enabled": False}}, None),
    # Either evaluator shape: the bundled trainer drops a listed evaluator before building its
    # strategy (trainer/tf_config.py; test_local_trainer's kubeflow-shape run ends with exit 0).
    ("bundled PS, evaluator in cluster",
     {"image": OURS, "evaluator": {"number": 1}, "job": {"evaluatorInCluster": True}}, None),
    ("their PS, evaluator in cluster",
     _theirs(evaluator={"number": 1}, job={**CUSTOM, "evaluatorInCluster": True}), None),
    # Env: names the stack sets are refused; the rest reach the replicas.
    ("job.env TF_CONFIG", _theirs(job={**CUSTOM, "env": {"TF_CONFIG": "{}"}}), "job.env"),
    ("worker.env HOME", _theirs(worker={"env": {"HOME": "/root"}}), "worker.env"),
    ("job.env hyperparameter", _theirs(job={**CUSTOM, "env": {"TFTRAIN_EPOCHS": "9"}}), "job.env"),
    ("job.env a boolean", _theirs(job={**CUSTOM, "env": {"DEBUG": True}}), "job.env.DEBUG"),
    ("job.env a bad name", _theirs(job={**CUSTOM, "env": {"1X": "a"}}), "job.env.1X"),
    ("job.env user names", _theirs(job={**CUSTOM, "env": {"TF_USE_LEGACY_KERAS": 1}}), None),
]  # fmt: skip


@pytest.mark.parametrize(("raw", "refused"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_rule_table(raw: dict[str, Any], refused: str | None) -> None:
    if refused is None:
        parse_config(raw)
        return
    with pytest.raises(ConfigError) as error:
        parse_config(raw)
    keys = [p.split(" ", 1)[0].rstrip(":") for p in error.value.problems]
    assert refused in [key.removeprefix("tftrain:") for key in keys], error.value


def test_numbers_in_env_are_their_text_and_reach_every_replica() -> None:
    config = parse_config(_theirs(job={**CUSTOM, "env": {"A": 1, "B": 0.5}}))
    assert config.job.env == {"A": "1", "B": "0.5"}
    assert config.env_of(config.worker) == {"A": "1", "B": "0.5"}


def test_the_command_message_names_the_image_and_the_key() -> None:
    with pytest.raises(ConfigError) as error:
        parse_config({"image": THEIRS, **BOARD})
    (problem,) = error.value.problems
    assert problem.startswith("tftrain:job.command = null: must be the command that starts")
    assert THEIRS in problem and "ENTRYPOINT" in problem
