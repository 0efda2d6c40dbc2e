"""One training run in this process (trainer.train_loop.run), single-process strategy, on a
data set small enough to work out by hand: what it prints, writes and returns.

Every image is black (all pixels 0). The network's convolutions and dense layers start with
zero biases and end in ReLUs, so on a black image every activation is 0 and the logits are
the last layer's bias alone; ReLU's gradient at 0 is 0, so training moves that bias and
nothing else. Every training label is 3. So:
- step 1 starts from logits all 0: loss ln 10, and argmax 0 (the first of ten equal
  logits) is wrong: accuracy 0;
- Adam's first update is the learning rate times the gradient's sign (its bias-corrected
  moments are g and g squared), and the bias's gradient is softmax - one-hot (-0.9 for 3,
  0.1 for every other class), so after it the bias is +0.1 for 3 and -0.1 elsewhere (at
  learning rate 0.1; the cosine schedule starts at the full rate);
- step 2: loss ln(e^0.1 + 9 e^-0.1) - 0.1 = ln(1 + 9 e^-0.2) = 2.124485, accuracy 1;
- the later steps follow Adam's and the cosine schedule's published update rules (`adam`
  below, worked in float64 over the ten biases);
- on the black test images the model answers 3, so labels 3, 3, 5 score 2/3.
8 examples at batch 4 are 2 steps an epoch, 2 epochs 4 steps: lines and checkpoints at 2, 4.
"""

from __future__ import annotations

import gc
import gzip
import itertools
import math
import signal
import tempfile
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
import tensorflow as tf

from infra.records.tensorboard_scalars import read_scalars
from trainer import train_loop
from trainer.data import Mnist
from trainer.distribution import make_executor
from trainer.errors import RunError
from trainer.plan import Plan, Role
from trainer.settings import Settings, SettingsError, parse_settings
from trainer.startup import StartupClock
from trainer.tf_config import ClusterConfig, parse_tf_config
from trainer.train_loop import ParameterServerLost, run
from trainer.watchdog import Watchdog

WRITER = Plan("single", Role.TRAINER, is_writer=True)
TRAIN, TEST_LABELS = 8, [3, 3, 5]
LEARNING_RATE = 0.1


def adam(totals: list[int], bias: np.ndarray | None = None) -> tuple[list[float], np.ndarray]:
    """Each step's loss and the final bias, by Keras' Adam (beta 0.9, 0.999, epsilon 1e-7;
    alpha = lr sqrt(1 - beta2^t) / (1 - beta1^t), m += (g - m)(1 - beta1), v += (g^2 - v)
    (1 - beta2), bias -= alpha m / (sqrt v + epsilon)) under CosineDecay(0.1, total):
    lr = 0.1 (1 + cos(pi min(t - 1, total) / total)) / 2 at the t-th step, whose `total`
    (the run's final step) is `totals[t - 1]`."""
    b = np.zeros(10) if bias is None else bias.copy()
    m, v, losses = np.zeros(10), np.zeros(10), []
    for t, total in enumerate(totals, start=1):
        lr = LEARNING_RATE * (1 + math.cos(math.pi * min(t - 1, total) / total)) / 2
        p = np.exp(b) / np.exp(b).sum()
        losses.append(-math.log(p[3]))
        g = p - np.eye(10)[3]  # the same for every (black, 3) example: the batch mean
        m += (g - m) * 0.1
        v += (g * g - v) * 0.001
        b -= lr * math.sqrt(1 - 0.999**t) / (1 - 0.9**t) * m / (np.sqrt(v) + 1e-7)
    return losses, b


LOSSES, BIAS = adam([4] * 4)


def test_the_hand_worked_steps_agree_with_the_closed_form() -> None:
    assert LOSSES[0] == pytest.approx(math.log(10))
    assert LOSSES[1] == pytest.approx(math.log(1 + 9 * math.exp(-0.2)), abs=1e-5)


