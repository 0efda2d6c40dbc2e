"""The stack file's JSON Schema: current with the model, and agreeing with it on the stacks."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from infra.config import ConfigError, parse_config
from infra.config_schema import render, stack_file_schema
from infra.stack_file import read_stack
from tests.pulumi_mocks import STACKS_DIR, all_stacks

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "schema" / "stack.schema.json"
VALIDATOR = jsonschema.Draft202012Validator(stack_file_schema())


def test_the_committed_schema_is_current() -> None:
    command = "python -m infra.config_schema > schema/stack.schema.json"
    assert SCHEMA_FILE.read_text() == render(), f"schema/stack.schema.json is stale: {command}"


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(json.loads(SCHEMA_FILE.read_text()))


@pytest.mark.parametrize("stack", all_stacks())
def test_every_shipped_stack_matches_the_schema(stack: str) -> None:
    entries = read_stack(STACKS_DIR / f"Pulumi.{stack}.yaml").entries
    assert list(VALIDATOR.iter_errors({"config": entries})) == []


@pytest.mark.parametrize(
    "config",
    [
        {"tftrain:worker": {"numbr": 2}},
        {"tftrain:worker": {"number": 2000}},
        {"tftrian:worker": {"number": 2}},
        {"tftrain:cluster": {"kind": "gke"}},
        {"tftrain:job": {"name": "1mnist"}},
        {"tftrain:storage": {"size": ""}},
    ],
)
def test_the_schema_flags_what_an_editor_should_underline(config: dict) -> None:
    assert list(VALIDATOR.iter_errors({"config": config}))


def test_a_secret_kubeconfig_is_allowed() -> None:
    assert list(VALIDATOR.iter_errors({"config": {"tftrain:kubeconfig": {"secure": "v1:x"}}})) == []


@pytest.mark.parametrize(
    "config",
    [
        {"tftrain:cluster": {"kind": "ack", "role": "platform"}, "tftrain:hyperparams": {}},
        {"tftrain:cluster": {"kind": "ack", "role": "run", "gpuPool": {"maxSize": 2}}},
        {"tftrain:cluster": {"kind": "ack", "role": "run"}, "tftrain:network": {}},
        {"tftrain:cluster": {"role": "run"}, "tftrain:data": {"createBucket": True}},
    ],
)
def test_the_schema_flags_keys_of_the_other_role(config: dict) -> None:
    """What `infra.config.roles` refuses, an editor underlines too; and the model agrees."""
    assert list(VALIDATOR.iter_errors({"config": config}))
    raw = {key.removeprefix("tftrain:"): value for key, value in config.items()}
    with pytest.raises(ConfigError, match=r"(a run's|a cloud) key"):
        parse_config(raw)
