"""A run's data in and model out, as the replicas see them: one mapping for pods and processes.

In the cloud the input is the bucket's prefix mounted at `data.inputPath`, the export root
the bucket's export prefix mounted at /export, and the volume is at `storage.mountPath`;
the local launcher puts directories of this machine in their place. Either way the trainer
reads the same env (names in trainer/settings.py and infra/lifecycle/export.sh):
- TFTRAIN_INPUT_DIR (and TFTRAIN_DATA_DIR, where the bundled trainer reads its IDX files,
  unless job.dataDir names another path) in every replica, when there is an input;
- TFTRAIN_INIT_CHECKPOINT in every replica: `job.initCheckpoint` resolved to a path;
- TFTRAIN_EXPORT_DIR and what export.sh records, in the replica that ends the run only.
"""

from __future__ import annotations

import posixpath

from infra.config import StackConfig
from infra.config.paths import RUN_PREFIX, under

CHECKPOINTS_DIR = "checkpoints"  # trainer/output_dir.py OutputPaths.checkpoints


def input_env(config: StackConfig, input_dir: str) -> dict[str, str]:
    if not input_dir:
        return {}
    env = {"TFTRAIN_INPUT_DIR": input_dir}
    if not config.job.data_dir:
        env["TFTRAIN_DATA_DIR"] = input_dir
    return env


def export_env(
    config: StackConfig, export_dir: str, stack: str = "", images: bool = True
) -> dict[str, str]:
    """What export.sh reads besides TFTRAIN_OUTPUT_DIR; `images` where the replicas run
    in them (not in local processes)."""
    env = {
        "TFTRAIN_EXPORT_DIR": export_dir,
        "TFTRAIN_JOB_NAME": config.job.name,
        "TFTRAIN_RUN_ID": config.job.run_id,
    }
    if images:
        env["TFTRAIN_IMAGES"] = " ".join(
            f"{group.type}={group.image}" for group in config.replica_groups if group.number
        )
    if stack:
        env["TFTRAIN_STACK"] = stack
    return env


def resolve_init_checkpoint(config: StackConfig, volume_root: str, input_root: str) -> str:
    """`job.initCheckpoint` as a path: `run:<id>` is that run's checkpoints directory on the
    volume; a path under storage.mountPath or data.inputPath is moved to `volume_root` or
    `input_root` (the same paths in a pod, directories of this machine locally). The config
    rules have already refused anything else."""
    wanted = config.job.init_checkpoint
    if not wanted:
        return ""
    if wanted.startswith(RUN_PREFIX):
        run_id = wanted.removeprefix(RUN_PREFIX)
        return posixpath.join(volume_root, config.job.name, run_id, CHECKPOINTS_DIR)
    for mount, root in (
        (config.storage.mount_path, volume_root),
        (config.data.input_path, input_root),
    ):
        relative = under(wanted, mount)
        if relative is not None:
            return posixpath.join(root, relative) if relative else root
    return wanted


def init_checkpoint_env(path: str) -> dict[str, str]:
    return {"TFTRAIN_INIT_CHECKPOINT": path} if path else {}
