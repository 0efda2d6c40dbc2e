"""The OSS input and export in the cloud: every stack with an input and an export renders
objects the cluster's API accepts, mounts them as the CSI OSS plugin reads its attributes, and
gets the credentials its cluster kind supports, under Pulumi mocks.

Expected values come from outside the code under test: attribute names and the ossfs pods'
service account from kubernetes-sigs/alibaba-cloud-csi-driver (pkg/oss/utils.go
parseOptions; pkg/oss/controllerserver.go fusePodNamespace; pkg/mounter/fuse_pod_manager
FuseServiceAccountName), the replica that ends a run from Kubeflow's TFJob success policy,
the RAM policy grammar from Alibaba's OSS RAM policy docs (docs/cloud-evidence.md).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import kubernetes_validate
import pulumi
import pytest

from infra.cloud.oss import OssBucket
from infra.config import StackConfig, parse_config, read_stack_file, stack_file
from infra.mock_deploy import Recorded
from tests.pulumi_mocks import (
    MOCK_OIDC_PROVIDER_ARN,
    deployed_outputs,
    platform_stack_of,
    run_program,
    run_stacks,
)
from tests.test_cloud_components import deploy
from tests.test_manifests_schema import schema_version

BUCKET = "team-data-01"
DRIVER = "ossplugin.csi.alibabacloud.com"
FUSE_SUBJECT = "system:serviceaccount:ack-csi-fuse:csi-fuse-ossfs"
# What each cluster kind needs besides bucket and prefixes (see README "Bring your data").
BY_KIND: dict[str, dict[str, Any]] = {
    "ack": {},
    "ask": {"credentialsSecret": "oss-credentials"},
    "existing": {
        "credentialsSecret": "oss-credentials",
        "endpoint": "oss-cn-hangzhou-internal.aliyuncs.com",
    },
}


@cache
def raw_with_data(stack: str) -> dict[str, Any]:
    raw = read_stack_file(stack_file(stack))
    kind = raw.get("cluster", {}).get("kind", "existing")
    raw["data"] = {
        "bucket": BUCKET,
        "inputPrefix": "datasets/mnist/",
        "exportPrefix": "results/",
        **BY_KIND[kind],
    }
    return raw


@cache
def deployed(stack: str) -> tuple[StackConfig, Recorded]:
    raw = raw_with_data(stack)
    return parse_config(raw), run_program(in_region(raw))


def in_region(raw: dict[str, Any]) -> dict[str, Any]:
    """The stack's config plus the provider region, as a checked-in stack file has it."""
    return {**raw, "alicloud:region": "cn-hangzhou"}


def oss_volumes(run: Recorded) -> dict[str, dict[str, Any]]:
    """{"input" | "export": PV} by what the volume allows: read-only is the input."""
    found = {}
    for volume in run.objects_of_kind("PersistentVolume"):
        csi = volume["spec"].get("csi", {})
        if csi.get("driver") == DRIVER:
            found["input" if csi.get("readOnly") else "export"] = volume
    return found


def training_pods(run: Recorded) -> dict[str, dict[str, Any]]:
    return {
        job["metadata"]["name"]: job["spec"]["template"]["spec"]
        for job in run.objects_of_kind("Job")
    }


def run_enders(config: StackConfig) -> dict[str, str]:
    """TFJob: the chief (or master) ends the run, worker 0 when there is none; by replica
    name, the run id of each run (a sweep has one per trial)."""
    return {
        f"{run.run_name}-{'chief' if run.chief.number else 'worker'}-0": run.job.run_id
        for run in config.runs
    }


STACKS = run_stacks()  # those with training pods


@pytest.mark.parametrize("stack", STACKS)
def test_every_object_validates_with_an_oss_input_and_export(stack: str) -> None:
    config, run = deployed(stack)
    version = schema_version(config)
    objects = run.objects_of_kind("PersistentVolume") + run.objects_of_kind("PersistentVolumeClaim")
    objects += run.objects_of_kind("Job")
    for obj in objects:
        kubernetes_validate.validate(
            {"apiVersion": "batch/v1" if obj["kind"] == "Job" else "v1", **obj},
            version,
            strict=True,
        )
    assert set(oss_volumes(run)) == {"input", "export"}


