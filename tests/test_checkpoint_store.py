"""The checkpoint directory's rules without TensorFlow: what counts as published, what
verifies, what resume sets aside, what retention deletes. Files stand in for TensorFlow's;
the store only reads their bytes. `test_checkpoint_resume.py` runs the real trainer."""

from __future__ import annotations

import errno
import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from trainer.checkpoint_store import DAMAGED_DIR, CheckpointStore, Damaged
from trainer.errors import NoUsableCheckpoint


def write_checkpoint(store: CheckpointStore, step: int, keep: int = 10) -> None:
    """What TensorFlow's write leaves (an index and one data shard), then published."""
    prefix = store.prefix(step)
    prefix.with_name(f"{prefix.name}.index").write_bytes(f"index {step}".encode())
    prefix.with_name(f"{prefix.name}.data-00000-of-00001").write_bytes(bytes(range(256)) * 40)
    store.publish(step, keep)


def tree(root: Path) -> dict[str, str]:
    """Every file under `root` by relative path, with its SHA-256."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def store(tmp_path: Path) -> CheckpointStore:
    store = CheckpointStore(tmp_path / "checkpoints")
    store.directory.mkdir()
    for step in (10, 20, 30):
        write_checkpoint(store, step)
    return store


def accept_all(_prefix: Path) -> None:
    pass


def test_publish_writes_a_manifest_and_the_state_file(store: CheckpointStore) -> None:
    assert store.published_steps() == [30, 20, 10]
    manifest = store.manifest(30).read_text().splitlines()
    assert [line.split("  ")[1] for line in manifest] == [
        "ckpt-30.data-00000-of-00001",
        "ckpt-30.index",
    ]
    state = (store.directory / "checkpoint").read_text()
    assert state.startswith('model_checkpoint_path: "ckpt-30"\n')
    assert 'all_model_checkpoint_paths: "ckpt-10"' in state
    for step in (10, 20, 30):
        store.verify(step)


def test_retention_keeps_the_newest_and_clears_older_leftovers(store: CheckpointStore) -> None:
    leftover = store.directory / "ckpt-5_temp"  # TensorFlow's, from an interrupted save
    leftover.mkdir()
    (leftover / "part-00000-of-00001.data-00000-of-00001").write_bytes(b"x")
    write_checkpoint(store, 40, keep=2)
    assert store.published_steps() == [40, 30]
    assert sorted(path.name for path in store.directory.iterdir()) == [
        "checkpoint",
        *(f"ckpt-{step}.{suffix}" for step in (30, 40)
          for suffix in ("data-00000-of-00001", "index", "sha256")),
    ]  # fmt: skip


def damage_truncate(store: CheckpointStore) -> None:
    data = store.directory / "ckpt-30.data-00000-of-00001"
    data.write_bytes(data.read_bytes()[:1000])


def damage_flip(store: CheckpointStore) -> None:
    data = store.directory / "ckpt-30.data-00000-of-00001"
    raw = bytearray(data.read_bytes())
    raw[5000] ^= 0xFF
    data.write_bytes(bytes(raw))


def damage_delete_index(store: CheckpointStore) -> None:
    (store.directory / "ckpt-30.index").unlink()


def damage_unpublish(store: CheckpointStore) -> None:
    store.manifest(30).unlink()  # the save was killed before its manifest


def damage_garble_manifest(store: CheckpointStore) -> None:
    store.manifest(30).write_bytes(b"\xff\xfe not a manifest")


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (damage_truncate, "ckpt-30.data-00000-of-00001 (1000 bytes) does not match its SHA-256"),
        (damage_flip, "ckpt-30.data-00000-of-00001 (10240 bytes) does not match its SHA-256"),
        (damage_delete_index, "ckpt-30.index is missing"),
        (damage_unpublish, "unpublished: it has no manifest ckpt-30.sha256"),
        (damage_garble_manifest, "its manifest ckpt-30.sha256 is unreadable"),
    ],
)
def test_a_damaged_newest_is_set_aside_and_the_one_before_restored(
    store: CheckpointStore, damage, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    damage(store)
    before = tree(store.directory)
    restored: list[str] = []
    assert store.resume(lambda prefix: restored.append(prefix.name), may_change=True) == 20
    assert restored == ["ckpt-20"]  # the damaged one never reached TensorFlow
    out = capsys.readouterr().out
    assert f"Checkpoint ckpt-30 is damaged ({reason}" in out
    [aside] = (store.directory / DAMAGED_DIR).iterdir()
    assert aside.name.startswith("ckpt-30.")
    assert reason in (aside / "reason.txt").read_text()
    after = tree(store.directory)
    # Every file of ckpt-30 moved, byte for byte; ckpt-10 and ckpt-20 untouched.
    for name, digest in before.items():
        if name.startswith("ckpt-30"):
            assert after[f"{DAMAGED_DIR}/{aside.name}/{name}"] == digest
        elif name != "checkpoint":
            assert after[name] == digest
    assert store.published_steps() == [20, 10]
    assert '"ckpt-20"' in (store.directory / "checkpoint").read_text().splitlines()[0]


def test_a_checkpoint_tensorflow_cannot_restore_falls_back_too(store: CheckpointStore) -> None:
    def restore(prefix: Path) -> None:
        if prefix.name == "ckpt-30":
            raise Damaged("TensorFlow cannot restore it completely: Unresolved object")

    assert store.resume(restore, may_change=True) == 20
    assert (store.directory / DAMAGED_DIR).exists()


def test_other_processes_only_skip(store: CheckpointStore) -> None:
    damage_truncate(store)
    before = tree(store.directory)
    assert store.resume(accept_all, may_change=False) == 20
    assert tree(store.directory) == before


def test_the_state_file_is_not_trusted(store: CheckpointStore) -> None:
    for garbage in (b"", b"model_checkpoint_path: \xff{{", b'model_checkpoint_path: "ckpt-99"'):
        (store.directory / "checkpoint").write_bytes(garbage)
        assert store.resume(accept_all, may_change=False) == 30


def test_when_nothing_restores_nothing_changes(store: CheckpointStore) -> None:
    damage_truncate(store)
    (store.directory / "ckpt-20.index").unlink()
    damage_unpublish(store)
    store.manifest(10).write_text("garbage\n")
    before = tree(store.directory)
    with pytest.raises(NoUsableCheckpoint) as error:
        store.resume(accept_all, may_change=True)
    message = str(error.value)
    assert message.startswith(f"none of the 3 checkpoints in {store.directory} restores")
    for text in ("ckpt-30: unpublished", "ckpt-20: ckpt-20.index is missing", "ckpt-10: its"):
        assert text in message
    assert "\n" not in message
    assert tree(store.directory) == before


def test_only_leftovers_of_unfinished_saves_start_from_zero(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    (tmp_path / "ckpt-10.index").write_bytes(b"killed before its manifest")
    assert store.resume(accept_all, may_change=True) is None
    assert not (tmp_path / "ckpt-10.index").exists()
    assert list((tmp_path / DAMAGED_DIR).glob("ckpt-10.*/ckpt-10.index"))


def test_no_directory_no_checkpoint(tmp_path: Path) -> None:
    assert CheckpointStore(tmp_path / "missing").resume(accept_all, may_change=True) is None


def test_a_new_save_never_writes_over_files_of_its_step(store: CheckpointStore) -> None:
    digest = tree(store.directory)["ckpt-30.index"]
    store.make_room(30)
    [aside] = (store.directory / DAMAGED_DIR).iterdir()
    assert tree(aside)["ckpt-30.index"] == digest
    assert store.published_steps() == [20, 10]


# Which sets of files make a whole checkpoint of step 40, worked from TensorFlow's naming:
# one `ckpt-40.index` and the shards `ckpt-40.data-<i>-of-<n>` for every i from 0 to n-1.
WHOLE = [
    ("ckpt-40.index", "ckpt-40.data-00000-of-00001"),
    ("ckpt-40.index", "ckpt-40.data-00000-of-00002", "ckpt-40.data-00001-of-00002"),
]
PARTIAL = [
    ("ckpt-40.index",),
    ("ckpt-40.data-00000-of-00001",),
    ("ckpt-40.index", "ckpt-40.data-00000-of-00002"),
    ("ckpt-40.index", "ckpt-40.data-00001-of-00002"),
    ("ckpt-40.index", "ckpt-40.data-00001-of-00001"),
    ("ckpt-40.index", "ckpt-40.data-00000-of-00002", "ckpt-40.data-00000-of-00001"),
    ("ckpt-40.index", "ckpt-40.data-00000-of-00001", "ckpt-40.extra"),
    ("ckpt-41.index", "ckpt-40.data-00000-of-00001"),
]


def write_with_manifest(store: CheckpointStore, names: tuple[str, ...]) -> None:
    """The files, and a manifest listing exactly them with their true SHA-256."""
    lines = []
    for name in names:
        data = f"bytes of {name}".encode()
        (store.directory / name).write_bytes(data)
        lines.append(f"{hashlib.sha256(data).hexdigest()}  {name}\n")
    store.manifest(40).write_text("".join(lines))


@pytest.mark.parametrize("names", WHOLE)
def test_a_manifest_of_a_whole_checkpoint_verifies(
    store: CheckpointStore, names: tuple[str, ...]
) -> None:
    write_with_manifest(store, names)
    store.verify(40)


@pytest.mark.parametrize("names", PARTIAL)
def test_a_manifest_of_part_of_a_checkpoint_does_not_verify(
    store: CheckpointStore, names: tuple[str, ...]
) -> None:
    # Every listed file matches: only the set of names is wrong.
    write_with_manifest(store, names)
    with pytest.raises(Damaged, match="lists no index and whole set of data shards"):
        store.verify(40)
    restored: list[str] = []
    assert store.resume(lambda prefix: restored.append(prefix.name), may_change=False) == 30


@pytest.mark.parametrize("names", PARTIAL[:5])
def test_publishing_part_of_a_checkpoint_is_refused(
    store: CheckpointStore, names: tuple[str, ...]
) -> None:
    # TensorFlow left only some of its files (a lost shard): no manifest, not published.
    for name in names:
        (store.directory / name).write_bytes(f"bytes of {name}".encode())
    with pytest.raises(Damaged, match="lists no index and whole set of data shards"):
        store.publish(40, keep=10)
    assert not store.manifest(40).exists()
    assert store.published_steps() == [30, 20, 10]
    assert (
        (store.directory / "checkpoint")
        .read_text()
        .startswith('model_checkpoint_path: "ckpt-30"\n')
    )


# What a user reads, word for word, when resuming meets a checkpoint it cannot use.
def test_an_unpublished_checkpoint_is_named_with_its_likely_causes(store: CheckpointStore) -> None:
    damage_unpublish(store)
    with pytest.raises(Damaged) as raised:
        store.verify(30)
    assert str(raised.value) == (
        "unpublished: it has no manifest ckpt-30.sha256 (its save was interrupted, or another "
        "program wrote it)"
    )


def test_a_listed_file_that_cannot_be_read_is_named(store: CheckpointStore) -> None:
    (store.directory / "ckpt-30.index").unlink()
    (store.directory / "ckpt-30.index").mkdir()  # open() of a directory: EISDIR
    with pytest.raises(Damaged) as raised:
        store.verify(30)
    assert str(raised.value) == "ckpt-30.index is unreadable: Is a directory"


def test_when_nothing_restores_each_reason_is_listed_and_the_way_out_said(
    store: CheckpointStore,
) -> None:
    damage_truncate(store)
    (store.directory / "ckpt-20.index").unlink()
    (store.directory / "ckpt-10.index").unlink()
    with pytest.raises(NoUsableCheckpoint) as error:
        store.resume(accept_all, may_change=True)
    assert str(error.value).endswith(
        "; ckpt-20: ckpt-20.index is missing; ckpt-10: ckpt-10.index is missing)."
        " Restore a good copy, or move them away to start from step 0"
    )


def test_a_reader_names_what_it_skips(
    store: CheckpointStore, capsys: pytest.CaptureFixture[str]
) -> None:
    damage_unpublish(store)
    assert store.resume(accept_all, may_change=False) == 20
    assert capsys.readouterr().out == (
        "Checkpoint ckpt-30 is damaged (unpublished: it has no manifest ckpt-30.sha256 (its "
        "save was interrupted, or another program wrote it)); skipped\n"
    )


def test_publishing_a_step_with_no_files_is_refused(store: CheckpointStore) -> None:
    with pytest.raises(Damaged, match="lists no index and whole set of data shards, but"):
        store.publish(50, keep=10)
    assert store.published_steps() == [30, 20, 10]


STAMP = "20260102T030405Z"  # 2026-01-02 03:04:05 UTC


@pytest.fixture
def fixed_utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The clock at STAMP in UTC, and the machine's zone 8 hours east (China Standard Time,
    where the cluster runs): a directory name in local time would read 11:04:05."""
    import time

    monkeypatch.setenv("TZ", "CST-8")
    time.tzset()
    now, gmtime, localtime = 1767323045, time.gmtime, time.localtime
    monkeypatch.setattr(time, "gmtime", lambda secs=None: gmtime(now if secs is None else secs))
    monkeypatch.setattr(
        time, "localtime", lambda secs=None: localtime(now if secs is None else secs)
    )
    yield
    monkeypatch.undo()
    time.tzset()


