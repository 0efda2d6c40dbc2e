"""Checkpoint files on disk: publishing one so that a crash cannot leave it looking valid,
finding the newest intact one, setting damaged ones aside, keeping the newest few.

Pure Python: TensorFlow writes and reads the files (`outputs.Checkpoints`); this module
decides which of them count. `<output>/checkpoints/` holds:

    ckpt-<step>.index, ckpt-<step>.data-<i>-of-<n>   what tf.train.Checkpoint.write wrote
    ckpt-<step>.sha256     the manifest: each of those files' SHA-256 (`sha256sum -c` reads
                           it). Written last: a checkpoint exists once its manifest does,
                           and is intact while every file still matches it
    checkpoint             TensorFlow's state file, for tf.train.latest_checkpoint and other
                           tools; rewritten after every change, never read here
    damaged/ckpt-<step>.<UTC time>/   a checkpoint that did not restore, with reason.txt

Publishing, in this order: TensorFlow writes the files (into `ckpt-<step>_temp/`, then
renames them into place); each file is fsynced; the manifest is written under a temporary
name, fsynced and renamed into place; the directory is fsynced. A crash before that rename
leaves files without a manifest, which are never restored. A rename within one directory
is atomic on a local file system and on NFS (the NAS), and with NFS's close-to-open
consistency a process that opens the manifest after the rename reads the data fsynced
before it. Only then are the state file rewritten and old checkpoints deleted, each
manifest first, so a crash mid-deletion leaves an unpublished leftover, not a published
checkpoint with files missing.

Resuming trusts nothing it has not checked. The candidates are the `ckpt-<step>` files the
directory holds, not what the state file says (it may be garbled, empty, or name a
checkpoint that is gone). Newest first, the first whose files match its manifest and which
TensorFlow restores completely wins. The newer ones that failed are named in the log and
moved to `damaged/`: never deleted, and out of the way of the checkpoints training goes on
to write. If checkpoints exist but none restores, nothing is changed and
`NoUsableCheckpoint` names each one and what is wrong with it.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from trainer.checksums import file_sha256, format_sha256sums, parse_sha256sums
from trainer.errors import NoUsableCheckpoint
from trainer.output_dir import OutputPaths

STATE_FILE = "checkpoint"
DAMAGED_DIR = "damaged"
MANIFEST_SUFFIX = ".sha256"

# Every file of a checkpoint: TensorFlow's `ckpt-<step>.*` and `ckpt-<step>_temp/`, and
# `.ckpt-<step>.sha256.tmp-<pid>`, a manifest that was being written.
_CHECKPOINT_FILE = re.compile(r"\.?ckpt-(\d+)(?:\..*|_temp)")


class Damaged(Exception):
    """This checkpoint cannot be used; the message, one line, says why."""


class Unpublished(Damaged):
    """Files without a manifest: a save that never finished, not a checkpoint."""


@dataclass(frozen=True)
class Candidate:
    step: int
    paths: tuple[Path, ...]  # everything in the directory that belongs to this step

    @property
    def name(self) -> str:
        return f"ckpt-{self.step}"


class CheckpointStore:
    """The checkpoints in one directory, named by global step."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def prefix(self, step: int) -> Path:
        """What TensorFlow's write and read take: the path without the file suffixes."""
        return self.directory / f"ckpt-{step}"

    def manifest(self, step: int) -> Path:
        return self.directory / f"ckpt-{step}{MANIFEST_SUFFIX}"

    def candidates(self) -> list[Candidate]:
        """Every step with any file here, published or not, newest first."""
        try:
            names = os.listdir(self.directory)
        except (FileNotFoundError, NotADirectoryError):  # no directory: no checkpoint yet
            return []
        by_step: defaultdict[int, list[Path]] = defaultdict(list)
        for name in names:
            if match := _CHECKPOINT_FILE.fullmatch(name):
                by_step[int(match.group(1))].append(self.directory / name)
        return [
            Candidate(step, tuple(sorted(paths)))
            for step, paths in sorted(by_step.items(), reverse=True)
        ]

    def published_steps(self) -> list[int]:
        """Steps whose manifest exists, newest first; `verify` tells whether they are intact."""
        return [c.step for c in self.candidates() if self.manifest(c.step) in c.paths]

    def verify(self, step: int) -> None:
        """Raise `Damaged` unless the manifest lists a complete checkpoint and every file
        matches it. Reads all of it: TensorFlow's own checks miss some damage (a truncated
        data file ended in an IndexError, and a deleted index looks like no checkpoint)."""
        manifest = self.manifest(step)
        try:
            listed = parse_sha256sums(manifest.read_text())
        except FileNotFoundError:
            raise Unpublished(
                f"unpublished: it has no manifest {manifest.name} (its save was interrupted, "
                "or another program wrote it)"
            ) from None
        except (OSError, ValueError) as error:
            raise Damaged(f"its manifest {manifest.name} is unreadable: {error}") from None
        _check_complete(step, listed)
        for name, digest in listed.items():
            path = self.directory / name
            try:
                actual = file_sha256(path)
            except FileNotFoundError:
                raise Damaged(f"{name} is missing") from None
            except OSError as error:
                raise Damaged(f"{name} is unreadable: {error.strerror}") from None
            if actual != digest:
                raise Damaged(
                    f"{name} ({path.stat().st_size} bytes) does not match its SHA-256 in "
                    f"{manifest.name}: truncated or altered"
                )

    def resume(self, restore: Callable[[Path], None], may_change: bool) -> int | None:
        """Restore the newest checkpoint that is intact and that `restore` (which raises
        `Damaged` unless it restored everything) accepts, and return its step; None if
        there is none to resume from. `may_change`: this process writes here, and sets the
        failed ones aside (other processes only read)."""
        rejected: list[tuple[Candidate, Damaged]] = []
        for candidate in self.candidates():
            try:
                self.verify(candidate.step)
                restore(self.prefix(candidate.step))
            except Damaged as damaged:
                rejected.append((candidate, damaged))
                continue
            self._put_aside(rejected, may_change)
            return candidate.step
        if any(not isinstance(damaged, Unpublished) for _, damaged in rejected):
            reasons = "; ".join(f"{candidate.name}: {damaged}" for candidate, damaged in rejected)
            raise NoUsableCheckpoint(
                f"none of the {len(rejected)} checkpoints in {self.directory} restores, and "
                f"training from step 0 would write over them, so nothing was changed ({reasons})."
                " Restore a good copy, or move them away to start from step 0"
            )
        # At most leftovers of saves that never finished: no checkpoint was ever published,
        # so starting from step 0 loses nothing.
        self._put_aside(rejected, may_change)
        return None

    def _put_aside(self, rejected: list[tuple[Candidate, Damaged]], may_change: bool) -> None:
        for candidate, damaged in rejected:
            if may_change:
                where = self._set_aside(candidate, str(damaged))
                print(f"Checkpoint {candidate.name} is damaged ({damaged}); moved to {where}")
            else:
                print(f"Checkpoint {candidate.name} is damaged ({damaged}); skipped")
        if may_change:
            self._write_state()

    def make_room(self, step: int) -> None:
        """Set aside whatever is where checkpoint `step` is about to be written. Normally
        nothing is: `resume` moved every newer leftover away. Writing over files could
        destroy the only copy of a good checkpoint, so this never does."""
        for candidate in self.candidates():
            if candidate.step == step:
                reason = f"found where a new checkpoint of step {step} was about to be written"
                where = self._set_aside(candidate, reason)
                print(f"Checkpoint {candidate.name}: {reason}; moved to {where}")

    def publish(self, step: int, keep: int) -> None:
        """Make the checkpoint TensorFlow has just written at `prefix(step)` count, then
        keep only the newest `keep` (>= 2, so the one before it always survives)."""
        files = [
            path
            for path in self._candidate(step).paths
            if path.name == f"ckpt-{step}.index" or _data_shard(step, path.name)
        ]
        for path in files:
            _fsync(path)
        _fsync(self.directory)
        listed = {path.name: file_sha256(path) for path in files}
        _check_complete(step, listed)  # what TensorFlow wrote is a whole checkpoint
        _atomic_write(self.manifest(step), format_sha256sums(listed))
        self._prune(keep)
        self._write_state()

    def _candidate(self, step: int) -> Candidate:
        found = [c for c in self.candidates() if c.step == step]
        return found[0] if found else Candidate(step, ())

    def _prune(self, keep: int) -> None:
        """Delete every checkpoint older than the `keep` newest published ones, and any
        unpublished leftover among them (an interrupted save or deletion)."""
        published = self.published_steps()
        if len(published) <= keep:
            return
        oldest_kept = published[keep - 1]
        for candidate in self.candidates():
            if candidate.step < oldest_kept:
                for path in sorted(candidate.paths, key=lambda p: p.suffix != MANIFEST_SUFFIX):
                    if path.is_dir():
                        shutil.rmtree(path, ignore_errors=True)  # TensorFlow's ckpt-<step>_temp
                    else:
                        path.unlink(missing_ok=True)

    def _set_aside(self, candidate: Candidate, reason: str) -> Path:
        """Move every file of `candidate` into a new directory under `damaged/`."""
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        target = self.directory / DAMAGED_DIR / f"{candidate.name}.{stamp}"
        for attempt in range(1, 1000):
            try:
                target.mkdir(parents=True)
                break
            except FileExistsError:
                target = target.with_name(f"{candidate.name}.{stamp}.{attempt}")
        # The manifest first: from then on, a crash leaves what remains unpublished.
        for path in sorted(candidate.paths, key=lambda p: p.suffix != MANIFEST_SUFFIX):
            path.rename(target / path.name)
        _atomic_write(target / "reason.txt", reason + "\n")
        _fsync(self.directory)
        return target

    def _write_state(self) -> None:
        """TensorFlow's `checkpoint` file, listing the published checkpoints."""
        steps = sorted(self.published_steps())
        if not steps:
            return
        lines = [f'model_checkpoint_path: "ckpt-{steps[-1]}"']
        lines += [f'all_model_checkpoint_paths: "ckpt-{step}"' for step in steps]
        _atomic_write(self.directory / STATE_FILE, "\n".join(lines) + "\n")


