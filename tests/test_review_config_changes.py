"""The review's first lines: every changed key as the user wrote it, old → new.

Each expectation is written out here from the two stack files, not taken from the code."""

from __future__ import annotations

from pathlib import Path

from infra.config.stack_file import StackFile, read_stack
from infra.render.config_changes import change_lines, config_section

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
    lines = change_lines(stack(tmp_path, BEFORE), new, jobs)
    assert all("v1:" not in line for line in lines)
    assert lines[0].startswith("  imageRegistry.password: changed (secret): the engine replaces")
    # job.env reaches every Job (4); worker.env only the workers' (2).
    assert lines[1].startswith(
        "  job.env.API_KEY: changed (secret): the engine replaces the 4 Jobs that carry it"
    )
    assert lines[2].startswith(
        "  worker.env.TOKEN: changed (secret): the engine replaces the 2 Jobs that carry it"
    )
    assert "resumes from its checkpoints" in lines[2]


def test_no_change_says_so_and_a_new_stack_lists_every_key(tmp_path: Path) -> None:
    old = stack(tmp_path, BEFORE)
    assert config_section(old, old, {}, ("HEAD", "working-tree")) == [
        "Config changes, HEAD → working-tree: none (the stack file's values are the same)"
    ]
    added = config_section(None, old, {}, ("HEAD", "working-tree"))
    assert added[1] == "  alicloud:region: (unset) → cn-hangzhou"
    assert "  hyperparams.learningRate: (unset) → 0.003" in added
