"""Property tests of the stack config: any YAML a user can write gets a clear answer.

- Random YAML text, random documents and random mutations of every stack in `stacks/` either
  load, or raise ConfigError whose every problem names a `tftrain:` key or a file and line;
  never another exception.
- A mutated stack the model accepts runs the whole program under mocks, and every Kubernetes
  object it registers passes `kubernetes-validate` strict and the API server's name, label and
  int32 rules; one it refuses makes the program fail with the same problems, registering
  nothing.
- A key that is not a string (integer, boolean, null, float), put at any level of a stack file
  from beside `config:` down to the deepest mapping, is refused by the reader with its line;
  handed to the program (a top-level key as is, a nested one as the engine's JSON text), it
  is refused by name before anything registers, or, nested where any name is valid (a
  label), accepted: never a traceback.
- Equivalent spellings of a stack (20.0 for 20, "true" for true, defaults written out, key
  order, the stack's image written per group) give an equal config, so an equal run id.

The default run draws a few hundred examples; `-m slow` draws thousands.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pulumi
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from infra import mock_deploy
from infra.config import (
    INTERNAL_KEYS,
    ConfigError,
    StackConfig,
    load_stack_file,
    parse_config,
    read_stack_file,
)
from infra.config.roles import misplaced_keys
from infra.config.schema import stack_file_schema
from infra.config.stack_file import engine_config, program_value
from infra.manifests.image_cache import KIND as IMAGE_CACHE_KIND
from tests.image_cache_schema import IMAGE_CACHE_SCHEMA
from tests.pulumi_mocks import STACKS_DIR, all_stacks, run_program
from tests.test_manifests_schema import schema_version

STACKS = {stack: read_stack_file(STACKS_DIR / f"Pulumi.{stack}.yaml") for stack in all_stacks()}
FILES = {stack: (STACKS_DIR / f"Pulumi.{stack}.yaml").read_text() for stack in STACKS}
_LOCATED = re.compile(r"^(tftrain:\S+|\S+\.yaml:\d+: |--set )")

# The keys a sweep the cluster cannot hold back is refused on (docs/config.md "Sweeps").
SWEEP_PLATFORM_KEYS = (
    "tftrain:sweep.parallel = ",
    "tftrain:cluster.gpuPool.maxSize = ",
    "tftrain:cluster.gpuPool.instanceTypes: ",
    "tftrain:job.gangScheduling = false: ",
)


# Under CI (`CI` set) every run draws the same examples, seeded from each test, so whether a
# submission lands never depends on the draw; developers' runs draw new examples and keep
# any that fail in .hypothesis/ for the next run.
_SAME_DRAW_EVERY_RUN = bool(os.environ.get("CI"))


def _twins(fast: int, slow: int, **strategies: Any) -> Callable[[Callable[..., None]], Any]:
    """A property as two tests: `fast` examples in the default run, `slow` under -m slow."""
    checks = [HealthCheck.too_slow, HealthCheck.filter_too_much]

    def make(check: Callable[..., None]) -> tuple[Any, Any]:
        def test(examples: int) -> Any:
            tuned = settings(
                max_examples=examples,
                deadline=None,
                suppress_health_check=checks,
                derandomize=_SAME_DRAW_EVERY_RUN,
            )
            return tuned(given(**strategies)(check))

        return test(fast), pytest.mark.slow(test(slow))

    return make


# ---- what a user might type ---------------------------------------------------------------

VALUES_LIST = (
    ["", " ", "1mnist", "mnist", "a" * 64, "kube-system", "default", "//tmp", "/data/../tmp",
     "/tmp", "/data", "/", "100m", "1.5Gi", "4Gi", "500m", "2", "2.5", "0", "fd00::/8",
     "10.0.0.0/8", "192.168.0.0/16", "10.0.0.1/8", "true", "false", "yes", "on", "2024-01-15",
     "1:30", "010", "0x1F", "ecs.g7.xlarge", " ecs.g7.xlarge", "cn-hangzhou-i", "zone a",
     "registry.example.com/x:1", "bad image", "UPPER/case", "python", "auto",
     "parameter_server", "multi_worker_mirrored", "single", "ack", "ask", "existing", "nas",
     "nfs", "hostPath", "LoadBalancer", "ClusterIP", "OnFailure", "Always", "vpc-abc",
     "vsw-abc", "1.31.1-aliyun.1", "ecs.gn6i-c4g1.xlarge", "5Gi", "0Gi", "ümlaut", "a\tb",
     "j" * 49, "j" * 50, "n" * 63, "example.com/team", "r" * 63 + "-1", "a-b.c_d"]
)  # fmt: skip
VALUES = st.sampled_from(VALUES_LIST)
NUMBERS = st.one_of(
    st.sampled_from([0, 1, 2, 3, 4, 5, 8, 16, 17, 63, 64, 128, 1000, 1001, 2**31, -1]),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 1.0, 2.0, 2.5, 0.001, 1e-9, 10.0, 100.0]),
)
KEY_TEXT = st.text(max_size=12)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, VALUES, st.text(max_size=70))
ANY_VALUE = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEY_TEXT, inner, max_size=4),
    max_leaves=12,
)


def _model_keys(section: type, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every key path of the model, as typed: ("cluster", "gpuPool", "size"), ..."""
    paths = []
    for name, info in section.__pydantic_fields__.items():  # type: ignore[attr-defined]
        if (info.alias or name) in INTERNAL_KEYS:
            continue  # what the model holds for a sweep's trials, never a key of a file
        path = (*prefix, info.alias or name)
        paths.append(path)
        if dataclasses.is_dataclass(info.annotation):
            paths += _model_keys(info.annotation, path)  # type: ignore[arg-type]
    return paths


