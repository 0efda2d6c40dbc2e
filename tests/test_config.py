"""The stack config model: defaults, coercions Pulumi needs, and run ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.config import (
    ConfigError,
    load_stack,
    parse_config,
    read_stack_file,
    strip_project_prefix,
)
from tests.run_ids import run_id

STACKS = Path(__file__).resolve().parent.parent / "stacks"
MINIMAL = {"image": "registry.example.com/tftrain/trainer:1"}


def test_defaults_give_a_local_ps_topology() -> None:
    config = parse_config(MINIMAL)
    assert (config.chief.number, config.worker.number, config.ps.number) == (1, 2, 1)
    assert config.evaluator.number == 0
    assert config.cluster.kind == "existing"
    assert config.storage.kind == "hostPath"
    assert config.storage.pv_labels == {"train": "mnist"}
    assert config.tensorboard.public is False
    assert config.cluster.public_api_server is False
    assert config.job.command is None  # the bundled trainer
    assert config.command_of(config.worker) == ("python", "-m", "trainer")
    assert config.output_dir == f"/data/mnist/{config.job.run_id}"


def test_pulumi_floats_and_strings_are_accepted_where_they_are_whole_numbers() -> None:
    config = parse_config(
        {
            **MINIMAL,
            "worker": {"number": 3.0},
            "hyperparams": {"epochs": "4", "learningRate": "0.01"},
        }
    )
    assert config.worker.number == 3
    assert config.hyperparams.epochs == 4
    assert config.hyperparams.learning_rate == 0.01


def test_every_problem_is_reported_at_once_with_its_key() -> None:
    with pytest.raises(ConfigError) as error:
        parse_config({**MINIMAL, "worker": {"number": 2.5}, "hyperparams": {"batchSize": 0}})
    assert len(error.value.problems) == 2
    message = str(error.value)
    assert "tftrain:worker.number = 2.5: must be an integer from 0 to 1000" in message
    assert "tftrain:hyperparams.batchSize = 0: must be an integer from 1 to 65536" in message


def test_unknown_keys_are_typos_and_name_the_known_ones() -> None:
    with pytest.raises(
        ConfigError,
        match=r"tftrain:hyperparams\.learningrate: unknown key, did you mean learningRate\?"
        r" known keys here: batchSize, .*learningRate",
    ):
        parse_config({**MINIMAL, "hyperparams": {"learningrate": 0.1}})


def test_run_id_follows_what_the_training_computes() -> None:
    base = run_id(MINIMAL)
    assert base == run_id(dict(MINIMAL))
    assert base.startswith("run-") and len(base) == 12
    assert run_id({**MINIMAL, "hyperparams": {"learningRate": 0.01}}) != base
    assert run_id({**MINIMAL, "worker": {"number": 4}}) != base
    # Where TensorBoard is served does not change the training: same run, same curves.
    assert run_id({**MINIMAL, "tensorboard": {"serviceType": "ClusterIP"}}) == base


def test_run_id_ignores_how_the_config_is_spelt() -> None:
    base = run_id({**MINIMAL, "hyperparams": {"batchSize": 128}})
    image = MINIMAL["image"]
    for same in (
        {**MINIMAL, "hyperparams": {"batchSize": 128.0}},
        {**MINIMAL, "hyperparams": {"batchSize": "128", "strategy": "auto"}},
        {**MINIMAL, "hyperparams": {"strategy": "parameter_server", "logSteps": 100}},
        {"worker": {"image": image}, "chief": {"image": image}, "ps": {"image": image},
         "tensorboard": {"image": image}},
        {**MINIMAL, "evaluator": {"number": 0, "memory": "8Gi"}, "worker": {"memory": "8Gi"}},
    ):  # fmt: skip
        assert run_id(same) == base, same


def test_explicit_run_id_wins() -> None:
    assert parse_config({**MINIMAL, "job": {"runId": "lr-sweep-1"}}).job.run_id == "lr-sweep-1"


def test_a_secret_kubeconfig_is_accepted_but_kept_out_of_the_model() -> None:
    # As a stack file holds it ({secure: ...}) and as the engine hands it over (marked secret).
    offline = parse_config({**MINIMAL, "kubeconfig": {"secure": "v1:ciphertext"}})
    deployed = parse_config({**MINIMAL, "kubeconfig": "apiVersion: v1"}, ["kubeconfig"])
    assert offline == deployed == parse_config(MINIMAL)


def test_stack_files_are_read_without_foreign_namespaces() -> None:
    raw = read_stack_file(STACKS / "Pulumi.ack-gpu.yaml")
    assert "region" not in raw and "worker" in raw
    assert strip_project_prefix({"alicloud:region": "x", "tftrain:job": {}}) == {"job": {}}


def test_a_missing_stack_lists_the_stacks_there() -> None:
    with pytest.raises(ConfigError, match=r"Pulumi\.nope\.yaml not found; stacks here: .*dev"):
        load_stack("nope")


@pytest.mark.parametrize("stack", sorted(p.name[7:-5] for p in STACKS.glob("Pulumi.*.yaml")))
def test_every_shipped_stack_is_valid(stack: str) -> None:
    config = load_stack(stack)
    assert config.worker.number >= 1


def test_chart_example_stack_matches_the_seed_values() -> None:
    config = load_stack("ack-gpu")
    assert (config.worker.number, config.worker.gpu_count, config.ps.number) == (2, 1, 2)
    hyper = config.hyperparams
    assert (hyper.epochs, hyper.batch_size, hyper.learning_rate) == (100, 20, 0.001)
    assert config.storage.pv_labels == {"train": "mnist"}
    assert (config.storage.size, config.storage.mount_path) == ("5Gi", "/data")


ACK_GPU_WORKERS = {
    **MINIMAL,
    "cluster": {"kind": "ack"},
    "network": {"zoneId": "cn-hangzhou-i"},
    "worker": {"number": 3, "gpuCount": 1},
}


@pytest.mark.parametrize(
    ("overrides", "size", "min_size", "max_size"),
    [
        # Default: a range from 0 to one node per GPU replica (a pod runs on one node).
        ({}, 0, 0, 3),
        ({"chief": {"gpuCount": 1}}, 0, 0, 4),
        # Warm nodes asked for: the range still covers every replica, and minSize.
        ({"cluster": {"kind": "ack", "gpuPool": {"minSize": 1}}}, 0, 1, 3),
        ({"cluster": {"kind": "ack", "gpuPool": {"minSize": 5}}}, 0, 5, 5),
        # An explicit maxSize wins; an explicit size alone is a fixed pool.
        ({"cluster": {"kind": "ack", "gpuPool": {"maxSize": 8}}}, 0, 0, 8),
        ({"cluster": {"kind": "ack", "gpuPool": {"size": 2}}}, 2, 0, 0),
        # Spot replicas are the spot GPU pool's: none left for this one.
        (
            {
                "cluster": {"kind": "ack", "spotGpuPool": {"maxSize": 3}},
                "worker": {"number": 3, "gpuCount": 1, "spot": True},
            },
            0,
            0,
            0,
        ),
    ],
)
def test_an_ack_gpu_pool_autoscales_from_zero_unless_a_fixed_size_is_asked_for(
    overrides: dict, size: int, min_size: int, max_size: int
) -> None:
    pool = parse_config({**ACK_GPU_WORKERS, **overrides}).cluster.gpu_pool

    assert (pool.size, pool.min_size, pool.max_size) == (size, min_size, max_size)


@pytest.mark.parametrize("kind", ["ask", "existing"])
def test_no_gpu_pool_range_where_there_is_no_gpu_pool(kind: str) -> None:
    raw = {**ACK_GPU_WORKERS, "cluster": {"kind": kind, "eciGpuSpec": "ecs.gn6i-c4g1.xlarge"}}
    if kind == "existing":
        raw = {key: value for key, value in raw.items() if key != "network"}
        raw["cluster"] = {"kind": kind}

    assert parse_config(raw).cluster.gpu_pool.max_size == 0
