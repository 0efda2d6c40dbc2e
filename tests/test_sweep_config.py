"""Sweeps as stack config: the points, the trials (each a run), the refusals, the review.

Expected points are worked by hand from the spec (a grid is the cartesian product in the
order the keys are listed; a random draw is CPython's Mersenne Twister for the seed), never
from the sweep code itself.
"""

from __future__ import annotations

import copy
from typing import Any

import pulumi
import pytest

from infra.config import ConfigError, StackConfig, load_stack, parse_config
from infra.config.sweep_platform import platform_problems
from infra.manifests import build_objects, object_key
from infra.manifests.common import RUN_ID_LABEL
from infra.manifests.lifecycle import POD_GROUP_LABEL
from infra.platform.cluster_facts import cluster_facts
from infra.render.kubernetes import render_kubernetes
from infra.render.summary import summarize
from tests.pulumi_mocks import run_program

IMAGE = "registry.example.com/tftrain/trainer:1"
LR = "hyperparams.learningRate"
BS = "hyperparams.batchSize"


def sweep_stack(sweep: dict[str, Any], **sections: Any) -> dict[str, Any]:
    return {"image": IMAGE, "sweep": sweep, **sections}


def grid(*learning_rates: float, parallel: int = 1) -> dict[str, Any]:
    return sweep_stack({"parameters": {LR: {"values": list(learning_rates)}}, "parallel": parallel})


def points(config: StackConfig) -> list[dict[str, Any]]:
    return [trial.trial_point for trial in config.trials]


def test_a_grid_is_every_combination_first_key_slowest() -> None:
    raw = sweep_stack(
        {"parameters": {LR: {"values": [0.001, 0.003, 0.01]}, BS: {"values": [64, 128]}}}
    )
    config = parse_config(raw)
    assert points(config) == [
        {LR: 0.001, BS: 64},
        {LR: 0.001, BS: 128},
        {LR: 0.003, BS: 64},
        {LR: 0.003, BS: 128},
        {LR: 0.01, BS: 64},
        {LR: 0.01, BS: 128},
    ]
    # Each trial trains its own point.
    assert [(t.hyperparams.learning_rate, t.hyperparams.batch_size) for t in config.trials] == [
        (0.001, 64), (0.001, 128), (0.003, 64), (0.003, 128), (0.01, 64), (0.01, 128)
    ]  # fmt: skip


RANDOM = {
    "method": "random",
    "parameters": {
        LR: {"min": 0.0001, "max": 0.1, "distribution": "log_uniform"},
        BS: {"values": [64, 128, 256]},
    },
    "samples": 3,
    "seed": 7,
}


def test_a_random_sweep_draws_the_seeded_points() -> None:
    # random.Random(7).random() is 0.32383276483316237 (CPython's MT19937 for seed 7), so the
    # first learning rate is 1e-4 x 1000^0.3238... = 0.00093648 (6 significant digits); the
    # batch size is values[randrange(3)] with the next output.
    config = parse_config(sweep_stack(RANDOM))
    assert points(config) == [
        {LR: 0.00093648, BS: 64},
        {LR: 0.00152922, BS: 64},
        {LR: 0.000164933, BS: 256},
    ]


def test_more_samples_only_add_points_after_those_drawn() -> None:
    three = points(parse_config(sweep_stack(RANDOM)))
    five = points(parse_config(sweep_stack({**RANDOM, "samples": 5})))
    assert five[:3] == three and len(five) == 5


def test_int_uniform_draws_whole_numbers_within_both_ends() -> None:
    spec = {"hyperparams.epochs": {"min": 1, "max": 3, "distribution": "int_uniform"}}
    raw = sweep_stack({"method": "random", "parameters": spec, "samples": 40, "seed": 1})
    drawn = {p["hyperparams.epochs"] for p in points(parse_config(raw))}
    assert drawn == {1, 2, 3}  # 40 draws of 3 values: each end is reached


def test_each_trial_is_a_run_with_its_own_id_and_jobs() -> None:
    config = parse_config(grid(0.001, 0.01))
    ids = [trial.job.run_id for trial in config.trials]
    assert len(set(ids)) == 2
    objects = build_objects(config, cluster_facts(config))
    jobs = [o for o in objects if o["kind"] == "Job"]
    by_run: dict[str, list[str]] = {}
    for job in jobs:
        by_run.setdefault(job["metadata"]["labels"][RUN_ID_LABEL], []).append(
            job["metadata"]["name"]
        )
    # The default topology (chief, 2 workers, ps) once per trial, named after its run.
    assert sorted(by_run) == sorted(ids)
    for run_id, names in by_run.items():
        assert sorted(names) == sorted(
            f"mnist-{run_id}-{kind}" for kind in ("chief-0", "worker-0", "worker-1", "ps-0")
        )
    # One namespace, one volume, one TensorBoard for all trials: side by side under the job.
    assert [o["kind"] for o in objects].count("PersistentVolumeClaim") == 1
    assert [o["kind"] for o in objects].count("Deployment") == 1
    assert {t.output_dir.rsplit("/", 1)[0] for t in config.trials} == {config.logs_root}


