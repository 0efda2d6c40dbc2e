"""The trainer's outputs (trainer.outputs) with a tiny Keras model in this process: what a
save leaves on disk, what a restart restores, the export and metrics.txt as docs/trainer.md
("Output dir") and outputs.py's layout describe them. The multi-process runs that save under
each strategy are @slow (test_fault_tolerance.py, test_checkpoint_resume.py)."""

from __future__ import annotations

from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

from trainer import outputs
from trainer.checkpoint_store import Damaged, latest_saved_step
from trainer.output_dir import OutputPaths
from trainer.outputs import (
    Checkpoints,
    export_saved_model,
    latest_checkpoint,
    restore_errors,
    restore_model,
    resume_model,
    write_metrics,
)
from trainer.plan import Plan, Role

WRITER = Plan("single", Role.TRAINER, is_writer=True)
MWMS_WORKER_1 = Plan("multi_worker_mirrored", Role.TRAINER, is_writer=False)


def tiny(seed: int, outputs_: int = 2) -> keras.Model:
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(outputs_)])
    return model


def state(model: keras.Model, paths: OutputPaths, plan: Plan = WRITER, keep: int = 3):  # type: ignore[no-untyped-def]
    optimizer = keras.optimizers.Adam()
    optimizer.build(model.trainable_variables)
    return Checkpoints(model, optimizer, plan, paths, keep)


def weights(model: keras.Model) -> list[np.ndarray]:
    return [w.numpy().copy() for w in model.weights]


def same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_a_save_is_published_under_its_step(tmp_path: Path) -> None:
    paths = OutputPaths(tmp_path)
    state(tiny(1), paths).save(5)
    names = sorted(p.name for p in paths.checkpoints.iterdir())
    assert {"ckpt-5.index", "ckpt-5.sha256"} <= set(names)
    assert latest_saved_step(paths) == 5
    assert latest_checkpoint(paths) == str(paths.checkpoints / "ckpt-5")


def test_nothing_saved_yet(tmp_path: Path) -> None:
    paths = OutputPaths(tmp_path)
    assert (latest_saved_step(paths), latest_checkpoint(paths)) == (None, None)
    assert resume_model(tiny(1), paths, may_change=True) is None
    assert state(tiny(1), paths).restore_latest() == 0


def test_a_restart_restores_the_newest_and_never_writes_over_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = OutputPaths(tmp_path)
    first = tiny(1)
    saved = state(first, paths, keep=2)
    kernel = first.layers[0].kernel
    for step in (10, 20):
        kernel.assign(np.full((4, 2), float(step)))
        saved.save(step)
    at_20 = weights(first)
    kernel.assign(np.full((4, 2), -1.0))
    saved.save(20)  # the same step again: already on disk, not written over
    kernel.assign(np.full((4, 2), 30.0))
    saved.save(30)
    at_30 = weights(first)
    assert sorted(p.name for p in paths.checkpoints.glob("*.sha256")) == [
        "ckpt-20.sha256",
        "ckpt-30.sha256",
    ]  # fmt: skip  (keep 2)
    check = tiny(3)
    restore_model(check, str(paths.checkpoints / "ckpt-20"))
    assert same(weights(check), at_20)

    second = tiny(2)
    assert not same(weights(second), at_30)
    restarted = state(second, paths)
    assert restarted.restore_latest() == 30
    assert same(weights(second), at_30)
    prefix = paths.checkpoints / "ckpt-30"
    assert capsys.readouterr().out == f"Resumed from checkpoint {prefix} at step 30\n"
    # A restart stopped at once saves its step again: the checkpoint stays as it was.
    second.layers[0].kernel.assign(np.zeros((4, 2)))
    restarted.save(30)
    check = tiny(3)
    assert restore_model(check, str(prefix)) == 30
    assert same(weights(check), at_30)


def test_a_worker_that_does_not_write_saves_nothing_in_the_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    private = tmp_path / "private"
    private.mkdir()
    monkeypatch.setattr(outputs.tempfile, "mkdtemp", lambda: str(private))
    paths = OutputPaths(tmp_path / "out")
    worker = state(tiny(1), paths, plan=MWMS_WORKER_1)
    worker.save(5)
    assert not paths.checkpoints.exists()
    assert (private / "ckpt.index").is_file()  # MWMS saves collectively: it saved too
    worker.discard_private_copies()
    assert not private.exists()


def test_the_writer_has_no_private_copy_to_discard(tmp_path: Path) -> None:
    writer = state(tiny(1), OutputPaths(tmp_path))
    writer.save(1)
    writer.discard_private_copies()
    assert latest_saved_step(OutputPaths(tmp_path)) == 1


def test_a_model_of_another_shape_is_a_damaged_checkpoint(tmp_path: Path) -> None:
    paths = OutputPaths(tmp_path)
    state(tiny(1), paths).save(5)
    with pytest.raises(Damaged) as error:
        restore_model(tiny(1, outputs_=3), str(paths.checkpoints / "ckpt-5"))
    assert str(error.value).startswith("TensorFlow cannot restore it completely: ")


