"""What a change does, read off the two renders of a stack: the lines a reviewer reads first.

A line diff shows *what* changed; this says what `pulumi up` would then *do*, with the rules
the program really runs under:
- Kubernetes objects: pulumi-kubernetes replaces an object when a replace-on-change path
  differs (for a Job: its pod template, which the API server never lets change), plus the
  program's own rule for the ImageCache (`infra.manifests.image_cache`); any other
  difference is an update.
- Cloud resources: a changed input replaces the resource when the bridged Terraform provider's
  schema declares it force-new (`infra.render.force_new_fields`, recorded for every type the
  program registers) or the installed SDK's docstring says so (`infra.render.provider_sdk`),
  and so does an input that refers to a replaced resource's id (the id changes); inputs in
  the resource's `ignoreChanges` option are no change at all. Any other change is an update.
  For a type missing from the table only the SDK's few docstrings are known, so the summary
  says so whenever it counts an update of one: `pulumi preview` has the last word.
- Across the two: a replaced cluster takes every Kubernetes object anew, a replaced NAS mount
  target replaces the PersistentVolume (its server), and a replaced file system leaves the
  run's checkpoints behind; the Kubernetes render cannot show these (it holds placeholders).
- The run: a Job carries its run id (`tftrain.io/run-id`). A new id means the live run is
  stopped and a new one starts in its own directory; the same id on replaced Jobs means the
  run resumes from its checkpoints.
- GPUs: the `nvidia.com/gpu` limits of the Jobs, by replica group and ECI spec.
- Public endpoints: an internet-facing load balancer (TensorBoard's SLB, the cluster's API
  server of either kind), or an elastic IP, that only the new side has.
- Isolation: on ASK (NetworkPolicies marked not enforced), that the stack isolates neither
  the replicas' port nor NAS from other pods of the VPC.
- An idle GPU pool: a GPU node pool with more nodes than GPU replicas to fill them.
- A sweep: its trials created, kept and removed, what runs at once, the GPU-hours at most
  (`infra.render.sweep`).
- Data: the OSS input the training pods read and the export target a successful run is
  copied to (the CSI OSS volumes), when either side has one.

Only the two render texts are read, so the REV side can be any revision's render.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

from infra.manifests.common import REPLICA_TYPE_LABEL, RUN_ID_LABEL
from infra.manifests.image_cache import KIND as IMAGE_CACHE_KIND
from infra.manifests.image_cache import REPLACE_ON_CHANGES as IMAGE_CACHE_REPLACES
from infra.manifests.network_policy import NOT_ENFORCED
from infra.manifests.oss import OSS_CSI_DRIVER
from infra.manifests.placement import ECI_USE_SPECS
from infra.manifests.tensorboard import SLB_ADDRESS_TYPE
from infra.mock_deploy import STACK_REFERENCE, preview_id
from infra.render.cloud import IGNORE_CHANGES
from infra.render.kubernetes import PLATFORM_NOTE, object_title
from infra.render.provider_sdk import has_schema_table, replacing_arguments, snake
from infra.render.style import title_of
from infra.render.sweep import parse_sweep, sweep_lines

GPU_RESOURCE = "nvidia.com/gpu"
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
    MOUNT_TARGET_TYPE: "each run's volume mounts an NFS server name that no longer exists "
    "until its next `pulumi up` replaces its PersistentVolume",
}
_COMPONENT_PREFIX = "tftrain:"
# A run stack's read of its platform's outputs: nothing the cloud holds, nothing to count.
_STACK_REFERENCE = f"{STACK_REFERENCE}  "
_LOOKUP = "(lookup)"
SECTION_BANNER = "# ====="


@dataclass
class CloudResource:
    """A cloud resource as rendered: its inputs, and the resource option that says which of
    them the engine never diffs."""

    inputs: dict[str, str] = field(default_factory=dict)  # name: one-line value
    ignore_changes: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Render:
    """The parts of one render the summary reads."""

    objects: dict[str, dict[str, Any]]  # Kubernetes objects by title (`Job ns/name`)
    cloud: dict[str, CloudResource]  # cloud resources by title (`type  name`)
    platform: str = ""  # a run stack's platform stack (its StackReference's name)


def parse_render(text: str) -> Render:
    """A render as written by `render_stack` ("" for a stack that does not exist)."""
    documents = [doc for doc in yaml.safe_load_all(text) if doc is not None]
    objects = {object_title(doc): doc for doc in documents}
    cloud: dict[str, CloudResource] = {}
    current: CloudResource | None = None
    in_reference, platform = False, ""
    for line in text.splitlines():
        if line == "---":
            break  # the Kubernetes section begins
        if line.startswith(SECTION_BANNER):
            current, in_reference = None, False  # a section's banner: no resource's input
            continue
        found = title_of(line)
        if found is not None:
            # A component is a grouping, not something the cloud holds; a lookup or a stack
            # reference holds nothing.
            in_reference = found.startswith(_STACK_REFERENCE)
            is_resource = (
                "  " in found
                and not found.endswith(_LOOKUP)
                and not found.startswith(_COMPONENT_PREFIX)
                and not in_reference
            )
            current = cloud.setdefault(found, CloudResource()) if is_resource else None
        elif in_reference and line.startswith("#   name: "):
            platform = line.removeprefix("#   name: ")
        elif current is not None and line.startswith("# "):
            key, _, value = line.lstrip("# ").partition(": ")
            if key == IGNORE_CHANGES:
                current.ignore_changes = frozenset(yaml.safe_load(value))
            else:
                current.inputs[key] = value
    return Render(objects=objects, cloud=cloud, platform=platform)


def _at(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def kubernetes_action(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """What pulumi-kubernetes does to an object that exists on both sides (None: nothing)."""
    if old == new:
        return None
    replaces = REPLACE_PATHS.get(new["kind"], ())
    return "replace" if any(_at(old, p) != _at(new, p) for p in replaces) else "update"


def _type_of_title(title: str) -> str:
    """`alicloud:nas/fileSystem:FileSystem` of `alicloud:nas/fileSystem:FileSystem  nas-fs`."""
    return title.split("  ")[0]


def _kind_of_title(title: str) -> str:
    """`Job` of `Job ns/name`; `NodePool` of `alicloud:cs/nodePool:NodePool  name`."""
    if "  " in title:
        type_token = _type_of_title(title)
        if type_token.startswith("pulumi:providers:"):
            return f"Provider {type_token.rsplit(':', 1)[-1]}"
        return type_token.rsplit(":", 1)[-1]
    return title.split(" ")[0]


def _name_of_title(title: str) -> str:
    """`nas-fs` of `alicloud:nas/fileSystem:FileSystem  nas-fs`."""
    return title.split("  ")[1]


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
            force_new = replacing_arguments(_type_of_title(title))
            replacing = tuple(key for key in changed if snake(key) in force_new)
            referring = tuple(
                ", ".join(_references(new[title].inputs.get(key, ""), replaced))
                for key in replacing
            )
            action = "replace" if replacing else "update"
            changes[title] = CloudChange(action, replacing, referring)
        now = {_name_of_title(t) for t, change in changes.items() if change.action == "replace"}
        if now == replaced:
            return changes
        replaced = now


def _actions(
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
            found[action][title] = _kind_of_title(title)
    return found


def _counts(actions: dict[str, dict[str, str]]) -> str:
    parts = []
    for action in ACTIONS:
        kinds = Counter(actions[action].values())
        if kinds:
            by_kind = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
            parts.append(f"{action} {sum(kinds.values())} ({by_kind})")
    return "; ".join(parts) if parts else "no change"


def _jobs(render: Render) -> dict[str, dict[str, Any]]:
    return {title: obj for title, obj in render.objects.items() if obj.get("kind") == "Job"}


def run_ids(render: Render) -> list[str]:
    """The run ids of a render's training Jobs (also for infra.render.relabel)."""
    ids = {
        job["metadata"].get("labels", {}).get(RUN_ID_LABEL, "") for job in _jobs(render).values()
    }
    return sorted(ids - {""})


