"""The local stand-ins for the bucket (infra/local/data.py): each mistake is one line naming
the key and its flag, checked before a run directory exists; what is accepted resolves to
this machine's absolute paths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from infra.config import parse_config
from infra.local.data import LocalData, LocalDataError, local_data

IMAGE = "registry.example.com/tftrain/trainer:1"
USERS_TRAINER = ["python", "-m", "trainer.task"]
BUCKET = {
    "bucket": "my-bucket",
    "inputPrefix": "mnist/",
    "endpoint": "oss-cn-hangzhou-internal.aliyuncs.com",
    "credentialsSecret": "kube-system/oss",
}  # not the bundled trainer: any checkpoint kind


def config(data: dict[str, Any] | None = None, job: dict[str, Any] | None = None) -> Any:
    return parse_config({"image": IMAGE, "data": data or {}, "job": job or {}})


def output(tmp_path: Path) -> Path:
    return tmp_path / "volume" / "mnist" / "run-new"


def test_without_local_directories_nothing_stands_in(tmp_path: Path) -> None:
    assert local_data(config(), output(tmp_path)) == LocalData(None, None, "")


def test_the_directories_resolve_to_absolute_paths_home_included(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "data").mkdir()
    got = local_data(
        config({"localInputDir": "~/data", "localExportDir": "~/models"}), output(tmp_path)
    )
    assert (got.input_dir, got.export_dir) == (tmp_path / "data", tmp_path / "models")


def test_a_missing_input_directory_is_one_line_naming_the_key_and_flag(tmp_path: Path) -> None:
    missing = str(tmp_path / "nowhere")
    with pytest.raises(LocalDataError) as raised:
        local_data(config({"localInputDir": missing}), output(tmp_path))
    assert str(raised.value) == (
        f"tftrain:data.localInputDir (--input) = {missing!r}: no such directory; allowed: "
        "an existing directory with the training data"
    )
    # A file is not a directory of data either.
    (tmp_path / "file").write_text("x")
    with pytest.raises(LocalDataError, match="no such directory"):
        local_data(config({"localInputDir": str(tmp_path / "file")}), output(tmp_path))


@pytest.mark.parametrize(
    ("input_dir", "export_dir"),
    [("data", "data"), ("data", "data/exports"), ("data/in", "data")],
)
def test_input_and_export_must_lie_apart(tmp_path: Path, input_dir: str, export_dir: str) -> None:
    (tmp_path / input_dir).mkdir(parents=True)
    raw = {"localInputDir": str(tmp_path / input_dir), "localExportDir": str(tmp_path / export_dir)}
    with pytest.raises(LocalDataError) as raised:
        local_data(config(raw), output(tmp_path))
    assert str(raised.value) == (
        f"tftrain:data.localExportDir (--export) = {str(tmp_path / export_dir)!r} and the "
        f"input {str(tmp_path / input_dir)!r}: allowed: directories apart (neither inside the "
        "other), so that a run's export never changes what the next run reads"
    )


def test_directories_side_by_side_are_apart(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    raw = {"localInputDir": str(tmp_path / "data"), "localExportDir": str(tmp_path / "data2")}
    got = local_data(config(raw), output(tmp_path))
    assert (got.input_dir, got.export_dir) == (tmp_path / "data", tmp_path / "data2")


def test_an_init_checkpoint_of_another_run_resolves_on_the_volume(tmp_path: Path) -> None:
    # runs/<stack>/<job>/<run id>: the volume is the parent of the job's directory.
    earlier = tmp_path / "volume" / "mnist" / "run-old" / "checkpoints"
    earlier.mkdir(parents=True)
    (earlier / "weights.h5").write_bytes(b"w")
    got = local_data(
        config(job={"command": USERS_TRAINER, "initCheckpoint": "run:run-old"}), output(tmp_path)
    )
    assert got.init_checkpoint == str(earlier)


@pytest.mark.parametrize("name", ["ckpt", "m[1]"])
def test_a_users_checkpoint_may_be_a_prefix_of_files(tmp_path: Path, name: str) -> None:
    # A TF checkpoint is files named <prefix>.index and <prefix>.data-…: the prefix itself
    # never exists; a glob character in it is a plain character. /data is storage.mountPath,
    # the volume's root, here the parent of the job's directory.
    saved = tmp_path / "volume" / "keep"
    saved.mkdir(parents=True)
    (saved / f"{name}.index").write_bytes(b"i")
    job = {"command": USERS_TRAINER, "initCheckpoint": f"/data/keep/{name}"}
    assert local_data(config(job=job), output(tmp_path)).init_checkpoint == str(saved / name)


def test_a_users_missing_checkpoint_is_one_line(tmp_path: Path) -> None:
    saved = tmp_path / "volume" / "keep"
    saved.mkdir(parents=True)
    (saved / "m1.index").write_bytes(b"i")  # what `m[1]` would match as a glob
    job = {"command": USERS_TRAINER, "initCheckpoint": "/data/keep/m[1]"}
    with pytest.raises(LocalDataError) as raised:
        local_data(config(job=job), output(tmp_path))
    here = saved / "m[1]"
    assert str(raised.value) == (
        f"tftrain:job.initCheckpoint = '/data/keep/m[1]' (here {here}): {here} does not exist"
    )


def test_a_checkpoint_under_the_input_path_is_read_from_the_local_input(tmp_path: Path) -> None:
    # data.inputPath (default /input) is where the input prefix is mounted in a pod; here the
    # local input directory stands in for it.
    (tmp_path / "in" / "m").mkdir(parents=True)
    (tmp_path / "in" / "m" / "ckpt.index").write_bytes(b"i")
    job = {"command": USERS_TRAINER, "initCheckpoint": "/input/m/ckpt"}
    got = local_data(config({"localInputDir": str(tmp_path / "in")}, job), output(tmp_path))
    assert got.init_checkpoint == str(tmp_path / "in" / "m" / "ckpt")


def test_without_a_local_input_a_checkpoint_under_the_input_path_stays_the_pods(
    tmp_path: Path,
) -> None:
    job = {"command": USERS_TRAINER, "initCheckpoint": "/input/m/ckpt"}
    with pytest.raises(LocalDataError) as raised:
        local_data(config(BUCKET, job), output(tmp_path))
    assert "(here /input/m/ckpt): /input/m/ckpt does not exist" in str(raised.value)


def test_a_run_with_published_checkpoints_resumes_them_unchecked(tmp_path: Path) -> None:
    # Its own checkpoints win over job.initCheckpoint, which may be gone by now.
    checkpoints = output(tmp_path) / "checkpoints"
    checkpoints.mkdir(parents=True)
    (checkpoints / "ckpt-100.sha256").write_text("")  # a published step's manifest
    job = {"command": USERS_TRAINER, "initCheckpoint": "/data/gone/ckpt"}
    got = local_data(config(job=job), output(tmp_path))
    assert got.init_checkpoint == str(tmp_path / "volume" / "gone" / "ckpt")
    (checkpoints / "ckpt-100.sha256").unlink()  # unpublished: checked again
    with pytest.raises(LocalDataError, match="does not exist"):
        local_data(config(job=job), output(tmp_path))
