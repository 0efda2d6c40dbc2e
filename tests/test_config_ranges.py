"""Boundary tables for the stack keys that take a range (`infra.config.types`, the model's
sections): each end accepted and read back as written, one step past it refused with the key
and what is allowed, and 0 wherever a user may type it. The bounds are written here by hand
from docs/config.md, the Kubernetes API (int32 fields), and the limits the types' messages
promise (never read from the model); test_sweep_bounds.py holds the hyperparameters' and the
sweep's own table."""

from __future__ import annotations

from typing import Any

import pytest

from infra.config import StackConfig, parse_config
from tests.test_sweep_bounds import _problems

IMAGE = "registry.example.com/tftrain/trainer:1"
INT32_MAX = 2**31 - 1  # batch/v1 Job's int32 fields
ACK: dict[str, Any] = {
    "image": IMAGE,
    "cluster": {"kind": "ack", "cpuPool": {"size": 2}},
    "network": {"zoneId": "cn-hangzhou-i"},
}
ASK: dict[str, Any] = {
    "image": IMAGE,
    "cluster": {"kind": "ask"},
    "network": {"zoneId": "cn-hangzhou-i"},
    "storage": {"kind": "nas"},
}
EXISTING: dict[str, Any] = {"image": IMAGE}
# Without a ps the chief may be left out; a batch of 6 splits over 2 or 3 mirrored replicas.
NO_PS: dict[str, Any] = {"image": IMAGE, "ps": {"number": 0}, "hyperparams": {"batchSize": 6}}
# A master instead of the chief: only another trainer than the bundled one names its chief so.
NO_CHIEF: dict[str, Any] = {**NO_PS, "chief": {"number": 0}, "job": {"command": ["./train"]}}
# The chief and 0 or 1000 workers, mirrored: 1 or 1001 replicas share each batch.
MIRRORED: dict[str, Any] = {**NO_PS, "hyperparams": {"batchSize": 1001}}
GPU_ACK: dict[str, Any] = {**ACK, "worker": {"gpuCount": 1}}

# (key path, lowest, highest, a config where the key means something) a user may write.
INTEGER_RANGES = [
    ("job.ttlSecondsAfterFinished", 0, INT32_MAX, EXISTING),
    ("job.activeDeadlineSeconds", 1, INT32_MAX, EXISTING),
    ("job.evaluatorFinishSeconds", 0, 86400, EXISTING),  # docs/config.md: 0 to 86400
    # chief/master/evaluator at most 1 (docs/config.md); chief or master, not both.
    ("chief.number", 0, 1, NO_PS),
    ("master.number", 0, 1, NO_CHIEF),
    ("evaluator.number", 0, 1, EXISTING),
    ("worker.number", 0, 1000, MIRRORED),
    # No ps: 3 mirrored replicas (chief, 2 workers); 1 to 100: each worker alone.
    ("ps.number", 0, 100, {**EXISTING, "hyperparams": {"batchSize": 129}}),
    ("worker.gpuCount", 0, 16, EXISTING),
    ("cluster.gpuPool.size", 0, 1000, GPU_ACK),
    ("cluster.gpuPool.diskSize", 40, 2048, ACK),
    ("cluster.cpuPool.diskSize", 40, 2048, ACK),
    ("cluster.spotGpuPool.maxSize", 0, 1000, ACK),
    ("cluster.imageCacheSize", 20, 2048, ASK),
]


def _set(raw: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """`raw` with the dotted `key` set, every mapping on its path copied."""
    head, _, rest = key.partition(".")
    if not rest:
        return {**raw, head: value}
    return {**raw, head: _set(raw.get(head, {}), rest, value)}


def _read(config: StackConfig, key: str) -> Any:
    value: Any = config
    for part in key.split("."):
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in part)
        value = getattr(value, snake)
    return value


@pytest.mark.parametrize(("key", "low", "high", "base"), INTEGER_RANGES)
def test_every_integer_key_takes_its_ends_and_refuses_one_past(
    key: str, low: int, high: int, base: dict[str, Any]
) -> None:
    for inside in (low, high):
        assert _read(parse_config(_set(base, key, inside)), key) == inside, (key, inside)
        # As `pulumi config set` hands a number over when typed at the top: text.
        assert _read(parse_config(_set(base, key, str(inside))), key) == inside
    for outside in (low - 1, high + 1):
        assert _refused(_problems(_set(base, key, outside)), key, outside, low, high)


