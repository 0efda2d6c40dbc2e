"""The provider schema's force-new table (`infra.render.force_new_fields`) against the program
and the installed SDK: every type the program registers has a reviewed entry, and every name
in it is an argument the SDK still has, spelled so the render's engine names find it."""

from __future__ import annotations

import pytest
from pulumi._types import input_type_py_to_pulumi_names

from infra.config import read_stack_file, stack_file
from infra.render.force_new_fields import FORCE_NEW
from infra.render.provider_sdk import sdk_module, snake
from tests.pulumi_mocks import all_stacks, run_program
from tests.shared_values import shared

# The CLB ACL exists only behind a public TensorBoard with an allow list, which no checked-in
# stack has: this variant registers it.
PUBLIC_TENSORBOARD = {"public": True, "allowedSourceRanges": ["203.0.113.0/24"]}


@shared
def registered_types() -> dict[str, set[str]]:
    """The alicloud resource types registered under mocks, with the runs that register each."""
    runs = {stack: run_program(stack) for stack in all_stacks()}
    variant = read_stack_file(stack_file("ack-cpu"))
    variant["tensorboard"] = PUBLIC_TENSORBOARD
    runs["ack-cpu with a public TensorBoard"] = run_program(variant)
    # The data bucket exists only when the stack creates it, which no checked-in stack does.
    variant = read_stack_file(stack_file("ack-gpu"))
    variant["data"] = {**variant["data"], "createBucket": True}
    runs["ack-gpu creating its bucket"] = run_program({**variant, "alicloud:region": "cn-hangzhou"})
    found: dict[str, set[str]] = {}
    for run_name, run in runs.items():
        for resource in run.resources:
            if resource.custom and resource.type.startswith("alicloud:"):
                found.setdefault(resource.type, set()).add(run_name)
    return found


def test_every_type_the_program_registers_has_a_reviewed_entry() -> None:
    missing = {t: sorted(runs) for t, runs in registered_types().items() if t not in FORCE_NEW}
    assert missing == {}, (
        "read the type's ForceNew arguments off the provider source and add them to "
        "infra/render/force_new_fields.py"
    )


def test_the_table_holds_no_type_the_program_no_longer_registers() -> None:
    assert set(FORCE_NEW) - set(registered_types()) == set()


@pytest.mark.parametrize("token", sorted(FORCE_NEW))
def test_every_field_is_an_argument_of_the_installed_sdk_class(token: str) -> None:
    """A typo, or an argument the provider renamed or dropped, fails here; and the engine
    name the render prints maps back to the field through `snake`, as the summary reads it."""
    args_class = getattr(sdk_module(token), f"{token.rsplit(':', 1)[1]}Args")
    engine_names = input_type_py_to_pulumi_names(args_class)
    assert sorted(FORCE_NEW[token] - engine_names.keys()) == []
    assert {field: snake(engine_names[field]) for field in FORCE_NEW[token]} == {
        field: field for field in FORCE_NEW[token]
    }


def test_the_fields_behind_the_replaces_users_meet_are_recorded() -> None:
    """The replaces the table exists for (docs/cloud-evidence.md, issue 10 item 8)."""
    assert {"zone_id", "cidr_block"} <= FORCE_NEW["alicloud:vpc/switch:Switch"]
    assert {"zone_id", "storage_type"} <= FORCE_NEW["alicloud:nas/fileSystem:FileSystem"]
    assert "vswitch_ids" in FORCE_NEW["alicloud:cs/serverlessKubernetes:ServerlessKubernetes"]
    # Updated in place: a pool resized or retyped is not a new pool.
    assert (
        not {"desired_size", "instance_types", "scaling_config"}
        & FORCE_NEW["alicloud:cs/nodePool:NodePool"]
    )
