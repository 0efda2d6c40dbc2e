"""Cloud-side names and tags of a stack's resources.

Pulumi names a resource within one stack; Alibaba Cloud names must be unique per account and
region (NAS access groups, ACK clusters), so every cloud-side name carries project and stack.
One tag set lets a user find, and cost, everything one stack created.
"""

from __future__ import annotations

import re

import pulumi

# The strictest rule among the names used here (NAS access groups, ACK clusters): letters,
# digits and hyphens, starting with a letter, at most 63 characters.
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9-]+")
_MAX_LENGTH = 63


def physical_name(component: str, suffix: str = "") -> str:
    """`<project>-<stack>-<component>[-<suffix>]`, safe as a cloud-side name."""
    parts = [pulumi.get_project(), pulumi.get_stack(), component, suffix]
    name = _NOT_ALLOWED.sub("-", "-".join(part for part in parts if part)).strip("-")
    return name[:_MAX_LENGTH].rstrip("-")


def resource_tags(component: str) -> dict[str, str]:
    """Tags for the children of the component named `component`."""
    return {
        "app": pulumi.get_project(),
        "pulumi-stack": pulumi.get_stack(),
        "pulumi-component": component,
        "managed-by": "pulumi",
    }
