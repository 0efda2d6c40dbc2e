"""A stack on an existing cluster (stacks/Pulumi.dev.yaml): what the program hands the
Kubernetes provider and what it exports, under the mock deployment. Expected values come from
the stack file and docs/data.md ("Bring your data": on an existing cluster the endpoint is the
user's and the volumes authenticate with the named Secret, so the least-privilege policy to
attach is exported)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from infra.config import read_stack_file, stack_file
from tests.pulumi_mocks import run_program

PROVIDER = "pulumi:providers:kubernetes"
ENDPOINT = "oss-cn-hangzhou-internal.aliyuncs.com"
BUCKET = "team-data-01"


def dev_with_data() -> dict[str, Any]:
    raw = read_stack_file(stack_file("dev"))
    raw["data"] = {
        "bucket": BUCKET,
        "inputPrefix": "datasets/mnist/",
        "exportPrefix": "results/",
        "credentialsSecret": "oss/oss-credentials",
        "endpoint": ENDPOINT,
    }
    return raw


def test_without_a_kubeconfig_the_provider_gets_none_and_uses_the_ambient_one() -> None:
    run = run_program("dev")
    (provider,) = run.of_type(PROVIDER)
    assert "kubeconfig" not in provider.inputs
    assert provider.inputs["clusterIdentifier"] == "existing/default"


def test_a_kubeconfig_written_as_json_reaches_the_provider_as_the_same_text() -> None:
    # kubectl reads a kubeconfig in JSON as well as YAML; the program decodes JSON objects in
    # other keys, but the provider's kubeconfig input is text.
    kubeconfig = '{"apiVersion": "v1", "kind": "Config", "clusters": []}'
    run = run_program("dev", secrets={"kubeconfig": kubeconfig})
    (provider,) = run.of_type(PROVIDER)
    assert provider.inputs["kubeconfig"] == kubeconfig


@pytest.mark.parametrize("with_data", [False, True], ids=["no-data", "oss-data"])
def test_a_kubeconfig_given_reaches_the_provider_as_a_secret(with_data: bool) -> None:
    kubeconfig = "apiVersion: v1\nkind: Config\n"
    run = run_program(dev_with_data() if with_data else "dev", secrets={"kubeconfig": kubeconfig})
    (provider,) = run.of_type(PROVIDER)
    assert provider.inputs["kubeconfig"] == kubeconfig
    assert "kubeconfig" in provider.secret_paths
    # The cluster is named by cluster.name (none here), with or without data.
    assert provider.inputs["clusterIdentifier"] == "existing/default"


def test_the_oss_data_of_an_existing_cluster_is_exported_with_the_policy_to_attach() -> None:
    run = run_program(dev_with_data())
    assert run.error is None
    assert run.outputs["ossEndpoint"] == ENDPOINT
    assert run.outputs["ossBucket"] == BUCKET
    policy = json.loads(run.outputs["ossAccessPolicy"])
    resources = {r for s in policy["Statement"] for r in s.get("Resource", [])}
    assert f"acs:oss:*:*:{BUCKET}/datasets/mnist/*" in resources
    assert "ossRoleName" not in run.outputs  # no role of the stack's on an existing cluster


def test_an_existing_cluster_without_oss_data_exports_no_oss_output() -> None:
    run = run_program("dev")
    assert not {key for key in run.outputs if key.startswith("oss")}
