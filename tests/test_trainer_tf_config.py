"""TF_CONFIG parsing and role planning: pure functions, table tests."""

from __future__ import annotations

import json

import pytest

from trainer.plan import PlanError, Role, make_plan
from trainer.tf_config import ClusterConfig, Task, TFConfigError, parse_tf_config

PS_CLUSTER = {
    "chief": ["job-chief-0.ns.svc:2222"],
    "worker": ["job-worker-0.ns.svc:2222", "job-worker-1.ns.svc:2222"],
    "ps": ["job-ps-0.ns.svc:2222"],
}
WORKERS_ONLY = {"worker": ["localhost:2000", "localhost:2001"]}


def tf_config(cluster: dict, task_type: str, index: int = 0) -> str:
    return json.dumps(
        {"cluster": cluster, "task": {"type": task_type, "index": index}, "environment": "cloud"}
    )


@pytest.mark.parametrize(
    ("raw", "task"),
    [
        (tf_config(PS_CLUSTER, "chief"), Task("chief", 0)),
        (tf_config(PS_CLUSTER, "worker", 1), Task("worker", 1)),
        (tf_config(PS_CLUSTER, "ps"), Task("ps", 0)),
        (tf_config(PS_CLUSTER, "evaluator"), Task("evaluator", 0)),
        (tf_config(WORKERS_ONLY, "worker", 1), Task("worker", 1)),
    ],
    ids=["chief", "worker", "ps", "evaluator", "workers-only"],
)
def test_valid_task(raw: str, task: Task) -> None:
    config = parse_tf_config(raw)
    assert config is not None
    assert config.task == task
    assert config.environment == "cloud"


def test_master_is_renamed_chief_in_cluster_and_task() -> None:
    cluster = {"master": ["m:2222"], "worker": ["w:2222"], "ps": ["p:2222"]}
    config = parse_tf_config(tf_config(cluster, "master"))
    assert config == ClusterConfig(
        cluster={"chief": ("m:2222",), "worker": ("w:2222",), "ps": ("p:2222",)},
        task=Task("chief", 0),
        environment="cloud",
    )


@pytest.mark.parametrize("task_type", ["chief", "worker", "ps", "evaluator"])
def test_an_evaluator_in_the_cluster_is_accepted_and_left_out(task_type: str) -> None:
    """Kubeflow's shape (evaluator listed in the cluster) parses to the same training
    cluster as TF2's (evaluator outside), so the coordinator never dials the evaluator."""
    kubeflow = parse_tf_config(tf_config({**PS_CLUSTER, "evaluator": ["e:2222"]}, task_type))
    tf2 = parse_tf_config(tf_config(PS_CLUSTER, task_type))
    assert kubeflow == tf2
    assert kubeflow is not None and "evaluator" not in kubeflow.cluster


@pytest.mark.parametrize("raw", [None, "", "  \n"])
def test_no_tf_config_means_one_process(raw: str | None) -> None:
    assert parse_tf_config(raw) is None
    assert make_plan("auto", None).role is Role.TRAINER


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("{not json", "not valid JSON"),
        ('["a list"]', "must be a JSON object"),
        (json.dumps({"task": {"type": "worker", "index": 0}}), "non-empty 'cluster'"),
        (json.dumps({"cluster": PS_CLUSTER}), "needs a 'task'"),
        (tf_config(PS_CLUSTER, "trainer"), "task type 'trainer' is unknown"),
        (tf_config(PS_CLUSTER, "worker", 2), "worker:2 is not in the cluster, which has 2"),
        (tf_config(PS_CLUSTER, "chief", 1), "chief:1 is not in the cluster"),
        (tf_config(WORKERS_ONLY, "ps"), "ps:0 is not in the cluster, which has 0"),
        (tf_config(PS_CLUSTER, "worker", -1), "index must be an integer >= 0"),
        (tf_config(PS_CLUSTER, "worker", "0"), "index must be an integer >= 0"),
        (tf_config({**PS_CLUSTER, "evaluator": "e:1"}, "chief"), "'host:port' strings"),
        (tf_config({**PS_CLUSTER, "master": ["m:1"]}, "chief"), "both 'master' and 'chief'"),
        (tf_config({"chief": ["a:1", "b:1"]}, "chief"), "one chief"),
        (tf_config({"worker": ["no-port"]}, "worker"), "'host:port' strings"),
    ],
    ids=[
        "bad-json", "not-object", "no-cluster", "no-task", "unknown-type",
        "index-out-of-range", "second-chief-index", "type-not-in-cluster", "negative-index",
        "string-index", "evaluator-not-a-list", "master-and-chief", "two-chiefs", "no-port",
    ],
)  # fmt: skip
def test_bad_tf_config_is_rejected_clearly(raw: str, message: str) -> None:
    with pytest.raises(TFConfigError, match="TF_CONFIG") as error:
        parse_tf_config(raw)
    assert message in str(error.value)


