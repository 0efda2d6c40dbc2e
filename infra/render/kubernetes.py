"""Output 1: every Kubernetes object of a stack, as one multi-document YAML stream.

The objects are exactly what the program registers: `build_objects` with the offline cluster
facts, whose cloud-assigned values are readable placeholders (`<nas-mount-target-domain>`).
The stream applies as is (`kubectl apply --dry-run=server -f -`), comments aside.
"""

from __future__ import annotations

from typing import Any

from infra.config import StackConfig
from infra.manifests import build_objects
from infra.manifests.run_access import platform_objects
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


def _documents(objects: list[dict[str, Any]]) -> str:
    return "".join(
        f"---\n{title(object_title(obj))}\n{block_yaml(_env_one_per_line(obj))}" for obj in objects
    )


def render_kubernetes(config: StackConfig) -> str:
    facts = cluster_facts(config)
    if not config.has_run:
        # A role name per namespace the program makes (ack, rrsa); offline, its placeholder.
        roles = {
            ns: facts.oss_role_name for ns in config.cluster.run_namespaces if facts.oss_role_name
        }
        issued = platform_objects(config, facts, roles)
        note = "# hold the run's objects; it issues each of cluster.runNamespaces these.\n"
        return f"{BANNER}\n{PLATFORM_NOTE}\n{note}" + _documents(issued)
    return BANNER + "\n" + sweep_section(config) + _documents(build_objects(config, facts))
