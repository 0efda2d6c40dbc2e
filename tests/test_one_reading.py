"""One reading: a spelling in a stack file means the same to the offline targets (the render,
the review, the launcher) as to the program under `pulumi up`.

Each row of the corpus states, worked by hand from the engine's source, what the engine hands
the program for that spelling (pulumi/pulumi `workspace.LoadProjectStackBytes` reads the file
with gopkg.in/yaml.v3, whose `resolve` types an unquoted scalar; `config.Plaintext.marshalText`
passes a string as written and anything else as Go's JSON), and what the stack must then be.
The offline side reads the file (`load_stack_file`); the program side is the program's own
config path (`read_stack_config`, then `parse_config`, as `build()` does) given the engine's
PULUMI_CONFIG from the row. Both must give the row's value, or both a refusal that names the
key (the offline one also its line).
"""

from __future__ import annotations

import contextvars
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from pulumi.runtime import config as runtime_config

from infra.config import ConfigError, StackConfig, load_stack_file, parse_config
from infra.program import read_stack_config

IMAGE = "registry.example.com/tftrain/trainer:1"
EXISTING = {
    "image": IMAGE,
    "job": {"name": "mnist", "namespace": "tftrain-dev"},
    "cluster": {"kind": "existing"},
    "storage": {"kind": "hostPath", "hostPath": "/var/lib/tftrain", "mountPath": "/data"},
    "worker": {"number": 2},
    "hyperparams": {"epochs": 4},
}
# A user's image: it names its command, and TensorBoard gets tftrain's (issue 19's rules).
BYO = {
    **EXISTING,
    "job": {**EXISTING["job"], "command": ["python", "/app/train.py"]},
    "tensorboard": {"image": IMAGE},
}
ACK = {
    "image": IMAGE,
    "job": {"name": "mnist", "namespace": "tftrain"},
    "cluster": {
        "kind": "ack",
        "gpuPool": {"instanceTypes": ["ecs.gn6i-c4g1.xlarge"]},
        "cpuPool": {"instanceTypes": ["ecs.g7.xlarge"], "size": 2},
    },
    "network": {"zoneId": "cn-hangzhou-i"},
    "worker": {"number": 2, "gpuCount": 1},
}
_LOCATION = re.compile(r" \(Pulumi\.spelt\.yaml:\d+\)$")
DEFAULT = object()  # the key's default: the engine hands null inside an object
REFUSED = object()  # refused, by the program's key, or by the engine itself
ENGINE_REFUSES = object()  # the engine cannot hand it over at all (Go's JSON has no .inf)

# (base stack, key path, spelling, what the engine hands over, what the stack must be)
CORPUS: list[tuple[dict[str, Any], tuple[str, ...], str, Any, Any]] = [
    (EXISTING, ("hyperparams", "epochs"), "1.0e3", 1000, 1000),  # a float; Go's JSON: 1000
    (EXISTING, ("hyperparams", "epochs"), "1e3", 1000, 1000),
    (EXISTING, ("hyperparams", "epochs"), "'1.0e3'", "1.0e3", REFUSED),
    (EXISTING, ("hyperparams", "epochs"), "1_000", 1000, 1000),  # yaml.v3 drops the _
    (EXISTING, ("hyperparams", "epochs"), "010", 8, 8),  # strconv.ParseInt base 0: octal
    (EXISTING, ("hyperparams", "epochs"), "'010'", "010", REFUSED),  # 8 or 10? neither
    (EXISTING, ("hyperparams", "epochs"), "0x10", 16, 16),
    (EXISTING, ("hyperparams", "epochs"), "0o10", 8, 8),
    (EXISTING, ("hyperparams", "epochs"), "09", 9, 9),  # not octal: ParseFloat's 9.0
    (EXISTING, ("hyperparams", "epochs"), "yes", "yes", REFUSED),  # yaml.v3: not a bool
    (EXISTING, ("hyperparams", "epochs"), "on", "on", REFUSED),
    (EXISTING, ("hyperparams", "epochs"), "1:30", "1:30", REFUSED),  # no base 60 in yaml.v3
    (EXISTING, ("hyperparams", "epochs"), "2024-01-15", "2024-01-15", REFUSED),
    (EXISTING, ("hyperparams", "epochs"), "~", None, DEFAULT),
    (EXISTING, ("hyperparams", "epochs"), ".inf", ENGINE_REFUSES, REFUSED),
    (EXISTING, ("hyperparams", "epochs"), "9" * 30, 1e30, REFUSED),  # past int64 and uint64
    (EXISTING, ("hyperparams", "epochs"), "9" * 400, "9" * 400, REFUSED),  # past a float
    (EXISTING, ("hyperparams", "epochs"), "true", True, REFUSED),
    (EXISTING, ("hyperparams", "learningRate"), "1e-3", 0.001, 0.001),
    (EXISTING, ("hyperparams", "learningRate"), "'1e-3'", "1e-3", 0.001),
    (EXISTING, ("hyperparams", "learningRate"), ".5", 0.5, 0.5),
    (EXISTING, ("hyperparams", "learningRate"), "-.inf", ENGINE_REFUSES, REFUSED),
    (EXISTING, ("hyperparams", "learningRate"), ".nan", ENGINE_REFUSES, REFUSED),
    (EXISTING, ("job", "runId"), "2024-01-15", "2024-01-15", "2024-01-15"),  # text, no date
    (EXISTING, ("job", "runId"), "1:30", "1:30", REFUSED),
    (EXISTING, ("job", "runId"), "010", 8, REFUSED),  # a number, not a run id
    (EXISTING, ("job", "runId"), "'010'", "010", "010"),
    (EXISTING, ("job", "runId"), "yes", "yes", "yes"),
    (EXISTING, ("job", "runId"), "0x1F", 31, REFUSED),
    (EXISTING, ("job", "runId"), "1.0e3", 1000, REFUSED),
    (EXISTING, ("storage", "retainOnDestroy"), "yes", "yes", REFUSED),
    (EXISTING, ("storage", "retainOnDestroy"), "on", "on", REFUSED),
    (EXISTING, ("storage", "retainOnDestroy"), "True", True, True),
    (EXISTING, ("storage", "retainOnDestroy"), "'false'", "false", False),
    (ACK, ("cluster", "gpuPool", "size"), "010", 8, 8),
    (ACK, ("cluster", "gpuPool", "size"), "02", 2, 2),
    (ACK, ("cluster", "gpuPool", "size"), "1.0e0", 1, 1),
    (ACK, ("cluster", "gpuPool", "size"), "'02'", "02", REFUSED),
    # At the top, a non-string arrives as its JSON text, and null as an empty string.
    (BYO, ("image",), "010", "8", "8"),
    (BYO, ("image",), "1.0e3", "1000", "1000"),
    (BYO, ("image",), "true", "true", "true"),
    (EXISTING, ("worker",), "~", "", REFUSED),
    (EXISTING, ("worker",), "1.0e3", "1000", REFUSED),
]


