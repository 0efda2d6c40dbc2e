"""A sweep's trials: each point applied to the stack's own config and validated as a whole
stack, before anything runs or registers.

A trial is an ordinary run: the stack's config with the point's keys set, its run id derived
from what it trains (`settings_fingerprint`, called, as for any run), its replicas named
`<job>-<run id>-<type>-<index>` (`StackConfig.run_name`). What a trial may vary is what a run
trains with; what every trial shares (the cluster, network, storage, data, images, names,
TensorBoard) is refused by name, so the sweep's shared objects are one set.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any, get_origin

from infra.config.errors import fields_of, section_of
from infra.config.model import INTERNAL_KEYS, StackConfig, SweepConfig
from infra.config.stack_file import PROJECT, ConfigError, did_you_mean, key_path
from infra.config.sweep_points import Point, point_text, sweep_points
from infra.config.types import MAX_JOB_NAME

GROUPS = ("chief", "master", "worker", "ps", "evaluator")
# What a trial may vary: the keys of what a run trains with (`*` is any name of a mapping).
TRIAL_KEYS = (
    "hyperparams.*", "job.env.*", "job.args",
    *(f"{group}.{key}" for group in GROUPS
      for key in ("number", "gpuCount", "args", "env.*")),
)  # fmt: skip
SHARED = (
    "a key every trial shares (the cluster, network, storage, data, images, names, run id, "
    "requests and TensorBoard are the sweep's, not a trial's)"
)
TRIALS_VARY = "trials vary hyperparams.*, job.env.*, job.args and <group>.number, gpuCount, "
TRIALS_VARY += "args, env.*"
# A trial's replicas are `<job>-<run id>-<type>-<index>`; a derived run id is run-<8 hex>.
RUN_ID_LENGTH = len("run-") + 8
MAX_SWEEP_JOB_NAME = MAX_JOB_NAME - RUN_ID_LENGTH - 1

Parse = Callable[[Mapping[str, Any]], StackConfig]


def _parameter_key(key: str) -> str:
    return key_path(("sweep", "parameters", key))


def _stack_keys() -> dict[str, Any]:
    """The top-level keys of a stack file (the model's fields but its internal ones)."""
    return {k: v for k, v in fields_of(StackConfig).items() if k not in INTERNAL_KEYS}


def _is_stack_key(parts: list[str]) -> bool:
    """Whether `parts` names a key of the model (any name inside a mapping such as env)."""
    fields = _stack_keys()
    for depth, part in enumerate(parts):
        info = fields.get(part)
        if info is None:
            return False
        section, keyed = section_of(info.annotation)
        if section is None or keyed:
            # A value, or a mapping of names (env): at most one name may follow.
            mapping = get_origin(info.annotation) is dict
            return depth + 1 == len(parts) or (mapping and depth + 2 == len(parts))
        fields = fields_of(section)
    return False


def _known_keys() -> list[str]:
    keys = []
    for name, info in _stack_keys().items():
        section, _ = section_of(info.annotation)
        keys += [f"{name}.{key}" for key in fields_of(section)] if section else [name]
    return keys


def _may_vary(key: str) -> bool:
    for pattern in TRIAL_KEYS:
        if pattern.endswith(".*"):
            prefix = pattern[:-1]
            if key.startswith(prefix) and key.count(".") == prefix.count("."):
                return True
        elif key == pattern:
            return True
    return False


def key_problems(sweep: SweepConfig) -> Iterator[str]:
    """Each swept key that is not a stack key, or that a trial cannot vary."""
    for key in sweep.parameters:
        where = _parameter_key(key)
        if not _is_stack_key(key.split(".")):
            hint = did_you_mean(key, _known_keys()) or ";"
            yield f"{where}: unknown stack key {key}{hint} {TRIALS_VARY}"
        elif not _may_vary(key):
            yield f"{where}: {SHARED}; {TRIALS_VARY}"


def spec_problems(sweep: SweepConfig) -> Iterator[str]:
    """What each parameter holds must suit the method: grid lists values, random may draw."""
    for key, spec in sweep.parameters.items():
        where = _parameter_key(key)
        ranged = spec.min is not None or spec.max is not None
        if spec.values is not None and ranged:
            yield f"{where}: values, or min and max, not both"
        elif sweep.method == "grid" and spec.values is None:
            yield f"{where}: must list values for method grid (min/max are for method random)"
        elif spec.values is None and (spec.min is None or spec.max is None):
            yield f"{where}: must have values, or both min and max"
        elif ranged and spec.min is not None and spec.max is not None:
            yield from _range_problems(where, spec.min, spec.max, spec.distribution)
    if sweep.method == "grid" and sweep.samples is not None:
        yield f"{key_path(('sweep', 'samples'))}: unset for method grid (it runs every point)"
    if sweep.method == "grid" and sweep.seed:
        yield f"{key_path(('sweep', 'seed'))}: 0 or unset for method grid (nothing is drawn)"


def _range_problems(where: str, low: float, high: float, distribution: str) -> Iterator[str]:
    if low > high:
        yield f"{where}.min = {low}: must be at most max {high}"
    elif distribution == "log_uniform" and low <= 0:
        yield f"{where}.min = {low}: must be > 0 for log_uniform"
    elif distribution == "int_uniform" and math.ceil(low) > math.floor(high):
        yield f"{where}: min {low} and max {high} hold no whole number (int_uniform)"


def run_problems(config: StackConfig, raw: Mapping[str, Any]) -> Iterator[str]:
    if _written(raw, "job", "runId") and config.job.run_id:
        yield (
            f"{PROJECT}:job.runId = {config.job.run_id!r}: must be empty with a sweep: each "
            "trial's run id is derived from what it trains"
        )
    if len(config.job.name) > MAX_SWEEP_JOB_NAME:
        yield (
            f"{PROJECT}:job.name = {config.job.name!r}: must be at most {MAX_SWEEP_JOB_NAME} "
            "characters with a sweep (a trial's replicas are <job>-<run id>-<type>-<index>)"
        )


def with_point(raw: Mapping[str, Any], point: Point) -> dict[str, Any]:
    """The raw stack config with each key of `point` set (`job.env.LR` → raw[job][env][LR])."""
    trial = copy.deepcopy(dict(raw))
    for key, value in point.items():
        *sections, last = key.split(".")
        node = trial
        for part in sections:
            child = node.get(part)
            node[part] = child = dict(child) if isinstance(child, Mapping) else {}
            node = child
        node[last] = value
    return trial


def expand(config: StackConfig, raw: Mapping[str, Any], parse: Parse) -> StackConfig:
    """`config` (a validated sweep stack) with its trials, each validated by `parse`; every
    problem of every point at once, each naming the trial's point."""
    sweep = config.sweep
    assert sweep is not None
    problems = [*key_problems(sweep), *spec_problems(sweep), *run_problems(config, raw)]
    if problems:
        raise ConfigError(problems)
    trials: list[StackConfig] = []
    seen: dict[str, Point] = {}
    for number, point in enumerate(sweep_points(sweep), 1):
        try:
            trial = parse(with_point(raw, point))
        except ConfigError as error:
            where = f"{PROJECT}:sweep trial {number} ({point_text(point)})"
            problems += [f"{where}: {problem}" for problem in error.problems]
            continue
        run_id = trial.job.run_id
        if run_id in seen and sweep.method == "grid":
            problems.append(
                f"{PROJECT}:sweep trial {number} ({point_text(point)}): trains the same as "
                f"({point_text(seen[run_id])}), run {run_id}: a repeated value, or a key the "
                "run id does not depend on"
            )
        elif run_id not in seen:
            seen[run_id] = point
            trials.append(dataclasses.replace(trial, trial_point=point))
    if problems:
        raise ConfigError(problems)
    return replace(config, trials=tuple(trials), cluster=_sweep_cluster(config, trials, raw))


def _written(raw: Mapping[str, Any], *path: str) -> bool:
    """Whether the stack sets `path` itself (a default is not a key someone set)."""
    node: Any = raw
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return node is not None


def at_once(config: StackConfig) -> int:
    """How many trials run at once: `parallel`, or all of them when there are fewer."""
    assert config.sweep is not None
    return min(config.sweep.parallel, len(config.trials))


def on_demand_gpu_replicas(config: StackConfig) -> int:
    return sum(g.number for g in config.replica_groups if g.number and g.gpu_count and not g.spot)


def _sweep_cluster(config: StackConfig, trials: list[StackConfig], raw: Mapping[str, Any]) -> Any:
    """An unset ack gpuPool.maxSize holds `parallel` trials (one node per GPU replica that is
    not spot, the model's rule for one run), so the pool itself caps the trials at once."""
    cluster = config.cluster
    pool = cluster.gpu_pool
    if cluster.kind != "ack" or pool.size or _written(raw, "cluster", "gpuPool", "maxSize"):
        return cluster
    per_trial = max(on_demand_gpu_replicas(trial) for trial in trials)
    parallel = min(config.sweep.parallel if config.sweep else 1, len(trials))
    derived = max(per_trial * parallel, pool.min_size) if per_trial else 0
    return replace(cluster, gpu_pool=replace(pool, max_size=derived))