@pytest.mark.parametrize("stack", STACKS)
def test_the_input_is_the_prefix_read_only_and_each_claim_binds_its_volume(stack: str) -> None:
    _, run = deployed(stack)
    volumes = oss_volumes(run)
    claims = run.objects_of_kind("PersistentVolumeClaim")
    for role, prefix in (("input", "/datasets/mnist/"), ("export", "/results/")):
        volume = volumes[role]
        attributes = volume["spec"]["csi"]["volumeAttributes"]
        assert attributes["bucket"] == BUCKET
        assert attributes["path"] == prefix
        assert volume["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
        (claim,) = [
            c
            for c in claims
            if c["spec"]["selector"]["matchLabels"] == volume["metadata"]["labels"]
        ]
        assert claim["spec"]["accessModes"] == volume["spec"]["accessModes"]
        assert claim["spec"]["storageClassName"] == volume["spec"]["storageClassName"] == ""
    # The plugin maps a reader-only access mode to ossfs's `ro`.
    assert volumes["input"]["spec"]["accessModes"] == ["ReadOnlyMany"]
    assert volumes["export"]["spec"]["accessModes"] == ["ReadWriteMany"]
    # The non-root trainer (uid/gid 10000) owns what ossfs shows in the export.
    assert (
        "-o uid=10000 -o gid=10000"
        in volumes["export"]["spec"]["csi"]["volumeAttributes"]["otherOpts"]
    )


@pytest.mark.parametrize("stack", STACKS)
def test_every_pod_reads_the_input_and_only_the_run_ender_mounts_the_export(stack: str) -> None:
    config, run = deployed(stack)
    pods = training_pods(run)
    assert run_enders(config).keys() <= pods.keys()
    for name, pod in pods.items():
        claims = {
            v["name"]: v["persistentVolumeClaim"]["claimName"]
            for v in pod["volumes"]
            if "persistentVolumeClaim" in v
        }
        (container,) = pod["containers"]
        mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
        env = {e["name"]: e.get("value") for e in container["env"]}
        assert mounts["/input"].get("readOnly") is True
        assert env["TFTRAIN_INPUT_DIR"] == "/input"
        # The bundled trainer reads its data from TFTRAIN_DATA_DIR (no job.dataDir here).
        assert env["TFTRAIN_DATA_DIR"] == "/input"
        ends = name in run_enders(config)
        assert ("/export" in mounts) is ends, name
        assert (env.get("TFTRAIN_EXPORT_DIR") == "/export") is ends, name
        assert (f"{config.job.name}-export" in claims.values()) is ends, name


def test_job_data_dir_keeps_the_users_path() -> None:
    raw = {
        **raw_with_data("dev"),
        "job": {**raw_with_data("dev")["job"], "dataDir": "/input/train"},
    }
    run = run_program(in_region(raw))
    for pod in training_pods(run).values():
        env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
        assert env["TFTRAIN_DATA_DIR"] == "/input/train"
        assert env["TFTRAIN_INPUT_DIR"] == "/input"


@pytest.mark.parametrize("stack", STACKS)
def test_credentials_follow_the_cluster_kind_and_no_key_is_anywhere(stack: str) -> None:
    config, run = deployed(stack)
    for volume in oss_volumes(run).values():
        csi = volume["spec"]["csi"]
        attributes = csi["volumeAttributes"]
        assert not {"akId", "akSecret", "AccessKeyId", "AccessKeySecret"} & set(attributes)
        if config.cluster.kind == "ack":
            assert attributes["authType"] == "rrsa"
            assert attributes["roleName"] == rrsa_role(stack, run)
            assert "nodePublishSecretRef" not in csi
        else:
            assert "authType" not in attributes
            assert csi["nodePublishSecretRef"] == {
                "name": "oss-credentials",
                "namespace": config.job.namespace,
            }
    if config.cluster.kind != "ack":
        assert not run.of_type("alicloud:ram/role:Role")
        policy = json.loads(run.outputs["ossAccessPolicy"])
        assert_least_privilege(policy)


def rrsa_role(stack: str, run: Recorded) -> str:
    """The RAM role the stack makes, or a run stack's platform's (which makes it instead)."""
    platform = platform_stack_of(stack)
    if platform:
        assert not run.of_type("alicloud:ram/role:Role")
        return deployed_outputs(platform.rsplit("/", 1)[-1]).values["ossRoleName"]
    (role,) = run.of_type("alicloud:ram/role:Role")
    return role.inputs["roleName"]


def assert_least_privilege(policy: dict[str, Any]) -> None:
    """Writes reach only the export prefix; reads and listings only the two prefixes."""
    bucket = f"acs:oss:*:*:{BUCKET}"
    for statement in policy["Statement"]:
        assert statement["Effect"] == "Allow"
        actions = set(statement["Action"])
        assert not any(a.endswith("*") for a in actions)
        writes = actions & {"oss:PutObject", "oss:DeleteObject", "oss:AbortMultipartUpload"}
        if writes:
            assert statement["Resource"] == [f"{bucket}/results/*"]
        if "oss:GetObject" in actions:
            assert sorted(statement["Resource"]) == [
                f"{bucket}/datasets/mnist/*",
                f"{bucket}/results/*",
            ]
        if "oss:ListObjects" in actions:
            assert statement["Resource"] == [bucket]
            assert sorted(statement["Condition"]["StringLike"]["oss:Prefix"]) == [
                "datasets/mnist/*",
                "results/*",
            ]


def test_ack_role_trusts_only_the_csi_ossfs_pods_of_its_own_cluster() -> None:
    _, run = deployed("ack-gpu")
    (cluster,) = run.of_type("alicloud:cs/managedKubernetes:ManagedKubernetes")
    assert cluster.inputs["enableRrsa"] is True
    (role,) = run.of_type("alicloud:ram/role:Role")
    trust = json.loads(role.inputs["assumeRolePolicyDocument"])
    (statement,) = trust["Statement"]
    assert statement["Action"] == "sts:AssumeRole"
    (provider,) = statement["Principal"]["Federated"]
    assert provider.startswith(MOCK_OIDC_PROVIDER_ARN + "/ack-rrsa-")
    conditions = statement["Condition"]["StringEquals"]
    assert conditions["oidc:sub"] == FUSE_SUBJECT
    assert conditions["oidc:aud"] == "sts.aliyuncs.com"
    (policy,) = run.of_type("alicloud:ram/policy:Policy")
    assert_least_privilege(json.loads(policy.inputs["policyDocument"]))
    (attachment,) = run.of_type("alicloud:ram/rolePolicyAttachment:RolePolicyAttachment")
    assert attachment.inputs["roleName"] == role.inputs["roleName"]
    assert attachment.inputs["policyName"] == policy.inputs["policyName"]


def test_ack_without_oss_data_leaves_rrsa_off() -> None:
    run = run_program(read_stack_file(stack_file("ack-cpu")))
    (cluster,) = run.of_type("alicloud:cs/managedKubernetes:ManagedKubernetes")
    assert "enableRrsa" not in cluster.inputs
    assert not run.of_type("alicloud:ram/role:Role")


def test_a_created_bucket_is_private_encrypted_versioned_and_public_access_blocked() -> None:
    raw = {
        **raw_with_data("ack-gpu"),
        "data": {**raw_with_data("ack-gpu")["data"], "createBucket": True},
    }
    run = run_program(in_region(raw))
    (bucket,) = run.of_type("alicloud:oss/bucket:Bucket")
    assert bucket.inputs["bucket"] == BUCKET
    # No acl: the provider's default is private (resource_alicloud_oss_bucket.go acl Default).
    assert "acl" not in bucket.inputs
    assert bucket.inputs["serverSideEncryptionRule"] == {"sseAlgorithm": "AES256"}
    assert bucket.inputs["versioning"] == {"status": "Enabled"}
    (block,) = run.of_type("alicloud:oss/bucketPublicAccessBlock:BucketPublicAccessBlock")
    assert block.inputs == {"bucket": BUCKET, "blockPublicAccess": True}


@pytest.mark.parametrize(
    ("bucket", "refusal"),
    [
        ("team-public", "its ACL is public-read"),
        ("team-beijing", "it is in oss-cn-beijing, the stack in cn-hangzhou"),
    ],
)
def test_an_existing_public_or_far_bucket_is_refused_before_anything_is_registered(
    bucket: str, refusal: str
) -> None:
    raw = {
        **raw_with_data("ack-gpu"),
        "data": {**raw_with_data("ack-gpu")["data"], "bucket": bucket},
    }
    run = run_program(in_region(raw), raise_errors=False)
    assert run.error is not None
    assert f"tftrain:data.bucket = {bucket!r}" in str(run.error)
    assert refusal in str(run.error)
    assert run.resources == []


def retained(raw: dict[str, Any]) -> bool | None:
    """The retain_on_delete option the engine receives for the created bucket."""
    seen: dict[str, bool | None] = {}

    def capture(args: pulumi.ResourceTransformationArgs) -> None:
        seen[args.type_] = args.opts.retain_on_delete

    def build() -> dict[str, Any]:
        OssBucket(
            "data", parse_config(raw).data, opts=pulumi.ResourceOptions(transformations=[capture])
        )
        return {}

    deploy(build)
    return seen["alicloud:oss/bucket:Bucket"]


def test_destroy_keeps_a_created_bucket_unless_the_user_opts_out() -> None:
    data = {**raw_with_data("ack-gpu")["data"], "createBucket": True}
    assert retained({**raw_with_data("ack-gpu"), "data": data}) is True
    assert (
        retained({**raw_with_data("ack-gpu"), "data": {**data, "retainOnDestroy": False}}) is False
    )


def test_without_a_region_or_endpoint_nothing_is_registered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ALICLOUD_REGION", raising=False)
    run = run_program(raw_with_data("ack-gpu"), raise_errors=False)
    assert "tftrain:data.endpoint" in str(run.error)
    assert run.resources == []
