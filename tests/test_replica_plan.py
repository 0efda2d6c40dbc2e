"""One replica, two places: every stack's pods and the local launcher's processes get the same
command, args, env, working directory and home, replica by replica.

What may differ is stated here, independently of the code: the addresses in TF_CONFIG (Services
there, localhost here), the run's output dir and its parent, the job's (the volume's paths
there, local directories here), the scripts' paths (the ConfigMap's mount there, the repo
here), TMPDIR (the pod's /tmp there, a directory per replica here), POD_NAME/POD_NAMESPACE
(downward API there, the replica's name and the namespace here), the interpreter shims on PATH,
and the machine's own variables a process needs here (locale, proxies), and the deploy
generation (a digest of the Jobs there, one per launch here). With a bucket, the input and
export are its mounts there and --input / --export directories here, and the export names the
images there and the stack here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from infra.config import ConfigError, load_stack, parse_config, read_stack_file, stack_file
from infra.lifecycle import EXPORT_SCRIPT, SCRIPT
from infra.local.data import LocalData
from infra.local.plan import HOST_ENV, build_plan
from infra.manifests import build_objects
from infra.manifests.lifecycle import EXPORT_SCRIPT_PATH, SCRIPT_PATH
from infra.manifests.oss import EXPORT_PATH
from infra.platform.cluster_facts import cluster_facts
from infra.replica_plan.plan import Place, expand, replica_plan
from infra.topology import build_topology
from tests.pulumi_mocks import run_stacks

STACKS = run_stacks()
LOCAL_OUT = "/home/me/runs/out"
LOCAL_INPUT = "/home/me/input"  # --input, for a stack with a bucket
LOCAL_EXPORT = "/home/me/export"  # --export
SCRATCH = "/scratch"
# Never from the stack, always from this machine (what a process needs to run here).
MACHINE_ONLY = {*HOST_ENV, "no_proxy", "NO_PROXY"}


# The kubelet's expansion, as the Kubernetes API reference states it for a container's
# command, args and env values: "$(VAR_NAME) ... expanded using the previously defined
# environment variables ... If a variable cannot be resolved, the reference in the input
# string will be unchanged. Double $$ are reduced to a single $, which allows for escaping
# the $(VAR_NAME) syntax".
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("--out=$(OUT)/x", "--out=/data/run/x"),
        ("$(OUT)$(OUT)", "/data/run/data/run"),
        ("$(MISSING)/x", "$(MISSING)/x"),
        ("$$(OUT)", "$(OUT)"),
        ("$$$(OUT)", "$/data/run"),
        ("cost $5", "cost $5"),
        ("$(OUT", "$(OUT"),
        ("$(OUT $(OUT)", "$(OUT $(OUT)"),  # the name runs to the first )
        ("trailing $", "trailing $"),
        ("$()", "$()"),
        ("a$$b", "a$b"),  # an escape after other text
        ("x $(OUT", "x $(OUT"),  # an unclosed reference after other text
        ("[$(OUT)] $$ $(OUT", "[/data/run] $ $(OUT"),
    ],
)
def test_expand_follows_the_kubelet(text: str, expected: str) -> None:
    assert expand(text, {"OUT": "/data/run"}) == expected


def _pods(config: Any) -> dict[str, dict[str, Any]]:
    """Each replica's container, by replica name, as the stack deploys it."""
    jobs = [o for o in build_objects(config, cluster_facts(config)) if o["kind"] == "Job"]
    return {job["metadata"]["name"]: job["spec"]["template"]["spec"] for job in jobs}


def _as_pod_would(value: str, config: Any, name: str, addresses: dict[str, str]) -> str:
    """A local value with the stated differences replaced by the pod's side of each."""
    value = value.replace(LOCAL_OUT, config.output_dir)
    # The job's directory, the run's parent: matplotlib's cache beside the runs.
    value = value.replace(str(Path(LOCAL_OUT).parent), str(Path(config.output_dir).parent))
    value = value.replace(LOCAL_INPUT, config.data.input_path)
    # A run stack's export volume is already its namespace's directory of the shared prefix.
    value = value.replace(LOCAL_EXPORT, EXPORT_PATH)
    value = value.replace(str(EXPORT_SCRIPT), EXPORT_SCRIPT_PATH)
    value = value.replace(str(SCRIPT), SCRIPT_PATH)
    value = value.replace(f"{SCRATCH}/{name}", "/tmp")
    for local, cluster in addresses.items():
        value = value.replace(local, cluster)
    return value


