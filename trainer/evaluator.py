"""The evaluator: test-set accuracy of every new checkpoint, into `eval/`, up to the last.

It is not a cluster member; it only reads the shared output dir, so it may start, stop
and restart at any time without disturbing training. It knows the run's final step, so it
exits 0 by itself once it has evaluated that checkpoint.

It learns nothing else about the run's end. When the chief succeeds, the replica supervisor
(`infra/lifecycle`) lets the evaluator finish by itself for `job.evaluatorFinishSeconds`,
then sends SIGTERM with a longer stop grace than ps and workers get; the final checkpoint
was saved before the chief's evaluation and export, so it is there: on SIGTERM the
evaluator evaluates the latest checkpoint if it has not yet,
then exits 0 if that was the final step, else 143 (interrupted, e.g. preempted, which the
Job retries). A restart after the run has ended never gets here: its supervisor exits 0.
"""

from __future__ import annotations

import signal
import threading

import keras
import tensorflow as tf

from trainer.checkpoint_store import Damaged
from trainer.data import Mnist
from trainer.model import build_model, test_accuracy
from trainer.output_dir import OutputPaths
from trainer.outputs import latest_checkpoint, restore_model
from trainer.settings import Settings
from trainer.steps import StepPlan

POLL_SECONDS = 2.0
EXIT_INTERRUPTED = 128 + signal.SIGTERM


def run(settings: Settings, data: Mnist) -> int:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())
    paths = OutputPaths(settings.output_dir)
    model = build_model()
    final_step = StepPlan.from_settings(settings, len(data.train_labels)).final_step
    writer = tf.summary.create_file_writer(str(paths.eval))
    evaluated: str | None = None
    try:
        while True:
            # Read before looking: a checkpoint found after SIGTERM is the last one to score.
            stopping = stop.is_set()
            latest = latest_checkpoint(paths)
            if latest and latest != evaluated:
                with writer.as_default():
                    scored = _evaluate(model, latest, data)
                writer.flush()
                evaluated = latest
                if scored == final_step:
                    return 0
            if stopping:
                print(f"Stopped before the final step {final_step} was evaluated")
                return EXIT_INTERRUPTED
            stop.wait(POLL_SECONDS)
    finally:
        writer.close()


def _evaluate(model: keras.Model, checkpoint: str, data: Mnist) -> int | None:
    """Score `checkpoint` and write the summary; the step evaluated (None if it failed)."""
    try:
        restored = restore_model(model, checkpoint)
    except Damaged as error:
        # Deleted by retention meanwhile, or damaged; the next poll sees a newer one.
        print(f"Skipping checkpoint {checkpoint}: {error}")
        return None
    accuracy = test_accuracy(model, data.test_images, data.test_labels)
    print(f"Checkpoint {checkpoint}: step {restored}, Test-Accuracy: {accuracy:.4f}")
    tf.summary.scalar("test_accuracy", accuracy, step=restored)
    return restored
