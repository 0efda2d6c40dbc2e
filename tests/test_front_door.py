"""`tftrain`: one command with the user's verbs (README's first lines), answering without a
traceback for anything typed after it."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from infra import cli, completion

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


@pytest.mark.parametrize("args", [["--help"], ["completion", "bash"], ["list", "--runs-dir"]])
def test_a_reader_that_left_ends_the_command_quietly_with_the_sigpipe_status(
    args: list[str], tmp_path: Path
) -> None:
    """`tftrain list | head -1`: head exits after its line; the command's next write fails.
    The read end is closed before the command starts, so its first write fails, every time."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "infra.cli",
                *args,
                *([str(tmp_path)] if args[0] == "list" else []),
            ],
            cwd=REPO,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert done.stderr == ""
    assert done.returncode == 141  # 128 + SIGPIPE (13): what the shell reports for `cat`


def test_a_verb_reaches_its_command_with_the_remaining_arguments() -> None:
    done = tftrain("render", "no-such-stack")
    assert done.returncode == 2
    assert "no-such-stack" in done.stderr
    assert "Traceback" not in done.stderr


# --- The same front door in this process: exact text, every branch ---------------------------

EVERY_VERB = "run, render, status, logs, list, compare, review, prices, completion"


@pytest.mark.parametrize("flag", [[], ["--help"], ["-h"], ["help"]])
def test_help_is_the_usage_with_each_verb_in_one_aligned_column(
    flag: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(flag) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: tftrain VERB [ARGS...]      (tftrain VERB --help for a ")
    # The longest verb, completion (10 letters), sets the column: two spaces after it.
    assert "\nverbs:\n  run         train a stack on this machine, no cloud" in out
    assert "\n  completion  the shell completion script (bash or zsh)" in out
    assert out.endswith(
        "2 for an unknown verb;\n"
        "             141 when the reader of the output left first (`tftrain list | head`)\n"
    )


@pytest.mark.parametrize("flag", ["--version", "-V", "version"])
def test_version_in_each_spelling(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([flag]) == 0
    assert capsys.readouterr().out == "tftrain 0.1.0\n"  # pyproject.toml's [project] version


def test_version_when_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert cli.version() == "unknown (not installed: scripts/bootstrap.sh installs it)"


def test_an_unknown_verb_names_every_verb(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["trian", "dev"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"tftrain: unknown verb 'trian'; the verbs are: {EVERY_VERB}\n"


def test_a_verb_gets_the_arguments_after_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["completion", "zsh"]) == 0
    assert capsys.readouterr().out.startswith("autoload -U +X bashcompinit && bashcompinit\n")


def test_the_completion_script_offers_every_verb_and_both_stack_folders() -> None:
    bash = completion.script("bash", ["run", "status"])
    assert bash.startswith("# tftrain shell completion (`tftrain completion bash`)\n")
    assert 'compgen -W "run status --help --version" -- "$cur"' in bash
    assert f"ls stacks/Pulumi.*.yaml {REPO}/stacks/Pulumi.*.yaml 2>/dev/null" in bash
    assert bash.endswith("complete -o default -F _tftrain tftrain\n")
    zsh = completion.script("zsh", ["run", "status"])
    assert zsh == "autoload -U +X bashcompinit && bashcompinit\n" + bash


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_completion_prints_the_script_for_every_verb(
    shell: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert completion.main([shell]) == 0
    out = capsys.readouterr().out
    assert f'compgen -W "{EVERY_VERB.replace(", ", " ")} --help --version"' in out
    assert out.startswith("autoload") == (shell == "zsh")


def test_completion_for_another_shell_is_refused_with_the_choices(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as done:
        completion.main(["fish"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: tftrain completion [-h] SHELL\n")
    assert "argument SHELL: invalid choice: 'fish' (choose from 'bash', 'zsh')" in err


def test_completion_help_shows_its_examples_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        completion.main(["--help"])
    out = capsys.readouterr().out
    assert "\n\nPrint the shell completion script for tftrain.\n\n" in out
    assert "  SHELL       bash or zsh\n" in out
    assert out.endswith(
        "examples:\n"
        '  eval "$(tftrain completion bash)"                      this shell only\n'
        "  tftrain completion bash > ~/.local/share/bash-completion/completions/tftrain\n"
        "  echo 'eval \"$(tftrain completion zsh)\"' >> ~/.zshrc\n"
        "\n"
        "exit status:\n"
        "  0  the script was printed\n"
        "  2  an unknown shell\n"
    )


def test_the_console_script_reads_its_arguments_from_the_command_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/tftrain", "--version"])
    assert cli.main() == 0
    assert capsys.readouterr().out == "tftrain 0.1.0\n"
