"""The review's first lines: every changed key as the user wrote it, old → new.

Each expectation is written out here from the two stack files, not taken from the code."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.config.stack_file import StackFile, read_stack
from infra.render.config_changes import change_lines, config_section, jobs_by_group, secret_effect

BEFORE = """\
config:
  alicloud:region: cn-hangzhou
  tftrain:worker:
    number: 2
    env:
      TOKEN:
        secure: v1:AAAA
  tftrain:job:
    env:
      API_KEY:
        secure: v1:BBBB
  tftrain:hyperparams:
    learningRate: 0.003
  tftrain:imageRegistry:
    password:
      secure: v1:CCCC
  tftrain:sweep:
    parameters:
      hyperparams.batchSize:
        values: [64, 128]
"""


def stack(tmp_path: Path, text: str, name: str = "a") -> StackFile:
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(text)
    return read_stack(path)


def after(tmp_path: Path, *edits: tuple[str, str]) -> StackFile:
    text = BEFORE
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    return stack(tmp_path, text, "b")


def test_a_value_change_is_its_key_as_typed_with_old_and_new(tmp_path: Path) -> None:
    new = after(
        tmp_path, ("learningRate: 0.003", "learningRate: 0.001"), ("number: 2", "number: 4")
    )
    assert change_lines(stack(tmp_path, BEFORE), new, {}) == [
        "  hyperparams.learningRate: 0.003 → 0.001",
        "  worker.number: 2 → 4",
    ]


def test_a_sweep_values_list_says_what_it_gained_and_lost(tmp_path: Path) -> None:
    new = after(tmp_path, ("values: [64, 128]", "values: [64, 128, 256]"))
    assert change_lines(stack(tmp_path, BEFORE), new, {}) == [
        '  sweep.parameters["hyperparams.batchSize"].values: +1 value (256)'
    ]
    fewer = after(tmp_path, ("values: [64, 128]", "values: [32, 128]"))
    assert change_lines(stack(tmp_path, BEFORE), fewer, {}) == [
        '  sweep.parameters["hyperparams.batchSize"].values: +1 value (32), -1 value (64)'
    ]


def test_a_key_added_or_removed_reads_unset_and_other_namespaces_keep_theirs(
    tmp_path: Path,
) -> None:
    new = after(
        tmp_path,
        ("alicloud:region: cn-hangzhou", "alicloud:region: cn-shanghai"),
        ("    learningRate: 0.003\n", "    epochs: 3\n"),
    )
    assert change_lines(stack(tmp_path, BEFORE), new, {}) == [
        "  alicloud:region: cn-hangzhou → cn-shanghai",
        "  hyperparams.epochs: (unset) → 3",
        "  hyperparams.learningRate: 0.003 → (unset)",
    ]


def test_a_rotated_secret_is_never_shown_and_says_what_the_engine_does(tmp_path: Path) -> None:
    new = after(
        tmp_path,
        ("secure: v1:AAAA", "secure: v1:AAAB"),
        ("secure: v1:BBBB", "secure: v1:BBBC"),
        ("secure: v1:CCCC", "secure: v1:CCCD"),
    )
    jobs = {"chief": 1, "worker": 2, "ps": 1}
    replaces = "changed (secret): the engine replaces the"
    resumes = (
        "in their pod template; the run id counts a secret by its name only, so the run resumes "
        "from its checkpoints"
    )
    # job.env reaches every Job (4); worker.env only the workers' (2).
    assert change_lines(stack(tmp_path, BEFORE), new, jobs) == [
        "  imageRegistry.password: changed (secret): the engine replaces the image pull Secret; "
        "images are pulled with the new password from the next pod start",
        f"  job.env.API_KEY: {replaces} 4 Jobs that carry it {resumes}",
        f"  worker.env.TOKEN: {replaces} 2 Jobs that carry it {resumes}",
    ]


@pytest.mark.parametrize(
    ("path", "effect"),
    [
        (("tftrain:data", "accessKeyId"), "the engine replaces the Secret the OSS volumes name; "
         "pods running keep volumes mounted with the old key until they restart"),
        (("tftrain:data", "accessKeySecret"), "the engine replaces the Secret the OSS volumes "
         "name; pods running keep volumes mounted with the old key until they restart"),
        (("tftrain:kubeconfig",), "the engine updates the Kubernetes provider; objects are "
         "replaced only if it now points at another cluster"),
        # One Job: no plural; a group without Jobs: 0.
        (("tftrain:chief", "env", "T"), "the engine replaces the 1 Job that carries it in its "
         "pod template; the run id counts a secret by its name only, so the run resumes from "
         "its checkpoints"),
        (("tftrain:evaluator", "env", "T"), "the engine replaces the 0 Jobs that carry it in "
         "their pod template; the run id counts a secret by its name only, so the run resumes "
         "from its checkpoints"),
        # Another key's secret, or an env that is not a replica group's.
        (("alicloud:secretKey",), "the engine passes the new value to whatever reads the key"),
        (("tftrain:tensorboard", "env", "T"), "the engine passes the new value to whatever "
         "reads the key"),
        (("tftrain:env",), "the engine passes the new value to whatever reads the key"),
    ],
)  # fmt: skip
def test_each_secret_says_what_the_engine_does_with_it(path: tuple, effect: str) -> None:
    assert secret_effect(path, {"chief": 1, "worker": 2}) == effect


def test_jobs_are_counted_by_their_replica_group_label() -> None:
    def job(group: str) -> dict:
        return {
            "kind": "Job",
            "metadata": {"labels": {"tftrain.io/replica-type": group}},
        }

    objects = {
        "a": job("worker"),
        "b": job("worker"),
        "c": job("chief"),
        "d": {"kind": "Service", "metadata": {"labels": {}}},
        "e": {"kind": "Job", "metadata": {}},
    }
    assert jobs_by_group(objects) == {"worker": 2, "chief": 1, "": 1}


def test_a_list_says_one_value_or_several_and_a_reorder_shows_both(tmp_path: Path) -> None:
    more = after(tmp_path, ("values: [64, 128]", "values: [64, 128, 256, 512]"))
    assert change_lines(stack(tmp_path, BEFORE), more, {}) == [
        '  sweep.parameters["hyperparams.batchSize"].values: +2 values (256, 512)'
    ]
    fewer = after(tmp_path, ("values: [64, 128]", "values: [128]"))
    assert change_lines(stack(tmp_path, BEFORE), fewer, {}) == [
        '  sweep.parameters["hyperparams.batchSize"].values: -1 value (64)'
    ]
    swapped = after(tmp_path, ("values: [64, 128]", "values: [128, 64]"))
    assert change_lines(stack(tmp_path, BEFORE), swapped, {}) == [
        '  sweep.parameters["hyperparams.batchSize"].values: reordered: [64, 128] → [128, 64]'
    ]


def test_no_change_says_so_and_a_new_stack_lists_every_key(tmp_path: Path) -> None:
    old = stack(tmp_path, BEFORE)
    assert config_section(old, old, {}, ("HEAD", "working-tree")) == [
        "Config changes, HEAD → working-tree: none (the stack file's values are the same)"
    ]
    added = config_section(None, old, {}, ("HEAD", "working-tree"))
    assert added[1] == "  alicloud:region: (unset) → cn-hangzhou"
    assert "  hyperparams.learningRate: (unset) → 0.003" in added


def test_a_secret_added_removed_or_made_plain_is_never_shown(tmp_path: Path) -> None:
    """Either side a secret: the line says so, never its ciphertext nor the plain value."""
    effect = (
        "changed (secret): the engine replaces the 2 Jobs that carry it in their pod template; "
        "the run id counts a secret by its name only, so the run resumes from its checkpoints"
    )
    plain = after(tmp_path, ("      TOKEN:\n        secure: v1:AAAA\n", "      TOKEN: abc\n"))
    added = after(
        tmp_path, ("      TOKEN:\n", "      NEW:\n        secure: v1:DDDD\n      TOKEN:\n")
    )
    removed = after(tmp_path, ("      TOKEN:\n        secure: v1:AAAA\n", "      OTHER: x\n"))
    jobs = {"worker": 2}
    assert change_lines(stack(tmp_path, BEFORE), plain, jobs) == [f"  worker.env.TOKEN: {effect}"]
    assert change_lines(stack(tmp_path, BEFORE), added, jobs) == [f"  worker.env.NEW: {effect}"]
    assert change_lines(stack(tmp_path, BEFORE), removed, jobs) == [
        "  worker.env.OTHER: (unset) → x",
        f"  worker.env.TOKEN: {effect}",
    ]
