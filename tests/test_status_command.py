"""`tftrain status` (`infra.status.main`) choosing what to show: how many local runs, what
`--local` and a platform stack answer without asking any cluster. Runs laid out by hand in the
supervisor's formats (tests/test_everyday_verbs.py); the cluster's side: test_status_cloud.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from infra.status import main as status
from tests.test_everyday_verbs import T0, no_kubectl, succeeded_run  # noqa: F401 (a fixture)


@pytest.fixture
def four_runs(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    for n in range(4):
        run = runs / "mnist" / f"run-000{n}"
        succeeded_run(run, T0 + 100 * n)
        records = run / ".tftrain-run"
        os.utime(records, (T0 + 100 * n, T0 + 100 * n))  # run-0003 the newest
    return runs


@pytest.mark.parametrize(
    ("last", "shown", "older"), [("2", ["run-0003", "run-0002"], 2), ("0", ["run-0003"], 3)]
)
def test_the_newest_runs_are_shown_and_the_older_counted(
    four_runs: Path, capsys: pytest.CaptureFixture[str], last: str, shown: list[str], older: int
) -> None:
    assert status(["dev", "--runs-dir", str(four_runs), "--last", last]) == 0
    lines = capsys.readouterr().out.splitlines()
    heads = [line.split(":")[0].rpartition("/")[2] for line in lines if not line.startswith(" ")]
    assert heads == [*shown, f"({older} older runs"]
    assert lines[-1] == f"({older} older runs: --last N shows more)"
    assert status(["dev", "--runs-dir", str(four_runs), "--last", last, "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [r["run_id"] for r in runs] == shown


def test_all_runs_shown_say_nothing_of_older_ones(
    four_runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert status(["dev", "--runs-dir", str(four_runs), "--last", "4"]) == 0
    assert "older runs" not in capsys.readouterr().out


def test_local_with_no_runs_asks_no_cluster(
    tmp_path: Path, no_kubectl: Path, capsys: pytest.CaptureFixture[str],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    assert status(["dev", "--local", "--runs-dir", "runs"]) == 0
    assert capsys.readouterr().out == (
        "no runs of dev on this machine (none under runs)\nstart one with: tftrain run dev\n"
    )
    assert not no_kubectl.exists()  # neither pulumi nor kubectl was called


def test_a_platform_stack_has_no_run_to_show(
    tmp_path: Path, no_kubectl: Path, capsys: pytest.CaptureFixture[str],  # noqa: F811
) -> None:  # fmt: skip
    assert status(["platform-ack", "--runs-dir", str(tmp_path / "runs")]) == 2
    captured = capsys.readouterr()
    assert captured.err == "tftrain status: platform-ack is a platform stack: it has no run\n"
    assert not no_kubectl.exists()
    assert status(["no-such-stack"]) == 2
    assert capsys.readouterr().err.startswith("tftrain status: ")


def test_without_a_known_cluster_it_says_how_to_ask_one(
    tmp_path: Path, no_kubectl: Path, capsys: pytest.CaptureFixture[str],  # noqa: F811
) -> None:  # fmt: skip
    assert status(["ack-gpu", "--runs-dir", str(tmp_path / "runs")]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "no cluster known for ack-gpu: it has no stack output `kubeconfig` (not deployed with "
        "`pulumi up -s ack-gpu` from here); `tftrain status ack-gpu --cluster` asks kubectl's "
        "default cluster, --kubeconfig FILE another"
    )


def test_a_stack_output_kubeconfig_is_asked_without_cluster_being_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in (
        ("pulumi", "echo 'apiVersion: v1'"),
        ("kubectl", f'echo "$@" >> {tmp_path}/calls; echo \'{{"items": []}}\''),
    ):
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)  # fmt: skip
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert status(["ack-gpu", "--runs-dir", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "run: not deployed" and out[2].startswith("stack ack-gpu in its cluster")
    assert "--kubeconfig " in (tmp_path / "calls").read_text()


def test_the_help_names_the_command_and_what_it_shows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        status(["--help"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("usage: tftrain status [-h]")
    assert "Show a stack's runs: on this machine (runs/STACK/) or in its cluster." in lines