@pytest.mark.parametrize(
    ("cluster", "task", "requested", "strategy", "role", "writer"),
    [
        (PS_CLUSTER, "chief", "auto", "parameter_server", Role.COORDINATOR, True),
        (PS_CLUSTER, "worker", "auto", "parameter_server", Role.SERVER, False),
        (PS_CLUSTER, "ps", "parameter_server", "parameter_server", Role.SERVER, False),
        (PS_CLUSTER, "evaluator", "auto", "parameter_server", Role.EVALUATOR, False),
        (WORKERS_ONLY, "worker", "auto", "multi_worker_mirrored", Role.TRAINER, True),
        ({**WORKERS_ONLY, "chief": ["c:1"]}, "worker", "auto", "multi_worker_mirrored",
         Role.TRAINER, False),
        ({**WORKERS_ONLY, "chief": ["c:1"]}, "chief", "multi_worker_mirrored",
         "multi_worker_mirrored", Role.TRAINER, True),
        (PS_CLUSTER, "chief", "single", "single", Role.TRAINER, True),
        ({"chief": ["c:1"]}, "chief", "auto", "multi_worker_mirrored", Role.TRAINER, True),
        (PS_CLUSTER, "ps", "single", "single", Role.IDLE, False),
    ],
)  # fmt: skip
def test_plan(
    cluster: dict, task: str, requested: str, strategy: str, role: Role, writer: bool
) -> None:
    plan = make_plan(requested, parse_tf_config(tf_config(cluster, task)))
    assert (plan.strategy, plan.role, plan.is_writer) == (strategy, role, writer)


@pytest.mark.parametrize(
    ("cluster", "requested", "message"),
    [
        (WORKERS_ONLY, "parameter_server", "needs ps, worker and chief"),
        ({"ps": ["p:1"], "worker": ["w:1"]}, "auto", "needs ps, worker and chief"),
        (PS_CLUSTER, "multi_worker_mirrored", "uses no ps"),
    ],
)
def test_strategy_that_does_not_fit_the_cluster(
    cluster: dict, requested: str, message: str
) -> None:
    with pytest.raises(PlanError, match=message):
        make_plan(requested, parse_tf_config(tf_config(cluster, "worker")))


def test_distributed_strategy_without_tf_config() -> None:
    with pytest.raises(PlanError, match="TFTRAIN_STRATEGY parameter_server needs a cluster"):
        make_plan("parameter_server", None)


def test_hosts_and_locality() -> None:
    remote = parse_tf_config(tf_config(PS_CLUSTER, "chief"))
    local = parse_tf_config(tf_config(WORKERS_ONLY, "worker"))
    assert remote is not None and local is not None
    assert remote.hosts() == [
        "job-chief-0.ns.svc", "job-ps-0.ns.svc", "job-worker-0.ns.svc", "job-worker-1.ns.svc",
    ]  # fmt: skip
    assert not remote.all_local()
    assert local.all_local()


