"""Where the stack-review workflow lets cloud and Pulumi credentials reach.

A pull request's own code runs in the workflow (`pip install -r requirements.txt`, the Pulumi
program): a credential set for a whole job or workflow is readable by it. Credentials must be
secrets of an environment (GitHub: "Using environments for deployment"; required reviewers
make a person approve the job before it starts) and reach one step each, never a job's or the
workflow's env, and never a fork's pull request.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

WORKFLOWS = Path(__file__).resolve().parents[1] / ".github" / "workflows"
SECRET = re.compile(r"\$\{\{\s*secrets\.")


def workflow(name: str) -> dict[str, Any]:
    # YAML 1.1 reads the `on:` key as True; only the jobs matter here.
    return yaml.safe_load((WORKFLOWS / name).read_text())


def test_credentials_reach_only_approved_steps_of_the_preview_job() -> None:
    flow = workflow("stack-review.yml")
    assert not SECRET.search(str(flow.get("env", {}))), "workflow-level env"
    steps_with_secrets = []
    for name, job in flow["jobs"].items():
        assert not SECRET.search(str(job.get("env", {}))), f"job {name}: job-level env"
        for step in job["steps"]:
            if SECRET.search(str(step)):
                steps_with_secrets.append((name, step["name"]))
                assert job.get("environment") == "stack-preview", name
                # A fork's pull request never runs the job holding them.
                assert "head.repo.full_name == github.repository" in job["if"], name
                # Only read from the step's env, so `run` never interpolates them.
                assert not SECRET.search(str(step.get("run", ""))), step["name"]
    assert steps_with_secrets == [
        ("preview", "pulumi preview --diff for every stack CI can preview")
    ]


def test_the_render_runs_with_no_credential() -> None:
    review = workflow("stack-review.yml")["jobs"]["review"]
    assert "environment" not in review
    assert not SECRET.search(str(review))
    assert review["permissions"] == {"contents": "read", "pull-requests": "write"}


def test_no_workflow_runs_a_pull_requests_code_with_the_base_repositorys_rights() -> None:
    for path in WORKFLOWS.glob("*.yml"):
        triggers = yaml.safe_load(path.read_text())[True]
        assert "pull_request_target" not in triggers, path.name
