"""The user's OSS bucket: one of the account (looked up before anything is billed), another
account's (said by `data.bucketOwner`), or one the stack creates private, kept on destroy and
named from the account when `data.bucket` is empty; and the least-privilege access the CSI
OSS plugin gets to it.

Access is one RAM policy: list and read the input prefix, read and write only the export
prefix. On ACK (`data.credentials` rrsa) the stack makes a RAM role that only the plugin's
ossfs pods can assume, through the cluster's RRSA OIDC provider, and attaches the policy to
it: no AccessKey exists. Elsewhere (secret) the user's RAM user holds the key; the stack
publishes the same policy document (`ossAccessPolicy`) for the user to attach to that user.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pulumi
from pulumi_alicloud import oss, ram

from infra.cloud.lookup import answered, listed, re2_literal
from infra.cloud.naming import physical_name, resource_tags
from infra.config import PROJECT, StackConfig
from infra.config.model import DataConfig
from infra.config.rules import local_input_root
from infra.program_dir import as_provider_path

# Server-side encryption with OSS-managed keys: no KMS key to create, rotate or pay for.
SSE_ALGORITHM = "AES256"
# The ossfs pods the CSI OSS plugin starts for a volume run in this namespace under this
# service account (alibaba-cloud-csi-driver pkg/oss/controllerserver.go fusePodNamespace,
# pkg/mounter/fuse_pod_manager FuseServiceAccountName); RRSA hands the role to them only.
FUSE_SERVICE_ACCOUNT = "system:serviceaccount:ack-csi-fuse:csi-fuse-ossfs"
# The audience of the tokens ACK's RRSA issuer signs for STS (ACK docs, RRSA trust policy).
RRSA_AUDIENCE = "sts.aliyuncs.com"
PUBLIC_ACLS = ("public-read", "public-read-write")
GET_BUCKETS = "alicloud:oss/getBuckets:getBuckets"
GET_CALLER_IDENTITY = "alicloud:index/getCallerIdentity:getCallerIdentity"
ACCOUNT_PLACEHOLDER = "<account-id>"
# Said at `up` (and in the review's consequences when the bucket is new to the stack).
ADOPTED_BUCKET = (
    "oss://{bucket} already exists in this account: the stack adopts it instead of creating "
    "it (imported when an earlier destroy kept it, data.retainOnDestroy; unchanged once the "
    "stack holds it). docs/data.md, Up after destroy"
)
_NOT_IN_BUCKET_NAMES = re.compile(r"[^a-z0-9-]+")
_BUCKET_NAME_MAX = 63


def derived_bucket_name(project: str, stack: str, account_id: str) -> str:
    """`<project>-<stack>-<account id>`: an account id is unique, so no one else can have
    taken the name. Lower-case letters, digits and -, at most 63 (OSS naming rules)."""
    prefix = _NOT_IN_BUCKET_NAMES.sub("-", f"{project}-{stack}".lower()).strip("-")
    prefix = prefix[: _BUCKET_NAME_MAX - len(account_id) - 1].rstrip("-")
    return f"{prefix}-{account_id}"


def stack_bucket(data: DataConfig) -> str:
    """The bucket's name: `data.bucket`, or for a bucket the stack creates without one, the
    derived name (`<account id>` offline, where no cloud is asked)."""
    if data.bucket or not data.create_bucket:
        return data.bucket
    identity = answered(GET_CALLER_IDENTITY, {})
    if identity is None:
        account_id = ACCOUNT_PLACEHOLDER  # the offline render: no cloud to ask
    elif not (account_id := str(identity.get("accountId") or "")):
        raise pulumi.RunError(
            f"{PROJECT}:data.bucket = '': the stack names the bucket it creates from the account "
            "id, and the provider's caller identity gave none; set data.bucket to a name of "
            "your choice"
        )
    return derived_bucket_name(pulumi.get_project(), pulumi.get_stack(), account_id)


def check_existing_bucket(
    data: DataConfig, region: str | None, found: Sequence[Mapping[str, Any]] | None
) -> None:
    """Refuse a bucket the account's listing (`found`) does not show, unless it is said to be
    another account's; one whose ACL is public; one in another region (the internal endpoint
    of the stack's region cannot reach it). `found` None (offline) checks nothing."""
    if found is None or data.bucket_owner == "another-account":
        return
    bucket = data.bucket
    entry = next((entry for entry in found if entry.get("name") == bucket), None)
    if entry is None:
        raise pulumi.RunError(
            f"{PROJECT}:data.bucket = {bucket!r}: this account has no bucket of that name (its "
            "listing does not show it), so every pod would wait on NoSuchBucket/AccessDenied. "
            f"Create it in the stack's region and upload your data (ossutil mb oss://{bucket}), "
            f"or set {PROJECT}:data.createBucket true (or unset data.bucket with it: the stack "
            f"names one from your account), or, if another account owns it, set "
            f"{PROJECT}:data.bucketOwner another-account"
        )
    acl = entry.get("acl", "")
    if acl in PUBLIC_ACLS:
        raise pulumi.RunError(
            f"{PROJECT}:data.bucket = {bucket!r}: its ACL is {acl}; training data and "
            "exported models must not be public: set it private (ossutil set-acl "
            f"oss://{bucket} private) or use another bucket"
        )
    location = entry.get("location", "")
    if region and location and location != f"oss-{region}":
        raise pulumi.RunError(
            f"{PROJECT}:data.bucket = {bucket!r}: it is in {location}, the stack in "
            f"{region}; use a bucket in the stack's region (internal endpoint, no traffic "
            "charge)"
        )


