"""One render as the summary reads it: its Kubernetes objects by title, its cloud resources
with their inputs and `ignoreChanges`, and a run stack's platform (its StackReference)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from infra.mock_deploy import STACK_REFERENCE
from infra.render.cloud import IGNORE_CHANGES
from infra.render.kubernetes import object_title
from infra.render.style import title_of

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


def value_at(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def type_of_title(title: str) -> str:
    """`alicloud:nas/fileSystem:FileSystem` of `alicloud:nas/fileSystem:FileSystem  nas-fs`."""
    return title.split("  ")[0]


def kind_of_title(title: str) -> str:
    """`Job` of `Job ns/name`; `NodePool` of `alicloud:cs/nodePool:NodePool  name`."""
    if "  " in title:
        type_token = type_of_title(title)
        if type_token.startswith("pulumi:providers:"):
            return f"Provider {type_token.rsplit(':', 1)[-1]}"
        return type_token.rsplit(":", 1)[-1]
    return title.split(" ")[0]


def name_of_title(title: str) -> str:
    """`nas-fs` of `alicloud:nas/fileSystem:FileSystem  nas-fs`."""
    return title.split("  ")[1]


def training_jobs(render: Render) -> dict[str, dict[str, Any]]:
    return {title: obj for title, obj in render.objects.items() if obj.get("kind") == "Job"}
