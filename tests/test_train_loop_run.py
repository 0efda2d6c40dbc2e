"""One training run in this process (trainer.train_loop.run), single-process strategy, on a
data set small enough to work out by hand: what it prints, writes and returns.

Every image is black (all pixels 0). The network's convolutions and dense layers start with
zero biases and end in ReLUs, so on a black image every activation is 0 and the logits are
the last layer's bias alone; ReLU's gradient at 0 is 0, so training moves that bias and
nothing else. Every training label is 3. So:
- step 1 starts from logits all 0: loss ln 10 = 2.302585, and argmax 0 (the first of ten
  equal logits) is wrong: accuracy 0;
- Adam's first update is the learning rate times the gradient's sign (its bias-corrected
  moments are g and g squared), and the bias's gradient is softmax - one-hot (-0.9 for 3,
  0.1 for every other class), so after it the bias is +0.1 for 3 and -0.1 elsewhere (at
  learning rate 0.1; the cosine schedule starts at the full rate);
- step 2: loss ln(e^0.1 + 9 e^-0.1) - 0.1 = ln(1 + 9 e^-0.2) = 2.124538, accuracy 1;
  interval 1 (steps 1-2) averages loss 2.213562, accuracy 0.5;
- every later step keeps 3 the largest logit (its gradient stays negative, the others'
  positive): accuracy 1, loss below step 2's;
- on the black test images the model answers 3, so labels 3, 3, 3, 5 score 0.75.
8 examples at batch 4 are 2 steps an epoch, 2 epochs 4 steps: lines and checkpoints at 2, 4.
"""

from __future__ import annotations

import gzip
import math
import re
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from infra.records.tensorboard_scalars import read_scalars
from trainer import train_loop
from trainer.data import Mnist
from trainer.errors import RunError
from trainer.plan import Plan, Role
from trainer.settings import Settings, parse_settings
from trainer.startup import StartupClock
from trainer.train_loop import ParameterServerLost, run

WRITER = Plan("single", Role.TRAINER, is_writer=True)
TRAIN, TEST_LABELS = 8, [3, 3, 3, 5]
STEP_1_LOSS = math.log(10)
STEP_2_LOSS = math.log(1 + 9 * math.exp(-0.2))


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


def settings(data_dir: Path, output: Path, *extra: str) -> Settings:
    return parse_settings(
        [f"--data-dir={data_dir}", f"--output-dir={output}", "--batch-size=4", "--epochs=2",
         "--learning-rate=0.1", "--log-steps=2", "--checkpoint-steps=2",
         "--steps-per-execution=2", "--keep-checkpoints=2", *extra],
        {},
    )  # fmt: skip


def train_once(
    capsys: pytest.CaptureFixture[str],
    data_dir: Path,
    output: Path,
    *extra: str,
    plan: Plan = WRITER,
) -> tuple[int, list[str]]:
    code = run(settings(data_dir, output, *extra), plan, None, DATA, StartupClock())
    return code, capsys.readouterr().out.splitlines()


def published(output: Path) -> list[str]:
    return sorted(p.name for p in (output / "checkpoints").glob("*.sha256"))


def scalars(directory: Path, tag: str) -> list[tuple[int, float]]:
    return [(point.step, point.value) for point in read_scalars(directory).get(tag, [])]


def answers(saved_model: Path) -> list[int]:
    """What the export answers for two black images."""
    loaded = tf.saved_model.load(str(saved_model))  # kept: `serve` reads its variables
    logits = loaded.serve(tf.zeros((2, 28, 28, 1), tf.uint8))
    return [int(i) for i in tf.argmax(logits, axis=-1).numpy()]


