"""The cluster resolver a ps, worker or strategy is built from (trainer.cluster), read back
through TensorFlow's own ClusterResolver API: the addresses as TF_CONFIG gave them (`master`
renamed `chief`, no evaluator), this task, and gRPC, which every TFJob replica serves."""

from __future__ import annotations

from trainer.cluster import cluster_resolver
from trainer.tf_config import parse_tf_config

TF_CONFIG = """{
  "cluster": {"master": ["run-master-0:2222"], "ps": ["run-ps-0:2222"],
              "worker": ["run-worker-0:2222", "run-worker-1:2222"],
              "evaluator": ["run-evaluator-0:2222"]},
  "task": {"type": "worker", "index": 1}
}"""


def test_the_resolver_holds_the_cluster_and_this_task_over_grpc() -> None:
    config = parse_tf_config(TF_CONFIG)
    assert config is not None
    resolver = cluster_resolver(config)
    assert resolver.cluster_spec().as_dict() == {
        "chief": ["run-master-0:2222"],
        "ps": ["run-ps-0:2222"],
        "worker": ["run-worker-0:2222", "run-worker-1:2222"],
    }
    assert (resolver.task_type, resolver.task_id, resolver.rpc_layer) == ("worker", 1, "grpc")
    # A task's master() is its address with the RPC layer's scheme (ClusterResolver docs).
    assert resolver.master("worker", 1) == "grpc://run-worker-1:2222"
    assert resolver.master("chief", 0) == "grpc://run-master-0:2222"
