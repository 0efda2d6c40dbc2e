"""The TF_CONFIG cluster as TensorFlow's resolver, which both distributed strategies take.
(A ps or worker server does not use it: it starts without TensorFlow's Python API,
`trainer.grpc_server`, from the same parsed cluster.)"""

from __future__ import annotations

import tensorflow as tf

from trainer.tf_config import ClusterConfig


def cluster_resolver(config: ClusterConfig) -> tf.distribute.cluster_resolver.ClusterResolver:
    """A resolver built from the parsed config, so `master` is already `chief`."""
    return tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec({kind: list(tasks) for kind, tasks in config.cluster.items()}),
        task_type=config.task.type,
        task_id=config.task.index,
        rpc_layer="grpc",
    )
