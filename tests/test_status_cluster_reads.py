"""How `tftrain status` reaches a cluster (`infra.status.cloud`): the kubeconfig it hands
kubectl (given, the stack output's in a private file removed afterwards, or kubectl's own), the
kubectl command line, and kubectl's failures said in one line. `pulumi` and `kubectl` are
stand-in scripts on PATH that record their arguments; the answers are written by hand."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from infra.config import load_stack
from infra.status.cloud import (
    REQUEST_TIMEOUT,
    ClusterError,
    ReplicaLine,
    fetch,
    kubeconfig_file,
    kubectl_argv,
    last_lines,
    run_phase,
)

KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\n"


def _tool(bin_dir: Path, name: str, body: str) -> None:
    bin_dir.mkdir(exist_ok=True)
    tool = bin_dir / name
    tool.write_text(f'#!/bin/sh\necho "$@" >> {bin_dir}/{name}.calls\n{body}\n')
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "bin"
    directory.mkdir()
    monkeypatch.setenv("PATH", f"{directory}{os.pathsep}/usr/bin{os.pathsep}/bin")
    return directory


def test_a_given_kubeconfig_is_used_as_it_is_and_pulumi_is_not_asked(bin_dir: Path) -> None:
    _tool(bin_dir, "pulumi", "exit 1")
    with kubeconfig_file("dev", Path("/k/config")) as path:
        assert path == "/k/config"
    assert not (bin_dir / "pulumi.calls").exists()


def test_the_stack_outputs_kubeconfig_lives_in_a_private_file_while_it_is_used(
    bin_dir: Path,
) -> None:
    _tool(bin_dir, "pulumi", f"printf '%s' '{KUBECONFIG}'")
    with kubeconfig_file("ack-gpu", None) as path:
        assert path is not None
        written = Path(path)
        assert written.read_text() == KUBECONFIG.strip()
        assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert not written.exists()  # removed once the status is done
    assert (bin_dir / "pulumi.calls").read_text() == (
        "stack output kubeconfig --show-secrets --stack ack-gpu\n"
    )


@pytest.mark.parametrize("body", ["echo 'apiVersion: v1'; exit 1", "printf '  \\n'", ""])
def test_no_stack_output_or_no_pulumi_leaves_kubectl_its_default(
    bin_dir: Path, monkeypatch: pytest.MonkeyPatch, body: str
) -> None:
    if body:
        _tool(bin_dir, "pulumi", body)
    else:
        monkeypatch.setenv("PATH", str(bin_dir))  # no pulumi at all
    with kubeconfig_file("dev", None) as path:
        assert path is None


def test_the_kubectl_command_line(bin_dir: Path) -> None:
    _tool(bin_dir, "kubectl", "exit 0")
    kubectl = str(bin_dir / "kubectl")
    assert kubectl_argv("/k", "ns", "get", "pods") == [
        kubectl, "--kubeconfig", "/k", "--namespace", "ns", "--request-timeout=8s", "get", "pods"
    ]  # fmt: skip
    assert REQUEST_TIMEOUT == "8s"  # an unanswered call is given up within seconds
    assert kubectl_argv(None, "ns", "logs") == [
        kubectl, "--namespace", "ns", "--request-timeout=8s", "logs"
    ]  # fmt: skip


def test_without_kubectl_the_status_says_so(bin_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(bin_dir))  # this machine's own kubectl out of reach
    with pytest.raises(ClusterError) as error:
        kubectl_argv(None, "ns")
    assert (
        str(error.value) == "kubectl is not installed: the cloud status reads the cluster with it"
    )


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            "echo 'E1126 memcache.go:265] couldn''t get current server API group list' >&2; "
            "echo 'The connection to the server localhost:8080 was refused - did you specify "
            "the right host or port?' >&2; exit 1",
            "kubectl has no cluster to ask (its default config is empty: it tried "
            "localhost:8080): pass --kubeconfig FILE, or deploy the stack first",
        ),
        ("echo 'error: You must be logged in to the server (Unauthorized)' >&2; exit 1",
         "kubectl: error: You must be logged in to the server (Unauthorized)"),
        ("exit 1", "kubectl: no answer"),
        ("echo 'not json'", "kubectl returned no JSON list: Expecting value: line 1 column 1 "
                            "(char 0)"),
        ("echo '[1, 2]'", "kubectl returned no JSON list: 'list' object has no attribute 'get'"),
    ],
)  # fmt: skip
def test_kubectls_failure_is_one_line(bin_dir: Path, body: str, said: str) -> None:
    _tool(bin_dir, "kubectl", body)
    with pytest.raises(ClusterError) as error:
        fetch(load_stack("ack-gpu"), None)
    assert str(error.value) == said


def test_a_listing_without_items_is_empty_and_the_run_is_selected_by_its_labels(
    bin_dir: Path,
) -> None:
    _tool(bin_dir, "kubectl", 'echo \'{"kind": "List", "items": null}\'')
    config = load_stack("ack-gpu")
    snapshot = fetch(config, "/k")
    assert (snapshot.jobs, snapshot.pods, snapshot.events) == ([], [], [])
    calls = (bin_dir / "kubectl.calls").read_text().splitlines()
    assert sorted(calls) == sorted([
        f"--kubeconfig /k --namespace tftrain --request-timeout=8s get jobs,pods -l "
        f"tftrain.io/job=mnist,tftrain.io/run-id={config.job.run_id} -o json",
        "--kubeconfig /k --namespace tftrain --request-timeout=8s get events -o json",
    ])  # fmt: skip


def test_a_pods_last_lines_or_none_once_it_is_gone(bin_dir: Path) -> None:
    _tool(bin_dir, "kubectl", 'case "$*" in *gone*) exit 1 ;; esac; printf "a\\nb\\n"')
    assert last_lines("/k", "ns", "p-1", 2) == ["a", "b"]
    assert (bin_dir / "kubectl.calls").read_text() == (
        "--kubeconfig /k --namespace ns --request-timeout=8s logs p-1 -c tensorflow --tail=2\n"
    )
    assert last_lines("/k", "ns", "gone", 2) == []
    # Cut off half way (the API server went away): what came is not the pod's last lines.
    _tool(bin_dir, "kubectl", 'printf "partial\\n"; exit 1')
    assert last_lines("/k", "ns", "p-1", 2) == []


def _line(name: str, phase: str) -> ReplicaLine:
    return ReplicaLine(name, phase, 0, "", None)


@pytest.mark.parametrize(
    ("phases", "run"),
    [
        # TFJob's rule: the chief's success is the run's, whatever the others do.
        (["Succeeded", "Failed", "Running"], "succeeded"),
        (["Running", "Failed", "Running"], "failed"),
        (["not deployed", "not deployed", "not deployed"], "not deployed"),
        (["Running", "not deployed", "Running"], "pending"),
        (["Suspended", "Suspended", "Succeeded"],
         "suspended (job.suspend true; false resumes it from its checkpoints)"),
        (["Running", "Succeeded", "Running"], "running"),
        (["Running", "Pending", "Running"], "pending"),
        (["Suspended", "Running", "Running"], "pending"),
    ],
)  # fmt: skip
def test_the_runs_phase_from_its_replicas(phases: list[str], run: str) -> None:
    names = ["r-chief-0", "r-worker-0", "r-ps-0"]
    lines = [_line(n, p) for n, p in zip(names, phases, strict=True)]
    assert run_phase(lines, "r-chief-0") == run
