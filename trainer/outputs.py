"""The output directory: what is written where, checkpoints, and the SavedModel export.

    <output>/
      checkpoints/    model, optimizer and global step, numbered by global step, each
                      with a SHA-256 manifest; the newest `--keep-checkpoints` are kept;
                      a restart resumes from the newest intact one (`checkpoint_store`)
      train/          TensorBoard events: loss, accuracy, examples_per_sec per log interval
      eval/           TensorBoard events: test_accuracy (the chief at the end, the
                      evaluator for each checkpoint)
      saved_model/    the trained model: `tf.saved_model.load(path).serve(images)` maps
                      uint8 images (n, 28, 28, 1) to logits (n, 10)
      metrics.txt     the final metrics (test_accuracy, global_step), `<name> <number>`
      .tftrain-run/   the run's outcome, kept by the replica supervisor (infra/lifecycle):
                      once the chief has succeeded the other replicas stop

One process writes all of it: the chief under ParameterServerStrategy (it also does the
checkpoint I/O for the ps, which therefore needs no write access), the chief or else
worker 0 under MultiWorkerMirroredStrategy, or the single process.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import keras
import tensorflow as tf

from trainer.checkpoint_store import CheckpointStore, Damaged, latest_saved_step
from trainer.output_dir import OutputPaths
from trainer.plan import Plan
from trainer.warm_start import restore_init_checkpoint

CHIEF_CPU = "/job:chief/replica:0/task:0/device:CPU:0"
# Errors that say nothing about the checkpoint: the ps (which holds the variables a restore
# assigns to) is unreachable or the process is stopping. They end the run as they are.
_TRANSIENT = (
    tf.errors.UnavailableError,
    tf.errors.DeadlineExceededError,
    tf.errors.AbortedError,
    tf.errors.CancelledError,
    tf.errors.ResourceExhaustedError,
)


class Checkpoints:
    """Model, optimizer and global step, saved under `checkpoints/` and restored on start
    (`checkpoint_store` decides which files count)."""

    def __init__(
        self,
        model: keras.Model,
        optimizer: keras.optimizers.Optimizer,
        plan: Plan,
        paths: OutputPaths,
        keep: int,
    ) -> None:
        self._model = model
        self._step = tf.Variable(0, dtype=tf.int64, trainable=False)
        self._checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, step=self._step)
        self._options = tf.train.CheckpointOptions(
            experimental_io_device=CHIEF_CPU if plan.strategy == "parameter_server" else None
        )
        self._store = CheckpointStore(paths.checkpoints)
        self._keep = keep
        self._is_writer = plan.is_writer
        # Under MWMS every worker must save (saving is collective); all but the writer
        # save into a throw-away directory.
        self._private = None if plan.is_writer else Path(tempfile.mkdtemp())
        self._saved_step: int | None = None  # the step whose state is on disk

    def restore_latest(self) -> int:
        """Restore the newest intact checkpoint if there is one; return the global step to
        go on from. Raises `NoUsableCheckpoint` if there are checkpoints but none restores."""
        if self._store.resume(self._restore, may_change=self._is_writer) is None:
            return 0
        self._saved_step = step = int(self._step)
        print(f"Resumed from checkpoint {self._store.prefix(step)} at step {step}")
        return step

    def warm_start(self, path: Path) -> None:
        """Fine-tuning: the model's weights from `path` (trainer/warm_start.py); the step
        and the optimizer stay as they are, at 0 and fresh."""
        model_only = tf.train.Checkpoint(model=self._model)

        def restore(prefix: Path) -> None:
            with restore_errors():
                status = model_only.read(str(prefix), options=self._options)
                status.assert_existing_objects_matched().expect_partial()

        prefix = restore_init_checkpoint(path, restore)
        print(f"Warm-started the model from {prefix} (fine-tuning: step 0, a fresh optimizer)")

    def _restore(self, prefix: Path) -> None:
        with restore_errors():
            # Complete: every value in the checkpoint and every variable here is matched,
            # so a checkpoint that restored only partly never counts as restored.
            self._checkpoint.read(str(prefix), options=self._options).assert_consumed()

    def save(self, step: int) -> None:
        if step == self._saved_step:
            return  # this state is on disk already: never write over a checkpoint
        self._step.assign(step)
        if self._private is not None:
            self._checkpoint.write(str(self._private / "ckpt"), options=self._options)
        else:
            self._store.make_room(step)
            self._checkpoint.write(str(self._store.prefix(step)), options=self._options)
            self._store.publish(step, self._keep)
        self._saved_step = step

    def discard_private_copies(self) -> None:
        if self._private is not None:
            shutil.rmtree(self._private, ignore_errors=True)


@contextlib.contextmanager
def restore_errors() -> Iterator[None]:
    """Turn TensorFlow's ways of failing on a damaged checkpoint into `Damaged`. Some are
    not TensorFlow errors at all: a truncated data file ended in an IndexError."""
    try:
        yield
    except _TRANSIENT:
        raise
    except (tf.errors.OpError, AssertionError, ValueError, IndexError) as error:
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise Damaged(f"TensorFlow cannot restore it completely: {first_line}") from None


def latest_checkpoint(paths: OutputPaths) -> str | None:
    """The newest published checkpoint's path, as TensorFlow's restore takes it."""
    step = latest_saved_step(paths)
    return None if step is None else str(CheckpointStore(paths.checkpoints).prefix(step))


def restore_model(model: keras.Model, path: str) -> int:
    """Restore only the model from a checkpoint (what the evaluator needs); return its step.
    Raises `Damaged` unless every weight was restored."""
    step = tf.Variable(0, dtype=tf.int64, trainable=False)
    with restore_errors():
        status = tf.train.Checkpoint(model=model, step=step).read(path)
        status.assert_existing_objects_matched().expect_partial()  # the optimizer stays unread
    return int(step)


def resume_model(model: keras.Model, paths: OutputPaths, may_change: bool) -> int | None:
    """`model` from the newest intact checkpoint, as `Checkpoints.restore_latest` picks it;
    its step, or None if there is none."""
    store = CheckpointStore(paths.checkpoints)
    return store.resume(lambda prefix: restore_model(model, str(prefix)), may_change)


def write_metrics(path: Path, metrics: dict[str, float | int]) -> None:
    """The run's final metrics, `<name> <number>` per line: infra/lifecycle/export.sh puts
    them in the exported run's manifest (any trainer may write this file)."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text("".join(f"{name} {value}\n" for name, value in metrics.items()))
    partial.replace(path)


def export_saved_model(model: keras.Model, path: Path) -> None:
    """Export `model` so that a half-written export never replaces a good one."""
    partial = path.with_name(path.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    model.export(str(partial), format="tf_saved_model", verbose=False)
    shutil.rmtree(path, ignore_errors=True)
    partial.rename(path)
