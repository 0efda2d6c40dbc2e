"""`python -m infra.render` as its help and module docstring promise: the render on stdout,
notes and errors on stderr, exit 0 rendered, 2 for a bad stack, revision or repository, 1 when
REV's side of a diff fails to render."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from infra.render import __main__ as cli
from infra.render.diff import DiffError, RevisionRenderError


def test_a_render_goes_to_stdout_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["dev", "--only", "kubernetes"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("# Stack dev, rendered offline by `python -m infra.render`")
    assert "# Job tftrain-dev/mnist-worker-0" in out
    assert "# ===== Cloud resources" not in out
    assert err == ""


def test_an_unknown_stack_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["nowhere", "--stacks-dir", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: ") and "Pulumi.nowhere.yaml" in err


def test_only_takes_a_section_name(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        cli.main(["dev", "--only", "pods"])
    assert refused.value.code == 2
    assert "invalid choice: 'pods'" in capsys.readouterr().err


class _Diff:
    """diff_stack as the CLI sees it: records its arguments, answers or raises."""

    def __init__(self, answer: object) -> None:
        self.answer, self.calls = answer, []

    def __call__(self, *args: object) -> tuple[str, list[str]]:
        self.calls.append(args)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer  # type: ignore[return-value]


def test_a_diff_prints_its_text_and_its_notes_apart(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    diff = _Diff(("Consequences ...\n--- a\n+++ b\n", ["note: one", "note: two"]))
    monkeypatch.setattr(cli, "diff_stack", diff)
    assert cli.main(["ack-gpu", "--diff", "main", "--stacks-dir", "here", "--only", "cloud"]) == 0
    assert diff.calls == [("main", "ack-gpu", Path("here"), "cloud")]
    out, err = capsys.readouterr()
    assert out == "Consequences ...\n--- a\n+++ b\n"
    assert err == "note: one\nnote: two\n"


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (DiffError("unknown git revision 'x'"), 2),
        (RevisionRenderError("rendering dev at x failed:\nboom"), 1),
    ],
)
def test_a_diff_that_cannot_be_made_exits_with_its_status(
    error: Exception,
    status: int,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(cli, "diff_stack", _Diff(error))
    assert cli.main(["dev", "--diff", "x"]) == status
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"error: {error}\n"


def test_help_names_the_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: tftrain render [-h] [--diff REV] [--stacks-dir DIR]")
    for status in ("0  rendered", "1  the revision REV could not be rendered", "2  bad arguments"):
        assert status in out


def test_the_render_is_utf_8_whatever_the_terminal_encoding(tmp_path: Path) -> None:
    """A value in Chinese reaches stdout as UTF-8 on a Latin-1 terminal too, where Python's
    own stdout would refuse it."""
    job = {"env": {"NOTE": "步骤"}}
    image = "registry.example.com/tftrain/trainer:1"
    stack = {"config": {"tftrain:image": image, "tftrain:job": job}}
    (tmp_path / "Pulumi.zh.yaml").write_text(json.dumps(stack))
    raw = io.BytesIO()
    terminal = io.TextIOWrapper(raw, encoding="latin-1")
    with contextlib.redirect_stdout(terminal):
        assert cli.main(["zh", "--stacks-dir", str(tmp_path), "--only", "kubernetes"]) == 0
        terminal.flush()
    assert "{name: NOTE, value: 步骤}".encode() in raw.getvalue()


def test_help_says_what_each_option_does(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())  # as one line, whatever the width
    for words in (
        "Render what `pulumi up` on a stack would create (cloud resources and Kubernetes "
        "objects) offline, for review; or diff it against a git revision.",
        "STACK stack name: stacks/Pulumi.STACK.yaml",
        "--diff REV print a unified diff from the stack at git revision REV to the working tree",
        "--stacks-dir DIR where the stack files are (stacks/)",
        "--only {kubernetes,cloud} render just one section",
    ):
        assert words in text