def _suspended(render: Render) -> bool:
    """Every training Job is suspended (`job.suspend`, batch/v1 `spec.suspend`)."""
    jobs = _jobs(render).values()
    return bool(jobs) and all(job["spec"].get("suspend") is True for job in jobs)


def _run_line(old: Render, new: Render, changed_jobs: int, replaced_types: set[str]) -> str:
    before, after = ", ".join(run_ids(old)), ", ".join(run_ids(new))
    if not before and not after:
        return "no training Jobs on either side"
    line = _unsuspended_run_line(old, new, changed_jobs, replaced_types)
    if _suspended(new) and not (_suspended(old) and before == after):
        return (
            f"{after} is suspended (job.suspend): its pods stop on SIGTERM, its Jobs and "
            "checkpoints stay; `job.suspend: false` resumes it from its checkpoints"
            + ("" if before == after else f" (and: {line})")
        )
    if _suspended(new):
        return f"{after} stays suspended (job.suspend)"
    if _suspended(old) and before == after:
        return f"{after} resumes from its checkpoints (job.suspend false)"
    return line


def _unsuspended_run_line(
    old: Render, new: Render, changed_jobs: int, replaced_types: set[str]
) -> str:
    before, after = ", ".join(run_ids(old)), ", ".join(run_ids(new))
    if not before:
        return f"{after} starts (no run before)"
    if not after:
        return f"{before} is stopped; no run follows"
    if before != after:
        return f"{before} is stopped; {after} starts, in a directory of its own"
    if old.platform != new.platform:
        return (
            f"{after} is stopped here; on the other platform it resumes only from checkpoints "
            "its NAS holds (none on a new one)"
        )
    if FILE_SYSTEM_TYPE in replaced_types:
        return f"{after} is stopped; it starts over from step 0 on the new, empty file system"
    if replaced_types & CLUSTER_TYPES:
        return f"{after} is stopped with its cluster; it resumes from its checkpoints in the new"
    if MOUNT_TARGET_TYPE in replaced_types:
        return f"{after} loses its volume's NFS server; restarted, it resumes from its checkpoints"
    if changed_jobs:
        return f"{after} resumes from its checkpoints ({changed_jobs} Jobs restart)"
    return f"{after} keeps running, untouched"


