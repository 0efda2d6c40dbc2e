"""The Pulumi program's venv (Pulumi.yaml's `virtualenv`, made from requirements.txt alone by
scripts/bootstrap.sh) runs the whole program under mocks for every stack, and holds no
TensorFlow: `pulumi up` on a fresh machine installs exactly this.

The venv is built by bootstrap, never here: tests download nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import yaml

from infra.render import render_stack
from tests.pulumi_mocks import all_stacks

PROJECT = Path(__file__).resolve().parent.parent
BOOTSTRAP_HINT = "run ./scripts/bootstrap.sh (./scripts/test.sh does) to build it"


def program_venv() -> Path:
    """The venv Pulumi.yaml names, which must exist."""
    options = yaml.safe_load((PROJECT / "Pulumi.yaml").read_text())["runtime"]["options"]
    venv = PROJECT / options["virtualenv"]
    assert (venv / "bin" / "python").is_file(), f"no program venv at {venv}: {BOOTSTRAP_HINT}"
    return venv


def in_program_venv(*args: str) -> subprocess.CompletedProcess[str]:
    python = program_venv() / "bin" / "python"
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    return subprocess.run(
        [str(python), *args],
        cwd=PROJECT,
        env={**env, "PYTHONPATH": str(PROJECT)},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
    )


def test_the_program_venv_is_a_separate_venv_from_requirements_txt_alone() -> None:
    venv = program_venv()
    assert venv.resolve() != (PROJECT / ".venv").resolve()
    stamp = (venv / ".requirements.sha256").read_text().strip()
    assert stamp, f"{venv} was not made by bootstrap: {BOOTSTRAP_HINT}"
    listed = in_program_venv("-m", "pip", "list", "--format=freeze", "--disable-pip-version-check")
    assert listed.returncode == 0, listed.stderr
    installed = {
        line.split("==")[0].lower().replace("_", "-") for line in listed.stdout.splitlines()
    }
    assert {"pulumi", "pulumi-kubernetes", "pulumi-alicloud", "pyyaml"} <= installed
    # Nothing of the trainer's or the tests': the program never imports them.
    assert not installed & {"tensorflow", "tensorboard", "keras", "pytest", "ruff"}, installed


def test_the_program_venv_cannot_import_tensorflow() -> None:
    probe = in_program_venv("-c", "import importlib.util as u; print(u.find_spec('tensorflow'))")
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == "None"


# Every stack rendered in one interpreter of the program venv, as JSON {stack: render}.
_RENDER_ALL = """
import json, sys
from infra.render import render_stack
json.dump({stack: render_stack(stack) for stack in sys.argv[1:]}, sys.stdout)
"""


def test_the_program_venv_runs_the_program_for_every_stack() -> None:
    """The render runs the whole program under mocks (every cloud component and Kubernetes
    object registered); in the program venv it must give the very same bytes."""
    stacks = all_stacks()
    done = in_program_venv("-c", _RENDER_ALL, *stacks)
    assert done.returncode == 0, done.stderr
    renders = json.loads(done.stdout)
    assert sorted(renders) == sorted(stacks)
    for stack in stacks:
        assert renders[stack] == render_stack(stack), f"{stack} renders differently"
