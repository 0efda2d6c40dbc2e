"""The input pipeline (trainer.distribution.training_batches) on a tiny IDX set written here,
and the one-process executor: what a user's `maxSteps`, `trainExamples` and batch size mean
for the batches, worked by hand. The distributed executors: the @slow multi-process tests."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
import tensorflow as tf

from trainer import distribution
from trainer.distribution import LocalExecutor, make_executor, training_batches
from trainer.plan import Plan, Role
from trainer.settings import parse_settings
from trainer.tf_config import parse_tf_config


def idx(shape: tuple[int, ...], data: bytes) -> bytes:
    return bytes((0, 0, 8, len(shape))) + b"".join(n.to_bytes(4, "big") for n in shape) + data


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """5 examples: image i is all pixels i, label i."""
    n = 5
    (tmp_path / "train-images-idx3-ubyte.gz").write_bytes(
        gzip.compress(idx((n, 28, 28), b"".join(bytes([i]) * 784 for i in range(n))))
    )
    (tmp_path / "train-labels-idx1-ubyte.gz").write_bytes(gzip.compress(idx((n,), bytes(range(n)))))
    return tmp_path


def take(dataset: tf.data.Dataset, batches: int) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(images.numpy(), labels.numpy()) for images, labels in dataset.take(batches)]


def test_batches_are_full_and_each_epoch_holds_every_example_once(data_dir: Path) -> None:
    # 5 examples at batch 2: batches run across epochs, so 5 batches are exactly 2 epochs.
    batches = take(training_batches(data_dir, 5, 2, seed=1), 5)
    assert [images.shape for images, _ in batches] == [(2, 28, 28, 1)] * 5
    labels = [int(label) for _, batch in batches for label in batch]
    assert sorted(labels[:5]) == [0, 1, 2, 3, 4] and sorted(labels[5:]) == [0, 1, 2, 3, 4]
    for images, batch_labels in batches:  # each image stays with its label
        assert [int(image.max()) for image in images] == batch_labels.tolist()


def test_only_the_first_examples_are_used(data_dir: Path) -> None:
    labels = Counter(
        int(x) for _, batch in take(training_batches(data_dir, 3, 3, 1), 4) for x in batch
    )
    assert labels == {0: 4, 1: 4, 2: 4}


def test_each_shard_reads_its_own_examples(data_dir: Path) -> None:
    # tf.data's shard(2, 1): elements 1 and 3 of the 5.
    second = take(training_batches(data_dir, 5, 2, seed=1, shard=1, shards=2), 3)
    assert {int(x) for _, batch in second for x in batch} == {1, 3}
    first = take(training_batches(data_dir, 5, 3, seed=1, shard=0, shards=2), 2)
    assert Counter(int(x) for _, batch in first for x in batch) == {0: 2, 2: 2, 4: 2}


def test_the_same_seed_gives_the_same_order(data_dir: Path) -> None:
    one = [b.tolist() for _, b in take(training_batches(data_dir, 5, 5, seed=7), 3)]
    two = [b.tolist() for _, b in take(training_batches(data_dir, 5, 5, seed=7), 3)]
    assert one == two


def test_one_process_trains_in_this_process_and_hears_only_itself(data_dir: Path) -> None:
    settings = parse_settings([f"--data-dir={data_dir}", "--batch-size=2"], {})
    strategy = tf.distribute.get_strategy()
    calls: list[tuple[object, int]] = []

    def train_steps(iterator: object, steps: tf.Tensor) -> tuple[float, float]:
        images, labels = next(iterator)  # type: ignore[call-overload]
        assert images.shape == (2, 28, 28, 1)
        calls.append((labels.shape, int(steps)))
        return 0.25 * int(steps), 0.5 * int(steps)

    executor = make_executor(
        Plan("single", Role.TRAINER, True), None, strategy, train_steps, settings, 5
    )
    assert isinstance(executor, LocalExecutor) and executor.queue_steps == 0
    handles = [executor.run(3), executor.run(1)]
    assert calls == [((2,), 3), ((2,), 1)]
    assert executor.fetch(handles) == [(0.75, 1.5), (0.25, 0.5)]
    executor.join()
    assert (executor.any_replica(True), executor.any_replica(False)) == (True, False)


def test_a_parameter_server_chief_schedules_with_its_settings_on_every_worker(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chief's executor gets the run's data, batch and steps per closure, and how many
    workers take closures (the queue it keeps: one closure per worker)."""
    made: list[tuple[object, ...]] = []

    class Coordinator:
        def __init__(self, *args: object, **kwargs: object) -> None:
            made.append((*args, kwargs))

    monkeypatch.setattr(distribution, "CoordinatorExecutor", Coordinator)
    settings = parse_settings(
        [f"--data-dir={data_dir}", "--batch-size=6", "--steps-per-execution=7"], {}
    )
    config = parse_tf_config(
        '{"cluster": {"chief": ["c:1"], "worker": ["w0:1", "w1:1", "w2:1"], "ps": ["p:1"]}, '
        '"task": {"type": "chief", "index": 0}}'
    )
    strategy, steps = object(), object()
    chief = Plan("parameter_server", Role.COORDINATOR, True)
    executor = make_executor(chief, config, strategy, steps, settings, 5)  # type: ignore[arg-type]
    assert isinstance(executor, Coordinator)
    assert made == [(strategy, steps, data_dir, 5, 6, 7, {"num_workers": 3})]