@dataclass(frozen=True, order=True)
class _GpuGroup:
    replica_type: str
    eci_spec: str


def _gpus(render: Render) -> dict[_GpuGroup, list[int]]:
    """GPUs per replica of each group, in replica order (Jobs are titled by index)."""
    groups: dict[_GpuGroup, list[int]] = {}
    for job in _jobs(render).values():
        template = job["spec"]["template"]
        annotations = template.get("metadata", {}).get("annotations", {})
        group = _GpuGroup(
            job["metadata"].get("labels", {}).get(REPLICA_TYPE_LABEL, "?"),
            annotations.get(ECI_USE_SPECS, ""),
        )
        limits = [
            int(c.get("resources", {}).get("limits", {}).get(GPU_RESOURCE, 0))
            for c in template["spec"]["containers"]
        ]
        groups.setdefault(group, []).append(sum(limits))
    return groups


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _gpu_side(per_replica: list[int]) -> str:
    """`3 (3 replicas x 1 GPU)`: the group's total, then replicas x GPUs each."""
    shapes = Counter(gpus for gpus in per_replica if gpus)
    terms = " + ".join(
        f"{_plural(n, 'replica')} x {_plural(gpus, 'GPU')}" for gpus, n in sorted(shapes.items())
    )
    return f"{sum(per_replica)} ({terms})" if terms else "0"


def _gpu_lines(old: Render, new: Render) -> list[str]:
    before, after = _gpus(old), _gpus(new)
    total_before, total_after = (sum(map(sum, side.values())) for side in (before, after))
    if not total_before and not total_after:
        return ["GPUs requested: none"]
    if total_before == total_after:
        lines = [f"GPUs requested: {total_after}, unchanged"]
    else:
        lines = [f"GPUs requested: {total_before} → {total_after}"]
    for group in sorted(before.keys() | after.keys()):
        old_side, new_side = before.get(group, []), after.get(group, [])
        if not any(old_side) and not any(new_side):
            continue
        where = f" on ECI {group.eci_spec}" if group.eci_spec else ""
        if _gpu_side(old_side) == _gpu_side(new_side):
            change = f"{_gpu_side(new_side)}, unchanged"
        else:
            change = f"{_gpu_side(old_side)} → {_gpu_side(new_side)}"
        lines.append(f"  {group.replica_type}{where}: {change}")
    return lines