def _refused(problems: list[str], key: str, value: int, low: int, high: int) -> bool:
    """A problem naming `key = value` and the range (an optional key's also says `unset`)."""
    return any(
        p.startswith(f"tftrain:{key} = {value}: must be ")
        and p.endswith(f"an integer from {low} to {high}")
        for p in problems
    )


@pytest.mark.parametrize(("key", "low", "high", "base"), INTEGER_RANGES)
def test_zero_is_taken_exactly_where_the_range_starts_at_or_below_it(
    key: str, low: int, high: int, base: dict[str, Any]
) -> None:
    problems = _problems(_set(base, key, 0))
    assert _refused(problems, key, 0, low, high) is (low > 0), problems


@pytest.mark.parametrize(("key", "high"), [("worker.number", 1000), ("job.backoffLimit", 100)])
@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (2.0, None),  # the engine hands numbers inside objects over as floats
        ("2", None),
        (" 2 ", None),
        ("+2", None),
        (2.5, "2.5"),
        (True, "true"),  # YAML's true is no number
        ("true", '"true"'),
        ("010", '"010"'),  # 8 to the engine unquoted, 10 as text: neither is guessed
        (" -0_1 ", '" -0_1 "'),
        ("0", None),
    ],
)
def test_an_integer_is_a_whole_number_not_a_boolean_nor_a_leading_zero(
    key: str, high: int, value: Any, shown: str | None
) -> None:
    problems = _problems(_set(NO_PS, key, value))
    if shown is None:
        assert problems == []
        assert _read(parse_config(_set(NO_PS, key, value)), key) == int(float(value))
    else:
        assert problems == [f"tftrain:{key} = {shown}: must be an integer from 0 to {high}"]


CPU = "a positive Kubernetes quantity of CPU such as 500m, 1 or 2.5 (at most 1024)"
MEMORY = (
    "a positive Kubernetes quantity of memory such as 512Mi or 4Gi (at least 64Mi, at most 32Ti)"
)


# Kubernetes quantities at the ends the messages promise: CPU from 1m (the API's smallest
# unit) to 1024 cores; memory from 64Mi to 32Ti, in any of the binary or decimal suffixes.
@pytest.mark.parametrize(
    ("key", "value", "taken"),
    [
        ("worker.cpu", "1m", True),
        ("worker.cpu", "0.001", True),
        ("worker.cpu", "0.5m", False),
        ("worker.cpu", "0", False),
        ("worker.cpu", "0m", False),
        ("worker.cpu", "1024", True),
        ("worker.cpu", "1024000m", True),
        ("worker.cpu", "1024.5", False),
        ("worker.cpu", "1024001m", False),
        ("worker.cpu", "1k", False),  # a suffix of bytes, not of cores
        ("worker.cpu", "2Gi", False),
        ("worker.cpu", "-1", False),
        ("worker.memory", "64Mi", True),
        ("worker.memory", "67108864", True),  # 64Mi in bytes
        ("worker.memory", "67108863", False),
        ("worker.memory", "63Mi", False),
        ("worker.memory", "0", False),
        ("worker.memory", "32Ti", True),
        ("worker.memory", "32768Gi", True),
        ("worker.memory", "32769Gi", False),
        ("worker.memory", "33Ti", False),
        ("worker.memory", "1Pi", False),
        ("worker.memory", "0.0625Gi", True),  # 64Mi
        ("worker.memory", "68M", True),  # 68,000,000 bytes: above 64Mi (67,108,864)
        ("worker.memory", "67M", False),
        ("worker.memory", "65536Ki", True),
        ("worker.memory", "1E", False),
        ("worker.memory", "500m", False),  # millibytes: not a memory
        ("worker.memory", "4gi", False),  # suffixes are case-sensitive
        ("tensorboard.cpu", "1025", False),
        ("tensorboard.memory", "63Mi", False),
        ("ps.memory", "32Ti", True),
    ],
)
def test_cpu_and_memory_take_the_quantities_between_their_ends(
    key: str, value: str, taken: bool
) -> None:
    allowed = CPU if key.endswith("cpu") else MEMORY
    problem = f'tftrain:{key} = "{value}": must be {allowed}'
    problems = _problems(_set(EXISTING, key, value))
    if taken:
        assert problem not in problems
        assert not any(p.startswith(f"tftrain:{key} ") for p in problems), problems
    else:
        assert problem in problems, problems


