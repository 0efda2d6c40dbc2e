"""The whole program under Pulumi mocks, for every stack file: what `pulumi up` would register.

Each stack runs once (cached); the assertions read the recorded resources and exports.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from infra.config import StackConfig, load_stack, parse_config, read_stack_file, stack_file
from infra.manifests import build_objects, object_key
from infra.manifests.run_access import platform_objects
from infra.manifests.tensorboard import (
    SLB_ACL_ID,
    SLB_ACL_STATUS,
    SLB_ACL_TYPE,
    SLB_ADDRESS_TYPE,
    tensorboard_name,
)
from infra.platform.cluster_facts import GPU_NODE_LABEL, GPU_TAINT_KEY, EciNetwork, cluster_facts
from infra.topology import TF_PORT
from tests.pulumi_mocks import (
    FAKE_KUBECONFIG,
    Recorded,
    all_stacks,
    deployed_outputs,
    platform_stack_of,
    run_program,
    run_stacks,
)
from tests.shared_values import shared

STACKS = all_stacks()
RUN_STACKS = run_stacks()  # all but platform stacks: those with Kubernetes objects
IMAGE = "registry.example.com/tftrain/trainer:1"
ACCESS_RULE = "alicloud:nas/accessRule:AccessRule"
VSWITCH = "alicloud:vpc/switch:Switch"


@shared
def recorded(stack: str) -> Recorded:
    return run_program(stack)


def env_of(job: dict[str, Any]) -> dict[str, str]:
    (container,) = job["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e["value"] for e in container["env"] if "value" in e}


def shared_volume(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The NAS/NFS/hostPath volume or claim (named `...-data`), not the OSS input/export."""
    return [obj for obj in objects if obj["metadata"]["name"].endswith("-data")]


def stack_volumes(stack: str) -> list[dict[str, Any]]:
    """The stack's PersistentVolumes; a run stack's are those its platform issued its
    namespace (it makes none)."""
    platform = platform_stack_of(stack)
    if not platform:
        return recorded(stack).objects_of_kind("PersistentVolume")
    assert not recorded(stack).objects_of_kind("PersistentVolume")
    namespace = load_stack(stack).job.namespace
    issued = recorded(platform.rsplit("/", 1)[-1]).objects_of_kind("PersistentVolume")
    return [pv for pv in issued if pv["spec"]["claimRef"]["namespace"] == namespace]


def limits_of(obj: dict[str, Any]) -> dict[str, Any]:
    (container,) = obj["spec"]["template"]["spec"]["containers"]
    return container["resources"]["limits"]


@pytest.mark.parametrize("stack", RUN_STACKS)
def test_the_claim_binds_exactly_the_volume(stack: str) -> None:
    config = load_stack(stack)
    run = recorded(stack)
    (volume,) = shared_volume(stack_volumes(stack))
    (claim,) = shared_volume(run.objects_of_kind("PersistentVolumeClaim"))
    pv_labels = volume["metadata"]["labels"]
    assert claim["spec"]["selector"]["matchLabels"] == pv_labels
    ref = volume["spec"]["claimRef"]
    assert (ref["namespace"], ref["name"]) == (config.job.namespace, claim["metadata"]["name"])
    if config.cluster.role != "run":  # a run's volume is labelled by its platform
        assert config.storage.pv_labels.items() <= pv_labels.items()
    assert volume["spec"]["storageClassName"] == claim["spec"]["storageClassName"] == ""
    assert volume["spec"]["accessModes"] == claim["spec"]["accessModes"] == ["ReadWriteMany"]
    assert volume["spec"]["persistentVolumeReclaimPolicy"] == "Retain"