def _public_endpoints(render: Render) -> set[str]:
    """Titles of what the internet can reach: a LoadBalancer Service whose SLB is not
    intranet (Alibaba Cloud's default is internet), an ACK cluster with an internet API server
    SLB (`slbInternetEnabled`) or an ASK one with a public endpoint
    (`endpointPublicAccessEnabled`), an elastic IP. An EIP's association is not a second
    endpoint: it only attaches the address already counted."""
    public = {
        title
        for title, obj in render.objects.items()
        if obj.get("kind") == "Service"
        and _at(obj, "spec.type") == "LoadBalancer"
        and (_at(obj, "metadata.annotations") or {}).get(SLB_ADDRESS_TYPE) != "intranet"
    }
    for title, resource in render.cloud.items():
        kind = _kind_of_title(title)
        inputs = resource.inputs
        public_api = "true" in (
            inputs.get("slbInternetEnabled"),
            inputs.get("endpointPublicAccessEnabled"),
        )
        if public_api or (kind.startswith("Eip") and kind != "EipAssociation"):
            public.add(title)
    return public


def _isolation_lines(new: Render) -> list[str]:
    """What the stack does not isolate, where its policies are not enforced (ASK)."""
    unenforced = any(
        NOT_ENFORCED in (obj["metadata"].get("annotations") or {})
        for obj in new.objects.values()
        if obj.get("kind") == "NetworkPolicy"
    )
    if not unenforced:
        return []
    return [
        "Isolation: none from this stack on ASK: ECI enforces no NetworkPolicy (any pod in the "
        "VPC reaches the replicas' TCP 2222) and the NAS access rule admits the pods' vSwitch "
        "read-write as root (no_squash); docs/security.md says how to add it"
    ]


def _gpu_pool_lines(new: Render) -> list[str]:
    """GPU node pools with more nodes than GPU replicas: each GPU replica is one pod, so at
    least the surplus nodes hold no GPU work (and are billed by the hour)."""
    gpu_pods = sum(1 for gpus in _gpus(new).values() for n in gpus if n)
    lines = []
    for title, resource in sorted(new.cloud.items()):
        inputs = resource.inputs
        if _kind_of_title(title) != "NodePool" or not any(
            GPU_RESOURCE in v for v in inputs.values()
        ):
            continue
        digits = inputs.get("desiredSize", "").strip("'")
        nodes = int(digits) if digits.isdigit() else 0
        if nodes > gpu_pods:
            name = _name_of_title(title)
            idle = nodes - gpu_pods
            lines.append(
                f"Idle GPU pool: {name} has {_plural(nodes, 'node')} for "
                f"{_plural(gpu_pods, 'GPU replica')}: at least {_plural(idle, 'node')} idle"
            )
    return lines or ["Idle GPU pool: none"]


def _oss_locations(render: Render) -> dict[str, str]:
    """{"input" or "export": "oss://<bucket>/<prefix>"} from the CSI OSS PersistentVolumes."""
    found = {}
    for obj in render.objects.values():
        csi = _at(obj, "spec.csi") if obj.get("kind") == "PersistentVolume" else None
        if not csi or csi.get("driver") != OSS_CSI_DRIVER:
            continue
        attributes = csi.get("volumeAttributes", {})
        role = "input" if csi.get("readOnly") else "export"
        found[role] = f"oss://{attributes.get('bucket')}{attributes.get('path')}"
    return found


BUCKET_TYPE = "alicloud:oss/bucket:Bucket"
# What `up` does when a resource new to the stack may already exist, kept by a `destroy`
# (retainOnDestroy): infra/cloud/oss.py `kept_bucket`, infra/cloud/nas.py `kept_file_system`.
_ADOPTS = {
    BUCKET_TYPE: "Kept bucket: `up` looks up oss://{bucket} first and adopts it (import), "
    "with its data, when an earlier destroy kept it; otherwise creates it",
    FILE_SYSTEM_TYPE: "Kept file system: `up` looks up this stack's NAS file system first and "
    "adopts it (import), with every run's checkpoints, when an earlier destroy kept it; "
    "several, or one unlike storage's config, stop `up` naming storage.fileSystemId",
}


def _adoption_lines(old: Render, new: Render) -> list[str]:
    """For a kept-on-destroy resource this change creates: what `up` does if it still exists."""
    lines = []
    for title in sorted(new.cloud.keys() - old.cloud.keys()):
        said = _ADOPTS.get(_type_of_title(title))
        if said:
            bucket = new.cloud[title].inputs.get("bucket", "").strip("'")
            lines.append(said.format(bucket=bucket))
    return lines


def _data_lines(old: Render, new: Render) -> list[str]:
    """Where training data comes from and where a finished run goes, when either side has one."""
    before, after = _oss_locations(old), _oss_locations(new)
    lines = []
    for role, label in (("input", "Data in"), ("export", "Results out")):
        was, now = before.get(role, "none"), after.get(role, "none")
        if was == now == "none":
            continue
        lines.append(f"{label}: {now}, unchanged" if was == now else f"{label}: {was} → {now}")
    return lines


