"""The network, its optimizer and test accuracy (trainer.model), by hand: the weight count
of the layers model.py's docstring names, the cosine schedule's formula, and an accuracy of
known predictions across more than one evaluation batch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import tensorflow as tf

from trainer import model as model_module
from trainer.model import build_model, build_optimizer, local_copy


def test_the_network_s_shape_and_size() -> None:
    model = build_model()
    assert model.name == "mnist_cnn"
    assert model.input_shape == (None, 28, 28, 1)
    assert model.output_shape == (None, 10)
    # conv 5x5x1x32+32, conv 5x5x32x32+32, dense (4*4*32)x128+128, dense 128x10+10.
    assert model.count_params() == 832 + 25_632 + 65_664 + 1_290  # 93,418: "about 93k"


def test_pixels_are_read_as_fractions_of_255() -> None:
    model = build_model()
    image = np.full((1, 28, 28, 1), 255, np.uint8)
    after_scaling = tf.ones((1, 28, 28, 1))
    for layer in model.layers[1:]:
        after_scaling = layer(after_scaling)
    np.testing.assert_allclose(model(image).numpy(), after_scaling.numpy(), rtol=1e-5)


@pytest.mark.parametrize(
    ("total", "step", "rate"),
    [(100, 0, 0.003), (100, 50, 0.0015), (100, 100, 0.0), (100, 25, 0.0015 * (1 + math.sqrt(0.5))),
     (0, 0, 0.003)],
)  # fmt: skip
def test_the_learning_rate_decays_along_a_half_cosine(total: int, step: int, rate: float) -> None:
    """rate(step) = peak * (1 + cos(pi * step / total)) / 2; a run of 0 steps still has one."""
    optimizer = build_optimizer(0.003, total)
    optimizer.iterations.assign(step)
    assert float(optimizer.learning_rate) == pytest.approx(rate, abs=1e-9)


def test_a_local_copy_has_the_weights_in_new_variables() -> None:
    original = build_model()
    copy = local_copy(original)
    assert all(
        np.array_equal(a, b)
        for a, b in zip(original.get_weights(), copy.get_weights(), strict=True)
    )
    original.layers[-1].bias.assign(tf.ones(10))
    assert not np.array_equal(original.layers[-1].bias.numpy(), copy.layers[-1].bias.numpy())


class Oracle:
    """A 'model' whose prediction for an image is the image's first pixel."""

    def __call__(self, batch: tf.Tensor, training: bool) -> tf.Tensor:
        assert training is False
        return tf.one_hot(tf.cast(batch[:, 0, 0, 0], tf.int32), 10)


def test_accuracy_over_more_than_one_evaluation_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_module, "EVAL_BATCH", 4)
    predicted = np.array([3, 3, 1, 0, 9, 9, 2, 5, 5, 7], np.uint8)  # 10 images: 4 + 4 + 2
    images = np.zeros((10, 28, 28, 1), np.uint8)
    images[:, 0, 0, 0] = predicted
    labels = np.array([3, 0, 1, 0, 9, 8, 2, 5, 1, 7], np.uint8)  # 7 of 10 right
    assert model_module.test_accuracy(Oracle(), images, labels) == 0.7  # type: ignore[arg-type]


def test_accuracy_of_the_bundled_batch_size() -> None:
    images = np.zeros((2001, 28, 28, 1), np.uint8)  # one more than a batch of 2000
    images[:, 0, 0, 0] = np.arange(2001) % 10
    labels = np.zeros(2001, np.uint8)  # right for 0, 10, ..., 2000: 201 images
    assert model_module.test_accuracy(Oracle(), images, labels) == 201 / 2001  # type: ignore[arg-type]


def test_raw_uint8_pixels_in_and_every_hidden_layer_rectified() -> None:
    """model.py: raw uint8 pixels in (the input pipeline does no conversion; the export takes
    uint8 images, outputs.py); the convolutions and the hidden dense layer are ReLUs, so
    on any image their outputs are never negative, while the logits are (no activation)."""
    model = build_model()
    assert model.inputs[0].dtype == "uint8"
    image = np.random.default_rng(7).integers(0, 256, (4, 28, 28, 1), dtype=np.uint8)
    outputs = tf.cast(image, tf.float32)
    negatives = []
    for layer in model.layers:
        outputs = layer(outputs)
        negatives.append((layer.name.split("_")[0], bool(np.any(outputs.numpy() < 0))))
    assert negatives == [
        ("rescaling", False),
        ("conv2d", False),
        ("max", False),
        ("conv2d", False),
        ("max", False),
        ("flatten", False),
        ("dense", False),
        ("dense", True),  # logits: 40 of them from random weights, some below 0
    ]
