"""What one Adam update of the trainer's model costs, in CPU milliseconds a step.

Under ParameterServerStrategy the ps runs the optimizer's update for its variables each
step (docs/benchmarks.md). This measures how much of the ps's CPU that update can be: Keras'
Adam (about twenty small ops per variable) against TensorFlow's fused `ResourceApplyAdam`
kernel (one op per variable, the same arithmetic), each applying fixed gradients to the
trainer's CNN in a `tf.function` loop of `--steps` updates, on one intra-op thread as a ps
has. Alternated (Keras, fused, Keras, fused, ...) so drifting load hits both alike; CPU time
of this process, not wall time, so other programs' load changes little.

    .venv/bin/python -m bench.adam_update                 # 3 rounds of 2,000 updates
    .venv/bin/python -m bench.adam_update --rounds 5 --steps 5000
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

# Before TensorFlow loads, which reads its log level once.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras
import tensorflow as tf

from trainer.model import build_model


class FusedAdam(keras.optimizers.Adam):
    """Keras' Adam with its update in TensorFlow's fused kernel (same slots, same math)."""

    def update_step(self, gradient: Any, variable: Any, learning_rate: Any) -> None:
        dtype = variable.dtype
        step = tf.cast(self.iterations + 1, dtype)
        index = self._get_variable_index(variable)

        def constant(value: float) -> tf.Tensor:
            return tf.cast(value, dtype)

        tf.raw_ops.ResourceApplyAdam(
            var=variable.handle,
            m=self._momentums[index].handle,
            v=self._velocities[index].handle,
            beta1_power=tf.pow(constant(self.beta_1), step),
            beta2_power=tf.pow(constant(self.beta_2), step),
            lr=tf.cast(learning_rate, dtype),
            beta1=constant(self.beta_1),
            beta2=constant(self.beta_2),
            epsilon=constant(self.epsilon),
            grad=tf.cast(gradient, dtype),
        )


def cpu_ms_per_update(optimizer_class: type[keras.optimizers.Optimizer], steps: int) -> float:
    model = build_model()
    optimizer = optimizer_class(1e-3)
    optimizer.build(model.trainable_variables)
    gradients = [tf.random.normal(v.shape, seed=1) for v in model.trainable_variables]

    @tf.function
    def updates(count: tf.Tensor) -> None:
        for _ in tf.range(count):
            optimizer.apply_gradients(zip(gradients, model.trainable_variables, strict=True))

    updates(tf.constant(5))  # traced and warmed outside the measure
    started = time.process_time()
    updates(tf.constant(steps))
    return (time.process_time() - started) / steps * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.adam_update", description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args(argv)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(2)
    measured: dict[str, list[float]] = {"keras Adam": [], "fused ResourceApplyAdam": []}
    for _ in range(args.rounds):
        measured["keras Adam"].append(cpu_ms_per_update(keras.optimizers.Adam, args.steps))
        measured["fused ResourceApplyAdam"].append(cpu_ms_per_update(FusedAdam, args.steps))
    print(f"| update | CPU ms a step, median of {args.rounds} (range) |")
    print("| --- | ---: |")
    for name, values in measured.items():
        print(f"| {name} | {statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f}) |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