@pytest.mark.parametrize("stack", RUN_STACKS)
def test_nas_volume_is_a_per_namespace_directory_the_pods_can_write(stack: str) -> None:
    config = load_stack(stack)
    (volume,) = shared_volume(stack_volumes(stack))
    if config.storage.kind != "nas":
        assert "csi" not in volume["spec"]
        return
    attributes = volume["spec"]["csi"]["volumeAttributes"]
    # The CSI plugin rejects a mode on "/" and applies it to a sub-directory only.
    assert attributes["path"] == f"/tftrain/{config.job.namespace}"
    mode = int(attributes["mode"], 8)
    # The directory is root's (the plugin makes it; nothing chowns): the trainer, uid 10000,
    # writes as "other", which needs write + search; listing and setuid bits are not granted.
    assert mode & 0o003 == 0o003
    assert mode & 0o004 == 0
    assert mode & ~0o777 == 0
    assert "modeType" not in attributes  # never recursive: the runs below are the trainer's
    assert volume["spec"]["persistentVolumeReclaimPolicy"] == "Retain"


@pytest.mark.parametrize("stack", [s for s in STACKS if load_stack(s).cluster.kind != "existing"])
def test_cloud_stacks_pull_from_the_registry_vpc_endpoint(stack: str) -> None:
    # The public endpoint would route every image pull through the NAT's capped EIP.
    config = load_stack(stack)
    images = {g.image for g in config.replica_groups if g.number} | {config.tensorboard.image}
    for image in images:
        host = image.split("/", 1)[0]
        if host.endswith(".aliyuncs.com"):
            assert host.startswith("registry-vpc."), image


@pytest.mark.parametrize("stack", RUN_STACKS)
def test_tf_config_names_exactly_the_services_that_exist(stack: str) -> None:
    run = recorded(stack)
    namespace = load_stack(stack).job.namespace
    headless = {
        f"{svc['metadata']['name']}.{namespace}.svc:{TF_PORT}"
        for svc in run.objects_of_kind("Service")
        if svc["spec"].get("clusterIP") == "None"
    }
    runs: dict[str, list[dict[str, Any]]] = {}  # a sweep has one run per trial
    for job in run.objects_of_kind("Job"):
        runs.setdefault(job["metadata"]["labels"]["tftrain.io/run-id"], []).append(job)
    assert runs
    for jobs in runs.values():
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
    run = recorded(stack)
    caches = run.objects_of_kind("ImageCache")
    assert len(caches) == (1 if config.cluster.kind == "ask" and config.cluster.image_cache else 0)
    for image_cache in caches:
        images = {g.image for g in config.replica_groups if g.number} | {config.tensorboard.image}
        assert set(image_cache["spec"]["images"]) == images
        assert "namespace" not in image_cache["metadata"]
    # A new image list is a new cache (docs/cloud-evidence.md): a changed spec replaces it,
    # and nothing else the stack makes is replaced on an input of its choosing.
    replaced = {r.type.rpartition(":")[2]: r.replace_on_changes
                for r in run.resources if r.replace_on_changes}  # fmt: skip
    assert replaced == ({"ImageCache": ("spec",)} if caches else {})


@pytest.mark.parametrize("stack", STACKS)
def test_no_duplicate_resources(stack: str) -> None:
    # The mock monitor accepts duplicate names silently; the engine would not.
    counts = Counter((r.type, r.name) for r in recorded(stack).resources)
    assert [key for key, n in counts.items() if n > 1] == []


@pytest.mark.parametrize("stack", STACKS)
def test_every_object_of_a_namespace_the_stack_makes_is_created_after_it(stack: str) -> None:
    # The API server refuses a namespaced object whose Namespace does not exist yet.
    run = recorded(stack)
    made = {
        r.inputs["metadata"]["name"]: r.urn for r in run.of_type("kubernetes:core/v1:Namespace")
    }
    inside = [
        r for r in run.resources
        if r.type.startswith("kubernetes:") and r.custom and not r.name.startswith("existing-")
        and (r.inputs.get("metadata") or {}).get("namespace") in made
    ]  # fmt: skip
    assert all(made[r.inputs["metadata"]["namespace"]] in r.dependencies for r in inside), [
        r.name for r in inside if made[r.inputs["metadata"]["namespace"]] not in r.dependencies
    ]
    if load_stack(stack).cluster.role != "run":  # a run stack's namespace is its platform's
        assert made and inside


@pytest.mark.parametrize("stack", RUN_STACKS)
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


ALLOWED = ["203.0.113.0/24", "198.51.100.7/32"]
SLB_ACL = "alicloud:slb/acl:Acl"
SLB_ACL_ENTRY = "alicloud:slb/aclEntryAttachment:AclEntryAttachment"