def _trial_objects(config: StackConfig) -> dict[str, dict[Any, dict[str, Any]]]:
    """Each trial's objects (those carrying its run id), by run id, keyed as the cluster is."""
    found: dict[str, dict[Any, dict[str, Any]]] = {}
    for obj in build_objects(config, cluster_facts(config)):
        run = obj["metadata"].get("labels", {}).get(RUN_ID_LABEL)
        if run:
            found.setdefault(run, {})[object_key(obj)] = obj
    return found


def test_adding_a_value_changes_nothing_of_the_trials_already_there() -> None:
    two, three = parse_config(grid(0.001, 0.01)), parse_config(grid(0.001, 0.01, 0.03))
    before, after = _trial_objects(two), _trial_objects(three)
    assert len(after) == 3
    for run_id, objects in before.items():
        assert after[run_id] == objects  # object by object, every field
    # And the review says exactly one trial is created.
    summary = summarize(render_kubernetes(two), render_kubernetes(three), "s", "old", "new")
    assert "Sweep: 3 trials: created 1, kept 2" in summary
    (added,) = [line for line in summary.splitlines() if line.startswith("  + ")]
    assert added.endswith(f"{LR}=0.03")
    assert "removed 0" in summary


def test_removing_a_value_deletes_only_its_trial() -> None:
    three, two = parse_config(grid(0.001, 0.01, 0.03)), parse_config(grid(0.001, 0.01))
    summary = summarize(render_kubernetes(three), render_kubernetes(two), "s", "old", "new")
    assert "created 0, kept 2" in summary and "removed 1" in summary
    (removed,) = [line for line in summary.splitlines() if line.startswith("  - ")]
    assert removed.endswith(f"{LR}=0.03")
    # The trial's objects and none other go: a Job and a Service per replica (chief, two
    # workers, ps) and its NetworkPolicy; nothing is created or changed.
    (objects,) = [line for line in summary.splitlines() if line.startswith("Kubernetes objects")]
    assert "delete 9 " in objects and "Job 4" in objects and "Service 4" in objects, objects
    assert "create" not in objects and "update" not in objects and "replace" not in objects


def test_an_edit_every_trial_shares_says_so() -> None:
    old = parse_config(grid(0.001, 0.01))
    new = parse_config({**grid(0.001, 0.01), "hyperparams": {"epochs": 2}})
    summary = summarize(render_kubernetes(old), render_kubernetes(new), "s", "old", "new")
    assert "created 2, kept 0" in summary and "removed 2" in summary
    assert "every trial changes" in summary


def test_a_random_sweep_renders_the_same_points_every_time_and_the_review_shows_them() -> None:
    first = render_kubernetes(parse_config(sweep_stack(RANDOM)))
    assert first == render_kubernetes(parse_config(sweep_stack(copy.deepcopy(RANDOM))))
    assert f"{LR}=0.00093648 {BS}=64" in first
    summary = summarize("", first, "s", "old", "new")
    assert "created 3" in summary
    assert f"{LR}=0.000164933 {BS}=256" in summary


def test_the_review_states_what_runs_at_once_and_gpu_hours() -> None:
    raw = {
        **grid(0.001, 0.01, 0.03, parallel=2),
        "worker": {"number": 2, "gpuCount": 1},
        "job": {"activeDeadlineSeconds": 3600},
        "cluster": {"kind": "existing"},
    }
    text = render_kubernetes(parse_config(raw))
    summary = summarize("", text, "s", "old", "new")
    # chief + 2 workers + ps = 4 replicas and 2 GPUs per trial; 2 at once; 3 trials x 2 GPUs
    # x 1 h = 6 GPU-hours at most.
    assert "at once: 2 trials (sweep.parallel), at most 8 replicas and 4 GPUs" in summary
    assert "GPU-hours at most: 6 (6 GPUs over all trials x 3600 s" in summary


