"""The GPU check in the test process (trainer.gpu_check.require_gpus), on this machine, which
has no GPU and no NVIDIA driver: the driver/CUDA evidence is in test_gpu_driver.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer import gpu_check
from trainer.gpu_check import NoUsableGpu, driver_version, require_gpus


def test_the_gpu_check_in_this_process(tmp_path: Path) -> None:
    """No GPUs asked: nothing checked. One asked on this GPU-less machine: the one line,
    with the CUDA this TensorFlow was built with (none for a CPU-only build) and no driver."""
    require_gpus(0)
    require_gpus(-1)
    assert not gpu_check.DRIVER_VERSION_FILE.exists()  # no NVIDIA driver on this machine
    with pytest.raises(NoUsableGpu) as error:
        require_gpus(1)
    line = str(error.value)
    assert line.startswith("--gpus / TFTRAIN_GPUS is 1 but TensorFlow sees 0 usable GPU(s): ")
    assert "TensorFlow was built with CUDA " in line
    assert "and no NVIDIA driver is visible in the container" in line
    (tmp_path / "odd").write_text("NVRM version: something else entirely\n")
    assert driver_version(tmp_path / "odd") == ""