def test_peers_are_every_other_task_and_never_the_evaluator() -> None:
    # Whom a training process waits on, as its stall watchdog names them.
    config = parse_tf_config(
        '{"cluster": {"chief": ["c:1"], "worker": ["w0:1", "w1:1"], "ps": ["p:1"], '
        '"evaluator": ["e:1"]}, "task": {"type": "worker", "index": 1}}'
    )
    assert str(config.task) == "worker:1"
    assert config.peers() == ["chief:0", "worker:0", "ps:0"]


@pytest.mark.parametrize(
    ("requested", "outcome"),
    [
        ("auto", ("single", Role.TRAINER, True)),
        ("single", ("single", Role.TRAINER, True)),
        ("parameter_server", "--strategy / TFTRAIN_STRATEGY parameter_server needs a cluster "
         "in TF_CONFIG; use auto or single to train in one process"),
        ("multi_worker_mirrored", "--strategy / TFTRAIN_STRATEGY multi_worker_mirrored needs a "
         "cluster in TF_CONFIG; use auto or single to train in one process"),
        ("mirrored", "unknown strategy 'mirrored'; allowed: auto, parameter_server, "
         "multi_worker_mirrored, single"),
        ("SINGLE", "unknown strategy 'SINGLE'; allowed: auto, parameter_server, "
         "multi_worker_mirrored, single"),
    ],
)  # fmt: skip
def test_every_strategy_without_tf_config(requested: str, outcome: tuple | str) -> None:
    """One process (no TF_CONFIG) trains alone and writes everything; a distributed strategy
    there is refused naming the flag and what works (docs/trainer.md's strategy list)."""
    if isinstance(outcome, str):
        with pytest.raises(PlanError) as error:
            make_plan(requested, None)
        assert str(error.value) == outcome
    else:
        plan = make_plan(requested, None)
        assert (plan.strategy, plan.role, plan.is_writer) == outcome


@pytest.mark.parametrize(
    ("cluster", "task", "requested", "message"),
    [
        (WORKERS_ONLY, "worker", "parameter_server",
         "--strategy / TFTRAIN_STRATEGY parameter_server needs ps, worker and chief (or master) "
         "tasks in the TF_CONFIG cluster; it has ['worker']"),
        ({"ps": ["p:1"], "chief": ["c:1"]}, "chief", "auto",
         "--strategy / TFTRAIN_STRATEGY parameter_server needs ps, worker and chief (or master) "
         "tasks in the TF_CONFIG cluster; it has ['chief', 'ps']"),
        (PS_CLUSTER, "chief", "multi_worker_mirrored",
         "--strategy / TFTRAIN_STRATEGY multi_worker_mirrored uses no ps, but the TF_CONFIG "
         "cluster has ps tasks; use auto or parameter_server"),
        # Kubeflow's shape with nothing but an evaluator: nobody trains.
        ({"evaluator": ["e:1"]}, "evaluator", "auto",
         "multi_worker_mirrored needs worker or chief tasks in the cluster"),
    ],
)  # fmt: skip
def test_a_strategy_that_does_not_fit_says_what_would(
    cluster: dict, task: str, requested: str, message: str
) -> None:
    with pytest.raises(PlanError) as error:
        make_plan(requested, parse_tf_config(tf_config(cluster, task)))
    assert str(error.value) == message


def test_strategy_single_in_a_cluster_without_chief_or_worker_leaves_every_task_idle() -> None:
    """`single` trains in the chief, else worker 0: a cluster of ps alone has neither, so no
    task trains (and none is refused: `single` needs no particular task)."""
    plan = make_plan("single", parse_tf_config(tf_config({"ps": ["p:1"]}, "ps")))
    assert (plan.strategy, plan.role, plan.is_writer) == ("single", Role.IDLE, False)


