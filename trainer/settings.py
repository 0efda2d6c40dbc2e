"""Every trainer setting, as a flag and an environment variable.

Precedence: the flag, then the `TFTRAIN_*` variable, then the default. Kubernetes passes
settings as env; flags are for a person at a shell. Values are validated here, so a typo
fails in a second with exit code 2, naming both spellings.

The defaults are tuned on the 4-process ParameterServerStrategy run (1 ps, 2 workers,
chief) on a 2-core machine: full MNIST to ~0.992 test accuracy in under 30 s end to end.
- batch 128: the two workers update the ps asynchronously, and at larger batches (fewer
  updates) that cost accuracy: batch 256 ended at 0.987-0.990.
- 4 epochs: 3 reach 0.992 in one process, but left the asynchronous run too little margin
  above 0.990.
- 50 steps per execution and a checkpoint every 500 steps: each closure and each save has
  a fixed cost, and under ParameterServerStrategy a save waits for the queue to drain.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from trainer.errors import UsageError
from trainer.plan import STRATEGIES

BUNDLED_DATA_DIR = Path(__file__).resolve().parent / "data" / "mnist"


class SettingsError(UsageError):
    """A flag or env var has a bad value."""


@dataclass(frozen=True)
class Settings:
    data_dir: Path
    output_dir: Path
    epochs: int
    batch_size: int  # global: examples per training step summed over all replicas
    learning_rate: float
    strategy: str
    checkpoint_steps: int
    keep_checkpoints: int
    log_steps: int
    steps_per_execution: int
    max_steps: int  # 0 = no cap
    train_examples: int  # 0 = the whole training set
    seed: int
    gpus: int  # GPUs the replica was given (the pod's nvidia.com/gpu): checked at start
    stall_seconds: int  # no step finished for this long: say so (trainer/watchdog.py)
    # Fine-tuning: the checkpoint a new run takes its weights from (trainer/warm_start.py).
    init_checkpoint: Path | None = None


@dataclass(frozen=True)
class _Option:
    default: str
    parse: Callable[[str], object]
    allowed: str  # shown in errors, e.g. "an integer >= 1"
    help: str


def _integer(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text)
        if value < minimum:
            raise ValueError
        return value

    return parse


def _positive_float(text: str) -> float:
    value = float(text)
    if not 0 < value < float("inf"):
        raise ValueError
    return value


def _strategy(text: str) -> str:
    if text not in STRATEGIES:
        raise ValueError
    return text


def _path(text: str) -> Path:
    if not text:
        raise ValueError
    return Path(text)


def _optional_path(text: str) -> Path | None:
    return Path(text) if text else None


_OPTIONS: dict[str, _Option] = {
    "data_dir": _Option(
        str(BUNDLED_DATA_DIR), _path, "a directory path",
        "directory with the four MNIST IDX .gz files and SHA256SUMS",
    ),
    "output_dir": _Option(
        "/output", _path, "a directory path",
        "checkpoints/, train/ and eval/ summaries, and saved_model/",
    ),
    "epochs": _Option("4", _integer(1), "an integer >= 1", "passes over the training set"),
    "batch_size": _Option(
        "128", _integer(1), "an integer >= 1", "global batch: examples per training step"
    ),
    "learning_rate": _Option(
        "0.003", _positive_float, "a number > 0", "peak Adam learning rate (cosine decay)"
    ),
    "strategy": _Option(
        "auto", _strategy, f"one of {', '.join(STRATEGIES)}",
        "auto: parameter_server if TF_CONFIG has ps, multi_worker_mirrored if it has only "
        "workers/chief, single without TF_CONFIG",
    ),
    "checkpoint_steps": _Option(
        "500", _integer(1), "an integer >= 1", "save a checkpoint every N global steps"
    ),
    "keep_checkpoints": _Option(
        "3", _integer(2), "an integer >= 2",
        "checkpoints kept; at least 2, so a damaged newest one always has a predecessor",
    ),
    "log_steps": _Option("100", _integer(1), "an integer >= 1", "progress line every N steps"),
    "steps_per_execution": _Option(
        "50", _integer(1), "an integer >= 1",
        "training steps fused into one function call (one scheduled closure under ps)",
    ),
    "max_steps": _Option(
        "0", _integer(0), "an integer >= 0", "stop at this global step (0 = no cap)"
    ),
    "train_examples": _Option(
        "0", _integer(0), "an integer >= 0", "train on the first N examples (0 = all 60000)"
    ),
    "seed": _Option("1", _integer(0), "an integer >= 0", "seed for weights and data order"),
    "gpus": _Option(
        "0", _integer(0), "an integer >= 0",
        "GPUs this process was given: with fewer usable, it stops at once (exit 2) instead of "
        "training on the CPU",
    ),
    "stall_seconds": _Option(
        "300", _integer(1), "an integer >= 1",
        "a training process with no step finished for this many seconds says so on stderr "
        "(which replica, since when, whom it waits on), again every such period",
    ),
    "init_checkpoint": _Option(
        "", _optional_path, "a path or empty",
        "fine-tuning: a new run starts from this checkpoint's weights (a checkpoints "
        "directory or a ckpt-<step> prefix); ignored once the run has its own checkpoints",
    ),
}  # fmt: skip


def flag_name(field: str) -> str:
    return "--" + field.replace("_", "-")


def env_name(field: str) -> str:
    return "TFTRAIN_" + field.upper()


def parse_settings(argv: Sequence[str], environ: Mapping[str, str]) -> Settings:
    """Build the settings from command-line arguments (without the program name) and env."""
    parser = argparse.ArgumentParser(
        prog="python -m trainer",
        description="Train an MNIST CNN alone, or as one task of a TF_CONFIG cluster.",
        epilog="Every flag can also be set by its TFTRAIN_* env var; the flag wins.",
    )
    for name, option in _OPTIONS.items():
        parser.add_argument(
            flag_name(name),
            dest=name,
            metavar=env_name(name),
            help=f"{option.help} [default: {option.default}]",
        )
    flags = vars(parser.parse_args(list(argv)))
    values = {}
    for field in fields(Settings):
        option = _OPTIONS[field.name]
        text = flags[field.name]
        if text is None:
            text = environ.get(env_name(field.name), option.default)
        try:
            values[field.name] = option.parse(text.strip())
        except ValueError:
            raise SettingsError(
                f"{flag_name(field.name)} / {env_name(field.name)} must be {option.allowed}, "
                f"got {text!r}"
            ) from None
    return Settings(**values)
