"""The report of a cluster run, fetched through TensorBoard's pod (`infra.status.cloud_report`).

kubectl is a stand-in on PATH. The pack script itself runs for real (sh, find, tar, as the
TensorBoard image has them) on a run directory laid out as the supervisor writes it; what it
must leave out is the module docstring's list (checkpoints, the model, the replicas' work and
homes, an earlier report)."""

from __future__ import annotations

import io
import os
import shutil
import stat
import sys
import tarfile
import time
from dataclasses import replace
from pathlib import Path

import pytest

from infra.config import StackConfig, load_stack
from infra.status.cloud import ClusterError
from infra.status.cloud_report import cloud_report, fetch_run
from tests.test_run_report import failed_run

TARGET = "deployment/mnist-tensorboard"
# What kubectl exec prints when the Deployment is not there (client-go's NotFound status).
NOT_FOUND = 'Error from server (NotFound): deployments.apps "mnist-tensorboard" not found'


@pytest.fixture
def config() -> StackConfig:
    return load_stack("ack-gpu")


def _kubectl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> Path:
    """A kubectl that logs its arguments to `calls` and then runs `body`; `calls`' path."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "kubectl"
    script.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/calls\n{body}')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return tmp_path / "calls"


def _tar(tmp_path: Path, members: dict[str, bytes]) -> Path:
    path = tmp_path / "stream.tar"
    with tarfile.open(path, "w") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_without_tensorboard_nothing_is_asked_and_the_key_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: StackConfig
) -> None:
    calls = _kubectl(tmp_path, monkeypatch, "exit 0\n")
    off = replace(config, tensorboard=replace(config.tensorboard, enabled=False))
    with pytest.raises(ClusterError) as refused:
        fetch_run(off, None, tmp_path / "mirror")
    assert str(refused.value) == (
        "the report of a cloud run is read through TensorBoard's pod, the one that mounts the "
        "run's volume: set tftrain:tensorboard.enabled true"
    )
    assert not calls.exists()


def test_the_pack_script_streams_the_records_logs_and_events_and_nothing_heavy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: StackConfig
) -> None:
    """kubectl's stand-in runs the command after `--` here, on the volume under $VOLUME."""
    volume = tmp_path / "volume"
    run = volume / config.output_dir.lstrip("/")
    shutil.copytree(failed_run(tmp_path / "made"), run)
    kept = {
        "metrics.txt": "test_accuracy 0.9\n",
        "logs/train/events.out.tfevents.1.host": "e",
        "logs/eval/events.out.tfevents.2.host": "e",
        "replicas/mnist-worker-1/heartbeat": "1",
    }
    left_out = {
        "checkpoints/ckpt-1.index": "c",
        "saved_model/saved_model.pb": "m",
        "replicas/mnist-worker-1/work/cache.bin": "w",
        "replicas/mnist-worker-1/home/.bash_history": "h",
        "report/report.md": "old",
    }
    for name, text in {**kept, **left_out}.items():
        (run / name).parent.mkdir(parents=True, exist_ok=True)
        (run / name).write_text(text)
    before = {p.relative_to(run).as_posix() for p in run.rglob("*") if p.is_file()}
    monkeypatch.setenv("VOLUME", str(volume))
    calls = _kubectl(
        tmp_path,
        monkeypatch,
        'while [ "$1" != "--" ]; do shift; done; shift\nexec "$1" "$2" "$3" "$4" "$VOLUME$5"\n',
    )
    mirror = tmp_path / "mirror" / "deep"
    fetch_run(config, str(tmp_path / "kubeconfig"), mirror)
    got = {p.relative_to(mirror).as_posix() for p in mirror.rglob("*") if p.is_file()}
    assert got == before - set(left_out)
    assert set(kept) <= got
    assert (mirror / "metrics.txt").read_text() == "test_accuracy 0.9\n"
    (call,) = calls.read_text().splitlines()
    assert call.startswith(
        f"--kubeconfig {tmp_path / 'kubeconfig'} --namespace tftrain --request-timeout=8s "
        f"exec {TARGET} -c tensorboard -- sh -c "
    )
    assert call.endswith(f" sh {config.output_dir}")


def test_a_failed_exec_is_told_by_kubectl_s_own_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: StackConfig
) -> None:
    _kubectl(tmp_path, monkeypatch, f"echo 'I1127 trace' >&2; echo '{NOT_FOUND}' >&2; exit 1\n")
    with pytest.raises(ClusterError) as refused:
        fetch_run(config, None, tmp_path / "mirror")
    assert str(refused.value) == f"could not read the run from {TARGET}: {NOT_FOUND}"


