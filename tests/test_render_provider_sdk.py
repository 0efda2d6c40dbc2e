"""Reading pulumi_alicloud's generated docstrings (infra/render/provider_sdk.py) on text written
here in the SDK's shape, and on the installed SDK where the module's promise is about it."""

from __future__ import annotations

import pytest

from infra.render.force_new_fields import FORCE_NEW
from infra.render.provider_sdk import (
    argument_docs,
    deprecated_arguments,
    has_schema_table,
    replacing_arguments,
    resource_is_deprecated,
    says_force_new,
    sdk_module,
    snake,
)

# The shape pulumi's Python generator writes: the args class, then the resource's constructor
# repeating the params (the first text wins).
SOURCE = '''
@pulumi.input_type
class WidgetArgs:
    def __init__(__self__, *,
                 vpc_id: pulumi.Input[builtins.str],
                 zone_ids: Optional[pulumi.Input[Sequence[pulumi.Input[builtins.str]]]] = None,
                 old_name: Optional[pulumi.Input[builtins.str]] = None):
        """
        The set of arguments for constructing a Widget resource.
        :param pulumi.Input[builtins.str] vpc_id: The VPC of the widget.
               Changing this creates a new resource.
        :param pulumi.Input[Sequence[pulumi.Input[builtins.str]]] zone_ids: The zones. It
               will not force a replacement.
        :param pulumi.Input[builtins.str] old_name: Field 'old_name' has been
               deprecated since v1.2. Use 'name' instead.
        :param pulumi.Input[builtins.str] legacy_mode: Deprecated since v1.3.
        """
        if old_name is not None:
            warnings.warn("""Field 'old_name' has been deprecated""", DeprecationWarning)
            pulumi.log.warn("""old_name is deprecated: Field 'old_name' has been deprecated""")
            pulumi.log.warn("""legacy_flag is deprecated: use flag""")


class Widget(pulumi.CustomResource):
    warnings.warn("""Widget has been deprecated in favour of Gadget""", DeprecationWarning)

    def __init__(__self__, resource_name, opts=None, vpc_id=None):
        """
        :param pulumi.Input[builtins.str] vpc_id: Repeated here, not read.
        """


class Gadget(pulumi.CustomResource):
    def __init__(__self__, resource_name, opts=None):
        pass
'''


def test_argument_docs_are_each_params_whole_text_first_one_wins() -> None:
    assert argument_docs(SOURCE) == {
        "vpc_id": "The VPC of the widget. Changing this creates a new resource.",
        "zone_ids": "The zones. It will not force a replacement.",
        "old_name": "Field 'old_name' has been deprecated since v1.2. Use 'name' instead.",
        "legacy_mode": "Deprecated since v1.3.",
    }


def test_deprecated_arguments_are_those_logged_or_documented_so() -> None:
    # legacy_flag only logged, legacy_mode only documented (in capitals), old_name both.
    assert deprecated_arguments(SOURCE) == {"old_name", "legacy_flag", "legacy_mode"}


def test_a_deprecated_resource_class_warns_first_thing() -> None:
    assert resource_is_deprecated(SOURCE, "Widget")
    assert not resource_is_deprecated(SOURCE, "Gadget")
    assert not resource_is_deprecated(SOURCE, "Gizmo")


@pytest.mark.parametrize(
    ("text", "replaces"),
    [
        ("The VPC ID. Changing this creates a new resource.", True),
        ("Changing it will create a new resource.", True),
        ("The zone. ForceNew.", True),
        ("Modifying it recreates the instance.", True),
        ("Setting this forces a new resource.", True),
        ("A change forces replacement.", True),
        ("Changing this recreates the resource!", True),
        ("The name. It will not force a replacement.", False),
        ("The ForceNew attribute has been removed since v1.2.", False),
        ("Changing this no longer creates a new resource.", False),
        ("The description.", False),
        ("", False),
        # Sentence by sentence: the negation in one does not cancel the other.
        ("It is not required. Changing this creates a new resource.", True),
        ("Changing this creates a new resource.It is not required.", False),
    ],
)
def test_says_force_new_reads_each_sentence(text: str, replaces: bool) -> None:
    assert says_force_new(text) is replaces


@pytest.mark.parametrize(
    ("name", "sdk"),
    [
        ("storageType", "storage_type"),
        ("vpcId", "vpc_id"),
        ("name", "name"),
        ("cidrBlock", "cidr_block"),
        ("ScalingConfig", "scaling_config"),
    ],
)
def test_snake_is_the_sdks_spelling(name: str, sdk: str) -> None:
    assert snake(name) == sdk


def test_sdk_module_finds_the_module_of_a_token() -> None:
    assert sdk_module("alicloud:cs/nodePool:NodePool").__name__ == "pulumi_alicloud.cs.node_pool"
    assert sdk_module("alicloud:vpc/switch:Switch").__name__ == "pulumi_alicloud.vpc.switch"
    assert sdk_module("alicloud:index/getZones:getZones").__name__ == "pulumi_alicloud.get_zones"


def test_replacing_arguments_join_the_schema_table_and_the_sdk() -> None:
    switch = "alicloud:vpc/switch:Switch"
    assert has_schema_table(switch)
    assert replacing_arguments(switch) >= FORCE_NEW[switch]
    assert "cidr_block" in replacing_arguments(switch)
    # Outside the table: only what the SDK documents (ess Alarm's scaling group).
    alarm = "alicloud:ess/alarm:Alarm"
    assert not has_schema_table(alarm)
    assert "scaling_group_id" in replacing_arguments(alarm)
    assert replacing_arguments("pulumi:providers:kubernetes") == frozenset()
    assert not has_schema_table("pulumi:providers:kubernetes")
