"""The config model's own answers (`infra.config.model`): the defaults that follow other keys,
the GPU pool's derived size, and what a validated stack says about itself. Each expected value
is worked by hand from docs/config.md's tables (defaults, the GPU pool's rule), docs/trainer.md
(the bundled trainer and its image) and TensorFlow's strategies (how many replicas share a
batch); the model alone is validated here, the cross-key rules have their own tests."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter

from infra.config import ConfigError, parse_config
from infra.config.model import StackConfig, is_bundled_command, is_bundled_image

BUNDLED = "registry.example.com/tftrain/trainer:1"
USERS = "registry.example.com/me/train:2"
_MODEL = TypeAdapter(StackConfig)


def model(raw: dict[str, Any]) -> StackConfig:
    """The model's reading of `raw`, keys as typed (no cross-key rules)."""
    return _MODEL.validate_python(raw, by_alias=True, by_name=False)


@pytest.mark.parametrize(
    ("image", "bundled"),
    [
        (BUNDLED, True),
        ("tftrain/trainer", True),  # Docker Hub's short form
        ("registry-vpc.cn-hangzhou.aliyuncs.com/tftrain/trainer:0.1.0-gpu", True),
        ("registry.example.com/team/tftrain/trainer:1", True),
        ("registry.example.com/tftrain/trainer@sha256:" + "a" * 64, True),
        ("registry.example.com/tftrain/trainer-gpu:1", False),
        ("registry.example.com/mytftrain/trainer:1", False),
        ("registry.example.com/tftrain/trainer/extra:1", False),
        (USERS, False),
        ("", False),
        ("Not An Image", False),
    ],
)
def test_the_bundled_image_is_tftrain_trainer_in_any_registry(image: str, bundled: bool) -> None:
    assert is_bundled_image(image) is bundled


@pytest.mark.parametrize(
    ("command", "bundled"),
    [
        (("python", "-m", "trainer"), True),
        (("python3", "-m", "trainer"), True),
        (("python3.11", "-m", "trainer"), True),
        (("/usr/bin/python3", "-m", "trainer"), True),
        (("/usr/local/bin/python3.12", "-m", "trainer"), True),
        (("/opt/bin/python", "-m", "trainer"), False),
        (("ipython", "-m", "trainer"), False),
        (("python3.", "-m", "trainer"), False),
        (("python", "-m", "trainer", "--epochs", "2"), False),  # arguments are job.args
        (("python", "-m", "trainer2"), False),
        (("python", "-c", "trainer"), False),
        (("python", "-m"), False),
        (("python",), False),
    ],
)
def test_the_bundled_command_is_python_m_trainer(command: tuple[str, ...], bundled: bool) -> None:
    assert is_bundled_command(command) is bundled


def test_the_stack_image_is_every_group_s_and_tensorboard_s_only_if_bundled() -> None:
    stack = model({"image": BUNDLED, "worker": {"image": USERS}})
    images = [g.image for g in stack.replica_groups]
    assert images == [BUNDLED, BUNDLED, USERS, BUNDLED, BUNDLED]
    assert stack.tensorboard.image == BUNDLED
    users = model({"image": USERS, "tensorboard": {"image": BUNDLED}})
    assert [g.image for g in users.replica_groups] == [USERS] * 5
    assert users.tensorboard.image == BUNDLED  # its own, kept
    assert model({"image": USERS}).tensorboard.image == ""  # a user's image may lack tensorboard


@pytest.mark.parametrize(
    ("cluster", "image_cache", "storage"),
    [
        (None, False, "hostPath"),
        ({"kind": "existing"}, False, "hostPath"),
        ({"kind": "ack"}, False, "nas"),
        ({"kind": "ask"}, True, "nas"),
        ({"kind": "ask", "role": "platform"}, True, "nas"),
        ({"kind": "ask", "role": "run", "platformStack": "o/tftrain/p"}, False, "nas"),
        ({"kind": "ask", "imageCache": False}, False, "nas"),
        ({"role": "standalone"}, False, "hostPath"),
    ],
)
def test_the_image_cache_and_storage_kind_follow_the_cluster(
    cluster: dict[str, Any] | None, image_cache: bool, storage: str
) -> None:
    raw: dict[str, Any] = {"image": BUNDLED}
    if cluster is not None:
        raw["cluster"] = cluster
    stack = model(raw)
    assert (stack.cluster.image_cache, stack.storage.kind) == (image_cache, storage)
    assert model({**raw, "storage": {"kind": "nfs"}}).storage.kind == "nfs"  # written: kept


