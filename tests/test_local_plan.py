"""The local launcher's pure parts: overrides, command, env, ports, primary replica."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from infra.config import parse_config
from infra.lifecycle import OUTCOMES_DIR, SCRIPT
from infra.local.plan import (
    REPO,
    apply_override,
    build_plan,
    default_output_dir,
    primary_replica,
    process_env,
    write_interpreters,
)
from infra.local.ports import HOST, PortReservation
from infra.topology import build_topology

IMAGE = {"image": "registry.example.com/tftrain/trainer:1"}


@pytest.mark.parametrize(
    ("assignment", "expected"),
    [
        ("hyperparams.maxSteps=50", {"hyperparams": {"maxSteps": 50, "epochs": 3}}),
        ("tftrain:hyperparams.epochs=1", {"hyperparams": {"epochs": 1}}),
        ("job.command=[python, my.py]", {"job": {"command": ["python", "my.py"]}}),
        ("job.runId=", {"job": {"runId": ""}}),
        ("image=a=b", {"image": "a=b"}),
    ],
)
def test_apply_override(assignment: str, expected: dict) -> None:
    raw: dict = {"hyperparams": {"epochs": 3}}
    apply_override(raw, assignment)
    assert raw == {"hyperparams": {"epochs": 3}, **expected}


@pytest.mark.parametrize("assignment", ["maxSteps", "=1", "a..b=1", "image=["])
def test_apply_override_rejects(assignment: str) -> None:
    with pytest.raises(ValueError, match="--set"):
        apply_override({}, assignment)


def test_the_interpreter_shims_are_executable_and_writable_by_their_owner_only(
    tmp_path: Path,
) -> None:
    shims = sorted(write_interpreters(tmp_path).iterdir())
    assert shims
    assert {stat.S_IMODE(shim.stat().st_mode) for shim in shims} == {0o755}


def test_an_upper_case_no_proxy_alone_is_kept_too(tmp_path: Path) -> None:
    env = process_env({"NO_PROXY": "internal.example.com"}, {}, tmp_path)
    assert env["no_proxy"] == env["NO_PROXY"] == "localhost,127.0.0.1,internal.example.com"


def test_a_secret_named_in_a_groups_own_command_is_refused_under_its_key() -> None:
    from infra.local.plan import secrets_on_command_lines

    config = parse_config({
        **IMAGE,
        "job": {"env": {"TOKEN": {"secure": "v1:x"}}},
        "worker": {"command": ["python", "train.py", "--token=$(TOKEN)"]},
    })  # fmt: skip
    assert secrets_on_command_lines(config) == [
        "tftrain:worker.command: $(TOKEN) is a Pulumi secret; on this machine it would be on the "
        "replica's command line, visible to every user in ps: read TOKEN from the environment "
        "in the trainer instead"
    ]


def test_python_anywhere_in_a_command_is_this_interpreter(tmp_path: Path) -> None:
    """Through the shims first on PATH: as argv[0], inside `sh -c`, after `env X=1`."""
    write_interpreters(tmp_path)
    env = process_env({"PATH": os.environ["PATH"]}, {}, tmp_path)
    probe = "import sys; print(sys.prefix)"
    for argv in (
        ["python", "-c", probe],
        ["sh", "-c", f"python3 -c '{probe}'"],
        ["env", "X=1", f"python3.{sys.version_info.minor}", "-c", probe],
    ):
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
        assert done.stdout.strip() == sys.prefix, argv


def test_process_env_is_the_replicas_plus_what_runs_here(tmp_path: Path) -> None:
    base = {
        "TFTRAIN_MAX_STEPS": "7",
        "TFTRAIN_TRAIN_EXAMPLES": "2048",  # not the stack's: a pod would not get it either
        "AWS_SECRET_ACCESS_KEY": "x",  # nor this
        "TF_CPP_MIN_LOG_LEVEL": "0",  # the user's choice wins over the default
        "LANG": "C.UTF-8",
        "PATH": "/usr/bin",
        "http_proxy": "http://proxy:3128",
        "no_proxy": "internal.example.com,localhost",
    }
    env = process_env(base, {"TFTRAIN_MAX_STEPS": "0", "TF_CONFIG": "{}"}, tmp_path)
    assert env["TFTRAIN_MAX_STEPS"] == "0"
    assert "TFTRAIN_TRAIN_EXAMPLES" not in env and "AWS_SECRET_ACCESS_KEY" not in env
    assert env["TF_CPP_MIN_LOG_LEVEL"] == "0" and env["LANG"] == "C.UTF-8"
    assert env["http_proxy"] == "http://proxy:3128"
    assert env["PATH"] == f"{tmp_path / 'bin'}:/usr/bin"
    assert env["no_proxy"] == env["NO_PROXY"] == "localhost,127.0.0.1,internal.example.com"


@pytest.mark.parametrize(
    ("groups", "primary"),
    [
        ({}, "mnist-chief-0"),
        ({"chief": {"number": 0}, "ps": {"number": 0}, "worker": {"number": 4}}, "mnist-worker-0"),
    ],
)
def test_primary_is_chief_else_worker_0(groups: dict, primary: str) -> None:
    assert primary_replica(build_topology(parse_config({**IMAGE, **groups}))) == primary


# docs/hyperparameters.md: the hyperparams defaults, maxSteps 5, as the trainer's env vars.
TRAINER_SETTINGS = {
    "TFTRAIN_EPOCHS": "4",
    "TFTRAIN_BATCH_SIZE": "128",
    "TFTRAIN_LEARNING_RATE": "0.003",
    "TFTRAIN_STRATEGY": "auto",
    "TFTRAIN_CHECKPOINT_STEPS": "500",
    "TFTRAIN_KEEP_CHECKPOINTS": "3",
    "TFTRAIN_LOG_STEPS": "100",
    "TFTRAIN_STEPS_PER_EXECUTION": "50",
    "TFTRAIN_MAX_STEPS": "5",
}


def test_plan_moves_the_topology_to_localhost_and_keeps_the_contract(tmp_path: Path) -> None:
    config = parse_config({**IMAGE, "hyperparams": {"maxSteps": 5}})
    names = [replica.name for replica in build_topology(config).replicas]
    ports = {name: 40000 + i for i, name in enumerate(names)}
    plan = build_plan(config, ports, tmp_path, tmp_path / "scratch", base_env={})
    assert plan.topology.cluster_spec == {
        "chief": ["localhost:40000"],
        "worker": ["localhost:40001", "localhost:40002"],
        "ps": ["localhost:40003"],
    }
    outcomes = str(tmp_path / OUTCOMES_DIR)
    generations = set()
    for spec in plan.replicas:
        # The stack's command under the same supervisor script the Jobs run.
        role = "--ends-run" if spec.name == "mnist-chief-0" else "--follows-run"
        assert spec.argv[:6] == ("/bin/sh", str(SCRIPT), role, "--outcomes", outcomes, "--run")
        assert spec.argv[6] == config.job.run_id
        assert spec.argv[7:12:2] == ("--generation", "--replica", "--backoff-limit")
        assert spec.argv[10:13:2] == (spec.name, str(config.job.backoff_limit))
        generations.add(spec.argv[8])
        workdir = f"{tmp_path}/replicas/{spec.name}/work"
        assert spec.argv[-6:] == ("--workdir", workdir, "--", "python", "-m", "trainer")
        assert spec.env["TFTRAIN_OUTPUT_DIR"] == str(tmp_path)
        assert spec.env["HOME"] == f"{tmp_path}/replicas/{spec.name}/home"
        assert spec.env["TMPDIR"] == str(tmp_path / "scratch" / spec.name)
        assert spec.env["PYTHONUNBUFFERED"] == "1"
        # The trainer's documented settings (trainer/settings.py), from the stack's
        # hyperparams: maxSteps as set, the rest the documented defaults.
        assert TRAINER_SETTINGS.items() <= dict(spec.env).items()
        # No initCheckpoint, no --input-dir: nothing to start from.
        assert "TFTRAIN_INIT_CHECKPOINT" not in spec.env
    assert len(generations) == 1  # one launch, one deploy generation for every replica
    assert default_output_dir("dev", config) == REPO / "runs/dev/mnist" / config.job.run_id


@pytest.mark.parametrize("in_cluster", [False, True])
def test_local_evaluator_follows_the_stacks_tf_config_shape(
    tmp_path: Path, in_cluster: bool
) -> None:
    # With ps, the bundled trainer refuses an evaluator in the cluster (config rules).
    raw = {**IMAGE, "evaluator": {"number": 1}, "job": {"evaluatorInCluster": in_cluster},
           "ps": {"number": 0}, "worker": {"number": 1}}  # fmt: skip
    config = parse_config(raw)
    names = [replica.name for replica in build_topology(config).replicas]
    ports = {name: 40000 + i for i, name in enumerate(names)}
    plan = build_plan(config, ports, tmp_path, tmp_path, {})
    for spec in plan.replicas:
        cluster = json.loads(spec.env["TF_CONFIG"])["cluster"]
        assert ("evaluator" in cluster) is in_cluster
        if in_cluster:
            assert cluster["evaluator"] == [f"localhost:{ports['mnist-evaluator-0']}"]


def test_reserved_ports_are_distinct_held_and_free_after_release() -> None:
    with PortReservation(["a", "b", "c"]) as reservation:
        ports = reservation.ports
        assert len(set(ports.values())) == 3
        with socket.socket() as probe, pytest.raises(OSError):
            probe.bind((HOST, ports["a"]))  # held: nobody else gets it meanwhile
        reservation.release("a")
        reservation.release("a")  # a restarted replica releases again: harmless
        with socket.socket() as replica:
            replica.bind((HOST, ports["a"]))
            replica.listen()
    for name in ("b", "c"):  # never released one by one: the reservation's end frees them
        with socket.socket() as replica:
            replica.bind((HOST, ports[name]))


def test_the_launcher_runs_a_run_stack_and_refuses_a_platform(tmp_path: Path) -> None:
    """A run stack's run is its own config (the platform only places it in the cloud); a
    platform stack has none."""
    launch = [sys.executable, "-m", "infra.local", "--dry-run", "--output-dir", str(tmp_path)]
    run = subprocess.run([*launch, "run-ack"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "mnist-worker-1" in run.stdout
    platform = subprocess.run(
        [*launch, "platform-ack"], capture_output=True, text=True, timeout=120
    )
    assert platform.returncode == 2
    assert "platform-ack is a platform stack (tftrain:cluster.role platform)" in platform.stderr


def _plan(tmp_path: Path, raw: dict, base_env: dict | None = None, start_dir: Path | None = None):
    config = parse_config({**IMAGE, **raw})
    names = [replica.name for replica in build_topology(config).replicas]
    ports = {name: 40000 + i for i, name in enumerate(names)}
    return build_plan(
        config, ports, tmp_path, tmp_path / "scratch", base_env or {}, start_dir=start_dir
    )


def test_var_references_expand_from_the_containers_env_only(tmp_path: Path) -> None:
    # Kubernetes: `$(VAR_NAME)` is expanded from the container's own env (its `env` list);
    # an unresolvable reference is left unchanged. The launcher's LANG or PATH is not in a
    # pod's spec, so it stays as written, as the kubelet leaves it.
    args = ["--lang=$(LANG)", "--path=$(PATH)", "--lr=$(MY_LR)", "--me=$(POD_NAME)", "$$(X)"]
    raw = {"job": {"command": ["python", "t.py"], "args": args, "env": {"MY_LR": "0.1"}}}
    plan = _plan(tmp_path, raw, base_env={"LANG": "C.UTF-8", "PATH": "/usr/bin"})
    for spec in plan.replicas:
        assert spec.argv[-5:] == (
            "--lang=$(LANG)", "--path=$(PATH)", "--lr=0.1", f"--me={spec.name}", "$(X)"
        )  # fmt: skip
        assert spec.env["LANG"] == "C.UTF-8"  # the process still runs with it


def test_the_checkout_is_the_code_dir_only_for_the_bundled_trainer(tmp_path: Path) -> None:
    project = tmp_path / "my-project"
    bundled = _plan(tmp_path, {}, start_dir=project)
    assert {spec.cwd for spec in bundled.replicas} == {REPO}
    own = _plan(tmp_path, {"job": {"command": ["python", "-m", "trainer.task"]}}, start_dir=project)
    assert {spec.cwd for spec in own.replicas} == {project}


def test_python_m_trainer_is_the_users_where_the_pod_would_run_the_users(tmp_path: Path) -> None:
    # In a pod, `python -m trainer` runs the `trainer` of the image's WORKDIR: tftrain's in
    # tftrain's image, the user's in theirs. Here the user's package is in their directory.
    project = tmp_path / "project"
    (project / "trainer").mkdir(parents=True)
    (project / "trainer" / "__main__.py").write_text("print('mine')\n")
    command = {"job": {"command": ["python", "-m", "trainer"]}}
    ours = _plan(tmp_path, command, start_dir=project)  # IMAGE is tftrain's
    assert {spec.cwd for spec in ours.replicas} == {REPO}
    mine = {"image": "registry.example.com/me/trainer:1", "tensorboard": {"enabled": False}}
    theirs = _plan(tmp_path, {**command, **mine}, start_dir=project)
    assert {spec.cwd for spec in theirs.replicas} == {project}


def test_a_stack_that_would_hang_is_warned_of_by_render_and_launcher(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from infra.local.cli import main as launch
    from infra.render.__main__ import main as render
    from infra.topology import hang_warnings

    own = {"command": ["python", "-m", "trainer.task"], "evaluatorInCluster": True}
    raw = {"job": own, "evaluator": {"number": 1}}
    [warning] = hang_warnings(parse_config({**IMAGE, **raw}))
    assert warning.startswith("warning: tftrain:job.evaluatorInCluster is true with ps and an ")
    # Without ps (MultiWorkerMirrored) or out of the cluster: no hang. (The bundled trainer
    # with ps refuses an evaluator in the cluster: a config rule.)
    for quiet in (
        {**raw, "ps": {"number": 0}},
        {**raw, "job": {**own, "evaluatorInCluster": False}},
    ):
        assert hang_warnings(parse_config({**IMAGE, **quiet})) == [], quiet
    stack = {"config": {f"tftrain:{key}": value for key, value in {**IMAGE, **raw}.items()}}
    (tmp_path / "Pulumi.hang.yaml").write_text(json.dumps(stack))
    assert render(["hang", "--stacks-dir", str(tmp_path), "--only", "kubernetes"]) == 0
    assert "warning: tftrain:job.evaluatorInCluster is true" in capsys.readouterr().err
    assert launch(["hang", "--stacks-dir", str(tmp_path), "--dry-run"]) == 0
    out = capsys.readouterr()
    assert "evaluatorInCluster" in out.out + out.err


def test_tensorboard_serves_this_machines_loopback_over_the_jobs_runs(tmp_path: Path) -> None:
    from infra.local.plan import tensorboard_process

    spec = tensorboard_process(tmp_path / "runs", 6006, {"LANG": "C", "SECRET": "x"}, tmp_path)
    assert spec.name == "tensorboard"
    logdir = str(tmp_path / "runs")
    assert spec.argv == (sys.executable, "-m", "tensorboard.main", "--logdir", logdir,
                         "--host", "127.0.0.1", "--port", "6006")  # fmt: skip
    assert spec.env == {
        "TF_CPP_MIN_LOG_LEVEL": "2",
        "LANG": "C",
        "no_proxy": "localhost,127.0.0.1",
        "NO_PROXY": "localhost,127.0.0.1",
        "PATH": f"{tmp_path / 'bin'}:{os.defpath}",  # no PATH here: the system's default
    }


def test_an_override_below_a_plain_value_makes_a_mapping_of_it() -> None:
    raw: dict = {"job": "mnist"}
    apply_override(raw, "job.name=other")
    assert raw == {"job": {"name": "other"}}
    apply_override(raw, " tftrain:job.runId = ")  # spaces around the key, an empty value
    assert raw == {"job": {"name": "other", "runId": ""}}