def tensorboard_service_of(run: Recorded) -> dict[str, Any]:
    (service,) = [s for s in run.objects_of_kind("Service") if s["spec"].get("type")]
    return service


def test_public_tensorboard_is_an_explicit_opt_in_behind_an_allow_list() -> None:
    run = run_program(
        {"image": IMAGE, "tensorboard": {"public": True, "allowedSourceRanges": ALLOWED}}
    )
    service = tensorboard_service_of(run)
    assert service["spec"]["type"] == "LoadBalancer"
    assert service["metadata"]["annotations"][SLB_ADDRESS_TYPE] == "internet"
    assert service["spec"]["loadBalancerSourceRanges"] == ALLOWED
    # An existing cluster gets no cloud resources: no CLB ACL to name.
    assert SLB_ACL_ID not in service["metadata"]["annotations"]
    assert run.of_type(SLB_ACL) == []


def test_public_tensorboard_without_an_allow_list_creates_nothing() -> None:
    run = run_program({"image": IMAGE, "tensorboard": {"public": True}}, raise_errors=False)
    assert "tftrain:tensorboard.allowedSourceRanges = []" in str(run.error)
    assert run.resources == []


def test_cloud_tensorboard_allow_list_is_the_stack_s_clb_acl_as_a_whitelist() -> None:
    raw = read_stack_file(stack_file("ack-cpu"))
    raw["tensorboard"] = {"public": True, "allowedSourceRanges": ALLOWED}
    run = run_program(raw)

    (acl,) = run.of_type(SLB_ACL)
    entries = run.of_type(SLB_ACL_ENTRY)
    assert sorted(entry.inputs["entry"] for entry in entries) == sorted(ALLOWED)
    annotations = tensorboard_service_of(run)["metadata"]["annotations"]
    assert annotations[SLB_ACL_STATUS] == "on"
    assert annotations[SLB_ACL_TYPE] == "white"
    assert annotations[SLB_ACL_ID] == entries[0].inputs["aclId"]
    assert acl.inputs["ipVersion"] == "ipv4"


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
def test_nas_admits_only_the_vswitch_its_clients_mount_from(stack: str) -> None:
    config = load_stack(stack)
    rules = recorded(stack).of_type(ACCESS_RULE)
    if config.storage.kind != "nas" or not config.makes_cloud:  # a run's NAS is its platform's
        assert rules == []
        return
    (rule,) = rules
    # NFS is mounted from the nodes (ACK), in the cluster vSwitch (Terway's pod vSwitch never
    # mounts and is not admitted), or by the ECI pods themselves (a standalone ASK stack),
    # in the pod vSwitch; the cluster's vSwitch is then not admitted.
    vswitch_cidrs = {v.inputs["cidrBlock"] for v in recorded(stack).of_type(VSWITCH)}
    assert rule.inputs["sourceCidrIp"] in vswitch_cidrs
    network = config.network
    clients = network.pod_vswitch_cidr if stack == "ask-eci" else network.vswitch_cidr
    assert rule.inputs["sourceCidrIp"] == clients != network.vpc_cidr
    assert recorded(stack).outputs["nasDomain"].endswith(".nas.aliyuncs.com")


@pytest.mark.parametrize("stack", STACKS)
def test_cloud_stacks_pin_their_zone(stack: str) -> None:
    # A zone looked up at deploy time may change; the vSwitch, NAS and cluster would follow.
    run = recorded(stack)
    # (nas.get_zones, the zone stock check, reads which zones sell NAS; it picks none.)
    assert not [token for token, _ in run.calls if token == "alicloud:index/getZones:getZones"]
    for vswitch in run.of_type(VSWITCH):
        assert vswitch.inputs["zoneId"] == load_stack(stack).network.zone_id


