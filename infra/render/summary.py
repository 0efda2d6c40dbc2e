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

Only the two render texts are read, so the REV side can be any revision's render. Each part is
a module of its own: the render as read (`parsed`), what happens to each object and resource
(`actions`), the run (`run_line`), GPUs (`gpus`), public endpoints and isolation (`exposure`),
data in and out (`data`), a sweep's trials (`sweep`).
"""

from __future__ import annotations

from infra.render.actions import (
    ACTIONS,
    actions_of,
    cloud_changes,
    cloud_replace_lines,
    cloud_update_note,
    counts,
    kubernetes_action_after,
    moved_run_lines,
    platform_lines,
)
from infra.render.data import adoption_lines, data_lines
from infra.render.exposure import isolation_lines, public_endpoints
from infra.render.gpus import gpu_lines, gpu_pool_lines
from infra.render.parsed import parse_render, type_of_title
from infra.render.run_line import run_line
from infra.render.sweep import parse_sweep, sweep_lines


def summarize(old_text: str, new_text: str, stack: str, old_name: str, new_name: str) -> str:
    """The consequences of going from `old_text` to `new_text`, one fact per line."""
    old, new = parse_render(old_text), parse_render(new_text)
    changes = cloud_changes(old.cloud, new.cloud)
    replaced_types = {type_of_title(t) for t, c in changes.items() if c.action == "replace"}
    kubernetes = actions_of(
        old.objects,
        new.objects,
        lambda title: kubernetes_action_after(old, new, title, replaced_types),
    )
    cloud = actions_of(
        old.cloud, new.cloud, lambda title: changes[title].action if title in changes else None
    )
    changed_jobs = sum(
        1 for action in ACTIONS for kind in kubernetes[action].values() if kind == "Job"
    )
    new_public = sorted(public_endpoints(new) - public_endpoints(old))
    # A sweep's runs are its trials, listed by their own lines; the run line stays for a
    # stack that becomes a sweep or stops being one (its single run stops or starts).
    sweep = sweep_lines(old_text, new_text)
    both = parse_sweep(old_text) is not None and parse_sweep(new_text) is not None
    run = [] if both else [f"Run: {run_line(old, new, changed_jobs, replaced_types)}"]
    lines = [
        f"Consequences for {stack}, {old_name} → {new_name}:",
        *run,
        *sweep,
        f"Kubernetes objects: {counts(kubernetes)}",
        f"Cloud resources: {counts(cloud)}",
        *moved_run_lines(old, new),
        *platform_lines(new_text, replaced_types),
        *cloud_replace_lines(changes),
        *cloud_update_note(cloud["update"]),
        *gpu_lines(old, new),
        *data_lines(old, new),
        *adoption_lines(old, new),
        f"New public endpoints: {', '.join(new_public) or 'none'}",
        *isolation_lines(new),
        *gpu_pool_lines(new),
    ]
    return "\n".join(lines) + "\n"