def kept_bucket(bucket_name: str) -> bool | None:
    """Whether the account already holds the bucket the stack creates: one an earlier
    `destroy` kept (`retain_on_delete`), or this stack's own on a later `up`. None offline.
    The provider's create refuses a name that exists (IsBucketExist: "The specified bucket
    name ... is not available"), so such a bucket is adopted (imported), never created."""
    found = listed(GET_BUCKETS, {"nameRegex": f"^{re2_literal(bucket_name)}$"}, "buckets")
    if found is None:
        return None
    return any(entry.get("name") == bucket_name for entry in found)


def grant_needed(data: DataConfig, rrsa: bool) -> str:
    """What the owner of another account's bucket must grant, said once at deploy."""
    principal = (
        "this stack's RAM role (stack output ossRoleName: acs:ram::<this account id>:role/<it>)"
        if rrsa
        else "the RAM user whose AccessKey the volumes use"
    )
    return (
        f"{PROJECT}:data.bucketOwner = another-account: oss://{data.bucket} is not looked up. "
        f"Its owner must grant {principal}, in the bucket's policy, the actions of the stack "
        "output ossAccessPolicy on that bucket; until then every pod waits on AccessDenied"
    )


def require_usable_bucket(config: StackConfig, region: str | None) -> None:
    """A blocking lookup before anything is registered, as for the Kubernetes version. Only
    the ACL is seen: a bucket policy granting anonymous access is not (check it yourself)."""
    data = config.data
    if not data.bucket or data.create_bucket:
        return
    if data.bucket_owner == "another-account":
        pulumi.log.warn(grant_needed(data, config.oss_credentials == "rrsa"))
        return
    found = listed(GET_BUCKETS, {"nameRegex": f"^{re2_literal(data.bucket)}$"}, "buckets")
    check_existing_bucket(data, region, found)


def access_policy(data: DataConfig, bucket_name: str) -> dict[str, Any]:
    """Read the input prefix, read and write the export prefix, nothing else of the bucket."""
    bucket = f"acs:oss:*:*:{bucket_name}"
    prefixes = [data.input_prefix, data.export_prefix]
    return {
        "Version": "1",
        "Statement": [
            {
                # ossfs lists a directory as a prefix listing, always ending in "/" (1.91
                # list_bucket; at mount CheckBucket lists "<prefix>/" with max-keys=2, 2.0
                # oss_check_bucket likewise): only the two prefixes may be. Neither version
                # reads the bucket's info or location, so no bucket-level action is granted.
                "Effect": "Allow",
                "Action": ["oss:ListObjects"],
                "Resource": [bucket],
                "Condition": {"StringLike": {"oss:Prefix": [f"{p}*" for p in prefixes]}},
            },
            {
                "Effect": "Allow",
                "Action": ["oss:GetObject"],
                "Resource": [f"{bucket}/{p}*" for p in prefixes],
            },
            {
                # Writes, multipart uploads (initiate, parts, complete are oss:PutObject) and
                # renames (a copy: GetObject on the source, PutObject on the target).
                "Effect": "Allow",
                "Action": [
                    "oss:PutObject",
                    "oss:DeleteObject",
                    "oss:AbortMultipartUpload",
                    "oss:ListParts",
                ],
                "Resource": [f"{bucket}/{data.export_prefix}*"],
            },
        ],
    }


def input_files(data: DataConfig) -> list[tuple[str, Path]]:
    """(object key under the input prefix, file) for every file of `data.localInputDir`."""
    if not data.local_input_dir:
        return []
    root = local_input_root(data.local_input_dir)
    files = sorted(path for path in root.rglob("*") if path.is_file())
    return [(data.input_prefix + path.relative_to(root).as_posix(), path) for path in files]


