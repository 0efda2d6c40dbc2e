"""Progress reporting: the log line of every interval and the `train/` scalars.

The line keeps the shape the seed trainers printed, with the run's totals and an ETA
(`trainer.progress_line`): `Step: 1200/1876 (63 %), Epoch: 3/4, Batch: 262 of 469, Cost:
0.0612, AvgTime: 4.1ms, ETA 2m46s`, where AvgTime is the wall time per step over the interval.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import tensorflow as tf

from trainer.distribution import Executor
from trainer.progress_line import progress_line
from trainer.steps import StepPlan


@dataclass
class _Interval:
    handles: list[Any] = field(default_factory=list)
    steps: int = 0
    end_step: int = 0


class Progress:
    """One progress line and one set of `train/` scalars per log interval.

    Under ParameterServerStrategy a handle is a RemoteValue and fetching it waits for its
    closure, so a finished interval is only fetched once enough later steps are queued to
    keep the workers busy meanwhile (`Executor.queue_steps`).
    """

    def __init__(
        self,
        executor: Executor,
        steps: StepPlan,
        batch_size: int,
        writer: tf.summary.SummaryWriter,
        echo: bool,
    ) -> None:
        self._executor, self._steps, self._batch_size = executor, steps, batch_size
        self._writer, self._echo = writer, echo
        self._finished: deque[_Interval] = deque()
        self._open = _Interval()
        self._last_report = time.perf_counter()

    def add(self, handle: Any, steps: int, step: int) -> None:
        self._open.handles.append(handle)
        self._open.steps += steps
        self._open.end_step = step
        if self._steps.is_log_boundary(step):
            self._finished.append(self._open)
            self._open = _Interval()
        while self._finished and self._queued_after_oldest() >= self._executor.queue_steps:
            self._report([self._finished.popleft()])

    def drain(self) -> None:
        """Report every finished interval; call after `Executor.join`, when nothing waits.

        They all finished before this call, when exactly is unknown, so they share the
        time since the last report: one honest average instead of a few lines of 0.0ms.
        """
        if self._finished:
            self._report(list(self._finished))
            self._finished.clear()

    def _queued_after_oldest(self) -> int:
        later = list(self._finished)[1:]
        return sum(interval.steps for interval in later) + self._open.steps

    def _report(self, intervals: list[_Interval]) -> None:
        sums = [self._executor.fetch(interval.handles) for interval in intervals]
        now = time.perf_counter()
        seconds_per_step = (now - self._last_report) / sum(i.steps for i in intervals)
        self._last_report = now
        for interval, interval_sums in zip(intervals, sums, strict=True):
            loss = sum(loss for loss, _ in interval_sums) / interval.steps
            accuracy = sum(accuracy for _, accuracy in interval_sums) / interval.steps
            if self._echo:
                print(progress_line(self._steps, interval.end_step, loss, seconds_per_step))
            with self._writer.as_default(step=interval.end_step):
                tf.summary.scalar("loss", loss)
                tf.summary.scalar("accuracy", accuracy)
                tf.summary.scalar("examples_per_sec", self._batch_size / seconds_per_step)
