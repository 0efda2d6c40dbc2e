"""The OSS access the stack grants, written out by hand: the RAM policy of the CSI OSS
plugin's role (read the input prefix, write only the export prefix), its RRSA trust, the RAM
resources of the role component, the bucket component's arguments, the bucket's derived name.

Expected values are the RAM policy grammar (https://www.alibabacloud.com/help/doc-detail/93738.htm:
`acs:oss:*:*:<bucket>[/<object>]`, `oss:Prefix` conditions on ListObjects), ACK's RRSA trust
policy and the OSS arguments the provider documents, never the code's own output.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import pytest

from infra.cloud.oss import OssBucket, OssRrsaAccess, access_policy, stack_bucket
from infra.config.model import DataConfig
from tests.pulumi_mocks import (
    MOCK_ACCOUNT_ID,
    MOCK_OIDC_PROVIDER_ARN,
    MOCK_RRSA_ISSUER,
    CloudMocks,
    PlausibleCloud,
    Recorded,
    run_program,
    stack_raw,
)
from tests.test_cloud_components import deploy

ARN = "acs:ram::123:oidc-provider/ack-rrsa-c1"
ISSUER = "https://oidc-ack-cn-hangzhou.oss-cn-hangzhou.aliyuncs.com/c1"


def by_hand(bucket: str, input_prefix: str, export_prefix: str) -> dict[str, Any]:
    """The least-privilege policy: list the two prefixes only, read both, write the export."""
    arn = f"acs:oss:*:*:{bucket}"
    return {
        "Version": "1",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["oss:ListObjects"],
                "Resource": [arn],
                "Condition": {
                    "StringLike": {"oss:Prefix": [f"{input_prefix}*", f"{export_prefix}*"]}
                },
            },
            {
                "Effect": "Allow",
                "Action": ["oss:GetObject"],
                "Resource": [f"{arn}/{input_prefix}*", f"{arn}/{export_prefix}*"],
            },
            {
                "Effect": "Allow",
                "Action": [
                    "oss:PutObject",
                    "oss:DeleteObject",
                    "oss:AbortMultipartUpload",
                    "oss:ListParts",
                ],
                "Resource": [f"{arn}/{export_prefix}*"],
            },
        ],
    }


TRUST = {
    "Version": "1",
    "Statement": [
        {
            "Effect": "Allow",
            "Action": "sts:AssumeRole",
            "Principal": {"Federated": [ARN]},
            "Condition": {
                "StringEquals": {
                    "oidc:aud": "sts.aliyuncs.com",
                    "oidc:iss": ISSUER,
                    "oidc:sub": "system:serviceaccount:ack-csi-fuse:csi-fuse-ossfs",
                }
            },
        }
    ],
}


def test_the_access_policy_worked_by_hand() -> None:
    data = DataConfig(bucket="team-data", input_prefix="datasets/mnist/", export_prefix="out/")
    assert access_policy(data, "team-data") == by_hand("team-data", "datasets/mnist/", "out/")


def resources_of(mocks: CloudMocks, typ: str) -> list[Any]:
    return [r for r in mocks.resources if r.type == typ]


@pytest.mark.parametrize(
    ("own_role", "role_name"), [("", "tftrain-test-oss-access"), ("my-role", "my-role")]
)
def test_the_rrsa_component_makes_the_role_its_policy_and_their_attachment(
    own_role: str, role_name: str
) -> None:
    data = DataConfig(
        bucket="team-b", input_prefix="in/", export_prefix="out/ns/", rrsa_role_name=own_role
    )

    parents: dict[str, str | None] = {}

    def capture(args: pulumi.ResourceTransformationArgs) -> None:
        parents[args.type_] = getattr(args.opts.parent, "_name", None)

    def build() -> dict[str, pulumi.Output[Any]]:
        opts = pulumi.ResourceOptions(transformations=[capture])
        access = OssRrsaAccess(
            "oss-access", data, "team-b", oidc_provider_arn=ARN, issuer_url=ISSUER, opts=opts
        )
        return {"role": access.role_name}

    mocks, outputs = deploy(build)
    # A component of its own type, the three RAM resources its children.
    assert "tftrain:cloud:OssRrsaAccess" in parents
    for typ in ("Role", "Policy", "RolePolicyAttachment"):
        module = typ[0].lower() + typ[1:]
        assert parents[f"alicloud:ram/{module}:{typ}"] == "oss-access"
    (role,) = resources_of(mocks, "alicloud:ram/role:Role")
    (policy,) = resources_of(mocks, "alicloud:ram/policy:Policy")
    (attachment,) = resources_of(mocks, "alicloud:ram/rolePolicyAttachment:RolePolicyAttachment")
    assert role.inputs["roleName"] == role_name == outputs["role"].value
    assert json.loads(role.inputs["assumeRolePolicyDocument"]) == TRUST
    assert policy.inputs["policyName"] == "tftrain-test-oss-access"
    assert json.loads(policy.inputs["policyDocument"]) == by_hand("team-b", "in/", "out/ns/")
    # RAM shows whose they are and what for: both descriptions name the project.
    assert role.inputs["description"].startswith("tftrain: the CSI OSS plugin ")
    assert policy.inputs["description"].startswith("tftrain: ")
    assert attachment.inputs == {
        "roleName": role_name,
        "policyName": "tftrain-test-oss-access",
        "policyType": "Custom",
    }
    # Each under its component, named after it (the Pulumi names are the state's keys).
    assert {r.name for r in mocks.resources if r.type.startswith("alicloud:ram/")} == {
        "oss-access-role",
        "oss-access-policy",
        "oss-access-attachment",
    }


@pytest.mark.parametrize("retained", [True, False])
def test_a_created_bucket_is_private_encrypted_versioned_and_uploads_its_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, retained: bool
) -> None:
    # data.localInputDir resolves against the project root (infra.config.rules.local_input_root)
    (tmp_path / "in" / "sub").mkdir(parents=True)
    (tmp_path / "in" / "a.txt").write_bytes(b"abc")
    (tmp_path / "in" / "sub" / "b.bin").write_bytes(b"\x00\x01")
    from infra.config import rules

    monkeypatch.setattr(rules, "REPOSITORY_ROOT", tmp_path)
    # Upload sources are relative to main's folder, where the engine runs the program and
    # the provider opens them: deploy from there, as the engine does, wherever the checkout
    # and the temporary directory are.
    from infra.program_dir import program_dir

    monkeypatch.chdir(program_dir())
    data = DataConfig(
        bucket="team-b", create_bucket=True, input_prefix="mnist/", local_input_dir="in",
        retain_on_destroy=retained,
    )  # fmt: skip
    kept: dict[str, bool | None] = {}

    def capture(args: pulumi.ResourceTransformationArgs) -> None:
        kept[args.name] = args.opts.retain_on_delete

    def build() -> dict[str, pulumi.Output[Any]]:
        opts = pulumi.ResourceOptions(transformations=[capture])
        return {"bucket": OssBucket("data", data, "team-b", opts=opts).bucket_name}

    mocks, outputs = deploy(build)
    assert outputs["bucket"].value == "team-b"
    (bucket,) = resources_of(mocks, "alicloud:oss/bucket:Bucket")
    assert bucket.inputs["bucket"] == "team-b"
    assert bucket.inputs["serverSideEncryptionRule"] == {"sseAlgorithm": "AES256"}
    assert bucket.inputs["versioning"] == {"status": "Enabled"}
    # Not kept: it must go with the stack even with old versions in it.
    assert bucket.inputs.get("forceDestroy") is (None if retained else True)
    (block,) = resources_of(mocks, "alicloud:oss/bucketPublicAccessBlock:BucketPublicAccessBlock")
    assert block.inputs == {"bucket": "team-b", "blockPublicAccess": True}
    assert block.name == "data-public-access-block"
    objects = {
        r.inputs["key"]: r for r in resources_of(mocks, "alicloud:oss/bucketObject:BucketObject")
    }
    assert sorted(objects) == ["mnist/a.txt", "mnist/sub/b.bin"]
    for key, content in (("mnist/a.txt", b"abc"), ("mnist/sub/b.bin", b"\x00\x01")):
        registered = objects[key]
        assert registered.name == f"data-object-{key}"
        assert registered.inputs["bucket"] == "team-b"
        assert (
            registered.inputs["contentMd5"]
            == base64.b64encode(hashlib.md5(content).digest()).decode()
        )
        assert Path(registered.inputs["source"]).read_bytes() == content
    # The bucket and its objects outlive `destroy` exactly when retainOnDestroy says so.
    assert kept["data-bucket"] is retained
    assert kept["data-object-mnist/a.txt"] is retained
    # The block is the component's child too, and goes with the bucket whatever is kept.
    assert kept["data-public-access-block"] is None
    assert bucket.existing_id == ""  # new to the account: created, not adopted


def test_a_bucket_an_earlier_destroy_kept_is_adopted_and_said_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    said: list[tuple[str, Any]] = []
    monkeypatch.setattr(pulumi.log, "info", lambda msg, resource=None: said.append((msg, resource)))
    components: list[OssBucket] = []

    def build() -> dict[str, pulumi.Output[Any]]:
        components.append(
            OssBucket("data", DataConfig(bucket="team-b", create_bucket=True), "team-b")
        )
        return {}

    mocks, _ = deploy(
        build, mocks=CloudMocks(PlausibleCloud(strict=True, kept_buckets=("team-b",)))
    )
    # Looked up by its exact name (an RE2 pattern anchored at both ends), then imported.
    assert mocks.calls_to("alicloud:oss/getBuckets:getBuckets") == [{"nameRegex": "^team-b$"}]
    (bucket,) = resources_of(mocks, "alicloud:oss/bucket:Bucket")
    assert bucket.existing_id == "team-b"
    assert said == [
        (
            "oss://team-b already exists in this account: the stack adopts it instead of creating "
            "it (imported when an earlier destroy kept it, data.retainOnDestroy; unchanged once "
            "the stack holds it). docs/data.md, Up after destroy",
            components[0],
        )
    ]


@dataclass
class NoAccountId(PlausibleCloud):
    def call(self, token: str, args: Any) -> dict[str, Any]:
        if token == "alicloud:index/getCallerIdentity:getCallerIdentity":
            return {"id": "x", "accountId": "", "arn": "", "identityType": "RAMUser"}
        return super().call(token, args)


def test_a_created_bucket_without_a_name_is_named_from_the_account() -> None:
    names: dict[str, str] = {}

    def build() -> dict[str, pulumi.Output[Any]]:
        names["derived"] = stack_bucket(DataConfig(create_bucket=True))
        names["given"] = stack_bucket(DataConfig(bucket="mine", create_bucket=True))
        names["existing"] = stack_bucket(DataConfig(bucket="theirs"))
        return {}

    deploy(build, stack_name="Team_A")
    assert names == {
        "derived": f"tftrain-team-a-{MOCK_ACCOUNT_ID}",
        "given": "mine",
        "existing": "theirs",
    }


def test_no_account_id_to_name_the_bucket_from_is_a_refusal_by_key() -> None:
    errors: list[str] = []

    def build() -> dict[str, pulumi.Output[Any]]:
        try:
            stack_bucket(DataConfig(create_bucket=True))
        except pulumi.RunError as error:
            errors.append(str(error))
        return {}

    deploy(build, mocks=CloudMocks(NoAccountId(strict=True)))
    assert errors == [
        "tftrain:data.bucket = '': the stack names the bucket it creates from the account id, "
        "and the provider's caller identity gave none; set data.bucket to a name of your choice"
    ]


def test_offline_the_derived_name_shows_where_the_account_id_goes() -> None:
    from infra.render import render_stack

    # ack-gpu creates its bucket without a name: offline no cloud says the account id.
    assert "bucket: tftrain-ack-gpu-<account-id>" in render_stack("ack-gpu", only="cloud")


@pytest.mark.parametrize(
    ("credentials", "principal"),
    [
        ("rrsa", "this stack's RAM role (stack output ossRoleName: acs:ram::<this account id>"),
        ("secret", "the RAM user whose AccessKey the volumes use"),
    ],
)
def test_another_accounts_bucket_is_not_looked_up_and_the_grant_is_said(
    monkeypatch: pytest.MonkeyPatch, credentials: str, principal: str
) -> None:
    from infra.cloud import oss
    from infra.config import load_stack

    warned: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, resource=None: warned.append(message))
    monkeypatch.setattr(oss, "listed", lambda *args: pytest.fail("looked up"))
    config = load_stack("ack-gpu")
    data = DataConfig(
        bucket="their-bucket", bucket_owner="another-account", input_prefix="in/",
        credentials=credentials,
    )  # fmt: skip
    from dataclasses import replace

    oss.require_usable_bucket(replace(config, data=data), "cn-hangzhou")
    (message,) = warned
    assert message.startswith(
        "tftrain:data.bucketOwner = another-account: oss://their-bucket is not looked up. "
        f"Its owner must grant {principal}"
    )


def assert_trusts_only_the_clusters_ossfs_plugin(run: Recorded) -> None:
    """ACK's RRSA (docs/data.md): the run's one RAM role is assumed through its cluster's OIDC
    provider, by the token of the CSI ossfs plugin's service account, issued by that cluster
    alone."""
    (cluster,) = run.of_type("alicloud:cs/managedKubernetes:ManagedKubernetes")
    cluster_id = f"{cluster.name}-id"
    (role,) = run.of_type("alicloud:ram/role:Role")
    (statement,) = json.loads(role.inputs["assumeRolePolicyDocument"])["Statement"]
    assert statement == {
        "Effect": "Allow",
        "Action": "sts:AssumeRole",
        "Principal": {"Federated": [f"{MOCK_OIDC_PROVIDER_ARN}/ack-rrsa-{cluster_id}"]},
        "Condition": {
            "StringEquals": {
                "oidc:aud": "sts.aliyuncs.com",
                "oidc:iss": f"{MOCK_RRSA_ISSUER}/{cluster_id}",
                "oidc:sub": "system:serviceaccount:ack-csi-fuse:csi-fuse-ossfs",
            }
        },
    }


def test_the_whole_programs_role_trusts_only_the_clusters_oidc_issuer_for_the_ossfs_plugin() -> (
    None
):
    run = run_program("ack-gpu")
    assert_trusts_only_the_clusters_ossfs_plugin(run)
    # It grants the bucket the stack made, once that bucket exists.
    (bucket,) = run.of_type("alicloud:oss/bucket:Bucket")
    (policy,) = run.of_type("alicloud:ram/policy:Policy")
    resources = {
        arn
        for granted in json.loads(policy.inputs["policyDocument"])["Statement"]
        for arn in granted["Resource"]
    }
    assert f"acs:oss:*:*:{bucket.inputs['bucket']}" in resources
    (access,) = run.of_type("tftrain:cloud:OssRrsaAccess")
    assert bucket.urn in access.dependencies


def test_a_stack_with_its_own_role_exports_no_policy_to_attach() -> None:
    """The role is the stack's: there is no RAM user to hand a policy to."""
    run = run_program("ack-gpu")
    assert {key for key in run.outputs if key.startswith("oss")} == {
        "ossBucket",
        "ossEndpoint",
        "ossRoleName",
    }


def test_an_ack_stack_with_an_access_key_makes_no_role_and_needs_no_rrsa() -> None:
    """`data.credentials: secret` on ACK: the volumes authenticate with the run's AccessKey,
    so the cluster needs no RRSA and the stack makes no RAM role; the policy to attach to that
    key's user is an output."""
    raw = stack_raw("ack-gpu", {})
    raw["data"] = {**raw["data"], "credentials": "secret"}
    secrets = {"data": json.dumps({**raw["data"], "accessKeyId": "LTAI-x", "accessKeySecret": "s"})}
    run = run_program(raw, secrets=secrets)
    assert run.of_type("alicloud:ram/role:Role") == []
    assert "ossRoleName" not in run.outputs
    assert "ossAccessPolicy" in run.outputs
