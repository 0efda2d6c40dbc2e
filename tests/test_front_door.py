"""`tftrain`: one command with the user's verbs (README's first lines), answering without a
traceback for anything typed after it."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# What a user does, as the README's quickstart names it: run locally, review, watch, compare.
USER_VERBS = ("run", "render", "review", "status", "logs", "list", "compare")


def tftrain(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "infra.cli", *args],
        cwd=REPO,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_console_script_is_declared_for_the_bootstrap_to_install() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert project["project"]["scripts"] == {"tftrain": "infra.cli:main"}
    bootstrap = (REPO / "scripts" / "bootstrap.sh").read_text()
    assert '--no-deps -e "$repo"' in bootstrap


@pytest.mark.parametrize("flag", [[], ["--help"], ["-h"], ["help"]])
def test_help_lists_every_user_verb(flag: list[str]) -> None:
    done = tftrain(*flag)
    assert done.returncode == 0
    verbs = [
        line.split()[0] for line in done.stdout.split("verbs:\n")[1].split("\n\n")[0].splitlines()
    ]
    assert set(USER_VERBS) <= set(verbs)
    assert "tftrain run dev" in done.stdout


def test_help_does_not_load_tensorflow_or_pulumi() -> None:
    probe = (
        "import sys; from infra import cli; cli.main(['--help']); "
        "print(sorted(m for m in ('tensorflow', 'pulumi') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip().endswith("[]")


def test_an_unknown_verb_is_one_line_and_exit_2() -> None:
    done = tftrain("trian", "dev")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "unknown verb 'trian'" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("verb", "usage"),
    [
        ("run", "usage: tftrain run"),
        ("render", "usage: tftrain render"),
        ("review", "usage: tftrain review"),
        ("status", "usage: tftrain status"),
        ("compare", "usage: tftrain compare"),
        ("prices", "usage: tftrain prices"),
    ],
)
def test_each_verb_answers_help_under_its_own_name(verb: str, usage: str) -> None:
    done = tftrain(verb, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(usage)


def test_a_verb_reaches_its_command_with_the_remaining_arguments() -> None:
    done = tftrain("render", "no-such-stack")
    assert done.returncode == 2
    assert "no-such-stack" in done.stderr
    assert "Traceback" not in done.stderr