def test_a_set_aside_directory_is_named_by_utc_time_and_says_why(
    store: CheckpointStore, fixed_utc: None, capsys: pytest.CaptureFixture[str]
) -> None:
    store.make_room(30)
    aside = store.directory / DAMAGED_DIR / f"ckpt-30.{STAMP}"
    assert sorted(path.name for path in aside.iterdir()) == [
        "ckpt-30.data-00000-of-00001", "ckpt-30.index", "ckpt-30.sha256", "reason.txt"
    ]  # fmt: skip
    reason = "found where a new checkpoint of step 30 was about to be written"
    assert (aside / "reason.txt").read_text() == reason + "\n"
    assert capsys.readouterr().out == f"Checkpoint ckpt-30: {reason}; moved to {aside}\n"


def test_set_aside_twice_in_one_second_numbers_the_second(
    store: CheckpointStore, fixed_utc: None
) -> None:
    store.make_room(30)
    write_checkpoint(store, 30)
    store.make_room(30)
    write_checkpoint(store, 30)
    store.make_room(30)
    names = sorted(path.name for path in (store.directory / DAMAGED_DIR).iterdir())
    assert names == [f"ckpt-30.{STAMP}", f"ckpt-30.{STAMP}.1", f"ckpt-30.{STAMP}.2"]