# CPython's tarfile names what it found: nothing at all, or no tar header.
@pytest.mark.parametrize(
    ("body", "why"),
    [("exit 0\n", "empty file"), ("head -c 2048 /dev/zero | tr '\\0' 'x'\n", "invalid header")],
)
def test_a_stream_that_is_no_tar_is_named_so(
    body: str, why: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: StackConfig
) -> None:
    _kubectl(tmp_path, monkeypatch, body)
    with pytest.raises(ClusterError) as refused:
        fetch_run(config, None, tmp_path / "mirror")
    assert str(refused.value) == f"could not read the run from {TARGET}: {why}"


def test_a_report_fetched_again_refreshes_the_same_mirror(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: StackConfig
) -> None:
    mirror = tmp_path / "mirror"
    for n in (1, 2):
        stream = _tar(tmp_path, {"metrics.txt": f"step {n}\n".encode()})
        _kubectl(tmp_path / f"k{n}", monkeypatch, f"cat {stream}\n")
        fetch_run(config, None, mirror)
        assert (mirror / "metrics.txt").read_text() == f"step {n}\n"


def test_a_kubectl_that_never_ends_after_the_stream_is_stopped_within_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: StackConfig
) -> None:
    stream = _tar(tmp_path, {"metrics.txt": b"ok\n"})
    # The module, not the function infra.status re-exports under the same name.
    monkeypatch.setattr(sys.modules["infra.status.cloud_report"], "TRANSFER_TIMEOUT", 0.5)
    # The stream ends (stdout closed), the process does not.
    _kubectl(tmp_path, monkeypatch, f"cat {stream}; exec >&-; exec sleep 60\n")
    begun = time.monotonic()
    with pytest.raises(ClusterError) as stopped:
        fetch_run(config, None, tmp_path / "mirror")
    assert time.monotonic() - begun < 30
    assert str(stopped.value) == f"kubectl exec {TARGET}: no end 0.5 s after the run's last byte"


def test_a_member_outside_the_mirror_is_refused_and_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: StackConfig
) -> None:
    stream = _tar(tmp_path, {"metrics.txt": b"ok\n", "../../escaped.txt": b"x"})
    _kubectl(tmp_path, monkeypatch, f"cat {stream}\n")
    mirror = tmp_path / "a" / "b"
    with pytest.raises(ClusterError) as refused:
        fetch_run(config, None, mirror)
    assert str(refused.value).startswith(f"could not read the run from {TARGET}: ")
    assert not (tmp_path / "escaped.txt").exists()


@pytest.mark.parametrize(
    ("stderr", "shown"),
    [
        ("tar: ./x: file changed as we read it\ncommand terminated with exit code 1\n",
         "command terminated with exit code 1"),
        ("", "no answer"),
        # Not UTF-8 (a Latin-1 node name): shown with a replacement character, not a crash.
        (b"error: caf\xe9 unreachable\n", "error: caf\ufffd unreachable"),
    ],
)  # fmt: skip
def test_a_stream_that_ends_in_a_failure_names_kubectl_s_last_line(
    stderr: str | bytes,
    shown: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    config: StackConfig,
) -> None:
    stream = _tar(tmp_path, {"metrics.txt": b"ok\n"})
    err = stderr if isinstance(stderr, bytes) else stderr.encode()
    (tmp_path / "stderr").write_bytes(err)
    _kubectl(tmp_path, monkeypatch, f"cat {stream}; cat {tmp_path}/stderr >&2; exit 1\n")
    with pytest.raises(ClusterError) as refused:
        fetch_run(config, None, tmp_path / "mirror")
    assert str(refused.value) == f"kubectl exec {TARGET}: {shown}"


def test_a_run_no_replica_started_has_no_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: StackConfig
) -> None:
    stream = _tar(tmp_path, {})
    _kubectl(tmp_path, monkeypatch, f"cat {stream}\n")
    with pytest.raises(ClusterError) as refused:
        cloud_report("ack-gpu", config, None, tmp_path / "runs")
    assert str(refused.value) == (
        f"no replica of run {config.job.run_id} has started in the cluster"
    )


def test_the_report_is_written_in_the_mirror_and_titled_for_the_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: StackConfig
) -> None:
    stream = tmp_path / "run.tar"
    with tarfile.open(stream, "w") as archive:
        archive.add(failed_run(tmp_path / "volume"), arcname=".")
    calls = _kubectl(tmp_path, monkeypatch, f"cat {stream}\n")
    report = cloud_report("my-stack", config, "my-kubeconfig", tmp_path / "runs")
    assert calls.read_text().startswith("--kubeconfig my-kubeconfig --namespace tftrain ")
    mirror = tmp_path / "runs" / "cluster" / "mnist" / config.job.run_id
    assert report == mirror / "report" / "report.md"
    text = report.read_text()
    assert text.splitlines()[0] == f"# Run {config.job.run_id} of stack my-stack (cluster): failed"
    # The configuration that ran is the stack's (its run id), not a default one.
    assert f"\n  runId: {config.job.run_id}\n" in text