@pytest.mark.parametrize("stack", STACKS)
def test_pods_and_local_processes_get_the_same_replica(stack: str) -> None:
    stacked = load_stack(stack)
    everything = _pods(stacked)
    for config in stacked.runs:  # a sweep: each trial is a run, planned on its own
        names = {r.name for r in build_topology(config).replicas}
        pods = {name: pod for name, pod in everything.items() if name in names}
        ports = {name: 40000 + i for i, name in enumerate(pods)}
        bucket = config.uses_oss  # a named, created or platform bucket
        data = LocalData(Path(LOCAL_INPUT), Path(LOCAL_EXPORT), "") if bucket else None
        plan = build_plan(config, ports, Path(LOCAL_OUT), Path(SCRATCH), base_env={}, stack=stack,
                          data=data)  # fmt: skip
        addresses = {
            f"localhost:{ports[r.name]}": f"{r.name}.{config.job.namespace}.svc:2222"
            for r in plan.topology.replicas
        }
        assert {spec.name for spec in plan.replicas} == set(pods)
        for spec in plan.replicas:
            pod = pods[spec.name]
            (container,) = pod["containers"]
            pod_argv = [*container["command"], *container.get("args", [])]
            local_argv = [_as_pod_would(arg, config, spec.name, addresses) for arg in spec.argv]
            # The deploy generation: a digest of the Jobs there, one per launch here.
            at = pod_argv.index("--generation") + 1
            local_argv[at] = pod_argv[at]
            assert local_argv == pod_argv, spec.name
            downward = {"metadata.name": spec.name, "metadata.namespace": config.job.namespace}
            pod_env = {}
            for var in container["env"]:
                if "resourceFieldRef" in var.get("valueFrom", {}):
                    continue  # the container's CPU limit: none here (a stated difference)
                if "valueFrom" in var:
                    pod_env[var["name"]] = downward[var["valueFrom"]["fieldRef"]["fieldPath"]]
                else:
                    pod_env[var["name"]] = var["value"]
            local_env = {
                key: _as_pod_would(value, config, spec.name, addresses)
                for key, value in spec.env.items()
                if key not in MACHINE_ONLY
            }
            # What the export records of where the run ran: the images there, the stack here.
            pod_env.pop("TFTRAIN_IMAGES", None)
            local_env.pop("TFTRAIN_STACK", None)
            assert local_env == pod_env, spec.name
            assert "workingDir" not in container  # the supervisor moves to --workdir, in both


# Every name the stack sets for a replica itself, as docs/trainer.md "What your trainer gets" lists
# them: Kubeflow's TF_CONFIG, the replica's HOME and TMPDIR, the downward API's pod name and
# namespace, and tftrain's own contract (paths, run, hyperparameters, GPUs).
STACK_SET = {
    "TF_CONFIG", "HOME", "TMPDIR", "POD_NAME", "POD_NAMESPACE", "TFTRAIN_OUTPUT_DIR",
    "TFTRAIN_DATA_DIR", "TFTRAIN_INPUT_DIR", "TFTRAIN_EXPORT_DIR", "TFTRAIN_INIT_CHECKPOINT",
    "TFTRAIN_JOB_NAME", "TFTRAIN_RUN_ID", "TFTRAIN_IMAGES", "TFTRAIN_STACK", "TFTRAIN_EPOCHS",
    "TFTRAIN_BATCH_SIZE", "TFTRAIN_LEARNING_RATE", "TFTRAIN_STRATEGY",
    "TFTRAIN_CHECKPOINT_STEPS", "TFTRAIN_KEEP_CHECKPOINTS", "TFTRAIN_LOG_STEPS",
    "TFTRAIN_STEPS_PER_EXECUTION", "TFTRAIN_MAX_STEPS", "TFTRAIN_GPUS",
}  # fmt: skip


THREAD_POOLS = ("TF_NUM_INTEROP_THREADS", "TF_NUM_INTRAOP_THREADS")


