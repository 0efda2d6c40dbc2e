"""The harness's own recording rules (infra/mock_deploy.py), against the Pulumi SDK's wire
format (`pulumi/runtime/rpc.py`: a secret is `{_special_sig_key: _special_secret_sig,
"value": ...}`; an unknown is `pulumi.output.Unknown`) and the language host's variables
(PULUMI_CONFIG, PULUMI_CONFIG_SECRET_KEYS: pulumi-language-python `main.go`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from pulumi.output import Unknown
from pulumi.runtime import rpc

from infra import mock_deploy
from infra.mock_deploy import (
    COMPUTED,
    SECRET,
    Recorded,
    Registration,
    StackOutputs,
    as_the_engine_runs_it,
    preview_id,
)

PROJECT = Path(__file__).resolve().parent.parent


def secret(value: Any) -> dict[str, Any]:
    return {rpc._special_sig_key: rpc._special_secret_sig, "value": value}


def normalise(value: Any, redact: bool) -> tuple[Any, set[str]]:
    paths: set[str] = set()
    return mock_deploy._normalise(value, "", paths, redact), paths


WIRE = {
    "name": "job",
    "replicas": 2.0,
    "ratio": 0.5,
    "env": [{"name": "A", "value": secret("s3cr3t")}, {"name": "B", "value": "plain"}],
    "kubeconfig": secret({"server": "https://10.0.0.1:6443", "port": 6443.0}),
    "address": Unknown(),
}


def test_secrets_are_unwrapped_and_their_paths_kept() -> None:
    value, paths = normalise(WIRE, redact=False)
    assert value == {
        "name": "job",
        "replicas": 2,
        "ratio": 0.5,
        "env": [{"name": "A", "value": "s3cr3t"}, {"name": "B", "value": "plain"}],
        "kubeconfig": {"server": "https://10.0.0.1:6443", "port": 6443},
        "address": COMPUTED,
    }
    assert paths == {"env[0].value", "kubeconfig"}
    assert isinstance(value["replicas"], int) and isinstance(value["kubeconfig"]["port"], int)


def test_redacted_secrets_never_appear_in_what_is_recorded() -> None:
    value, paths = normalise(WIRE, redact=True)
    assert value["env"][0]["value"] == SECRET
    assert value["kubeconfig"] == SECRET
    assert "s3cr3t" not in json.dumps(value) and "10.0.0.1" not in json.dumps(value)
    assert paths == {"env[0].value", "kubeconfig"}


def test_a_secret_inside_a_secret_is_one_path() -> None:
    value, paths = normalise({"outer": secret({"inner": secret("x")})}, redact=False)
    assert value == {"outer": {"inner": "x"}}
    assert paths == {"outer", "outer.inner"}


def test_a_plain_dict_with_a_sig_key_of_another_kind_is_kept() -> None:
    asset = {rpc._special_sig_key: rpc._special_asset_sig, "path": "a.txt"}
    value, paths = normalise({"file": asset}, redact=True)
    assert value == {"file": asset} and paths == set()


def test_the_sdks_secret_signature_is_the_one_recognised() -> None:
    assert (
        rpc._special_sig_key,
        rpc._special_secret_sig,
    ) == (mock_deploy._SIG_KEY, mock_deploy._SECRET_SIG)


def test_a_referenced_stacks_outputs_are_handed_over_as_the_engine_reads_them() -> None:
    outputs = StackOutputs({"kubeconfig": "k", "region": "cn-hangzhou"}, frozenset({"kubeconfig"}))
    assert outputs.as_state("org/tftrain/platform") == {
        "name": "org/tftrain/platform",
        "outputs": {"kubeconfig": secret("k"), "region": "cn-hangzhou"},
        "secretOutputNames": ["kubeconfig"],
    }
    assert StackOutputs({}).as_state("x") == {"name": "x", "outputs": {}, "secretOutputNames": []}


def test_an_offline_id_names_the_resource() -> None:
    assert preview_id("network-vpc") == "<network-vpc.id>"


def registration(type_token: str, inputs: dict[str, Any]) -> Registration:
    return Registration(type_token, inputs.get("name", "r"), inputs, frozenset(), "")


def test_recorded_objects_are_the_kubernetes_resources_without_providers() -> None:
    job = {"kind": "Job", "metadata": {"name": "j"}}
    service = {"kind": "Service", "metadata": {"name": "s"}}
    recorded = Recorded(
        resources=[
            registration("alicloud:vpc/network:Network", {"name": "vpc"}),
            registration("pulumi:providers:kubernetes", {"kind": "not-an-object"}),
            registration("kubernetes:batch/v1:Job", job),
            registration("kubernetes:core/v1:Service", service),
        ],
        calls=[],
    )
    assert recorded.kube_objects() == [job, service]
    assert recorded.objects_of_kind("Job") == [job]
    assert recorded.objects_of_kind("ConfigMap") == []
    assert [r.inputs for r in recorded.of_type("alicloud:vpc/network:Network")] == [{"name": "vpc"}]


def test_the_program_runs_in_mains_folder_with_the_hosts_variables_then_gives_them_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(PROJECT)
    monkeypatch.setenv("PULUMI_CONFIG", "before")
    monkeypatch.delenv("PULUMI_CONFIG_SECRET_KEYS", raising=False)
    config = {"tftrain:cluster": '{"kind": "existing"}', "tftrain:kubeconfig": "k"}
    with as_the_engine_runs_it(config, ["tftrain:kubeconfig"]):
        assert Path.cwd() == PROJECT / "infra"
        assert json.loads(os.environ["PULUMI_CONFIG"]) == config
        assert json.loads(os.environ["PULUMI_CONFIG_SECRET_KEYS"]) == ["tftrain:kubeconfig"]
    assert Path.cwd() == PROJECT
    assert os.environ["PULUMI_CONFIG"] == "before"
    assert "PULUMI_CONFIG_SECRET_KEYS" not in os.environ


def test_the_callers_process_is_given_back_when_the_program_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(PROJECT)
    monkeypatch.delenv("PULUMI_CONFIG", raising=False)
    with pytest.raises(RuntimeError), as_the_engine_runs_it({}, []):
        raise RuntimeError("the program's error")
    assert Path.cwd() == PROJECT
    assert "PULUMI_CONFIG" not in os.environ
