"""The stack file's JSON Schema (schema/stack.schema.json, what an editor loads): what it
accepts and refuses is stated here by hand, from the README's key tables and Kubernetes' and
Alibaba Cloud's own limits, and the model refuses the same values."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from infra.config import ConfigError, parse_config
from infra.config.schema import render
from infra.config.stack_file import read_stack
from tests.pulumi_mocks import STACKS_DIR, all_stacks

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "schema" / "stack.schema.json"
# The committed file, as an editor reads it: not the code that generates it.
COMMITTED = json.loads(SCHEMA_FILE.read_text())
VALIDATOR = jsonschema.Draft202012Validator(COMMITTED)


def test_the_committed_schema_is_current() -> None:
    command = "python -m infra.config.schema > schema/stack.schema.json"
    assert SCHEMA_FILE.read_text() == render(), f"schema/stack.schema.json is stale: {command}"


# (key, value, accepted?), each judged by hand: the README's key tables; Kubernetes' DNS label
# (RFC 1123: lower-case letters, digits and '-', starting and ending with a letter or digit,
# at most 63 characters); Alibaba's NAS storage types (General-purpose NAS: Performance and
# Capacity) over NFS; TensorFlow's two distributed strategies and auto.
VALUES = [
    ("worker.number", 0, True),
    ("worker.number", 1000, True),
    ("worker.number", 1001, False),
    ("worker.number", -1, False),
    ("worker.number", 1.5, False),
    ("cluster.kind", "ack", True),
    ("cluster.kind", "ask", True),
    ("cluster.kind", "existing", True),
    ("cluster.kind", "gke", False),
    ("cluster.kind", "ACK", False),
    ("cluster.role", "standalone", True),
    ("cluster.role", "platform", True),
    ("cluster.role", "run", True),
    ("cluster.role", "runner", False),
    ("cluster.networkPlugin", "flannel", True),
    ("cluster.networkPlugin", "calico", False),
    ("job.name", "mnist", True),
    ("job.name", "mnist-2", True),
    ("job.name", "1mnist", False),
    ("job.name", "MNIST", False),
    ("job.name", "mnist-", False),
    ("job.namespace", "a" * 63, True),
    ("job.namespace", "a" * 64, False),
    ("job.namespace", "team_a", False),
    ("storage.kind", "nas", True),
    ("storage.kind", "nfs", True),
    ("storage.kind", "hostPath", True),
    ("storage.kind", "efs", False),
    ("storage.nasStorageType", "Performance", True),
    ("storage.nasStorageType", "Capacity", True),
    ("storage.nasStorageType", "Extreme", False),
    ("storage.nasProtocol", "NFS", True),
    ("storage.nasProtocol", "SMB", False),
    ("hyperparams.strategy", "auto", True),
    ("hyperparams.strategy", "parameter_server", True),
    ("hyperparams.strategy", "multi_worker_mirrored", True),
    ("hyperparams.strategy", "mirrored", False),
    ("tensorboard.serviceType", "ClusterIP", True),
    ("tensorboard.serviceType", "LoadBalancer", True),
    ("tensorboard.serviceType", "NodePort", False),
    ("data.credentials", "rrsa", True),
    ("data.credentials", "password", False),
    ("worker.numbr", 2, False),
]


def nested(key: str, value: object) -> dict:
    section, *path = key.split(".")
    for part in reversed(path):
        value = {part: value}
    return {f"tftrain:{section}": value}


@pytest.mark.parametrize(("key", "value", "accepted"), VALUES)
def test_the_committed_schema_judges_each_value_as_stated(
    key: str, value: object, accepted: bool
) -> None:
    errors = list(VALIDATOR.iter_errors({"config": nested(key, value)}))
    assert (errors == []) is accepted, errors


@pytest.mark.parametrize(
    ("key", "value"), [(key, value) for key, value, accepted in VALUES if not accepted]
)
def test_the_model_refuses_what_the_schema_refuses(key: str, value: object) -> None:
    raw = {name.removeprefix("tftrain:"): v for name, v in nested(key, value).items()}
    with pytest.raises(ConfigError, match=f"tftrain:{key.split('.')[0]}"):
        parse_config(raw)


def test_the_schema_describes_a_pulumi_stack_file() -> None:
    # Pulumi stack files put every key under `config`, namespaced `<project>:<key>`; other
    # providers' keys (alicloud:region) share the section.
    assert COMMITTED["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert list(VALIDATOR.iter_errors({"config": {"alicloud:region": "cn-hangzhou"}})) == []
    assert list(VALIDATOR.iter_errors({"config": {"tftrain:nosuchkey": 1}}))


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
