"""Pydantic's errors said as a user would fix them.

Every problem names the key as typed for `pulumi config set --path` (`tftrain:worker.number`,
`tftrain:cluster.gpuPool.instanceTypes[0]`), the value found and what is allowed.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any, Literal, get_args, get_origin

from pydantic import ValidationError
from pydantic.fields import FieldInfo

from infra.stack_file import did_you_mean, key_path

_UNKNOWN = ("extra_forbidden", "unexpected_keyword_argument")


def problem(key: str, value: Any, allowed: str) -> str:
    shown = json.dumps(value, default=str)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return f"{key} = {shown}: must be {allowed}"


def unknown_key(key: str, name: str, known: Sequence[str]) -> str:
    hint = did_you_mean(name, known) or ";"
    return f"{key}: unknown key{hint} known keys here: {', '.join(known)}"


def _aliases(section: type) -> list[str]:
    fields: dict[str, FieldInfo] = section.__pydantic_fields__  # type: ignore[attr-defined]
    return sorted(info.alias or name for name, info in fields.items())


def _locate(model: type, loc: tuple[Any, ...]) -> tuple[type, FieldInfo | None, int]:
    """The section holding the key at `loc`, the key's field (None if unknown) and how many
    parts of `loc` lead to it."""
    section = model
    for depth, part in enumerate(loc):
        fields: dict[str, FieldInfo] = section.__pydantic_fields__  # type: ignore[attr-defined]
        info = next((f for n, f in fields.items() if (f.alias or n) == part), None)
        if info is None:
            return section, None, depth
        if dataclasses.is_dataclass(info.annotation) and depth + 1 < len(loc):
            section = info.annotation  # type: ignore[assignment]
            continue
        return section, info, depth + 1
    return section, None, len(loc)


def _allowed(info: FieldInfo) -> str:
    if get_origin(info.annotation) is Literal:
        return "one of " + ", ".join(str(choice) for choice in get_args(info.annotation))
    if dataclasses.is_dataclass(info.annotation):
        return "a mapping with the keys " + ", ".join(_aliases(info.annotation))  # type: ignore[arg-type]
    return info.description or "valid here"


def describe(error: ValidationError, model: type) -> list[str]:
    """One line per problem pydantic found, each located by the key a user types."""
    problems = []
    for detail in error.errors(include_url=False):
        loc = tuple(part for part in detail["loc"] if part != "[key]")
        section, info, depth = _locate(model, loc)
        key = key_path(loc)
        reason = detail.get("ctx", {}).get("error")
        if detail["type"] in _UNKNOWN:
            problems.append(unknown_key(key, str(loc[-1]), _aliases(section)))
        elif info is None:
            known = ", ".join(_aliases(section))
            problems.append(problem(key, detail["input"], f"a mapping with the keys {known}"))
        elif reason is not None and (depth < len(loc) or str(reason).startswith(_allowed(info))):
            # A validator's own words: an item's, or the key's description with a reason.
            problems.append(problem(key, detail["input"], str(reason)))
        else:
            problems.append(problem(key, detail["input"], _allowed(info)))
    return problems
