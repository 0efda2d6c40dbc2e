"""How fused training steps run under each strategy.

One training function serves all three strategies: it runs `steps` steps in a `tf.range`
loop (so one call, or one scheduled closure, does many steps; per-call overhead is what
makes ParameterServerStrategy slow when every step is its own closure) and returns the
summed loss and accuracy, so progress is read once per log interval, not once per step.

What differs is who calls it:
- single process and MultiWorkerMirroredStrategy: this process, synchronously; under
  MWMS every worker calls it and gradients are all-reduced inside the optimizer.
- ParameterServerStrategy: the chief schedules it on whichever worker is free
  (`ClusterCoordinator`); a closure lost with a dead worker is re-run elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import keras
import tensorflow as tf

from trainer.cluster import cluster_resolver
from trainer.data import FILES, idx_header_size
from trainer.plan import Plan
from trainer.settings import Settings
from trainer.tf_config import ClusterConfig
from trainer.weight_access import weight_access

PREFETCH_BATCHES = 4


class Executor(Protocol):
    # Steps to keep queued before blocking on a result, so workers never run dry.
    queue_steps: int

    def run(self, steps: int) -> Any:
        """Start `steps` training steps; returns a handle to their (loss, accuracy) sums."""

    def fetch(self, handles: list[Any]) -> list[tuple[float, float]]:
        """Wait for the handles' steps and return their sums."""

    def join(self) -> None:
        """Wait until every started step is done."""

    def any_replica(self, flag: bool) -> bool:
        """Whether `flag` is set in any process that trains (see `trainer.preemption`)."""


def make_strategy(plan: Plan, config: ClusterConfig | None) -> tf.distribute.Strategy:
    if plan.strategy == "single":
        return tf.distribute.get_strategy()  # the default strategy: plain, one device
    assert config is not None  # make_plan refuses a distributed strategy without TF_CONFIG
    if plan.strategy == "parameter_server":
        return tf.distribute.ParameterServerStrategy(cluster_resolver(config))
    return tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=cluster_resolver(config))


