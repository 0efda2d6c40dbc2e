"""The config package's entry points (`infra.config`): where a stack's file is looked for, and
the run id, whose recipe must not drift: a deployed stack whose run id changes after an upgrade
starts its run over in a new directory instead of resuming it."""

from __future__ import annotations

from pathlib import Path

import pytest

import infra
from infra.config import (
    ConfigError,
    load_stack,
    parse_config,
    read_stack_entries,
    read_stack_file,
    stack_file,
)

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = "registry.example.com/tftrain/trainer:1"


def test_a_stack_is_looked_for_in_the_checkout_s_stacks_dir_unless_told() -> None:
    # docs/development.md's layout: stacks/ beside infra/.
    checkout = Path(next(iter(infra.__path__))).resolve().parent  # a namespace package
    assert stack_file("dev") == checkout / "stacks" / "Pulumi.dev.yaml"
    assert stack_file("dev", Path("/elsewhere")) == Path("/elsewhere/Pulumi.dev.yaml")


def test_a_stack_of_another_dir_is_read_from_there(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.dev.yaml").write_text(
        "config:\n"
        "  alicloud:region: cn-hangzhou\n"
        f"  tftrain:image: {BUNDLED}\n"
        "  tftrain:job:\n    name: elsewhere\n"
    )
    assert load_stack("dev", tmp_path).job.name == "elsewhere"
    path = tmp_path / "Pulumi.dev.yaml"
    assert read_stack_entries(path) == {
        "alicloud:region": "cn-hangzhou",
        "tftrain:image": BUNDLED,
        "tftrain:job": {"name": "elsewhere"},
    }
    assert read_stack_file(path) == {"image": BUNDLED, "job": {"name": "elsewhere"}}
    with pytest.raises(ConfigError, match="stacks here: dev"):
        load_stack("prod", tmp_path)


def test_the_shipped_dev_stack_keeps_the_run_id_the_docs_show() -> None:
    """docs/data.md and docs/review.md show stack dev's run as run-2c4524ae."""
    for doc in ("data.md", "review.md"):
        assert "run-2c4524ae" in (ROOT / "docs" / doc).read_text()
    assert load_stack("dev", ROOT / "stacks").job.run_id == "run-2c4524ae"


@pytest.mark.parametrize(
    "spelt",
    [
        {"job": {"command": ["python", "-m", "trainer"]}},  # the default written out
        {"job": {"args": []}},
        {"job": {"dataDir": ""}},
        {"hyperparams": {"keepCheckpoints": 9}},  # how many are kept: the same training
        {"hyperparams": {"strategy": "parameter_server"}},  # what auto resolves to here
        {"worker": {"image": BUNDLED}},
        {"evaluator": {"number": 0, "gpuCount": 1}},  # a group without replicas
    ],
)
def test_a_default_written_out_is_the_same_run(spelt: dict) -> None:
    assert parse_config({"image": BUNDLED, **spelt}).job.run_id == (
        parse_config({"image": BUNDLED}).job.run_id
    )


@pytest.mark.parametrize(
    "changed",
    [
        {"job": {"command": ["python", "-m", "mytrainer"]}},
        {"job": {"args": ["--x"]}},
        {"job": {"dataDir": "/data/mine"}},
        {"job": {"env": {"SEED": "1"}}},
        {"job": {"initCheckpoint": "run:run-2c4524ae"}},
        {"hyperparams": {"epochs": 5}},
        {"hyperparams": {"batchSize": 64}},
        {"worker": {"number": 3}},
        {"worker": {"gpuCount": 1}},
        {"worker": {"image": "registry.example.com/tftrain/trainer:2"}},
        {"worker": {"command": ["python", "-m", "trainer"], "args": ["--y"]}},
        {"ps": {"env": {"A": "1"}}},
        {"evaluator": {"number": 1}},
        {"data": {"localInputDir": "/home/me/mnist"}},
    ],
)
def test_what_the_training_computes_is_another_run(changed: dict) -> None:
    assert parse_config({"image": BUNDLED, **changed}).job.run_id != (
        parse_config({"image": BUNDLED}).job.run_id
    )


@pytest.mark.parametrize(
    "group",
    [{"command": ["./train"]}, {"args": ["--y"]}, {"args": []}, {"env": {"SEED": "1"}}],
)
def test_a_group_s_own_command_args_or_env_is_another_run(group: dict) -> None:
    """Only when set (docs/config.md: unset is the job's), so a stack without them keeps its
    run id; an empty args list is set (the group runs with no arguments)."""
    assert parse_config({"image": BUNDLED, "worker": group}).job.run_id != (
        parse_config({"image": BUNDLED}).job.run_id
    )


