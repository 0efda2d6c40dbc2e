"""The whole program under Pulumi mocks, for every stack file: what `pulumi up` would register.

Each stack runs once (cached); the assertions read the recorded resources and exports.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from typing import Any

import pytest

from infra.cluster_facts import GPU_NODE_LABEL, GPU_TAINT_KEY, cluster_facts
from infra.config import StackConfig, load_stack, parse_config
from infra.manifests import build_objects, object_key
from infra.manifests.tensorboard import SLB_ADDRESS_TYPE, tensorboard_name
from infra.topology import TF_PORT
from tests.pulumi_mocks import FAKE_KUBECONFIG, Recorded, all_stacks, run_program

STACKS = all_stacks()
IMAGE = "registry.example.com/tftrain/trainer:1"
ACCESS_RULE = "alicloud:nas/accessRule:AccessRule"
VPC = "alicloud:vpc/network:Network"


@cache
def recorded(stack: str) -> Recorded:
    return run_program(stack)


def env_of(job: dict[str, Any]) -> dict[str, str]:
    (container,) = job["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e["value"] for e in container["env"] if "value" in e}


def limits_of(obj: dict[str, Any]) -> dict[str, Any]:
    (container,) = obj["spec"]["template"]["spec"]["containers"]
    return container["resources"]["limits"]


@pytest.mark.parametrize("stack", STACKS)
def test_the_claim_binds_exactly_the_volume(stack: str) -> None:
    config = load_stack(stack)
    run = recorded(stack)
    (volume,) = run.objects_of_kind("PersistentVolume")
    (claim,) = run.objects_of_kind("PersistentVolumeClaim")
    pv_labels = volume["metadata"]["labels"]
    assert claim["spec"]["selector"]["matchLabels"] == pv_labels
    assert config.storage.pv_labels.items() <= pv_labels.items()
    assert volume["spec"]["storageClassName"] == claim["spec"]["storageClassName"] == ""
    assert volume["spec"]["accessModes"] == claim["spec"]["accessModes"] == ["ReadWriteMany"]
    assert volume["spec"]["persistentVolumeReclaimPolicy"] == "Retain"


@pytest.mark.parametrize("stack", STACKS)
def test_tf_config_names_exactly_the_services_that_exist(stack: str) -> None:
    run = recorded(stack)
    namespace = load_stack(stack).job.namespace
    headless = {
        f"{svc['metadata']['name']}.{namespace}.svc:{TF_PORT}"
        for svc in run.objects_of_kind("Service")
        if svc["spec"].get("clusterIP") == "None"
    }
    jobs = run.objects_of_kind("Job")
    assert jobs
    trained = set()
    for job in jobs:
        tf_config = json.loads(env_of(job)["TF_CONFIG"])
        addresses = {a for group in tf_config["cluster"].values() for a in group}
        assert addresses <= headless, f"{job['metadata']['name']} dials a missing Service"
        task = tf_config["task"]
        name = job["metadata"]["name"]
        assert name.endswith(f"-{task['type']}-{task['index']}")
        assert tf_config["environment"] == "cloud"
        if task["type"] != "evaluator":
            trained.add(f"{name}.{namespace}.svc:{TF_PORT}")
        cluster = tf_config["cluster"]
        assert cluster == json.loads(env_of(jobs[0])["TF_CONFIG"])["cluster"]
    assert trained == {a for g in cluster.values() for a in g}


@pytest.mark.parametrize("stack", STACKS)
def test_gpus_only_where_configured(stack: str) -> None:
    config = load_stack(stack)
    run = recorded(stack)
    for job in run.objects_of_kind("Job"):
        replica_type = job["metadata"]["labels"]["tftrain.io/replica-type"]
        group = next(g for g in config.replica_groups if g.type == replica_type)
        expected = str(group.gpu_count) if group.gpu_count else None
        assert limits_of(job).get("nvidia.com/gpu") == expected
    if config.uses_gpu:
        assert any("nvidia.com/gpu" in limits_of(job) for job in run.objects_of_kind("Job"))
    else:
        assert "nvidia.com/gpu" not in json.dumps(run.kube_objects())


@pytest.mark.parametrize("stack", STACKS)
def test_gpu_replicas_land_on_gpus(stack: str) -> None:
    config = load_stack(stack)
    for job in recorded(stack).objects_of_kind("Job"):
        template = job["spec"]["template"]
        uses_gpu = "nvidia.com/gpu" in limits_of(job)
        annotations = template["metadata"].get("annotations", {})
        if config.cluster.kind == "ack":
            selector = template["spec"].get("nodeSelector")
            assert selector == (dict([GPU_NODE_LABEL]) if uses_gpu else None)
        if config.cluster.kind == "ask":
            spec = annotations.get("k8s.aliyun.com/eci-use-specs")
            assert spec == (config.cluster.eci_gpu_spec if uses_gpu else None)
            assert (
                annotations["k8s.aliyun.com/eci-auto-imc"]
                == str(config.cluster.image_cache).lower()
            )


@pytest.mark.parametrize("stack", STACKS)
def test_image_cache_only_on_ask(stack: str) -> None:
    config = load_stack(stack)
    caches = recorded(stack).objects_of_kind("ImageCache")
    assert len(caches) == (1 if config.cluster.kind == "ask" and config.cluster.image_cache else 0)
    for image_cache in caches:
        images = {g.image for g in config.replica_groups if g.number} | {config.tensorboard.image}
        assert set(image_cache["spec"]["images"]) == images
        assert "namespace" not in image_cache["metadata"]


@pytest.mark.parametrize("stack", STACKS)
def test_no_duplicate_resources(stack: str) -> None:
    # The mock monitor accepts duplicate names silently; the engine would not.
    counts = Counter((r.type, r.name) for r in recorded(stack).resources)
    assert [key for key, n in counts.items() if n > 1] == []


@pytest.mark.parametrize("stack", STACKS)
def test_tensorboard_is_not_public_by_default(stack: str) -> None:
    config = load_stack(stack)
    assert config.tensorboard.public is False
    service = next(
        s
        for s in recorded(stack).objects_of_kind("Service")
        if s["metadata"]["name"] == tensorboard_name(config)
    )
    if service["spec"]["type"] == "LoadBalancer":
        assert service["metadata"]["annotations"][SLB_ADDRESS_TYPE] == "intranet"
        assert recorded(stack).outputs["tensorboardUrl"].startswith("http://")
    else:
        assert "port-forward" in recorded(stack).outputs["tensorboardPortForward"]


def test_public_tensorboard_is_an_explicit_opt_in() -> None:
    run = run_program({"image": IMAGE, "tensorboard": {"public": True}})
    (service,) = [s for s in run.objects_of_kind("Service") if s["spec"].get("type")]
    assert service["spec"]["type"] == "LoadBalancer"
    assert service["metadata"]["annotations"][SLB_ADDRESS_TYPE] == "internet"


@pytest.mark.parametrize("stack", STACKS)
def test_kubeconfig_is_exported_only_as_a_secret(stack: str) -> None:
    run = recorded(stack)
    config = load_stack(stack)
    assert ("kubeconfig" in run.outputs) == (config.cluster.kind != "existing")
    _assert_kubeconfig_secret(run, FAKE_KUBECONFIG)


def test_a_given_kubeconfig_stays_secret() -> None:
    text = "apiVersion: v1\nkind: Config\n# given-kubeconfig-marker\n"
    run = run_program("dev", secrets={"kubeconfig": text})
    assert run.outputs["kubeconfig"] == text
    _assert_kubeconfig_secret(run, text)


def _assert_kubeconfig_secret(run: Recorded, text: str) -> None:
    if "kubeconfig" in run.outputs:
        assert "kubeconfig" in run.secret_outputs
    plain = {k: v for k, v in run.outputs.items() if k not in run.secret_outputs}
    assert text.strip().splitlines()[-1] not in json.dumps(plain)
    for provider in run.of_type("pulumi:providers:kubernetes"):
        if "kubeconfig" in provider.inputs:
            assert "kubeconfig" in provider.secret_paths
    for resource in run.resources:
        if resource.type != "pulumi:providers:kubernetes":
            assert text.strip().splitlines()[-1] not in json.dumps(resource.inputs)


@pytest.mark.parametrize("stack", STACKS)
def test_nas_admits_exactly_the_vpc(stack: str) -> None:
    config = load_stack(stack)
    rules = recorded(stack).of_type(ACCESS_RULE)
    if config.storage.kind != "nas":
        assert rules == []
        return
    (rule,) = rules
    (vpc,) = recorded(stack).of_type(VPC)
    assert rule.inputs["sourceCidrIp"] == vpc.inputs["cidrBlock"] == config.network.vpc_cidr
    assert recorded(stack).outputs["nasDomain"].endswith(".nas.aliyuncs.com")


@pytest.mark.parametrize("stack", STACKS)
def test_exports_tell_the_user_what_next(stack: str) -> None:
    config = load_stack(stack)
    outputs = recorded(stack).outputs
    assert outputs["namespace"] == config.job.namespace
    assert outputs["runId"] == config.job.run_id
    assert outputs["outputDir"] == config.output_dir
    lead = f"{config.job.name}-chief-0" if config.chief.number else f"{config.job.name}-worker-0"
    assert outputs["kubectl"]["logs"] == f"kubectl -n {config.job.namespace} logs -f job/{lead}"
    assert config.job.run_id in outputs["kubectl"]["status"]


@pytest.mark.parametrize("stack", STACKS)
def test_registered_objects_are_the_offline_render(stack: str) -> None:
    """Program and render share the builders: only cloud-decided facts may differ."""
    config = load_stack(stack)
    run = recorded(stack)
    facts = cluster_facts(config, nas_domain=run.outputs.get("nasDomain"))
    expected = {object_key(o): o for o in build_objects(config, facts)}
    actual = {object_key(o): o for o in run.kube_objects()}
    assert actual == expected


def test_gpu_placement_constants_agree_with_the_cloud_layer() -> None:
    cloud = pytest.importorskip("infra.cloud")
    assert cloud.GPU_NODE_LABEL == GPU_NODE_LABEL
    assert cloud.GPU_TAINT_KEY == GPU_TAINT_KEY


def test_many_workers_keep_one_service_and_job_each() -> None:
    run = run_program({"image": IMAGE, "worker": {"number": 32}})
    config: StackConfig = parse_config({"image": IMAGE, "worker": {"number": 32}})
    replicas = 1 + 32 + 1
    assert len(run.objects_of_kind("Job")) == replicas
    assert len([s for s in run.objects_of_kind("Service") if "clusterIP" in s["spec"]]) == replicas
    assert run.outputs["runId"] == config.job.run_id


@pytest.mark.parametrize("stack", STACKS)
def test_every_job_mounts_the_supervisor_config_map_the_program_registers(stack: str) -> None:
    run = recorded(stack)
    (config_map,) = run.objects_of_kind("ConfigMap")
    assert run.of_type("kubernetes:core/v1:ConfigMap")  # typed, not a CustomResource
    for job in run.objects_of_kind("Job"):
        volumes = job["spec"]["template"]["spec"]["volumes"]
        names = [v["configMap"]["name"] for v in volumes if "configMap" in v]
        assert names == [config_map["metadata"]["name"]]
