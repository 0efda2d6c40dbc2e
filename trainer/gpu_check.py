"""A replica given GPUs trains on them or not at all.

A GPU whose driver is older than the CUDA TensorFlow was built with (ECI's gn6i default is
Tesla 470 / CUDA 11.4; TensorFlow 2.21 is built with CUDA 12.5.1) is invisible to TensorFlow,
which then trains on the CPU: GPUs billed, CPU speed, and nothing in the logs but a warning.
So a replica told it has GPUs (`--gpus` / `TFTRAIN_GPUS`, set from the group's `gpuCount`)
checks that TensorFlow sees them, and stops with exit 2 (a restart on the same node cannot
help), naming the driver/CUDA pair: the usual cause.
"""

from __future__ import annotations

import re
from pathlib import Path

from trainer.errors import UsageError

# Where the NVIDIA kernel module reports its version, when the driver is loaded and the
# container runtime exposes it (NVIDIA driver README, "/proc/driver/nvidia/version"). The
# proprietary module's line reads "NVIDIA UNIX x86_64 Kernel Module  <version>", the open
# one's "NVIDIA UNIX Open Kernel Module for x86_64  <version>" (README, "Open Linux Kernel
# Modules").
DRIVER_VERSION_FILE = Path("/proc/driver/nvidia/version")
_VERSION_LINE = re.compile(r"Kernel Module(?: for \S+)?\s+([0-9]+(?:\.[0-9]+)+)")
# NVIDIA CUDA Compatibility guide: any CUDA 12.x build runs on a driver >= 525.60.13 (minor
# version compatibility), unless the image demands more (NVIDIA_REQUIRE_CUDA).
CUDA_12_MINIMUM_DRIVER = "525.60.13"


class NoUsableGpu(UsageError):
    """Fewer GPUs are usable than the replica was given."""


def driver_version(path: Path = DRIVER_VERSION_FILE) -> str:
    """The node's NVIDIA driver version, or "" when none is visible here."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    found = _VERSION_LINE.search(text)
    return found.group(1) if found else ""


def gpu_problem(expected: int, found: int, cuda: str, driver: str) -> str:
    """The one line a replica stops with: what it was given, what TensorFlow sees, and the
    driver/CUDA pair that usually explains the difference."""
    node = (
        f"the node's NVIDIA driver is {driver}"
        if driver
        else ("no NVIDIA driver is visible in the container (no /proc/driver/nvidia/version)")
    )
    return (
        f"--gpus / TFTRAIN_GPUS is {expected} but TensorFlow sees {found} usable GPU(s): "
        f"TensorFlow was built with CUDA {cuda} and {node}; a CUDA 12 build needs a driver "
        f">= {CUDA_12_MINIMUM_DRIVER} (and one matching the image's NVIDIA_REQUIRE_CUDA, if "
        "set): check nvidia-smi on the node and the pinned driver (docs/deploy.md: GPU drivers)"
    )


def require_gpus(expected: int) -> None:
    if expected <= 0:
        return
    import tensorflow as tf

    found = len(tf.config.list_physical_devices("GPU"))
    if found >= expected:
        return
    cuda = tf.sysconfig.get_build_info().get("cuda_version", "none (a CPU-only build)")
    raise NoUsableGpu(gpu_problem(expected, found, cuda, driver_version()))
