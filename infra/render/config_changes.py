"""The review's first lines: every config key the change touches, as the user wrote it.

Both revisions' stack files are read by the one stack-file reader (`infra.config.stack_file`), so a
value is what the engine would hand the program. Each changed leaf is one line, named as
`pulumi config set --path` takes it (`hyperparams.learningRate: 0.003 → 0.001`; the project's
namespace left out, others kept: `alicloud:region`). A list of values (a sweep parameter's)
says what it gained and lost. A secret is never shown: `changed (secret)`, with what the
engine will do with it, which the offline render cannot show (it holds `<secret>` on both
sides, so the rest of the review reads "no change").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from infra.config.stack_file import PROJECT, StackFile, key_path
from infra.config.types import is_secure
from infra.manifests.common import REPLICA_TYPE_LABEL
from infra.render.style import one_line

UNSET = "(unset)"
SECRET_CHANGED = "changed (secret)"
REPLICA_GROUPS = ("chief", "master", "worker", "ps", "evaluator")
# What the engine does when the secret under a key changes: the Kubernetes object that holds
# it is replaced (Secret data is replace-on-change in pulumi-kubernetes).
_SECRET_EFFECTS = {
    ("data", "accessKeyId"): "the engine replaces the Secret the OSS volumes name; pods running "
    "keep volumes mounted with the old key until they restart",
    ("data", "accessKeySecret"): "the engine replaces the Secret the OSS volumes name; pods "
    "running keep volumes mounted with the old key until they restart",
    ("imageRegistry", "password"): "the engine replaces the image pull Secret; images are "
    "pulled with the new password from the next pod start",
    ("kubeconfig",): "the engine updates the Kubernetes provider; objects are replaced only if "
    "it now points at another cluster",
}


def _leaves(value: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(path, value) of every leaf; a secret and a list of plain values are leaves."""
    if isinstance(value, dict) and value and not is_secure(value):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    else:
        yield path, value


def flatten(stack: StackFile | None) -> dict[tuple[Any, ...], Any]:
    """{(namespace:name, part, ...): value} of every leaf of a stack file's config."""
    if stack is None:
        return {}
    return {
        path: value
        for key, entry in stack.entries.items()
        for path, value in _leaves(entry, (key,))
    }


def display_key(path: tuple[Any, ...]) -> str:
    namespace, _, name = path[0].partition(":")
    text = key_path((name, *path[1:]), namespace)
    return text.removeprefix(f"{PROJECT}:")


def _shown(value: Any) -> str:
    return UNSET if value is _MISSING else one_line(value)


_MISSING = object()


def _values(sign: str, values: list[Any]) -> str:
    return (
        f"{sign}{len(values)} value{'s' * (len(values) != 1)} ({', '.join(map(one_line, values))})"
    )


def _list_change(old: list[Any], new: list[Any]) -> str:
    added = [v for v in new if v not in old]
    removed = [v for v in old if v not in new]
    parts = [_values("+", added)] if added else []
    parts += [_values("-", removed)] if removed else []
    return ", ".join(parts) or f"reordered: {one_line(old)} → {one_line(new)}"


def secret_effect(path: tuple[Any, ...], jobs: dict[str, int]) -> str:
    """What the engine does with a changed secret at `path` (`jobs`: Job count by group)."""
    parts = (path[0].removeprefix(f"{PROJECT}:"), *path[1:])
    if parts[:2] in _SECRET_EFFECTS or parts[:1] in _SECRET_EFFECTS:
        return _SECRET_EFFECTS.get(parts[:2]) or _SECRET_EFFECTS[parts[:1]]
    in_env = len(parts) >= 2 and parts[1] == "env"
    if in_env and parts[0] in ("job", *REPLICA_GROUPS):
        count = sum(jobs.values()) if parts[0] == "job" else jobs.get(parts[0], 0)
        jobs_text = (
            "1 Job that carries it in its" if count == 1 else f"{count} Jobs that carry it in their"
        )
        return (
            f"the engine replaces the {jobs_text} pod template; the run id counts a secret by "
            "its name only, so the run resumes from its checkpoints"
        )
    return "the engine passes the new value to whatever reads the key"


def jobs_by_group(objects: dict[str, dict[str, Any]]) -> dict[str, int]:
    """How many Jobs each replica group has in a parsed render."""
    counts: dict[str, int] = {}
    for obj in objects.values():
        if obj.get("kind") == "Job":
            group = obj["metadata"].get("labels", {}).get(REPLICA_TYPE_LABEL, "")
            counts[group] = counts.get(group, 0) + 1
    return counts


def change_lines(old: StackFile | None, new: StackFile | None, jobs: dict[str, int]) -> list[str]:
    """One line per changed key, in key order; empty when no key changed."""
    before, after = flatten(old), flatten(new)
    lines = []
    for path in sorted(before.keys() | after.keys(), key=lambda p: [str(part) for part in p]):
        was, now = before.get(path, _MISSING), after.get(path, _MISSING)
        if was == now:
            continue
        name = display_key(path)
        if is_secure(was) or is_secure(now):
            lines.append(f"  {name}: {SECRET_CHANGED}: {secret_effect(path, jobs)}")
        elif isinstance(was, list) and isinstance(now, list):
            lines.append(f"  {name}: {_list_change(was, now)}")
        else:
            lines.append(f"  {name}: {_shown(was)} → {_shown(now)}")
    return lines


def config_section(
    old: StackFile | None, new: StackFile | None, jobs: dict[str, int], names: tuple[str, str]
) -> list[str]:
    lines = change_lines(old, new, jobs)
    header = f"Config changes, {names[0]} → {names[1]}:"
    return [header, *lines] if lines else [f"{header} none (the stack file's values are the same)"]
