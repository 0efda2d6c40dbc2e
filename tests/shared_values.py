"""Values a test file computes once and shares between its tests, except under mutmut.

mutmut reruns a test under a mutant only if its stats run saw that test call the mutated
function. A shared value (a cached program run, a module-scoped fixture) is computed inside the
first test that asks for it, so every later test looks as if it never ran the code, and a
mutant only they would catch survives. Under mutmut (it sets MUTANT_UNDER_TEST before any
test module is imported) each test computes its own."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Literal, TypeVar

UNDER_MUTATION = "MUTANT_UNDER_TEST" in os.environ

Function = TypeVar("Function", bound=Callable[..., object])


def shared(function: Function) -> Function:
    """`functools.cache`, or the function itself under mutmut."""
    return function if UNDER_MUTATION else functools.cache(function)  # type: ignore[return-value]


# The scope of a fixture whose value the file's tests share.
SHARED_SCOPE: Literal["function", "module"] = "function" if UNDER_MUTATION else "module"