# docs/config.md: unset maxSize is one node per GPU replica that is not spot, at least minSize;
# 0 with a fixed size; only on ack.
@pytest.mark.parametrize(
    ("raw", "max_size"),
    [
        ({"cluster": {"kind": "ack"}, "worker": {"gpuCount": 1}}, 2),
        ({"cluster": {"kind": "ack"}, "worker": {"gpuCount": 4, "number": 3}}, 3),
        ({"cluster": {"kind": "ack"}, "worker": {"gpuCount": 1},
          "chief": {"gpuCount": 1}, "evaluator": {"number": 1, "gpuCount": 1}}, 4),
        ({"cluster": {"kind": "ack"}, "worker": {"gpuCount": 1, "spot": True}}, 0),
        ({"cluster": {"kind": "ack"}, "worker": {"gpuCount": 1, "spot": True},
          "chief": {"gpuCount": 1}}, 1),
        ({"cluster": {"kind": "ack", "gpuPool": {"minSize": 5}}, "worker": {"gpuCount": 1}}, 5),
        ({"cluster": {"kind": "ack", "gpuPool": {"minSize": 1}}, "worker": {"gpuCount": 1}}, 2),
        ({"cluster": {"kind": "ack", "gpuPool": {"minSize": 3}}}, 0),
        ({"cluster": {"kind": "ack", "gpuPool": {"size": 2}}, "worker": {"gpuCount": 1}}, 0),
        ({"cluster": {"kind": "ack", "gpuPool": {"maxSize": 7}}, "worker": {"gpuCount": 1}}, 7),
        ({"cluster": {"kind": "ack", "gpuPool": {"maxSize": 0}}, "worker": {"gpuCount": 1}}, 0),
        ({"cluster": {"kind": "ack"}, "worker": {"gpuCount": 1, "number": 0}}, 0),
        ({"cluster": {"kind": "ack"}}, 0),
        ({"cluster": {"kind": "ask"}, "worker": {"gpuCount": 1}}, 0),
        ({"worker": {"gpuCount": 1}}, 0),
    ],
)  # fmt: skip
def test_the_gpu_pool_s_unset_max_size_is_one_node_per_on_demand_gpu_replica(
    raw: dict[str, Any], max_size: int
) -> None:
    stack = model({"image": BUNDLED, **raw})
    assert stack.cluster.gpu_pool.max_size == max_size


# TensorFlow: ParameterServerStrategy splits a batch over one worker's devices; the mirrored
# strategy over every trainer's (chief and workers) devices.
@pytest.mark.parametrize(
    ("raw", "strategy", "in_sync"),
    [
        ({}, "parameter_server", 1),
        ({"worker": {"gpuCount": 2}}, "parameter_server", 2),
        ({"ps": {"number": 0}}, "multi_worker_mirrored", 3),
        ({"ps": {"number": 0}, "worker": {"gpuCount": 2}}, "multi_worker_mirrored", 6),
        ({"ps": {"number": 0}, "worker": {"number": 0}, "chief": {"gpuCount": 4}},
         "multi_worker_mirrored", 4),
        ({"ps": {"number": 0}, "chief": {"number": 0}, "worker": {"number": 5}},
         "multi_worker_mirrored", 5),
        ({"hyperparams": {"strategy": "multi_worker_mirrored"}}, "multi_worker_mirrored", 3),
        ({"ps": {"number": 0}, "hyperparams": {"strategy": "parameter_server"},
          "worker": {"gpuCount": 3}}, "parameter_server", 3),
    ],
)  # fmt: skip
def test_the_strategy_auto_resolves_to_and_the_replicas_a_batch_is_split_over(
    raw: dict[str, Any], strategy: str, in_sync: int
) -> None:
    stack = model({"image": BUNDLED, **raw})
    assert (stack.effective_strategy, stack.replicas_in_sync) == (strategy, in_sync)


@pytest.mark.parametrize(
    ("cluster", "has_run", "sends", "cloud", "eci", "pod_vswitch"),
    [
        ({}, True, True, False, False, False),
        ({"kind": "ack"}, True, True, True, False, True),
        ({"kind": "ack", "networkPlugin": "flannel"}, True, True, True, False, False),
        ({"kind": "ask"}, True, True, True, True, True),
        ({"kind": "ask", "role": "platform"}, False, False, True, False, False),
        ({"kind": "ack", "role": "platform", "runNamespaces": ["team-a"]},
         False, True, True, False, True),
        ({"kind": "ask", "role": "run"}, True, True, False, False, False),
        ({"kind": "ack", "role": "run"}, True, True, False, False, True),
        ({"kind": "existing", "role": "platform"}, False, False, False, False, False),
    ],
)  # fmt: skip
def test_what_a_stack_makes_follows_its_cluster_kind_and_role(
    cluster: dict[str, Any], has_run: bool, sends: bool, cloud: bool, eci: bool, pod_vswitch: bool
) -> None:
    stack = model({"image": BUNDLED, "cluster": cluster})
    assert stack.has_run is has_run
    assert stack.sends_kubernetes_objects is sends
    assert stack.makes_cloud is cloud
    assert stack.cluster.isolates_eci_pods is eci
    assert stack.cluster.has_pod_vswitch is pod_vswitch


