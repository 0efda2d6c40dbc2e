"""A ParameterServerStrategy ps or worker: serve the chief until it writes the done marker.

Both just host a TensorFlow server: the ps keeps the variables, a worker runs whatever
closures the chief sends. `server.join()` would never return, so the process polls the done
marker instead and exits 0, letting its Kubernetes Job complete.
"""

from __future__ import annotations

from pathlib import Path

import tensorflow as tf

from trainer.distribution import cluster_resolver
from trainer.done_marker import MARKER_NAME, DoneWatcher
from trainer.tf_config import ClusterConfig


def serve(config: ClusterConfig, output_dir: Path, watcher: DoneWatcher) -> int:
    """`watcher` is created before TensorFlow is imported, so that anything the chief
    writes from then on counts as "done"."""
    task = config.task
    resolver = cluster_resolver(config)
    server = tf.distribute.Server(
        resolver.cluster_spec(),
        job_name=task.type,
        task_index=task.index,
        protocol="grpc",
        start=True,
    )
    print(
        f"{task.type}:{task.index} serving at {server.target}; "
        f"exits when the chief writes {output_dir / MARKER_NAME}"
    )
    watcher.wait()
    print(f"{task.type}:{task.index} done: the chief has finished")
    return 0
