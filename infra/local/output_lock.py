"""One launch at a time in an output dir.

Two launches of the same settings into one output dir share its checkpoints and its run
records under the same run id: the first one's success stops the second one's servers,
whose chief then retries its lost workers until a timeout or a Ctrl-C, and both write
the same checkpoints. So the launcher holds an exclusive `flock` on the output dir for as
long as it runs, and a second launch is refused before it starts or moves anything.

The lock is on the directory itself, not on a file in it: `--fresh` renames the dir
aside, and the running launch's lock moves with it. The descriptor is not inherited
(PEP 446), so the kernel drops the lock with the launcher, even a SIGKILLed one, whose
supervisors die with it (`infra.records.launch_record`).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from infra.lifecycle import OUTCOMES_DIR
from infra.records.launch_record import live_launcher_pids
from trainer.output_dir import OutputDirError


def hold(output_dir: Path) -> int:
    """Take `output_dir` (an existing directory) for this launch, until the returned
    descriptor is closed; raise `OutputDirError` naming the dir, and the other launcher's pid
    where its record tells it, if another launch holds it."""
    descriptor = os.open(output_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        pids = live_launcher_pids(output_dir / OUTCOMES_DIR)
        by = f" (launcher pid {', '.join(map(str, pids))})" if pids else ""
        raise OutputDirError(
            f"output dir {output_dir} is in use by another launch{by}: wait for it to end, "
            "stop it, or choose another --output-dir"
        ) from None
    return descriptor
