"""A fault a test injects into the trainer, from outside it: on PYTHONPATH, Python imports this
module at start-up (the `site` module's sitecustomize hook), and the trainer knows nothing of it.

`TFTRAIN_FAULT_HOLD_SAVE=<step>:<file>` stops the save of checkpoint <step> where a crash does
the most harm: after TensorFlow wrote complete-looking files and before the manifest publishes
them (the first checksum `CheckpointStore.publish` takes of one of them). The process writes
its pid to <file> and waits there, so the test can SIGKILL it; a restarted process finds
<file> and saves normally.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import re
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

HOLD_SAVE_ENV = "TFTRAIN_FAULT_HOLD_SAVE"
TARGET = "trainer.checkpoint_store"


def _hold_at(module: ModuleType, step: int, flag: Path) -> None:
    checksum = module.file_sha256
    files_of_step = re.compile(rf"ckpt-{step}\.")

    def held(path: Path) -> Any:
        if files_of_step.match(Path(path).name) and not flag.exists():
            partial = flag.with_name(flag.name + ".tmp")
            partial.write_text(f"{os.getpid()}\n")
            os.replace(partial, flag)
            print(f"{HOLD_SAVE_ENV}: holding the save of step {step} before its manifest")
            sys.stdout.flush()
            threading.Event().wait()  # until the test kills this process
        return checksum(path)

    module.file_sha256 = held


class _PatchAfterImport(importlib.abc.MetaPathFinder):
    """Finds TARGET as usual, then patches it once it has run."""

    def __init__(self, step: int, flag: Path) -> None:
        self.step, self.flag = step, flag

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            _hold_at(module, self.step, self.flag)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


_at, _, _flag = os.environ.get(HOLD_SAVE_ENV, "").partition(":")
if _flag:
    sys.meta_path.insert(0, _PatchAfterImport(int(_at), Path(_flag)))