def test_setting_aside_moves_the_manifest_first(
    store: CheckpointStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # From the first move on, a crash leaves what remains unpublished, never a published
    # checkpoint with files missing.
    moved: list[str] = []
    rename = Path.rename

    def recording(self: Path, target: Path) -> Path:
        moved.append(self.name)
        return rename(self, target)

    monkeypatch.setattr(Path, "rename", recording)
    store.make_room(30)
    assert moved[0] == "ckpt-30.sha256"
    assert sorted(moved) == ["ckpt-30.data-00000-of-00001", "ckpt-30.index", "ckpt-30.sha256"]


def test_pruning_deletes_each_old_manifest_before_its_files(
    store: CheckpointStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A crash mid-deletion leaves an unpublished leftover, never a published checkpoint
    # with files missing.
    deleted: list[str] = []
    unlink = Path.unlink

    def recording(self: Path, missing_ok: bool = False) -> None:
        deleted.append(self.name)
        unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", recording)
    write_checkpoint(store, 40, keep=2)
    for step in (10, 20):
        mine = [name for name in deleted if name.startswith(f"ckpt-{step}.")]
        assert mine[0] == f"ckpt-{step}.sha256"
        assert sorted(mine) == [
            f"ckpt-{step}.data-00000-of-00001", f"ckpt-{step}.index", f"ckpt-{step}.sha256"
        ]  # fmt: skip


def test_pruning_goes_on_past_what_another_process_already_deleted(
    store: CheckpointStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every old file is gone by the time this process deletes it (a second writer pruning
    # too): the save still succeeds.
    unlink = Path.unlink

    def raced(self: Path, missing_ok: bool = False) -> None:
        unlink(self)  # the other process's deletion
        unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", raced)
    write_checkpoint(store, 40, keep=3)
    assert store.published_steps() == [40, 30, 20]


def test_a_leftover_directory_that_cannot_be_removed_does_not_fail_the_save(
    store: CheckpointStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    leftover = store.directory / "ckpt-5_temp"  # TensorFlow's, from an interrupted save
    leftover.mkdir()

    def refused(path: object, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(os, "rmdir", refused)
    write_checkpoint(store, 40, keep=3)
    assert store.published_steps() == [40, 30, 20]


def test_the_state_file_is_tensorflow_s_text_format(store: CheckpointStore) -> None:
    # CheckpointState in protobuf text format, what tf.train.get_checkpoint_state parses.
    assert (store.directory / "checkpoint").read_text() == (
        'model_checkpoint_path: "ckpt-30"\n'
        'all_model_checkpoint_paths: "ckpt-10"\n'
        'all_model_checkpoint_paths: "ckpt-20"\n'
        'all_model_checkpoint_paths: "ckpt-30"\n'
    )


def test_retention_acts_only_once_more_than_keep_are_published(store: CheckpointStore) -> None:
    leftover = store.directory / "ckpt-5_temp"
    leftover.mkdir()
    write_checkpoint(store, 40, keep=4)  # 4 published, 4 kept: nothing to retire
    assert store.published_steps() == [40, 30, 20, 10]
    assert leftover.is_dir()


@pytest.mark.parametrize(
    ("is_dir", "code", "tolerated"),
    [
        # Some file systems cannot sync a directory (EINVAL, ENOTSUP): a rename there is
        # durable by itself. A file that cannot be synced, or any other error, is a failure.
        (True, errno.EINVAL, True),
        (True, errno.ENOTSUP, True),
        (False, errno.EINVAL, False),
        (True, errno.EIO, False),
        (False, errno.EIO, False),
    ],
)
def test_which_sync_failures_are_tolerated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, is_dir: bool, code: int, tolerated: bool
) -> None:
    import os

    from trainer import checkpoint_store

    path = tmp_path / "x"
    if is_dir:
        path.mkdir()
    else:
        path.write_bytes(b"x")

    def failing(descriptor: int) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", failing)
    if tolerated:
        checkpoint_store._fsync(path)
    else:
        with pytest.raises(OSError):
            checkpoint_store._fsync(path)
