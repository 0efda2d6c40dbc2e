"""The existing-bucket check (`infra.cloud.oss.check_existing_bucket`) against every ACL OSS
has: a bucket's ACL is private, public-read or public-read-write (OSS API PutBucketAcl,
x-oss-acl; the provider's getBuckets `acl`), and only a private one may hold training data
and exported models. The listing entries are written here as getBuckets returns them."""

from __future__ import annotations

from pathlib import Path

import pulumi
import pytest

from infra.cloud.oss import check_existing_bucket, derived_bucket_name, grant_needed
from infra.config.model import DataConfig

BUCKET = "team-data-01"


def _listing(acl: str, location: str = "oss-cn-hangzhou") -> list[dict[str, str]]:
    return [
        {"name": "someone-else", "acl": "public-read-write", "location": "oss-cn-beijing"},
        {"name": BUCKET, "acl": acl, "location": location},
    ]


@pytest.mark.parametrize(
    ("acl", "refusal"),
    [
        ("private", None),
        ("public-read", "its ACL is public-read;"),
        ("public-read-write", "its ACL is public-read-write;"),
    ],
)
def test_only_a_private_bucket_passes(acl: str, refusal: str | None) -> None:
    data = DataConfig(bucket=BUCKET)
    if refusal is None:
        check_existing_bucket(data, "cn-hangzhou", _listing(acl))
        return
    with pytest.raises(pulumi.RunError) as error:
        check_existing_bucket(data, "cn-hangzhou", _listing(acl))
    assert str(error.value).startswith(f"tftrain:data.bucket = '{BUCKET}': {refusal}")
    assert f"ossutil set-acl oss://{BUCKET} private" in str(error.value)


@pytest.mark.parametrize(
    ("region", "location", "refused"),
    [
        ("cn-hangzhou", "oss-cn-hangzhou", False),
        ("cn-hangzhou", "oss-cn-beijing", True),
        (None, "oss-cn-beijing", False),  # no region to compare with: the endpoint says
        ("cn-hangzhou", "", False),  # a listing without a location: nothing to compare
    ],
)
def test_a_bucket_in_another_region_is_refused(
    region: str | None, location: str, refused: bool
) -> None:
    data = DataConfig(bucket=BUCKET)
    if not refused:
        check_existing_bucket(data, region, _listing("private", location))
        return
    with pytest.raises(pulumi.RunError, match=f"it is in {location}, the stack in {region}"):
        check_existing_bucket(data, region, _listing("private", location))


def test_the_owner_is_asked_only_for_this_accounts_bucket() -> None:
    # Not in this account's listing: refused, unless said to be another account's.
    with pytest.raises(pulumi.RunError, match="this account has no bucket of that name"):
        check_existing_bucket(DataConfig(bucket="not-listed"), "cn-hangzhou", _listing("private"))
    foreign = DataConfig(bucket="not-listed", bucket_owner="another-account")
    check_existing_bucket(foreign, "cn-hangzhou", _listing("private"))
    # Offline (no listing): nothing to check.
    check_existing_bucket(DataConfig(bucket="not-listed"), "cn-hangzhou", None)


ACCOUNT = "1234567890123456"  # 16 digits: the prefix keeps at most 63 - 17 = 46 characters


@pytest.mark.parametrize(
    ("project", "stack", "name"),
    [
        ("tftrain", "ack-gpu", f"tftrain-ack-gpu-{ACCOUNT}"),
        ("_Team.Project", "Dev", f"team-project-dev-{ACCOUNT}"),  # cut, lowered, no lead dash
        # Cut at 46 characters, which ends on a dash: the dash goes too.
        ("tftrain", "a" * 37 + "-bbbb", f"tftrain-{'a' * 37}-{ACCOUNT}"),
        ("tftrain", "x" * 60, f"tftrain-{'x' * 38}-{ACCOUNT}"),  # exactly 63
    ],
    ids=["plain", "odd-characters", "cut-on-a-dash", "long"],
)
def test_a_derived_bucket_name_worked_by_hand(project: str, stack: str, name: str) -> None:
    assert derived_bucket_name(project, stack, ACCOUNT) == name
    assert len(name) <= 63


