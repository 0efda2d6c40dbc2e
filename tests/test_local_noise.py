"""The launcher's filter of TensorFlow start-up lines: lines as TensorFlow 2.21 printed
them in a four-replica local run on this CPU-only machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.local import noise
from infra.local.noise import StartupNoise

ABSL = "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"
CUDA = (
    "I0000 00:00:1795422211.128164   14042 cudart_stub.cc:31] Could not find cuda drivers on "
    "your machine, GPU will not be used."
)
CUINIT = (
    "E0000 00:00:1795422211.501084   14028 cuda_platform.cc:52] failed call to cuInit: "
    "INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)"
)
ONEDNN = (
    "I0000 00:00:1795422211.127517   14042 port.cc:153] oneDNN custom operations are on. You "
    "may see slightly different numerical results due to floating-point round-off errors"
)
FEATURES = (
    "I0000 00:00:1795422393.587470   20181 cpu_feature_guard.cc:227] This TensorFlow binary is "
    "optimized to use available CPU instructions in performance-critical operations."
)
FEATURES_MORE = "To enable the following instructions: AVX2 FMA, in other operations, rebuild"


@pytest.mark.parametrize("line", [CUDA, ONEDNN, FEATURES, FEATURES_MORE])
def test_an_informational_notice_is_shown_once_across_replicas(line: str) -> None:
    noise = StartupNoise(gpu_present=False)
    # Each replica prints it; the timestamp and thread id differ from copy to copy.
    assert [noise.shows(line), noise.shows(line.replace("14042", "14028"))] == [True, False]


def test_absl_logging_note_is_never_shown() -> None:
    assert not StartupNoise(gpu_present=False).shows(ABSL)


def test_cuinit_failure_is_hidden_without_a_gpu_and_always_shown_with_one() -> None:
    assert not StartupNoise(gpu_present=False).shows(CUINIT)
    with_gpu = StartupNoise(gpu_present=True)
    assert with_gpu.shows(CUINIT) and with_gpu.shows(CUINIT)


@pytest.mark.parametrize(
    "line",
    [
        "Step: 100, Epoch: 1, Batch: 100 of 469, Cost: 0.4008, AvgTime: 35.2ms",
        "E0000 00:00:1795422211.501084   14028 grpc_server.cc:99] failed to bind port",
        "W0000 00:00:1795422211.501084   14028 port.cc:153] oneDNN is slow here",
        "tftrain: error: --batch-size must be >= 1",
        "Could not find cuda drivers on your machine",  # our text, not TensorFlow's line
    ],
)
def test_everything_else_passes_every_time(line: str) -> None:
    noise = StartupNoise(gpu_present=False)
    assert noise.shows(line) and noise.shows(line)


def test_by_default_a_gpu_is_an_nvidia_control_device_on_this_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    device = tmp_path / "nvidiactl"
    monkeypatch.setattr(noise, "NVIDIA_DEVICE", device)
    assert not StartupNoise().shows(CUINIT)
    device.touch()  # the driver's control node, present with any NVIDIA GPU
    assert StartupNoise().shows(CUINIT)
