"""The GPU check in the test process (trainer.gpu_check.require_gpus), on this machine, which
has no GPU and no NVIDIA driver: the driver/CUDA evidence is in test_gpu_driver.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer import gpu_check
from trainer.gpu_check import NoUsableGpu, driver_version, gpu_problem, require_gpus


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


# /proc/driver/nvidia/version as the NVIDIA kernel module writes it (driver README).
PROC_VERSION = (
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.82.01  Tue Oct 26 14:43:00 UTC 2021\n"
    "GCC version:  gcc version 9.3.0 (Ubuntu 9.3.0-17ubuntu1~20.04)\n"
)


def test_the_driver_version_is_read_from_the_kernel_module_s_line(tmp_path: Path) -> None:
    assert Path("/proc/driver/nvidia/version") == gpu_check.DRIVER_VERSION_FILE
    (tmp_path / "version").write_text(PROC_VERSION)
    assert driver_version(tmp_path / "version") == "470.82.01"
    (tmp_path / "open").write_text(
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build\n"
    )
    assert driver_version(tmp_path / "open") == "550.54.15"
    (tmp_path / "no number").write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  \n")
    assert driver_version(tmp_path / "no number") == ""
    assert driver_version(tmp_path / "missing") == ""
    (tmp_path / "binary").write_bytes(b"\xff\xfe Kernel Module  535.104.05 \xff")
    assert driver_version(tmp_path / "binary") == "535.104.05"


def test_the_line_names_what_was_given_what_is_seen_and_the_driver_cuda_pair() -> None:
    assert gpu_problem(2, 1, "12.5.1", "470.82.01") == (
        "--gpus / TFTRAIN_GPUS is 2 but TensorFlow sees 1 usable GPU(s): TensorFlow was built "
        "with CUDA 12.5.1 and the node's NVIDIA driver is 470.82.01; a CUDA 12 build needs a "
        "driver >= 525.60.13 (and one matching the image's NVIDIA_REQUIRE_CUDA, if set): check "
        "nvidia-smi on the node and the pinned driver (docs/deploy.md: GPU drivers)"
    )
    assert gpu_problem(1, 0, "12.5.1", "").startswith(
        "--gpus / TFTRAIN_GPUS is 1 but TensorFlow sees 0 usable GPU(s): TensorFlow was built "
        "with CUDA 12.5.1 and no NVIDIA driver is visible in the container (no "
        "/proc/driver/nvidia/version); a CUDA 12 build needs a driver >= 525.60.13 "
    )


@pytest.mark.parametrize(
    ("expected", "seen", "build", "stops"),
    [
        (2, 2, {"cuda_version": "12.5.1"}, None),
        (2, 3, {"cuda_version": "12.5.1"}, None),
        (1, 1, {}, None),
        (3, 2, {"cuda_version": "12.5.1"}, "is 3 but TensorFlow sees 2 usable GPU(s): "
         "TensorFlow was built with CUDA 12.5.1 and the node's NVIDIA driver is 470.82.01;"),
        (1, 0, {}, "is 1 but TensorFlow sees 0 usable GPU(s): TensorFlow was built with CUDA "
         "none (a CPU-only build) and the node's NVIDIA driver is 470.82.01;"),
    ],
)  # fmt: skip
def test_a_replica_given_gpus_stops_when_tensorflow_sees_fewer(
    monkeypatch: pytest.MonkeyPatch,
    expected: int,
    seen: int,
    build: dict[str, str],
    stops: str | None,
) -> None:
    import tensorflow as tf

    asked: list[str] = []

    def list_physical_devices(kind: str) -> list[str]:
        asked.append(kind)
        return [f"/physical_device:{kind}:{n}" for n in range(seen)]

    monkeypatch.setattr(tf.config, "list_physical_devices", list_physical_devices)
    monkeypatch.setattr(tf.sysconfig, "get_build_info", lambda: build)
    monkeypatch.setattr(gpu_check, "driver_version", lambda: "470.82.01")
    if stops is None:
        require_gpus(expected)
    else:
        with pytest.raises(NoUsableGpu) as error:
            require_gpus(expected)
        assert str(error.value).startswith(f"--gpus / TFTRAIN_GPUS {stops}")
    assert asked == ["GPU"]
