"""Platform and run stacks (issue 22): one platform holds the cloud side, run stacks on it hold
only Kubernetes objects, read the platform through a StackReference, and never touch each other.

The platforms are deployed under the one fake cloud first; their recorded outputs are what the
run stacks' StackReference answers, as the Pulumi service would hand them over. Expected values
come from the platform's own deployment and from the Kubernetes schemas, not from the program.
"""

from __future__ import annotations

import copy
from typing import Any

import kubernetes_validate
import pytest

from infra.config import ConfigError, load_stack, parse_config, read_stack_file, stack_file
from infra.manifests import object_key
from infra.mock_deploy import STACK_REFERENCE, StackOutputs
from infra.platform.outputs import (
    CLUSTER_ID,
    CLUSTER_KIND,
    KUBECONFIG,
    NAS_DOMAIN,
    REGION,
    RUN_KUBECONFIGS,
    RUN_OSS_ROLE_NAMES,
    required_outputs,
)
from infra.render import render_stack
from tests.pulumi_mocks import Recorded, deployed_outputs, run_program
from tests.shared_values import shared
from tests.test_manifests_schema import schema_version

PROVIDER = "pulumi:providers:kubernetes"
IMAGE = "registry-vpc.cn-hangzhou.aliyuncs.com/tftrain/trainer:0.1.0-cpu"
# An ASK platform, and a run on it with GPU workers on ECI and the image cache.
PLATFORM_ASK: dict[str, Any] = {
    "alicloud:region": "cn-hangzhou",
    "cluster": {"kind": "ask", "role": "platform", "runNamespaces": ["ask-trial"]},
    "network": {"zoneId": "cn-hangzhou-i"},
    "storage": {"kind": "nas"},
}
RUN_ASK: dict[str, Any] = {
    "cluster": {
        "kind": "ask",
        "role": "run",
        "platformStack": "organization/tftrain/platform-ask",
        "eciGpuSpec": "ecs.gn6i-c4g1.xlarge",
    },
    "job": {"namespace": "ask-trial"},
    "image": IMAGE,
    "worker": {"number": 2, "gpuCount": 1, "cpu": "4", "memory": "15Gi"},
}


@shared
def platform(name: str) -> StackOutputs:
    return deployed_outputs(PLATFORM_ASK if name == "platform-ask" else name)


@shared
def platform_run(name: str) -> Recorded:
    return run_program(PLATFORM_ASK if name == "platform-ask" else name)


def run_stack(name: str) -> dict[str, Any]:
    """A run stack's prefix-less config: run-ack as checked in, or RUN_ASK."""
    return copy.deepcopy(RUN_ASK) if name == "run-ask" else read_stack_file(stack_file(name))


def deploy_run(raw: dict[str, Any], outputs: StackOutputs | None = None) -> Recorded:
    reference = raw["cluster"]["platformStack"].rsplit("/", 1)[-1]
    return run_program(raw, platform=outputs or platform(reference), raise_errors=False)


RUNS = {"run-ack": "platform-ack", "run-ask": "platform-ask"}


@pytest.mark.parametrize("name", ["platform-ack", "platform-ask"])
def test_a_platform_makes_the_cloud_side_and_exports_what_runs_read(name: str) -> None:
    run = platform_run(name)
    assert run.error is None
    types = {r.type for r in run.resources}
    assert STACK_REFERENCE not in types
    # Its only Kubernetes objects are what it issues its run namespaces (test_run_namespaces).
    issued = {"Namespace", "ServiceAccount", "Role", "RoleBinding", "Secret", "PersistentVolume"}
    assert {obj["kind"] for obj in run.kube_objects()} <= issued
    kind = "ack" if name.endswith("ack") else "ask"
    cluster_type = (
        "alicloud:cs/managedKubernetes:ManagedKubernetes"
        if kind == "ack"
        else "alicloud:cs/serverlessKubernetes:ServerlessKubernetes"
    )
    assert cluster_type in types
    assert "alicloud:nas/mountTarget:MountTarget" in types
    outputs = run.outputs
    for key in (CLUSTER_KIND, CLUSTER_ID, KUBECONFIG, NAS_DOMAIN, REGION):
        assert outputs.get(key), key
    assert outputs[CLUSTER_KIND] == kind
    assert outputs[REGION] == "cn-hangzhou"
    assert outputs[NAS_DOMAIN].endswith(".nas.aliyuncs.com")
    # Pulumi secrets, never plain outputs: its own credential and those it issues.
    assert {KUBECONFIG, RUN_KUBECONFIGS} <= run.secret_outputs
    # ACK with a bucket and RRSA: a role per run namespace, none for the platform itself.
    if kind == "ack":
        (role,) = run.of_type("alicloud:ram/role:Role")
        assert outputs[RUN_OSS_ROLE_NAMES] == {"lr-sweep-a": role.inputs["roleName"]}


