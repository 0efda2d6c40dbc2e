"""The output directory: what is written where, checkpoints, and the SavedModel export.

    <output>/
      checkpoints/    tf.train.CheckpointManager: model, optimizer, global step; the
                      latest few are kept, numbered by global step; a restart resumes here
      train/          TensorBoard events: loss, accuracy, examples_per_sec per log interval
      eval/           TensorBoard events: test_accuracy (the chief at the end, the
                      evaluator for each checkpoint)
      saved_model/    the trained model: `tf.saved_model.load(path).serve(images)` maps
                      uint8 images (n, 28, 28, 1) to logits (n, 10)
      .tftrain-succeeded  written by the replica supervisor (infra/lifecycle) when the
                      chief has succeeded: the other replicas then stop

One process writes all of it: the chief under ParameterServerStrategy (it also does the
checkpoint I/O for the ps, which therefore needs no write access), the chief or else
worker 0 under MultiWorkerMirroredStrategy, or the single process.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import keras
import tensorflow as tf

from trainer.plan import Plan

CHECKPOINTS_TO_KEEP = 3
CHIEF_CPU = "/job:chief/replica:0/task:0/device:CPU:0"


@dataclass(frozen=True)
class OutputPaths:
    root: Path

    @property
    def checkpoints(self) -> Path:
        return self.root / "checkpoints"

    @property
    def train(self) -> Path:
        return self.root / "train"

    @property
    def eval(self) -> Path:
        return self.root / "eval"

    @property
    def saved_model(self) -> Path:
        return self.root / "saved_model"


class Checkpoints:
    """Model, optimizer and global step, saved under `checkpoints/` and restored on start."""

    def __init__(
        self,
        model: keras.Model,
        optimizer: keras.optimizers.Optimizer,
        plan: Plan,
        paths: OutputPaths,
    ) -> None:
        self._step = tf.Variable(0, dtype=tf.int64, trainable=False)
        self._checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, step=self._step)
        self._options = tf.train.CheckpointOptions(
            experimental_io_device=CHIEF_CPU if plan.strategy == "parameter_server" else None
        )
        self._shared = paths.checkpoints
        # Under MWMS every worker must save (saving is collective); all but the writer
        # save into a throw-away directory.
        self._directory = paths.checkpoints if plan.is_writer else Path(tempfile.mkdtemp())
        self._manager = tf.train.CheckpointManager(
            self._checkpoint, str(self._directory), CHECKPOINTS_TO_KEEP
        )

    def restore_latest(self) -> int:
        """Restore the latest checkpoint if there is one; return the global step to go on from."""
        latest = tf.train.latest_checkpoint(str(self._shared))
        if latest is None:
            return 0
        self._checkpoint.restore(latest, options=self._options).assert_existing_objects_matched()
        step = int(self._step)
        print(f"Resumed from checkpoint {latest} at step {step}")
        return step

    def save(self, step: int) -> None:
        self._step.assign(step)
        # Numbered by global step, which `latest_saved_step` relies on.
        self._manager.save(checkpoint_number=step, options=self._options)

    def discard_private_copies(self) -> None:
        if self._directory != self._shared:
            shutil.rmtree(self._directory, ignore_errors=True)


def latest_saved_step(paths: OutputPaths) -> int | None:
    latest = tf.train.latest_checkpoint(str(paths.checkpoints))
    return int(latest.rsplit("-", 1)[1]) if latest else None


def restore_model(model: keras.Model, path: str) -> int:
    """Restore only the model from a checkpoint (what the evaluator needs); return its step."""
    step = tf.Variable(0, dtype=tf.int64, trainable=False)
    tf.train.Checkpoint(model=model, step=step).restore(path).expect_partial()
    return int(step)


def export_saved_model(model: keras.Model, path: Path) -> None:
    """Export `model` so that a half-written export never replaces a good one."""
    partial = path.with_name(path.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    model.export(str(partial), format="tf_saved_model", verbose=False)
    shutil.rmtree(path, ignore_errors=True)
    partial.rename(path)
