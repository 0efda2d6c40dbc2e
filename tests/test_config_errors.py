"""A validation problem in the user's words, whole: the key as `pulumi config set --path` takes
it, the value (cut at 80 characters, hidden for a secret key) and what is allowed."""

from __future__ import annotations

import pytest

from infra.config import ConfigError, parse_config

IMAGE = "registry.example.com/tftrain/trainer:1"
GROUP_KEYS = "args, command, cpu, env, gpuCount, image, imagePullPolicy, memory, number, spot"


def problems(**config: object) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config({"image": IMAGE, **config})
    return caught.value.problems


def test_each_unknown_key_is_named_with_the_closest_and_the_keys_known_there() -> None:
    assert problems(worker={"numbr": 2, "zzz": 1}) == [
        f"tftrain:worker.numbr: unknown key, did you mean number? known keys here: {GROUP_KEYS}",
        f"tftrain:worker.zzz: unknown key; known keys here: {GROUP_KEYS}",
    ]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("x" * 78, '"' + "x" * 78 + '"'),  # 80 characters as JSON: shown whole
        ("x" * 79, '"' + "x" * 76 + "..."),  # 81: its first 77, then "..."
    ],
)
def test_a_value_is_shown_up_to_80_characters(value: str, shown: str) -> None:
    assert problems(worker={"number": value}) == [
        f"tftrain:worker.number = {shown}: must be an integer from 0 to 1000"
    ]


def test_a_section_given_a_value_lists_the_keys_it_takes() -> None:
    assert problems(worker=5) == [
        f"tftrain:worker = 5: must be a mapping with the keys {GROUP_KEYS}"
    ]
    assert problems(sweep={"parameters": {"hyperparams.learningRate": 5}}) == [
        'tftrain:sweep.parameters["hyperparams.learningRate"] = 5: must be a mapping with the '
        "keys distribution, max, min, values"
    ]


def test_a_bad_env_name_is_named_as_its_key() -> None:
    assert problems(job={"env": {"1BAD": "x"}}) == [
        'tftrain:job.env.1BAD = "1BAD": must be a mapping of environment variable names to '
        "string values (a value may be a Pulumi secret: pulumi config set --secret --path)"
    ]


def test_a_secret_key_typed_in_the_clear_is_not_shown_again() -> None:
    registry = {"server": "r.io", "username": "u", "password": "plain"}
    assert problems(imageRegistry=registry) == [
        "tftrain:imageRegistry.password = (not shown): must be empty or a Pulumi secret: "
        "pulumi config set --secret --path tftrain:imageRegistry.password <value> (plain text "
        "would sit in the stack file and the state)"
    ]


def test_keys_under_a_mapping_of_sections_are_located_in_their_section() -> None:
    rate = 'tftrain:sweep.parameters["hyperparams.learningRate"]'
    assert problems(sweep={"parameters": {"hyperparams.learningRate": {"min": "x", "max": 1}}}) == [
        f'{rate}.min = "x": must be unset or a number (random only)'
    ]
    swept = {"hyperparams.learningRate": {"zzz": 1, "values": [1, 2]}}
    assert problems(sweep={"parameters": swept}) == [
        f"{rate}.zzz: unknown key; known keys here: distribution, max, min, values"
    ]
    values = {"hyperparams.learningRate": {"values": [1, 2]}}
    assert problems(sweep={"parameters": values, "metric": {"zzz": 1}}) == [
        "tftrain:sweep.metric.zzz: unknown key; known keys here: goal, name"
    ]
    assert problems(sweep={"parameters": values, "parallel": "x"}) == [
        'tftrain:sweep.parallel = "x": must be an integer from 1 to 1000'
    ]
    assert problems(cluster={"gpuPool": {"size": "x"}}) == [
        'tftrain:cluster.gpuPool.size = "x": must be an integer from 0 to 1000'
    ]


def test_an_unknown_top_key_lists_the_keys_a_user_may_write() -> None:
    """Not the program's own (a sweep's trials and a trial's point)."""
    assert problems(zzz=1) == [
        "tftrain:zzz: unknown key; known keys here: budget, chief, cluster, data, evaluator, "
        "hyperparams, image, imageRegistry, job, master, network, ps, storage, sweep, "
        "tensorboard, worker"
    ]


def test_a_number_given_true_is_told_the_keys_range_not_the_validators_aside() -> None:
    # The validator refuses a boolean in its own words; at the key itself the key's whole
    # description is what a user needs.
    assert problems(worker={"number": True}) == [
        "tftrain:worker.number = true: must be an integer from 0 to 1000"
    ]


def test_a_mapping_of_sections_given_a_value_is_told_what_it_maps() -> None:
    assert problems(sweep={"parameters": 5}) == [
        "tftrain:sweep.parameters = 5: must be a non-empty mapping of stack key paths "
        "(hyperparams.learningRate) to {values: [...]} or {min, max, distribution}"
    ]


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ({"job": {"args": 5}}, "tftrain:job.args = 5: must be a list of strings"),
        ({"job": {"args": ["--x", 1]}}, "tftrain:job.args[1] = 1: must be a list of strings"),
        ({"job": {"initCheckpoint": 5}}, "tftrain:job.initCheckpoint = 5: must be a string: "
                                         "the checkpoint a new run's weights start from, or empty"),
        ({"data": {"localInputDir": 5}}, "tftrain:data.localInputDir = 5: must be a string: a "
                                         "directory on this machine, or empty"),
        ({"data": {"localExportDir": []}}, "tftrain:data.localExportDir = []: must be a string: a "
                                           "directory on this machine, or empty"),
        ({"tensorboard": {"allowedSourceRanges": "203.0.113.0/24"}},
         'tftrain:tensorboard.allowedSourceRanges = "203.0.113.0/24": must be a list of IPv4 CIDR '
         "blocks such as 203.0.113.0/24"),
    ],
)  # fmt: skip
def test_a_plain_key_given_the_wrong_type_says_what_it_takes(config: dict, said: str) -> None:
    assert problems(**config) == [said]


def test_every_key_a_user_may_write_says_what_it_takes() -> None:
    """No problem falls back to the bare "must be valid here": each key has a description,
    a fixed set of choices or sections of its own."""
    from infra.config.errors import _allowed, fields_of, section_of
    from infra.config.model import StackConfig

    vague, sections, seen = [], [("", StackConfig)], set()
    while sections:
        path, section = sections.pop()
        seen.add(section)
        for key, info in fields_of(section).items():
            if info.exclude:
                continue  # the program's own keys (a trial's point)
            inner, _ = section_of(info.annotation)
            if inner is not None and inner not in seen:
                sections.append((f"{path}.{key}", inner))
            if _allowed(info) == "valid here":
                vague.append(f"{path}.{key}")
    assert vague == []