@pytest.mark.parametrize("stack", RUN_STACKS)
def test_exports_tell_the_user_what_next(stack: str) -> None:
    config = load_stack(stack)
    outputs = recorded(stack).outputs
    assert outputs["namespace"] == config.job.namespace
    # A sweep's trials each tell theirs, by run id.
    trials = outputs.get("trials", {})
    assert sorted(trials) == sorted(trial.job.run_id for trial in config.trials)
    for run in config.runs:
        told = trials[run.job.run_id] if config.trials else outputs
        assert told.get("runId", run.job.run_id) == run.job.run_id
        assert told["outputDir"] == run.output_dir
        assert told.get("point", {}) == run.trial_point
        name = run.run_name
        lead = f"{name}-chief-0" if run.chief.number else f"{name}-worker-0"
        assert told["kubectl"]["logs"] == f"kubectl -n {run.job.namespace} logs -f job/{lead}"
        assert run.job.run_id in told["kubectl"]["status"]
    namespace = config.job.namespace
    if config.trials:  # every trial's Jobs, by the label they share (tftrain.io/job)
        assert outputs["kubectl"]["status"] == (
            f"kubectl -n {namespace} get jobs -l tftrain.io/job={config.job.name}"
        )
    if "kubeconfig" in outputs:  # how to point kubectl at the cluster the stack made
        assert outputs["kubectl"]["kubeconfig"] == (
            "pulumi stack output --show-secrets kubeconfig > kubeconfig.yaml"
            " && export KUBECONFIG=$PWD/kubeconfig.yaml"
        )
    board = config.tensorboard
    if board.enabled and board.service_type == "ClusterIP":
        # Reached through a port-forward to TensorBoard's default port.
        assert outputs["tensorboardPortForward"] == (
            f"kubectl -n {namespace} port-forward svc/{config.job.name}-tensorboard 6006"
        )
        assert outputs["tensorboardUrl"] == "http://localhost:6006"


@pytest.mark.parametrize("stack", STACKS)
def test_registered_objects_are_the_offline_render(stack: str) -> None:
    """Program and render share the builders: only cloud-decided facts may differ."""
    config = load_stack(stack)
    run = recorded(stack)
    outputs = dict(run.outputs)
    if platform := platform_stack_of(stack):  # a run's cloud facts are its platform's outputs
        outputs = {**deployed_outputs(platform.rsplit("/", 1)[-1]).values, **outputs}
    facts = cluster_facts(
        config,
        nas_domain=outputs.get("nasDomain"),
        oss_endpoint=outputs.get("ossEndpoint"),
        oss_role_name=outputs.get("ossRoleName"),
        oss_bucket=outputs.get("ossBucket"),
        # The ids the mock gives the ECI pods' vSwitch and groups (`<resource name>-id`).
        eci_network=EciNetwork("network-pod-vswitch-id", "pods-replicas-id", "pods-tensorboard-id"),
    )
    objects = build_objects(config, facts)
    if not config.has_run:  # what it issues its run namespaces, each with its own RAM role
        objects = platform_objects(config, facts, outputs.get("runOssRoleNames", {}))
    expected = {object_key(o): o for o in objects}
    actual = {object_key(o): o for o in run.kube_objects()}
    assert actual == expected


def test_gpu_placement_constants_agree_with_the_cloud_layer() -> None:
    cloud = pytest.importorskip("infra.cloud")
    assert cloud.GPU_NODE_LABEL == GPU_NODE_LABEL
    assert cloud.GPU_TAINT_KEY == GPU_TAINT_KEY


@pytest.mark.parametrize("stack", RUN_STACKS)
def test_network_policies_are_registered_as_typed_resources(stack: str) -> None:
    run = recorded(stack)
    typed = run.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
    namespace = load_stack(stack).job.namespace
    assert {r.name for r in typed} == {
        f"{namespace}/{p['metadata']['name']}" for p in run.objects_of_kind("NetworkPolicy")
    }
    # deny, egress, TensorBoard's, and one training policy per run (a sweep's trials)
    config = load_stack(stack)
    assert len(typed) == 2 + config.tensorboard.enabled + len(config.runs)


DIGEST = "sha256:" + "5f" * 32