def test_a_platform_without_run_sections_needs_no_image_and_refuses_run_keys() -> None:
    parse_config({k: v for k, v in PLATFORM_ASK.items() if not k.startswith("alicloud:")})
    with pytest.raises(ConfigError) as error:
        parse_config({**read_stack_file(stack_file("platform-ack")), "hyperparams": {}})
    assert "tftrain:hyperparams: a run's key" in str(error.value)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_run_stack_registers_only_kubernetes_objects_on_its_platform(name: str) -> None:
    raw = run_stack(name)
    config = parse_config(raw)
    outputs = platform(RUNS[name]).values
    run = deploy_run(raw)
    assert run.error is None, run.error
    # Not one cloud resource, not one component of the cloud layer.
    for registration in run.resources:
        assert registration.type.startswith("kubernetes:") or registration.type in (
            PROVIDER,
            STACK_REFERENCE,
        ), registration.type
    (reference,) = run.of_type(STACK_REFERENCE)
    assert reference.inputs["name"] == config.cluster.platform_stack
    # The provider is the platform's cluster: its id as identity, and as credential the one
    # the platform issued to this run's namespace (not its own), a secret.
    namespace = config.job.namespace
    (provider,) = run.of_type(PROVIDER)
    assert provider.inputs["clusterIdentifier"] == outputs[CLUSTER_ID]
    assert provider.inputs["kubeconfig"] == outputs[RUN_KUBECONFIGS][namespace]
    assert provider.inputs["kubeconfig"] != outputs[KUBECONFIG]
    assert "kubeconfig" in provider.secret_paths
    # Every object is a valid Kubernetes object in the run's own namespace: nothing
    # cluster-scoped (its namespace and volumes are the platform's).
    version = schema_version(config)
    objects = run.kube_objects()
    assert objects
    for obj in objects:
        kubernetes_validate.validate(obj, version, strict=True)
        assert obj["metadata"]["namespace"] == namespace, obj["kind"]


def _objects(run: Recorded) -> dict[tuple[str, str, str, str], dict[str, Any]]:
    return {object_key(obj): obj for obj in run.kube_objects()}


def test_a_learning_rate_change_touches_only_that_runs_objects() -> None:
    before_raw = run_stack("run-ack")
    after_raw = copy.deepcopy(before_raw)
    after_raw["hyperparams"]["learningRate"] = 0.01
    other_raw = copy.deepcopy(before_raw)
    other_raw["job"]["namespace"] = "lr-sweep-b"
    outputs = platform("platform-ack")
    kubeconfigs = outputs.values[RUN_KUBECONFIGS]
    both = {
        **outputs.values,
        RUN_KUBECONFIGS: {**kubeconfigs, "lr-sweep-b": kubeconfigs["lr-sweep-a"]},
    }
    before, after, other = (
        deploy_run(raw, StackOutputs(both, outputs.secret))
        for raw in (before_raw, after_raw, other_raw)
    )
    assert before.error is None and after.error is None and other.error is None
    # No cloud resource at all, so nothing of the platform can change.
    assert not [r for r in after.resources if r.type.startswith(("alicloud:", "tftrain:"))]
    old, new = _objects(before), _objects(after)
    assert old.keys() == new.keys()
    changed = [key for key in new if new[key] != old[key]]
    namespace = before_raw["job"]["namespace"]
    assert changed and all(key[2] == namespace for key in changed)
    assert {key[1] for key in changed} >= {"Job"}
    # Another run on the same platform shares no object with it.
    assert not _objects(other).keys() & new.keys()


