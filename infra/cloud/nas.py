"""The shared file system every replica reads data from and writes checkpoints and logs to."""

from __future__ import annotations

import pulumi
from pulumi_alicloud import nas

from infra.cloud.naming import physical_name, resource_tags
from infra.cloud.network import Network
from infra.config import StorageConfig

# General-purpose NAS: pay per GiB used, no capacity to size up front (extreme NAS needs one).
FILE_SYSTEM_TYPE = "standard"
# At-rest encryption with a NAS-managed KMS key: no key to create, rotate or pay for.
NAS_MANAGED_KEY = 1


class NasStorage(pulumi.ComponentResource):
    """A NAS file system reachable only from the stack's VPC, through one mount target.

    The access rule admits exactly the VPC CIDR, read/write, with `no_squash`: the trainer
    images run as root, and a fresh file system's root directory belongs to root, so with
    `root_squash` or `all_squash` no replica could create the job directory. The boundary is
    the network (only hosts in this VPC may mount), not the UID.

    Outputs: `file_system_id`, `mount_target_domain` (the NFS server of the PersistentVolume).
    """

    file_system_id: pulumi.Output[str]
    mount_target_domain: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        config: StorageConfig,
        network: Network,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        if config.kind != "nas":
            raise ValueError(f"NasStorage needs storage.kind nas, not {config.kind!r}")
        super().__init__("tftrain:cloud:NasStorage", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        file_system = nas.FileSystem(
            f"{name}-fs",
            file_system_type=FILE_SYSTEM_TYPE,
            protocol_type=config.nas_protocol,
            storage_type=config.nas_storage_type,
            encrypt_type=NAS_MANAGED_KEY,
            # Same zone as the nodes: NFS round trips stay inside one zone.
            zone_id=network.zone_id,
            description=f"tftrain data, checkpoints and logs of {name}",
            tags=resource_tags(name),
            opts=child,
        )
        access_group = nas.AccessGroup(
            f"{name}-access-group",
            access_group_name=physical_name(name),
            access_group_type="Vpc",
            file_system_type=FILE_SYSTEM_TYPE,
            description=f"tftrain VPC of {name}",
            opts=child,
        )
        rule = nas.AccessRule(
            f"{name}-access-rule",
            access_group_name=access_group.access_group_name,
            file_system_type=FILE_SYSTEM_TYPE,
            source_cidr_ip=network.vpc_cidr,
            rw_access_type="RDWR",
            user_access_type="no_squash",
            priority=1,
            opts=child,
        )
        mount_target = nas.MountTarget(
            f"{name}-mount-target",
            file_system_id=file_system.id,
            access_group_name=access_group.access_group_name,
            network_type="Vpc",
            vpc_id=network.vpc_id,
            vswitch_id=network.vswitch_id,
            # A mount target whose group has no rule refuses every client; publish the domain
            # (and so let the PersistentVolume be made) only once the rule exists.
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[rule])),
        )

        self.file_system_id = file_system.id
        self.mount_target_domain = mount_target.mount_target_domain
        self.register_outputs(
            {
                "file_system_id": self.file_system_id,
                "mount_target_domain": self.mount_target_domain,
            }
        )
