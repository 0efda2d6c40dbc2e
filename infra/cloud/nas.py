"""The shared file system every replica reads data from and writes checkpoints and logs to."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
from pulumi_alicloud import nas

from infra.cloud.lookup import listed, re2_literal
from infra.cloud.naming import physical_name, resource_tags
from infra.cloud.network import Network
from infra.config import PROJECT
from infra.config.model import StorageConfig

# General-purpose NAS: pay per GiB used, no capacity to size up front (extreme NAS needs one).
FILE_SYSTEM_TYPE = "standard"
# At-rest encryption with a NAS-managed KMS key: no key to create, rotate or pay for.
NAS_MANAGED_KEY = 1
# nas.get_file_systems, through `infra.cloud.lookup`. It filters by description, not by tags
# (SDK 4.0.0 `nas/get_file_systems.py`: no tags argument, no tags in its result), so the
# description names the stack: `<project>-<stack>-<component>` is unique per account.
GET_FILE_SYSTEMS = "alicloud:nas/getFileSystems:getFileSystems"
ADOPTED_FILE_SYSTEM = (
    "NAS file system {id} holds this stack's runs (kept by an earlier destroy, "
    "storage.retainOnDestroy): adopted with its checkpoints, not created anew "
    "(docs/data.md, Up after destroy)"
)


def file_system_description(name: str) -> str:
    return f"tftrain data, checkpoints and logs of {physical_name(name)}"


def kept_file_system(
    config: StorageConfig, zone_id: str, description: str, found: Sequence[Mapping[str, Any]]
) -> str | None:
    """The id of the file system an earlier `destroy` of this stack kept, from the listing
    `found` (this stack's description); None when there is none. Several, or one unlike what
    the stack asks for (a replacement would orphan it again), stop the run naming the way
    to re-attach it explicitly (`storage.fileSystemId`)."""
    kept = [entry for entry in found if entry.get("description") == description]
    if not kept:
        return None
    ids = ", ".join(sorted(str(entry.get("id")) for entry in kept))
    entry = kept[0]
    wanted = {"storageType": config.nas_storage_type, "protocolType": config.nas_protocol}
    if zone_id:
        wanted["zoneId"] = zone_id
    differs = sorted(key for key, value in wanted.items() if entry.get(key) != value)
    if len(kept) > 1 or differs:
        why = f"{len(kept)} of them" if len(kept) > 1 else f"it differs in {', '.join(differs)}"
        raise pulumi.RunError(
            f"{PROJECT}:storage.fileSystemId = '': this stack's kept NAS file systems exist "
            f"({ids}; {why}), so a new one would leave them billing unseen. Set "
            f"{PROJECT}:storage.fileSystemId to the one whose checkpoints you want (the others "
            "can then be deleted in the NAS console), or delete them first"
        )
    return str(entry["id"])


class NasStorage(pulumi.ComponentResource):
    """A NAS file system that only the cluster's own vSwitches can mount, and that outlives
    `pulumi destroy` unless `storage.retainOnDestroy` is false.

    Access: one rule per client CIDR (the vSwitches whose addresses mount NFS: ACK nodes, ASK's
    ECI pods; by default the network's vSwitch), read/write, `no_squash`. Root is not squashed
    because the mounting client *is* root: the NAS CSI node plugin creates the PV's
    sub-directory and chmods it as root (storage.py); with `root_squash` or `all_squash` it
    would act as the anonymous user in a root-owned directory. The pods never run as root.
    The boundary is the network: only the cluster's vSwitches, not the whole VPC.

    Retention: the file system holds every checkpoint and event file, so by default it is
    `retain_on_delete`: destroy (or a replacement) drops it from the stack and leaves it in the
    account. The mount target, access group and rules hold no data and go with the stack.

    Re-attach (`storage.fileSystemId`): an existing file system, e.g. one a destroyed stack
    kept, is not a resource of this stack at all: it gets a new access group, rules and mount
    target in this stack's vSwitch, and nothing the stack does can delete it.

    Outputs: `file_system_id`, `mount_target_domain` (the NFS server of the PersistentVolume).
    """

    file_system_id: pulumi.Output[str]
    mount_target_domain: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        config: StorageConfig,
        network: Network,
        client_cidrs: Sequence[pulumi.Input[str]] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`client_cidrs`: the CIDRs that mount; by default the network's vSwitch CIDR."""
        if config.kind != "nas":
            raise ValueError(f"NasStorage needs storage.kind nas, not {config.kind!r}")
        if client_cidrs is None:
            client_cidrs = [network.vswitch_cidr]
        super().__init__("tftrain:cloud:NasStorage", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        file_system_id = config.file_system_id or self._file_system(name, config, network, child)
        access_group = nas.AccessGroup(
            f"{name}-access-group",
            access_group_name=physical_name(name),
            access_group_type="Vpc",
            file_system_type=FILE_SYSTEM_TYPE,
            description=f"tftrain cluster vSwitches of {name}",
            opts=child,
        )
        rules = [
            nas.AccessRule(
                f"{name}-access-rule" if index == 0 else f"{name}-access-rule-{index}",
                access_group_name=access_group.access_group_name,
                file_system_type=FILE_SYSTEM_TYPE,
                source_cidr_ip=cidr,
                rw_access_type="RDWR",
                user_access_type="no_squash",
                priority=1,
                opts=child,
            )
            for index, cidr in enumerate(client_cidrs)
        ]
        mount_target = nas.MountTarget(
            f"{name}-mount-target",
            file_system_id=file_system_id,
            access_group_name=access_group.access_group_name,
            network_type="Vpc",
            vpc_id=network.vpc_id,
            vswitch_id=network.vswitch_id,
            # A mount target whose group has no rule refuses every client; publish the domain
            # (and so let the PersistentVolume be made) only once the rules exist.
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=rules)),
        )

        self.file_system_id = pulumi.Output.from_input(file_system_id)
        self.mount_target_domain = mount_target.mount_target_domain
        self.register_outputs(
            {
                "file_system_id": self.file_system_id,
                "mount_target_domain": self.mount_target_domain,
            }
        )

    def _file_system(
        self,
        name: str,
        config: StorageConfig,
        network: Network,
        child: pulumi.ResourceOptions,
    ) -> pulumi.Output[str]:
        """A new file system, kept on destroy unless `storage.retainOnDestroy` is false; or
        the one an earlier destroy kept, adopted (imported) with its checkpoints."""
        description = file_system_description(name)
        found = listed(
            GET_FILE_SYSTEMS,
            {
                "fileSystemType": FILE_SYSTEM_TYPE,
                "descriptionRegex": f"^{re2_literal(description)}$",
            },
            "systems",
        )
        # A zone that is config, not an existing vSwitch's (known only once it is looked up).
        zone = "" if network.config.vswitch_id else network.config.zone_id
        adopted = None if found is None else kept_file_system(config, zone, description, found)
        if adopted:
            pulumi.log.info(ADOPTED_FILE_SYSTEM.format(id=adopted), resource=self)
        return nas.FileSystem(
            f"{name}-fs",
            file_system_type=FILE_SYSTEM_TYPE,
            protocol_type=config.nas_protocol,
            storage_type=config.nas_storage_type,
            encrypt_type=NAS_MANAGED_KEY,
            # Same zone as the nodes: NFS round trips stay inside one zone.
            zone_id=network.zone_id,
            description=description,
            tags=resource_tags(name),
            opts=pulumi.ResourceOptions.merge(
                child,
                pulumi.ResourceOptions(retain_on_delete=config.retain_on_destroy, import_=adopted),
            ),
        ).id