def make_train_steps(
    strategy: tf.distribute.Strategy,
    model: keras.Model,
    optimizer: keras.optimizers.Optimizer,
    global_batch: int,
) -> Callable[..., Any]:
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)
    local_replicas = (
        len(strategy.extended.worker_devices)  # e.g. one per GPU of this worker
        if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy)
        else 1  # the single process; a ParameterServerStrategy worker runs one replica
    )

    weights = weight_access(strategy, model)

    def replica_step(images: tf.Tensor, labels: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        labels = tf.cast(labels, tf.int64)
        with tf.GradientTape() as tape:
            values = weights.read()
            logits = weights.call(values, images)
            # Divide by the global batch, not this replica's: summing the replicas'
            # gradients (MWMS all-reduce) then yields the gradient of the global mean.
            loss = tf.reduce_sum(loss_fn(labels, logits)) / global_batch
        gradients = weights.send(tape.gradient(loss, values))
        optimizer.apply_gradients(zip(gradients, model.trainable_variables, strict=True))
        correct = tf.equal(tf.argmax(logits, axis=-1), labels)
        return loss, tf.reduce_sum(tf.cast(correct, tf.float32)) / global_batch

    @tf.function
    def train_steps(iterator: Any, steps: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        # Summed here per process, across processes once per call: under MWMS a reduce is a
        # collective, and two per step (loss, accuracy) cost more than the gradients' one.
        local = strategy.experimental_local_results
        sums = tf.zeros([2])
        for _ in tf.range(steps):
            loss, accuracy = strategy.run(replica_step, args=next(iterator))
            sums += tf.stack([tf.add_n(local(loss)), tf.add_n(local(accuracy))])
        # A plain tensor passed to `run` reaches every local replica: each gives its share.
        shares = strategy.run(lambda total: total / local_replicas, args=(sums,))
        total = strategy.reduce(tf.distribute.ReduceOp.SUM, shares, axis=None)
        return total[0], total[1]

    return train_steps


def training_batches(
    data_dir: Path,
    examples: int,
    batch_size: int,
    seed: int | tf.Tensor,
    shard: int = 0,
    shards: int = 1,
) -> tf.data.Dataset:
    """Endless shuffled batches of the first `examples` training examples.

    TensorFlow ops read the IDX files (verified by `trainer.data` first) wherever the
    pipeline runs. Under ParameterServerStrategy that is on each worker, and the dataset
    graph the chief sends them then only names the files; built from in-memory arrays it
    would carry 47 MB of pixels to every worker, which measured several seconds of start-up.
    Batching after `repeat` keeps every batch full, so an epoch is ceil(n / batch) steps.
    """
    images = tf.reshape(_idx_bytes(data_dir / FILES["train_images"], 3), [-1, 28, 28, 1])
    labels = _idx_bytes(data_dir / FILES["train_labels"], 1)
    # No autotuning: slicing in-memory tensors needs no tuning, and the autotune thread
    # made deleting the iterator at the end block for up to ~10 s (seen in gdb: the
    # iterator's destructor waits for the tuner's sleep to end).
    options = tf.data.Options()
    options.autotune.enabled = False
    return (
        tf.data.Dataset.from_tensor_slices((images[:examples], labels[:examples]))
        .shard(shards, shard)
        .shuffle(examples // shards + 1, seed=seed)
        .repeat()
        .batch(batch_size, drop_remainder=True)
        .prefetch(PREFETCH_BATCHES)
        .with_options(options)
    )


def _idx_bytes(path: Path, ndim: int) -> tf.Tensor:
    raw = tf.io.decode_compressed(tf.io.read_file(str(path)), compression_type="GZIP")
    return tf.io.decode_raw(raw, tf.uint8)[idx_header_size(ndim) :]


class LocalExecutor:
    """Single process and MWMS: each call runs its steps before returning."""

    queue_steps = 0

    def __init__(
        self,
        strategy: tf.distribute.Strategy,
        train_steps: Callable[..., Any],
        data_dir: Path,
        examples: int,
        batch_size: int,
        seed: int,
    ) -> None:
        def dataset_fn(context: tf.distribute.InputContext) -> tf.data.Dataset:
            # Each MWMS worker reads its own shard, in its own order.
            return training_batches(
                data_dir,
                examples,
                context.get_per_replica_batch_size(batch_size),
                seed + context.input_pipeline_id,
                shard=context.input_pipeline_id,
                shards=context.num_input_pipelines,
            )

        self._iterator = iter(strategy.distribute_datasets_from_function(dataset_fn))
        self._train_steps = train_steps
        self._strategy = strategy

        # A traced function: run eagerly, the all-reduce costs more and TensorFlow warns
        # about it ("Using CollectiveAllReduceStrategy eagerly") on every call.
        @tf.function
        def count_flags(flag: tf.Tensor) -> tf.Tensor:
            flags = strategy.run(lambda value: value, args=(flag,))
            return strategy.reduce(tf.distribute.ReduceOp.SUM, flags, axis=None)

        self._count_flags = count_flags

    def run(self, steps: int) -> Any:
        return self._train_steps(self._iterator, tf.constant(steps))

    def fetch(self, handles: list[Any]) -> list[tuple[float, float]]:
        return [(float(loss), float(accuracy)) for loss, accuracy in handles]

    def join(self) -> None:
        pass

    def any_replica(self, flag: bool) -> bool:
        if not isinstance(self._strategy, tf.distribute.MultiWorkerMirroredStrategy):
            return flag
        # One tiny all-reduce per chunk: every worker learns of any worker's SIGTERM.
        return float(self._count_flags(tf.constant(float(flag)))) > 0


class CoordinatorExecutor:
    """ParameterServerStrategy chief: schedules closures on the workers, returns at once."""

    def __init__(
        self,
        strategy: tf.distribute.ParameterServerStrategy,
        train_steps: Callable[..., Any],
        data_dir: Path,
        examples: int,
        batch_size: int,
        steps_per_execution: int,
        num_workers: int,
    ) -> None:
        self._coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
        # One closure per worker queued keeps every worker busy while the chief waits.
        self.queue_steps = steps_per_execution * num_workers

        def dataset_fn() -> tf.data.Dataset:
            # All workers run this one graph. A fixed seed would give them the same order,
            # so two workers would take the same batch at the same time; the worker's
            # clock makes each order its own.
            seed = tf.cast(tf.timestamp() * 1e6, tf.int64)
            return training_batches(data_dir, examples, batch_size, seed)

        self._iterator = iter(self._coordinator.create_per_worker_dataset(dataset_fn))
        self._train_steps = train_steps

    def run(self, steps: int) -> Any:
        return self._coordinator.schedule(
            self._train_steps, args=(self._iterator, tf.constant(steps))
        )

    def fetch(self, handles: list[Any]) -> list[tuple[float, float]]:
        sums = self._coordinator.fetch(handles)
        return [(float(loss), float(accuracy)) for loss, accuracy in sums]

    def join(self) -> None:
        self._coordinator.join()

    def any_replica(self, flag: bool) -> bool:
        return flag  # only the chief trains; a ps's request reaches it as a file


def make_executor(
    plan: Plan,
    config: ClusterConfig | None,
    strategy: tf.distribute.Strategy,
    train_steps: Callable[..., Any],
    settings: Settings,
    examples: int,
) -> Executor:
    if plan.strategy == "parameter_server":
        assert config is not None  # make_plan refuses parameter_server without TF_CONFIG
        return CoordinatorExecutor(
            strategy,
            train_steps,
            settings.data_dir,
            examples,
            settings.batch_size,
            settings.steps_per_execution,
            num_workers=len(config.cluster["worker"]),
        )
    return LocalExecutor(
        strategy, train_steps, settings.data_dir, examples, settings.batch_size, settings.seed
    )