@pytest.mark.parametrize(("value", "text"), [(2, "2"), (2.0, "2"), (0.5, "0.5"), (1024, "1024")])
def test_a_cpu_written_as_a_number_reads_as_kubernetes_writes_it(value: float, text: str) -> None:
    assert parse_config(_set(EXISTING, "worker.cpu", value)).worker.cpu == text


@pytest.mark.parametrize(
    ("value", "taken"),
    [(1e-9, True), (0.003, True), (9.999, True), (0, False), (-0.1, False), (10, False),
     (10.5, False), ("nan", False), ("inf", False), (True, False)],
)  # fmt: skip
def test_the_learning_rate_is_above_0_and_below_10(value: Any, taken: bool) -> None:
    problems = _problems(_set(EXISTING, "hyperparams.learningRate", value))
    refused = [p for p in problems if p.startswith("tftrain:hyperparams.learningRate = ")]
    assert (refused == []) is taken, problems
    if taken:
        read = parse_config(_set(EXISTING, "hyperparams.learningRate", value))
        assert read.hyperparams.learning_rate == value


@pytest.mark.parametrize(
    ("key", "value", "taken"),
    [
        # docs/config.md: a job name is a Service name's start (RFC 1035), at most 49
        # characters (63 less "-evaluator-999", the longest replica suffix).
        ("job.name", "a" * 49, True),
        ("job.name", "a" * 50, False),
        ("job.name", "a", True),
        ("job.name", "", False),
        # RFC 1123 labels: 63 characters.
        ("job.namespace", "n" * 63, True),
        ("job.namespace", "n" * 64, False),
        ("job.runId", "r" * 63, True),
        ("job.runId", "r" * 64, False),
        ("cluster.name", "c" * 63, True),
        ("cluster.name", "c" * 64, False),
        # OSS bucket names: 3 to 63 characters.
        ("data.bucket", "abc", True),
        ("data.bucket", "ab", False),
        ("data.bucket", "b" * 63, True),
        ("data.bucket", "b" * 64, False),
        # RAM role names: 1 to 64 characters.
        ("data.rrsaRoleName", "R" * 64, True),
        ("data.rrsaRoleName", "R" * 65, False),
        # A NAS file system id is ten characters.
        ("storage.fileSystemId", "31a8e48eda", True),
        ("storage.fileSystemId", "31a8e48ed", False),
        ("storage.fileSystemId", "31a8e48edaa", False),
    ],
)
def test_names_take_their_longest_and_refuse_one_more(key: str, value: str, taken: bool) -> None:
    base = ACK if key.startswith("storage.") else EXISTING  # a NAS file system: not hostPath
    problems = _problems(_set(base, key, value))
    refused = [p for p in problems if p.startswith(f'tftrain:{key} = "{value}": must be ')]
    assert (refused == []) is taken, problems


@pytest.mark.parametrize(
    ("value", "taken"),
    [("a/" + "p" * 1020 + "/", True), ("a/" + "p" * 1021 + "/", False), ("", True), ("/", False)],
)
def test_an_object_prefix_is_at_most_1023_characters(value: str, taken: bool) -> None:
    # OSS object names are at most 1023 bytes (OSS naming rules).
    problems = _problems(_set(EXISTING, "data.inputPrefix", value))
    refused = [p for p in problems if p.startswith("tftrain:data.inputPrefix = ")]
    assert (refused == []) is taken, problems


@pytest.mark.parametrize(
    ("key", "value", "taken"),
    [
        ("budget.maxCnyPerHour", 0.01, True),
        ("budget.maxCnyPerHour", 0, False),
        ("budget.maxCnyPerHour", -1, False),
        ("budget.maxCnyPerSweep", 0, False),
        ("budget.maxCnyPerSweep", True, False),
    ],
)
def test_a_budget_is_an_amount_above_0(key: str, value: Any, taken: bool) -> None:
    problems = _problems(_set(ACK, key, value))
    refused = [p for p in problems if p.startswith(f"tftrain:{key} = ")]
    assert (refused == []) is taken, problems
