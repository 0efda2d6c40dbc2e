"""How a run ends, both halves: the Kubernetes wiring of every Job of every stack, and the
supervisor script itself, run for real under /bin/sh (dash here) with tiny commands."""

from __future__ import annotations

import re
from typing import Any

import pytest

from infra.config import parse_config
from infra.lifecycle import (
    FINAL_EXIT_CODES,
    SCRIPT,
    TERMINATION_GRACE_SECONDS,
    ends_run,
    run_key,
)
from infra.manifests import build_objects
from infra.manifests.common import RUN_ID_LABEL
from infra.manifests.lifecycle import (
    POD_GROUP_LABEL,
    POD_GROUP_MIN_LABEL,
    SCRIPT_PATH,
    pod_group_name,
)
from infra.platform.cluster_facts import cluster_facts
from infra.render import render_stack
from infra.topology import Replica, Topology, build_topology
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
    # Each run's Jobs in its topology's order (a sweep has one run per trial).
    runs = [(run, build_topology(run)) for run in config.runs]
    replicas = [(run, topology, r) for run, topology in runs for r in topology.replicas]
    for job, (config, topology, replica) in zip(jobs(objects), replicas, strict=True):
        pod = job["spec"]["template"]["spec"]
        [container] = pod["containers"]
        command = container["command"]
        role = "--ends-run" if ends_run(replica, topology) else "--follows-run"
        assert command[:3] == ["/bin/sh", SCRIPT_PATH, role]
        # No case pins job.runId: the run's key is its directory's name, the derived run id.
        run = command[command.index("--run") + 1]
        assert re.fullmatch(r"run-[0-9a-f]{8}", run) and config.output_dir.endswith(f"/{run}")
        assert command[command.index("--outcomes") + 1] == f"{config.output_dir}/.tftrain-run"
        assert command[command.index("--replica") + 1] == replica.name
        assert command[command.index("--backoff-limit") + 1] == str(config.job.backoff_limit)
        # Every replica judges every other's heartbeat; the evaluator may finish after the
        # success, for job.evaluatorFinishSeconds; the export waits for it.
        peers = command[command.index("--peers") + 1].split()
        assert peers == [r.name for r in topology.replicas]
        assert command[command.index("--lost-after") + 1] == "30"
        finish = ["--finish-grace", str(config.job.evaluator_finish_seconds)]
        assert (finish[0] in command) is (replica.type == "evaluator")
        if replica.type == "evaluator":
            assert command[command.index("--finish-grace") :][:2] == finish
        evaluators = [r.name for r in topology.replicas if r.type == "evaluator"]
        if "--on-success" in command and evaluators:
            assert command[command.index("--await") + 1].split() == evaluators
        assert pod["terminationGracePeriodSeconds"] == TERMINATION_GRACE_SECONDS
        workdir = f"{config.output_dir}/replicas/{replica.name}/work"
        assert command[command.index("--workdir") + 1] == workdir
        assert command[command.index("--") + 1 :] == ["python", "-m", "trainer"]
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
        # The shell's (126 not executable, 127 not found) and argparse's (2) codes: what
        # supervise.sh treats as final (FINAL_EXIT_CODES, read from it) is what fails the Job.
        assert fail["onExitCodes"] == {
            "containerName": "tensorflow", "operator": "In", "values": [2, 126, 127]
        }  # fmt: skip
        assert list(FINAL_EXIT_CODES) == [2, 126, 127]
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
    # A derived id is `run-` and 8 hex digits, and is the key of the run as it is.
    assert re.fullmatch(r"run-[0-9a-f]{8}", run_key(derived))
    assert derived.output_dir.endswith(f"/{run_key(derived)}")
    # A pinned id keeps its name and gains the same 8 digits of its settings...
    pinned = parse_config({**IMAGE, "job": {"runId": "baseline"}})
    assert run_key(pinned) == "baseline." + run_key(derived).removeprefix("run-")
    # ...and other settings under the same pinned id are another run for the supervisor.
    retuned = parse_config({**IMAGE, "job": {"runId": "baseline"}, "hyperparams": {"epochs": 9}})
    assert re.fullmatch(r"baseline\.[0-9a-f]{8}", run_key(retuned))
    assert run_key(retuned) != run_key(pinned)
    # Keeping more checkpoints changes nothing the training computes: the same run.
    kept = parse_config(
        {**IMAGE, "job": {"runId": "baseline"}, "hyperparams": {"keepCheckpoints": 5}}
    )
    assert run_key(kept) == run_key(pinned)


@pytest.mark.parametrize("name", CASES)
def test_every_job_of_a_deploy_shares_one_generation(name: str) -> None:
    generations: dict[str, set[str]] = {}  # by run: a sweep's trials are runs of their own
    for job in jobs(objects_for(name)):
        command = job["spec"]["template"]["spec"]["containers"][0]["command"]
        run = job["metadata"]["labels"][RUN_ID_LABEL]
        generations.setdefault(run, set()).add(command[command.index("--generation") + 1])
    assert generations
    for found in generations.values():
        assert len(found) == 1 and "" not in found


def test_a_changed_job_is_a_new_generation_and_tensorboard_is_not() -> None:
    def generation(raw: dict[str, Any]) -> str:
        config = parse_config(raw)
        job = jobs(build_objects(config, cluster_facts(config)))[0]
        command = job["spec"]["template"]["spec"]["containers"][0]["command"]
        return str(command[command.index("--generation") + 1])

    base = generation(IMAGE)
    assert generation({**IMAGE, "worker": {"memory": "3Gi"}}) != base  # e.g. after an OOM
    assert generation({**IMAGE, "tensorboard": {"cpu": "1"}}) == base
