"""`python -m infra.status`: the process exits with the command's status (its docstring: 0
answered, 2 bad arguments or stack config), run as `-m` runs it."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

STACK = "config:\n  tftrain:image: registry.example.com/tftrain/trainer:1\n"


def _run_as_main(monkeypatch: pytest.MonkeyPatch, *args: str) -> int | str | None:
    monkeypatch.setattr(sys, "argv", ["python -m infra.status", *args])
    with pytest.raises(SystemExit) as ended:
        runpy.run_module("infra.status", run_name="__main__")
    return ended.value.code


def test_an_answer_exits_0_and_an_unknown_stack_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "Pulumi.dev.yaml").write_text(STACK)
    runs = tmp_path / "runs"
    args = ("dev", "--local", "--stacks-dir", str(tmp_path), "--runs-dir", str(runs))
    code = _run_as_main(monkeypatch, *args)
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("no runs of dev on this machine")
    assert _run_as_main(monkeypatch, "prod", "--stacks-dir", str(tmp_path)) == 2
    err = capsys.readouterr().err
    assert err.startswith("tftrain status: invalid stack config:")
    assert f"stack file {tmp_path / 'Pulumi.prod.yaml'} not found; stacks here: dev" in err
