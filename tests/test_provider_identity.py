"""The Kubernetes provider is replaced only when the cluster is (issue 22).

pulumi-kubernetes' ProviderArgs: "If present, this value [clusterIdentifier] will control the
provider's replacement behavior. In particular, the provider will _only_ be replaced when
`clusterIdentifier` changes; all other changes to provider configuration will be treated as
updates." (pulumi_kubernetes/provider.py, 4.34). Without it, any kubeconfig change replaces
the provider and every object it manages (pulumi-kubernetes #1148, #4019).
"""

from __future__ import annotations

from tests.pulumi_mocks import run_program

PROVIDER = "pulumi:providers:kubernetes"


def _provider(run) -> dict:  # type: ignore[no-untyped-def]
    (provider,) = run.of_type(PROVIDER)
    return provider


def test_a_new_credential_for_the_same_existing_cluster_keeps_the_provider_identity() -> None:
    before = _provider(run_program("dev", secrets={"kubeconfig": "apiVersion: v1\n# one\n"}))
    after = _provider(run_program("dev", secrets={"kubeconfig": "apiVersion: v1\n# two\n"}))
    assert before.inputs["kubeconfig"] != after.inputs["kubeconfig"]
    assert before.inputs["clusterIdentifier"] == after.inputs["clusterIdentifier"]
    assert before.inputs["clusterIdentifier"] == "existing/default"


def test_another_existing_cluster_is_another_identity() -> None:
    image = "registry.example.com/tftrain/trainer:1"
    provider = _provider(run_program({"image": image, "cluster": {"name": "gpu-b"}}))
    assert provider.inputs["clusterIdentifier"] == "existing/gpu-b"


def test_a_created_cluster_is_identified_by_its_id() -> None:
    """The mock cloud names each resource's id `<resource name>-id` (infra/mock_deploy.py)."""
    for stack, cluster in (("ack-gpu", "cluster-ack"), ("ask-eci", "cluster-ask")):
        assert _provider(run_program(stack)).inputs["clusterIdentifier"] == f"{cluster}-id"
