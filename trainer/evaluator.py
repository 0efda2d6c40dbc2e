"""The evaluator: test-set accuracy of every new checkpoint, into `eval/`, until done.

It is not a cluster member; it only reads the shared output dir, so it may start, stop
and restart at any time without disturbing training. Started after the run is complete
(see `done_marker`), it evaluates the final checkpoint and exits.
"""

from __future__ import annotations

import time

import tensorflow as tf

from trainer.checkpoint_store import Damaged
from trainer.data import Mnist
from trainer.done_marker import DoneWatcher
from trainer.model import build_model, test_accuracy
from trainer.outputs import OutputPaths, latest_checkpoint, latest_saved_step, restore_model
from trainer.settings import Settings
from trainer.steps import StepPlan

POLL_SECONDS = 2.0


def run(settings: Settings, data: Mnist, watcher: DoneWatcher) -> int:
    paths = OutputPaths(settings.output_dir)
    model = build_model()
    writer = tf.summary.create_file_writer(str(paths.eval))
    evaluated = None
    final_step = StepPlan.from_settings(settings, len(data.train_labels)).final_step
    complete = watcher.finished_before_start(final_step, latest_saved_step(paths))
    while True:
        # Look at the marker first: a checkpoint found after seeing it is the final one.
        done = complete or watcher.is_done()
        latest = latest_checkpoint(paths)
        if latest and latest != evaluated:
            try:
                step = restore_model(model, latest)
            except Damaged as error:
                # Deleted by retention meanwhile, or damaged; the next poll sees a newer one.
                print(f"Skipping checkpoint {latest}: {error}")
            else:
                accuracy = test_accuracy(model, data.test_images, data.test_labels)
                print(f"Checkpoint {latest}: step {step}, Test-Accuracy: {accuracy:.4f}")
                with writer.as_default(step=step):
                    tf.summary.scalar("test_accuracy", accuracy)
                writer.flush()
            evaluated = latest
        if done:
            writer.close()
            return 0
        time.sleep(POLL_SECONDS)