ACK = {
    "image": BUNDLED,
    "cluster": {"kind": "ack", "cpuPool": {"size": 2}},
    "network": {"zoneId": "cn-hangzhou-i"},
}


@pytest.mark.parametrize(
    ("raw", "run_id"),
    [
        ({"image": BUNDLED,
          "worker": {"command": ["python", "-m", "trainer"], "args": ["--y"], "env": {"SEED": "1"}},
          "ps": {"command": ["./ps"]}}, "run-9c96e84a"),
        ({"image": BUNDLED, "job": {"env": {"SEED": "1"}}}, "run-d484bcb7"),
        ({**ACK, "data": {"bucket": "my-data", "inputPrefix": "mnist/"}}, "run-29324ed6"),
        ({**ACK, "data": {"createBucket": True, "inputPrefix": "mnist/"}}, "run-833369c7"),
        ({"image": BUNDLED, "data": {"localInputDir": "/home/me/mnist"}}, "run-a491a62c"),
        ({"image": BUNDLED, "job": {"initCheckpoint": "run:run-2c4524ae"}}, "run-071c8de1"),
    ],
)  # fmt: skip
def test_a_run_id_is_as_recorded(raw: dict, run_id: str) -> None:
    """Recorded when this recipe shipped: a stack with its own group settings, a job env or
    OSS input keeps its run id across versions; a new value here means every such stack starts
    its run over after an upgrade (say so in the release notes, then record the new one)."""
    assert parse_config(raw).job.run_id == run_id


@pytest.mark.parametrize(
    "data",
    [{"bucket": "other-data", "inputPrefix": "mnist/"}, {"bucket": "my-data", "inputPrefix": "x/"},
     {"createBucket": True, "inputPrefix": "mnist/"}],
)  # fmt: skip
def test_other_oss_input_is_another_run(data: dict) -> None:
    mine = {"bucket": "my-data", "inputPrefix": "mnist/"}
    assert parse_config({**ACK, "data": data}).job.run_id != (
        parse_config({**ACK, "data": mine}).job.run_id
    )


@pytest.mark.parametrize("section", ["worker", "job"])
def test_an_env_in_a_section_the_engine_marked_secret_counts_by_its_names(section: str) -> None:
    """A digest of a short secret could be brute-forced back from the run id, a label anyone
    may read: in a section marked secret only the names count."""

    def run_id(value: str, marked: bool, name: str = "TOKEN") -> str:
        raw = {"image": BUNDLED, section: {"env": {name: value}}}
        return parse_config(raw, secret_keys=[section] if marked else []).job.run_id

    assert run_id("a", marked=True) == run_id("b", marked=True)
    assert run_id("a", marked=True) != run_id("a", marked=True, name="OTHER")
    assert run_id("a", marked=False) != run_id("b", marked=False)


@pytest.mark.parametrize(
    ("one", "other"),
    [({"data": {"localInputDir": "/home/me/a"}}, {"data": {"localInputDir": "/home/me/b"}}),
     ({"job": {"initCheckpoint": "run:run-1"}}, {"job": {"initCheckpoint": "run:run-2"}})],
)  # fmt: skip
def test_another_local_input_or_start_checkpoint_is_another_run(one: dict, other: dict) -> None:
    assert parse_config({"image": BUNDLED, **one}).job.run_id != (
        parse_config({"image": BUNDLED, **other}).job.run_id
    )


def test_the_keys_a_sweep_s_trials_are_held_in_are_no_keys_of_a_stack() -> None:
    # docs/config.md's sections: every key a stack file may write at the top.
    known = (
        "budget, chief, cluster, data, evaluator, hyperparams, image, imageRegistry, job, "
        "master, network, ps, storage, sweep, tensorboard, worker"
    )
    with pytest.raises(ConfigError) as refused:
        parse_config({"image": BUNDLED, "trialPoint": {}, "trials": []})
    assert refused.value.problems == [
        f"tftrain:trials: unknown key; known keys here: {known}",
        f"tftrain:trialPoint: unknown key; known keys here: {known}",
    ]


def test_a_key_is_taken_only_as_typed_in_camel_case() -> None:
    """docs/config.md names every key in camelCase; the snake_case names are the code's."""
    with pytest.raises(ConfigError) as refused:
        parse_config({"image": BUNDLED, "hyperparams": {"batch_size": 64}})
    assert refused.value.problems == [
        "tftrain:hyperparams.batch_size: unknown key, did you mean batchSize? known keys here: "
        "batchSize, checkpointSteps, epochs, keepCheckpoints, learningRate, logSteps, maxSteps, "
        "stepsPerExecution, strategy"
    ]
