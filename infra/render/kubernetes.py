"""Output 1: every Kubernetes object of a stack, as one multi-document YAML stream.

The objects are exactly what the program registers: `build_objects` with the offline cluster
facts, whose cloud-assigned values are readable placeholders (`<nas-mount-target-domain>`).
The stream applies as is (`kubectl apply --dry-run=server -f -`), comments aside.
"""

from __future__ import annotations

from typing import Any

from infra.config import StackConfig
from infra.manifests import build_objects
from infra.platform.cluster_facts import cluster_facts
from infra.render.style import FlowMapping, block_yaml, title
from infra.render.sweep import sweep_section

BANNER = (
    "# ===== Kubernetes objects: the program's own builders; cloud values as <placeholders> ====="
)


def object_title(obj: dict[str, Any]) -> str:
    """`Job tftrain/mnist-worker-0`, or `Namespace tftrain` for a cluster-scoped object."""
    meta = obj["metadata"]
    where = f"{meta['namespace']}/" if "namespace" in meta else ""
    return f"{obj['kind']} {where}{meta['name']}"


def _env_one_per_line(value: Any) -> Any:
    """Each container env var on one line, so a diff line names the variable it changes
    (in block style `value:` is a line of its own, far from its `name:`)."""
    if isinstance(value, dict):
        return {
            key: [FlowMapping(var) for var in item]
            if key == "env" and isinstance(item, list)
            else _env_one_per_line(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_env_one_per_line(item) for item in value]
    return value


# What a platform stack's Kubernetes section says instead of objects (the summary reads it).
PLATFORM_NOTE = "# None: a platform stack (cluster.role platform) has no run; its run stacks"


def render_kubernetes(config: StackConfig) -> str:
    if not config.has_run:
        return f"{BANNER}\n{PLATFORM_NOTE}\n# hold the Kubernetes objects.\n"
    documents = [
        f"---\n{title(object_title(obj))}\n{block_yaml(_env_one_per_line(obj))}"
        for obj in build_objects(config, cluster_facts(config))
    ]
    return BANNER + "\n" + sweep_section(config) + "".join(documents)
