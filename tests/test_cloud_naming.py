"""Cloud-side names and tags (infra/cloud/naming.py), checked against the rules of the names
they become. The strictest of them: an ACK cluster name is 1-63 characters of letters, digits,
hyphens (and underscores, which a NAS access group refuses at its start); a NAS access group
name starts with a letter (Alibaba Cloud: CreateCluster `name`, CreateAccessGroup
`AccessGroupName`; docs/cloud-evidence.md)."""

from __future__ import annotations

import re

import pulumi
import pytest

from infra.cloud.naming import physical_name, resource_tags

CLOUD_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?$")


@pytest.fixture
def stack(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    def use(project: str, stack: str) -> None:
        monkeypatch.setattr(pulumi, "get_project", lambda: project)
        monkeypatch.setattr(pulumi, "get_stack", lambda: stack)

    return use


# (project, stack, component, suffix) -> the name, worked by hand from the rule above.
NAMES = [
    ("tftrain", "dev", "network", "", "tftrain-dev-network"),
    ("tftrain", "dev", "nas", "group", "tftrain-dev-nas-group"),
    # Characters a cloud name refuses become one hyphen per run of them.
    ("tftrain", "team_a.prod", "cluster", "", "tftrain-team-a-prod-cluster"),
    ("tftrain", "org/team//dev", "nas", "", "tftrain-org-team-dev-nas"),
    # Hyphens the user wrote are kept; only the ends lose theirs.
    ("tftrain", "a--b", "nas", "", "tftrain-a--b-nas"),
    ("_tftrain", "dev", "nas", "x_", "tftrain-dev-nas-x"),
    # The joining hyphen stays, and the refused "é" after it becomes one more.
    ("tftrain", "dev", "nas", "élan", "tftrain-dev-nas--lan"),
    # Only hyphens are taken off the ends: a name may begin or end in any letter.
    ("Xray", "dev", "nas", "X", "Xray-dev-nas-X"),
]


@pytest.mark.parametrize(("project", "name", "component", "suffix", "expected"), NAMES)
def test_a_physical_name_is_project_stack_component_suffix_in_allowed_characters(
    stack, project: str, name: str, component: str, suffix: str, expected: str
) -> None:
    stack(project, name)
    assert physical_name(component, suffix) == expected
    assert CLOUD_NAME.match(expected)


def test_the_suffix_is_optional(stack) -> None:  # type: ignore[no-untyped-def]
    stack("tftrain", "dev")
    assert physical_name("network") == physical_name("network", "") == "tftrain-dev-network"


def test_a_long_name_is_cut_to_63_characters_never_ending_in_a_hyphen(stack) -> None:  # type: ignore[no-untyped-def]
    # 8 + 1 + 53 + 1 = 63 characters up to the component's hyphen: the cut lands on it.
    stack("tftrain", "s" * 53)
    name = physical_name("component-x")
    assert name == "tftrain-" + "s" * 53 + "-c"
    assert len(name) == 63
    stack("tftrain", "s" * 54)
    name = physical_name("component")
    assert len(name) == 63 - 1 and name == "tftrain-" + "s" * 54  # the trailing "-" dropped
    assert CLOUD_NAME.match(name)


def test_a_name_of_exactly_63_characters_is_kept_whole(stack) -> None:  # type: ignore[no-untyped-def]
    stack("tftrain", "s" * 50)
    assert physical_name("abcd") == "tftrain-" + "s" * 50 + "-abcd"
    assert len(physical_name("abcd")) == 63
    assert len(physical_name("abcde")) == 63


def test_tags_name_the_project_the_stack_and_the_component(stack) -> None:  # type: ignore[no-untyped-def]
    stack("tftrain", "dev")
    assert resource_tags("network") == {
        "app": "tftrain",
        "pulumi-stack": "dev",
        "pulumi-component": "network",
        "managed-by": "pulumi",
    }
