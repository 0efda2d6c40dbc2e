"""Your data in, your model out, run locally with real processes (docs/data.md "Bring your data").

The user's data is a directory of this test's own (MNIST IDX files copied out of the bundled
set, or a subset of them re-encoded, never the bundled path), the export a directory too;
the launcher maps them as the cluster maps the bucket, the real supervisor runs the real
export.sh. Expected values come from the data the test wrote (1000 examples at batch 100 are
10 steps) and from README's contract (the export tree, the marker last), not from the code.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import itertools
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from infra.config import load_stack
from infra.local.cli import main
from infra.local.plan import load_config
from trainer.data import CHECKSUMS, FILES
from trainer.settings import BUNDLED_DATA_DIR

STACK = "byod"
REPO = Path(__file__).resolve().parents[1]
BYO_TRAINER = REPO / "tests" / "fixtures" / "byo_trainer.sh"
MARKER = "_TFTRAIN_EXPORTED"
SUBSET = 1000  # training examples in the small data set: 10 steps of 100


def user_data(directory: Path, train_examples: int = 0) -> Path:
    """MNIST as a user would upload it, into `directory`: the four IDX files (the first
    `train_examples` training examples only, when given) and their SHA256SUMS."""
    directory.mkdir(parents=True)
    for key, name in FILES.items():
        source = BUNDLED_DATA_DIR / name
        if not train_examples or not key.startswith("train"):
            shutil.copyfile(source, directory / name)
            continue
        raw = gzip.decompress(source.read_bytes())
        ndim = raw[3]
        header = bytearray(raw[: 4 + 4 * ndim])
        header[4:8] = train_examples.to_bytes(4, "big")  # the first dimension: examples
        item = 28 * 28 if key == "train_images" else 1
        body = raw[len(header) : len(header) + train_examples * item]
        (directory / name).write_bytes(gzip.compress(bytes(header) + body, mtime=0))
    sums = "".join(
        f"{hashlib.sha256((directory / name).read_bytes()).hexdigest()}  {name}\n"
        for name in FILES.values()
    )
    (directory / CHECKSUMS).write_text(sums)
    return directory


def write_stack(stacks_dir: Path, job: dict | None = None, hyper: dict | None = None,
                data: dict | None = None) -> None:  # fmt: skip
    """One training process (worker 0 alone): the user-facing keys."""
    config = {
        "image": "registry.example.com/tftrain/trainer:1",
        "job": {"backoffLimit": 0, **(job or {})},
        "chief": {"number": 0},
        "ps": {"number": 0},
        "worker": {"number": 1},
        "hyperparams": {"batchSize": 100, "epochs": 1, **(hyper or {})},
        "data": data or {},
    }
    document = {"config": {f"tftrain:{key}": value for key, value in config.items()}}
    stacks_dir.mkdir(parents=True, exist_ok=True)
    (stacks_dir / f"Pulumi.{STACK}.yaml").write_text(yaml.safe_dump(document))


@dataclass
class Launch:
    status: int
    out: str
    err: str
    run_id: str
    output_dir: Path


def launch(stacks_dir: Path, volume: Path, *options: str) -> Launch:
    """The launcher on the stack, its output dir `<volume>/<job>/<run id>` as on the volume
    (the run id of the stack and its --set options; --input changes it, see the log)."""
    overrides = [value for flag, value in itertools.pairwise(options) if flag == "--set"]
    config = load_config(STACK, stacks_dir, overrides)
    output_dir = volume / config.job.name / config.job.run_id
    out, err = io.StringIO(), io.StringIO()
    argv = [STACK, "--stacks-dir", str(stacks_dir), "--output-dir", str(output_dir), *options]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    run_id = re.search(rf"stack {STACK}: job mnist, run (\S+)", out.getvalue())
    assert run_id, out.getvalue() + err.getvalue()
    return Launch(status, out.getvalue(), err.getvalue(), run_id.group(1), output_dir)


def accuracy(out: str) -> float:
    return float(re.findall(r"Test-Accuracy: ([0-9.]+)", out)[-1])


def _marker(path: Path) -> tuple[list[str], dict[str, int]]:
    lines = path.read_text().splitlines()
    sizes = dict(line.split(" ", 1)[::-1] for line in lines[2:])
    return lines[:2], {name: int(size) for name, size in sizes.items()}


def assert_exported(target: Path, run_id: str, must_have: list[str]) -> dict:
    """The export contract: the files, the manifest, the marker written after every file."""
    files = {str(p.relative_to(target)) for p in target.rglob("*") if p.is_file()}
    for pattern in must_have:
        assert any(re.fullmatch(pattern, name) for name in files), (pattern, sorted(files))
    assert not any(name.startswith(".tftrain") for name in files), sorted(files)
    # Written last: the marker lists what the directory held when it was written ("<bytes>
    # <path>" per file, after the run and time lines), so a file copied, grown or removed
    # after it would be missing from it, listed with another size, or listed and gone.
    head, listed = _marker(target / MARKER)
    assert head[0] == f"run {run_id}" and head[1].startswith("exported "), head
    assert listed == {name: (target / name).stat().st_size for name in files - {MARKER}}
    manifest = json.loads((target / "tftrain-run.json").read_text())
    assert manifest["runId"] == run_id and manifest["stack"] == STACK
    return manifest


@dataclass
class FirstRun:
    stacks_dir: Path
    volume: Path
    exports: Path
    launch: Launch


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FirstRun]:
    """A small run on a user's directory (1000 examples), exported: the one the fast
    fine-tuning test starts from."""
    root = tmp_path_factory.mktemp("byod")
    data = user_data(root / "my-mnist", SUBSET)
    exports = root / "exports"
    write_stack(root / "stacks", data={"localInputDir": str(data), "localExportDir": str(exports)})
    yield FirstRun(
        root / "stacks", root / "volume", exports, launch(root / "stacks", root / "volume")
    )


def test_a_run_trains_on_the_users_directory_and_exports_its_results(first_run: FirstRun) -> None:
    run = first_run.launch
    assert run.status == 0, run.out + run.err
    target = first_run.exports / "mnist" / run.run_id
    manifest = assert_exported(
        target,
        run.run_id,
        [r"saved_model/saved_model\.pb", r"saved_model/variables/variables\.index",
         r"train/events\.out\.tfevents\..*", r"eval/events\.out\.tfevents\..*",
         r"checkpoints/ckpt-10\.index", r"checkpoints/ckpt-10\.sha256", "metrics.txt"],
    )  # fmt: skip
    # 1000 examples at batch 100 are 10 steps: the trainer read the user's files (the
    # bundled set would have been 600 steps).
    assert manifest["metrics"] == {"test_accuracy": accuracy(run.out), "global_step": 10}
    assert "images" not in manifest or manifest["images"] == {}  # local processes: no image
    assert f"export: {target} once the run succeeds" in run.out


def test_fine_tuning_starts_a_new_run_from_another_runs_checkpoint(first_run: FirstRun) -> None:
    before = first_run.launch
    assert before.status == 0, before.out
    run = launch(first_run.stacks_dir, first_run.volume,
                 "--set", f"job.initCheckpoint=run:{before.run_id}")  # fmt: skip
    assert run.status == 0, run.out + run.err
    assert run.run_id != before.run_id  # another start is another run
    start = first_run.volume / "mnist" / before.run_id / "checkpoints" / "ckpt-10"
    assert f"Warm-started the model from {start} (fine-tuning: step 0" in run.out, run.out
    manifest = assert_exported(
        first_run.exports / "mnist" / run.run_id, run.run_id, ["metrics.txt"]
    )
    assert manifest["metrics"]["global_step"] == 10  # from step 0, not 10 + 10


def test_a_run_with_checkpoints_of_its_own_resumes_them_not_the_init_checkpoint(
    first_run: FirstRun, tmp_path: Path
) -> None:
    """The trainer alone: its own final checkpoint wins over an init checkpoint, even a
    missing one (a restarted fine-tuning run never reads it again)."""
    output = tmp_path / "output"
    shutil.copytree(first_run.launch.output_dir / "checkpoints", output / "checkpoints")
    env = {
        "PATH": "/usr/bin:/bin",
        "TF_CPP_MIN_LOG_LEVEL": "2",
        "TFTRAIN_OUTPUT_DIR": str(output),
        "TFTRAIN_DATA_DIR": str(first_run.volume.parent / "my-mnist"),
        "TFTRAIN_BATCH_SIZE": "100",
        "TFTRAIN_EPOCHS": "1",
        "TFTRAIN_INIT_CHECKPOINT": str(tmp_path / "gone" / "checkpoints"),
    }
    done = subprocess.run([sys.executable, "-m", "trainer"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "at step 10: training is complete" in done.stdout
    assert "Warm-started" not in done.stdout


def test_a_bring_your_own_trainer_gets_the_same_export(tmp_path: Path) -> None:
    data = tmp_path / "my-data"
    data.mkdir()
    (data / "part-0.csv").write_text("1,2\n")
    write_stack(tmp_path / "stacks", job={"command": ["sh", str(BYO_TRAINER)]})
    run = launch(tmp_path / "stacks", tmp_path / "volume",
                 "--input", str(data), "--export", str(tmp_path / "exports"))  # fmt: skip
    assert run.status == 0, run.out + run.err
    target = tmp_path / "exports" / "mnist" / run.run_id
    manifest = assert_exported(target, run.run_id, [r"model/inputs\.txt", "metrics.txt"])
    assert (target / "model" / "inputs.txt").read_text() == "part-0.csv\n"
    assert manifest["metrics"] == {"accuracy": 0.5}


@pytest.mark.parametrize(
    ("options", "key"),
    [
        (["--input", "/no/such/dir"], "tftrain:data.localInputDir (--input) = '/no/such/dir'"),
        (["--input", "{data}", "--export", "{data}/exports"], "tftrain:data.localExportDir"),
        (["--set", "job.initCheckpoint=/data/mnist/run-gone/checkpoints"],
         "tftrain:job.initCheckpoint = '/data/mnist/run-gone/checkpoints'"),
        (["--set", "job.initCheckpoint=run:run-gone"],
         "tftrain:job.initCheckpoint = 'run:run-gone'"),
        (["--set", "job.initCheckpoint=/elsewhere/ckpt-1"], "tftrain:job.initCheckpoint"),
    ],
    ids=["no-input-dir", "export-inside-input", "missing-path", "missing-run", "outside"],
)  # fmt: skip
def test_bad_data_input_is_one_line_and_creates_nothing(
    tmp_path: Path, options: list[str], key: str
) -> None:
    data = tmp_path / "my-data"
    data.mkdir()
    write_stack(tmp_path / "stacks", job={"command": ["sh", str(BYO_TRAINER)]})
    options = [option.replace("{data}", str(data)) for option in options]
    out, err = io.StringIO(), io.StringIO()
    argv = [STACK, "--stacks-dir", str(tmp_path / "stacks"),
            "--output-dir", str(tmp_path / "volume" / "mnist" / "run"), *options]  # fmt: skip
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    assert status == 2
    # One problem, naming the key (a config rule's comes in the config error's list form).
    problems = [line for line in err.getvalue().splitlines() if "tftrain:" in line]
    assert len(problems) == 1 and key in problems[0], err.getvalue()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my-data", "stacks"]  # nothing made
    assert list(data.iterdir()) == []


@pytest.mark.slow
def test_full_mnist_from_a_users_directory_then_fine_tuned_in_fewer_steps(tmp_path: Path) -> None:
    data = user_data(tmp_path / "my-mnist")
    exports = tmp_path / "exports"
    write_stack(tmp_path / "stacks", hyper={"epochs": 2},
                data={"localInputDir": str(data), "localExportDir": str(exports)})  # fmt: skip
    volume = tmp_path / "volume"
    first = launch(tmp_path / "stacks", volume)
    assert first.status == 0, first.out + first.err
    steps = 2 * 60000 // 100
    assert accuracy(first.out) >= 0.98
    wanted = [r"saved_model/saved_model\.pb", r"train/events.*", "metrics.txt"]
    manifest = assert_exported(exports / "mnist" / first.run_id, first.run_id, wanted)
    assert manifest["metrics"]["global_step"] == steps

    few = 50
    tuned = launch(tmp_path / "stacks", volume, "--set", f"hyperparams.maxSteps={few}",
                   "--set", f"job.initCheckpoint=run:{first.run_id}")  # fmt: skip
    scratch = launch(tmp_path / "stacks", volume, "--set", f"hyperparams.maxSteps={few}")
    assert tuned.status == 0 and scratch.status == 0, tuned.out + scratch.out
    print(
        f"\nfrom scratch: {accuracy(first.out):.4f} after {steps} steps, "
        f"{accuracy(scratch.out):.4f} after {few}; fine-tuned: {accuracy(tuned.out):.4f} "
        f"after {few}"
    )
    assert accuracy(tuned.out) >= 0.98 > accuracy(scratch.out)
    assert load_stack(STACK, tmp_path / "stacks").job.run_id == first.run_id


@pytest.mark.parametrize("bundled", [True, False])
def test_the_bundled_trainers_checkpoint_naming_binds_it_alone(
    tmp_path: Path, bundled: bool
) -> None:
    # Fine-tuning a user's trainer from an earlier run: its checkpoints are its own kind (a
    # Keras weights file), which a pod accepts; only the bundled trainer needs ckpt-<step>.
    from infra.config import parse_config
    from infra.local.data import LocalDataError, local_data

    earlier = tmp_path / "volume" / "mnist" / "run-old" / "checkpoints"
    earlier.mkdir(parents=True)
    (earlier / "model.weights.h5").write_bytes(b"weights")
    job = {"initCheckpoint": "run:run-old"}
    if not bundled:
        job["command"] = ["python", "-m", "trainer.task"]
    config = parse_config({"image": "registry.example.com/tftrain/trainer:1", "job": job})
    output = tmp_path / "volume" / "mnist" / "run-new"
    if bundled:
        with pytest.raises(LocalDataError, match=r"tftrain:job\.initCheckpoint"):
            local_data(config, output)
    else:
        assert local_data(config, output).init_checkpoint == str(earlier)
