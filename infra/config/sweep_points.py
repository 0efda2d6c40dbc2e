"""The points of a sweep, from its `method`, `parameters` and `seed`: pure and deterministic.

- grid: every combination of the parameters' `values`, the first parameter varying slowest
  (the order the stack file lists them in), as W&B's and Katib's grid do.
- random: `samples` points; each draws its parameters in order from one `random.Random(seed)`
  (Python's Mersenne Twister, whose sequence for an integer seed is fixed across versions and
  machines), so the same stack renders the same points everywhere, and raising `samples`
  only adds points after the ones already drawn. A drawn number keeps 6 significant digits:
  the review shows what runs, and 0.00312 reads better than 0.0031207753191348.
  `values` draws one of them; `uniform` between min and max; `log_uniform` uniformly in
  log space between min and max (both values, as Katib's logUniform; W&B's log_uniform_values);
  `int_uniform` a whole number from min to max, both included.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping
from typing import Any

from infra.config.model import SweepConfig, SweepParameter

Point = dict[str, Any]
SIGNIFICANT = 6


def sweep_points(sweep: SweepConfig) -> list[Point]:
    """Every point of the sweep, in trial order."""
    if sweep.method == "grid":
        return grid_points(sweep.parameters)
    return random_points(sweep.parameters, sweep.samples or 1, sweep.seed)


def grid_points(parameters: Mapping[str, SweepParameter]) -> list[Point]:
    keys = list(parameters)
    lists = [list(parameters[key].values or ()) for key in keys]
    return [dict(zip(keys, combination, strict=True)) for combination in itertools.product(*lists)]


def random_points(parameters: Mapping[str, SweepParameter], samples: int, seed: int) -> list[Point]:
    draw = random.Random(seed)
    return [{key: _draw(draw, spec) for key, spec in parameters.items()} for _ in range(samples)]


def _draw(draw: random.Random, spec: SweepParameter) -> Any:
    if spec.values is not None:
        return spec.values[draw.randrange(len(spec.values))]
    low, high = float(spec.min or 0), float(spec.max or 0)
    if spec.distribution == "int_uniform":
        return draw.randint(math.ceil(low), math.floor(high))
    if spec.distribution == "log_uniform":
        value = math.exp(draw.uniform(math.log(low), math.log(high)))
    else:
        value = draw.uniform(low, high)
    return float(f"{value:.{SIGNIFICANT}g}")


def point_text(point: Mapping[str, Any]) -> str:
    """`hyperparams.learningRate=0.01 hyperparams.batchSize=64`: a point on one line."""
    return " ".join(f"{key}={_value_text(value)}" for key, value in point.items())


def _value_text(value: Any) -> str:
    """As YAML would show it: a point may hold any value a user wrote, null and maps too."""
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "null"
    if isinstance(value, str | int | float):
        return str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value_text(item) for item in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_value_text(v)}" for k, v in value.items()) + "}"
    return repr(value)
