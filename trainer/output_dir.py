"""The output dir: its layout (`OutputPaths`) and its one early check: it exists or can be
created, is a directory, and this process can write in it.

Pure standard library, so `python -m trainer` runs it before TensorFlow is imported and
the local launcher (`infra.local`) runs the same check before it starts any replica: a
read-only volume or a file in the way costs a second and one line, not a traceback after
a slow import (or, worse, a chief that trains for an hour and then fails at its first
checkpoint).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from trainer.errors import UsageError


@dataclass(frozen=True)
class OutputPaths:
    root: Path

    @property
    def checkpoints(self) -> Path:
        return self.root / "checkpoints"

    @property
    def train(self) -> Path:
        return self.root / "train"

    @property
    def eval(self) -> Path:
        return self.root / "eval"

    @property
    def saved_model(self) -> Path:
        return self.root / "saved_model"

    @property
    def metrics(self) -> Path:
        return self.root / "metrics.txt"


class OutputDirError(UsageError):
    """The output dir cannot be used; the message names the path and why."""


def prepare_output_dir(path: Path) -> None:
    """Create `path` if it is missing; raise `OutputDirError` unless it is a writable
    directory. Writing is tried for real (a file created and removed): permission bits
    say nothing about a read-only mount or an NFS export that squashes root."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputDirError(f"output dir {path} is a file, not a directory") from None
    except NotADirectoryError:
        blocker = next(parent for parent in path.parents if parent.exists())
        raise OutputDirError(
            f"output dir {path} cannot be created: {blocker} is a file, not a directory"
        ) from None
    except OSError as error:
        raise OutputDirError(f"output dir {path} cannot be created: {error.strerror}") from None
    try:
        with tempfile.NamedTemporaryFile(dir=path, prefix=".tftrain-write-check-"):
            pass
    except OSError as error:
        raise OutputDirError(f"output dir {path} is not writable: {error.strerror}") from None