def _data_shard(step: int, name: str) -> re.Match[str] | None:
    return re.fullmatch(rf"ckpt-{step}\.data-(\d{{5}})-of-(\d{{5}})", name)


def _check_complete(step: int, names: Iterable[str]) -> None:
    """Raise `Damaged` unless `names` are exactly an index and a whole set of data shards."""
    names = sorted(names)
    index = f"ckpt-{step}.index"
    shards = [_data_shard(step, name) for name in names if name != index]
    numbers = [int(shard.group(1)) for shard in shards if shard]
    totals = {int(shard.group(2)) for shard in shards if shard}
    if not (
        index in names
        and all(shards)
        and totals == {len(shards)}
        and sorted(numbers) == list(range(len(shards)))
    ):
        raise Damaged(f"its manifest lists no index and whole set of data shards, but {names}")


def _fsync(path: Path) -> None:
    """Flush a file's or directory's data to the disk (on NFS: commit it on the server)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    except OSError as error:
        # Some file systems cannot sync a directory; they make a rename durable by itself.
        if error.errno not in (errno.EINVAL, errno.ENOTSUP) or not path.is_dir():
            raise
    finally:
        os.close(descriptor)


def _atomic_write(path: Path, text: str) -> None:
    """Write `text` to `path` so that a reader sees the old content or all of the new."""
    partial = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with partial.open("w") as file:
        file.write(text)
        file.flush()
        os.fsync(file.fileno())
    os.replace(partial, path)
    _fsync(path.parent)


def latest_saved_step(paths: OutputPaths) -> int | None:
    """The newest published checkpoint's step (its files are not read)."""
    steps = CheckpointStore(paths.checkpoints).published_steps()
    return steps[0] if steps else None