BAD_SWEEPS = {
    "unknown key": ({"parameters": {"hyperparams.learnRate": {"values": [0.1]}}}, "learnRate"),
    "a cluster key": ({"parameters": {"cluster.kind": {"values": ["ack"]}}}, "cluster.kind"),
    "an empty list": ({"parameters": {LR: {"values": []}}}, LR),
    "min above max": (
        {"method": "random", "parameters": {LR: {"min": 0.1, "max": 0.01}}, "samples": 2},
        LR,
    ),
    "parallel below 1": ({"parameters": {LR: {"values": [0.1]}}, "parallel": 0}, "parallel"),
    "a point that fails validation": (
        {"parameters": {LR: {"values": [0.01, 20]}}},
        "tftrain:hyperparams.learningRate = 20",
    ),
    # A Pulumi secret as a value: trial Jobs, the review and the run id would show it.
    "a secret value": (
        {"parameters": {"job.env.TOKEN": {"values": [{"secure": "v1:AAAAcipher"}, "x"]}}},
        "job.env.TOKEN",
    ),
    # YAML's null in a list of values (found by the slow property draw: it was a traceback).
    "a null value": (
        {"parameters": {LR: {"values": [None, 0.01]}}},
        f"tftrain:sweep trial 1 ({LR}=null)",
    ),
}


