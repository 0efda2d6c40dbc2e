"""Reading a stack file the way the Pulumi engine does, for every offline target.

The engine (pulumi/pulumi `workspace.LoadProjectStackBytes`) reads `Pulumi.<stack>.yaml` with
Go's gopkg.in/yaml.v3, prefixes a key without a namespace with the project's, and hands each
`config:` entry to the program as text (`config.Plaintext.marshalText`): a string as written,
anything else as Go's JSON. So an unquoted value here means what yaml.v3's `resolve` makes of
it: `1.0e3` is the number 1000, `010` and `0x10` are 8 and 16 (Go's base prefixes), `yes`,
`on`, `1:30` and dates are strings; a number too big for a float stays a string; `.inf` and
`.nan` are refused (the engine cannot write them as JSON). `engine_config` is that text and
`program_value` the program's reading of it, so the offline targets see exactly what
`pulumi up` would. One document, no duplicate keys, no tags beyond the core ones, no
recursive aliases. Whatever is wrong with the file is a ConfigError that names the file and
line; nothing else is raised.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
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
_TYPED = {_TAG + name for name in ("int", "float", "bool", "null")}
_AS_TEXT = {_TAG + "str", _TAG + "timestamp"}
# yaml.v3's `resolve` (resolve.go): the words it maps, its float syntax, and Go's base prefixes
# of strconv.ParseInt(s, 0, 64) (`0b`, `0o`, `0x`, and a bare leading 0 for octal).
_WORDS: dict[str, Any] = {
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_GO_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_GO_BASES = {"b": (2, "01"), "o": (8, "01234567"), "x": (16, "0123456789abcdefABCDEF")}
_KIND_TAGS = {bool: "bool", int: "int", float: "float", type(None): "null", str: "str"}
# Go's encoding/json writes a float in [1e-6, 1e21) without an exponent, so a whole one reads
# back as an integer.
_GO_JSON_PLAIN = 1e21


class ConfigError(ValueError):
    """One or more stack config values are invalid; the message lists each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(
            "invalid stack config:\n" + "\n".join(f"  - {problem}" for problem in problems)
        )


# A key part shown as typed; any other (blank, spaces, control characters, `.`, `[`, quotes)
# in the quoted form `pulumi config set --path` takes (`env["A.B"]`), so a stray "\r" or " "
# in a key is visible in the message.
_PLAIN_KEY = re.compile(r'^[^\s.\[\]"\x00-\x1f\x7f]+$')