@pytest.mark.parametrize(
    ("cpu", "inter"), [("1", "2"), ("500m", "2"), ("2", "2"), ("2500m", "3"), ("8", "8")]
)  # fmt: skip
def test_pods_set_thread_pools_no_single_core_can_deadlock(cpu: str, inter: str) -> None:
    # A Guaranteed pod with an integer CPU gets exclusive cores under the kubelet's static
    # CPU manager policy, and TensorFlow sizes its pools from that cpuset: one core, one
    # inter-op thread, and a ps or worker server deadlocks (issue 41). The pod states both
    # pools: inter-op from its CPU, at least 2; intra-op the downward API's limits.cpu,
    # which Kubernetes rounds up to whole cores with divisor 1 (so 500m reads as 1).
    config = parse_config({"image": IMAGE, "ps": {"number": 1, "cpu": cpu},
                           "worker": {"cpu": cpu}, "chief": {"cpu": cpu}})  # fmt: skip
    pods = _pods(config)
    assert {name.rsplit("-", 2)[-2] for name in pods} >= {"chief", "worker", "ps"}
    for name, pod in pods.items():
        (container,) = pod["containers"]
        env = {var["name"]: var for var in container["env"]}
        assert env["TF_NUM_INTEROP_THREADS"] == {"name": "TF_NUM_INTEROP_THREADS", "value": inter}
        assert env["TF_NUM_INTRAOP_THREADS"]["valueFrom"] == {
            "resourceFieldRef": {
                "containerName": container["name"],
                "resource": "limits.cpu",
                "divisor": "1",
            }
        }, name
        assert container["resources"]["limits"]["cpu"] == cpu


def test_a_group_s_own_thread_setting_wins() -> None:
    config = parse_config({"image": IMAGE, "worker": {"env": {"TF_NUM_INTEROP_THREADS": "6"}}})
    values = {}
    for name, pod in _pods(config).items():
        (container,) = pod["containers"]
        values[name.rsplit("-", 2)[-2]] = [
            var["value"] for var in container["env"] if var["name"] == "TF_NUM_INTEROP_THREADS"
        ]
    assert values == {"chief": ["2"], "worker": ["6"], "ps": ["2"]}


@pytest.mark.parametrize("stack", STACKS)
def test_every_name_a_replica_gets_from_the_stack_is_a_stated_one(stack: str) -> None:
    config = load_stack(stack)
    for pod in _pods(config).values():
        (container,) = pod["containers"]
        names = {var["name"] for var in container["env"]}
        # Defaults a user may change: PYTHONUNBUFFERED (a trainer that buffers on purpose),
        # MPLCONFIGDIR (matplotlib's cache, shared by the job's runs), TensorFlow's thread pools.
        assert names - {"PYTHONUNBUFFERED", "MPLCONFIGDIR", *THREAD_POOLS} <= STACK_SET


@pytest.mark.parametrize("name", sorted(STACK_SET))
def test_a_name_the_stack_sets_is_refused_in_job_and_group_env(name: str) -> None:
    # The stack's value would override the user's, or the user's break the contract.
    for section in ("job", "worker"):
        with pytest.raises(ConfigError, match=rf"tftrain:{section}\.env .*not {name} "):
            parse_config({"image": IMAGE, section: {"env": {name: "x"}}})


def test_a_stack_file_s_own_env_name_is_not_refused() -> None:
    raw = read_stack_file(stack_file("dev"))
    parse_config({**raw, "job": {**raw.get("job", {}), "env": {"TF_CPP_MIN_LOG_LEVEL": "2"}}})


IMAGE = "registry.example.com/tftrain/trainer:1"


def test_a_local_process_gets_env_references_expanded_as_the_kubelet_would() -> None:
    # "$(VAR_NAME) ... expanded using the previously defined environment variables": the
    # stack's own come first, so a job.env value can name them.
    job_env = {"OUT": "$(TFTRAIN_OUTPUT_DIR)/x", "ESCAPED": "$$(HOME)", "LATER": "$(OUT)/y"}
    config = parse_config({"image": IMAGE, "job": {"env": job_env}, "worker": {"number": 1}})
    ports = {"mnist-chief-0": 40000, "mnist-ps-0": 40001, "mnist-worker-0": 40002}
    plan = build_plan(config, ports, Path(LOCAL_OUT), Path(SCRATCH), base_env={})
    env = plan.replicas[0].env
    assert env["OUT"] == f"{LOCAL_OUT}/x"
    assert env["ESCAPED"] == "$(HOME)"
    assert env["LATER"] == f"{LOCAL_OUT}/x/y"