def rrsa_trust_policy(oidc_provider_arn: str, issuer_url: str) -> str:
    return json.dumps(
        {
            "Version": "1",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Action": "sts:AssumeRole",
                    "Principal": {"Federated": [oidc_provider_arn]},
                    "Condition": {
                        "StringEquals": {
                            "oidc:aud": RRSA_AUDIENCE,
                            "oidc:iss": issuer_url,
                            "oidc:sub": FUSE_SERVICE_ACCOUNT,
                        }
                    },
                }
            ],
        }
    )


class OssBucket(pulumi.ComponentResource):
    """A bucket the stack creates (`data.createBucket`): private with public access blocked,
    encrypted at rest, versioned, and `retain_on_delete` unless `data.retainOnDestroy` is false.

    Versioning: the export writes whole runs and the user's data is the input; a mistaken
    overwrite or delete (a second `ossutil cp`, a run id reused) keeps the old version, at
    the price of storing it until a lifecycle rule or the user removes it.

    With `data.localInputDir`, its files are uploaded under the input prefix (and kept on
    destroy with the bucket), so a new bucket holds the data before any pod mounts it.
    """

    bucket_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        config: DataConfig,
        bucket_name: str,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tftrain:cloud:OssBucket", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        kept = pulumi.ResourceOptions.merge(
            child, pulumi.ResourceOptions(retain_on_delete=config.retain_on_destroy)
        )
        adopted = kept_bucket(bucket_name)
        if adopted:
            pulumi.log.info(ADOPTED_BUCKET.format(bucket=bucket_name), resource=self)
        bucket = oss.Bucket(
            f"{name}-bucket",
            bucket=bucket_name,
            server_side_encryption_rule=oss.BucketServerSideEncryptionRuleArgs(
                sse_algorithm=SSE_ALGORITHM
            ),
            versioning=oss.BucketVersioningArgs(status="Enabled"),
            # A bucket not kept must go with the stack, though versioning leaves old versions
            # and delete markers in it: DeleteBucket refuses a non-empty bucket (BucketNotEmpty).
            force_destroy=None if config.retain_on_destroy else True,
            tags=resource_tags(name),
            # The engine imports it when the stack does not hold it yet, and treats it as any
            # other resource once it does (same id): harmless on every later `up`.
            opts=pulumi.ResourceOptions.merge(
                kept, pulumi.ResourceOptions(import_=bucket_name if adopted else None)
            ),
        )
        oss.BucketPublicAccessBlock(
            f"{name}-public-access-block",
            bucket=bucket.bucket,
            block_public_access=True,
            opts=child,
        )
        for key, path in input_files(config):
            oss.BucketObject(
                f"{name}-object-{key}",
                bucket=bucket.bucket,
                key=key,
                source=as_provider_path(path),
                # OSS refuses an upload whose bytes do not match; a changed file is an update.
                content_md5=base64.b64encode(hashlib.md5(path.read_bytes()).digest()).decode(),
                opts=kept,
            )
        self.bucket_name = bucket.bucket
        self.register_outputs({"bucket_name": self.bucket_name})


class OssRrsaAccess(pulumi.ComponentResource):
    """A RAM role the CSI OSS plugin's ossfs pods assume through the cluster's RRSA OIDC
    provider, with `access_policy` attached. Output: `role_name` (the PV's roleName)."""

    role_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        config: DataConfig,
        bucket_name: str,
        oidc_provider_arn: pulumi.Input[str],
        issuer_url: pulumi.Input[str],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tftrain:cloud:OssRrsaAccess", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        role = ram.Role(
            f"{name}-role",
            role_name=config.rrsa_role_name or physical_name(name),
            assume_role_policy_document=pulumi.Output.all(oidc_provider_arn, issuer_url).apply(
                lambda args: rrsa_trust_policy(args[0], args[1])
            ),
            description="tftrain: the CSI OSS plugin reads the input and writes the export",
            opts=child,
        )
        policy = ram.Policy(
            f"{name}-policy",
            policy_name=physical_name(name),
            policy_document=json.dumps(access_policy(config, bucket_name)),
            description="tftrain: read the input prefix, write the export prefix",
            opts=child,
        )
        ram.RolePolicyAttachment(
            f"{name}-attachment",
            role_name=role.role_name,
            policy_name=policy.policy_name,
            policy_type="Custom",
            opts=child,
        )
        self.role_name = role.role_name
        self.register_outputs({"role_name": self.role_name})