def test_resume_model_restores_the_newest_weights(tmp_path: Path) -> None:
    paths = OutputPaths(tmp_path)
    model = tiny(1)
    state(model, paths).save(8)
    fresh = tiny(2)
    assert resume_model(fresh, paths, may_change=False) == 8
    assert same(weights(fresh), weights(model))


def test_warm_start_takes_the_weights_and_leaves_the_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = OutputPaths(tmp_path / "before")
    model = tiny(1)
    state(model, source).save(40)
    fresh = tiny(2)
    run = state(fresh, OutputPaths(tmp_path / "after"))
    capsys.readouterr()
    run.warm_start(source.checkpoints)
    assert same(weights(fresh), weights(model))
    assert capsys.readouterr().out == (
        f"Warm-started the model from {source.checkpoints / 'ckpt-40'} "
        "(fine-tuning: step 0, a fresh optimizer)\n"
    )
    assert run.restore_latest() == 0  # the new run has no checkpoint of its own


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (ValueError("Shapes (4, 2) and (4, 3) are incompatible\nmore"),
         "TensorFlow cannot restore it completely: Shapes (4, 2) and (4, 3) are incompatible"),
        (IndexError(), "TensorFlow cannot restore it completely: IndexError"),
        (AssertionError("  \n"), "TensorFlow cannot restore it completely: AssertionError"),
        (tf.errors.DataLossError(None, None, "truncated record at 120"),
         "TensorFlow cannot restore it completely: truncated record at 120"),
    ],
)  # fmt: skip
def test_how_a_failed_restore_is_named(error: Exception, message: str) -> None:
    with pytest.raises(Damaged) as raised, restore_errors():
        raise error
    assert str(raised.value) == message


@pytest.mark.parametrize(
    "error",
    [tf.errors.UnavailableError(None, None, "ps down"),
     tf.errors.CancelledError(None, None, "stopping"), KeyError("other")],
)  # fmt: skip
def test_a_lost_peer_or_another_error_is_no_damage(error: Exception) -> None:
    with pytest.raises(type(error)), restore_errors():
        raise error


def test_metrics_txt_is_name_and_number_per_line(tmp_path: Path) -> None:
    path = tmp_path / "metrics.txt"
    path.write_text("test_accuracy 0.1\n")
    write_metrics(path, {"test_accuracy": 0.9912, "global_step": 1876})
    assert path.read_text() == "test_accuracy 0.9912\nglobal_step 1876\n"
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.txt"]