def idx(shape: tuple[int, ...], data: bytes) -> bytes:
    """An IDX file: magic (0, 0, 0x08 = uint8, dimensions), big-endian sizes, the data."""
    return bytes((0, 0, 8, len(shape))) + b"".join(n.to_bytes(4, "big") for n in shape) + data


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The training files the input pipeline reads: 8 black images, all labelled 3."""
    directory = tmp_path_factory.mktemp("data")
    (directory / "train-images-idx3-ubyte.gz").write_bytes(
        gzip.compress(idx((TRAIN, 28, 28), bytes(TRAIN * 784)))
    )
    (directory / "train-labels-idx1-ubyte.gz").write_bytes(
        gzip.compress(idx((TRAIN,), bytes([3] * TRAIN)))
    )
    return directory


DATA = Mnist(
    train_images=np.zeros((TRAIN, 28, 28, 1), np.uint8),
    train_labels=np.full(TRAIN, 3, np.uint8),
    test_images=np.zeros((len(TEST_LABELS), 28, 28, 1), np.uint8),
    test_labels=np.array(TEST_LABELS, np.uint8),
)


@pytest.fixture(autouse=True)
def _sigterm_handler_restored() -> Iterator[None]:
    """run() installs the trainer's SIGTERM handler: the test process gets its own back."""
    previous = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, previous)


class Clock(StartupClock):
    """The start-up clock, as a run reads it: its laps by name, 12.34 s in all."""

    def __init__(self) -> None:
        super().__init__()
        self.phases: list[str] = []

    def lap(self, phase: str) -> None:
        self.phases.append(phase)

    def summary(self) -> str:
        return "Start-up: (the clock's line)"

    def elapsed(self) -> float:
        return 12.34


class TrainingTime:
    """time.perf_counter for the training loop: each training takes 2 s."""

    def __init__(self) -> None:
        self.readings = itertools.cycle([100.0, 102.0])

    def perf_counter(self) -> float:
        return next(self.readings)


class Watched(Watchdog):
    """The real watchdog, with what the training loop told it."""

    made: ClassVar[list[Watched]] = []

    def __init__(self, replica: str, limit: float, waits_on: str) -> None:
        super().__init__(replica, limit, waits_on)
        self.told: list[object] = [(replica, limit, waits_on)]
        Watched.made.append(self)

    def beat(self, at: str) -> None:
        self.told.append(at)
        super().beat(at)

    def stop(self) -> None:
        self.told.append("stop")
        super().stop()


@pytest.fixture(autouse=True)
def _stand_ins(monkeypatch: pytest.MonkeyPatch) -> None:
    Watched.made = []
    monkeypatch.setattr(train_loop, "Watchdog", Watched)
    monkeypatch.setattr(train_loop, "time", TrainingTime())


def settings(data_dir: Path, output: Path, *extra: str) -> Settings:
    return parse_settings(
        [f"--data-dir={data_dir}", f"--output-dir={output}", "--batch-size=4", "--epochs=2",
         f"--learning-rate={LEARNING_RATE}", "--log-steps=2", "--checkpoint-steps=2",
         "--steps-per-execution=2", "--keep-checkpoints=2", "--stall-seconds=77", *extra],
        {},
    )  # fmt: skip


def train_once(
    capsys: pytest.CaptureFixture[str],
    data_dir: Path,
    output: Path,
    *extra: str,
    plan: Plan = WRITER,
    config: ClusterConfig | None = None,
) -> tuple[int, list[str]]:
    clock, watchdogs = Clock(), len(Watched.made)
    code = run(settings(data_dir, output, *extra), plan, config, DATA, clock)
    lines = capsys.readouterr().out.splitlines()
    if len(Watched.made) > watchdogs:  # it trained: the start-up laps, then its line
        assert clock.phases == ["cluster", "model and checkpoint", "input pipeline"]
        assert "Start-up: (the clock's line)" in lines
    return code, lines


def published(output: Path) -> list[str]:
    return sorted(p.name for p in (output / "checkpoints").glob("*.sha256"))


def scalars(directory: Path, tag: str) -> list[tuple[int, float]]:
    return [(point.step, point.value) for point in read_scalars(directory).get(tag, [])]


def logits(saved_model: Path) -> np.ndarray:
    """What the export answers for a black image."""
    loaded = tf.saved_model.load(str(saved_model))  # kept: `serve` reads its variables
    return np.asarray(loaded.serve(tf.zeros((1, 28, 28, 1), tf.uint8)))[0]


