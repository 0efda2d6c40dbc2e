"""TF_CONFIG generation against the Kubeflow TFJob contract (table tests)."""

from __future__ import annotations

import json

import pytest

from infra.config import parse_config
from infra.topology import build_topology, hang_warnings

IMAGE = {"image": "registry.example.com/tftrain/trainer:1"}
THEIRS = {"command": ["python", "/app/dist_mnist.py"]}


def svc(job: str, kind: str, index: int, namespace: str = "tftrain") -> str:
    return f"{job}-{kind}-{index}.{namespace}.svc:2222"


CASES = [
    pytest.param(
        {"chief": {"number": 1}, "worker": {"number": 2}, "ps": {"number": 1}},
        {
            "chief": [svc("mnist", "chief", 0)],
            "worker": [svc("mnist", "worker", 0), svc("mnist", "worker", 1)],
            "ps": [svc("mnist", "ps", 0)],
        },
        id="parameter-server",
    ),
    pytest.param(
        {"chief": {"number": 0}, "worker": {"number": 4}, "ps": {"number": 0}},
        {"worker": [svc("mnist", "worker", i) for i in range(4)]},
        id="workers-only",
    ),
    pytest.param(
        {
            "chief": {"number": 1},
            "worker": {"number": 1},
            "ps": {"number": 2},
            "evaluator": {"number": 1},
        },
        {
            "chief": [svc("mnist", "chief", 0)],
            "worker": [svc("mnist", "worker", 0)],
            "ps": [svc("mnist", "ps", 0), svc("mnist", "ps", 1)],
        },
        id="evaluator-outside-the-cluster",
    ),
    pytest.param(
        # A trainer of the training-operator's era (the bundled one refuses this with ps).
        {"job": {"evaluatorInCluster": True, **THEIRS}, "evaluator": {"number": 1}},
        {
            "chief": [svc("mnist", "chief", 0)],
            "worker": [svc("mnist", "worker", 0), svc("mnist", "worker", 1)],
            "ps": [svc("mnist", "ps", 0)],
            "evaluator": [svc("mnist", "evaluator", 0)],
        },
        id="evaluator-in-the-cluster-kubeflow-shape",
    ),
    pytest.param(
        # TFJob's Master replica type: `master` in TF_CONFIG, in the chief's place.
        {"job": THEIRS, "chief": {"number": 0}, "master": {"number": 1}},
        {
            "master": [svc("mnist", "master", 0)],
            "worker": [svc("mnist", "worker", 0), svc("mnist", "worker", 1)],
            "ps": [svc("mnist", "ps", 0)],
        },
        id="master-kubeflow-shape",
    ),
    pytest.param(
        # Kubeflow's dist-mnist: ps and workers, worker 0 is the chief.
        {"job": THEIRS, "chief": {"number": 0}},
        {
            "worker": [svc("mnist", "worker", 0), svc("mnist", "worker", 1)],
            "ps": [svc("mnist", "ps", 0)],
        },
        id="ps-and-workers-without-chief",
    ),
]


@pytest.mark.parametrize(("groups", "expected_cluster"), CASES)
def test_cluster_spec_and_every_tf_config(groups: dict, expected_cluster: dict) -> None:
    topology = build_topology(parse_config({**IMAGE, **groups}))
    assert topology.cluster_spec == expected_cluster
    for replica in topology.replicas:
        tf_config = json.loads(topology.tf_config_json(replica))
        assert tf_config == {
            "cluster": expected_cluster,
            "task": {"type": replica.type, "index": replica.index},
            "environment": "cloud",
        }
        assert replica.name == f"mnist-{replica.type}-{replica.index}"


def test_replicas_are_listed_in_tfjob_order() -> None:
    config = parse_config({**IMAGE, "evaluator": {"number": 1}, "worker": {"number": 2}})
    order = [replica.name for replica in build_topology(config).replicas]
    assert order == [
        "mnist-chief-0",
        "mnist-worker-0",
        "mnist-worker-1",
        "mnist-ps-0",
        "mnist-evaluator-0",
    ]


def test_namespace_and_job_name_shape_the_addresses() -> None:
    config = parse_config({**IMAGE, "job": {"name": "cnn", "namespace": "team-a"}})
    assert build_topology(config).cluster_spec["ps"] == [svc("cnn", "ps", 0, "team-a")]


