"""Reading a stack file the way the Pulumi engine does, for every offline target.

`stacks/Pulumi.<stack>.yaml` is read as YAML 1.2 (`1:30` and `yes` are strings, dates stay
strings, as the engine hands them to the program; `010`, which YAML 1.1 reads as 8, is
refused as ambiguous), one document, no duplicate keys, no tags, no recursive aliases.
Whatever is wrong with the file is a ConfigError that names the file and line; nothing else
is raised.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML, MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.error import YAMLError

PROJECT = "tftrain"
# What a Pulumi stack file may hold at the top, and the config namespaces this project reads
# (its own and its providers'); anything else is a typo Pulumi would silently keep.
TOP_LEVEL_KEYS = ("config", "encryptedkey", "encryptionsalt", "environment", "secretsprovider")
NAMESPACES = (PROJECT, "alicloud", "kubernetes", "pulumi")
MAX_DEPTH = 32
MAX_VALUES = 100_000  # an alias bomb expands to billions
_TAG = "tag:yaml.org,2002:"
_PLAIN = {_TAG + name for name in ("int", "float", "bool", "null")}
# `010`: 8 to YAML 1.1 readers (PyYAML, Go's yaml.v3), 10 to YAML 1.2 ones: refused as ambiguous.
_OCTAL_1_1 = re.compile(r"^[-+]?0[0-9_]+$")
_AS_TEXT = {_TAG + "str", _TAG + "timestamp"}


class ConfigError(ValueError):
    """One or more stack config values are invalid; the message lists each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(
            "invalid stack config:\n" + "\n".join(f"  - {problem}" for problem in problems)
        )


def key_path(parts: Iterable[str | int], namespace: str = PROJECT) -> str:
    """("cluster", "gpuPool", "instanceTypes", 0) → tftrain:cluster.gpuPool.instanceTypes[0]."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return f"{namespace}:{text}" if text else namespace


def did_you_mean(name: str, known: Sequence[str]) -> str:
    """`, did you mean X?` for the closest of `known`, ignoring case; empty if none is close."""
    lowered = {k.lower(): k for k in known}
    close = difflib.get_close_matches(str(name).lower(), list(lowered), n=1, cutoff=0.6)
    return f", did you mean {lowered[close[0]]}?" if close else ""


@dataclass(frozen=True)
class StackFile:
    path: Path
    entries: dict[str, Any]  # every config entry, all namespaces, as written
    lines: dict[str, int]  # `tftrain:worker.number` → the line it is on

    @property
    def config(self) -> dict[str, Any]:
        """The `tftrain:` entries, prefix removed: what the Pulumi program reads."""
        return strip_project_prefix(self.entries)

    def locate(self, error: ConfigError) -> ConfigError:
        """The same problems, each followed by the file and line of the key it names."""
        located = []
        for text in error.problems:
            key = text.split(" ", 1)[0].rstrip(":")
            while key and key not in self.lines:
                key = key.rpartition("[")[0] if key.endswith("]") else key.rpartition(".")[0]
            line = f" ({self.path.name}:{self.lines[key]})" if key else ""
            located.append(text + line)
        return ConfigError(located)


def strip_project_prefix(config: Mapping[str, Any]) -> dict[str, Any]:
    """`{"tftrain:worker": ...}` → `{"worker": ...}`; keys of other namespaces are dropped."""
    prefix = f"{PROJECT}:"
    return {key[len(prefix) :]: value for key, value in config.items() if key.startswith(prefix)}


class _Builder:
    """Python values from the composed YAML nodes, keeping each key's line."""

    def __init__(self, yaml: YAML, where: str) -> None:
        self.yaml = yaml
        self.where = where
        self.lines: dict[tuple[Any, ...], int] = {}
        self.open: set[int] = set()
        self.count = 0

    def fail(self, node: Node, message: str) -> ConfigError:
        return ConfigError([f"{self.where}:{node.start_mark.line + 1}: {message}"])

    def value(self, node: Node, path: tuple[Any, ...]) -> Any:
        self.count += 1
        if len(path) > MAX_DEPTH or self.count > MAX_VALUES:
            raise self.fail(node, f"nested deeper than {MAX_DEPTH} or over {MAX_VALUES} values")
        if id(node) in self.open:
            raise self.fail(node, "an alias that contains itself")
        if isinstance(node, ScalarNode):
            return self.scalar(node)
        if node.tag not in (_TAG + "seq", _TAG + "map"):
            raise self.fail(node, f"the tag {node.tag} is not allowed: plain YAML values only")
        self.open.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                return [self.item(child, (*path, i)) for i, child in enumerate(node.value)]
            assert isinstance(node, MappingNode)
            mapping: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key = self.value(key_node, path)
                if not isinstance(key, str):
                    raise self.fail(key_node, f"the key {key!r} is not a string: quote it")
                if key in mapping:
                    first = self.lines[(*path, key)]
                    raise self.fail(key_node, f"duplicate key {key!r} (first on line {first})")
                self.lines[(*path, key)] = key_node.start_mark.line + 1
                mapping[key] = self.value(value_node, (*path, key))
            return mapping
        finally:
            self.open.discard(id(node))

    def scalar(self, node: ScalarNode) -> Any:
        if node.tag in _AS_TEXT:
            return node.value
        if node.tag == _TAG + "int" and _OCTAL_1_1.match(node.value):
            message = "a leading 0 is octal in YAML 1.1, decimal in 1.2: drop it, or quote it"
            raise self.fail(node, f"{node.value}: {message}")
        if node.tag not in _PLAIN:
            raise self.fail(node, f"the tag {node.tag} is not allowed: plain YAML values only")
        try:
            return self.yaml.constructor.construct_object(node)
        except (ValueError, YAMLError):
            raise self.fail(node, f"{node.value[:20]!r}... is too big a number") from None

    def item(self, node: Node, path: tuple[Any, ...]) -> Any:
        self.lines[path] = node.start_mark.line + 1
        return self.value(node, path)


