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

import base64
import json
from typing import Any

import kubernetes_validate
import pulumi
import pytest

from infra.cloud.oss import OssBucket
from infra.config import StackConfig, parse_config, read_stack_file, stack_file
from infra.manifests.run_access import IssuedStorage, issued_objects
from infra.mock_deploy import Recorded
from tests.pulumi_mocks import (
    MOCK_ACCOUNT_ID,
    MOCK_OIDC_PROVIDER_ARN,
    deployed_outputs,
    platform_stack_of,
    run_program,
    run_stacks,
)
from tests.shared_values import shared
from tests.test_cloud_components import deploy
from tests.test_manifests_schema import schema_version

BUCKET = "team-data-01"
DRIVER = "ossplugin.csi.alibabacloud.com"
FUSE_SUBJECT = "system:serviceaccount:ack-csi-fuse:csi-fuse-ossfs"
# A RAM user's AccessKey as the engine hands the program a secret (decrypted, key marked).
KEYS = {"accessKeyId": "LTAI5tTestKeyId", "accessKeySecret": "TestKeySecretValue"}
CIPHERTEXT = "v1:Zm9vYmFy:YmF6cXV4"
# What each cluster kind needs besides bucket and prefixes (see docs/data.md "Bring your data").
BY_KIND: dict[str, dict[str, Any]] = {
    "ack": {},
    "ask": {key: {"secure": CIPHERTEXT} for key in KEYS},
    "existing": {
        "credentialsSecret": "oss/oss-credentials",
        "endpoint": "oss-cn-hangzhou-internal.aliyuncs.com",
    },
}
# platform-ack's bucket: <project>-<stack>-<account id> (docs/data.md "Bring your data"), and the
# prefixes its role covers, which a run stack on it stays inside.
PLATFORM_BUCKET = f"tftrain-platform-ack-{MOCK_ACCOUNT_ID}"
PREFIXES = {"standalone": ("datasets/mnist/", "results/"), "run": ("mnist/", "exports/")}


def role(raw: dict[str, Any]) -> str:
    return str(raw.get("cluster", {}).get("role", "standalone"))


@shared
def raw_with_data(stack: str) -> dict[str, Any]:
    """The stack with an OSS input: a bucket of the account, or on a run stack its platform's."""
    raw = read_stack_file(stack_file(stack))
    kind = raw.get("cluster", {}).get("kind", "existing")
    input_prefix, export_prefix = PREFIXES[role(raw)]
    raw["data"] = {
        **({} if role(raw) == "run" else {"bucket": BUCKET}),
        "inputPrefix": input_prefix,
        "exportPrefix": export_prefix,
        **BY_KIND[kind],
    }
    return raw


def expected_bucket(stack: str) -> str:
    return PLATFORM_BUCKET if platform_stack_of(stack) else BUCKET


def program_run(raw: dict[str, Any], **kwargs: Any) -> Recorded:
    """Run the program; a `data` section holding secure values reaches it as the engine hands
    it over: decrypted JSON, the key marked secret."""
    data = raw.get("data", {})
    if any(isinstance(value, dict) and "secure" in value for value in data.values()):
        plain = {key: KEYS.get(key, value) for key, value in data.items()}
        without = {key: value for key, value in raw.items() if key != "data"}
        return run_program(in_region(without), secrets={"data": json.dumps(plain)}, **kwargs)
    return run_program(in_region(raw), **kwargs)


@shared
def deployed(stack: str) -> tuple[StackConfig, Recorded]:
    raw = raw_with_data(stack)
    return parse_config(raw), program_run(raw)


def in_region(raw: dict[str, Any]) -> dict[str, Any]:
    """The stack's config plus the provider region, as a checked-in stack file has it."""
    return {**raw, "alicloud:region": "cn-hangzhou"}


@shared
def platform_volumes(platform: str) -> list[dict[str, Any]]:
    """The volumes a platform stack issued its run namespaces."""
    return run_program(platform.rsplit("/", 1)[-1]).objects_of_kind("PersistentVolume")