class StandInCoordinator:
    """tf.distribute.coordinator.ClusterCoordinator without a cluster: it runs each
    scheduled closure at once, in this process, on the per-worker dataset's iterator."""

    made: ClassVar[list[StandInCoordinator]] = []

    def __init__(self, strategy: object) -> None:
        self.strategy, self.log = strategy, []  # type: ignore[var-annotated]
        StandInCoordinator.made.append(self)

    def create_per_worker_dataset(self, dataset_fn: Any) -> Any:
        return dataset_fn()

    def schedule(self, fn: Any, args: tuple[Any, ...]) -> Any:
        self.log.append(("schedule", int(args[1])))
        return fn(*args)

    def fetch(self, handles: list[Any]) -> list[Any]:
        self.log.append(("fetch", len(handles)))
        return handles

    def join(self) -> None:
        self.log.append(("join",))


def test_the_ps_chief_s_executor_schedules_fused_steps_and_fetches_their_sums(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tf.distribute.coordinator, "ClusterCoordinator", StandInCoordinator)
    StandInCoordinator.made = []
    seen: list[tuple[list[int], int]] = []

    def train_steps(iterator: Any, steps: tf.Tensor) -> tuple[float, float]:
        images, labels = next(iterator)
        assert images.shape == (2, 28, 28, 1)
        seen.append((sorted(labels.numpy().tolist()), int(steps)))
        return 0.25 * int(steps), 0.5 * int(steps)

    strategy = object()
    executor = distribution.CoordinatorExecutor(
        strategy,  # type: ignore[arg-type]
        train_steps, data_dir, examples=4, batch_size=2, steps_per_execution=7, num_workers=3,
    )  # fmt: skip
    (coordinator,) = StandInCoordinator.made
    assert coordinator.strategy is strategy
    assert executor.queue_steps == 21  # one closure of 7 steps queued per worker
    handles = [executor.run(3), executor.run(1)]
    assert executor.fetch(handles) == [(0.75, 1.5), (0.25, 0.5)]
    executor.join()
    assert coordinator.log == [("schedule", 3), ("schedule", 1), ("fetch", 2), ("join",)]
    # Batches of 2 of the first 4 examples (labels 0..3, never 4).
    assert all(len(labels) == 2 and max(labels) <= 3 for labels, _ in seen)
    assert (executor.any_replica(True), executor.any_replica(False)) == (True, False)


def test_each_ps_worker_reads_the_data_in_an_order_of_its_own(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The per-worker dataset's seed is the worker's clock: two workers starting a moment
    apart shuffle differently (with a fixed seed every worker would take the same batch)."""
    monkeypatch.setattr(tf.distribute.coordinator, "ClusterCoordinator", StandInCoordinator)
    orders = set()
    for _ in range(6):
        executor = distribution.CoordinatorExecutor(
            object(),  # type: ignore[arg-type]
            lambda *args: None, data_dir, examples=5, batch_size=5, steps_per_execution=1,
            num_workers=1,
        )  # fmt: skip
        _, labels = next(executor._iterator)
        orders.add(tuple(labels.numpy().tolist()))
    assert len(orders) > 1  # 120 orders of 5: six equal draws are a 1 in 120^5 chance
