"""A finished run stays finished through `pulumi refresh` + `up` (issue 22, "no resurrection").

Kubernetes' Job API: "If this field [ttlSecondsAfterFinished] is unset, the Job won't be
automatically deleted". Pulumi: `refresh` drops a resource the cluster no longer has, and the
next `up` creates it again (pulumi/pulumi#6456). So by default no Job may carry a TTL, and a
second `up` of the same config must register the Jobs exactly as before (no replacement).
"""

from __future__ import annotations

from infra.config import load_stack, parse_config
from tests.pulumi_mocks import run_program, run_stacks

JOB = "kubernetes:batch/v1:Job"


def test_no_stack_lets_kubernetes_delete_its_finished_jobs() -> None:
    for stack in run_stacks():
        recorded = run_program(stack)
        jobs = recorded.of_type(JOB)
        assert jobs, stack
        for job in jobs:
            assert "ttlSecondsAfterFinished" not in job.inputs["spec"], (stack, job.name)


def test_the_same_config_registers_the_same_jobs_again() -> None:
    first = {job.name: job.inputs for job in run_program("dev").of_type(JOB)}
    second = {job.name: job.inputs for job in run_program("dev").of_type(JOB)}
    assert first == second


def test_a_ttl_is_only_there_when_asked_for() -> None:
    assert load_stack("dev").job.ttl_seconds_after_finished is None
    config = {
        "image": "registry.example.com/tftrain/trainer:1",
        "job": {"ttlSecondsAfterFinished": 600},
    }
    assert parse_config(config).job.ttl_seconds_after_finished == 600
    for job in run_program(config).of_type(JOB):
        assert job.inputs["spec"]["ttlSecondsAfterFinished"] == 600
