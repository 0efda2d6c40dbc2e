"""How a training step reads the weights and hands back their gradients.

Where the variables live on the process that computes (the single process, every
MultiWorkerMirrored worker), the model reads them and the optimizer takes the gradients as
they are. Under ParameterServerStrategy they live on the ps, and every step crosses gRPC
twice: the worker reads each weight, and each gradient goes back to the ps, where the
optimizer's update runs (it is placed with its variable). TensorFlow moves every tensor
that crosses devices on its own, so the CNN's 8 weights and 8 gradients were 16 transfers
a step, each with a fixed cost on both sides. `PackedTransfer` concatenates what crosses
into one tensor per ps and direction (on the ps for the weights, on the worker for the
gradients) and splits it on arrival: 2 transfers a step, the same bytes. The model runs
on the received values through Keras' `stateless_call`; values and gradients are the same
numbers either way. Measured: the ps's CPU down ~1 CPU-second a run, ~5 % more examples/s
(docs/benchmarks.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

import keras
import tensorflow as tf


class WeightAccess(Protocol):
    def read(self) -> Sequence[Any]:
        """The weights as the step computes with them (under a gradient tape)."""

    def call(self, weights: Sequence[Any], images: tf.Tensor) -> tf.Tensor:
        """The model's logits for `images`, computed with `weights`."""

    def send(self, gradients: Sequence[tf.Tensor]) -> Sequence[tf.Tensor]:
        """The gradients of `weights`, where the optimizer applies them."""


class VariablesInPlace:
    """The variables are this process's own: nothing to move."""

    def __init__(self, model: keras.Model) -> None:
        self._model = model

    def read(self) -> Sequence[Any]:
        return self._model.trainable_variables

    def call(self, weights: Sequence[Any], images: tf.Tensor) -> tf.Tensor:
        return self._model(images, training=True)

    def send(self, gradients: Sequence[tf.Tensor]) -> Sequence[tf.Tensor]:
        return gradients


class PackedTransfer:
    """Every weight of one ps read in one transfer, its gradients sent back in one."""

    def __init__(self, model: keras.Model) -> None:
        if model.non_trainable_variables:
            # stateless_call would return their new values, which nothing here writes back.
            raise ValueError("PackedTransfer takes a model without non-trainable variables")
        self._model = model
        self._variables = list(model.trainable_variables)
        self._shapes = [tuple(variable.shape) for variable in self._variables]
        by_device: dict[str, list[int]] = {}
        for index, variable in enumerate(self._variables):
            by_device.setdefault(variable.value.device, []).append(index)
        self._groups = list(by_device.items())

    def read(self) -> Sequence[Any]:
        weights: list[Any] = [None] * len(self._variables)
        for device, indices in self._groups:
            with tf.device(device):
                packed = self._pack([self._variables[i].value for i in indices])
            self._unpack(packed, indices, weights)
        return weights

    def call(self, weights: Sequence[Any], images: tf.Tensor) -> tf.Tensor:
        logits, _ = self._model.stateless_call(list(weights), [], images, training=True)
        return logits

    def send(self, gradients: Sequence[tf.Tensor]) -> Sequence[tf.Tensor]:
        moved: list[Any] = [None] * len(gradients)
        for device, indices in self._groups:
            packed = self._pack([gradients[i] for i in indices])
            with tf.device(device):
                self._unpack(packed, indices, moved)
        return moved

    @staticmethod
    def _pack(tensors: Sequence[Any]) -> tf.Tensor:
        return tf.concat([tf.reshape(tensor, [-1]) for tensor in tensors], axis=0)

    def _unpack(self, packed: tf.Tensor, indices: Sequence[int], into: list[Any]) -> None:
        sizes = [math.prod(self._shapes[i]) for i in indices]
        for index, part in zip(indices, tf.split(packed, sizes), strict=True):
            into[index] = tf.reshape(part, self._shapes[index])


def weight_access(strategy: tf.distribute.Strategy, model: keras.Model) -> WeightAccess:
    if isinstance(strategy, tf.distribute.ParameterServerStrategy):
        return PackedTransfer(model)
    return VariablesInPlace(model)