def test_images_pinned_by_digest_reach_pods_and_image_cache_unchanged() -> None:
    trainer = f"registry.example.com/tftrain/trainer@{DIGEST}"
    gpu = f"registry.example.com/tftrain/trainer:0.1.0-gpu@{DIGEST.replace('5f', 'a0')}"
    board = f"registry.example.com/tftrain/trainer:0.1.0-cpu@{DIGEST}"
    stack = {
        "image": trainer,
        "cluster": {"kind": "ask", "eciGpuSpec": "ecs.gn6i-c4g1.xlarge"},
        "network": {"zoneId": "cn-hangzhou-i"},
        "worker": {"image": gpu, "gpuCount": 1},
        "tensorboard": {"image": board},
    }
    run = run_program(stack)
    images = {
        obj["metadata"]["name"]: obj["spec"]["template"]["spec"]["containers"][0]["image"]
        for obj in run.objects_of_kind("Job") + run.objects_of_kind("Deployment")
    }
    assert images == {
        "mnist-chief-0": trainer,
        "mnist-worker-0": gpu,
        "mnist-worker-1": gpu,
        "mnist-ps-0": trainer,
        "mnist-tensorboard": board,
    }
    # The cache lists exactly the strings the pods name: ECI matches pods' images to it.
    (cache_object,) = run.objects_of_kind("ImageCache")
    assert cache_object["spec"]["images"] == [trainer, gpu, board]
    # A new digest is a new run (and, with it, a replaced cache).
    moved = {**stack, "image": trainer.replace("5f", "6e")}
    assert parse_config(moved).job.run_id != parse_config(stack).job.run_id


def test_many_workers_keep_one_service_and_job_each() -> None:
    run = run_program({"image": IMAGE, "worker": {"number": 32}})
    config: StackConfig = parse_config({"image": IMAGE, "worker": {"number": 32}})
    replicas = 1 + 32 + 1
    assert len(run.objects_of_kind("Job")) == replicas
    assert len([s for s in run.objects_of_kind("Service") if "clusterIP" in s["spec"]]) == replicas
    assert run.outputs["runId"] == config.job.run_id


@pytest.mark.parametrize("stack", RUN_STACKS)
def test_every_job_mounts_the_supervisor_config_map_the_program_registers(stack: str) -> None:
    run = recorded(stack)
    (config_map,) = run.objects_of_kind("ConfigMap")
    assert run.of_type("kubernetes:core/v1:ConfigMap")  # typed, not a CustomResource
    for job in run.objects_of_kind("Job"):
        volumes = job["spec"]["template"]["spec"]["volumes"]
        names = [v["configMap"]["name"] for v in volumes if "configMap" in v]
        assert names == [config_map["metadata"]["name"]]


def _kube_urns(run: Recorded) -> dict[tuple[str, str, str], str]:
    """Each Kubernetes object the stack makes, by (kind, namespace, name)."""
    return {
        (r.type.rpartition(":")[2], r.inputs["metadata"].get("namespace", ""),
         r.inputs["metadata"]["name"]): r.urn
        for r in run.resources
        if r.type.startswith("kubernetes:") and r.custom and "metadata" in r.inputs
    }  # fmt: skip


