"""What `up` does to each Kubernetes object and cloud resource (create, update, replace,
delete), why a cloud resource is replaced, and what a replace reaches that the render cannot
show (the rules: `infra.render.summary`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from infra.manifests.image_cache import KIND as IMAGE_CACHE_KIND
from infra.manifests.image_cache import REPLACE_ON_CHANGES as IMAGE_CACHE_REPLACES
from infra.manifests.storage import NAS_CSI_DRIVER
from infra.mock_deploy import preview_id
from infra.render.kubernetes import PLATFORM_NOTE
from infra.render.parsed import (
    CloudResource,
    Render,
    kind_of_title,
    name_of_title,
    type_of_title,
    value_at,
)
from infra.render.provider_sdk import has_schema_table, replacing_arguments, snake

ACTIONS = ("create", "update", "replace", "delete")

# pulumi-kubernetes' replace-on-change paths (provider/pkg/provider, `forceNew`) for the kinds
# a stack can hold; a name or namespace change is a different object here anyway.
_PERSISTENT_VOLUME_SOURCES = tuple(
    f"spec.{source}"
    for source in [
        "awsElasticBlockStore",
        "azureDisk",
        "azureFile",
        "cephfs",
        "cinder",
        "csi",
        "fc",
        "flexVolume",
        "flocker",
        "gcePersistentDisk",
        "glusterfs",
        "hostPath",
        "iscsi",
        "local",
        "nfs",
        "photonPersistentDisk",
        "portworxVolume",
        "quobyte",
        "rbd",
        "scaleIO",
        "storageos",
        "vsphereVolume",
    ]
)
REPLACE_PATHS: dict[str, tuple[str, ...]] = {
    "Job": ("spec.completions", "spec.parallelism", "spec.selector", "spec.template"),
    "Deployment": ("spec.selector",),
    "Service": ("spec.clusterIP",),
    "PersistentVolumeClaim": ("spec",),
    "PersistentVolume": _PERSISTENT_VOLUME_SOURCES,
    "ConfigMap": ("data", "binaryData"),
    "Secret": ("type", "data", "stringData"),
    IMAGE_CACHE_KIND: IMAGE_CACHE_REPLACES,
}
_CLOUD_UPDATE_NOTE = (
    "  (updates of {kinds}: no provider schema recorded for their type; the installed SDK marks "
    "none of their changed inputs as replaced on change, but documents few; "
    "`pulumi preview` has the last word)"
)
# What a replace does beyond the cloud section, which the Kubernetes section cannot show: it
# is rendered from placeholders (`<nas-mount-target-domain>`), not from the cloud's outputs.
CLUSTER_TYPES = frozenset(
    {
        "alicloud:cs/managedKubernetes:ManagedKubernetes",
        "alicloud:cs/serverlessKubernetes:ServerlessKubernetes",
    }
)
FILE_SYSTEM_TYPE = "alicloud:nas/fileSystem:FileSystem"
MOUNT_TARGET_TYPE = "alicloud:nas/mountTarget:MountTarget"
_NEW_CLUSTER = (
    "a new, empty cluster, so a new Kubernetes provider (its clusterIdentifier is the "
    "cluster's id): every Kubernetes object is created in it anew"
)
_REPLACE_REACHES = {
    **dict.fromkeys(CLUSTER_TYPES, _NEW_CLUSTER),
    FILE_SYSTEM_TYPE: "a new, empty file system: no run finds its checkpoints or event files in it",
    MOUNT_TARGET_TYPE: "a new NFS server name: the PersistentVolume that mounts it is replaced",
}
# A platform stack's replacements reach every run stack on it, which its render cannot show.
_RUNS_DISTURBED = {
    **dict.fromkeys(
        CLUSTER_TYPES,
        "every one is stopped with the old cluster; its next `pulumi up` reads the new "
        "cluster's id and credential and creates all of its objects anew",
    ),
    FILE_SYSTEM_TYPE: "every run's checkpoints and event files stay on the old file system: "
    "each run starts over from step 0",
    MOUNT_TARGET_TYPE: "the platform replaces each run namespace's NAS volume, and its delete "
    "waits (pv-protection) until the run stack there has given up its claim: destroy those run "
    "stacks first, `up` them again after",
}


def kubernetes_action(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """What pulumi-kubernetes does to an object that exists on both sides (None: nothing)."""
    if old == new:
        return None
    replaces = REPLACE_PATHS.get(new["kind"], ())
    return "replace" if any(value_at(old, p) != value_at(new, p) for p in replaces) else "update"


@dataclass(frozen=True)
class CloudChange:
    action: str  # "update" or "replace"
    replacing: tuple[str, ...]  # the changed inputs the provider marks as replaced on change
    # For each of `replacing`, the replaced resources whose new id it takes ("" if none).
    referring: tuple[str, ...]


def _references(value: str, replaced: set[str]) -> list[str]:
    """The resources in `replaced` whose id `value` holds."""
    return sorted(name for name in replaced if preview_id(name) in value)


def _changed_inputs(old: CloudResource, new: CloudResource, replaced: set[str]) -> list[str]:
    """Inputs that differ, or that refer to a resource being replaced (its new id is another
    value), leaving out those the engine ignores (the new program's option is what counts)."""
    changed = []
    for key in sorted((old.inputs.keys() | new.inputs.keys()) - new.ignore_changes):
        value = new.inputs.get(key, "")
        if old.inputs.get(key) != new.inputs.get(key) or _references(value, replaced):
            changed.append(key)
    return changed


def cloud_changes(
    old: dict[str, CloudResource], new: dict[str, CloudResource]
) -> dict[str, CloudChange]:
    """What happens to each cloud resource on both sides that changes, by title.

    A replace can make a dependent's input change, which may replace the dependent in turn:
    repeated until no more resources are replaced (the set only grows, so this ends)."""
    replaced: set[str] = set()
    while True:
        changes = {}
        for title in sorted(old.keys() & new.keys()):
            changed = _changed_inputs(old[title], new[title], replaced)
            if not changed:
                continue
            force_new = replacing_arguments(type_of_title(title))
            replacing = tuple(key for key in changed if snake(key) in force_new)
            referring = tuple(
                ", ".join(_references(new[title].inputs.get(key, ""), replaced))
                for key in replacing
            )
            action = "replace" if replacing else "update"
            changes[title] = CloudChange(action, replacing, referring)
        now = {name_of_title(t) for t, change in changes.items() if change.action == "replace"}
        if now == replaced:
            return changes
        replaced = now


def actions_of(
    old: dict[str, Any], new: dict[str, Any], action_of: Callable[[str], str | None]
) -> dict[str, dict[str, str]]:
    """{action: {title: kind}} for every title that changes; `action_of(title)` says what
    happens to a title on both sides (None: nothing)."""
    found: dict[str, dict[str, str]] = {action: {} for action in ACTIONS}
    for title in sorted(old.keys() | new.keys()):
        if title not in old:
            action: str | None = "create"
        elif title not in new:
            action = "delete"
        else:
            action = action_of(title)
        if action:
            found[action][title] = kind_of_title(title)
    return found


def counts(actions: dict[str, dict[str, str]]) -> str:
    parts = []
    for action in ACTIONS:
        kinds = Counter(actions[action].values())
        if kinds:
            by_kind = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
            parts.append(f"{action} {sum(kinds.values())} ({by_kind})")
    return "; ".join(parts) if parts else "no change"


def kubernetes_action_after(
    old: Render, new: Render, title: str, replaced_types: set[str]
) -> str | None:
    """What happens to a Kubernetes object, given the cloud resources replaced under it. The
    Kubernetes render holds placeholders for cloud outputs (`<nas-mount-target-domain>`), so
    its own diff cannot see these: a new cluster takes every object anew, and a new mount
    target changes the NFS server of the PersistentVolume, a replace-on-change field."""
    if replaced_types & CLUSTER_TYPES or old.platform != new.platform:
        return "replace"
    nas_volume = value_at(new.objects[title], "spec.csi.driver") == NAS_CSI_DRIVER
    if MOUNT_TARGET_TYPE in replaced_types and nas_volume:
        return "replace"
    return kubernetes_action(old.objects[title], new.objects[title])


def cloud_replace_lines(changes: dict[str, CloudChange]) -> list[str]:
    """Why each cloud resource is replaced: the changed inputs (a value, or the id of a
    replaced resource) that its provider replaces the resource on."""
    lines = []
    for title, change in sorted(changes.items()):
        if change.action != "replace":
            continue
        causes = [
            f"{key} (new id of {names})" if names else key
            for key, names in zip(change.replacing, change.referring, strict=True)
        ]
        name = name_of_title(title)
        line = f"  {name}: the provider replaces it on a change of {', '.join(causes)}"
        reaches = _REPLACE_REACHES.get(type_of_title(title))
        lines.append(f"{line}; {reaches}" if reaches else line)
    return lines


def cloud_update_note(updated: dict[str, str]) -> list[str]:
    """The caveat for updated resources of types with no recorded provider schema."""
    kinds = sorted(
        {kind for title, kind in updated.items() if not has_schema_table(type_of_title(title))}
    )
    return [_CLOUD_UPDATE_NOTE.format(kinds=", ".join(kinds))] if kinds else []


def platform_lines(new_text: str, replaced_types: set[str]) -> list[str]:
    """What a platform change does to the run stacks on it (none of which it can see)."""
    if PLATFORM_NOTE not in new_text:
        return []
    reaches = [why for kind, why in _RUNS_DISTURBED.items() if kind in replaced_types]
    return [f"Run stacks on this platform: {'; '.join(reaches) or 'untouched'}"]


def moved_run_lines(old: Render, new: Render) -> list[str]:
    """A run stack pointed at another platform: another cluster, so every object anew."""
    if not (old.platform and new.platform) or old.platform == new.platform:
        return []
    return [
        f"Platform: {old.platform} → {new.platform}: another cluster (its id is the provider's "
        "clusterIdentifier), so every object of this run is created there anew and deleted here"
    ]
