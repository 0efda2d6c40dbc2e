"""A ParameterServerStrategy ps or worker: a TensorFlow server that serves until stopped.

The ps keeps the variables, a worker runs whatever closures the chief sends; neither can
tell from TensorFlow that training is over, so, like any TFJob trainer's, they `join()`
forever. The run's end is not theirs to detect: the replica supervisor around every
replica's command (`infra/lifecycle/supervise.sh`) stops them once the chief has succeeded,
and exits 0 at once if the run has already ended when they (re)start.
"""

from __future__ import annotations

import tensorflow as tf

from trainer.distribution import cluster_resolver
from trainer.tf_config import ClusterConfig


def serve(config: ClusterConfig) -> int:
    task = config.task
    resolver = cluster_resolver(config)
    server = tf.distribute.Server(
        resolver.cluster_spec(),
        job_name=task.type,
        task_index=task.index,
        protocol="grpc",
        start=True,
    )
    print(f"{task.type}:{task.index} serving at {server.target} until the run ends")
    server.join()
    return 0  # join() only returns if the server is stopped from inside the process
