"""The local plan's parts one at a time (infra/local/plan.py): secrets taken from this shell
(or refused, naming each key), `--set`'s errors, the interpreter shims, and what a plan
carries for the launcher. Expected values are worked out by hand from the docstrings."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from infra.config import parse_config
from infra.config.types import SECRET_PLACEHOLDER
from infra.local.data import LocalData
from infra.local.plan import (
    INTERPRETER_NAMES,
    apply_override,
    build_plan,
    resolve_secret_env,
    secrets_on_command_lines,
    write_interpreters,
)
from infra.topology import build_topology

IMAGE = "registry.example.com/tftrain/trainer:1"
SECRET = SECRET_PLACEHOLDER  # what the stack reader makes of a `secure:` value


def with_secrets(**sections: Any) -> Any:
    return parse_config({"image": IMAGE, **sections})


def test_secret_env_values_come_from_this_shell_in_every_section() -> None:
    config = with_secrets(
        job={"env": {"PLAIN": "p", "TOKEN": SECRET, "KEY": SECRET}},
        worker={"number": 2, "env": {"WORKER_TOKEN": SECRET, "MODE": "w"}},
    )
    shell = {"TOKEN": "t0k3n", "KEY": "k3y", "WORKER_TOKEN": "w0rk"}
    resolved = resolve_secret_env(config, shell)
    assert resolved.job.env == {"PLAIN": "p", "TOKEN": "t0k3n", "KEY": "k3y"}
    assert resolved.worker.env == {"WORKER_TOKEN": "w0rk", "MODE": "w"}
    assert resolved.job.run_id == config.job.run_id  # the same run, however it is supplied


def test_missing_secrets_are_named_by_key_with_the_first_ones_export() -> None:
    config = with_secrets(
        job={"env": {"PLAIN": "p", "TOKEN": SECRET}},
        ps={"env": {"PS_KEY": SECRET}},
    )
    with pytest.raises(ValueError) as raised:
        resolve_secret_env(config, {})
    assert str(raised.value) == (
        "tftrain:job.env.TOKEN, tftrain:ps.env.PS_KEY: a Pulumi secret, which the launcher "
        "cannot decrypt; set it in this shell to run locally (export TOKEN=...)"
    )


def test_a_secret_on_a_command_line_is_refused_for_each_key_that_names_it() -> None:
    config = with_secrets(
        job={"env": {"TOKEN": SECRET, "KEY": SECRET, "PLAIN": "p"},
             "command": ["python", "t.py", "--token=$(TOKEN)"],
             "args": ["--key", "$(KEY)", "$(PLAIN)"]},
    )  # fmt: skip
    why = (
        "is a Pulumi secret; on this machine it would be on the replica's command line, "
        "visible to every user in ps: read {0} from the environment in the trainer instead"
    )
    expected = [
        f"tftrain:job.args: $(KEY) {why.format('KEY')}",
        f"tftrain:job.command: $(TOKEN) {why.format('TOKEN')}",
    ]
    assert secrets_on_command_lines(config) == expected
    with pytest.raises(ValueError) as raised:
        resolve_secret_env(config, {"TOKEN": "t", "KEY": "k"})
    assert str(raised.value) == "; ".join(expected)


def test_a_bad_set_value_names_the_flag_and_the_key() -> None:
    raw: dict[str, Any] = {}
    with pytest.raises(ValueError) as raised:
        apply_override(raw, "hyperparams.epochs=[1")
    assert str(raised.value).startswith("--set 'hyperparams.epochs=[1': --set hyperparams.epochs")
    apply_override(raw, "tftrain:hyperparams.epochs= 3")
    apply_override(raw, "job.runId=")
    assert raw == {"hyperparams": {"epochs": 3}, "job": {"runId": ""}}


def test_the_shims_run_this_interpreter_and_can_be_written_again(tmp_path: Path) -> None:
    scratch = tmp_path / "not" / "yet"
    bin_dir = write_interpreters(scratch)
    assert write_interpreters(scratch) == bin_dir == scratch / "bin"
    assert sorted(p.name for p in bin_dir.iterdir()) == sorted(INTERPRETER_NAMES)
    for name in INTERPRETER_NAMES:
        done = subprocess.run(
            [str(bin_dir / name), "-c", "import sys; print(sys.prefix, sys.argv[1:])", "a b"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        # This interpreter with its environment (a virtual one stays active), the args intact.
        assert done.stdout == f"{sys.prefix} ['a b']\n", name


def plan_of(tmp_path: Path, data: LocalData | None, **options: Any) -> Any:
    config = parse_config({"image": IMAGE, "job": {"runId": "r"}})
    ports = {r.name: 41000 + i for i, r in enumerate(build_topology(config).replicas)}
    base = {"PATH": "/usr/bin", "LANG": "C.UTF-8", "SECRET_OF_THE_SHELL": "x"}
    return build_plan(config, ports, tmp_path / "out", tmp_path / "scratch", base, data, **options)


def test_a_plan_carries_its_scratch_root_and_a_generation_of_its_own(tmp_path: Path) -> None:
    one, two = plan_of(tmp_path, None), plan_of(tmp_path, None)
    assert one.scratch_root == tmp_path / "scratch"
    assert one.outcomes == tmp_path / "out" / ".tftrain-run"
    assert re.fullmatch(r"[0-9a-f]{12}", one.generation)  # as a deploy's (12 hex digits)
    assert one.generation != two.generation  # each launch is a deploy of its own


def test_a_replica_gets_the_given_hosts_env_not_the_launchers(tmp_path: Path) -> None:
    for spec in plan_of(tmp_path, None).replicas:
        assert spec.env["PATH"] == f"{tmp_path / 'scratch' / 'bin'}:/usr/bin"
        assert spec.env["LANG"] == "C.UTF-8"
        assert "SECRET_OF_THE_SHELL" not in spec.env


def test_only_the_replica_that_ends_the_run_exports(tmp_path: Path) -> None:
    data = LocalData(None, tmp_path / "exports", "")
    plan = plan_of(tmp_path, data, stack="dev")
    envs = {spec.name: spec.env for spec in plan.replicas}
    assert envs["mnist-chief-0"]["TFTRAIN_EXPORT_DIR"] == str(tmp_path / "exports")
    assert envs["mnist-chief-0"]["TFTRAIN_STACK"] == "dev"
    assert "TFTRAIN_IMAGES" not in envs["mnist-chief-0"]  # a pod's images: not here
    for name in ("mnist-worker-0", "mnist-worker-1", "mnist-ps-0"):
        assert "TFTRAIN_EXPORT_DIR" not in envs[name], name
    # Without a stack name, none is claimed.
    unnamed = plan_of(tmp_path, data).replicas[0].env
    assert "TFTRAIN_EXPORT_DIR" in unnamed and "TFTRAIN_STACK" not in unnamed


def test_without_local_input_the_data_env_names_none(tmp_path: Path) -> None:
    for spec in plan_of(tmp_path, LocalData(None, None, "")).replicas:
        assert "TFTRAIN_INPUT_DIR" not in spec.env and "TFTRAIN_INIT_CHECKPOINT" not in spec.env
    [chief, *_] = plan_of(tmp_path, LocalData(tmp_path / "in", None, "/v/ckpt")).replicas
    assert chief.env["TFTRAIN_INPUT_DIR"] == str(tmp_path / "in")
    assert chief.env["TFTRAIN_INIT_CHECKPOINT"] == "/v/ckpt"