def raw(cluster: object, task: object, **more: object) -> str:
    return json.dumps({"cluster": cluster, "task": task, **more})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('["a list"]', "TF_CONFIG must be a JSON object with 'cluster' and 'task'"),
        (json.dumps({"task": {"type": "worker"}}),
         "TF_CONFIG needs a non-empty 'cluster' object mapping task types chief, worker, ps "
         "(or master) to lists of host:port, got None"),
        (raw({}, {"type": "worker"}),
         "TF_CONFIG needs a non-empty 'cluster' object mapping task types chief, worker, ps "
         "(or master) to lists of host:port, got {}"),
        (raw(["worker"], {"type": "worker"}),
         "TF_CONFIG needs a non-empty 'cluster' object mapping task types chief, worker, ps "
         "(or master) to lists of host:port, got ['worker']"),
        (raw({"trainer": ["t:1"]}, {"type": "worker"}),
         "TF_CONFIG cluster has unknown task type 'trainer'; allowed: chief, worker, ps, "
         "master or evaluator"),
        (raw({"chief": ["c:1"], "master": ["m:1"]}, {"type": "chief"}),
         "TF_CONFIG cluster lists both 'master' and 'chief'; use one"),
        (raw({"worker": [2222]}, {"type": "worker"}),
         "TF_CONFIG cluster['worker'] must be a list of 'host:port' strings, got [2222]"),
        (raw({"worker": [":2222"]}, {"type": "worker"}),
         "TF_CONFIG cluster['worker'] must be a list of 'host:port' strings, got [':2222']"),
        (raw({"worker": ["w:http"]}, {"type": "worker"}),
         "TF_CONFIG cluster['worker'] must be a list of 'host:port' strings, got ['w:http']"),
        (raw({"chief": ["a:1", "b:1"]}, {"type": "chief"}),
         "TF_CONFIG cluster may have one chief, got ('a:1', 'b:1')"),
        (json.dumps({"cluster": {"worker": ["w:1"]}}),
         'TF_CONFIG needs a \'task\' object like {"type": "worker", "index": 0}, got None'),
        (raw({"worker": ["w:1"]}, {"type": "trainer"}),
         "TF_CONFIG task type 'trainer' is unknown; allowed: chief, worker, ps, evaluator or "
         "master"),
        (raw({"worker": ["w:1"]}, {"type": ["worker"]}),
         "TF_CONFIG task type ['worker'] is unknown; allowed: chief, worker, ps, evaluator or "
         "master"),
        (raw({"worker": ["w:1"]}, {"type": "worker", "index": True}),
         "TF_CONFIG task index must be an integer >= 0, got True"),
        (raw({"worker": ["w:1", "w:2"]}, {"type": "worker", "index": 2}),
         "TF_CONFIG task worker:2 is not in the cluster, which has 2 worker task(s)"),
        (raw({"worker": ["w:1"]}, {"type": "worker"}, environment=3),
         "TF_CONFIG environment must be a string, got 3"),
    ],
)  # fmt: skip
def test_every_refusal_in_full(text: str, message: str) -> None:
    with pytest.raises(TFConfigError) as error:
        parse_tf_config(text)
    assert str(error.value) == message


def test_bad_json_is_quoted_up_to_200_characters() -> None:
    text = "{" + "x" * 299
    with pytest.raises(TFConfigError) as error:
        parse_tf_config(text)
    quoted = repr("{" + "x" * 199)
    assert str(error.value).startswith("TF_CONFIG is not valid JSON (")
    assert str(error.value).endswith(f"): {quoted}")


def test_a_task_without_an_index_is_index_0() -> None:
    config = parse_tf_config(raw({"worker": ["w:1"]}, {"type": "worker"}))
    assert config is not None and config.task == Task("worker", 0)
    assert config.environment is None


@pytest.mark.parametrize(
    ("addresses", "hosts", "local"),
    [
        (["localhost:2000", "127.0.0.1:2001"], ["127.0.0.1", "localhost"], True),
        (["[::1]:2000", "[::1]:2001"], ["[::1]"], True),  # IPv6, bracketed as gRPC wants
        (["[fd00::5]:2222", "localhost:1"], ["[fd00::5]", "localhost"], False),
        (["127.0.0.2:2222"], ["127.0.0.2"], False),
    ],
)
def test_hosts_of_every_address_shape(addresses: list[str], hosts: list[str], local: bool) -> None:
    config = parse_tf_config(raw({"worker": addresses}, {"type": "worker"}))
    assert config is not None
    assert (config.hosts(), config.all_local()) == (hosts, local)