@pytest.mark.parametrize(
    ("kind", "data", "credentials", "uses_oss"),
    [
        ("existing", {}, "secret", False),
        ("ack", {}, "rrsa", False),
        ("ask", {}, "secret", False),
        ("ack", {"credentials": "secret"}, "secret", False),
        ("ask", {"credentials": "rrsa"}, "rrsa", False),
        ("ack", {"bucket": "my-data"}, "rrsa", True),
        ("ack", {"createBucket": True}, "rrsa", True),
        ("ack", {"inputPrefix": "mnist/"}, "rrsa", False),
    ],
)
def test_oss_credentials_auto_is_rrsa_on_ack_and_a_bucket_means_oss(
    kind: str, data: dict[str, Any], credentials: str, uses_oss: bool
) -> None:
    stack = model({"image": BUNDLED, "cluster": {"kind": kind}, "data": data})
    assert (stack.oss_credentials, stack.uses_oss) == (credentials, uses_oss)


def test_a_run_stack_with_an_input_prefix_reads_its_platform_s_bucket() -> None:
    run = {"kind": "ack", "role": "run", "platformStack": "o/tftrain/p"}
    assert model({"image": BUNDLED, "cluster": run, "data": {"inputPrefix": "x/"}}).uses_oss
    assert not model({"image": BUNDLED, "cluster": run}).uses_oss


def test_a_group_runs_its_own_command_or_the_job_s_or_the_bundled_trainer() -> None:
    stack = model(
        {
            "image": USERS,
            "job": {"command": ["./train"], "args": ["--a"], "env": {"A": "job", "B": "job"}},
            "worker": {"command": ["./work"], "args": [], "env": {"B": "worker", "C": "w"}},
            "ps": {"args": ["--p"]},
        }
    )
    assert stack.command_of(stack.worker) == ("./work",)
    assert stack.command_of(stack.chief) == ("./train",)
    assert stack.args_of(stack.worker) == ()  # an empty list is the group's own
    assert stack.args_of(stack.ps) == ("--p",)
    assert stack.args_of(stack.chief) == ("--a",)
    assert stack.env_of(stack.worker) == {"A": "job", "B": "worker", "C": "w"}
    assert stack.env_of(stack.chief) == {"A": "job", "B": "job"}
    assert not stack.runs_bundled_trainer
    bundled = model({"image": BUNDLED})
    assert bundled.command_of(bundled.worker) == ("python", "-m", "trainer")
    assert bundled.args_of(bundled.worker) == ()
    assert bundled.runs_bundled_trainer


def test_only_groups_with_replicas_decide_the_trainer_the_gpus_and_the_images() -> None:
    idle = {"number": 0, "command": ["./other"], "gpuCount": 2, "image": USERS}
    stack = model({"image": BUNDLED, "evaluator": idle})
    assert stack.runs_bundled_trainer
    assert not stack.uses_gpu
    assert stack.images == (BUNDLED,)
    busy = model({"image": BUNDLED, "evaluator": {**idle, "number": 1}})
    assert not busy.runs_bundled_trainer
    assert busy.uses_gpu
    assert busy.images == (BUNDLED, USERS)


def test_the_images_are_every_running_one_in_first_use_order_with_tensorboard_last() -> None:
    stack = model({"image": USERS, "ps": {"image": BUNDLED}, "tensorboard": {"image": "tb:1"}})
    assert stack.images == (USERS, BUNDLED, "tb:1")
    off = model({"image": USERS, "tensorboard": {"image": "tb:1", "enabled": False}})
    assert off.images == (USERS,)
    assert model({}).images == ()  # no image given anywhere: none to list


def test_a_run_writes_under_the_mount_its_job_and_its_run_id() -> None:
    stack = parse_config({"image": BUNDLED, "storage": {"mountPath": "/mnt/runs"},
                          "job": {"name": "fraud", "runId": "lr-1"}})  # fmt: skip
    assert stack.logs_root == "/mnt/runs/fraud"
    assert stack.output_dir == "/mnt/runs/fraud/lr-1"
    assert stack.run_name == "fraud"


def test_a_sweep_runs_its_trials_each_named_with_its_run_id() -> None:
    sweep = {"parameters": {"hyperparams.learningRate": {"values": [0.1, 0.2]}}}
    stack = parse_config({"image": BUNDLED, "sweep": sweep})
    assert not stack.is_trial
    assert stack.run_name == "mnist"
    trials = stack.runs
    assert len(trials) == 2 and all(trial.is_trial for trial in trials)
    assert [t.run_name for t in trials] == [f"mnist-{t.job.run_id}" for t in trials]
    assert [t.hyperparams.learning_rate for t in trials] == [0.1, 0.2]
    single = parse_config({"image": BUNDLED})
    assert single.runs == (single,)
    assert not single.is_trial


@pytest.mark.parametrize("value", ["two", ["image"], 3])
def test_a_section_given_a_value_is_refused_by_key_before_any_default_is_added(
    value: Any,
) -> None:
    """The stack's image, the cluster's imageCache and the storage kind are defaults added to
    the sections; a section written as a value is named, not crashed on."""
    raw = {"image": BUNDLED, "worker": value, "cluster": value, "storage": value}
    with pytest.raises(ConfigError) as refused:
        parse_config(raw)
    shown = json.dumps(value)
    assert [p.split(": must be a mapping with the keys ")[0] for p in refused.value.problems] == [
        f"tftrain:cluster = {shown}", f"tftrain:storage = {shown}", f"tftrain:worker = {shown}"
    ]  # fmt: skip