def stack_volumes(stack: str) -> dict[str, dict[str, Any]]:
    """`oss_volumes` of the stack: a run stack's are those its platform issued its namespace."""
    config, run = deployed(stack)
    platform = platform_stack_of(stack)
    if not platform:
        return oss_volumes(run.objects_of_kind("PersistentVolume"))
    issued = [v for v in platform_volumes(platform)
              if v["spec"]["claimRef"]["namespace"] == config.job.namespace]  # fmt: skip
    assert not run.objects_of_kind("PersistentVolume")  # a run stack makes none
    return oss_volumes(issued)


def oss_volumes(volumes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """{"input" | "export": PV} by what the volume allows: read-only is the input."""
    found = {}
    for volume in volumes:
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
    objects = [*stack_volumes(stack).values(), *run.objects_of_kind("PersistentVolumeClaim")]
    objects += run.objects_of_kind("Job")
    for obj in objects:
        kubernetes_validate.validate(
            {"apiVersion": "batch/v1" if obj["kind"] == "Job" else "v1", **obj},
            version,
            strict=True,
        )
    assert set(stack_volumes(stack)) == {"input", "export"}


@pytest.mark.parametrize("stack", STACKS)
def test_the_input_is_the_prefix_read_only_and_each_claim_binds_its_volume(stack: str) -> None:
    config, run = deployed(stack)
    volumes = stack_volumes(stack)
    claims = run.objects_of_kind("PersistentVolumeClaim")
    input_prefix, export_prefix = PREFIXES["run" if platform_stack_of(stack) else "standalone"]
    if platform_stack_of(stack):  # its own directory of the platform's export prefix
        export_prefix = f"{export_prefix}{config.job.namespace}/"
    for kind, prefix in (("input", input_prefix), ("export", export_prefix)):
        volume = volumes[kind]
        attributes = volume["spec"]["csi"]["volumeAttributes"]
        assert attributes["bucket"] == expected_bucket(stack)
        assert attributes["path"] == "/" + prefix
        # Every stack's region is cn-hangzhou (given as data.endpoint on an existing
        # cluster): the VPC endpoint of Alibaba's "Regions and endpoints" table.
        assert attributes["url"] == "oss-cn-hangzhou-internal.aliyuncs.com"
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


def test_every_volume_waits_for_the_nas_rule_and_the_buckets_access() -> None:
    """ack-gpu with an OSS input: a node mounts a volume as soon as a pod needs it, so each
    PersistentVolume is created after the NAS admits the VPC (access rule, mount target)
    and after the role ossfs assumes holds its policy."""
    _, run = deployed("ack-gpu")
    type_of = {r.urn: r.type for r in run.resources}
    volumes = [r for r in run.resources if r.type == "kubernetes:core/v1:PersistentVolume"]
    assert len(volumes) == 3  # the NAS data volume, the OSS input and export
    for volume in volumes:
        waits_for = {type_of.get(urn) for urn in volume.dependencies}
        assert {
            "alicloud:nas/accessRule:AccessRule",
            "alicloud:nas/mountTarget:MountTarget",
            "alicloud:ram/rolePolicyAttachment:RolePolicyAttachment",
        } <= waits_for, (volume.name, waits_for)


@pytest.mark.parametrize("stack", STACKS)
def test_every_oss_volume_is_readable_by_the_trainer_uid_on_its_platform(stack: str) -> None:
    config, _ = deployed(stack)
    for volume in stack_volumes(stack).values():
        options = volume["spec"]["csi"]["volumeAttributes"]["otherOpts"].split()
        # ossfs shows every file as the non-root trainer's (uid/gid 10000, the pods' runAsUser).
        assert {"uid=10000", "gid=10000"} <= set(options[1::2])
        assert options[0::2] == ["-o"] * (len(options) // 2)
        # ECI mounts OSS itself and adds nothing (its own example sets allow_other); ACK's
        # plugin adds allow_other unless given (ossfs/manager.go).
        assert ("allow_other" in options) is (config.cluster.kind == "ask")


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
        # A run stack's export volume is already its namespace's directory of the platform's
        # prefix (the platform issued it); its claim has the name that volume reserves.
        assert (env.get("TFTRAIN_EXPORT_DIR") == "/export") is ends, name
        on_platform = config.cluster.role == "run"
        export_claim = "tftrain-export" if on_platform else f"{config.job.name}-export"
        assert (export_claim in claims.values()) is ends, name


def test_ask_makes_the_key_secret_its_volumes_name_before_them_and_never_in_clear() -> None:
    config, run = deployed("ask-eci")
    (secret,) = [s for s in run.objects_of_kind("Secret") if "akId" in s.get("data", {})]
    assert secret["metadata"] == {**secret["metadata"], "name": "mnist-oss-credentials"}
    assert secret["metadata"]["namespace"] == config.job.namespace
    # The keys the CSI plugin reads (pkg/oss/utils.go parseCredentialsFromSecret), base64.
    decoded = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    assert decoded == {"akId": KEYS["accessKeyId"], "akSecret": KEYS["accessKeySecret"]}
    (registration,) = [
        r for r in run.resources if r.name == f"{config.job.namespace}/mnist-oss-credentials"
    ]
    assert "data" in registration.secret_paths
    # Registered before every volume that names it, and nowhere in the outputs.
    names = [r.name for r in run.resources]
    for volume in stack_volumes("ask-eci").values():
        assert names.index(registration.name) < names.index(volume["metadata"]["name"])
    assert KEYS["accessKeySecret"] not in json.dumps(run.outputs)


def test_job_data_dir_keeps_the_users_path() -> None:
    raw = {
        **raw_with_data("dev"),
        "job": {**raw_with_data("dev")["job"], "dataDir": "/input/train"},
    }
    run = program_run(raw)
    for pod in training_pods(run).values():
        env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
        assert env["TFTRAIN_DATA_DIR"] == "/input/train"
        assert env["TFTRAIN_INPUT_DIR"] == "/input"


@pytest.mark.parametrize("stack", STACKS)
def test_credentials_follow_the_cluster_kind_and_no_key_is_anywhere(stack: str) -> None:
    config, run = deployed(stack)
    for volume in stack_volumes(stack).values():
        csi = volume["spec"]["csi"]
        attributes = csi["volumeAttributes"]
        assert not {"akId", "akSecret", "AccessKeyId", "AccessKeySecret"} & set(attributes)
        if config.cluster.kind == "ack":
            assert attributes["authType"] == "rrsa"
            assert attributes["roleName"] == rrsa_role(stack, run)
            assert "nodePublishSecretRef" not in csi
        elif config.cluster.kind == "ask":
            # The stack's own Secret, from the AccessKey Pulumi secrets (next test).
            assert "authType" not in attributes
            assert csi["nodePublishSecretRef"] == {
                "name": "mnist-oss-credentials",
                "namespace": config.job.namespace,
            }
        else:
            assert csi["nodePublishSecretRef"] == {"name": "oss-credentials", "namespace": "oss"}
    if config.cluster.kind != "ack":
        assert not run.of_type("alicloud:ram/role:Role")
        policy = json.loads(run.outputs["ossAccessPolicy"])
        assert_least_privilege(policy)


def rrsa_role(stack: str, run: Recorded) -> str:
    """The RAM role the stack makes, or the one a run stack's platform made its namespace."""
    platform = platform_stack_of(stack)
    if platform:
        assert not run.of_type("alicloud:ram/role:Role")
        roles = deployed_outputs(platform.rsplit("/", 1)[-1]).values["runOssRoleNames"]
        return roles[deployed(stack)[0].job.namespace]
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
    run = program_run(raw)
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
    run = program_run(raw, raise_errors=False)
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
            "data",
            parse_config(raw).data,
            BUCKET,
            opts=pulumi.ResourceOptions(transformations=[capture]),
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


def test_two_teams_runs_with_the_same_run_id_export_to_different_directories() -> None:
    """Run stacks share their platform's export prefix; the same settings derive the same run
    id, so in one directory the second run's export would find the first one's
    `_TFTRAIN_EXPORTED` in `<job>/<runId>/` and skip. Each namespace's export volume is its own
    directory, reserved for its own claim."""
    storage = IssuedStorage(
        cluster_kind="ack", oss_bucket="b", oss_endpoint="e", input_prefix="in/",
        export_prefix="exports/",
    )  # fmt: skip
    paths = {}
    for team in ("team-a", "team-b"):
        (export,) = [o for o in issued_objects(team, storage, "role")
                     if o["metadata"]["name"].endswith("-export")]  # fmt: skip
        paths[team] = export["spec"]["csi"]["volumeAttributes"]["path"]
        assert export["spec"]["claimRef"]["namespace"] == team
    assert paths == {"team-a": "/exports/team-a/", "team-b": "/exports/team-b/"}
