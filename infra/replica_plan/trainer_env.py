"""The environment every replica's container gets: `TF_CONFIG` plus the trainer's settings.

One function serves the Kubernetes Jobs and the local launcher, so a hyperparameter reaches
the trainer the same way in both. The names are the trainer's documented env vars
(`trainer/settings.py`); a user's own TFJob-style trainer can ignore all but `TF_CONFIG`.
"""

from __future__ import annotations

from infra.config import StackConfig
from infra.topology import Replica, Topology


def hyperparam_env(config: StackConfig) -> dict[str, str]:
    hyper = config.hyperparams
    return {
        "TFTRAIN_EPOCHS": str(hyper.epochs),
        "TFTRAIN_BATCH_SIZE": str(hyper.batch_size),
        "TFTRAIN_LEARNING_RATE": repr(hyper.learning_rate),
        "TFTRAIN_STRATEGY": hyper.strategy,
        "TFTRAIN_CHECKPOINT_STEPS": str(hyper.checkpoint_steps),
        "TFTRAIN_KEEP_CHECKPOINTS": str(hyper.keep_checkpoints),
        "TFTRAIN_LOG_STEPS": str(hyper.log_steps),
        "TFTRAIN_STEPS_PER_EXECUTION": str(hyper.steps_per_execution),
        "TFTRAIN_MAX_STEPS": str(hyper.max_steps),
    }


def replica_env(
    config: StackConfig, topology: Topology, replica: Replica, output_dir: str | None = None
) -> dict[str, str]:
    """Env for one replica, in a stable order; `output_dir` overrides the volume path."""
    env = {
        "TF_CONFIG": topology.tf_config_json(replica),
        "TFTRAIN_OUTPUT_DIR": output_dir or config.output_dir,
        **hyperparam_env(config),
    }
    if config.job.data_dir:
        env["TFTRAIN_DATA_DIR"] = config.job.data_dir
    return env
