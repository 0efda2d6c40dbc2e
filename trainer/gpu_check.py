"""A replica given GPUs trains on them or not at all.

A GPU whose driver is older than the CUDA TensorFlow was built with (ECI's gn6i default is
Tesla 470 / CUDA 11.4; TensorFlow 2.21 needs CUDA 12) is invisible to TensorFlow, which then
trains on the CPU: GPUs billed, CPU speed, and nothing in the logs but a warning. So a
replica told it has GPUs (`--gpus` / `TFTRAIN_GPUS`, set from the group's `gpuCount`) checks
that TensorFlow sees them, and stops with exit 2 (a restart on the same node cannot help).
"""

from __future__ import annotations

from trainer.errors import UsageError


class NoUsableGpu(UsageError):
    """Fewer GPUs are usable than the replica was given."""


def require_gpus(expected: int) -> None:
    if expected <= 0:
        return
    import tensorflow as tf

    found = len(tf.config.list_physical_devices("GPU"))
    if found >= expected:
        return
    cuda = tf.sysconfig.get_build_info().get("cuda_version", "none: a CPU-only build")
    raise NoUsableGpu(
        f"--gpus / TFTRAIN_GPUS is {expected} but TensorFlow sees {found} usable GPU(s); "
        f"it was built with CUDA {cuda}: check the node's NVIDIA driver (nvidia-smi) and "
        "the image (README: GPU drivers)"
    )
