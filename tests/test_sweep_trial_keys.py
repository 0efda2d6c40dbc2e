"""Sweeping the keys the messages name besides hyperparams: `<group>.gpuCount` and `job.args`
("trials vary hyperparams.*, job.env.*, job.args and <group>.number, gpuCount, args, env.*"),
down to what each trial's pods get and how the GPU pool is sized for them. Expected values are
worked by hand: a gn6i-c24g1.12xlarge node has 48 vCPUs and 2 GPUs (Alibaba's gn6i table);
the pool holds `parallel` trials of one node per GPU replica (docs/config.md "Sweeps")."""

from __future__ import annotations

from typing import Any

import pytest

from infra.config import ConfigError, StackConfig, parse_config
from infra.config.sweep_platform import platform_problems
from infra.manifests import build_objects
from infra.manifests.common import RUN_ID_LABEL
from infra.platform.cluster_facts import cluster_facts

IMAGE = "registry.example.com/tftrain/trainer:1"
TWO_GPU_NODE = "ecs.gn6i-c24g1.12xlarge"


def ack(parameters: dict[str, Any], parallel: int, **sections: Any) -> dict[str, Any]:
    return {
        "image": IMAGE,
        "cluster": {"kind": "ack", "cpuPool": {"size": 2},
                    "gpuPool": {"instanceTypes": [TWO_GPU_NODE]}},
        "network": {"zoneId": "cn-hangzhou-i"},
        "job": {"command": ["python", "train.py"]},
        "worker": {"number": 2, "gpuCount": 1},
        "sweep": {"parameters": parameters, "parallel": parallel},
        **sections,
    }  # fmt: skip


def containers(config: StackConfig) -> dict[tuple[str, str], dict[str, Any]]:
    """(trial's point value text, replica type) → the container of that trial's Job."""
    found = {}
    by_run = {t.job.run_id: t for t in config.trials}
    for obj in build_objects(config, cluster_facts(config)):
        if obj["kind"] != "Job":
            continue
        trial = by_run[obj["metadata"]["labels"][RUN_ID_LABEL]]
        replica = obj["metadata"]["name"].rsplit("-", 2)[1]
        found[(str(trial.trial_point), replica)] = obj["spec"]["template"]["spec"]["containers"][0]
    return found