def test_job_and_group_env_reach_the_pod_and_group_wins() -> None:
    job_env = {"TF_USE_LEGACY_KERAS": "1", "LEVEL": "job", "OUT": "$(TFTRAIN_OUTPUT_DIR)/x"}
    config = parse_config(
        {"image": IMAGE, "job": {"env": job_env}, "worker": {"env": {"LEVEL": "worker"}}}
    )
    pods = _pods(config)
    env = {v["name"]: v.get("value") for v in pods["mnist-worker-0"]["containers"][0]["env"]}
    assert env["TF_USE_LEGACY_KERAS"] == "1" and env["LEVEL"] == "worker"
    assert env["OUT"] == "$(TFTRAIN_OUTPUT_DIR)/x"  # the kubelet expands it
    chief = {v["name"]: v.get("value") for v in pods["mnist-chief-0"]["containers"][0]["env"]}
    assert chief["LEVEL"] == "job"
    assert chief["PYTHONUNBUFFERED"] == "1"
    assert chief["HOME"] == f"{config.output_dir}/replicas/mnist-chief-0/home"


def test_one_replica_plan_worked_by_hand() -> None:
    # 1 chief and 1 GPU worker, no ps (MultiWorkerMirrored); the place's output dir ends
    # in "X/" so a stripped separator is told apart from a stripped name.
    config = parse_config(
        {"image": IMAGE, "ps": {"number": 0}, "worker": {"number": 1, "gpuCount": 1},
         "hyperparams": {"batchSize": 128}}
    )  # fmt: skip
    place = Place(
        topology=build_topology(config),
        output_dir="/runs/X/",
        supervisor="/s/supervise.sh",
        export_script="/s/export.sh",
        scratch=lambda replica: f"/scratch/{replica.name}",
        data_env=lambda ends: {"ENDS_RUN": str(ends)},
    )
    chief, worker = (replica_plan(config, place, r, "g1") for r in place.topology.replicas)
    assert chief.replica.name == "mnist-chief-0" and worker.replica.name == "mnist-worker-0"
    assert chief.workdir == "/runs/X/replicas/mnist-chief-0/work"
    assert chief.home == "/runs/X/replicas/mnist-chief-0/home"
    assert worker.workdir == "/runs/X/replicas/mnist-worker-0/work"
    # TFJob's success policy: the chief's exit ends the run; it alone exports.
    assert (chief.ends_run, worker.ends_run) == (True, False)
    assert chief.command[:3] == ("/bin/sh", "/s/supervise.sh", "--ends-run")
    assert chief.command[chief.command.index("--on-success") + 1] == "/s/export.sh"
    assert "--on-success" not in worker.command
    assert chief.command[chief.command.index("--workdir") + 1] == chief.workdir
    # Each attempt's output is kept beside the replica's work and home.
    assert chief.command[chief.command.index("--logs") + 1] == "/runs/X/replicas/mnist-chief-0/logs"
    assert chief.command[-4:] == ("--", "python", "-m", "trainer")

    def env(plan: Any) -> dict[str, tuple[str, str]]:
        return {var.name: (var.value, var.field_path) for var in plan.env}

    assert env(chief)["TFTRAIN_GPUS"] == ("0", "")
    assert env(worker)["TFTRAIN_GPUS"] == ("1", "")
    assert env(chief)["ENDS_RUN"] == ("True", "")
    assert env(worker)["ENDS_RUN"] == ("False", "")
    assert env(chief)["POD_NAME"] == ("", "metadata.name")
    assert env(chief)["POD_NAMESPACE"] == ("", "metadata.namespace")
    assert env(chief)["HOME"] == (chief.home, "")
    assert env(worker)["TMPDIR"] == ("/scratch/mnist-worker-0", "")
    assert env(chief)["TFTRAIN_OUTPUT_DIR"] == ("/runs/X/", "")
    # HOME is new every run; matplotlib's font cache is kept beside the runs, for the next.
    assert env(chief)["MPLCONFIGDIR"] == ("/runs/.cache/matplotlib", "")
