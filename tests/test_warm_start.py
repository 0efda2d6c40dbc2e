"""What `--init-checkpoint` accepts (trainer/warm_start.py), with checkpoint files written here
by hand: a manifest in `sha256sum` format (`<hex>  <name>`, what `sha256sum -c` reads) over an
index and one data shard. A damaged or empty init checkpoint is refused before any weight is
read; a good one is restored without changing its directory."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from trainer.checkpoint_store import CheckpointStore
from trainer.settings import parse_settings
from trainer.warm_start import (
    InitCheckpointError,
    check_init_checkpoint,
    restore_init_checkpoint,
    starts_from,
)

INDEX = b"index of step 2000"
SHARD = bytes(range(256)) * 8


def write_by_hand(directory: Path, step: int, manifest: bool = True) -> Path:
    """ckpt-<step>.index, ckpt-<step>.data-00000-of-00001 and (published) its manifest."""
    directory.mkdir(parents=True, exist_ok=True)
    files = {f"ckpt-{step}.index": INDEX, f"ckpt-{step}.data-00000-of-00001": SHARD}
    for name, data in files.items():
        (directory / name).write_bytes(data)
    if manifest:
        lines = [f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in files.items()]
        (directory / f"ckpt-{step}.sha256").write_text("".join(lines))
    return directory / f"ckpt-{step}"


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


class Restorer:
    def __init__(self) -> None:
        self.restored: list[Path] = []

    def __call__(self, prefix: Path) -> None:
        self.restored.append(prefix)


def test_a_directory_s_newest_intact_checkpoint_is_restored(tmp_path: Path) -> None:
    write_by_hand(tmp_path / "run-1", 1000)
    newest = write_by_hand(tmp_path / "run-1", 2000)
    before = tree(tmp_path)
    restore = Restorer()
    assert restore_init_checkpoint(tmp_path / "run-1", restore) == newest
    assert restore.restored == [newest]
    assert tree(tmp_path) == before  # another run's checkpoints: read, never changed


def test_an_empty_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(InitCheckpointError, match="holds no published checkpoint"):
        check_init_checkpoint(tmp_path / "empty")


def test_a_directory_of_unpublished_files_is_refused(tmp_path: Path) -> None:
    # A save interrupted before its manifest: not a checkpoint.
    write_by_hand(tmp_path / "run-1", 2000, manifest=False)
    with pytest.raises(InitCheckpointError, match="holds no published checkpoint"):
        check_init_checkpoint(tmp_path / "run-1")


def test_a_prefix_whose_data_does_not_match_its_manifest_is_not_restored(
    tmp_path: Path,
) -> None:
    prefix = write_by_hand(tmp_path / "run-1", 2000)
    shard = tmp_path / "run-1" / "ckpt-2000.data-00000-of-00001"
    shard.write_bytes(SHARD[:-1])  # truncated by one byte
    restore = Restorer()
    with pytest.raises(InitCheckpointError, match=r"ckpt-2000\.data-00000-of-00001") as raised:
        restore_init_checkpoint(prefix, restore)
    assert "truncated or altered" in str(raised.value)
    assert restore.restored == []


def test_a_directory_whose_only_checkpoint_is_altered_is_not_restored(tmp_path: Path) -> None:
    write_by_hand(tmp_path / "run-1", 2000)
    (tmp_path / "run-1" / "ckpt-2000.index").write_bytes(b"index of step 2001")
    before = tree(tmp_path)
    restore = Restorer()
    with pytest.raises(InitCheckpointError, match="does not match its SHA-256"):
        restore_init_checkpoint(tmp_path / "run-1", restore)
    assert restore.restored == []
    assert tree(tmp_path) == before  # nothing set aside in another run's directory


def test_a_prefix_without_manifest_is_another_program_s_and_restored_as_it_is(
    tmp_path: Path,
) -> None:
    prefix = write_by_hand(tmp_path / "theirs", 7, manifest=False)
    restore = Restorer()
    assert restore_init_checkpoint(prefix, restore) == prefix
    assert restore.restored == [prefix]


def test_a_prefix_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InitCheckpointError, match="does not exist"):
        check_init_checkpoint(tmp_path / "ckpt-5")


def test_only_a_new_run_starts_from_the_init_checkpoint(tmp_path: Path) -> None:
    """docs/data.md: a run with checkpoints of its own resumes from those and never reads the
    init checkpoint again; without `--init-checkpoint` there is none."""
    init = tmp_path / "before" / "checkpoints"
    output = tmp_path / "out"
    fresh = parse_settings([f"--output-dir={output}", f"--init-checkpoint={init}"], {})
    assert starts_from(fresh) == init
    assert starts_from(parse_settings([f"--output-dir={output}"], {})) is None
    write_by_hand(output / "checkpoints", 40)  # the run saved its own
    assert starts_from(fresh) is None


def test_the_refusals_name_the_setting_and_what_to_name(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InitCheckpointError) as error:
        check_init_checkpoint(empty)
    assert str(error.value) == (
        f"--init-checkpoint / TFTRAIN_INIT_CHECKPOINT {empty} holds no published checkpoint "
        "(ckpt-<step>.sha256): name a run's checkpoints directory or one checkpoint's prefix"
    )
    missing = tmp_path / "ckpt-7"
    with pytest.raises(InitCheckpointError) as error:
        check_init_checkpoint(missing)
    assert str(error.value) == (
        f"--init-checkpoint / TFTRAIN_INIT_CHECKPOINT {missing} does not exist: name a "
        "directory of checkpoints, or a checkpoint prefix such as "
        ".../checkpoints/ckpt-2000 (with its .index file)"
    )


def test_a_directory_whose_checkpoints_go_before_the_restore_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Published when checked, then gone before the restore (another run's retention set
    # them aside meanwhile): nothing restored, and the message names the directory.
    write_by_hand(tmp_path / "run-1", 1000)
    monkeypatch.setattr(CheckpointStore, "resume", lambda self, restore, may_change: None)
    restore = Restorer()
    with pytest.raises(InitCheckpointError) as error:
        restore_init_checkpoint(tmp_path / "run-1", restore)
    assert str(error.value) == (
        f"--init-checkpoint / TFTRAIN_INIT_CHECKPOINT {tmp_path / 'run-1'}: "
        "no checkpoint there restores"
    )
    assert restore.restored == []