def _env(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value") for e in container["env"]}


def test_sweeping_a_groups_gpu_count_gives_each_trials_pods_theirs() -> None:
    config = parse_config(ack({"worker.gpuCount": {"values": [1, 2]}}, parallel=2))
    assert [t.trial_point for t in config.trials] == [
        {"worker.gpuCount": 1},
        {"worker.gpuCount": 2},
    ]
    assert len({t.job.run_id for t in config.trials}) == 2
    # Two GPU workers a trial, two trials at once: four nodes at most.
    assert config.cluster.gpu_pool.max_size == 4
    assert platform_problems(config) == []
    pods = containers(config)
    for gpus in (1, 2):
        worker = pods[(str({"worker.gpuCount": gpus}), "worker")]
        assert worker["resources"]["limits"]["nvidia.com/gpu"] == str(gpus)
        assert _env(worker)["TFTRAIN_GPUS"] == str(gpus)
        chief = pods[(str({"worker.gpuCount": gpus}), "chief")]
        assert "nvidia.com/gpu" not in chief["resources"]["limits"]


def test_a_gpu_count_no_pool_node_holds_names_the_trial() -> None:
    raw = ack({"worker.gpuCount": {"values": [1, 4]}}, parallel=2)
    with pytest.raises(ConfigError) as error:
        parse_config(raw)
    assert error.value.problems == [
        "tftrain:sweep trial 2 (worker.gpuCount=4): tftrain:worker.gpuCount = 4: must be at "
        f"most 2: one {TWO_GPU_NODE} node has 2 GPU(s)"
    ]


def test_fewer_at_once_than_trials_refuses_nodes_that_pack_smaller_replicas() -> None:
    # A 2-GPU node takes two 1-GPU workers: the pool sized for one trial would run two.
    config = parse_config(ack({"worker.gpuCount": {"values": [1, 2]}}, parallel=1))
    assert config.cluster.gpu_pool.max_size == 2
    assert platform_problems(config) == [
        "tftrain:cluster.gpuPool.instanceTypes: must give each GPU replica a node of its own "
        "when sweep.parallel < the trials: a node with 2 GPUs packs replicas of 1, so more "
        "than 1 trials would run at once"
    ]


def test_trials_with_and_without_gpus_cannot_be_capped_by_the_pool() -> None:
    raw = ack({"worker.gpuCount": {"values": [0, 1]}}, parallel=1)
    config = parse_config(raw)
    assert platform_problems(config) == [
        "tftrain:sweep.parallel = 1: must be 2, the number of trials (all at once), or run the "
        "sweep with the local launcher, which honours any parallel: the trials need different "
        "numbers of GPU nodes (0, 2): the pool cannot cap them at a count"
    ]
    # All at once: two trials of at most two GPU nodes each (the widest trial sets it).
    at_once = parse_config({**raw, "sweep": {**raw["sweep"], "parallel": 2}})
    assert platform_problems(at_once) == [] and at_once.cluster.gpu_pool.max_size == 4


def test_sweeping_job_args_gives_every_replica_of_a_trial_its_args() -> None:
    args = [["--optimizer", "adam"], ["--optimizer", "sgd", "--momentum", "0.9"]]
    raw = ack({"job.args": {"values": args}}, parallel=2)
    config = parse_config(raw)
    assert [t.trial_point for t in config.trials] == [{"job.args": a} for a in args]
    assert len({t.job.run_id for t in config.trials}) == 2  # each trains something else
    pods = containers(config)
    for value in args:
        for replica in ("chief", "worker", "ps"):
            container = pods[(str({"job.args": value}), replica)]
            assert container["command"][-3:] == ["--", "python", "train.py"]
            assert container["args"] == value
    # A group's own args still win over the swept job.args.
    own = parse_config({**raw, "ps": {"number": 1, "args": ["--serve"]}})
    assert {c["args"] == ["--serve"] for (_, r), c in containers(own).items() if r == "ps"} == {
        True
    }


VARY = "trials vary hyperparams.*, job.env.*, job.args and <group>.number, gpuCount, args, env.*"


@pytest.mark.parametrize(
    ("key", "where", "meant"),
    [
        ("hyperparams.learningrate", '["hyperparams.learningrate"]', "hyperparams.learningRate"),
        ("worker.gpucount", '["worker.gpucount"]', "worker.gpuCount"),
        ("imag", ".imag", "image"),  # a top-level key of its own, not a section's
    ],
)
def test_a_misspelt_swept_key_is_named_with_the_key_meant(key: str, where: str, meant: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config({"image": IMAGE, "sweep": {"parameters": {key: {"values": [1]}}}})
    assert error.value.problems == [
        f"tftrain:sweep.parameters{where}: unknown stack key {key}, did you mean {meant}? {VARY}"
    ]


@pytest.mark.parametrize(
    "cluster",
    [
        {"kind": "existing"},  # not the stack's nodes to size
        {"kind": "ack", "cpuPool": {"size": 2}, "gpuPool": {"size": 3}},  # a fixed size
        {"kind": "ack", "cpuPool": {"size": 2}, "gpuPool": {"maxSize": 6}},  # the user's
    ],
    ids=["existing", "ack-fixed-size", "ack-max-written"],
)
def test_the_gpu_pool_is_sized_only_where_the_stack_sizes_it(cluster: dict[str, Any]) -> None:
    raw = {
        "image": IMAGE,
        "cluster": cluster,
        "worker": {"number": 2, "gpuCount": 1},
        "sweep": {"parameters": {"hyperparams.epochs": {"values": [1, 2, 3]}}, "parallel": 3},
    }
    if cluster["kind"] == "ack":
        raw["network"] = {"zoneId": "cn-hangzhou-i"}
    pool = parse_config(raw).cluster.gpu_pool
    assert (pool.size, pool.max_size) == (
        cluster.get("gpuPool", {}).get("size", 0),
        cluster.get("gpuPool", {}).get("maxSize", 0),
    )


SHARED = (
    "a key every trial shares (the cluster, network, storage, data, images, names, run id, "
    "requests and TensorBoard are the sweep's, not a trial's)"
)


@pytest.mark.parametrize(
    "key",
    ["hyperparams.epochs", "job.env.MODE", "job.args", "worker.number", "chief.gpuCount",
     "ps.args", "evaluator.env.EVAL_EVERY"],
)  # fmt: skip
def test_what_a_run_trains_with_may_be_swept(key: str) -> None:
    raw = {"image": IMAGE, "sweep": {"parameters": {key: {"values": [1]}}}}
    try:
        parse_config(raw)
    except ConfigError as error:  # the value may not suit the key: that is not the refusal
        assert not any("unknown stack key" in p or SHARED in p for p in error.problems), error


@pytest.mark.parametrize(
    ("key", "where"),
    [
        ("image", ".image"),
        ("cluster.kind", '["cluster.kind"]'),
        ("job.name", '["job.name"]'),
        ("job.runId", '["job.runId"]'),
        ("data.bucket", '["data.bucket"]'),
        ("tensorboard.enabled", '["tensorboard.enabled"]'),
        ("worker.cpu", '["worker.cpu"]'),
        ("worker.image", '["worker.image"]'),
    ],
)
def test_what_every_trial_shares_is_refused_by_name(key: str, where: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config({"image": IMAGE, "sweep": {"parameters": {key: {"values": ["x"]}}}})
    assert f"tftrain:sweep.parameters{where}: {SHARED}; {VARY}" in error.value.problems


@pytest.mark.parametrize(
    "key", ["job.env.A.B", "hyperparams.epochs.x", "job", "worker", "nothing.here"]
)
def test_a_path_no_stack_key_has_is_unknown(key: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config({"image": IMAGE, "sweep": {"parameters": {key: {"values": [1]}}}})
    (problem,) = error.value.problems
    assert f"unknown stack key {key}" in problem and problem.endswith(VARY)


def test_a_sweep_without_gpus_leaves_the_gpu_pool_empty() -> None:
    raw = ack({"hyperparams.epochs": {"values": [1, 2]}}, parallel=1)
    raw["worker"] = {"number": 2}
    assert parse_config(raw).cluster.gpu_pool.max_size == 0


ZONE = {"network": {"zoneId": "cn-hangzhou-i"}}
ACK = {"kind": "ack", "cpuPool": {"size": 2}}
GPU_WORKERS = {"worker": {"number": 2, "gpuCount": 1}}
ALL_AT_ONCE = (
    "tftrain:sweep.parallel = 2: must be 3, the number of trials (all at once), or run the "
    "sweep with the local launcher, which honours any parallel: "
)


@pytest.mark.parametrize(
    ("sections", "problems"),
    [
        ({"cluster": {"kind": "existing"}, **GPU_WORKERS},
         [ALL_AT_ONCE + "an existing cluster's nodes are not the stack's to size"]),
        ({"cluster": {"kind": "ask", "eciGpuSpec": "ecs.gn6i-c4g1.xlarge"}, **ZONE, **GPU_WORKERS},
         [ALL_AT_ONCE + "on ask every pod is its own ECI instance, started (and billed) at "
          "once: no pool holds a trial back"]),
        ({"cluster": ACK, **ZONE, "job": {"gangScheduling": False}, **GPU_WORKERS},
         ["tftrain:job.gangScheduling = false: must be true when sweep.parallel < the trials: "
          "without it a waiting trial's pods take GPU nodes one by one and hold them"]),
        ({"cluster": {**ACK, "spotGpuPool": {"maxSize": 4}}, **ZONE,
          "worker": {"number": 2, "gpuCount": 1, "spot": True}},
         [ALL_AT_ONCE + "spot GPU replicas run on the spot pool, which does not bound the "
          "trials"]),
        ({"cluster": ACK, **ZONE, "worker": {"number": 2}},
         [ALL_AT_ONCE + "trials without GPU replicas are not bounded by the GPU pool"]),
        # 3 nodes hold one trial of 2 GPU workers (3 // 2), not 1.5.
        ({"cluster": {**ACK, "gpuPool": {"maxSize": 3}}, **ZONE, **GPU_WORKERS},
         ["tftrain:sweep.parallel = 2: must be at most 1: cluster.gpuPool has 3 nodes and a "
          "trial needs 2 (one per GPU replica): raise cluster.gpuPool.maxSize to 4, or leave "
          "it unset"]),
        # 5 nodes hold two such trials (5 // 2): exactly parallel, nothing to say.
        ({"cluster": {**ACK, "gpuPool": {"maxSize": 5}}, **ZONE, **GPU_WORKERS}, []),
    ],
    ids=["existing", "ask", "no-gang", "spot", "cpu-only", "3-nodes", "5-nodes"],
)  # fmt: skip
def test_what_holds_a_waiting_trial_back_or_why_nothing_does(
    sections: dict[str, Any], problems: list[str]
) -> None:
    sweep = {"parameters": {"hyperparams.epochs": {"values": [1, 2, 3]}}, "parallel": 2}
    config = parse_config({"image": IMAGE, "sweep": sweep, **sections})
    assert platform_problems(config) == problems


def test_a_pool_past_parallel_says_how_many_whole_trials_it_holds() -> None:
    raw = {
        "image": IMAGE, "cluster": {**ACK, "gpuPool": {"maxSize": 7}}, **ZONE, **GPU_WORKERS,
        "sweep": {"parameters": {"hyperparams.epochs": {"values": [1, 2, 3]}}, "parallel": 1},
    }  # fmt: skip
    assert platform_problems(parse_config(raw)) == [
        "tftrain:cluster.gpuPool.maxSize = 7: must be 2 (or unset) so that at most "
        "sweep.parallel 1 trials run at once: 7 nodes hold 3 trials of 2 GPU replicas"
    ]


def test_a_run_stack_sweeps_all_at_once_and_sizes_no_pool() -> None:
    # Its platform stack owns the GPU pool: no capacity check against a pool it cannot see.
    cluster = {"kind": "ack", "role": "run", "platformStack": "o/tftrain/p"}
    sweep = {"parameters": {"hyperparams.epochs": {"values": [1, 2, 3]}}, "parallel": 2}
    config = parse_config({"image": IMAGE, "cluster": cluster, **GPU_WORKERS, "sweep": sweep})
    assert platform_problems(config) == [
        ALL_AT_ONCE + "a run stack cannot size its platform's GPU pool"
    ]
    every = parse_config(
        {"image": IMAGE, "cluster": cluster, **GPU_WORKERS, "sweep": {**sweep, "parallel": 3}}
    )
    assert platform_problems(every) == []
