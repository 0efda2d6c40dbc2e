"""The run-id fold of `--diff` (infra/render/relabel.py) on small renders written by hand: the
old id read as the new one, and one line per kind counting the objects and lines it was in."""

from __future__ import annotations

from infra.render.relabel import fold_run_id

BANNER = "# ===== Kubernetes objects ====="


def _job(name: str, run: str) -> str:
    return (
        f"---\n# Job t/{name}\napiVersion: batch/v1\nkind: Job\nmetadata:\n"
        f"  labels:\n    tftrain.io/run-id: {run}\n  name: {name}\n  namespace: t\n"
        f"spec:\n  template:\n    spec:\n      containers:\n      - args: [--run, {run}]\n"
    )


def _service(name: str, run: str) -> str:
    return (
        f"---\n# Service t/{name}\napiVersion: v1\nkind: Service\nmetadata:\n"
        f"  name: {name}\n  namespace: t\nspec:\n  selector: {{tftrain.io/run-id: {run}}}\n"
    )


def _cloud(run: str) -> str:
    # A cloud resource that names the run (a bucket object under the run's prefix).
    return (
        "# ===== Cloud resources =====\n#\n"
        "# alicloud:oss/bucketObject:BucketObject  marker\n"
        f"#   key: runs/{run}/marker\n#   bucket: b\n"
    )


def _render(run: str, *, cloud: bool = False, jobs: int = 2) -> str:
    # A line naming the run before any title belongs to no object: not counted.
    parts = [f"# Stack s, run {run}\n"]
    parts += [_cloud(run)] if cloud else []
    parts += [f"{BANNER}\n"]
    parts += [_job(f"mnist-worker-{i}", run) for i in range(jobs)]
    parts += [_service("mnist-worker-0", run)]
    return "".join(parts)


def test_a_new_run_id_is_folded_out_with_a_line_per_kind() -> None:
    old, new = _render("mnist-aaa", cloud=True), _render("mnist-bbb", cloud=True)
    folded, lines = fold_run_id(old, new)
    assert folded == new
    assert lines == [
        "Run id mnist-aaa → mnist-bbb, folded out of the diff below (labels, names, paths):",
        "  BucketObject: 1 object, 1 line",
        "  Job: 2 objects, 4 lines",
        "  Service: 1 object, 1 line",
    ]


def test_what_else_changed_stays_in_the_folded_text() -> None:
    old = _render("mnist-aaa", jobs=1)
    new = _render("mnist-bbb", jobs=2)
    folded, lines = fold_run_id(old, new)
    assert folded == _render("mnist-bbb", jobs=1)
    assert lines[1:] == ["  Job: 1 object, 2 lines", "  Service: 1 object, 1 line"]


def test_nothing_is_folded_without_exactly_one_different_run_on_each_side() -> None:
    same = _render("mnist-aaa")
    assert fold_run_id(same, same) == (same, [])
    # A stack new or deleted: no run on one side.
    assert fold_run_id("", same) == ("", [])
    assert fold_run_id(same, "") == (same, [])
    # A sweep: trials are created and removed by id, which is the change itself.
    sweep = _render("trial-a") + _job("trial-b-worker-0", "trial-b")
    assert fold_run_id(sweep, same) == (sweep, [])
    assert fold_run_id(same, sweep) == (same, [])