@pytest.mark.parametrize("missing", required_outputs(load_stack("run-ack")))
def test_a_missing_platform_output_fails_before_any_object(missing: str) -> None:
    outputs = platform("platform-ack")
    values = {key: value for key, value in outputs.values.items() if key != missing}
    run = deploy_run(run_stack("run-ack"), StackOutputs(values, outputs.secret))
    message = str(run.error)
    assert message.startswith("tftrain:cluster.platformStack = 'organization/tftrain/platform-ack'")
    assert f"no output {missing}," in message
    # Only the read of the platform's outputs; no provider, no object.
    assert [r.type for r in run.resources] == [STACK_REFERENCE]


@pytest.mark.parametrize("empty", required_outputs(load_stack("run-ack")))
def test_an_empty_platform_output_counts_as_missing(empty: str) -> None:
    # A stack output exported as "" (an unset value) gives a run nothing to connect to.
    outputs = platform("platform-ack")
    values = {**outputs.values, empty: ""}
    run = deploy_run(run_stack("run-ack"), StackOutputs(values, outputs.secret))
    assert f"no output {empty}," in str(run.error)
    assert [r.type for r in run.resources] == [STACK_REFERENCE]


def test_a_platform_of_another_kind_is_refused_before_any_object() -> None:
    raw = run_stack("run-ack")
    run = deploy_run(raw, platform("platform-ask"))
    assert str(run.error).startswith("tftrain:cluster.kind = 'ack': must be ask")
    assert [r.type for r in run.resources] == [STACK_REFERENCE]


def test_the_offline_render_of_a_run_shows_the_platform_as_placeholders() -> None:
    text = render_stack("run-ack")
    assert "alicloud:" not in text
    assert "pulumi:pulumi:StackReference  platform" in text
    assert "kubeconfig: <secret>" in text
    assert "clusterIdentifier: <platform output clusterId>" in text
    assert "kind: PersistentVolume\n" not in text and "kind: Namespace" not in text
    platform_text = render_stack("platform-ack")
    assert "kind: Job" not in platform_text and "alicloud:cs/managedKubernetes" in platform_text


def test_a_platform_parks_with_config_alone() -> None:
    """What the README's parking table sets: no CPU and no GPU node on ACK (its NAT stays: ACK
    would make its own without the stack's); no NAT gateway and EIP on ASK."""
    raw = read_stack_file(stack_file("platform-ack"))
    raw["cluster"]["cpuPool"] = {"size": 0}
    raw["cluster"]["gpuPool"] = {"maxSize": 0}
    run = run_program({**raw, "alicloud:region": "cn-hangzhou"})
    types = {r.type for r in run.resources}
    assert "alicloud:cs/managedKubernetes:ManagedKubernetes" in types  # the cluster stays
    (pool,) = run.of_type("alicloud:cs/nodePool:NodePool")  # the CPU pool, empty
    assert pool.inputs.get("desiredSize") in (0, "0", None)
    assert not pool.inputs.get("scalingConfig")
    # A stack with a run still needs CPU nodes for its ps and TensorBoard.
    standalone = {**read_stack_file(stack_file("ack-gpu")), "cluster": {**raw["cluster"]}}
    standalone["cluster"].pop("role")
    with pytest.raises(ConfigError, match=r"tftrain:cluster\.cpuPool\.size"):
        parse_config(standalone)
    ask = {**PLATFORM_ASK, "network": {**PLATFORM_ASK["network"], "natGateway": False}}
    types = {r.type for r in run_program(ask).resources}
    assert "alicloud:cs/serverlessKubernetes:ServerlessKubernetes" in types
    assert not types & {"alicloud:vpc/natGateway:NatGateway", "alicloud:ecs/eipAddress:EipAddress"}


def test_a_run_stops_before_any_object_when_the_platforms_api_server_is_out_of_reach(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from infra.cloud import api_server_reach

    outputs = platform("platform-ack")  # deployed from inside its VPC
    monkeypatch.setattr(api_server_reach, "connects", lambda endpoint, timeout=5.0: False)
    run = deploy_run(run_stack("run-ack"), outputs)
    assert str(run.error).startswith(
        "tftrain:cluster.platformStack = 'organization/tftrain/platform-ack': this machine "
        "cannot reach the cluster's API server"
    )
    assert [r.type for r in run.resources] == [STACK_REFERENCE]
