"""The user's OSS bucket: created private and kept on destroy (when the stack makes it), and
the least-privilege access the CSI OSS plugin gets to it.

Access is one RAM policy: list and read the input prefix, read and write only the export
prefix. On ACK (`data.credentials` rrsa) the stack makes a RAM role that only the plugin's
ossfs pods can assume, through the cluster's RRSA OIDC provider, and attaches the policy to
it: no AccessKey exists. Elsewhere (secret) the user's RAM user holds the key; the stack
publishes the same policy document (`ossAccessPolicy`) for the user to attach to that user.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
from pulumi_alicloud import oss, ram

from infra.cloud.naming import physical_name, resource_tags
from infra.config import PROJECT
from infra.config.model import DataConfig

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


def check_existing_bucket(
    bucket: str, region: str | None, found: Sequence[Mapping[str, Any]] | None
) -> None:
    """Refuse a bucket of the account whose ACL is public, or that lives in another region
    (the internal endpoint of the stack's region cannot reach it). A bucket the account's
    listing does not show (another account's) is not checked: the mount reports it."""
    for entry in found or ():
        if entry.get("name") != bucket:
            continue
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


def require_usable_bucket(data: DataConfig, region: str | None) -> None:
    """A blocking lookup before anything is registered, as for the Kubernetes version. Only
    the ACL is seen: a bucket policy granting anonymous access is not (check it yourself)."""
    if not data.bucket or data.create_bucket:
        return
    # The token oss.get_buckets invokes, called directly: its typed wrapper cannot return an
    # unknown result, which is what an offline render (no cloud to ask) gets.
    result = pulumi.runtime.invoke(
        GET_BUCKETS, {"nameRegex": f"^{re.escape(data.bucket)}$"}, pulumi.InvokeOptions()
    )
    if result.is_known and result.value:
        check_existing_bucket(data.bucket, region, result.value.get("buckets"))


def access_policy(data: DataConfig) -> dict[str, Any]:
    """Read the input prefix, read and write the export prefix, nothing else of the bucket."""
    bucket = f"acs:oss:*:*:{data.bucket}"
    prefixes = [data.input_prefix, data.export_prefix]
    return {
        "Version": "1",
        "Statement": [
            {
                # ossfs lists a directory as a prefix listing; only the two prefixes may be.
                "Effect": "Allow",
                "Action": ["oss:ListObjects"],
                "Resource": [bucket],
                "Condition": {"StringLike": {"oss:Prefix": [f"{p}*" for p in prefixes]}},
            },
            {
                # ossfs reads the bucket's metadata once when it mounts.
                "Effect": "Allow",
                "Action": ["oss:GetBucketInfo"],
                "Resource": [bucket],
            },
            {
                "Effect": "Allow",
                "Action": ["oss:GetObject"],
                "Resource": [f"{bucket}/{p}*" for p in prefixes],
            },
            {
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
    """

    bucket_name: pulumi.Output[str]

    def __init__(
        self, name: str, config: DataConfig, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tftrain:cloud:OssBucket", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        bucket = oss.Bucket(
            f"{name}-bucket",
            bucket=config.bucket,
            server_side_encryption_rule=oss.BucketServerSideEncryptionRuleArgs(
                sse_algorithm=SSE_ALGORITHM
            ),
            versioning=oss.BucketVersioningArgs(status="Enabled"),
            tags=resource_tags(name),
            opts=pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(retain_on_delete=config.retain_on_destroy)
            ),
        )
        oss.BucketPublicAccessBlock(
            f"{name}-public-access-block",
            bucket=bucket.bucket,
            block_public_access=True,
            opts=child,
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
            policy_document=json.dumps(access_policy(config)),
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
