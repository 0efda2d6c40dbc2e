"""Step arithmetic: how long the run is and where its boundaries fall. Pure Python.

An epoch is ceil(examples / batch) global steps. Steps run in chunks of up to
`steps_per_execution`, cut short so a chunk never crosses a log or checkpoint boundary:
progress is reported and checkpoints are saved at exact multiples of their intervals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainer.settings import Settings


@dataclass(frozen=True)
class StepPlan:
    """Step arithmetic: where the run ends and where its boundaries fall."""

    steps_per_epoch: int
    final_step: int
    log_steps: int
    checkpoint_steps: int
    steps_per_execution: int

    @classmethod
    def from_settings(cls, settings: Settings, train_examples: int) -> StepPlan:
        steps_per_epoch = math.ceil(train_examples / settings.batch_size)
        final_step = settings.epochs * steps_per_epoch
        if settings.max_steps:
            final_step = min(final_step, settings.max_steps)
        return cls(
            steps_per_epoch,
            final_step,
            settings.log_steps,
            settings.checkpoint_steps,
            settings.steps_per_execution,
        )

    @property
    def epochs(self) -> int:
        """How many epochs the run touches: fewer than configured when maxSteps ends it."""
        return math.ceil(self.final_step / self.steps_per_epoch)

    def next_chunk(self, step: int) -> int:
        """Steps to run from `step` without crossing a log or checkpoint boundary."""
        boundary = min(
            _next_multiple(step, self.log_steps),
            _next_multiple(step, self.checkpoint_steps),
            self.final_step,
        )
        return min(self.steps_per_execution, boundary - step)

    def is_log_boundary(self, step: int) -> bool:
        return step % self.log_steps == 0 or step == self.final_step

    def is_checkpoint_boundary(self, step: int) -> bool:
        return step % self.checkpoint_steps == 0 or step == self.final_step

    def position(self, step: int) -> tuple[int, int]:
        """(epoch, batch), counted from 1, of the step that brought the count to `step`."""
        epoch, batch = divmod(step - 1, self.steps_per_epoch)
        return epoch + 1, batch + 1


def _next_multiple(step: int, interval: int) -> int:
    return (step // interval + 1) * interval