def test_a_run_trains_saves_evaluates_exports_and_a_restart_only_evaluates(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "run"
    output.mkdir()
    # An earlier chief's unserved request and its note: a new writer forgets both, or the
    # request would stop it after its first chunk.
    (output / ".tftrain-preempt").write_text("ps:0 got SIGTERM\n")
    (output / ".tftrain-preempt-saved").write_text("2\n")
    code, lines = train_once(capsys, data_dir, output)
    assert code == 0
    assert not (output / ".tftrain-preempt").exists()
    assert not (output / ".tftrain-preempt-saved").exists()
    progress = [line for line in lines if line.startswith("Step: ")]
    assert [line.split(", AvgTime")[0] for line in progress] == [
        f"Step: 2/4 (50 %), Epoch: 1/2, Batch: 2 of 2, Cost: {(LOSSES[0] + LOSSES[1]) / 2:.4f}",
        f"Step: 4/4 (100 %), Epoch: 2/2, Batch: 2 of 2, Cost: {(LOSSES[2] + LOSSES[3]) / 2:.4f}",
    ]
    assert lines[-3:] == [
        "Test-Accuracy: 0.6667",
        "Examples/sec: 8.0",  # 4 steps of 4 examples in 2 s
        "Total Time: 12.3s",
    ]
    (watchdog,) = Watched.made
    assert watchdog.told == [
        ("single process", 77, "nothing but its own TensorFlow runtime"),
        "step 0",  # before the first step
        "step 0",  # the first chunk, from step 0, done
        "step 2",
        "stop",
    ]
    # Stopped, its thread ends at once, not after its next look.
    for thread in [t for t in threading.enumerate() if t.name == "tftrain-watchdog"]:
        thread.join(timeout=5)
        assert not thread.is_alive()

    assert (output / "metrics.txt").read_text() == "test_accuracy 0.6667\nglobal_step 4\n"
    assert published(output) == ["ckpt-2.sha256", "ckpt-4.sha256"]
    assert logits(output / "saved_model") == pytest.approx(BIAS, abs=1e-4)
    assert not (output / "saved_model.partial").exists()
    loss = scalars(output / "train", "loss")
    assert [step for step, _ in loss] == [2, 4]
    assert loss[0][1] == pytest.approx((LOSSES[0] + LOSSES[1]) / 2, abs=1e-4)
    assert loss[1][1] == pytest.approx((LOSSES[2] + LOSSES[3]) / 2, abs=1e-4)
    assert scalars(output / "train", "accuracy") == [(2, 0.5), (4, 1.0)]
    ((step, accuracy),) = scalars(output / "eval", "test_accuracy")
    assert (step, accuracy) == (4, pytest.approx(2 / 3))

    # Restarted after its final checkpoint: nothing to train, evaluated and exported again.
    (output / "metrics.txt").unlink()
    code, lines = train_once(capsys, data_dir, output)
    assert code == 0
    assert lines == [
        f"Resumed from checkpoint {output / 'checkpoints' / 'ckpt-4'} at step 4: "
        "training is complete",
        "Test-Accuracy: 0.6667",
        "Total Time: 12.3s",
    ]
    assert len(Watched.made) == 1  # no training, no watchdog
    assert (output / "metrics.txt").read_text() == "test_accuracy 0.6667\nglobal_step 4\n"
    assert published(output) == ["ckpt-2.sha256", "ckpt-4.sha256"]
    assert len(list((output / "eval").glob("*tfevents*"))) == 2  # the restart's own
    assert logits(output / "saved_model") == pytest.approx(BIAS, abs=1e-4)


def test_a_damaged_final_checkpoint_is_trained_again_from_the_one_before(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "run"
    train_once(capsys, data_dir, output, "--max-steps=2")  # saves ckpt-2 as its final step
    data = next((output / "checkpoints").glob("ckpt-2.data-*"))
    # ckpt-4 published with a manifest its index does not match: damaged.
    (output / "checkpoints" / "ckpt-4.index").write_bytes(b"not a checkpoint")
    (output / "checkpoints" / "ckpt-4.sha256").write_text(
        (output / "checkpoints" / "ckpt-2.sha256").read_text().replace("ckpt-2.", "ckpt-4.")
    )
    (output / "checkpoints" / data.name.replace("ckpt-2", "ckpt-4")).write_bytes(data.read_bytes())
    Watched.made = []
    code, lines = train_once(capsys, data_dir, output)
    assert code == 0
    # Told once, and set aside by the chief, which writes here (not merely skipped).
    (damaged,) = [line for line in lines if line.startswith("Checkpoint ckpt-4 is damaged")]
    assert f"; moved to {output / 'checkpoints'}" in damaged
    assert f"Resumed from checkpoint {output / 'checkpoints' / 'ckpt-2'} at step 2" in lines
    assert [line.split(" (")[0] for line in lines if line.startswith("Step: ")] == ["Step: 4/4"]
    assert "Examples/sec: 4.0" in lines  # 2 steps of 4 examples in 2 s: those of this run
    assert Watched.made[0].told[1:] == ["step 2", "step 2", "stop"]
    assert (output / "metrics.txt").read_text() == "test_accuracy 0.6667\nglobal_step 4\n"
    # Steps 3 and 4 ran after the resume, from the optimizer state saved at step 2 (when the
    # run was to end there) and the schedule of a run of 4 steps.
    losses, bias = adam([2, 2, 4, 4])
    assert scalars(output / "train", "accuracy")[-1] == (4, 1.0)
    assert scalars(output / "train", "loss")[-1] == (
        4,
        pytest.approx(sum(losses[2:]) / 2, abs=1e-4),
    )
    assert logits(output / "saved_model") == pytest.approx(bias, abs=1e-4)


def test_a_worker_that_does_not_write_trains_and_leaves_the_output_alone(
    data_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    output, scratch = tmp_path / "run", tmp_path / "tmp"
    output.mkdir()
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where its private saves go
    reader = Plan("single", Role.TRAINER, is_writer=False)
    code, lines = train_once(capsys, data_dir, output, plan=reader)
    assert code == 0
    assert lines[-1] == "Training finished at step 4; the chief or worker 0 saves the model"
    (watchdog,) = Watched.made
    assert watchdog.told == [
        ("single process", 77, "nothing but its own TensorFlow runtime"),
        *("step 0", "step 0", "step 2"),  # before the first chunk, then after each
        "stop",
    ]
    assert not any(line.startswith(("Step: ", "Test-Accuracy")) for line in lines)
    assert sorted(p.name for p in output.iterdir()) == []
    assert not list(scratch.rglob("ckpt*"))  # its private copies are gone too


def test_a_cluster_s_chief_training_alone_is_watched_under_its_task_s_name(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --strategy single in a cluster: the chief trains in one process, the worker idles.
    config = parse_tf_config(
        '{"cluster": {"chief": ["localhost:2222"], "worker": ["localhost:2223"]},'
        ' "task": {"type": "chief", "index": 0}}'
    )
    assert config is not None
    plan = Plan("single", Role.TRAINER, is_writer=True)
    code, _ = train_once(capsys, data_dir, tmp_path / "run", plan=plan, config=config)
    assert code == 0
    (watchdog,) = Watched.made
    # Its stall line would name the chief and the peer it waits on (trainer/watchdog.py).
    assert watchdog.told[0] == ("chief:0", 77, "worker:0")


def test_the_input_pipeline_outlives_the_training(
    data_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Freeing it waits on tf.data's autotune thread, seconds under MWMS: the process ends
    # with it still held (trainer/process_exit.py), never freed when training returns.
    made: list[weakref.ref[object]] = []

    def recorded(*args: object) -> object:
        executor = make_executor(*args)  # type: ignore[arg-type]
        made.append(weakref.ref(executor))
        return executor

    monkeypatch.setattr(train_loop, "make_executor", recorded)
    code, _ = train_once(capsys, data_dir, tmp_path / "run")
    gc.collect()
    assert code == 0
    assert len(made) == 1 and made[0]() is not None


def test_fine_tuning_starts_from_the_init_checkpoint_s_weights_at_step_0(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = tmp_path / "first"
    train_once(capsys, data_dir, first, "--max-steps=2")
    tuned = tmp_path / "tuned"
    code, lines = train_once(
        capsys, data_dir, tuned, "--max-steps=2", f"--init-checkpoint={first / 'checkpoints'}"
    )
    assert code == 0
    assert (
        f"Warm-started the model from {first / 'checkpoints' / 'ckpt-2'} (fine-tuning: step 0, "
        "a fresh optimizer)"
    ) in lines
    # From the first run's bias (2 steps), with a fresh Adam and a schedule of 2 steps.
    losses, bias = adam([2, 2], adam([2, 2])[1])
    assert scalars(tuned / "train", "accuracy") == [(2, 1.0)]
    [(_, loss)] = scalars(tuned / "train", "loss")
    assert loss == pytest.approx(sum(losses) / 2, abs=1e-4)
    assert logits(tuned / "saved_model") == pytest.approx(bias, abs=1e-4)
    assert (tuned / "metrics.txt").read_text() == "test_accuracy 0.6667\nglobal_step 2\n"


def test_a_global_batch_that_the_replicas_cannot_share_is_refused(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class ThreeReplicas:
        num_replicas_in_sync = 3

    monkeypatch.setattr(train_loop, "make_strategy", lambda plan, config: ThreeReplicas())
    with pytest.raises(SettingsError) as raised:
        run(settings(data_dir, tmp_path / "run"), WRITER, None, DATA, Clock())
    assert str(raised.value) == (
        "--batch-size / TFTRAIN_BATCH_SIZE 4 must divide evenly among the 3 replicas"
    )
    assert not (tmp_path / "run" / "checkpoints").exists()


def unavailable(message: str) -> tf.errors.UnavailableError:
    return tf.errors.UnavailableError(None, None, message)


@pytest.mark.parametrize(
    ("message", "cause"),
    [
        ("Graph execution error:\n\nUNAVAILABLE: Connection reset by peer\n more",
         "Connection reset by peer"),
        ("UNAVAILABLE:   Socket closed  ", "Socket closed"),
        ("Graph execution error:\n\n  failed to connect to all addresses\n",
         "failed to connect to all addresses"),
        ("Graph execution error:\n  \n", "no details"),
    ],
)  # fmt: skip
def test_a_lost_ps_ends_the_chief_with_why_and_where_it_resumes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, message: str, cause: str
) -> None:
    def lost(*args: object) -> None:
        raise unavailable(message)

    monkeypatch.setattr(train_loop, "train", lost)
    chief = Plan("parameter_server", Role.COORDINATOR, is_writer=True)
    output = tmp_path / "run"
    with pytest.raises(ParameterServerLost) as raised:
        run(settings(tmp_path, output), chief, None, DATA, StartupClock())
    assert isinstance(raised.value, RunError)
    assert raised.value.__suppress_context__
    assert str(raised.value) == (
        f"Parameter server unreachable (UNAVAILABLE: {cause}): restart the ps and this chief "
        "(Kubernetes and the local launcher do, up to job.backoffLimit times); no checkpoint "
        "was saved yet, so it starts from step 0"
    )


def test_a_lost_ps_after_a_save_resumes_there_and_other_strategies_raise_as_they_are(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def lost(*args: object) -> None:
        raise unavailable("UNAVAILABLE: Socket closed")

    monkeypatch.setattr(train_loop, "train", lost)
    output = tmp_path / "run"
    (output / "checkpoints").mkdir(parents=True)
    for step in (2, 3):
        (output / "checkpoints" / f"ckpt-{step}.sha256").write_text("")
    chief = Plan("parameter_server", Role.COORDINATOR, is_writer=True)
    with pytest.raises(ParameterServerLost, match=r"Socket closed\): .*; it resumes from the "
                       r"latest checkpoint at step 3$"):  # fmt: skip
        run(settings(tmp_path, output), chief, None, DATA, StartupClock())
    with pytest.raises(tf.errors.UnavailableError, match=r"^UNAVAILABLE: Socket closed$"):
        run(settings(tmp_path, output), WRITER, None, DATA, StartupClock())


def test_a_cluster_task_s_watchdog_names_it_and_its_peers_and_stops_when_training_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watchdog's line names the replica and whom it waits on; a training that raises
    stops it too (the thread would go on writing stall lines while the process exits)."""

    def fails(*args: object) -> None:
        raise RunError("the data went away")

    monkeypatch.setattr(train_loop, "train_with", fails)
    config = parse_tf_config(
        '{"cluster": {"chief": ["c:1"], "worker": ["w:1"], "ps": ["p:1"]}, '
        '"task": {"type": "chief", "index": 0}}'
    )
    chief = Plan("parameter_server", Role.COORDINATOR, is_writer=True)
    with pytest.raises(RunError, match="the data went away"):
        run(settings(tmp_path, tmp_path / "run"), chief, config, DATA, Clock())
    (watchdog,) = Watched.made
    assert watchdog.told == [("chief:0", 77, "worker:0, ps:0"), "stop"]
