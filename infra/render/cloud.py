"""Output 2: the cloud resources a stack creates, read off the Pulumi program itself.

The whole program runs in-process as an offline preview (`infra.mock_deploy`): the same cloud
components `pulumi up` would run, each registering its resources with the inputs it would send.
Shown as a tree (component, then its resources), keys sorted, one input per line. Nothing
secret is printed: secret stack values are replaced before the run, and secret inputs are
redacted as they are recorded.

Every line is a YAML comment, so the full render stays one valid YAML stream.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from infra import mock_deploy
from infra.config import PROJECT, StackConfig, read_stack_entries
from infra.config.stack_file import engine_config
from infra.config.types import LATEST_VERSION
from infra.mock_deploy import SECRET, Recorded, Registration, StackOutputs
from infra.platform.outputs import RUN_KUBECONFIGS, placeholder_outputs
from infra.program import KUBECONFIG_KEY
from infra.render.style import attribute, one_line, title

BANNER = (
    "# ===== Cloud resources: the Pulumi program run as an offline preview =====\n"
    "# <name.id>: the id the cloud assigns to resource `name`; <computed>: known once created\n"
    "# or looked up at deploy time; <secret>: a secret, never shown.\n"
)
_KUBERNETES_PROVIDER = "pulumi:providers:kubernetes"
# Inputs whose absence means something a reviewer should see spelled out.
_UNSET = {
    (_KUBERNETES_PROVIDER, "kubeconfig"): "not set: the ambient ~/.kube/config or KUBECONFIG",
}
# The resource option after a resource's inputs: the engine never diffs these inputs, so a
# reviewer (and the summary) must not read a change to them as something `pulumi up` does.
IGNORE_CHANGES = "(option) ignoreChanges"


def _is_secret(key: str, value: Any) -> bool:
    # `pulumi config set --secret` stores {secure: <ciphertext>}; the kubeconfig is secret
    # even if someone wrote it in plain text.
    is_secure = isinstance(value, dict) and set(value) == {"secure"}
    return is_secure or key == f"{PROJECT}:{KUBECONFIG_KEY}"


def offline_config(stack_path: Path) -> tuple[dict[str, Any], list[str]]:
    """The stack file's config entries, every secret value replaced by SECRET (what is not
    in the process cannot be printed), and the keys of the secret ones."""
    entries = read_stack_entries(stack_path)
    secret_keys = sorted(key for key, value in entries.items() if _is_secret(key, value))
    return {**entries, **dict.fromkeys(secret_keys, SECRET)}, secret_keys


def _provider_config(entries: dict[str, Any]) -> list[str]:
    """Config of other namespaces (`alicloud:region`): it places every cloud resource."""
    others = {key: value for key, value in entries.items() if not key.startswith(f"{PROJECT}:")}
    if not others:
        return []
    lines = ["#", title("Provider config")]
    return lines + [attribute(key, one_line(value), 1) for key, value in sorted(others.items())]


def _resource_block(resource: Registration, depth: int) -> list[str]:
    lines = [title(f"{resource.type}  {resource.name}", depth)]
    inputs = {key: one_line(value) for key, value in resource.inputs.items() if value is not None}
    for (type_token, key), note in _UNSET.items():
        if resource.type == type_token and key not in inputs:
            inputs[key] = note
    lines += [attribute(key, value, depth + 1) for key, value in sorted(inputs.items())]
    if resource.ignore_changes:
        lines.append(
            attribute(IGNORE_CHANGES, one_line(sorted(resource.ignore_changes)), depth + 1)
        )
    return lines


def _tree(resources: list[Registration]) -> list[str]:
    """Components with their resources beneath them, then the rest (the Kubernetes provider);
    each level sorted by name, since the order resources register in under mocks depends on
    thread timing."""
    urns = {r.urn for r in resources}
    children: dict[str, list[Registration]] = defaultdict(list)
    for resource in resources:
        children[resource.parent if resource.parent in urns else ""].append(resource)

    def walk(parent: str, depth: int) -> list[str]:
        lines: list[str] = []
        for resource in sorted(children[parent], key=lambda r: (r.custom, r.name, r.type)):
            if depth == 0:
                lines.append("#")
            lines += _resource_block(resource, depth) + walk(resource.urn, depth + 1)
        return lines

    return walk("", 0)


def _lookups(recorded: Recorded) -> list[str]:
    """Data sources the program reads at deploy time; offline their results are <computed>."""
    lines: list[str] = []
    for token, args in sorted(recorded.calls, key=lambda call: (call[0], one_line(call[1]))):
        lines += ["#", title(f"{token}  (lookup)")]
        lines += [attribute(key, one_line(value), 1) for key, value in sorted(args.items())]
    return lines


def _is_cloud_resource(resource: Registration) -> bool:
    return resource.custom and not resource.type.startswith(("kubernetes:", "pulumi:providers:"))


def render_cloud(stack: str, stack_path: Path, config: StackConfig) -> str:
    """The summary for `stack` (validated as `config`), from an offline preview."""
    entries, secret_keys = offline_config(stack_path)
    references = {}
    if config.cluster.role == "run":
        # Offline, the platform's outputs are marked placeholders (infra/platform/outputs.py).
        outputs = StackOutputs(placeholder_outputs(config), frozenset({RUN_KUBECONFIGS}))
        references[config.cluster.platform_stack] = outputs
    recorded = mock_deploy.run_program(
        engine_config(entries),
        stack=stack,
        secret_keys=secret_keys,
        redact_secrets=True,
        stack_references=references,
    )
    # The Kubernetes objects are the other section; their provider stays here, since it says
    # where the cluster credential comes from.
    shown = [r for r in recorded.resources if not r.type.startswith("kubernetes:")]
    lines = [BANNER.rstrip("\n"), *_provider_config(entries)]
    note = []
    if config.cluster.role == "run":
        lines += [
            "#",
            "# No cloud resources: a run stack (cluster.role run) creates only Kubernetes objects,",
            f"# on the cluster of platform stack {config.cluster.platform_stack}, whose outputs",
            "# it reads at deploy time (offline: <platform output NAME> placeholders).",
        ]
    elif not any(_is_cloud_resource(r) for r in shown):
        lines += [
            "#",
            f"# No cloud resources: cluster.kind is {config.cluster.kind}, so `pulumi up` creates",
            "# nothing on Alibaba Cloud and deploys into the cluster of this kubeconfig:",
        ]
        if config.cluster.kubernetes_version == LATEST_VERSION:
            note = [
                "#",
                "# Its Kubernetes must be 1.26 or newer, or it drops the Jobs' podFailurePolicy",
                "# and retries exit 2 like any failure. Set cluster.kubernetesVersion to the",
                "# version it runs to have that checked.",
            ]
    lines += _tree(shown) + note + _lookups(recorded)
    return "\n".join(lines) + "\n"
