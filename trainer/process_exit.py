"""How a trainer process ends: with `os._exit`, once everything it leaves is on disk.

Python's orderly teardown of TensorFlow costs seconds and can block:
- Deleting a tf.data iterator waits for its autotune thread to wake from its sleep, whose
  period grows to tens of seconds over a run. Under MultiWorkerMirroredStrategy the
  per-device iterators TensorFlow builds around our dataset (`MultiDeviceIterator`, in
  tensorflow/python/data/ops/multi_device_iterator_ops.py, `_create_device_dataset`) are
  autotuned whatever our dataset's options say, and deleting them held a worker 2-15 s
  after its last step (py-spy --native: the main thread in
  `RootDataset::Iterator::~Iterator`, waiting on an `UnboundedThreadPool` thread). The
  input pipeline is therefore kept (`keep_until_exit`) and never deleted.
- Interpreter shutdown with TensorFlow's threads running took ~1 s after the last line,
  and a server's threads torn down mid-closure crashed a worker (SIGSEGV) in a fault run.
- A ParameterServerStrategy chief would send deletion RPCs for its remote iterators and
  functions to servers that the run's end is already stopping.
Checkpoints, summaries and the SavedModel are written, flushed and closed by the code that
makes them, before this point: skipping teardown only skips freeing memory.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn

_kept: list[object] = []


def keep_until_exit(resource: object) -> None:
    """Hold `resource` until the process ends, so its destructor never runs."""
    _kept.append(resource)


def exit_now(status: int) -> NoReturn:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
