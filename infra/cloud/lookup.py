"""One answer to "what does the cloud list?" for every preflight check made before anything
is billed (`zone_offers`, `api_server_reach`, `oss`).

A provider function is invoked through its token, not its typed wrapper: the wrapper cannot
return the unknown result an offline render gets (it asks no cloud). The rule every check
follows: an unknown result (`None`) skips the check, and the render shows the lookup; any
known result is a list, and an empty one is an answer ("nothing of that name") that the
check must act on, never a reason to skip it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi


def answered(token: str, args: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The lookup's whole result; None only when it is unknown."""
    result = pulumi.runtime.invoke(token, dict(args), pulumi.InvokeOptions())
    if not result.is_known:
        return None
    return result.value or {}


def listed(token: str, args: Mapping[str, Any], field: str) -> list[Mapping[str, Any]] | None:
    """The list `field` of the lookup's result; None only when the result is unknown."""
    result = answered(token, args)
    return None if result is None else list(result.get(field) or ())


# What Go's regexp (RE2, which the provider's `name_regex`/`description_regex` filters use)
# treats as syntax; it refuses an escaped space or letter, so `re.escape` does not fit text.
_RE2_SYNTAX = frozenset("\\.+*?()|[]{}^$")


def re2_literal(text: str) -> str:
    """`text` as an RE2 pattern that matches exactly it."""
    return "".join(f"\\{char}" if char in _RE2_SYNTAX else char for char in text)
