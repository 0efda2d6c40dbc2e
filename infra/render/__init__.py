"""Layer 6: the offline render. What `pulumi up` on a stack would create, as text for review.

Like `helm template`, with no credentials and no cloud: the Kubernetes objects come from the
program's own builders (`infra.render.kubernetes`), the cloud resources from the program itself
run under Pulumi mocks (`infra.render.cloud`). The text is byte-identical between runs and
machines, so `--diff REV` (`infra.render.diff`) shows exactly what a change does.

The Kubernetes section needs only PyYAML; Pulumi is imported only for the cloud section.
"""

from __future__ import annotations

from pathlib import Path

from infra.config import ConfigError, load_stack_file, stack_file
from infra.config.sweep_platform import platform_problems
from infra.render.kubernetes import render_kubernetes

SECTIONS = ("kubernetes", "cloud")


def render_stack(stack: str, stacks_dir: Path | None = None, only: str | None = None) -> str:
    """Both sections of `stack`, or just one (`only`). Raises ConfigError for a bad stack."""
    path = stack_file(stack, stacks_dir)
    config = load_stack_file(path)
    if problems := platform_problems(config):  # as the program refuses them
        raise ConfigError(problems)
    parts = [f"# Stack {stack}, rendered offline by `python -m infra.render`: nothing deployed.\n"]
    if only in (None, "cloud"):
        from infra.render.cloud import render_cloud  # imports Pulumi

        parts.append(render_cloud(stack, path, config))
    if only in (None, "kubernetes"):
        parts.append(render_kubernetes(config))
    return "#\n".join(parts)