@pytest.mark.parametrize("sweep,key", BAD_SWEEPS.values(), ids=BAD_SWEEPS.keys())
def test_a_bad_sweep_gets_one_line_naming_the_key(sweep: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(sweep_stack(sweep))
    (problem,) = error.value.problems
    assert "\n" not in problem and key in problem
    assert problem.startswith("tftrain:sweep")


def test_a_sweep_the_engine_marked_secret_is_refused_without_showing_the_value() -> None:
    # In the program the engine hands `sweep` decrypted and lists it as secret.
    raw = sweep_stack({"parameters": {"job.env.TOKEN": {"values": ["s3cr3t", "x"]}}})
    with pytest.raises(ConfigError) as error:
        parse_config(raw, secret_keys=["sweep"])
    text = "\n".join(error.value.problems)
    assert "a Pulumi secret cannot be swept" in text and "job.env.TOKEN" in text
    assert "s3cr3t" not in text


@pytest.mark.parametrize("sweep,key", BAD_SWEEPS.values(), ids=BAD_SWEEPS.keys())
def test_a_bad_sweep_registers_nothing(sweep: dict[str, Any], key: str) -> None:
    run = run_program(sweep_stack(sweep), raise_errors=False)
    assert isinstance(run.error, pulumi.RunError)
    assert key in str(run.error)
    assert run.resources == [] and run.calls == []


def test_a_bad_point_names_its_trial_and_point() -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(sweep_stack({"parameters": {LR: {"values": [0.01, 20]}}}))
    assert error.value.problems[0].startswith(f"tftrain:sweep trial 2 ({LR}=20): ")


def test_a_pinned_run_id_is_refused_with_a_sweep() -> None:
    with pytest.raises(ConfigError, match=r"tftrain:job\.runId"):
        parse_config({**grid(0.1, 0.2), "job": {"runId": "lr"}})


def test_trials_that_train_the_same_are_refused() -> None:
    # keepCheckpoints does not change what is trained: both points would be one run.
    raw = sweep_stack({"parameters": {"hyperparams.keepCheckpoints": {"values": [3, 4]}}})
    with pytest.raises(ConfigError, match="trains the same"):
        parse_config(raw)


ACK_GPU = {
    "cluster": {"kind": "ack", "cpuPool": {"size": 2}},
    "network": {"zoneId": "cn-hangzhou-i"},
    "worker": {"number": 2, "gpuCount": 1},
}


def test_ack_sizes_the_gpu_pool_for_parallel_trials() -> None:
    config = parse_config({**grid(0.001, 0.003, 0.01, parallel=2), **ACK_GPU})
    # Two GPU workers per trial, one node each, two trials at once: 4 nodes at most.
    assert config.cluster.gpu_pool.max_size == 4
    assert platform_problems(config) == []


def test_ack_refuses_parallel_beyond_the_gpu_pool() -> None:
    cluster = {**ACK_GPU["cluster"], "gpuPool": {"maxSize": 2}}
    config = parse_config({**grid(0.001, 0.003, parallel=2), **ACK_GPU, "cluster": cluster})
    (problem,) = platform_problems(config)
    assert problem.startswith("tftrain:sweep.parallel = 2: must be at most 1")


def test_ack_refuses_a_pool_that_would_run_more_than_parallel() -> None:
    cluster = {**ACK_GPU["cluster"], "gpuPool": {"maxSize": 6}}
    config = parse_config({**grid(0.001, 0.003, 0.01, parallel=2), **ACK_GPU, "cluster": cluster})
    (problem,) = platform_problems(config)
    assert problem.startswith("tftrain:cluster.gpuPool.maxSize = 6: must be 4")


@pytest.mark.parametrize(
    "sections",
    [
        {"cluster": {"kind": "existing"}},
        {"cluster": {"kind": "ask"}, "network": {"zoneId": "cn-hangzhou-i"}},
    ],
    ids=["existing", "ask"],
)
def test_where_nothing_holds_a_trial_back_parallel_must_cover_every_trial(
    sections: dict[str, Any],
) -> None:
    raw = {**grid(0.001, 0.01), **sections}
    (problem,) = platform_problems(parse_config(raw))
    assert problem.startswith("tftrain:sweep.parallel = 1: must be 2")
    run = run_program(raw, raise_errors=False)
    assert "tftrain:sweep.parallel" in str(run.error) and run.resources == []


def test_a_trial_job_is_up_once_its_pods_exist() -> None:
    config = parse_config(grid(0.001, 0.01))
    (job, *_) = [o for o in build_objects(config, cluster_facts(config)) if o["kind"] == "Job"]
    assert "@.active > 0" in job["metadata"]["annotations"]["pulumi.com/waitFor"]


def test_the_program_creates_the_gpu_pool_sized_for_parallel_trials() -> None:
    raw = {**grid(0.001, 0.003, 0.01, parallel=2), **ACK_GPU, "alicloud:region": "cn-hangzhou"}
    run = run_program(raw)
    (pool,) = [
        r
        for r in run.of_type("alicloud:cs/nodePool:NodePool")
        if r.inputs.get("scalingConfig", {}).get("type") == "gpu"
    ]
    # 2 trials at once x 2 GPU workers, one node each (the gang holds the third back).
    assert pool.inputs["scalingConfig"]["maxSize"] == 4
    jobs = run.objects_of_kind("Job")
    assert len(jobs) == 3 * 4  # every trial's Jobs exist; the scheduler decides which run
    groups = {j["spec"]["template"]["metadata"]["labels"].get(POD_GROUP_LABEL) for j in jobs}
    assert len(groups) == 3  # one gang per trial


@pytest.mark.parametrize("key", ["trials", "trialPoint"])
def test_the_models_trial_fields_are_no_keys_of_a_stack_file(key: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config({"image": IMAGE, key: []})
    assert error.value.problems[0].startswith(f"tftrain:{key}: unknown key")


def test_the_dev_sweep_stack_renders_one_set_of_jobs_per_trial() -> None:
    config = load_stack("dev-sweep")
    jobs = [o for o in build_objects(config, cluster_facts(config)) if o["kind"] == "Job"]
    runs = sorted(job["metadata"]["labels"][RUN_ID_LABEL] for job in jobs)
    # Two learning rates, one worker each (the stack's topology): two Jobs, two run ids.
    assert len(runs) == len(set(runs)) == 2
    assert {job["metadata"]["name"] for job in jobs} == {f"mnist-{r}-worker-0" for r in runs}


def test_random_draws_that_repeat_a_point_run_it_once_and_say_so() -> None:
    # Two values, eight draws: at most two distinct points, hence two trials.
    raw = sweep_stack(
        {"method": "random", "parameters": {BS: {"values": [64, 128]}}, "samples": 8, "seed": 3}
    )
    config = parse_config(raw)
    assert sorted(p[BS] for p in points(config)) == [64, 128]
    assert "# sweep trials: 2 (8 samples drew 2 distinct points)" in render_kubernetes(config)


def test_points_that_differ_only_in_a_job_env_value_are_different_runs() -> None:
    # docs/hyperparameters.md and docs/config.md: env values are part of the run id.
    config = parse_config(
        {"image": "registry.example.com/tftrain/trainer:1",
         "sweep": {"parameters": {"job.env.MODE": {"values": ["a", "b"]}}}}
    )  # fmt: skip
    first, second = config.trials
    assert (first.job.env, second.job.env) == ({"MODE": "a"}, {"MODE": "b"})
    assert first.job.run_id != second.job.run_id


def test_trials_without_gpu_replicas_give_the_gpu_pool_no_nodes_whatever_its_min_size() -> None:
    # As for one run (the model's rule): no GPU replica, no GPU node; minSize does not make
    # one. A sweep of two CPU-only trials derives the same maxSize 0 as each trial alone.
    cpu_only = {**ACK_GPU, "worker": {"number": 2, "gpuCount": 0}}
    cluster = {**ACK_GPU["cluster"], "gpuPool": {"minSize": 1}}
    config = parse_config({**grid(0.001, 0.01, parallel=2), **cpu_only, "cluster": cluster})
    assert config.cluster.gpu_pool.max_size == 0
    assert [trial.cluster.gpu_pool.max_size for trial in config.trials] == [0, 0]