@pytest.mark.parametrize(
    ("rrsa", "principal"),
    [
        (True, "this stack's RAM role (stack output ossRoleName: "
               "acs:ram::<this account id>:role/<it>)"),
        (False, "the RAM user whose AccessKey the volumes use"),
    ],
)  # fmt: skip
def test_the_grant_another_accounts_owner_must_give_names_who(rrsa: bool, principal: str) -> None:
    assert grant_needed(DataConfig(bucket="theirs"), rrsa) == (
        "tftrain:data.bucketOwner = another-account: oss://theirs is not looked up. Its owner "
        f"must grant {principal}, in the bucket's policy, the actions of the stack output "
        "ossAccessPolicy on that bucket; until then every pod waits on AccessDenied"
    )


def test_the_rrsa_role_trusts_only_the_csi_ossfs_pods_of_this_cluster() -> None:
    import json

    from infra.cloud.oss import rrsa_trust_policy

    # ACK's RRSA docs: a federated OIDC principal, sts:AssumeRole, and the token's audience,
    # issuer and subject pinned; the subject is the CSI plugin's ossfs service account.
    arn = "acs:ram::123:oidc-provider/ack-rrsa-c1"
    issuer = "https://oidc-ack-cn-hangzhou.oss-cn-hangzhou.aliyuncs.com/c1"
    assert json.loads(rrsa_trust_policy(arn, issuer)) == {
        "Version": "1",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": "sts:AssumeRole",
                "Principal": {"Federated": [arn]},
                "Condition": {
                    "StringEquals": {
                        "oidc:aud": "sts.aliyuncs.com",
                        "oidc:iss": issuer,
                        "oidc:sub": "system:serviceaccount:ack-csi-fuse:csi-fuse-ossfs",
                    }
                },
            }
        ],
    }


@pytest.mark.parametrize("missing", ["acl", "location"])
def test_a_listing_without_acl_or_location_checks_what_it_has(missing: str) -> None:
    entry = {"name": BUCKET, "acl": "private", "location": "oss-cn-hangzhou"}
    del entry[missing]
    check_existing_bucket(DataConfig(bucket=BUCKET), "cn-hangzhou", [entry])


def test_the_refusals_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(pulumi.RunError) as error:
        check_existing_bucket(DataConfig(bucket="nope"), "cn-hangzhou", [])
    assert str(error.value) == (
        "tftrain:data.bucket = 'nope': this account has no bucket of that name (its listing "
        "does not show it), so every pod would wait on NoSuchBucket/AccessDenied. Create it in "
        "the stack's region and upload your data (ossutil mb oss://nope), or set "
        "tftrain:data.createBucket true (or unset data.bucket with it: the stack names one "
        "from your account), or, if another account owns it, set tftrain:data.bucketOwner "
        "another-account"
    )
    with pytest.raises(pulumi.RunError) as error:
        check_existing_bucket(DataConfig(bucket=BUCKET), "cn-hangzhou",
                              _listing("private", "oss-cn-beijing"))  # fmt: skip
    assert str(error.value) == (
        f"tftrain:data.bucket = '{BUCKET}': it is in oss-cn-beijing, the stack in cn-hangzhou; "
        "use a bucket in the stack's region (internal endpoint, no traffic charge)"
    )


def test_a_created_bucket_is_a_tagged_child_of_its_component() -> None:
    from infra.cloud.oss import OssBucket
    from tests.test_cloud_components import deploy

    parents: dict[str, str | None] = {}

    def capture(args: pulumi.ResourceTransformationArgs) -> None:
        parents[args.type_] = getattr(args.opts.parent, "_name", None)

    def build() -> dict[str, pulumi.Output[object]]:
        data = DataConfig(bucket=BUCKET, create_bucket=True)
        component = OssBucket(
            "data", data, BUCKET, opts=pulumi.ResourceOptions(transformations=[capture])
        )
        return {"bucket": component.bucket_name}

    mocks, outputs = deploy(build)
    (bucket,) = [r for r in mocks.resources if r.type == "alicloud:oss/bucket:Bucket"]
    assert outputs["bucket"].value == BUCKET
    assert bucket.inputs["tags"] == {
        "app": "tftrain", "pulumi-stack": "test", "pulumi-component": "data",
        "managed-by": "pulumi",
    }  # fmt: skip
    assert parents["alicloud:oss/bucket:Bucket"] == "data"  # a child of the component
    assert "tftrain:cloud:OssBucket" in parents  # the component's own type