def test_local_addresses_replace_service_names_but_keep_tasks() -> None:
    topology = build_topology(parse_config(IMAGE))
    ports = {replica.name: ("localhost", 20000 + i) for i, replica in enumerate(topology.replicas)}
    local = topology.with_addresses(ports)
    assert local.cluster_spec == {
        "chief": ["localhost:20000"],
        "worker": ["localhost:20001", "localhost:20002"],
        "ps": ["localhost:20003"],
    }
    assert [(r.type, r.index) for r in local.replicas] == [
        (r.type, r.index) for r in topology.replicas
    ]


def test_local_addresses_must_cover_every_replica() -> None:
    topology = build_topology(parse_config(IMAGE))
    with pytest.raises(ValueError, match="mnist-ps-0"):
        topology.with_addresses({"mnist-chief-0": ("localhost", 1)})


def test_tf_config_json_is_byte_stable() -> None:
    topology = build_topology(parse_config(IMAGE))
    first = [topology.tf_config_json(r) for r in topology.replicas]
    again = build_topology(parse_config(IMAGE))
    assert first == [again.tf_config_json(r) for r in again.replicas]


def test_tf_config_json_is_compact_with_sorted_keys() -> None:
    """Written by hand: the manifests carry this text, so a changed byte is a changed Job."""
    config = parse_config({**IMAGE, "worker": {"number": 1}})
    topology = build_topology(config)
    worker = next(r for r in topology.replicas if r.type == "worker")
    assert topology.tf_config_json(worker) == (
        '{"cluster":{"chief":["mnist-chief-0.tftrain.svc:2222"],'
        '"ps":["mnist-ps-0.tftrain.svc:2222"],"worker":["mnist-worker-0.tftrain.svc:2222"]},'
        '"environment":"cloud","task":{"index":0,"type":"worker"}}'
    )


def test_local_addresses_name_every_replica_left_without_one() -> None:
    topology = build_topology(parse_config(IMAGE))
    with pytest.raises(ValueError) as error:
        topology.with_addresses({"mnist-chief-0": ("localhost", 1)})
    assert str(error.value) == (
        "no address given for replicas: mnist-ps-0, mnist-worker-0, mnist-worker-1"
    )


def test_local_addresses_keep_the_evaluator_in_the_cluster() -> None:
    raw = {**IMAGE, "job": {"evaluatorInCluster": True, **THEIRS}, "evaluator": {"number": 1}}
    topology = build_topology(parse_config(raw))
    ports = {r.name: ("127.0.0.1", 21000 + i) for i, r in enumerate(topology.replicas)}
    local = topology.with_addresses(ports)
    assert local.cluster_spec["evaluator"] == ["127.0.0.1:21004"]
    assert local.job == "mnist"


HANG = (
    "warning: tftrain:job.evaluatorInCluster is true with ps and an evaluator: a TF2 "
    "ParameterServerStrategy trainer that builds its cluster from TF_CONFIG as is waits "
    "forever for the evaluator, which serves nothing. Set it false, unless your trainer is "
    "TF1-style or removes the evaluator from the cluster itself"
)


@pytest.mark.parametrize(
    ("raw", "warnings"),
    [
        ({"job": {"evaluatorInCluster": True, **THEIRS}, "evaluator": {"number": 1}}, [HANG]),
        ({"job": {"evaluatorInCluster": True, **THEIRS}, "evaluator": {"number": 0}}, []),
        ({"job": {"evaluatorInCluster": True, **THEIRS}, "evaluator": {"number": 1},
          "ps": {"number": 0}}, []),
        ({"job": {"evaluatorInCluster": False, **THEIRS}, "evaluator": {"number": 1}}, []),
        ({"evaluator": {"number": 1}}, []),  # outside by default
    ],
    ids=["their-trainer-ps-evaluator-in-cluster", "no-evaluator", "no-ps", "outside",
         "default"],
)  # fmt: skip
def test_which_stacks_would_hang_on_the_evaluator(raw: dict, warnings: list[str]) -> None:
    assert hang_warnings(parse_config({**IMAGE, **raw})) == warnings
