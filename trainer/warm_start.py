"""Fine-tuning: a new run's model weights from another run's checkpoint (`--init-checkpoint`).

What counts as the init checkpoint:
- a directory of checkpoints (another run's `checkpoints/`, which is what `run:<runId>`
  resolves to): its newest published checkpoint that verifies against its SHA-256 manifest
  and restores, as a resumed run picks its own (`checkpoint_store`), without changing it;
- a checkpoint prefix (`.../ckpt-2000`, what TensorFlow's write and read take): verified
  against `<prefix>.sha256` when it has one (a checkpoint of this trainer), restored as it is
  otherwise (one written by another program).

Only the model's weights are read: the step starts at 0 and the optimizer (Adam's moments,
the learning-rate schedule) starts fresh, so the new run's epochs and learning rate mean
what they say, as in Keras' usual fine-tuning. A run that has checkpoints of its own resumes
from those and never reads the init checkpoint again.

Pure Python: the launcher and `python -m trainer` check the path before TensorFlow is
imported, so a typo costs a second and one line (exit 2).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from trainer.checkpoint_store import CheckpointStore, Damaged
from trainer.errors import NoUsableCheckpoint, UsageError
from trainer.output_dir import OutputPaths
from trainer.settings import Settings

SETTING = "--init-checkpoint / TFTRAIN_INIT_CHECKPOINT"
_PREFIX = re.compile(r"ckpt-(\d+)")


class InitCheckpointError(UsageError):
    """The init checkpoint is missing, empty or damaged; the message names it and why."""


def starts_from(settings: Settings) -> Path | None:
    """The init checkpoint, unless there is none or the run has checkpoints of its own."""
    if settings.init_checkpoint is None:
        return None
    if CheckpointStore(OutputPaths(settings.output_dir).checkpoints).published_steps():
        return None
    return settings.init_checkpoint


def check_init_checkpoint(path: Path) -> None:
    """Raise `InitCheckpointError` unless `path` looks like a checkpoint to start from."""
    if path.is_dir():
        if not CheckpointStore(path).published_steps():
            raise InitCheckpointError(
                f"{SETTING} {path} holds no published checkpoint (ckpt-<step>.sha256): "
                "name a run's checkpoints directory or one checkpoint's prefix"
            )
        return
    if not path.with_name(path.name + ".index").is_file():
        raise InitCheckpointError(
            f"{SETTING} {path} does not exist: name a directory of checkpoints, or a "
            "checkpoint prefix such as .../checkpoints/ckpt-2000 (with its .index file)"
        )


def restore_init_checkpoint(path: Path, restore: Callable[[Path], None]) -> Path:
    """Verify and restore the init checkpoint with `restore` (which raises `Damaged` unless
    it restored every weight); return the prefix it restored."""
    check_init_checkpoint(path)
    if path.is_dir():
        store = CheckpointStore(path)
        try:
            step = store.resume(restore, may_change=False)
        except NoUsableCheckpoint as error:
            raise InitCheckpointError(f"{SETTING}: {error}") from None
        if step is None:
            raise InitCheckpointError(f"{SETTING} {path}: no checkpoint there restores")
        return store.prefix(step)
    try:
        match = _PREFIX.fullmatch(path.name)
        store = CheckpointStore(path.parent)
        if match and store.manifest(int(match.group(1))).exists():
            store.verify(int(match.group(1)))
        restore(path)
    except Damaged as damaged:
        raise InitCheckpointError(f"{SETTING} {path} cannot be used: {damaged}") from None
    return path
