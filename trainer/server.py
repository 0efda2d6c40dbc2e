"""A ParameterServerStrategy ps or worker: serve the chief until it writes the done marker.

Both just host a TensorFlow server: the ps keeps the variables, a worker runs whatever
closures the chief sends. `server.join()` would never return, so the process polls the done
marker instead and exits 0, letting its Kubernetes Job complete. A server (re)started after
the run is complete exits 0 at once (see `done_marker`).
"""

from __future__ import annotations

import tensorflow as tf

from trainer.data import DataError, count_train_examples
from trainer.distribution import cluster_resolver
from trainer.done_marker import MARKER_NAME, DoneWatcher
from trainer.outputs import OutputPaths, latest_saved_step
from trainer.preemption import exit_at_once, serve_until_saved
from trainer.settings import Settings
from trainer.steps import StepPlan
from trainer.tf_config import ClusterConfig


def serve(config: ClusterConfig, settings: Settings, watcher: DoneWatcher) -> int:
    """`watcher` is created before TensorFlow is imported, so that anything the chief
    writes from then on counts as "done"."""
    task = config.task
    marker = settings.output_dir / MARKER_NAME
    final_step = _completed_step(settings, watcher)
    if final_step is not None:
        print(f"{task.type}:{task.index}: the run is complete ({marker} records step {final_step})")
        return 0
    name = f"{task.type}:{task.index}"
    if task.type == "ps":
        serve_until_saved(settings.output_dir, name)
    else:
        exit_at_once(name)
    resolver = cluster_resolver(config)
    server = tf.distribute.Server(
        resolver.cluster_spec(),
        job_name=task.type,
        task_index=task.index,
        protocol="grpc",
        start=True,
    )
    print(
        f"{task.type}:{task.index} serving at {server.target}; exits when the chief writes {marker}"
    )
    watcher.wait()
    print(f"{task.type}:{task.index} done: the chief has finished")
    return 0


def _completed_step(settings: Settings, watcher: DoneWatcher) -> int | None:
    """The final step if the run was complete when this server started, else None."""
    if not watcher.found_at_start:
        return None  # the usual start: no marker, nothing to work out
    try:
        examples = count_train_examples(settings.data_dir, settings.train_examples)
    except DataError as error:
        # Cannot tell how long the run is: serve and wait for a new marker, as before.
        print(f"Not checking whether the run is complete: {error}")
        return None
    final_step = StepPlan.from_settings(settings, examples).final_step
    saved_step = latest_saved_step(OutputPaths(settings.output_dir))
    return final_step if watcher.finished_before_start(final_step, saved_step) else None
