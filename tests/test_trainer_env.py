"""The env every replica's container gets (`infra.replica_plan.trainer_env`), against the trainer's
documented names (trainer/settings.py, docs/trainer.md "What your trainer gets") and values
worked by hand: TF_CONFIG for the replica, the output dir, each hyperparameter as the
trainer parses it back, the data dir only when the stack names one."""

from __future__ import annotations

import json

import pytest

from infra.config import parse_config
from infra.replica_plan.trainer_env import replica_env
from infra.topology import build_topology

IMAGE = "registry.example.com/tftrain/trainer:1"


def _env(raw: dict, replica: str, output_dir: str | None = None) -> dict[str, str]:
    config = parse_config({"image": IMAGE, "job": {"runId": "r7"}, **raw})
    topology = build_topology(config)
    (chosen,) = [r for r in topology.replicas if r.name == replica]
    return replica_env(config, topology, chosen, output_dir)


def test_a_workers_env_in_full() -> None:
    raw = {
        "job": {"runId": "r7", "dataDir": "/input/mnist"},
        "hyperparams": {"epochs": 2, "batchSize": 64, "learningRate": 1e-5, "maxSteps": 9,
                        "strategy": "parameter_server", "checkpointSteps": 7, "logSteps": 3,
                        "stepsPerExecution": 5, "keepCheckpoints": 4},
    }  # fmt: skip
    env = _env(raw, "mnist-worker-1")
    assert list(env) == [
        "TF_CONFIG", "TFTRAIN_OUTPUT_DIR", "TFTRAIN_EPOCHS", "TFTRAIN_BATCH_SIZE",
        "TFTRAIN_LEARNING_RATE", "TFTRAIN_STRATEGY", "TFTRAIN_CHECKPOINT_STEPS",
        "TFTRAIN_KEEP_CHECKPOINTS", "TFTRAIN_LOG_STEPS", "TFTRAIN_STEPS_PER_EXECUTION",
        "TFTRAIN_MAX_STEPS", "TFTRAIN_DATA_DIR",
    ]  # fmt: skip
    assert json.loads(env["TF_CONFIG"]) == {
        "cluster": {
            "chief": ["mnist-chief-0.tftrain.svc:2222"],
            "worker": ["mnist-worker-0.tftrain.svc:2222", "mnist-worker-1.tftrain.svc:2222"],
            "ps": ["mnist-ps-0.tftrain.svc:2222"],
        },
        "task": {"type": "worker", "index": 1},
        "environment": "cloud",
    }
    assert {k: v for k, v in env.items() if k != "TF_CONFIG"} == {
        "TFTRAIN_OUTPUT_DIR": "/data/mnist/r7",  # <mountPath>/<job>/<run id>
        "TFTRAIN_EPOCHS": "2",
        "TFTRAIN_BATCH_SIZE": "64",
        "TFTRAIN_LEARNING_RATE": "1e-05",
        "TFTRAIN_STRATEGY": "parameter_server",
        "TFTRAIN_CHECKPOINT_STEPS": "7",
        "TFTRAIN_KEEP_CHECKPOINTS": "4",
        "TFTRAIN_LOG_STEPS": "3",
        "TFTRAIN_STEPS_PER_EXECUTION": "5",
        "TFTRAIN_MAX_STEPS": "9",
        "TFTRAIN_DATA_DIR": "/input/mnist",
    }


@pytest.mark.parametrize(
    ("rate", "text"),
    [(0.003, "0.003"), (0.1, "0.1"), (1e-05, "1e-05"), (1.0, "1.0"), (0.30000000000000004,
     "0.30000000000000004")],
)  # fmt: skip
def test_the_learning_rate_reaches_the_trainer_exactly(rate: float, text: str) -> None:
    env = _env({"hyperparams": {"learningRate": rate}}, "mnist-chief-0")
    assert env["TFTRAIN_LEARNING_RATE"] == text and float(text) == rate


def test_no_data_dir_unless_named_and_the_launchers_output_dir_wins() -> None:
    env = _env({}, "mnist-ps-0", output_dir="/tmp/runs/fake/r7")
    assert "TFTRAIN_DATA_DIR" not in env
    assert env["TFTRAIN_OUTPUT_DIR"] == "/tmp/runs/fake/r7"
    assert json.loads(env["TF_CONFIG"])["task"] == {"type": "ps", "index": 0}
