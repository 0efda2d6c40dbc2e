"""How a run ends, both halves: the Kubernetes wiring of every Job of every stack, and the
supervisor script itself, run for real under /bin/sh (dash here) with tiny commands."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from infra.cluster_facts import cluster_facts
from infra.config import parse_config
from infra.lifecycle import FINAL_EXIT_CODES, SCRIPT, ends_run, run_key
from infra.manifests import build_objects
from infra.manifests.lifecycle import (
    POD_GROUP_LABEL,
    POD_GROUP_MIN_LABEL,
    SCRIPT_PATH,
    pod_group_name,
)
from infra.render import render_stack
from infra.topology import Replica, Topology, build_topology
from tests.cluster_helpers import alive, wait_until
from tests.test_manifests_schema import CASES, config_for, objects_for

IMAGE = {"image": "registry.example.com/tftrain/trainer:1"}


def jobs(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [obj for obj in objects if obj["kind"] == "Job"]


@pytest.mark.parametrize("name", CASES)
def test_every_job_runs_its_command_under_the_supervisor(name: str) -> None:
    config = config_for(name)
    objects = objects_for(name)
    [config_map] = [obj for obj in objects if obj["kind"] == "ConfigMap"]
    assert config_map["data"]["supervise.sh"] == SCRIPT.read_text()
    # Created before any Job that mounts it.
    assert objects.index(config_map) < min(objects.index(job) for job in jobs(objects))
    topology = build_topology(config)
    for job, replica in zip(jobs(objects), topology.replicas, strict=True):
        pod = job["spec"]["template"]["spec"]
        [container] = pod["containers"]
        command = container["command"]
        role = "--ends-run" if ends_run(replica, topology) else "--follows-run"
        assert command[:3] == ["/bin/sh", SCRIPT_PATH, role]
        assert command[command.index("--run") + 1] == run_key(config)
        assert command[command.index("--marker") + 1] == f"{config.output_dir}/.tftrain-succeeded"
        assert command[command.index("--") + 1 :] == list(config.job.command)
        assert container.get("args", []) == list(config.job.args)
        volumes = {volume["name"]: volume for volume in pod["volumes"]}
        [mount] = [
            m for m in container["volumeMounts"] if m["mountPath"] == "/etc/tftrain-lifecycle"
        ]
        assert mount["readOnly"] is True
        assert volumes[mount["name"]]["configMap"]["name"] == config_map["metadata"]["name"]


@pytest.mark.parametrize("name", CASES)
def test_every_job_fails_fast_ignores_disruptions_and_keeps_the_deadline(name: str) -> None:
    config = config_for(name)
    for job in jobs(objects_for(name)):
        spec = job["spec"]
        assert spec["template"]["spec"]["restartPolicy"] == "Never"  # podFailurePolicy needs it
        fail, ignore = spec["podFailurePolicy"]["rules"]
        assert fail["action"] == "FailJob"
        assert fail["onExitCodes"] == {
            "containerName": "tensorflow", "operator": "In", "values": list(FINAL_EXIT_CODES)
        }  # fmt: skip
        assert 2 in fail["onExitCodes"]["values"]
        assert ignore == {
            "action": "Ignore",
            "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
        }
        assert spec.get("activeDeadlineSeconds") == config.job.active_deadline_seconds
    if name == "nfs-multi-worker-evaluator":
        assert config.job.active_deadline_seconds == 7200  # a case that sets it


@pytest.mark.parametrize("name", CASES)
def test_gang_labels_on_ack_only(name: str) -> None:
    config = config_for(name)
    objects = objects_for(name)
    labels = [job["spec"]["template"]["metadata"]["labels"] for job in jobs(objects)]
    if config.cluster.kind != "ack":
        assert not any(POD_GROUP_LABEL in pod for pod in labels)
        return
    replicas = str(len(build_topology(config).replicas))
    assert {(pod[POD_GROUP_LABEL], pod[POD_GROUP_MIN_LABEL]) for pod in labels} == {
        (f"{config.job.name}-{config.job.run_id}", replicas)
    }
    # On the pods only: the Jobs themselves are not scheduled.
    assert not any(POD_GROUP_LABEL in job["metadata"]["labels"] for job in jobs(objects))


def test_gang_scheduling_can_be_switched_off_on_ack() -> None:
    ack = {**IMAGE, "cluster": {"kind": "ack"}, "network": {"zoneId": "cn-hangzhou-i"}}
    for gang, expected in ((True, True), (False, False)):
        config = parse_config({**ack, "job": {"gangScheduling": gang}})
        labels = [
            job["spec"]["template"]["metadata"]["labels"]
            for job in jobs(build_objects(config, cluster_facts(config)))
        ]
        assert all((POD_GROUP_LABEL in pod) is expected for pod in labels)


def test_pod_group_name_fits_a_label_value() -> None:
    long_run = "r" * 63
    config = parse_config({**IMAGE, "job": {"name": "j" * 49, "runId": long_run}})
    name = pod_group_name(config)
    assert len(name) <= 63 and name.startswith("j" * 49 + "-")
    assert pod_group_name(config) != pod_group_name(
        parse_config({**IMAGE, "job": {"name": "j" * 49, "runId": "r" * 62}})
    )


def test_the_offline_render_includes_the_supervisor_config_map() -> None:
    rendered = render_stack("dev")
    assert "# ConfigMap tftrain-dev/mnist-lifecycle" in rendered
    assert "  supervise.sh: |\n" in rendered  # line by line, reviewable in a diff


@pytest.mark.parametrize(
    ("types", "ends"),
    [
        (("chief", "worker", "worker", "ps"), "chief-0"),
        (("master", "worker", "ps"), "master-0"),  # TFJob's Master counts as chief
        (("worker", "worker", "evaluator"), "worker-0"),
    ],
)
def test_the_run_ends_with_the_chief_else_worker_0(types: tuple[str, ...], ends: str) -> None:
    counts: dict[str, int] = {}
    replicas = []
    for kind in types:
        index = counts[kind] = counts.get(kind, -1) + 1
        replicas.append(Replica(kind, index, f"{kind}-{index}", "localhost", 1))
    topology = Topology("t", tuple(replicas))
    assert [r.name for r in topology.replicas if ends_run(r, topology)] == [ends]


def test_run_key_is_the_derived_run_id_or_the_pinned_one_plus_the_settings() -> None:
    derived = parse_config(IMAGE)
    assert run_key(derived) == derived.job.run_id
    pinned = parse_config({**IMAGE, "job": {"runId": "baseline"}})
    assert run_key(pinned) == f"baseline.{derived.job.run_id.removeprefix('run-')}"
    retuned = parse_config({**IMAGE, "job": {"runId": "baseline"}, "hyperparams": {"epochs": 9}})
    assert run_key(retuned).startswith("baseline.") and run_key(retuned) != run_key(pinned)


# --- the script itself ------------------------------------------------------------------


def supervise(marker: Path, role: str, *command: str, run: str = "r1") -> subprocess.Popen[str]:
    argv = ["/bin/sh", str(SCRIPT), role, "--marker", str(marker), "--run", run, "--", *command]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(process: subprocess.Popen[str], timeout: float = 10) -> tuple[int, str]:
    out, _ = process.communicate(timeout=timeout)
    return process.returncode, out


SERVE_FOREVER = (sys.executable, "-c", "import time\nwhile True: time.sleep(1)")


def test_the_chief_publishes_and_the_others_stop_within_two_seconds(tmp_path: Path) -> None:
    marker = tmp_path / "run" / "marker"  # the directory does not exist yet
    follower = supervise(marker, "--follows-run", *SERVE_FOREVER)
    time.sleep(1)
    assert follower.poll() is None
    assert finish(supervise(marker, "--ends-run", "true"))[0] == 0
    published = time.monotonic()
    status, out = finish(follower)
    assert status == 0, out
    assert time.monotonic() - published < 2.5
    assert "run r1 succeeded: stopping" in out
    assert marker.read_text() == "r1\n"
    assert not list(marker.parent.glob("*.partial"))  # renamed into place, nothing left


def test_a_stale_marker_is_ignored_and_a_late_replica_exits_at_once(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    marker.write_text("an-earlier-run\n")
    # Another run's marker: the command runs, its status is the supervisor's.
    assert finish(supervise(marker, "--follows-run", "sh", "-c", "exit 5"))[0] == 5
    marker.write_text("r1\n")
    started = time.monotonic()
    for role in ("--follows-run", "--ends-run"):
        status, out = finish(supervise(marker, role, *SERVE_FOREVER))
        assert status == 0 and "has already ended" in out, out
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("role", ["--ends-run", "--follows-run"])
def test_sigterm_reaches_the_command_and_its_status_comes_back(tmp_path: Path, role: str) -> None:
    # The command saves its work on SIGTERM and exits 143: preempted, to be retried.
    command = ("sh", "-c", "trap 'echo saving; exit 143' TERM; while :; do sleep 0.1; done")
    process = supervise(tmp_path / "marker", role, *command)
    time.sleep(1)
    process.send_signal(signal.SIGTERM)
    status, out = finish(process)
    assert (status, out.strip()) == (143, "saving")
    assert not (tmp_path / "marker").exists()


def test_usage_errors_and_missing_commands_are_final(tmp_path: Path) -> None:
    status, out = finish(supervise(tmp_path / "marker", "--sideways", "true"))
    assert status == 2 and "unknown option --sideways" in out
    status, out = finish(supervise(tmp_path / "marker", "--ends-run", "/no/such/trainer"))
    assert status == 127 and "cannot run /no/such/trainer: command not found" in out
    assert {2, 127} <= set(FINAL_EXIT_CODES)


def test_a_killed_supervisor_takes_its_command_along(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    command = ("sh", "-c", f"echo $$ > {pid_file}; exec sleep 600")
    process = supervise(tmp_path / "marker", "--follows-run", *command)
    assert wait_until(lambda: pid_file.exists() and pid_file.read_text().strip() != "", 10)
    child = int(pid_file.read_text())
    process.kill()
    process.wait()
    assert wait_until(lambda: not alive(child), timeout=5)


def test_a_final_failure_anywhere_stops_every_replica_with_exit_2(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    follower = supervise(marker, "--follows-run", *SERVE_FOREVER)
    chief = supervise(marker, "--ends-run", *SERVE_FOREVER)
    time.sleep(1)
    # A ps whose TF_CONFIG is bad: exit 2, which no retry can fix.
    status, out = finish(supervise(marker, "--follows-run", "sh", "-c", "exit 2"))
    assert status == 2 and "cannot succeed (exit 2)" in out, out
    failed = time.monotonic()
    for replica in (follower, chief):
        status, out = finish(replica)
        assert status == 2, out
        assert "failed in another replica" in out, out
    assert time.monotonic() - failed < 2.5
    assert marker.read_text().startswith("r1 failed 2 ")


def test_an_earlier_attempts_failure_does_not_end_a_new_attempt(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    marker.write_text("r1 failed 2 old-pod 1\n")
    # A new `pulumi up` of the same run: its replicas start, and the chief's success ends it.
    follower = supervise(marker, "--follows-run", *SERVE_FOREVER)
    time.sleep(1)
    assert follower.poll() is None
    assert finish(supervise(marker, "--ends-run", "true"))[0] == 0
    status, out = finish(follower)
    assert status == 0, out
    assert marker.read_text() == "r1\n"
