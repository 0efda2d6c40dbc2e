"""Replace-on-change arguments of the cloud resource types the program registers, as the
Terraform provider that pulumi-alicloud bridges declares them (`ForceNew: true`).

Why a table: the pulumi_alicloud SDK's docstrings leave the force-new flag out for every one
of these types (the flag lives in the provider plugin's schema, which the Python package does
not ship), so `infra.render.provider_sdk` alone would call a vSwitch CIDR or NAS storage type
change an update. The summary takes an argument as replaced on change when this table or the
SDK's docstring says so.

Provenance (recorded 2026-11-23):
- Installed: pulumi_alicloud 4.0.0 (PyPI). Its SDK docstrings cite features "available since"
  terraform-provider-alicloud v1.295.0 and v2.0.0-beta5, so it bridges the provider's v2 line
  at or after those. The stored GitHub index has no pulumi-alicloud v4 source: its newest
  `provider/go.mod` (pulumi/pulumi-alicloud master 9d2b1e47cc, 2026-08-14, module .../v3)
  pins terraform-provider-alicloud v1.285.0.
- Read: aliyun/terraform-provider-alicloud branch `release/v2` at
  ace5bcf8777e87cf3c2ae0907dfc16164c30b51f (2026-08-21), the newest v2 source indexed, file
  `alicloud/resource_alicloud_<terraform type>.go` named beside each entry: the top-level
  arguments of the resource's current schema with `ForceNew: true` (no state-upgrader schema,
  no `Removed:` argument). None of the 16 files forces new from a CustomizeDiff. Nested
  force-new fields (`auto_mode.enabled`, `access_mode.mode_value`, ...) sit under arguments
  that are force-new themselves, so the top level says it all.
- Cross-checked: the same sets at tag v1.289.0 (28ee93bc63), tag v2.0.0-beta3 and master
  81c43b6727 (2026-08-21).
- Token → Terraform type: pulumi/pulumi-alicloud `provider/resources.go`.

OSS and RAM types (the data bucket and the CSI OSS plugin's RRSA role, issue 21; recorded
2026-11-24): read from the stored index of aliyun/terraform-provider-alicloud at the commit
named beside each entry, the newest version of that file it holds; not cross-checked against
release/v2 @ ace5bcf8777e.

A provider upgrade can move an argument in or out: re-read the files and update the table.
`tests/test_force_new_fields.py` fails when the program registers a type missing here, or when
a name here is no longer an argument of the installed SDK class.
"""

from __future__ import annotations

