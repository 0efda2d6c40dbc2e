"""The bucket's local stand-ins: the input and export directories of this machine.

`data.localInputDir` (or `--input`) plays the input prefix mounted at `data.inputPath`,
`data.localExportDir` (or `--export`) the export prefix mounted at /export, and the parent of
the job's run directories (`runs/<stack>/`) the volume at `storage.mountPath`, so that
`job.initCheckpoint` resolves as it does in a pod. Checked before anything is created: a
mistake is one line naming the key and exit 2.
"""

from __future__ import annotations

import glob
from dataclasses import dataclass
from pathlib import Path

from infra.config import PROJECT, StackConfig
from infra.replica_plan.run_data import resolve_init_checkpoint
from trainer.checkpoint_store import CheckpointStore
from trainer.output_dir import OutputPaths
from trainer.warm_start import InitCheckpointError, check_init_checkpoint

INPUT_KEY = f"{PROJECT}:data.localInputDir (--input)"
EXPORT_KEY = f"{PROJECT}:data.localExportDir (--export)"
INIT_KEY = f"{PROJECT}:job.initCheckpoint"


class LocalDataError(ValueError):
    """One line: the key (and flag), the value, what is allowed."""


@dataclass(frozen=True)
class LocalData:
    input_dir: Path | None
    export_dir: Path | None
    init_checkpoint: str  # resolved to a path of this machine; "" without one


def _directory(text: str) -> Path | None:
    return Path(text).expanduser().resolve() if text else None


def _apart(one: Path, other: Path) -> bool:
    return not (one.is_relative_to(other) or other.is_relative_to(one))


def _check_init_checkpoint(config: StackConfig, init: Path) -> None:
    """The bundled trainer's checkpoint rules (its naming) for it alone; a user's trainer
    reads its own kind of checkpoint, which only has to be there (a file, a directory, or a
    prefix of files)."""
    try:
        if config.runs_bundled_trainer:
            check_init_checkpoint(init)
        elif not (init.exists() or any(init.parent.glob(f"{glob.escape(init.name)}*"))):
            raise InitCheckpointError(f"{init} does not exist")
    except InitCheckpointError as error:
        raise LocalDataError(
            f"{INIT_KEY} = {config.job.init_checkpoint!r} (here {init}): {error}"
        ) from None


def local_data(config: StackConfig, output_dir: Path) -> LocalData:
    """The local directories for `config`'s data keys, checked; `output_dir` is the run's."""
    input_dir = _directory(config.data.local_input_dir)
    export_dir = _directory(config.data.local_export_dir)
    if input_dir is not None and not input_dir.is_dir():
        raise LocalDataError(
            f"{INPUT_KEY} = {config.data.local_input_dir!r}: no such directory; "
            "allowed: an existing directory with the training data"
        )
    if input_dir and export_dir and not _apart(input_dir, export_dir):
        raise LocalDataError(
            f"{EXPORT_KEY} = {str(export_dir)!r} and the input {str(input_dir)!r}: "
            "allowed: directories apart (neither inside the other), so that a run's "
            "export never changes what the next run reads"
        )
    volume = output_dir.parent.parent  # runs/<stack>/<job>/<run id>: the volume's root
    init = resolve_init_checkpoint(
        config, str(volume), str(input_dir) if input_dir else config.data.input_path
    )
    resumes = CheckpointStore(OutputPaths(output_dir).checkpoints).published_steps()
    if init and not resumes:
        _check_init_checkpoint(config, Path(init))
    return LocalData(input_dir, export_dir, init)