KEYS = _model_keys(StackConfig)
SCHEMA = stack_file_schema()
# Existing VPCs and vSwitches are looked up in the cloud, which the fake cloud cannot answer
# for ids it has not seen (tests/test_cloud_components.py covers those lookups).
TYPED_KEYS = [key for key in KEYS if key not in (("network", "vpcId"), ("network", "vswitchId"))]


def _from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values a key's JSON Schema allows: the model's own per-key rules, so a mutation made of
    them is refused, if at all, by a rule between keys, and otherwise must deploy."""
    if "$ref" in schema:
        return _from_schema(SCHEMA["$defs"][schema["$ref"].rpartition("/")[2]])
    if "anyOf" in schema or "enum" in schema or "const" in schema:
        options = [_from_schema(option) for option in schema.get("anyOf", [])]
        return st.one_of(*options, st.sampled_from(schema.get("enum", [schema.get("const")])))
    kind = schema.get("type")
    if kind == "integer":
        return st.integers(schema.get("minimum"), schema.get("maximum"))
    if kind == "number":
        low, high = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
        bounded = {"exclude_min": low is not None, "exclude_max": high is not None}
        return st.floats(low, high, allow_nan=False, allow_infinity=False, **bounded)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(
            _from_schema(schema["items"]), min_size=schema.get("minItems", 0), max_size=3
        )
    if kind == "object" and "properties" in schema:
        return st.just({})
    if kind == "object":
        return st.dictionaries(
            st.sampled_from(VALUES_LIST), st.sampled_from(VALUES_LIST), min_size=1, max_size=2
        )
    if "pattern" in schema:
        longest = schema.get("maxLength", 1000)
        return st.from_regex(schema["pattern"], fullmatch=True).filter(lambda v: len(v) <= longest)
    return VALUES


# Keys whose value multiplies the objects a stack makes (replicas per group, a random sweep's
# trials): drawn up to this many, so one example stays a second of work and the default run
# stays in its budget; the objects of a replica or a trial are alike whatever their count.
_MULTIPLIERS = {"number", "samples"}
_MOST_COPIES = 32


def _typed_value(path: tuple[str, ...]) -> st.SearchStrategy[Any]:
    schema = _key_schema(path)
    if path[-1] not in _MULTIPLIERS:
        return _from_schema(schema)
    options = schema.get("anyOf", [schema])  # samples: an integer, or unset
    return st.one_of(
        *(
            st.integers(option["minimum"], min(option["maximum"], _MOST_COPIES))
            if option.get("type") == "integer"
            else _from_schema(option)
            for option in options
        )
    )


def _key_schema(path: tuple[str, ...]) -> dict[str, Any]:
    schema = SCHEMA["properties"]["config"]["properties"][f"tftrain:{path[0]}"]
    for part in path[1:]:
        while "$ref" in schema:
            schema = SCHEMA["$defs"][schema["$ref"].rpartition("/")[2]]
        schema = schema["properties"][part]
    return schema


def _set(config: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = config
    for part in path[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[path[-1]] = value


def _existing(config: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    paths: list[tuple[Any, ...]] = []
    items = config.items() if isinstance(config, dict) else enumerate(config)
    for key, value in items:
        paths.append((*prefix, key))
        if isinstance(value, dict | list):
            paths += _existing(value, (*prefix, key))
    return paths


def _misspell(name: str, draw: Any) -> str:
    i = draw(st.integers(0, max(len(name) - 1, 0)))
    return draw(st.sampled_from([name.lower(), name.upper(), name[:i] + name[i + 1 :], name + "s",
                                 name[:i] + name[i:i + 2][::-1] + name[i + 2:]]))  # fmt: skip


@st.composite
def mutated_stacks(draw: Any, typed: bool = False) -> tuple[str, dict[str, Any]]:
    """A stack of stacks/ (prefix-less `tftrain:` config) after 1-3 random edits; `typed`
    edits set keys the model knows to values their own type allows, or delete keys."""
    stack = draw(st.sampled_from(sorted(STACKS)))
    config = copy.deepcopy(STACKS[stack])
    for _ in range(draw(st.integers(1, 3))):
        existing = _existing(config)
        edits = (
            ["set", "set", "delete"] if typed else ["set", "set", "replace", "delete", "misspell"]
        )
        edit = draw(st.sampled_from(edits))
        if edit == "set" or not existing:
            path = draw(st.sampled_from(TYPED_KEYS if typed else KEYS))
            _set(config, path, draw(_typed_value(path) if typed else ANY_VALUE))
            continue
        path = draw(st.sampled_from(existing))
        parent = config
        for part in path[:-1]:
            parent = parent[part]
        if edit == "replace":
            parent[path[-1]] = draw(ANY_VALUE)
        elif edit == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[_misspell(path[-1], draw)] = parent.pop(path[-1])
    return stack, config


def _dump(document: Any) -> str:
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    text = StringIO()
    yaml.dump(document, text)
    return text.getvalue()


def _stack_text(config: dict[str, Any]) -> str:
    return _dump({"config": {f"tftrain:{key}": value for key, value in config.items()}})


NOISE = ":-[]{},&*!#|>'\"?\n\t ab1\x00~"
SPLICES = ["\n", "  ", "\t", ":", "- ", "&a ", "*a", "!!python/name:os.system ", "<<: ",
           "---\n", "? ", "{", "]", "'", "\x00", "1: x\n", "%YAML 1.1\n", "tftrian", "010",
           "yes", "~"]  # fmt: skip


@st.composite
def yaml_texts(draw: Any) -> str:
    """Random text near a stack file: a random document, or a stack with bytes spliced in."""
    kind = draw(st.sampled_from(["document", "spliced", "noise"]))
    if kind == "document":
        keys = st.sampled_from(["tftrain:job", "tftrain:worker", "tftrain:image", "tftrain:x",
                                "alicloud:region", "tftrian:worker", "worker", "x:y"])  # fmt: skip
        config = draw(st.dictionaries(keys, ANY_VALUE, max_size=4) | ANY_VALUE)
        top = draw(st.sampled_from(["config", "config", "confg", "secretsprovider"]))
        return _dump({top: config})
    if kind == "noise":
        return draw(st.text(alphabet=st.sampled_from(list(NOISE)), max_size=200))
    text = FILES[draw(st.sampled_from(sorted(FILES)))]
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 8))
        piece = draw(st.sampled_from(SPLICES) | st.text(max_size=5))
        text = text[:at] + piece + text[at + cut :]
    return text


# ---- what must hold -------------------------------------------------------------------------


def _load(text: str, directory: Path) -> StackConfig | ConfigError:
    path = directory / "Pulumi.prop.yaml"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        return load_stack_file(path)
    except ConfigError as error:
        assert error.problems
        for problem in error.problems:
            located = _LOCATED.match(problem.replace(str(directory) + "/", ""))
            assert located, f"a problem without a key or line: {problem!r}"
        return error


_DNS_1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


def api_server_problems(obj: dict[str, Any]) -> list[str]:
    """What the API server checks beyond the OpenAPI schema: names, labels, int32 fields."""
    problems = []
    meta = obj["metadata"]
    name = meta["name"]
    label_name = obj["kind"] in ("Namespace", "Service")
    pattern = _DNS_1035_LABEL if obj["kind"] == "Service" else _DNS_1123_LABEL
    if label_name and not (len(name) <= 63 and pattern.match(name)):
        problems.append(f"{obj['kind']} name {name!r}")
    if not label_name and not (len(name) <= 253 and _SUBDOMAIN.match(name)):
        problems.append(f"{obj['kind']} name {name!r}")
    namespace = meta.get("namespace", "ok")
    if not (len(namespace) <= 63 and _DNS_1123_LABEL.match(namespace)):
        problems.append(f"namespace {namespace!r}")
    for key, value in meta.get("labels", {}).items():
        if len(key.rpartition("/")[2]) > 63 or len(value) > 63 or not _LABEL.match(value or "x"):
            problems.append(f"label {key}={value!r}")

    def ints(node: Any, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                ints(value, f"{path}.{key}")
        elif isinstance(node, list):
            for value in node:
                ints(value, path)
        elif isinstance(node, int) and not isinstance(node, bool) and not -(2**31) <= node < 2**31:
            problems.append(f"{path} = {node} is past int32")

    ints(obj.get("spec", {}), "spec")
    return problems


def _check_loads_or_says_where(text: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    _load(text, tmp_path_factory.getbasetemp())


def _check_mutation_loads_or_says_where(
    mutated: tuple[str, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    _load(_stack_text(mutated[1]), tmp_path_factory.getbasetemp())


def _engine_view(config: dict[str, Any]) -> dict[str, Any]:
    """What the engine hands the program: scalars as text, structured values as JSON text."""
    return {key[len("tftrain:") :]: program_value(v) for key, v in engine_config(config).items()}


def _check_refused_stacks_register_nothing(mutated: tuple[str, dict[str, Any]]) -> None:
    config = _engine_view(mutated[1])
    try:
        parse_config(config)
    except ConfigError as error:
        run = run_program(config, raise_errors=False)
        assert run.error is not None and str(error) in str(run.error)
        assert run.resources == []
    else:
        assume(False)


def _check_accepted_stacks_deploy_valid_objects(mutated: tuple[str, dict[str, Any]]) -> None:
    config = _engine_view(mutated[1])
    try:
        stack = parse_config(config)
    except ConfigError:
        assume(False)
        return
    # The stack file's provider config goes along, as the engine hands it over.
    run = run_program({**config, "alicloud:region": "cn-hangzhou"}, raise_errors=False)
    if "ACK does not offer it" in str(run.error):
        # A version of valid form that the cloud's list lacks (the mocks offer three): the
        # program refuses it at deploy time, before registering anything.
        assert str(run.error).startswith("tftrain:cluster.kubernetesVersion = ")
        assert run.resources == []
        assume(False)
    # "X is not on sale in …", or "none of X, Y is on sale in …" for a pool of several types.
    if " on sale in tftrain:network.zoneId" in str(run.error) or "NAS offers no" in str(run.error):
        # A type of valid form the fake cloud's zones do not sell: refused at deploy time by
        # the stock lookup (infra/cloud/zone_offers.py), before registering anything.
        assert run.resources == []
        assume(False)
    if "\n  - tftrain:budget." in str(run.error):
        # A budget the priced stack exceeds, or cannot be held to (an unpriced item): refused
        # by the program before anything registers (infra/pricing/budget.py).
        assert run.resources == []
        assume(False)
    platform_refusals = (
        "tftrain:cluster.platformStack = ", "tftrain:cluster.kind = ", "tftrain:job.namespace = ",
        "tftrain:data.bucket = ", "tftrain:data.inputPrefix = ", "tftrain:data.exportPrefix = ",
    )  # fmt: skip
    if str(run.error).startswith(platform_refusals):
        # A run stack on a platform that is not there, of another kind, that issued no
        # credentials for its namespace, or whose issued volumes mount another bucket or
        # prefix than the run names: refused at deploy time, once the platform's outputs
        # are read, before any object is registered.
        assert [r.type for r in run.resources] == ["pulumi:pulumi:StackReference"]
        assume(False)
    # The program states config problems as the parser does: one "  - " line each.
    if str(run.error).removeprefix("invalid stack config:\n  - ").startswith(SWEEP_PLATFORM_KEYS):
        # A sweep whose `parallel` the cluster cannot hold back (docs/config.md "Sweeps"):
        # refused by the program (the local launcher runs it), before registering anything.
        assert stack.sweep is not None and stack.trials, run.error
        assert run.resources == []
        assume(False)
    assert run.error is None, run.error
    single = stack.has_run and not stack.trials  # a sweep tells each trial's id instead
    assert run.outputs.get("runId") == (stack.job.run_id if single else None)
    assert sorted(run.outputs.get("trials", {})) == sorted(t.job.run_id for t in stack.trials)
    version = schema_version(stack)
    for obj in run.kube_objects():
        if obj["kind"] == IMAGE_CACHE_KIND:
            jsonschema.validate(obj, IMAGE_CACHE_SCHEMA)
        else:
            kubernetes_validate.validate(obj, version, strict=True)
        assert api_server_problems(obj) == []


def _respell(value: Any, draw: Any) -> Any:
    """An equivalent spelling: numbers as floats or strings (as Pulumi passes them), booleans
    as strings, nested values respelt, mapping order shuffled."""
    if isinstance(value, bool):
        return draw(st.sampled_from([value, str(value).lower()]))
    if isinstance(value, int):
        return draw(st.sampled_from([value, float(value), str(value)]))
    if isinstance(value, dict):
        keys = draw(st.permutations(list(value)))
        return {key: _respell(value[key], draw) for key in keys}
    if isinstance(value, list):
        return [_respell(item, draw) for item in value]
    return value


@st.composite
def respelt_stacks(draw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """A stack and an equivalent spelling: respelt values, defaults written out (the value the
    model resolved), `~` for keys left out, the stack's image written per group."""
    stack = draw(st.sampled_from(sorted(STACKS)))
    original = STACKS[stack]
    parsed = parse_config(original)
    config = _respell(copy.deepcopy(original), draw)
    for path in draw(st.lists(st.sampled_from(KEYS), max_size=6)):
        if path in (("job", "runId"), ("image",)) or len(path) < 2:
            continue
        node: Any = parsed
        for part in path:
            node = getattr(node, _snake(part))
        if dataclasses.is_dataclass(node) or _has(config, path):
            continue
        written = list(node) if isinstance(node, tuple) else node
        spelt = copy.deepcopy(config)
        _set(spelt, path, written)
        if next(misplaced_keys(spelt), None):
            continue  # a key of the other role: refused, even with its default value
        _set(config, path, draw(st.sampled_from([written, None])))
    return original, config


