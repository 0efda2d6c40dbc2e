"""The render's text conventions, shared by both sections so a diff reads the same everywhere.

- YAML keys sorted: the output cannot depend on the order code happens to build a dict in, and
  it matches what `kubectl get -o yaml` shows.
- Never folded: one value is one line, so a changed value is one changed line in a diff
  (PyYAML otherwise wraps long strings, e.g. TF_CONFIG, at 80 columns).
- Titles: a comment line naming what follows (`# Job tftrain/mnist-worker-0`,
  `#   alicloud:nas/accessRule:AccessRule  nas-access-rule`); the diff labels each hunk with
  the title it falls under, like `git diff` does with function names.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

_NEVER_FOLD = 1 << 30


class FlowMapping(dict[str, Any]):
    """A mapping rendered on one line: `{name: TF_CONFIG, value: '...'}`."""


class FlowSequence(list[Any]):
    """A sequence rendered on one line: `[ecs.g7.xlarge, ecs.g7.2xlarge]`."""


class _Dumper(yaml.SafeDumper):
    pass


def _flow_mapping(dumper: yaml.SafeDumper, data: FlowMapping) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=True)


def _flow_sequence(dumper: yaml.SafeDumper, data: FlowSequence) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)


def _string(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    # A multi-line value (a script) as a literal block, line by line as in its file, so a
    # review diff shows the lines that changed. PyYAML falls back to quotes where a block
    # cannot hold the text (tabs, trailing spaces).
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(FlowMapping, _flow_mapping)
_Dumper.add_representer(FlowSequence, _flow_sequence)
_Dumper.add_representer(str, _string)


def block_yaml(data: Any) -> str:
    """A YAML document body (block style, except for Flow* values), ending in a newline."""
    return yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=True,
        default_flow_style=False,
        width=_NEVER_FOLD,
        allow_unicode=True,
    )


def one_line(value: Any) -> str:
    """`value` as a single line of flow-style YAML: `'2'`, `[a, b]`, `{key: x, value: y}`."""
    # Dumped inside a one-item list: a bare top-level scalar would get a `...` end marker.
    text = yaml.dump(
        [value],
        Dumper=_Dumper,
        sort_keys=True,
        default_flow_style=True,
        width=_NEVER_FOLD,
        allow_unicode=True,
    )
    return text.strip()[1:-1]


def title(text: str, depth: int = 0) -> str:
    return f"#{'  ' * depth} {text}"


def attribute(key: str, value: str, depth: int) -> str:
    return f"#{'  ' * depth} {key}: {value}"


# A Kubernetes object (`Kind name`) or a Pulumi resource / lookup (`type  name`, two spaces).
_TITLE = re.compile(r"^#( +)(?P<title>[A-Z][A-Za-z]* \S+|\S+  \S+)$")


def title_of(line: str) -> str | None:
    """The title a line carries, or None for any other line."""
    match = _TITLE.match(line)
    return match.group("title") if match else None