def test_the_export_replaces_an_old_one_and_serves_images(tmp_path: Path) -> None:
    target = tmp_path / "saved_model"
    target.mkdir()
    (target / "old-export").write_text("")
    (tmp_path / "saved_model.partial").mkdir()  # a half-written export from a crash
    (tmp_path / "saved_model.partial" / "junk").write_text("")
    model = tiny(1)
    export_saved_model(model, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["saved_model"]
    assert not (target / "old-export").exists()
    assert (target / "saved_model.pb").is_file()
    loaded = tf.saved_model.load(str(target))
    served = loaded.serve(tf.ones((3, 4)))
    assert served.shape == (3, 2)
    np.testing.assert_allclose(served.numpy(), model(tf.ones((3, 4))).numpy(), rtol=1e-6)


def test_private_copies_already_gone_are_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's scratch directory removed under it (a tmp cleaner, a second call) does not
    fail the run at its very end."""
    private = tmp_path / "private"
    private.mkdir()
    monkeypatch.setattr(outputs.tempfile, "mkdtemp", lambda: str(private))
    worker = state(tiny(1), OutputPaths(tmp_path / "out"), plan=MWMS_WORKER_1)
    worker.save(5)
    worker.discard_private_copies()
    worker.discard_private_copies()
    assert not private.exists()


@pytest.mark.parametrize("may_change", [True, False])
def test_resume_model_sets_a_damaged_newest_aside_only_where_it_may_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], may_change: bool
) -> None:
    paths = OutputPaths(tmp_path)
    model = tiny(1)
    saved = state(model, paths)
    saved.save(8)
    at_8 = weights(model)
    model.layers[0].kernel.assign(np.zeros((4, 2)))
    saved.save(9)
    (paths.checkpoints / "ckpt-9.index").write_bytes(b"damaged")
    capsys.readouterr()
    fresh = tiny(2)
    assert resume_model(fresh, paths, may_change=may_change) == 8
    assert same(weights(fresh), at_8)
    moved = "moved to" in capsys.readouterr().out
    assert (moved, (paths.checkpoints / "ckpt-9.index").exists()) == (may_change, not may_change)


def test_a_first_export_has_nothing_to_replace(tmp_path: Path) -> None:
    """No earlier export and no half-written one: nothing to remove, and no error for it."""
    export_saved_model(tiny(1), tmp_path / "saved_model")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["saved_model"]
    assert (tmp_path / "saved_model" / "saved_model.pb").is_file()


def test_a_checkpoint_holds_the_optimizers_state_so_a_restart_goes_on_with_it(
    tmp_path: Path,
) -> None:
    """Adam's moments and its iteration count are part of the training state: a restart
    without them would take full-size first steps again (docs/trainer.md, checkpoints)."""
    paths = OutputPaths(tmp_path)
    saved = state(tiny(1), paths)
    saved.save(4)
    names = [name for name, _ in tf.train.list_variables(str(paths.checkpoints / "ckpt-4"))]
    assert any(name.startswith("optimizer/") for name in names), names
    assert "step/.ATTRIBUTES/VARIABLE_VALUE" in names


@pytest.mark.parametrize("plan", [WRITER, MWMS_WORKER_1])
def test_restore_latest_sets_a_damaged_newest_aside_only_in_the_writer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], plan: Plan
) -> None:
    paths = OutputPaths(tmp_path)
    saved = state(tiny(1), paths)
    saved.save(8)
    saved.save(9)
    (paths.checkpoints / "ckpt-9.index").write_bytes(b"damaged")
    capsys.readouterr()
    assert state(tiny(2), paths, plan=plan).restore_latest() == 8
    kept = (paths.checkpoints / "ckpt-9.index").exists()
    assert kept is not plan.is_writer


class RecordingCheckpoint:
    """tf.train.Checkpoint's read and write, recording the options each was given."""

    def __init__(self, **objects: object) -> None:
        self.options: list[tf.train.CheckpointOptions | None] = []

    def write(self, prefix: str, options: tf.train.CheckpointOptions | None = None) -> str:
        self.options.append(options)
        Path(prefix).parent.mkdir(parents=True, exist_ok=True)
        for part in (".index", ".data-00000-of-00001"):
            Path(prefix + part).write_bytes(b"")
        return prefix

    def read(self, prefix: str, options: tf.train.CheckpointOptions | None = None) -> object:
        self.options.append(options)
        return self

    def assert_consumed(self) -> object:
        return self

    def assert_existing_objects_matched(self) -> object:
        return self

    def expect_partial(self) -> object:
        return self


@pytest.mark.parametrize(
    ("plan", "device"),
    [
        # docs/trainer.md: under ParameterServerStrategy the chief does the ps' checkpoint
        # I/O (the ps need no write access); TensorFlow's device name of the chief's CPU.
        (
            Plan("parameter_server", Role.COORDINATOR, is_writer=True),
            "/job:chief/replica:0/task:0/device:CPU:0",
        ),
        (WRITER, None),
        (Plan("multi_worker_mirrored", Role.TRAINER, is_writer=True), None),
        (MWMS_WORKER_1, None),
    ],
)
def test_every_checkpoint_read_and_write_goes_through_the_chief_under_the_ps_strategy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plan: Plan, device: str | None
) -> None:
    recorders: list[RecordingCheckpoint] = []

    def recording(**objects: object) -> RecordingCheckpoint:
        recorders.append(RecordingCheckpoint(**objects))
        return recorders[-1]

    monkeypatch.setattr(outputs.tf.train, "Checkpoint", recording)
    monkeypatch.setattr(outputs, "restore_init_checkpoint", lambda path, restore: restore(path))
    paths = OutputPaths(tmp_path / "out")
    checkpoints = state(tiny(1), paths, plan=plan)
    checkpoints.save(3)
    checkpoints._restore(tmp_path / "any")
    checkpoints.warm_start(tmp_path / "init")
    used = [options for recorder in recorders for options in recorder.options]
    assert len(used) == 3
    assert [o.experimental_io_device if o else None for o in used] == [device] * 3


def test_an_export_prints_nothing_and_leaves_no_leftover_of_a_crashed_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    leftover = tmp_path / "saved_model.partial"
    leftover.mkdir()
    (leftover / "stray.txt").write_text("from an export killed half-way")
    capsys.readouterr()
    export_saved_model(tiny(1), tmp_path / "saved_model")
    assert capsys.readouterr().out == ""
    assert not (tmp_path / "saved_model" / "stray.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["saved_model"]


def test_a_save_moves_what_lies_where_it_writes_aside_instead_of_over_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = OutputPaths(tmp_path)
    paths.checkpoints.mkdir(parents=True)
    (paths.checkpoints / "ckpt-7.index").write_bytes(b"somebody's only copy")
    state(tiny(1), paths).save(7)
    (kept,) = (paths.checkpoints / "damaged").glob("ckpt-7.*/ckpt-7.index")
    assert kept.read_bytes() == b"somebody's only copy"
    assert "about to be written; moved to" in capsys.readouterr().out
    assert latest_saved_step(paths) == 7
