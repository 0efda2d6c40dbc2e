"""trainer.weight_access: the packed transfer computes what the plain model call computes,
and crosses each device boundary once per direction.

The expected numbers come from Keras itself (the model called on its own variables, the
gradient tape over it); the expected graph from what the module promises: one
concatenation per ps on the ps for the weights, one per ps on the worker for the gradients.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.test_distribution_steps import SeesTrainingFlag
from trainer.model import build_model
from trainer.weight_access import PackedTransfer, VariablesInPlace, weight_access

ROOT = Path(__file__).resolve().parents[1]


def logits_and_gradients(access: PackedTransfer | VariablesInPlace, images: np.ndarray) -> tuple:
    @tf.function
    def step() -> tuple:
        with tf.GradientTape() as tape:
            values = access.read()
            logits = access.call(values, tf.constant(images))
            loss = tf.reduce_sum(logits * logits)
        return logits, access.send(tape.gradient(loss, values))

    return step()


def test_packed_weights_give_keras_own_logits_and_gradients() -> None:
    keras.utils.set_random_seed(7)
    model = build_model()
    images = np.random.default_rng(7).integers(0, 256, (5, 28, 28, 1), dtype=np.uint8)
    with tf.GradientTape() as tape:
        expected_logits = model(images, training=True)
        loss = tf.reduce_sum(expected_logits * expected_logits)
    expected = tape.gradient(loss, model.trainable_variables)

    logits, gradients = logits_and_gradients(PackedTransfer(model), images)

    np.testing.assert_allclose(logits.numpy(), expected_logits.numpy(), rtol=1e-5, atol=1e-5)
    assert [g.shape for g in gradients] == [tuple(v.shape) for v in model.trainable_variables]
    for got, want in zip(gradients, expected, strict=True):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


def test_variables_in_place_hand_the_model_its_own_variables() -> None:
    model = build_model()
    access = VariablesInPlace(model)
    assert [id(v) for v in access.read()] == [id(v) for v in model.trainable_variables]
    gradients = [tf.ones(v.shape) for v in model.trainable_variables]
    assert access.send(gradients) is gradients


def test_only_the_parameter_server_strategy_packs() -> None:
    model = build_model()
    images = np.zeros((2, 28, 28, 1), dtype=np.uint8)
    in_place = weight_access(tf.distribute.get_strategy(), model)
    assert isinstance(in_place, VariablesInPlace)
    assert [id(v) for v in in_place.read()] == [id(v) for v in model.trainable_variables]
    # isinstance is all weight_access asks of the strategy; a real one needs a live cluster.
    ps_strategy = tf.distribute.ParameterServerStrategy.__new__(
        tf.distribute.ParameterServerStrategy
    )
    packed = weight_access(ps_strategy, model)
    assert isinstance(packed, PackedTransfer)
    np.testing.assert_allclose(
        packed.call(packed.read(), images).numpy(), model(images).numpy(), atol=1e-6
    )


@pytest.mark.parametrize("access_type", [VariablesInPlace, PackedTransfer])
def test_both_run_the_model_in_training_mode_on_the_weights_read(access_type: type) -> None:
    """Dropout and batch statistics act only in training mode."""
    flag = SeesTrainingFlag()
    keras.utils.set_random_seed(3)
    model = keras.Sequential([keras.Input((4,)), flag, keras.layers.Dense(3)])
    images = np.arange(8, dtype=np.float32).reshape(2, 4)
    access = access_type(model)
    flag.seen.clear()  # building the model called the layer once, symbolically
    logits = access.call(access.read(), tf.constant(images))
    assert flag.seen == [True]
    kernel, bias = (v.numpy() for v in model.trainable_variables)
    np.testing.assert_allclose(logits.numpy(), images @ kernel + bias, rtol=1e-5)


def test_a_model_with_state_beyond_its_weights_is_refused() -> None:
    model = keras.Sequential([keras.Input((3,)), keras.layers.BatchNormalization()])
    with pytest.raises(
        ValueError, match=r"^PackedTransfer takes a model without non-trainable variables$"
    ):
        PackedTransfer(model)


# In a fresh process: two logical CPUs stand for two ps, which TensorFlow only allows to be
# set up before its runtime starts.
TWO_DEVICES = """
import json
import keras, tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
from trainer.weight_access import PackedTransfer
first, second = keras.layers.Dense(4), keras.layers.Dense(2)
with tf.device("/CPU:0"):
    first.build((None, 3))
with tf.device("/CPU:1"):
    second.build((None, 4))
model = keras.Sequential([keras.Input((3,)), first, second])
access = PackedTransfer(model)

def ops(function):
    graph = tf.function(function).get_concrete_function().graph
    return sorted(
        [op.type, op.device.rsplit(":", 1)[-1] if op.device else "here"]
        for op in graph.get_operations() if op.type in ("ConcatV2", "Split", "SplitV")
    )

gradients = [tf.ones(v.shape) for v in model.trainable_variables]
moved = access.send(gradients)
print(json.dumps({
    "read": ops(access.read),
    "send": ops(lambda: access.send(gradients)),
    "moved_to": [t.device.rsplit(":", 1)[-1] for t in moved],
    "shapes": [list(t.shape) for t in moved],
}))
"""


def test_each_device_gets_one_packed_transfer_each_way() -> None:
    result = subprocess.run(
        [sys.executable, "-c", TWO_DEVICES],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    # The weights: concatenated where they live, split where the step computes.
    assert seen["read"] == [["ConcatV2", "0"], ["ConcatV2", "1"], ["SplitV", "here"],
                            ["SplitV", "here"]]  # fmt: skip
    # The gradients: concatenated here, split on the device of their variables.
    assert seen["send"] == [["ConcatV2", "here"], ["ConcatV2", "here"], ["SplitV", "0"],
                            ["SplitV", "1"]]  # fmt: skip
    # Dense(4) kernel and bias on CPU:0, Dense(2) kernel and bias on CPU:1.
    assert seen["moved_to"] == ["0", "0", "1", "1"]
    assert seen["shapes"] == [[3, 4], [4], [4, 2], [2]]