def parse_yaml(text: str, where: str) -> Any:
    """One YAML 1.2 document as plain Python values (see the module docstring)."""
    return _parse(text, where)[0]


def _parse(text: str, where: str) -> tuple[Any, dict[tuple[Any, ...], int]]:
    # A %YAML 1.1 directive would switch the reader to 1.1 (`yes` a boolean): not here.
    directive = next((n for n, line in enumerate(text.splitlines(), 1) if line[:1] == "%"), 0)
    if directive:
        raise ConfigError([f"{where}:{directive}: directives (%YAML, %TAG) are not allowed"])
    yaml = YAML(typ="safe", pure=True)
    try:
        node = yaml.compose(text)
    except YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        position = getattr(error, "position", None)  # a reader error: a character offset
        line = f":{mark.line + 1}" if mark is not None else ""
        line = f":{text[:position].count(chr(10)) + 1}" if position is not None else line
        parts = (getattr(error, "context", None), getattr(error, "problem", None))
        reason = " ".join(filter(None, parts)) or str(error).splitlines()[0]
        raise ConfigError([f"{where}{line}: not valid YAML: {reason}"]) from None
    except RecursionError:
        raise ConfigError([f"{where}: nested too deeply to read"]) from None
    if node is None:
        return None, {}
    builder = _Builder(yaml, where)
    return builder.value(node, ()), builder.lines


def read_stack(path: Path) -> StackFile:
    """Read and check a stack file; see the module docstring."""
    if not path.is_file():
        known = sorted(
            p.name[len("Pulumi.") : -len(".yaml")] for p in path.parent.glob("Pulumi.*.yaml")
        )
        raise ConfigError(
            [f"stack file {path} not found; stacks here: {', '.join(known) or 'none'}"]
        )
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ConfigError(
            [f"{path}:{line}: not UTF-8 text (byte {data[error.start]:#04x})"]
        ) from None
    document, lines = _parse(text, str(path))
    document = {} if document is None else document
    if not isinstance(document, dict):
        raise ConfigError([f"{path}:1: a stack file is a mapping with a `config:` key"])
    problems = [
        f"{path}:{lines[(key,)]}: {key}: unknown key{did_you_mean(key, TOP_LEVEL_KEYS) or ';'} "
        f"a stack file has {', '.join(TOP_LEVEL_KEYS)}"
        for key in document
        if key not in TOP_LEVEL_KEYS
    ]
    entries = document.get("config") or {}
    if not isinstance(entries, dict):
        problems.append(f"{path}:{lines[('config',)]}: config: must be a mapping of keys")
        entries = {}
    for key in entries:
        wrong = namespace_problem(key)
        problems += [f"{path}:{lines[('config', key)]}: {wrong}"] if wrong else []
    if problems:
        raise ConfigError(problems)
    return StackFile(
        path,
        entries,
        {_config_key(p): n for p, n in lines.items() if len(p) > 1 and p[0] == "config"},
    )


def namespace_problem(key: Any) -> str | None:
    """Why a config key's namespace is wrong (a typo Pulumi would keep and ignore), or None."""
    if not isinstance(key, str):
        return f"{key!r}: a config key is a string <namespace>:<name>; quote it"
    namespace, colon, name = key.partition(":")
    if colon and name and namespace in NAMESPACES:
        return None
    hint = did_you_mean(namespace, NAMESPACES) if colon else f", did you mean {PROJECT}:{key}?"
    return (
        f"{key}: unknown config namespace{hint or ';'} keys are <namespace>:<name> with a "
        f"namespace of {', '.join(NAMESPACES)}"
    )


def _config_key(path: tuple[Any, ...]) -> str:
    namespace, _, name = path[1].partition(":")
    return key_path((name, *path[2:]), namespace)
