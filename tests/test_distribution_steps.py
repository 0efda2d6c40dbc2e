"""The training step and the MWMS executor of trainer.distribution, in one process: the step
runs the model in training mode; each input pipeline reads its own shard in a fixed order;
the pipeline's batches have the static shape a traced step expects; and a one-worker
MultiWorkerMirroredStrategy built from TF_CONFIG (in a child process: a strategy sets the
process' collective context) hears a flag through its all-reduce."""

from __future__ import annotations

import gzip
import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import keras
import pytest
import tensorflow as tf

from trainer.distribution import LocalExecutor, make_train_steps, training_batches

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = 40


def _idx(shape: tuple[int, ...], data: bytes) -> bytes:
    return bytes((0, 0, 8, len(shape))) + b"".join(n.to_bytes(4, "big") for n in shape) + data


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """40 examples: image i is all pixels i, label i."""
    images = b"".join(bytes([i]) * 784 for i in range(EXAMPLES))
    (tmp_path / "train-images-idx3-ubyte.gz").write_bytes(
        gzip.compress(_idx((EXAMPLES, 28, 28), images))
    )
    (tmp_path / "train-labels-idx1-ubyte.gz").write_bytes(
        gzip.compress(_idx((EXAMPLES,), bytes(range(EXAMPLES))))
    )
    return tmp_path


class SeesTrainingFlag(keras.layers.Layer):
    """Passes its input through and notes the `training` each call was traced with."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Any] = []

    def call(self, inputs: tf.Tensor, training: Any = None) -> tf.Tensor:
        self.seen.append(training)
        return inputs


def test_the_step_runs_the_model_in_training_mode(data_dir: Path) -> None:
    """Dropout and batch statistics act only in training mode: a step that ran the model in
    inference mode would train another model than the one the user built."""
    flag = SeesTrainingFlag()
    model = keras.Sequential(
        [keras.Input((28, 28, 1)), keras.layers.Flatten(), flag, keras.layers.Dense(EXAMPLES)]
    )
    optimizer = keras.optimizers.SGD(0.01)
    steps = make_train_steps(tf.distribute.get_strategy(), model, optimizer, 4)
    flag.seen.clear()
    loss, accuracy = steps(iter(training_batches(data_dir, EXAMPLES, 4, seed=1)), tf.constant(2))
    assert flag.seen and set(flag.seen) == {True}
    assert float(loss) > 0 and 0 <= float(accuracy) <= 2


class RecordedAccess:
    """A weight access that computes as Keras does and records what the step hands it."""

    def __init__(self, model: keras.Model) -> None:
        self.model = model
        self.called_with: list[Any] = []
        self.sent: list[Any] = []

    def read(self) -> list[Any]:
        return [tf.identity(variable) for variable in self.model.trainable_variables]

    def call(self, weights: list[Any], images: tf.Tensor) -> tf.Tensor:
        self.called_with.append(weights)
        logits, _ = self.model.stateless_call(weights, [], images, training=True)
        return logits

    def send(self, gradients: list[tf.Tensor]) -> list[tf.Tensor]:
        self.sent.append(gradients)
        return [gradient * 0 for gradient in gradients]  # no update: the weights stay


def test_the_step_computes_with_the_weights_its_strategy_s_access_reads(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The step asks `weight_access` for this strategy's access (a ParameterServerStrategy
    gets the packed one), runs the model on what it read, and applies what it sends."""
    from trainer import distribution

    model = keras.Sequential([keras.Input((28, 28, 1)), keras.layers.Flatten(),
                              keras.layers.Dense(EXAMPLES)])  # fmt: skip
    strategy = tf.distribute.get_strategy()
    asked: list[tuple[Any, Any]] = []
    access = RecordedAccess(model)

    def weight_access(given_strategy: Any, given_model: Any) -> RecordedAccess:
        asked.append((given_strategy, given_model))
        return access

    monkeypatch.setattr(distribution, "weight_access", weight_access)
    before = [variable.numpy() for variable in model.trainable_variables]
    steps = make_train_steps(strategy, model, keras.optimizers.SGD(1.0), 4)
    steps(iter(training_batches(data_dir, EXAMPLES, 4, seed=1)), tf.constant(2))
    assert asked == [(strategy, model)]
    # Traced once: the model ran on the read tensors (two of them: kernel, bias), not None.
    assert [len(weights) for weights in access.called_with] == [2]
    assert all(isinstance(w, tf.Tensor) for w in access.called_with[0])
    assert [len(gradients) for gradients in access.sent] == [2]
    # The optimizer applied what `send` returned (zeros), not the tape's gradients.
    for was, variable in zip(before, model.trainable_variables, strict=True):
        assert (variable.numpy() == was).all()


def test_batches_have_a_static_shape_and_no_autotuner(data_dir: Path) -> None:
    """Every batch is full, so the traced step sees one shape; without autotuning the
    iterator's deletion does not wait for the tuner (it blocked the end of a run ~10 s)."""
    batches = training_batches(data_dir, EXAMPLES, 8, seed=1)
    images, labels = batches.element_spec
    assert images.shape.as_list() == [8, 28, 28, 1]
    assert labels.shape.as_list() == [8]
    assert batches.options().autotune.enabled is False