def _kubernetes_action_after(
    old: Render, new: Render, title: str, replaced_types: set[str]
) -> str | None:
    """What happens to a Kubernetes object, given the cloud resources replaced under it. The
    Kubernetes render holds placeholders for cloud outputs (`<nas-mount-target-domain>`), so
    its own diff cannot see these: a new cluster takes every object anew, and a new mount
    target changes the NFS server of the PersistentVolume, a replace-on-change field."""
    if replaced_types & CLUSTER_TYPES or old.platform != new.platform:
        return "replace"
    if MOUNT_TARGET_TYPE in replaced_types and _kind_of_title(title) == "PersistentVolume":
        return "replace"
    return kubernetes_action(old.objects[title], new.objects[title])


def _cloud_replace_lines(changes: dict[str, CloudChange]) -> list[str]:
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
        name = _name_of_title(title)
        line = f"  {name}: the provider replaces it on a change of {', '.join(causes)}"
        reaches = _REPLACE_REACHES.get(_type_of_title(title))
        lines.append(f"{line}; {reaches}" if reaches else line)
    return lines


def _cloud_update_note(updated: dict[str, str]) -> list[str]:
    """The caveat for updated resources of types with no recorded provider schema."""
    kinds = sorted(
        {kind for title, kind in updated.items() if not has_schema_table(_type_of_title(title))}
    )
    return [_CLOUD_UPDATE_NOTE.format(kinds=", ".join(kinds))] if kinds else []


def _platform_lines(new_text: str, replaced_types: set[str]) -> list[str]:
    """What a platform change does to the run stacks on it (none of which it can see)."""
    if PLATFORM_NOTE not in new_text:
        return []
    reaches = [why for kind, why in _RUNS_DISTURBED.items() if kind in replaced_types]
    return [f"Run stacks on this platform: {'; '.join(reaches) or 'untouched'}"]


def _moved_run_lines(old: Render, new: Render) -> list[str]:
    """A run stack pointed at another platform: another cluster, so every object anew."""
    if not (old.platform and new.platform) or old.platform == new.platform:
        return []
    return [
        f"Platform: {old.platform} → {new.platform}: another cluster (its id is the provider's "
        "clusterIdentifier), so every object of this run is created there anew and deleted here"
    ]


def summarize(old_text: str, new_text: str, stack: str, old_name: str, new_name: str) -> str:
    """The consequences of going from `old_text` to `new_text`, one fact per line."""
    old, new = parse_render(old_text), parse_render(new_text)
    changes = cloud_changes(old.cloud, new.cloud)
    replaced_types = {_type_of_title(t) for t, c in changes.items() if c.action == "replace"}
    kubernetes = _actions(
        old.objects,
        new.objects,
        lambda title: _kubernetes_action_after(old, new, title, replaced_types),
    )
    cloud = _actions(
        old.cloud, new.cloud, lambda title: changes[title].action if title in changes else None
    )
    changed_jobs = sum(
        1 for action in ACTIONS for kind in kubernetes[action].values() if kind == "Job"
    )
    new_public = sorted(_public_endpoints(new) - _public_endpoints(old))
    # A sweep's runs are its trials, listed by their own lines; the run line stays for a
    # stack that becomes a sweep or stops being one (its single run stops or starts).
    sweep = sweep_lines(old_text, new_text)
    both = parse_sweep(old_text) is not None and parse_sweep(new_text) is not None
    run = [] if both else [f"Run: {_run_line(old, new, changed_jobs, replaced_types)}"]
    lines = [
        f"Consequences for {stack}, {old_name} → {new_name}:",
        *run,
        *sweep,
        f"Kubernetes objects: {_counts(kubernetes)}",
        f"Cloud resources: {_counts(cloud)}",
        *_moved_run_lines(old, new),
        *_platform_lines(new_text, replaced_types),
        *_cloud_replace_lines(changes),
        *_cloud_update_note(cloud["update"]),
        *_gpu_lines(old, new),
        *_data_lines(old, new),
        *_adoption_lines(old, new),
        f"New public endpoints: {', '.join(new_public) or 'none'}",
        *_isolation_lines(new),
        *_gpu_pool_lines(new),
    ]
    return "\n".join(lines) + "\n"