@pytest.mark.parametrize("stack", RUN_STACKS)
def test_pods_are_created_after_what_they_read_and_what_isolates_them(stack: str) -> None:
    """The order Kubernetes does not enforce, as docs/cloud-evidence.md's Job, ImageCache and
    imagePullSecrets rows state it: the kubelet reads a pull Secret when it pulls and an env
    Secret when it starts a
    container; ECI matches a pod to an image cache only if the cache exists; a pod never runs
    before the NetworkPolicies that isolate it and admit its peers; a replica's Service (its
    DNS name) exists before its process; ECI reads a cache's pull Secrets as it builds it.
    With registry credentials, so that every pod and cache names a pull Secret."""
    server = load_stack(stack).images[0].split("/", 1)[0]
    credentials = {"server": server, "username": "u", "password": "p"}
    run = run_program(stack, secrets={"imageRegistry": json.dumps(credentials)})
    urns = _kube_urns(run)
    of_kind = {kind: {u for (k, _, _), u in urns.items() if k == kind} for kind in
               ("ImageCache", "NetworkPolicy")}  # fmt: skip
    owners = [r for r in run.resources if r.type.rpartition(":")[2] in ("Job", "Deployment")]
    assert owners
    for owner in owners:
        namespace, name = owner.inputs["metadata"]["namespace"], owner.inputs["metadata"]["name"]
        pod = owner.inputs["spec"]["template"]["spec"]
        pulls = {ref["name"] for ref in pod.get("imagePullSecrets", [])}
        envs = {
            env["valueFrom"]["secretKeyRef"]["name"]
            for container in pod["containers"]
            for env in container.get("env", [])
            if "secretKeyRef" in env.get("valueFrom", {})
        }
        assert pulls, name
        needed = {urns[("Secret", namespace, secret)] for secret in pulls | envs}
        needed |= of_kind["ImageCache"] | of_kind["NetworkPolicy"]
        if owner.type.endswith(":Job"):
            needed.add(urns[("Service", namespace, name)])
        assert needed <= set(owner.dependencies), (name, needed - set(owner.dependencies))
    for cache in run.resources:
        if cache.type.rpartition(":")[2] == "ImageCache":
            refs = [ref.split(":", 1) for ref in cache.inputs["spec"]["imagePullSecrets"]]
            assert refs
            secrets = {urns[("Secret", ref[0], ref[1])] for ref in refs}
            assert secrets <= set(cache.dependencies), cache.name


# Stacks that make their cluster (a run stack's is its platform's).
CLOUD_STACKS = [
    s for s in STACKS
    if load_stack(s).cluster.kind in ("ack", "ask") and load_stack(s).cluster.role != "run"
]  # fmt: skip
ASK_CLUSTER = "alicloud:cs/serverlessKubernetes:ServerlessKubernetes"


@pytest.mark.parametrize("stack", CLOUD_STACKS)
def test_the_kubernetes_provider_waits_for_the_nodes_and_keeps_its_name(stack: str) -> None:
    """docs/cloud-evidence.md, provider row: on ack it depends on the node pools (no pod is
    sent to a cluster without nodes), on ask on the cluster. Its name is in every Kubernetes
    object's provider reference in the state: a new name changes them all on `up`."""
    run = recorded(stack)
    (provider,) = run.of_type("pulumi:providers:kubernetes")
    assert provider.name == "k8s"
    kind = load_stack(stack).cluster.kind
    if kind == "ack":
        needed = {r.urn for r in run.of_type("alicloud:cs/nodePool:NodePool")}
    else:
        needed = {r.urn for r in run.of_type(ASK_CLUSTER)}
    assert needed and needed <= set(provider.dependencies)
    pod_vswitches = [r for r in run.of_type(VSWITCH) if r.name.endswith("pod-vswitch")]
    for vswitch in pod_vswitches:  # its description says whose addresses it holds
        whose = "ECI" if kind == "ask" else "Terway"
        assert vswitch.inputs["description"] == f"tftrain pod addresses ({whose}) of network"
    assert pod_vswitches or kind == "ask"


@pytest.mark.parametrize(
    ("stack", "gpu_pool"),
    # GPU nodes where a replica asks for a GPU, and on a platform, whose runs may.
    [("ack-gpu", True), ("platform-ack", True), ("ack-cpu", False)],
)
def test_an_ack_cluster_has_a_gpu_pool_where_gpus_may_be_asked_for(
    stack: str, gpu_pool: bool
) -> None:
    pools = {r.name for r in recorded(stack).of_type("alicloud:cs/nodePool:NodePool")}
    assert ("cluster-gpu-pool" in pools) is gpu_pool, pools
    assert "cluster-cpu-pool" in pools


def test_a_cluster_on_its_own_nfs_server_makes_no_nas() -> None:
    raw = read_stack_file(stack_file("ack-cpu"))
    raw["storage"] = {"kind": "nfs", "nfsServer": "10.0.1.5", "nfsPath": "/exports/tftrain"}
    run = run_program(raw)
    assert not [r for r in run.resources if r.type.startswith("alicloud:nas/")]
    (volume,) = run.objects_of_kind("PersistentVolume")
    assert volume["spec"]["nfs"] == {"server": "10.0.1.5", "path": "/exports/tftrain"}
