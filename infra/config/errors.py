"""Pydantic's errors said as a user would fix them: the key as typed for `pulumi config set
--path` (`tftrain:cluster.gpuPool.instanceTypes[0]`), the value found and what is allowed."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Literal, get_args, get_origin

from pydantic import ValidationError
from pydantic.fields import FieldInfo

from infra.config.stack_file import did_you_mean, key_path
from infra.config.types import Secret

# What a problem shows for the value of a secret key (`types.Secret`): a password typed in
# the clear must not reach a terminal or a CI log a second time.
HIDDEN = "(not shown)"


def problem(key: str, value: Any, allowed: str, hide: bool = False) -> str:
    shown = HIDDEN if hide else json.dumps(value, default=str)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return f"{key} = {shown}: must be {allowed}"


def describe(error: ValidationError, model: type) -> list[str]:
    """One line per problem pydantic found, each located by the key a user types."""
    problems = []
    for detail in error.errors(include_url=False):
        loc = tuple(part for part in detail["loc"] if part != "[key]")
        fields, info, depth = _locate(model, loc)
        # The program's own keys (a trial's point) are no key a user may write.
        key, known = key_path(loc), sorted(k for k, i in fields.items() if not i.exclude)
        # The sections are pydantic dataclasses: an unknown key is an unexpected argument.
        if detail["type"] == "unexpected_keyword_argument":
            hint = did_you_mean(str(loc[-1]), known) or ";"
            problems.append(f"{key}: unknown key{hint} known keys here: {', '.join(known)}")
            continue
        allowed = _allowed(info) if info else "a mapping with the keys " + ", ".join(known)
        reason = str(detail.get("ctx", {}).get("error", ""))
        # A validator's own words: an item's, or the key's description with a reason added.
        if reason and (depth < len(loc) or reason.startswith(allowed)):
            allowed = reason
        hide = info is not None and any(isinstance(m, Secret) for m in info.metadata)
        problems.append(problem(key, detail["input"], allowed, hide))
    return problems


def fields_of(section: Any) -> dict[str, FieldInfo]:
    """A section's fields by the key a user types."""
    return {info.alias or name: info for name, info in section.__pydantic_fields__.items()}


def _locate(
    model: type, loc: tuple[Any, ...]
) -> tuple[dict[str, FieldInfo], FieldInfo | None, int]:
    """The section's fields, the key's field (None if unknown) and the parts of `loc` to it."""
    fields = fields_of(model)
    skip = False  # the next part is a key of a mapping of sections (`sweep.parameters.<key>`)
    for depth, part in enumerate(loc):
        if skip:
            skip = False
            continue
        info = fields.get(part)
        section, keyed = section_of(info.annotation) if info else (None, False)
        if keyed and depth + 2 == len(loc):
            return fields_of(section), None, len(loc)  # one entry of the mapping: a section
        if section is None or depth + 1 == len(loc):
            return fields, info, depth + (info is not None)
        fields, skip = fields_of(section), keyed
    return fields, None, len(loc)


def section_of(annotation: Any) -> tuple[Any, bool]:
    """The section a key holds (None if it holds a value), and whether it holds a mapping of
    them: `Section`, `Section | None` and `dict[str, Section]`."""
    if dataclasses.is_dataclass(annotation):
        return annotation, False
    args = [arg for arg in get_args(annotation) if arg is not type(None)]
    if get_origin(annotation) is dict and len(args) == 2 and dataclasses.is_dataclass(args[1]):
        return args[1], True
    if len(args) == 1 and dataclasses.is_dataclass(args[0]):
        return args[0], False
    return None, False


def _allowed(info: FieldInfo) -> str:
    if get_origin(info.annotation) is Literal:
        return "one of " + ", ".join(str(choice) for choice in get_args(info.annotation))
    section, keyed = section_of(info.annotation)
    if info.description:
        return info.description
    if section is not None and not keyed:
        return "a mapping with the keys " + ", ".join(sorted(fields_of(section)))
    return "valid here"