def test_a_run_trains_saves_evaluates_exports_and_a_restart_only_evaluates(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "run"
    code, lines = train_once(capsys, data_dir, output)
    assert code == 0
    assert re.fullmatch(
        r"Start-up: [0-9.]+s \(cluster [0-9.]+s, model and checkpoint [0-9.]+s, "
        r"input pipeline [0-9.]+s\)",
        lines[0],
    )
    progress = [line for line in lines if line.startswith("Step: ")]
    assert [line.split(", Cost: ")[0] for line in progress] == [
        "Step: 2/4 (50 %), Epoch: 1/2, Batch: 2 of 2",
        "Step: 4/4 (100 %), Epoch: 2/2, Batch: 2 of 2",
    ]
    assert f"Cost: {(STEP_1_LOSS + STEP_2_LOSS) / 2:.4f}," in progress[0]
    assert lines[-3] == "Test-Accuracy: 0.7500"
    examples_per_sec = float(lines[-2].removeprefix("Examples/sec: "))
    assert examples_per_sec > 0  # 4 steps of 4 examples over the training's wall time
    assert re.fullmatch(r"Total Time: [0-9]+\.[0-9]s", lines[-1])

    assert (output / "metrics.txt").read_text() == "test_accuracy 0.75\nglobal_step 4\n"
    assert published(output) == ["ckpt-2.sha256", "ckpt-4.sha256"]
    assert answers(output / "saved_model") == [3, 3]
    assert not (output / "saved_model.partial").exists()
    loss = scalars(output / "train", "loss")
    assert [step for step, _ in loss] == [2, 4]
    assert loss[0][1] == pytest.approx((STEP_1_LOSS + STEP_2_LOSS) / 2, abs=1e-5)
    assert loss[1][1] < STEP_2_LOSS
    assert scalars(output / "train", "accuracy") == [(2, 0.5), (4, 1.0)]
    assert scalars(output / "eval", "test_accuracy") == [(4, 0.75)]
    # The watchdog watched the training only: its thread ends with it (told at once, it
    # does not wait out its period).
    for thread in [t for t in threading.enumerate() if t.name == "tftrain-watchdog"]:
        thread.join(timeout=5)
        assert not thread.is_alive()

    # Restarted after its final checkpoint: nothing to train, evaluated and exported again.
    (output / "metrics.txt").unlink()
    code, lines = train_once(capsys, data_dir, output)
    assert code == 0
    assert lines[0] == (
        f"Resumed from checkpoint {output / 'checkpoints' / 'ckpt-4'} at step 4: "
        "training is complete"
    )
    assert lines[1] == "Test-Accuracy: 0.7500"
    assert not any(line.startswith(("Step: ", "Examples/sec")) for line in lines)
    assert re.fullmatch(r"Total Time: [0-9]+\.[0-9]s", lines[-1])
    assert (output / "metrics.txt").read_text() == "test_accuracy 0.75\nglobal_step 4\n"
    assert published(output) == ["ckpt-2.sha256", "ckpt-4.sha256"]
    assert len(list((output / "eval").glob("*tfevents*"))) == 2  # the restart's own
    assert scalars(output / "eval", "test_accuracy")[-1] == (4, 0.75)


def test_a_damaged_final_checkpoint_is_trained_again_from_the_one_before(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "run"
    train_once(capsys, data_dir, output, "--max-steps=2")  # saves ckpt-2 as its final step
    data = next((output / "checkpoints").glob("ckpt-2.data-*"))
    (output / "checkpoints" / "ckpt-4.index").write_bytes(b"not a checkpoint")
    (output / "checkpoints" / "ckpt-4.sha256").write_text(
        (output / "checkpoints" / "ckpt-2.sha256").read_text().replace("ckpt-2.", "ckpt-4.")
    )
    (output / "checkpoints" / data.name.replace("ckpt-2", "ckpt-4")).write_bytes(data.read_bytes())
    code, lines = train_once(capsys, data_dir, output)
    assert code == 0
    assert any(
        line == f"Resumed from checkpoint {output / 'checkpoints' / 'ckpt-2'} at step 2"
        for line in lines
    )
    assert [line.split(" (")[0] for line in lines if line.startswith("Step: ")] == ["Step: 4/4"]
    assert (output / "metrics.txt").read_text() == "test_accuracy 0.75\nglobal_step 4\n"
    # Steps 3 and 4 ran after the resume: one interval, both steps right.
    assert scalars(output / "train", "accuracy")[-1] == (4, 1.0)


def test_a_worker_that_does_not_write_trains_and_leaves_the_output_alone(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "run"
    output.mkdir()
    reader = Plan("single", Role.TRAINER, is_writer=False)
    code, lines = train_once(capsys, data_dir, output, plan=reader)
    assert code == 0
    assert lines[-1] == "Training finished at step 4; the chief or worker 0 saves the model"
    assert not any(line.startswith(("Step: ", "Test-Accuracy")) for line in lines)
    assert sorted(p.name for p in output.iterdir()) == []


def test_fine_tuning_starts_from_the_init_checkpoint_s_weights_at_step_0(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """From a model that already answers 3, the first interval is right at both steps."""
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
    assert scalars(tuned / "train", "accuracy") == [(2, 1.0)]
    [(_, loss)] = scalars(tuned / "train", "loss")
    assert loss < STEP_2_LOSS
    assert (tuned / "metrics.txt").read_text() == "test_accuracy 0.75\nglobal_step 2\n"


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
