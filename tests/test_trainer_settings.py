"""Settings precedence and errors, step arithmetic and proxies: the
trainer's pure-Python parts, plus the exit code of `python -m trainer` on bad input."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from trainer import environment
from trainer.plan import make_plan
from trainer.settings import BUNDLED_DATA_DIR, Settings, SettingsError, parse_settings
from trainer.steps import StepPlan
from trainer.tf_config import parse_tf_config


def test_defaults() -> None:
    settings = parse_settings([], {})
    assert settings.data_dir == BUNDLED_DATA_DIR
    assert settings.output_dir == Path("/output")
    assert settings.strategy == "auto"
    assert (settings.max_steps, settings.train_examples) == (0, 0)


def test_flag_beats_env_beats_default() -> None:
    env = {"TFTRAIN_EPOCHS": "7", "TFTRAIN_BATCH_SIZE": "64", "TFTRAIN_LEARNING_RATE": "0.01"}
    settings = parse_settings(["--epochs", "2", "--output-dir", "/tmp/x"], env)
    assert settings.epochs == 2
    assert settings.batch_size == 64
    assert settings.learning_rate == 0.01
    assert settings.output_dir == Path("/tmp/x")


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["--epochs", "0"], {}, "--epochs / TFTRAIN_EPOCHS must be an integer >= 1, got '0'"),
        ([], {"TFTRAIN_BATCH_SIZE": "lots"}, "--batch-size / TFTRAIN_BATCH_SIZE must be an"),
        ([], {"TFTRAIN_LEARNING_RATE": "-1"}, "TFTRAIN_LEARNING_RATE must be a number > 0"),
        ([], {"TFTRAIN_LEARNING_RATE": "nan"}, "TFTRAIN_LEARNING_RATE must be a number > 0"),
        (["--strategy", "horovod"], {}, "TFTRAIN_STRATEGY must be one of auto, parameter_"),
        ([], {"TFTRAIN_MAX_STEPS": "-5"}, "TFTRAIN_MAX_STEPS must be an integer >= 0"),
        ([], {"TFTRAIN_OUTPUT_DIR": ""}, "TFTRAIN_OUTPUT_DIR must be a directory path"),
    ],
)
def test_bad_values_name_flag_and_env_var(argv: list[str], env: dict, message: str) -> None:
    with pytest.raises(SettingsError) as error:
        parse_settings(argv, env)
    assert message in str(error.value)


def run_trainer(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    inherited = {
        key: value
        for key, value in os.environ.items()
        if key != "TF_CONFIG" and not key.startswith("TFTRAIN_")
    }
    return subprocess.run(
        [sys.executable, "-m", "trainer", *argv],
        env={**inherited, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_bad_setting_exits_2_before_tensorflow_starts() -> None:
    started = time.monotonic()
    done = run_trainer("--epochs", "zero")
    assert done.returncode == 2
    assert "--epochs / TFTRAIN_EPOCHS must be an integer >= 1, got 'zero'" in done.stderr
    assert "Traceback" not in done.stderr
    assert time.monotonic() - started < 10  # no TensorFlow import


def test_bad_tf_config_exits_2() -> None:
    done = run_trainer(TF_CONFIG='{"cluster": {"worker": ["localhost:1"]}, "task": {"type": "x"}}')
    assert done.returncode == 2
    assert "TF_CONFIG task type 'x' is unknown" in done.stderr


def test_missing_data_exits_1_naming_the_file(tmp_path: Path) -> None:
    done = run_trainer(f"--data-dir={tmp_path}", f"--output-dir={tmp_path / 'out'}")
    assert done.returncode == 1
    assert f"cannot read checksum file {tmp_path / 'SHA256SUMS'}" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("examples", "batch", "epochs", "max_steps", "per_epoch", "final"),
    [(60000, 256, 3, 0, 235, 705), (60000, 128, 1, 0, 469, 469), (2048, 256, 3, 20, 8, 20)],
)
def test_step_plan(
    examples: int, batch: int, epochs: int, max_steps: int, per_epoch: int, final: int
) -> None:
    settings = parse_settings(
        [f"--batch-size={batch}", f"--epochs={epochs}", f"--max-steps={max_steps}"], {}
    )
    steps = StepPlan.from_settings(settings, examples)
    assert (steps.steps_per_epoch, steps.final_step) == (per_epoch, final)


def test_chunks_stop_at_log_and_checkpoint_boundaries() -> None:
    steps = StepPlan(
        steps_per_epoch=469,
        final_step=1000,
        log_steps=30,
        checkpoint_steps=200,
        steps_per_execution=20,
    )
    chunks, step = [], 0
    while step < steps.final_step:
        chunks.append(steps.next_chunk(step))
        step += chunks[-1]
    assert chunks[:4] == [20, 10, 20, 10]  # cut at 30, 60
    boundaries = {sum(chunks[: i + 1]) for i in range(len(chunks))}
    assert {30, 60, 200, 400, 990, 1000} <= boundaries
    assert steps.position(469) == (1, 469)
    assert steps.position(470) == (2, 1)


def test_proxy_is_bypassed_for_the_cluster() -> None:
    config = parse_tf_config(
        '{"cluster": {"worker": ["w0.ns.svc:2222"], "chief": ["c.ns.svc:1"],'
        ' "ps": ["p0.ns.svc:2222"]}, "task": {"type": "worker", "index": 0}}'
    )
    env = {"https_proxy": "http://proxy:3128", "no_proxy": "example.com"}
    environment.prepare(config, make_plan("auto", config), env)
    for name in ("no_proxy", "NO_PROXY"):
        hosts = env[name].split(",")
        assert {"localhost", "127.0.0.1", "p0.ns.svc", "w0.ns.svc"} <= set(hosts)
    assert env["no_proxy"].startswith("example.com,")


def test_no_proxy_left_alone_without_a_proxy() -> None:
    env: dict[str, str] = {}
    environment.prepare(None, make_plan("auto", None), env)
    assert "no_proxy" not in env


@pytest.fixture
def cores(monkeypatch: pytest.MonkeyPatch) -> Callable[[int, float | None], None]:
    """Pretend this process may run on `n` cores under a cgroup CPU limit `quota`."""

    def pretend(n: int, quota: float | None = None) -> None:
        monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(n)))
        monkeypatch.setattr(environment, "cgroup_cpus", lambda _root=None: quota)

    return pretend


@pytest.mark.parametrize(
    ("cluster", "threads"),
    [
        ('{"chief": ["localhost:1"], "worker": ["localhost:2", "localhost:3"], "ps": '
         '["localhost:4"]}', {1: "1", 2: "1", 4: "2", 8: "4"}),
        ('{"worker": ["localhost:2", "localhost:3"], "chief": ["localhost:1"]}',
         {1: "1", 2: "1", 6: "2"}),
        ('{"worker": ["w0.ns.svc:2222", "w1.ns.svc:2222"]}', {1: "1", 2: "2", 8: "8"}),
    ],
    ids=["local-ps", "local-mwms-with-chief", "kubernetes"],
)  # fmt: skip
def test_intra_op_threads_follow_the_process_s_share_of_the_cores(
    cores: Callable[..., None], cluster: str, threads: dict[int, str]
) -> None:
    config = parse_tf_config(f'{{"cluster": {cluster}, "task": {{"type": "worker"}}}}')
    for n, expected in threads.items():
        cores(n)
        env: dict[str, str] = {}
        environment.prepare(config, make_plan("auto", config), env)
        assert env["TF_NUM_INTRAOP_THREADS"] == expected, n


@pytest.mark.parametrize(
    ("affinity", "quota", "intra", "inter"),
    [(1, None, "1", "2"), (2, None, "2", "2"), (16, 1.0, "1", "2"), (16, 0.5, "1", "2"),
     (16, 2.5, "3", "3"), (4, 8.0, "4", "4")],
)  # fmt: skip
def test_one_core_never_gets_one_inter_op_thread(
    cores: Callable[..., None], affinity: int, quota: float | None, intra: str, inter: str
) -> None:
    # One inter-op thread deadlocks a ps/worker server (issue 41); a cgroup quota (a pod's
    # CPU limit) caps the pools, which TensorFlow itself sizes from the affinity mask alone.
    cores(affinity, quota)
    for config in (None, parse_tf_config('{"cluster": {"chief": ["c0:1"], "worker": ["w0:1"], '
                                         '"ps": ["p0:1"]}, "task": {"type": "ps"}}')):  # fmt: skip
        env: dict[str, str] = {}
        environment.prepare(config, make_plan("auto", config), env)
        assert (env["TF_NUM_INTRAOP_THREADS"], env["TF_NUM_INTEROP_THREADS"]) == (intra, inter)


@pytest.mark.parametrize("value", ["1", "0", "-3"])
def test_an_inter_op_setting_below_two_is_raised_and_said(
    cores: Callable[..., None], capsys: pytest.CaptureFixture[str], value: str
) -> None:
    cores(1)
    env = {"TF_NUM_INTEROP_THREADS": value}
    environment.prepare(None, make_plan("auto", None), env)
    assert env["TF_NUM_INTEROP_THREADS"] == "2"
    assert f"TF_NUM_INTEROP_THREADS={value} raised to 2" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("files", "expected"),
    [({"cpu.max": "max 100000\n"}, None), ({"cpu.max": "150000 100000\n"}, 1.5),
     ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
     ({"cpu/cpu.cfs_quota_us": "50000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 0.5),
     ({}, None)],
    ids=["v2-unlimited", "v2-limit", "v1-unlimited", "v1-limit", "no-cgroup"],
)  # fmt: skip
def test_cgroup_cpu_limit(tmp_path: Path, files: dict[str, str], expected: float | None) -> None:
    # The kernel's formats (Documentation/admin-guide/cgroup-v2.rst "cpu.max";
    # scheduler/sched-bwc.rst for v1's cfs_quota_us, -1 for none).
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert environment.cgroup_cpus(tmp_path) == expected


def test_thread_setting_of_the_user_wins() -> None:
    config = parse_tf_config('{"cluster": {"worker": ["localhost:2"]}, "task": {"type": "worker"}}')
    env = {"TF_NUM_INTRAOP_THREADS": "3", "TF_NUM_INTEROP_THREADS": "5"}
    environment.prepare(config, make_plan("auto", config), env)
    assert (env["TF_NUM_INTRAOP_THREADS"], env["TF_NUM_INTEROP_THREADS"]) == ("3", "5")


def test_the_trainer_process_skips_matplotlib_and_keras_does_without_it(tmp_path: Path) -> None:
    # Keras imports matplotlib.pyplot with itself when it is installed (a user's image may have
    # it); `python -m trainer` marks it absent first, and Keras then carries on without it. A
    # stand-in package makes matplotlib "installed" here, whatever this venv holds.
    (tmp_path / "matplotlib").mkdir()
    (tmp_path / "matplotlib" / "__init__.py").write_text("")
    (tmp_path / "matplotlib" / "pyplot.py").write_text("")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path[1:]])}
    found = []
    for skip in ("environment.skip_plotting_imports()", "pass"):
        code = (
            f"import sys; from trainer import environment; {skip}; import keras; "
            "print('matplotlib.pyplot' in sys.modules, keras.layers.Dense(2).units)"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
            check=True, env=env, cwd=Path(__file__).parents[1],
        )  # fmt: skip
        found.append(done.stdout.split())
    # Skipped: not imported, and Keras works; not skipped: Keras would have imported it.
    assert found == [["False", "2"], ["True", "2"]]


def test_every_default() -> None:
    """The defaults settings.py's docstring tunes (batch 128, 4 epochs, 50 steps fused, a
    checkpoint every 500) and docs/trainer.md names (a stall line after 300 s)."""
    settings = parse_settings([], {})
    assert settings == Settings(
        data_dir=BUNDLED_DATA_DIR, output_dir=Path("/output"), epochs=4, batch_size=128,
        learning_rate=0.003, strategy="auto", checkpoint_steps=500, keep_checkpoints=3,
        log_steps=100, steps_per_execution=50, max_steps=0, train_examples=0, seed=1, gpus=0,
        stall_seconds=300, init_checkpoint=None,
    )  # fmt: skip


# Each whole-number setting at its least value, and one below (hand-written from the
# contract: counts of steps, epochs and examples per step are at least 1, a cap, a count
# of examples, a seed and a GPU count at least 0, kept checkpoints at least 2).
LEAST = {
    "epochs": 1, "batch_size": 1, "checkpoint_steps": 1, "keep_checkpoints": 2,
    "log_steps": 1, "steps_per_execution": 1, "max_steps": 0, "train_examples": 0,
    "seed": 0, "gpus": 0, "stall_seconds": 1,
}  # fmt: skip


@pytest.mark.parametrize(("field", "least"), LEAST.items())
def test_whole_number_bounds(field: str, least: int) -> None:
    flag, env = "--" + field.replace("_", "-"), "TFTRAIN_" + field.upper()
    assert getattr(parse_settings([f"{flag}={least}"], {}), field) == least
    assert getattr(parse_settings([], {env: f" {least + 1} "}), field) == least + 1
    with pytest.raises(SettingsError) as error:
        parse_settings([], {env: str(least - 1)})
    assert str(error.value) == (f"{flag} / {env} must be an integer >= {least}, got '{least - 1}'")


@pytest.mark.parametrize("text", ["0", "-0.1", "inf", "nan", "x"])
def test_a_learning_rate_must_be_a_finite_number_above_zero(text: str) -> None:
    with pytest.raises(SettingsError) as error:
        parse_settings(["--learning-rate", text], {})
    assert str(error.value) == (
        f"--learning-rate / TFTRAIN_LEARNING_RATE must be a number > 0, got '{text}'"
    )


def test_a_tiny_learning_rate_is_still_one() -> None:
    assert parse_settings([], {"TFTRAIN_LEARNING_RATE": "1e-9"}).learning_rate == 1e-9


@pytest.mark.parametrize(
    ("value", "expected"),
    [("", None), ("  ", None), ("/data/ckpt/ckpt-500", Path("/data/ckpt/ckpt-500"))],
)
def test_an_init_checkpoint_is_a_path_or_nothing(value: str, expected: Path | None) -> None:
    assert parse_settings([], {"TFTRAIN_INIT_CHECKPOINT": value}).init_checkpoint == expected


def test_help_names_each_flag_with_its_env_var_and_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """docs/trainer.md: the settings are flags too, listed by `python -m trainer --help`."""
    with pytest.raises(SystemExit) as done:
        parse_settings(["--help"], {})
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps to the terminal
    assert text.startswith("usage: python -m trainer [-h] [--data-dir TFTRAIN_DATA_DIR] ")
    for phrase in (
        "TFTRAIN_INIT_CHECKPOINT] Train an MNIST CNN alone, or as one task of a TF_CONFIG "
        "cluster. options: -h, --help",
        "--epochs TFTRAIN_EPOCHS passes over the training set [default: 4]",
        "--batch-size TFTRAIN_BATCH_SIZE global batch: examples per training step [default: 128]",
        "--init-checkpoint TFTRAIN_INIT_CHECKPOINT fine-tuning:",
    ):
        assert phrase in text
    assert text.endswith("Every flag can also be set by its TFTRAIN_* env var; the flag wins.")


def test_a_run_whose_end_is_no_multiple_of_its_intervals() -> None:
    """Worked by hand: 1000 examples at batch 64 is ceil(15.6) = 16 steps an epoch, 3 epochs
    48 steps; a line every 10, a checkpoint every 25, at most 7 steps fused. Chunks stop at
    each line (10, 20, 30, 40) and checkpoint (25), and at the end (48), which is both."""
    settings = parse_settings(
        ["--batch-size=64", "--epochs=3", "--log-steps=10", "--checkpoint-steps=25",
         "--steps-per-execution=7"], {},
    )  # fmt: skip
    steps = StepPlan.from_settings(settings, 1000)
    assert steps == StepPlan(
        steps_per_epoch=16, final_step=48, log_steps=10, checkpoint_steps=25,
        steps_per_execution=7,
    )  # fmt: skip
    reached, step = [], 0
    while step < steps.final_step:
        step += steps.next_chunk(step)
        reached.append(step)
    assert reached == [7, 10, 17, 20, 25, 30, 37, 40, 47, 48]
    assert [s for s in reached if steps.is_log_boundary(s)] == [10, 20, 30, 40, 48]
    assert [s for s in reached if steps.is_checkpoint_boundary(s)] == [25, 48]
    assert steps.position(48) == (3, 16)
    assert steps.epochs == 3
