"""The consequences summary `--diff` opens with: golden cases (tests/goldens.py, reviewed by
hand), its rules one by one, and the pull request comment that carries it."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from infra.manifests.image_cache import KIND as IMAGE_CACHE_KIND
from infra.render.review import EXISTING_CLUSTER_REASON, preview_blocker
from infra.render.summary import kubernetes_action, parse_render, summarize
from tests.goldens import CASES, Case, summary_of

REGENERATE = "regenerate with `.venv/bin/python -m tests.goldens` and review the change"


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_summary_matches_its_golden(case: Case) -> None:
    assert case.golden.is_file(), f"{case.golden} missing: {REGENERATE}"
    expected = case.golden.read_text(encoding="utf-8")
    assert summary_of(case) == expected, f"{case.name}: summary changed; {REGENERATE}"


def test_summary_is_deterministic() -> None:
    case = next(case for case in CASES if case.name == "worker-added")
    assert summary_of(case) == summary_of(case)


def test_goldens_are_exactly_the_cases() -> None:
    on_disk = {path.name for path in CASES[0].golden.parent.glob("*.txt")}
    assert on_disk == {case.golden.name for case in CASES}


def _job(template_env: str, backoff: int = 3) -> dict:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "n"},
        "spec": {
            "backoffLimit": backoff,
            "template": {"spec": {"containers": [{"name": "c", "env": [template_env]}]}},
        },
    }


def test_a_job_template_change_is_a_replace_and_other_job_fields_an_update() -> None:
    assert kubernetes_action(_job("a"), _job("b")) == "replace"
    assert kubernetes_action(_job("a"), _job("a", backoff=4)) == "update"
    assert kubernetes_action(_job("a"), _job("a")) is None


def test_the_program_s_image_cache_rule_makes_a_new_image_list_a_replace() -> None:
    old = {"kind": IMAGE_CACHE_KIND, "metadata": {"name": "c"}, "spec": {"images": ["a"]}}
    new = copy.deepcopy(old)
    new["spec"]["images"].append("b")
    assert kubernetes_action(old, new) == "replace"
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"x": "y"}
    assert kubernetes_action(old, new) == "update"


def test_a_stack_that_appears_is_all_creates_and_starts_its_run() -> None:
    new = Path(__file__).resolve().parent.parent / "stacks"
    from infra.render import render_stack

    text = render_stack("dev", new)
    summary = summarize("", text, "dev", "before", "after")
    jobs = sum(1 for obj in parse_render(text).objects.values() if obj["kind"] == "Job")
    assert f"Job {jobs}" in summary.splitlines()[2]
    assert summary.splitlines()[2].startswith("Kubernetes objects: create ")
    assert "starts (no run before)" in summary.splitlines()[1]


def test_dev_cannot_preview_in_ci_and_cloud_stacks_can() -> None:
    assert preview_blocker("dev", None) == EXISTING_CLUSTER_REASON
    for stack in ("ack-gpu", "ack-cpu", "ask-eci"):
        assert preview_blocker(stack, None) is None