# Pulumi type token → snake_case argument names (the SDK's and Terraform's spelling).
FORCE_NEW: dict[str, frozenset[str]] = {
    # alicloud_cs_autoscaling_config
    "alicloud:cs/autoscalingConfig:AutoscalingConfig": frozenset({"cluster_id"}),
    # alicloud_cs_managed_kubernetes
    "alicloud:cs/managedKubernetes:ManagedKubernetes": frozenset(
        {
            "api_audiences",
            "auto_mode",
            "cluster_domain",
            "ip_stack",
            "node_cidr_mask",
            "pod_cidr",
            "profile",
            "proxy_mode",
            "service_account_issuer",
            "service_cidr",
        }
    ),
    # alicloud_cs_kubernetes_node_pool
    "alicloud:cs/nodePool:NodePool": frozenset(
        {
            "auto_mode",
            "cis_enabled",
            "cluster_id",
            "deployment_set_id",
            "instance_metadata_options",
            "login_as_non_root",
            "node_name_mode",
            "ram_role_name",
            "security_group_id",
            "security_group_ids",
            "security_hardening_os",
            "soc_enabled",
            "tee_config",
            "type",
        }
    ),
    # alicloud_cs_serverless_kubernetes
    "alicloud:cs/serverlessKubernetes:ServerlessKubernetes": frozenset(
        {
            "endpoint_public_access_enabled",
            "security_group_id",
            "service_cidr",
            "vpc_id",
            "vswitch_ids",
        }
    ),
    # alicloud_eip_address
    "alicloud:ecs/eipAddress:EipAddress": frozenset(
        {
            "allocation_id",
            "high_definition_monitor_log_status",
            "instance_charge_type",
            "internet_charge_type",
            "ip_address",
            "isp",
            "netmode",
            "payment_type",
            "public_ip_address_pool_id",
            "security_protection_types",
            "zone",
        }
    ),
    # alicloud_eip_association
    "alicloud:ecs/eipAssociation:EipAssociation": frozenset(
        {"allocation_id", "instance_id", "instance_type", "private_ip_address", "vpc_id"}
    ),
    # alicloud_security_group (master 81c43b6727, issue 37)
    "alicloud:ecs/securityGroup:SecurityGroup": frozenset({"security_group_type", "vpc_id"}),
    # alicloud_security_group_rule (master 81c43b6727): every argument but the description
    "alicloud:ecs/securityGroupRule:SecurityGroupRule": frozenset(
        {
            "cidr_ip",
            "ip_protocol",
            "ipv6_cidr_ip",
            "nic_type",
            "policy",
            "port_range",
            "prefix_list_id",
            "priority",
            "security_group_id",
            "source_group_owner_account",
            "source_group_owner_id",
            "source_security_group_id",
            "type",
        }
    ),
    # alicloud_nas_access_group
    "alicloud:nas/accessGroup:AccessGroup": frozenset(
        {"access_group_name", "access_group_type", "file_system_type", "name", "type"}
    ),
    # alicloud_oss_bucket (read at 034e4b71dd7e, see the OSS/RAM note below)
    "alicloud:oss/bucket:Bucket": frozenset({"bucket", "storage_class", "redundancy_type"}),
    # alicloud_oss_bucket_object (0852d0f445c9): a new key or bucket is a new object; a new
    # content_md5 (changed file) is an update, Put again
    "alicloud:oss/bucketObject:BucketObject": frozenset({"bucket", "key"}),
    # alicloud_oss_bucket_public_access_block (3803d483470e)
    "alicloud:oss/bucketPublicAccessBlock:BucketPublicAccessBlock": frozenset({"bucket"}),
    # alicloud_ram_policy (00a88c61d294)
    "alicloud:ram/policy:Policy": frozenset({"description", "policy_name", "name"}),
    # alicloud_ram_role (168754df4c7a)
    "alicloud:ram/role:Role": frozenset({"role_name", "name"}),
    # alicloud_ram_role_policy_attachment (21befa015acb)
    "alicloud:ram/rolePolicyAttachment:RolePolicyAttachment": frozenset(
        {"role_name", "policy_name", "policy_type"}
    ),
    # alicloud_nas_access_rule
    "alicloud:nas/accessRule:AccessRule": frozenset({"access_group_name", "file_system_type"}),
    # alicloud_nas_file_system
    "alicloud:nas/fileSystem:FileSystem": frozenset(
        {
            "encrypt_type",
            "file_system_type",
            "kms_key_id",
            "protocol_type",
            "redundancy_type",
            "redundancy_vswitch_ids",
            "storage_type",
            "vpc_id",
            "vswitch_id",
            "zone_id",
        }
    ),
    # alicloud_nas_mount_target
    "alicloud:nas/mountTarget:MountTarget": frozenset(
        {"file_system_id", "network_type", "vpc_id", "vswitch_id"}
    ),
    # alicloud_nat_gateway
    "alicloud:vpc/natGateway:NatGateway": frozenset(
        {
            "access_mode",
            "availability_mode",
            "instance_charge_type",
            "internet_charge_type",
            "payment_type",
            "private_link_enabled",
            "vpc_id",
        }
    ),
    # alicloud_vpc
    "alicloud:vpc/network:Network": frozenset({"ipv6_cidr_block", "is_default", "user_cidrs"}),
    # alicloud_snat_entry
    "alicloud:vpc/snatEntry:SnatEntry": frozenset(
        {"snat_table_id", "source_cidr", "source_vswitch_id"}
    ),
    # alicloud_vswitch
    "alicloud:vpc/switch:Switch": frozenset(
        {"availability_zone", "cidr_block", "is_default", "vpc_id", "zone_id"}
    ),
    # alicloud_slb_acl
    "alicloud:slb/acl:Acl": frozenset({"ip_version", "resource_group_id"}),
    # alicloud_slb_acl_entry_attachment
    "alicloud:slb/aclEntryAttachment:AclEntryAttachment": frozenset({"acl_id", "comment", "entry"}),
}
