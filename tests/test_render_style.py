"""The render's text conventions (infra/render/style.py's docstring): keys sorted, one value one
line however long, a multi-line value as a literal block, flow values on one line, and the
title lines the diff labels its hunks with. Expected texts are YAML written by hand."""

from __future__ import annotations

import pytest
import yaml

from infra.render.style import (
    FlowMapping,
    FlowSequence,
    attribute,
    block_yaml,
    one_line,
    title,
    title_of,
)

NAS = "alicloud:nas/fileSystem:FileSystem  nas-fs"
LOOKUP = "alicloud:cs/getKubernetesVersion  (lookup)"


def test_block_yaml_sorts_keys_and_keeps_insertion_order_out_of_the_text() -> None:
    assert block_yaml({"b": 1, "a": {"d": 2, "c": [3, 4]}}) == (
        "a:\n  c:\n  - 3\n  - 4\n  d: 2\nb: 1\n"
    )
    assert block_yaml({"a": 1, "b": 2}) == block_yaml({"b": 2, "a": 1})


def test_a_long_value_stays_on_one_line() -> None:
    long = " ".join(["word"] * 60)  # PyYAML folds at a space past 80 columns unless told not to
    text = block_yaml({"value": long})
    assert text == f"value: {long}\n"
    assert one_line([long]) == f"[{long}]"


def test_a_multi_line_value_is_a_literal_block_line_by_line() -> None:
    script = "#!/bin/sh\nset -eu\nexec trainer\n"
    text = block_yaml({"data": {"run.sh": script}})
    assert text == "data:\n  run.sh: |\n    #!/bin/sh\n    set -eu\n    exec trainer\n"
    assert yaml.safe_load(text) == {"data": {"run.sh": script}}


def test_flow_values_are_one_line_inside_block_yaml() -> None:
    data = {
        "env": [FlowMapping({"value": "2", "name": "N"})],
        "types": FlowSequence(["ecs.g7.xlarge", "ecs.g7.2xlarge"]),
    }
    assert block_yaml(data) == (
        "env:\n- {name: N, value: '2'}\ntypes: [ecs.g7.xlarge, ecs.g7.2xlarge]\n"
    )


def test_non_ascii_is_written_as_is() -> None:
    assert block_yaml({"note": "步骤 → done"}) == "note: 步骤 → done\n"
    assert one_line("步骤") == "步骤"


@pytest.mark.parametrize(
    ("value", "line"),
    [
        ("2", "'2'"),  # a string that reads as a number is quoted
        (2, "2"),
        (True, "true"),
        (None, "null"),
        ("plain", "plain"),
        (["a", "b"], "[a, b]"),
        ({"value": "y", "key": "x"}, "{key: x, value: y}"),
        ({"a": [1, {"b": 2}]}, "{a: [1, {b: 2}]}"),
        # A flow value cannot hold a block: escaped in double quotes, still one line.
        ("two\nlines", '"two\\nlines"'),
    ],
)
def test_one_line_is_flow_yaml_without_an_end_marker(value: object, line: str) -> None:
    assert one_line(value) == line
    assert "..." not in one_line(value)


def test_titles_and_attributes_indent_two_spaces_a_level() -> None:
    assert title("Job tftrain/mnist-worker-0") == "# Job tftrain/mnist-worker-0"
    assert title("alicloud:nas/accessRule:AccessRule  rule", 1) == (
        "#   alicloud:nas/accessRule:AccessRule  rule"
    )
    assert title("x", 2) == "#     x"
    assert attribute("cidrBlock", "10.0.0.0/8", 0) == "# cidrBlock: 10.0.0.0/8"
    assert attribute("cidrBlock", "10.0.0.0/8", 2) == "#     cidrBlock: 10.0.0.0/8"


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("# Job tftrain/mnist-worker-0", "Job tftrain/mnist-worker-0"),
        ("# Namespace tftrain", "Namespace tftrain"),
        (
            "#   alicloud:nas/fileSystem:FileSystem  nas-fs",
            "alicloud:nas/fileSystem:FileSystem  nas-fs",
        ),
        (
            "# alicloud:cs/getKubernetesVersion  (lookup)",
            "alicloud:cs/getKubernetesVersion  (lookup)",
        ),
        # Not titles: an attribute, prose, a lower-case word pair, YAML, no space after #.
        ("#   cidrBlock: 10.0.0.0/8", None),
        ("# No cloud resources: a run stack", None),
        ("# sweep trials: 2", None),
        ("# job tftrain/x", None),
        ("#Job tftrain/x", None),
        ("kind: Job", None),
        ("# Job tftrain/x trailing", None),
        ("# Job  ", None),
        ("", None),
    ],
)
def test_title_of_finds_objects_and_resources_only(line: str, found: str | None) -> None:
    assert title_of(line) == found