def key_path(parts: Iterable[str | int], namespace: str = PROJECT) -> str:
    """("cluster", "gpuPool", "instanceTypes", 0) → tftrain:cluster.gpuPool.instanceTypes[0]."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
            continue
        if _PLAIN_KEY.match(str(part)):
            text += f".{part}" if text else str(part)
        else:
            text += f"[{json.dumps(str(part))}]"
    return f"{namespace}:{text}" if text else namespace


def did_you_mean(name: str, known: Sequence[str]) -> str:
    """`, did you mean X?` for the closest of `known`, ignoring case; empty if none is close."""
    lowered = {k.lower(): k for k in known}
    close = difflib.get_close_matches(str(name).lower(), list(lowered), n=1, cutoff=0.6)
    return f", did you mean {lowered[close[0]]}?" if close else ""


@dataclass(frozen=True)
class StackFile:
    path: Path
    entries: dict[str, Any]  # every config entry, all namespaces, as the engine reads them
    lines: dict[str, int]  # `tftrain:worker.number` → the line it is on

    @property
    def config(self) -> dict[str, Any]:
        """The `tftrain:` entries, prefix removed, as the Pulumi program reads them."""
        engine = engine_config(self.entries)
        return strip_project_prefix({key: program_value(text) for key, text in engine.items()})

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
        if node.tag not in _TYPED | _AS_TEXT:
            raise self.fail(node, f"the tag {node.tag} is not allowed: plain YAML values only")
        plain = node.style is None
        implicit = plain and node.tag == self.yaml.resolver.resolve(
            ScalarNode, node.value, (True, False)
        )
        if node.tag in _AS_TEXT and not implicit:
            return node.value  # quoted, a block, or tagged !!str
        value = engine_scalar(node.value)
        wanted = node.tag.removeprefix(_TAG)
        if not implicit and _KIND_TAGS[type(value)] != wanted:
            if not (wanted == "float" and isinstance(value, int)):
                raise self.fail(node, f"{node.value!r} is not a YAML {wanted}")
            value = float(value)
        if isinstance(value, float) and not math.isfinite(value):
            reason = "the Pulumi engine cannot pass infinity or NaN to a program"
            raise self.fail(node, f"{node.value}: {reason}: write a number")
        return value

    def item(self, node: Node, path: tuple[Any, ...]) -> Any:
        self.lines[path] = node.start_mark.line + 1
        return self.value(node, path)


def engine_scalar(text: str) -> Any:
    """An unquoted scalar as yaml.v3 resolves it (see the module docstring)."""
    if text in _WORDS:
        return _WORDS[text]
    if text[:1] == ".":
        return float(text) if _GO_FLOAT.match(text) else text
    if text[:1] not in tuple("+-0123456789"):
        return text
    plain = text.replace("_", "")
    number = _go_integer(plain)
    if number is not None:
        return number
    if _GO_FLOAT.match(plain) and math.isfinite(number := float(plain)):
        return number  # Go's ParseFloat fails out of range: such a number stays text
    return text


def _go_integer(text: str) -> int | None:
    """strconv.ParseInt(text, 0, 64), else ParseUint(text, 0, 64): None if neither takes it."""
    signed = text[:1] in ("+", "-")
    digits = text[1:] if signed else text
    base, allowed = 10, "0123456789"
    if digits[:1] == "0":
        prefix = digits[1:2].lower()
        if len(digits) >= 3 and prefix in _GO_BASES:
            (base, allowed), digits = _GO_BASES[prefix], digits[2:]
        else:
            base, allowed, digits = 8, "01234567", digits[1:]
    elif not digits:
        return None
    if not all(c in allowed for c in digits):
        return None
    try:
        value = int(digits or "0", base) * (-1 if text[:1] == "-" else 1)
    except ValueError:  # more decimal digits than Python converts: far out of range anyway
        return None
    if -(2**63) <= value < 2**63 or (not signed and value < 2**64):
        return value
    return None


def engine_config(entries: Mapping[str, Any]) -> dict[str, str]:
    """What the engine hands the program (PULUMI_CONFIG) for a stack's config entries: keys
    with their namespace (the project's if none), a string as written, null as an empty
    string, anything else as Go's JSON text."""
    return {
        key if ":" in key else f"{PROJECT}:{key}": value
        if isinstance(value, str)
        else ""
        if value is None
        else json.dumps(_as_go_json(value), separators=(",", ":"), allow_nan=False)
        for key, value in entries.items()
    }


def _as_go_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _as_go_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_as_go_json(item) for item in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < _GO_JSON_PLAIN:
        return int(Decimal(repr(value)))  # Go prints the shortest digits, then zeros
    return value


def program_value(text: str) -> Any:
    """How the program reads one engine value: JSON objects and lists decoded; a scalar stays
    text for the config model (which reads "4" and "true" as the engine means them)."""
    if isinstance(text, str) and text.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text  # the config model reports it with its key
    return text


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


# Far above any real stack (a 1,000-trial sweep's values are well under 1 MiB).
MAX_STACK_FILE_BYTES = 4 * 2**20


def read_stack(path: Path) -> StackFile:
    """Read and check a stack file; see the module docstring."""
    if not path.is_file():
        known = sorted(
            p.name[len("Pulumi.") : -len(".yaml")] for p in path.parent.glob("Pulumi.*.yaml")
        )
        raise ConfigError(
            [f"stack file {path} not found; stacks here: {', '.join(known) or 'none'}"]
        )
    with path.open("rb") as stream:
        data = stream.read(MAX_STACK_FILE_BYTES + 1)
    if len(data) > MAX_STACK_FILE_BYTES:
        # Parsing is quadratic-ish in places (60 MB took minutes): refuse before reading on.
        raise ConfigError(
            [f"{path}: larger than {MAX_STACK_FILE_BYTES // 2**20} MiB; a stack file is a few "
             "kilobytes of settings (data belongs in the bucket or data.localInputDir)"]
        )  # fmt: skip
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
    environments = document.get("environment")
    if environments:
        problems.append(_environment_problem(path, lines[("environment",)], environments))
    written = document.get("config") or {}
    if not isinstance(written, dict):
        problems.append(f"{path}:{lines[('config',)]}: config: must be a mapping of keys")
        written = {}
    entries: dict[str, Any] = {}
    for key, value in written.items():
        line = lines[("config", key)]
        full = _namespaced(key)
        if full in entries:  # `worker` and `tftrain:config:worker` are `tftrain:worker`
            problems.append(f"{path}:{line}: {key}: the same key as {full} to Pulumi, set twice")
        wrong = namespace_problem(full)
        problems += [f"{path}:{line}: {wrong}"] if wrong else []
        entries[full] = value
    if problems:
        raise ConfigError(problems)
    return StackFile(
        path,
        entries,
        {_config_key(p): n for p, n in lines.items() if len(p) > 1 and p[0] == "config"},
    )


def _environment_problem(path: Path, line: int, environments: Any) -> str:
    """Pulumi ESC environments merge their `pulumiConfig` into this stack's config inside the
    engine, where only `pulumi preview`/`up` see it; an offline reading would silently show
    another stack than the one that deploys."""
    names = environments if isinstance(environments, list) else [environments]
    listed = ", ".join(str(name) for name in names)
    return (
        f"{path}:{line}: environment: this stack imports Pulumi ESC environments ({listed}), "
        "whose values this offline reading cannot see, so it would show a different stack "
        "than `pulumi up` deploys. Use `pulumi preview --diff` for this stack, or copy the "
        "stack file without `environment:` (and with the tftrain: values the environments "
        "supply) for the render and the local launcher"
    )


# pulumi/pulumi's config.ParseKey takes `<namespace>:<name>` (one colon) and, from before
# config had namespaces, `<namespace>:config:<name>` for the same key; any other key with a
# second colon is refused by every `pulumi` command that loads the stack.
_OLD_FORM = "config:"


def _namespaced(key: str) -> str:
    """The engine's name of a config key: one without a namespace is the project's, and
    `<namespace>:config:<name>` is `<namespace>:<name>`."""
    if ":" not in key:
        return f"{PROJECT}:{key}"
    namespace, _, name = key.partition(":")
    if name.startswith(_OLD_FORM) and name.count(":") == 1:
        return f"{namespace}:{name.removeprefix(_OLD_FORM)}"
    return key


def namespace_problem(key: Any) -> str | None:
    """Why a config key's namespace is wrong (a typo Pulumi would keep and ignore), or None."""
    if not isinstance(key, str):
        return f"{key!r}: a config key is a string <namespace>:<name>; quote it"
    namespace, _, name = key.partition(":")
    if ":" in name:
        section, _, rest = name.partition(":")
        return (
            f"{key}: not a config key: Pulumi reads a key as <namespace>:<name>, with one "
            f"colon, and refuses this one; a setting inside a section is nested under it "
            f"({rest} under {namespace}:{section})"
        )
    if name and namespace in NAMESPACES:
        return None
    return (
        f"{key}: unknown config namespace{did_you_mean(namespace, NAMESPACES) or ';'} keys are "
        f"<namespace>:<name> with a namespace of {', '.join(NAMESPACES)}"
    )


def _config_key(path: tuple[Any, ...]) -> str:
    namespace, _, name = _namespaced(path[1]).partition(":")
    return key_path((name, *path[2:]), namespace)
