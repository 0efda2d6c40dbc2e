"""Env values that are Pulumi secrets (`pulumi config set --secret --path tftrain:job.env.X`):
in the stack file they are `{secure: <ciphertext>}`; offline they read as a placeholder; the
engine hands the program the whole section decrypted and marks it secret (Pulumi's config
docs: a secure value inside a structured key makes the key secret), so the Jobs carrying
them are Pulumi secrets; the local launcher takes them from the shell.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra.config import load_stack_file, parse_config
from infra.config.types import SECRET_PLACEHOLDER
from infra.local.plan import resolve_secret_env
from tests.pulumi_mocks import run_program

IMAGE = "registry.example.com/tftrain/trainer:1"
TOKEN = "s3cr3t-token-value"


def test_offline_a_secure_value_is_a_placeholder_and_the_run_id_ignores_values(
    tmp_path: Path,
) -> None:
    stack = tmp_path / "Pulumi.s.yaml"
    stack.write_text(
        f"config:\n  tftrain:image: {IMAGE}\n  tftrain:job:\n    env:\n"
        "      TOKEN:\n        secure: v1:AAAAbase64ciphertext\n      PLAIN: x\n"
    )
    offline = load_stack_file(stack)
    assert offline.job.env == {"TOKEN": SECRET_PLACEHOLDER, "PLAIN": "x"}
    # What the program sees (decrypted): the same run id, so render and deploy agree.
    deployed = parse_config({"image": IMAGE, "job": {"env": {"TOKEN": TOKEN, "PLAIN": "x"}}})
    assert offline.job.run_id == deployed.job.run_id
    assert TOKEN not in deployed.job.run_id


def test_the_program_makes_every_job_with_secret_env_a_secret() -> None:
    config = {"image": IMAGE, "cluster": {"kind": "existing"}}
    recorded = run_program(config, secrets={"job": json.dumps({"env": {"TOKEN": TOKEN}})})
    jobs = recorded.of_type("kubernetes:batch/v1:Job")
    assert jobs
    for job in jobs:
        assert "spec" in job.secret_paths, job.name
        (container,) = job.inputs["spec"]["template"]["spec"]["containers"]
        env = {e["name"]: e.get("value") for e in container["env"]}
        assert env["TOKEN"] == TOKEN  # the pod gets the value
    # Nothing else carries it in the clear.
    for resource in recorded.resources:
        if resource.type != "kubernetes:batch/v1:Job":
            assert TOKEN not in json.dumps(resource.inputs, default=str), resource.name
    assert TOKEN not in json.dumps(recorded.outputs, default=str)


def test_without_secrets_jobs_stay_plain() -> None:
    recorded = run_program({"image": IMAGE, "job": {"env": {"LEVEL": "1"}}})
    for job in recorded.of_type("kubernetes:batch/v1:Job"):
        assert "spec" not in job.secret_paths


def test_locally_a_secret_comes_from_the_shell_or_is_refused_by_key() -> None:
    config = parse_config({"image": IMAGE, "worker": {"env": {"TOKEN": {"secure": "v1:x"}}}})
    resolved = resolve_secret_env(config, {"TOKEN": TOKEN})
    assert resolved.worker.env == {"TOKEN": TOKEN}
    with pytest.raises(ValueError, match=r"tftrain:worker\.env\.TOKEN: a Pulumi secret"):
        resolve_secret_env(config, {})


def test_a_dry_run_never_prints_a_secret_resolved_from_the_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from infra.local.cli import main

    (tmp_path / "Pulumi.s.yaml").write_text(
        f"config:\n  tftrain:image: {IMAGE}\n  tftrain:job:\n    env:\n"
        "      TOKEN:\n        secure: v1:AAAAbase64ciphertext\n      PLAIN: visible\n"
        "    args: [--token, $(TOKEN)]\n"
    )
    monkeypatch.setenv("TOKEN", TOKEN)
    status = main(["s", "--stacks-dir", str(tmp_path), "--dry-run",
                   "--output-dir", str(tmp_path / "out")])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0, out
    assert TOKEN not in out
    assert f"TOKEN={SECRET_PLACEHOLDER}" in out
    assert "PLAIN=visible" in out