def _snake(name: str) -> str:
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def _has(config: dict[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = config
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _check_equivalent_spellings_are_one_run(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    original, respelt = pair
    assert parse_config(respelt) == parse_config(original)


# ---- keys that are not strings, at every level -----------------------------------------------

# YAML keys a user can write that are not strings: integers, booleans, null, floats; and, as
# strings, dotted paths typed as one key.
ODD_KEYS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["worker.number", "tftrain:worker.number", "1"]),
)


OddCase = tuple[dict[str, Any], tuple[Any, ...], Any]  # document, where the key is, the key


@st.composite
def stacks_with_odd_keys(draw: Any) -> OddCase:
    """A stack file (as a document) with one odd key put at a random level: beside `config:`,
    as a config entry, or inside any mapping of any entry, however deep."""
    stack = draw(st.sampled_from(sorted(STACKS)))
    document = {"config": {f"tftrain:{k}": v for k, v in copy.deepcopy(STACKS[stack]).items()}}
    mappings = [p for p in _existing(document) if isinstance(_at(document, p), dict)]
    place = draw(st.sampled_from([(), *mappings]))
    key = draw(ODD_KEYS)
    _at(document, place)[key] = draw(ANY_VALUE)
    return document, place, key


def _at(node: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        node = node[part]
    return node


def _check_odd_keys_are_refused_by_line(
    case: OddCase, tmp_path_factory: pytest.TempPathFactory
) -> None:
    document, _, key = case
    outcome = _load(_dump(document), tmp_path_factory.getbasetemp())
    if not isinstance(key, str):
        # The engine refuses such a file too (yaml.v3 gives map[any]any; pulumi's
        # SimplifyMarshalledValue: "expected only string keys").
        assert isinstance(outcome, ConfigError)
        assert any("is not a string" in problem for problem in outcome.problems)


def _check_the_program_answers_odd_keys(case: OddCase) -> None:
    document, place, key = case
    assume(place[:1] == ("config",))  # beside `config:` is the file's business, not the program's
    entries = document["config"]
    # A non-string key among the entries: the harness hands config over as the language host
    # does, as a JSON object (PULUMI_CONFIG), so it arrives as its JSON text, as it does
    # deeper; the program's own path must still refuse it by that name.
    odd = {key: entries.pop(key)} if place == ("config",) and not isinstance(key, str) else {}
    try:
        config = {**engine_config(entries), **odd}
    except ValueError:
        assume(False)  # .inf or .nan: the engine cannot hand it over (the reader refuses it)
        return
    run = mock_deploy.run_program(config, stack="prop", raise_errors=False)
    if run.error is None:
        return  # a nested key that is a valid name where it stands (a label, an env name)
    assert isinstance(run.error, pulumi.RunError), repr(run.error)
    if str(run.error).startswith("tftrain:cluster.platformStack = "):
        # The key was accepted; a run stack's platform is not there to read in this offline
        # run, which refuses it having made only that read.
        assert [r.type for r in run.resources] == [mock_deploy.STACK_REFERENCE]
        return
    assert run.resources == []
    problems = str(run.error).split("\n  - ")[1:]
    assert problems
    for problem in problems:
        assert _LOCATED.match(problem) or problem.startswith(json.dumps(key)), problem


test_random_yaml_loads_or_says_where, test_random_yaml_loads_or_says_where_slow = _twins(
    100, 5000, text=yaml_texts()
)(_check_loads_or_says_where)
test_mutated_stacks_load_or_say_where, test_mutated_stacks_load_or_say_where_slow = _twins(
    100, 5000, mutated=mutated_stacks()
)(_check_mutation_loads_or_says_where)
test_refused_stacks_register_nothing, test_refused_stacks_register_nothing_slow = _twins(
    10, 500, mutated=mutated_stacks(typed=True)
)(_check_refused_stacks_register_nothing)
test_accepted_stacks_deploy_valid_objects, test_accepted_stacks_deploy_valid_objects_slow = _twins(
    10, 500, mutated=mutated_stacks(typed=True)
)(_check_accepted_stacks_deploy_valid_objects)
test_equivalent_spellings_are_one_run, test_equivalent_spellings_are_one_run_slow = _twins(
    100, 3000, pair=respelt_stacks()
)(_check_equivalent_spellings_are_one_run)


def test_the_api_server_rules_are_not_vacuous() -> None:
    service = {"kind": "Service", "metadata": {"name": "1mnist", "namespace": "a" * 64}}
    job = {"kind": "Job", "metadata": {"name": "x", "labels": {"a": "b" * 64}},
           "spec": {"ttlSecondsAfterFinished": 2**31}}  # fmt: skip
    assert len(api_server_problems(service)) == 2
    assert len(api_server_problems(job)) == 2


test_odd_keys_are_refused_by_line, test_odd_keys_are_refused_by_line_slow = _twins(
    50, 3000, case=stacks_with_odd_keys()
)(_check_odd_keys_are_refused_by_line)
test_the_program_answers_odd_keys, test_the_program_answers_odd_keys_slow = _twins(
    15, 400, case=stacks_with_odd_keys()
)(_check_the_program_answers_odd_keys)
