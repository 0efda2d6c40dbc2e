"""Every bucket is one the stack can use, checked before anything is billed (issue 27).

Expected values from outside the code: OSS bucket naming rules (3-63 lower-case letters,
digits and -), the OSS Content-MD5 header (base64 of the MD5 digest, RFC 1864), the checked-in
MNIST files' names (trainer/data/mnist), and hand-stated names and messages.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pulumi
import pytest

from infra.cloud.oss import derived_bucket_name
from infra.config import ConfigError, parse_config, read_stack_file, stack_file
from infra.mock_deploy import StackOutputs
from tests.pulumi_mocks import (
    MOCK_ACCOUNT_ID,
    PlausibleCloud,
    Recorded,
    all_stacks,
    deployed_outputs,
    run_program,
)

REPOSITORY = Path(__file__).resolve().parent.parent
BUCKET_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$")
GET_BUCKETS = "alicloud:oss/getBuckets:getBuckets"


def with_data(stack: str, **data: Any) -> dict[str, Any]:
    raw = read_stack_file(stack_file(stack))
    raw["data"] = {**raw.get("data", {}), **data}
    return {**raw, "alicloud:region": "cn-hangzhou"}


def error_of(run: Recorded) -> str:
    assert run.error is not None
    return str(run.error)


@pytest.mark.parametrize("stack", all_stacks())
def test_no_checked_in_stack_names_a_bucket_it_neither_creates_nor_says_is_foreign(
    stack: str,
) -> None:
    data = read_stack_file(stack_file(stack)).get("data", {})
    assert (
        not data.get("bucket")
        or data.get("createBucket")
        or (data.get("bucketOwner") == "another-account")
    )


def test_a_bucket_the_account_does_not_list_is_refused_before_anything_is_registered() -> None:
    run = run_program(with_data("ack-gpu", createBucket=False, bucket="somebody-elses"),
                      raise_errors=False)  # fmt: skip
    message = error_of(run)
    assert message.startswith("tftrain:data.bucket = 'somebody-elses': this account has no ")
    assert "tftrain:data.bucketOwner another-account" in message
    assert "\n" not in message
    assert run.resources == []


def test_an_empty_listing_is_an_answer_not_a_skip() -> None:
    # A provider answering with no bucket at all still refuses (infra/cloud/lookup.py rule).
    class NoBuckets(PlausibleCloud):
        def call(self, token: str, args: Any) -> dict[str, Any]:
            if token == GET_BUCKETS:
                return {"id": "buckets", "names": [], "buckets": []}
            return super().call(token, args)

    raw = with_data("ack-gpu", createBucket=False, bucket="team-data-01")
    run = run_program(raw, cloud=NoBuckets(), raise_errors=False)
    assert "this account has no bucket of that name" in error_of(run)
    assert run.resources == []
    # The lookup asks for that name exactly (the provider's name_regex is RE2: a pattern
    # anchored at both ends, its `-` plain).
    assert [args for token, args in run.calls if token == GET_BUCKETS] == [
        {"nameRegex": "^team-data-01$"}
    ]


def test_another_accounts_bucket_is_not_looked_up_and_the_grant_is_published() -> None:
    raw = with_data(
        "ack-gpu", createBucket=False, localInputDir="", bucket="partner-data",
        bucketOwner="another-account",
    )  # fmt: skip
    run = run_program(raw)
    assert not [args for token, args in run.calls if token == GET_BUCKETS]
    # What the owner grants this stack's role, in the bucket's policy.
    assert "acs:oss:*:*:partner-data" in run.outputs["ossAccessPolicy"]
    assert run.outputs["ossRoleName"]


def test_bucket_owner_another_account_needs_a_named_bucket_not_a_created_one() -> None:
    raw = with_data("ack-gpu", bucketOwner="another-account")
    raw.pop("alicloud:region")
    with pytest.raises(ConfigError, match=r"tftrain:data\.bucketOwner = \"another-account\""):
        parse_config(raw)


def test_a_created_bucket_is_named_from_the_account_and_holds_the_input_first() -> None:
    run = run_program("ack-gpu")
    (bucket,) = run.of_type("alicloud:oss/bucket:Bucket")
    # <project>-<stack>-<account id>: no other account can own it.
    assert bucket.inputs["bucket"] == f"tftrain-ack-gpu-{MOCK_ACCOUNT_ID}"
    assert run.outputs["ossBucket"] == bucket.inputs["bucket"]
    objects = {
        o.inputs["key"]: o.inputs for o in run.of_type("alicloud:oss/bucketObject:BucketObject")
    }
    assert sorted(objects) == [
        "mnist/SHA256SUMS",
        "mnist/t10k-images-idx3-ubyte.gz",
        "mnist/t10k-labels-idx1-ubyte.gz",
        "mnist/train-images-idx3-ubyte.gz",
        "mnist/train-labels-idx1-ubyte.gz",
    ]
    for key, inputs in objects.items():
        path = REPOSITORY / "trainer/data" / key
        # From the directory the provider runs in: Pulumi.yaml's `main: infra/` (getPwdMain),
        # whatever the checkout's path.
        assert inputs["source"] == f"../trainer/data/{key}"
        assert (
            inputs["contentMd5"]
            == base64.b64encode(hashlib.md5(path.read_bytes()).digest()).decode()
        )
        assert inputs["bucket"] == bucket.inputs["bucket"]
    # Every volume mounts that bucket.
    for volume in run.objects_of_kind("PersistentVolume"):
        attributes = volume["spec"]["csi"].get("volumeAttributes", {})
        assert attributes.get("bucket", bucket.inputs["bucket"]) == bucket.inputs["bucket"]


@pytest.mark.parametrize(
    ("stack", "account"),
    [
        ("ack-gpu", "1234567890123456"),
        ("A_Very.Long_Stack.Name-that-goes-on-and-on-and-on-forever", "1234567890123456"),
    ],
)
def test_derived_names_follow_the_oss_naming_rules(stack: str, account: str) -> None:
    name = derived_bucket_name("tftrain", stack, account)
    assert BUCKET_NAME.match(name) and len(name) <= 63
    assert name.endswith("-" + account) and name.startswith("tftrain-")


def test_a_missing_upload_directory_is_refused_by_key() -> None:
    raw = with_data("ack-gpu", localInputDir="no/such/dir")
    raw.pop("alicloud:region")
    with pytest.raises(ConfigError, match=r"tftrain:data\.localInputDir = \"no/such/dir\""):
        parse_config(raw)


def platform_outputs(**changes: Any) -> StackOutputs:
    outputs = deployed_outputs("platform-ack")
    return StackOutputs({**outputs.values, **changes}, outputs.secret)


@pytest.mark.parametrize(
    ("data", "refused"),
    [
        ({"exportPrefix": "elsewhere/"}, "tftrain:data.exportPrefix = 'elsewhere/'"),
        ({"inputPrefix": "other/"}, "tftrain:data.inputPrefix = 'other/'"),
        ({"bucket": "team-data-01"}, "tftrain:data.bucket = 'team-data-01'"),
    ],
)
def test_a_run_outside_its_platforms_volumes_is_refused_before_any_object(
    data: dict[str, str], refused: str
) -> None:
    raw = read_stack_file(stack_file("run-ack"))
    raw["data"] = {**raw["data"], **data}
    run = run_program(raw, platform=platform_outputs(), raise_errors=False)
    message = error_of(run)
    assert message.startswith(refused)
    assert (
        "the volumes platform stack organization/tftrain/platform-ack issues to namespace "
        "lr-sweep-a mount"
    ) in message
    assert [r.type for r in run.resources] == ["pulumi:pulumi:StackReference"]


def test_a_run_with_its_platforms_prefixes_claims_the_volumes_on_the_platforms_bucket() -> None:
    raw = read_stack_file(stack_file("run-ack"))
    raw["data"] = {**raw["data"], "bucket": f"tftrain-platform-ack-{MOCK_ACCOUNT_ID}"}
    run = run_program(raw, platform=platform_outputs())
    assert not run.objects_of_kind("PersistentVolume")  # the platform's, not the run's
    claims = {claim["metadata"]["name"] for claim in run.objects_of_kind("PersistentVolumeClaim")}
    assert claims == {"tftrain-data", "tftrain-input", "tftrain-export"}
    issued = run_program("platform-ack").objects_of_kind("PersistentVolume")
    buckets = {
        volume["spec"]["csi"]["volumeAttributes"].get("bucket")
        for volume in issued
        if volume["spec"]["claimRef"]["name"] in ("tftrain-input", "tftrain-export")
    }
    assert buckets == {f"tftrain-platform-ack-{MOCK_ACCOUNT_ID}"}


def test_a_cluster_without_rrsa_metadata_is_a_message_not_a_traceback() -> None:
    class NoRrsa(PlausibleCloud):
        def outputs(self, type_token: str, resource_id: str, inputs: Any) -> dict[str, Any]:
            found = super().outputs(type_token, resource_id, inputs)
            if "rrsaMetadata" in found:
                found["rrsaMetadata"] = {}
            return found

    run = run_program("ack-gpu", cloud=NoRrsa(), raise_errors=False)
    message = error_of(run)
    assert isinstance(run.error, pulumi.RunError), message
    assert message.startswith("tftrain:data.credentials = rrsa: the cluster reports no RRSA")


def user_secret_stack() -> dict[str, Any]:
    raw = read_stack_file(stack_file("dev"))
    raw["data"] = {
        "bucket": "team-data-01",
        "inputPrefix": "mnist/",
        "endpoint": "oss-cn-hangzhou-internal.aliyuncs.com",
        "credentialsSecret": "oss/oss-credentials",
    }
    return raw


def test_a_secret_the_stack_does_not_make_is_read_not_created() -> None:
    run = run_program(user_secret_stack())
    secrets = [(r.name, r.inputs) for r in run.resources if r.type == "kubernetes:core/v1:Secret"]
    # Read by its id, never registered with data of ours.
    assert [name for name, _ in secrets] == ["existing-secret-oss/oss-credentials"]
    assert "data" not in secrets[0][1]
    # Read from the stack's cluster, through its provider (not the ambient kubeconfig's).
    (read,) = [r for r in run.resources if r.name == "existing-secret-oss/oss-credentials"]
    (provider,) = run.of_type("pulumi:providers:kubernetes")
    assert read.provider == f"{provider.urn}::{provider.name}-id"
    # An existing cluster's stack still says where its volumes read and write.
    assert run.outputs["ossEndpoint"] == "oss-cn-hangzhou-internal.aliyuncs.com"
    assert run.outputs["ossBucket"] == "team-data-01"


def test_a_missing_user_secret_creates_nothing_in_the_cluster() -> None:
    class NoSuchSecret(PlausibleCloud):
        def outputs(self, type_token: str, resource_id: str, inputs: Any) -> dict[str, Any]:
            if type_token == "kubernetes:core/v1:Secret" and "existing-secret" in resource_id:
                raise RuntimeError('secrets "oss-credentials" not found')
            return super().outputs(type_token, resource_id, inputs)

    run = run_program(user_secret_stack(), cloud=NoSuchSecret(), raise_errors=False)
    assert run.error is not None and "not found" in str(run.error)
    created = [r.type for r in run.resources if r.type.startswith("kubernetes:")]
    assert created == ["kubernetes:core/v1:Secret"]  # only the failed read


def test_the_credentials_secret_the_stack_makes_is_not_read_first() -> None:
    """With the AccessKey in the stack (`pulumi config set --secret`), the stack makes the
    Secret the volumes name: reading it before it exists would fail the first `up`."""
    raw = read_stack_file(stack_file("dev"))
    raw["data"] = {
        "bucket": "team-data-01",
        "inputPrefix": "mnist/",
        "endpoint": "oss-cn-hangzhou-internal.aliyuncs.com",
    }
    secrets = {"data": json.dumps({**raw["data"], "accessKeyId": "LTAI-x", "accessKeySecret": "s"})}
    run = run_program(raw, secrets=secrets)
    names = sorted(r.name for r in run.resources if r.type == "kubernetes:core/v1:Secret")
    assert names == ["tftrain-dev/mnist-oss-credentials"]  # made, not read: no existing-secret-
    # The volumes that name it wait for it: a node mounting one first would find no key.
    (secret,) = run.of_type("kubernetes:core/v1:Secret")
    volumes = [
        r for r in run.of_type("kubernetes:core/v1:PersistentVolume")
        if r.inputs["spec"].get("csi", {}).get("nodePublishSecretRef")
    ]  # fmt: skip
    assert volumes
    assert all(secret.urn in volume.dependencies for volume in volumes)