def _yaml(value: Any, spelling: str, path: tuple[str, ...], indent: int) -> list[str]:
    """A section in block style, its other keys as JSON (flow YAML), the spelt key as typed."""
    pad = " " * indent
    lines = []
    for key, item in value.items():
        if key == path[0] and len(path) > 1:
            lines += [f"{pad}{key}:", *_yaml(item, spelling, path[1:], indent + 2)]
        elif key != path[0]:
            lines.append(f"{pad}{key}: {json.dumps(item)}")
    if len(path) == 1:
        lines.append(f"{pad}{path[0]}: {spelling}")
    elif path[0] not in value:
        lines += [f"{pad}{path[0]}:", *_yaml({}, spelling, path[1:], indent + 2)]
    return lines


def _stack_file(base: Mapping[str, Any], path: tuple[str, ...], spelling: str) -> str:
    prefixed = {f"tftrain:{key}": value for key, value in base.items()}
    return "\n".join(["config:", *_yaml(prefixed, spelling, ("tftrain:" + path[0], *path[1:]), 2)])


def _engine_config(base: Mapping[str, Any], path: tuple[str, ...], handed: Any) -> dict[str, str]:
    """PULUMI_CONFIG: a string as written, everything else its JSON text (whole numbers as
    integers, as Go writes a float64 of 1000)."""
    config = json.loads(json.dumps(base))
    if len(path) == 1:
        config[path[0]] = handed  # already the engine's text
    else:
        node = config
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = handed
    return {
        f"tftrain:{key}": value if isinstance(value, str) else json.dumps(value)
        for key, value in config.items()
    }


def _program_reads(engine: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> StackConfig:
    """The program's config path, handed `engine` as the engine hands it (PULUMI_CONFIG)."""
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps(engine))

    def read() -> StackConfig:
        runtime_config.CONFIG.set({})  # nothing left by an earlier run under mocks
        return parse_config(read_stack_config())

    return contextvars.copy_context().run(read)


def _value(stack: StackConfig, path: tuple[str, ...]) -> Any:
    node: Any = stack
    for part in path:
        node = getattr(node, "".join("_" + c.lower() if c.isupper() else c for c in part))
    return node


def _default(base: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    without = json.loads(json.dumps(base))
    node = without
    for part in path[:-1]:
        node = node.get(part, {})
    node.pop(path[-1], None)
    return _value(parse_config(without), path)


def _key(path: tuple[str, ...]) -> str:
    return "tftrain:" + ".".join(path)


@pytest.mark.parametrize(
    ("base", "path", "spelling", "handed", "expected"),
    CORPUS,
    ids=[f"{'.'.join(row[1])}={row[2][:12]}" for row in CORPUS],
)
def test_a_spelling_means_the_same_offline_and_under_pulumi_up(
    base: dict[str, Any],
    path: tuple[str, ...],
    spelling: str,
    handed: Any,
    expected: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    file = tmp_path / "Pulumi.spelt.yaml"
    file.write_text(_stack_file(base, path, spelling) + "\n")
    if expected is DEFAULT:
        expected = _default(base, path)

    if expected is REFUSED:
        with pytest.raises(ConfigError) as offline:
            load_stack_file(file)
        problems = offline.value.problems
        # Named by key (the model's refusal) or by the file's line (the reader's).
        assert all(_key(path) in p or p.startswith(f"{file}:") for p in problems), problems
        assert all("Pulumi.spelt.yaml:" in p for p in problems), problems
    else:
        assert _value(load_stack_file(file), path) == expected

    if handed is ENGINE_REFUSES:
        # The engine stops before the program runs (json: unsupported value: +Inf); the
        # offline refusal above is the reader's, by line.
        assert expected is REFUSED
        return
    engine = _engine_config(base, path, handed)
    if expected is REFUSED:
        with pytest.raises(ConfigError) as program:
            _program_reads(engine, monkeypatch)
        # The same problems, word for word; offline each also says where.
        assert [_LOCATION.sub("", p) for p in problems] == program.value.problems
    else:
        assert _value(_program_reads(engine, monkeypatch), path) == expected


def test_the_corpus_covers_each_kind_of_spelling() -> None:
    spellings = {row[2] for row in CORPUS}
    for needed in ("1.0e3", "010", "'010'", "yes", "on", "2024-01-15", "1:30", ".inf", "0x10"):
        assert needed in spellings