class TwoPipelines:
    """A strategy's input side as MWMS shows it to worker `index` of two, one replica each."""

    def __init__(self, index: int) -> None:
        self.index = index

    def distribute_datasets_from_function(self, dataset_fn: Any) -> tf.data.Dataset:
        context = tf.distribute.InputContext(
            num_input_pipelines=2, input_pipeline_id=self.index, num_replicas_in_sync=2
        )
        return dataset_fn(context)


def _labels_seen(executor: LocalExecutor, batches: int) -> list[int]:
    return [int(x) for _ in range(batches) for x in next(executor._iterator)[1]]


def test_each_worker_reads_its_own_half_in_a_fixed_order(data_dir: Path) -> None:
    def executor(index: int) -> LocalExecutor:
        # Global batch 8 over two replicas: 4 per worker; 5 batches are one epoch of 20.
        return LocalExecutor(TwoPipelines(index), lambda *a: None, data_dir, EXAMPLES, 8, 3)

    first, second = _labels_seen(executor(0), 5), _labels_seen(executor(1), 5)
    # tf.data's shard(2, i): every second example from the i-th.
    assert sorted(first) == list(range(0, EXAMPLES, 2))
    assert sorted(second) == list(range(1, EXAMPLES, 2))
    assert _labels_seen(executor(1), 5) == second  # the same seed: the same order


def _check(script: str, tf_config: dict[str, Any], *args: str) -> subprocess.Popen[str]:
    """`script` in a fresh process with `tf_config` as its TF_CONFIG (a strategy sets the
    process' collective context for good, so each runs in its own)."""
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        cwd=REPO,
        env={**os.environ, "TF_CONFIG": json.dumps(tf_config), "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _printed(check: subprocess.Popen[str]) -> Any:
    """The JSON the check printed last, once it has exited 0."""
    out, err = check.communicate(timeout=120)
    assert check.returncode == 0, err[-2000:]
    return json.loads(out.strip().splitlines()[-1])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


MWMS_CHECK = textwrap.dedent(
    """
    import json, os, sys
    from pathlib import Path
    import tensorflow as tf
    from trainer.distribution import LocalExecutor, make_strategy
    from trainer.plan import Plan, Role
    from trainer.tf_config import parse_tf_config

    config = parse_tf_config(os.environ.pop("TF_CONFIG"))
    strategy = make_strategy(Plan("multi_worker_mirrored", Role.TRAINER, True), config)
    executor = LocalExecutor(strategy, lambda *a: None, Path(sys.argv[1]), 40, 4, 1)
    # This worker's flag on each call: given (the same twice), or raised, then not.
    flags = [sys.argv[2] == "True"] * 2 if len(sys.argv) > 2 else [True, False]
    print(json.dumps({
        "type": type(strategy).__name__,
        "cluster": strategy.cluster_resolver.cluster_spec().as_dict(),
        "heard": [executor.any_replica(flag) for flag in flags],
    }))
    """
)


def test_a_one_worker_mwms_uses_tf_config_s_cluster_and_hears_its_own_flag(
    data_dir: Path,
) -> None:
    address = f"127.0.0.1:{_free_port()}"
    tf_config = {"cluster": {"worker": [address]}, "task": {"type": "worker", "index": 0}}
    assert _printed(_check(MWMS_CHECK, tf_config, str(data_dir))) == {
        "type": "CollectiveAllReduceStrategy",
        "cluster": {"worker": [address]},
        "heard": [True, False],
    }


PS_CHECK = textwrap.dedent(
    """
    import json, os
    import tensorflow as tf
    from trainer.distribution import make_strategy
    from trainer.plan import Plan, Role
    from trainer.tf_config import parse_tf_config

    # TensorFlow's in-process cluster: the worker and the ps serve from this process.
    cluster = json.loads(os.environ["TF_CONFIG"])["cluster"]
    for kind in ("worker", "ps"):
        tf.distribute.Server(tf.train.ClusterSpec(cluster), job_name=kind, task_index=0)
    config = parse_tf_config(os.environ.pop("TF_CONFIG"))
    strategy = make_strategy(Plan("parameter_server", Role.COORDINATOR, True), config)
    with strategy.scope():
        variable = tf.Variable(1.0)
    print(json.dumps({"type": type(strategy).__name__, "variables_on": [variable.device]}))
    """
)


def test_a_ps_chief_coordinates_the_cluster_tf_config_names() -> None:
    cluster = {kind: [f"127.0.0.1:{_free_port()}"] for kind in ("chief", "worker", "ps")}
    tf_config = {"cluster": cluster, "task": {"type": "chief", "index": 0}}
    assert _printed(_check(PS_CHECK, tf_config)) == {
        "type": "ParameterServerStrategyV2",
        "variables_on": ["/job:ps/replica:0/task:0/device:CPU:0"],
    }


def test_every_mwms_worker_hears_a_flag_any_one_of_them_raises(data_dir: Path) -> None:
    """`any_replica`: worker 0 is told to stop, worker 1 is not; both must stop together."""
    cluster = {"worker": [f"127.0.0.1:{_free_port()}" for _ in range(2)]}
    workers = [  # both started before either is waited for: they meet in the all-reduce
        _check(
            MWMS_CHECK,
            {"cluster": cluster, "task": {"type": "worker", "index": index}},
            str(data_dir),
            str(index == 0),
        )
        for index in range(2)
    ]
    heard = [_printed(worker)["heard"] for worker in workers]
    assert heard == [[True, True], [True, True]]
