"""The trainer's process environment before TensorFlow starts (trainer.environment): exact
values, worked by hand from the rules in its docstring. The thread-pool tables are in
test_trainer_settings.py; these are the values around them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from trainer import environment
from trainer.plan import make_plan
from trainer.tf_config import parse_tf_config

CLUSTER = (
    '{"cluster": {"worker": ["w0.ns.svc:2222"], "chief": ["c.ns.svc:1"],'
    ' "ps": ["p0.ns.svc:2222"]}, "task": {"type": "worker", "index": 0}}'
)
# localhost, 127.0.0.1 and ::1, then the cluster's hosts in name order.
BYPASS = "localhost,127.0.0.1,::1,c.ns.svc,p0.ns.svc,w0.ns.svc"


def prepared(env: dict[str, str], tf_config: str | None = CLUSTER) -> dict[str, str]:
    config = parse_tf_config(tf_config)
    environment.prepare(config, make_plan("auto", config), env)
    return env


@pytest.fixture
def four_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3})
    monkeypatch.setattr(environment, "cgroup_cpus", lambda _root=None: None)


@pytest.mark.usefixtures("four_cores")
def test_tensorflow_s_info_lines_are_hidden_unless_the_user_says_otherwise() -> None:
    # TF_CPP_MIN_LOG_LEVEL: 0 all, 1 no INFO, 2 no WARNING, 3 no ERROR (TensorFlow's
    # tensorflow/core/platform/default/logging.cc).
    assert prepared({}, None)["TF_CPP_MIN_LOG_LEVEL"] == "1"
    assert prepared({"TF_CPP_MIN_LOG_LEVEL": "0"}, None)["TF_CPP_MIN_LOG_LEVEL"] == "0"


@pytest.mark.usefixtures("four_cores")
@pytest.mark.parametrize("tf_config", [None, CLUSTER], ids=["single", "cluster-task"])
def test_tensors_come_from_the_bfc_allocator_unless_the_user_says_otherwise(
    tf_config: str | None,
) -> None:
    # TensorFlow reads TF_CPU_ALLOCATOR_USE_BFC as a bool: "1"/"true" on, "0"/"false" off
    # (tensorflow/core/common_runtime/process_state.cc, ReadBoolFromEnvVar).
    assert prepared({}, tf_config)["TF_CPU_ALLOCATOR_USE_BFC"] == "1"
    assert prepared({"TF_CPU_ALLOCATOR_USE_BFC": "0"}, tf_config)["TF_CPU_ALLOCATOR_USE_BFC"] == "0"


def test_tensorflow_started_after_prepare_allocates_with_bfc() -> None:
    # TensorFlow keeps allocator statistics for its BFC allocator only: its default CPU
    # allocator answers get_memory_info with "Allocator stats not available".
    code = (
        "import os; from trainer import environment; from trainer.plan import make_plan; "
        "environment.prepare(None, make_plan('single', None)); import tensorflow as tf; "
        "x = tf.ones([64, 64]) @ tf.ones([64, 64]); "
        "print(tf.config.experimental.get_memory_info('CPU:0')['peak'] > 0)"
    )
    env = {k: v for k, v in os.environ.items() if k != "TF_CPU_ALLOCATOR_USE_BFC"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env,
        cwd=Path(__file__).parents[1],
    )  # fmt: skip
    assert (done.returncode, done.stdout.split()[-1:]) == (0, ["True"]), done.stderr[-2000:]


@pytest.mark.usefixtures("four_cores")
@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({}, {"no_proxy": BYPASS, "NO_PROXY": BYPASS}),
        ({"no_proxy": "example.com"}, {"no_proxy": f"example.com,{BYPASS}", "NO_PROXY": BYPASS}),
        # Empty entries dropped, an entry already there kept once, where the user put it.
        ({"NO_PROXY": ",p0.ns.svc,,corp.local,"},
         {"no_proxy": BYPASS, "NO_PROXY": "p0.ns.svc,corp.local,localhost,127.0.0.1,::1,"
          "c.ns.svc,w0.ns.svc"}),
        ({"no_proxy": "localhost,example.com"},
         {"no_proxy": "localhost,example.com,127.0.0.1,::1,c.ns.svc,p0.ns.svc,w0.ns.svc",
          "NO_PROXY": BYPASS}),
    ],
    ids=["none-set", "user-list-first", "empty-entries-and-duplicates", "a-local-host-given"],
)  # fmt: skip
def test_no_proxy_under_a_proxy_is_the_user_s_list_then_the_cluster(
    given: dict[str, str], expected: dict[str, str]
) -> None:
    env = prepared({"HTTPS_PROXY": "http://proxy:3128", **given})
    assert {name: env[name] for name in ("no_proxy", "NO_PROXY")} == expected


@pytest.mark.usefixtures("four_cores")
@pytest.mark.parametrize("proxy", environment.PROXY_VARS)
def test_any_proxy_variable_turns_the_bypass_on(proxy: str) -> None:
    assert prepared({proxy: "http://proxy:3128"})["no_proxy"] == BYPASS


@pytest.mark.usefixtures("four_cores")
def test_an_empty_proxy_variable_is_no_proxy() -> None:
    env = prepared({"http_proxy": ""})
    assert "no_proxy" not in env and "NO_PROXY" not in env


PS_ONE_WORKER = '{"chief": ["localhost:1"], "ps": ["localhost:3"], "worker": ["localhost:2"]}'
PS_TWO_WORKERS = (
    '{"chief": ["localhost:1"], "ps": ["localhost:3"], "worker": ["localhost:2", "localhost:4"]}'
)


@pytest.mark.parametrize(
    ("tf_config", "task", "strategy", "intra"),
    [
        # Every task local: the 4 cores split among the processes that compute.
        ('{"worker": ["localhost:2"]}', "worker", "auto", "4"),  # one MWMS worker: all 4
        ('{"worker": ["localhost:2"], "chief": ["localhost:1"]}', "chief", "auto", "2"),
        ('{"worker": ["localhost:2"], "chief": ["localhost:1"]}', "chief", "single", "4"),
        ('{"chief": ["localhost:1"]}', "chief", "single", "4"),  # nobody to share with
        # ParameterServerStrategy: the workers share; the chief computes once they are done.
        (PS_ONE_WORKER, "chief", "auto", "4"),
        (PS_TWO_WORKERS, "chief", "auto", "4"),
        (PS_TWO_WORKERS, "worker", "auto", "2"),
        (PS_TWO_WORKERS, "ps", "auto", "2"),
    ],
)
def test_local_cores_are_shared_among_the_processes_that_compute(
    four_cores: None, tf_config: str, task: str, strategy: str, intra: str
) -> None:
    config = parse_tf_config(f'{{"cluster": {tf_config}, "task": {{"type": "{task}"}}}}')
    env: dict[str, str] = {}
    environment.prepare(config, make_plan(strategy, config), env)
    assert env["TF_NUM_INTRAOP_THREADS"] == intra


@pytest.mark.usefixtures("four_cores")
def test_an_inter_op_setting_of_two_or_more_is_kept_and_not_mentioned(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for value in ("2", "3"):
        assert prepared({"TF_NUM_INTEROP_THREADS": value})["TF_NUM_INTEROP_THREADS"] == value
    assert capsys.readouterr().err == ""


@pytest.mark.usefixtures("four_cores")
def test_an_inter_op_setting_of_one_is_raised_with_the_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    prepared({"TF_NUM_INTEROP_THREADS": "1"})
    assert capsys.readouterr().err == (
        "tftrain: TF_NUM_INTEROP_THREADS=1 raised to 2: with one inter-op thread a "
        "distributed TensorFlow server deadlocks on its first function\n"
    )


@pytest.mark.usefixtures("four_cores")
def test_an_inter_op_setting_that_is_no_number_is_replaced() -> None:
    assert prepared({"TF_NUM_INTEROP_THREADS": "many"})["TF_NUM_INTEROP_THREADS"] == "4"


@pytest.mark.parametrize("text", ["0 100000\n", "-5 100000\n", "150000 0\n"])
def test_a_quota_or_period_of_zero_or_less_is_no_limit(tmp_path: Path, text: str) -> None:
    """The kernel never writes these (quota and period are at least 1 ms, sched-bwc.rst);
    a file that holds one anyway must not cap the process at nothing, or divide by zero."""
    (tmp_path / "cpu.max").write_text(text)
    assert environment.cgroup_cpus(tmp_path) is None


def test_a_quota_below_one_cpu_still_leaves_one(tmp_path: Path) -> None:
    (tmp_path / "cpu.max").write_text("1 100000\n")  # 1 µs per 100 ms: a sliver of a CPU
    assert environment.cgroup_cpus(tmp_path) == 0.00001
    assert environment.cpu_share(tmp_path) == 1


def test_matplotlib_is_marked_absent_unless_already_imported() -> None:
    fresh: dict[str, object] = {"os": os}
    environment.skip_plotting_imports(fresh)
    assert fresh == {"os": os, "matplotlib": None}
    loaded: dict[str, object] = {"matplotlib": environment}
    environment.skip_plotting_imports(loaded)
    assert loaded == {"matplotlib": environment}
