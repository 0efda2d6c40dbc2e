"""The offline render (`python -m infra.render`), run for real: in-process, as the CLI, and
`--diff` in a throwaway git repository made from this project's files.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from infra import mock_deploy
from infra.config import ConfigError, load_stack, read_stack_entries, stack_file
from infra.manifests import build_objects
from infra.manifests.run_access import platform_objects
from infra.platform.cluster_facts import cluster_facts
from infra.render import cloud as render_cloud_module
from infra.render import render_stack
from infra.render.__main__ import main
from infra.render.cloud import render_cloud
from infra.render.style import title_of
from infra.render.unified import unified_diff
from infra.topology import build_topology
from tests.pulumi_mocks import FAKE_KUBECONFIG, PlausibleCloud, all_stacks

PROJECT = Path(__file__).resolve().parent.parent
STACKS = all_stacks()
PLAIN_KUBECONFIG = "apiVersion: v1\nkind: Config\nusers:\n- name: me\n  user: {token: hunter2}\n"


def render_cli(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The CLI in `cwd`, importing `infra` from `cwd` only (not from this checkout)."""
    return subprocess.run(
        [sys.executable, "-m", "infra.render", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(cwd), **env},
        capture_output=True,
        text=True,
        encoding="utf-8",
    )


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=test", "-c", "user.email=test@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


# --- determinism and faithfulness -----------------------------------------------------------


def test_renders_in_separate_processes_are_byte_identical() -> None:
    """Two renders in one process (nothing a run leaves behind changes the next), and renders
    in fresh processes with different hash seeds (nothing may depend on set or dict iteration
    order). One process per seed renders every stack (a process per stack would only repeat
    the imports)."""
    expected = {stack: render_stack(stack) for stack in STACKS}
    assert {stack: render_stack(stack) for stack in STACKS} == expected
    script = (
        "import json, sys; from infra.render import render_stack; "
        "json.dump({s: render_stack(s) for s in sys.argv[1:]}, sys.stdout)"
    )
    seeds = ("1", "2")
    with ThreadPoolExecutor(max_workers=len(seeds)) as pool:
        done = list(
            pool.map(
                lambda seed: subprocess.run(
                    [sys.executable, "-c", script, *STACKS],
                    cwd=PROJECT,
                    env={**os.environ, "PYTHONPATH": str(PROJECT), "PYTHONHASHSEED": seed},
                    capture_output=True,
                    text=True,
                    encoding="utf-8",
                ),
                seeds,
            )
        )
    for seed, process in zip(seeds, done, strict=True):
        assert process.returncode == 0, process.stderr
        rendered = json.loads(process.stdout)
        for stack in STACKS:
            assert rendered[stack] == expected[stack], f"{stack} differs with PYTHONHASHSEED={seed}"


@pytest.mark.parametrize("stack", STACKS)
def test_kubernetes_section_is_exactly_what_the_builders_make(stack: str) -> None:
    """The whole render is one valid YAML stream (the cloud summary is comments), and its
    documents are the program's own objects, placeholders included, in creation order."""
    config = load_stack(stack)
    documents = [doc for doc in yaml.safe_load_all(render_stack(stack)) if doc is not None]
    facts = cluster_facts(config)
    objects = build_objects(config, facts)
    if not config.has_run:  # a platform: what it issues its run namespaces, roles offline
        roles = {ns: "<oss-rrsa-role-name>" for ns in config.cluster.run_namespaces}
        objects = platform_objects(config, facts, roles if config.uses_oss else {})
    assert documents == objects


def test_every_object_has_a_title_and_every_env_var_one_line() -> None:
    text = render_stack("ack-gpu", only="kubernetes")
    config = load_stack("ack-gpu")
    lines = text.splitlines()
    titles = [lines[i + 1] for i, line in enumerate(lines) if line == "---"]
    objects = build_objects(config, cluster_facts(config))
    assert titles[:2] == ["# Namespace tftrain", "# NetworkPolicy tftrain/mnist-default-deny"]
    assert "# Job tftrain/mnist-worker-0" in titles
    assert len(titles) == len(objects)
    assert "server: <nas-mount-target-domain>" in text  # the NAS domain, known after `up`
    topology = build_topology(config)
    for replica in topology.replicas:
        tf_config = topology.tf_config_json(replica)
        (line,) = [line for line in lines if tf_config in line]
        assert line.strip() == f"- {{name: TF_CONFIG, value: '{tf_config}'}}"


# --- the cloud summary -----------------------------------------------------------------------


def cloud_blocks(text: str) -> dict[str, dict[str, str]]:
    """`{"alicloud:...  name": {key: value}}` from the cloud section's comment lines."""
    blocks: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    for line in text.splitlines():
        if line == "---":
            break
        found = title_of(line)
        if found:
            current = blocks.setdefault(found, {})
        elif ": " in line:
            key, _, value = line.lstrip("# ").partition(": ")
            current[key] = value
    return blocks


def test_ack_gpu_summary_shows_the_gpu_pool_and_the_nas_rule() -> None:
    config = load_stack("ack-gpu")
    blocks = cloud_blocks(render_stack("ack-gpu", only="cloud"))
    gpu_pool = blocks["alicloud:cs/nodePool:NodePool  cluster-gpu-pool"]
    assert gpu_pool["taints"] == "[{effect: NoSchedule, key: nvidia.com/gpu, value: present}]"
    assert gpu_pool["labels"] == (
        "[{key: tftrain.io/accelerator, value: nvidia-gpu}, "
        "{key: ack.aliyun.com/nvidia-driver-version, value: 570.133.20}]"
    )
    assert gpu_pool["instanceTypes"] == "[ecs.gn6i-c4g1.xlarge]"
    # Autoscaled from zero: a range and the autoscaler, no fixed size to bill around the clock.
    assert "desiredSize" not in gpu_pool
    assert gpu_pool["scalingConfig"] == "{enable: true, maxSize: 2, minSize: 0, type: gpu}"
    autoscaler = blocks["alicloud:cs/autoscalingConfig:AutoscalingConfig  cluster-autoscaler"]
    assert autoscaler["scaleUpFromZero"] == "true"
    rule = blocks["alicloud:nas/accessRule:AccessRule  nas-access-rule"]
    assert rule["sourceCidrIp"] == config.network.vswitch_cidr
    assert blocks["alicloud:nas/fileSystem:FileSystem  nas-fs"]["encryptType"] == "1"
    assert blocks["alicloud:vpc/snatEntry:SnatEntry  network-snat"]["snatIp"] == "<computed>"
    assert blocks["alicloud:nas/mountTarget:MountTarget  nas-mount-target"] == {
        "accessGroupName": "tftrain-ack-gpu-nas",
        "fileSystemId": "<nas-fs.id>",
        "networkType": "Vpc",
        "vpcId": "<network-vpc.id>",
        "vswitchId": "<network-vswitch.id>",
    }
    assert blocks["Provider config"] == {"alicloud:region": "cn-hangzhou"}
    # Replaced only with the cluster (clusterIdentifier), whatever happens to the credential.
    assert blocks["pulumi:providers:kubernetes  k8s"] == {
        "clusterIdentifier": "<cluster-ack.id>",
        "kubeconfig": "<secret>",
    }
    # The engine never diffs an input in ignore_changes: the render says which ones.
    cluster = blocks["alicloud:cs/managedKubernetes:ManagedKubernetes  cluster-ack"]
    assert cluster["(option) ignoreChanges"] == "[slbInternetEnabled]"


def test_no_secret_reaches_the_summary_even_when_the_cloud_hands_one_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The render's harness turned into a mock *deployment* (by the test, from outside) whose
    cluster credential is a real kubeconfig: still redacted."""
    deploying = functools.partial(mock_deploy.run_program, answers=PlausibleCloud())
    monkeypatch.setattr(render_cloud_module.mock_deploy, "run_program", deploying)
    text = render_cloud("ack-gpu", stack_file("ack-gpu"), load_stack("ack-gpu"))
    assert "kubeconfig: <secret>" in text
    for secret_line in FAKE_KUBECONFIG.splitlines():
        assert secret_line.strip() not in text


def test_a_plaintext_kubeconfig_is_refused_by_key_and_not_echoed(tmp_path: Path) -> None:
    document = {"config": read_stack_entries(stack_file("dev"))}
    document["config"]["tftrain:kubeconfig"] = PLAIN_KUBECONFIG
    (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump(document))
    with pytest.raises(ConfigError) as refused:
        render_stack("dev", tmp_path, only="cloud")
    assert "tftrain:kubeconfig: must be a Pulumi secret" in str(refused.value)
    assert "hunter2" not in str(refused.value)


def test_existing_cluster_summary_says_no_cloud_resources_and_hides_the_kubeconfig(
    tmp_path: Path,
) -> None:
    document = {"config": read_stack_entries(stack_file("dev"))}
    document["config"]["tftrain:kubeconfig"] = {"secure": "v1:c2VjcmV0LWNpcGhlcg=="}
    (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump(document))
    text = render_stack("dev", tmp_path, only="cloud")
    assert "# No cloud resources: cluster.kind is existing" in text
    assert cloud_blocks(text)["pulumi:providers:kubernetes  k8s"] == {
        "clusterIdentifier": "existing/default",
        "kubeconfig": "<secret>",
    }
    assert "hunter2" not in text and "c2VjcmV0" not in text
    assert "alicloud:" not in text


def test_existing_cluster_without_a_kubeconfig_says_which_one_is_used() -> None:
    provider = cloud_blocks(render_stack("dev", only="cloud"))["pulumi:providers:kubernetes  k8s"]
    assert provider == {
        "clusterIdentifier": "existing/default",
        "kubeconfig": "not set: the ambient ~/.kube/config or KUBECONFIG",
    }


# --- errors ------------------------------------------------------------------------------------


def test_bad_config_exits_2_with_the_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = {"config": read_stack_entries(stack_file("dev"))}
    document["config"]["tftrain:worker"] = {"number": -1}
    (tmp_path / "Pulumi.bad.yaml").write_text(yaml.safe_dump(document))
    assert main(["bad", "--stacks-dir", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert "invalid stack config" in error and "tftrain:worker.number = -1" in error


def test_diff_against_an_unknown_revision_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dev", "--diff", "no-such-rev"]) == 2
    assert "unknown git revision 'no-such-rev'" in capsys.readouterr().err


def test_diff_outside_a_git_repository_exits_2(tmp_path: Path) -> None:
    for part in ("infra", "stacks"):
        shutil.copytree(PROJECT / part, tmp_path / part, ignore=shutil.ignore_patterns("__py*"))
    done = render_cli(tmp_path, "dev", "--diff", "HEAD", GIT_CEILING_DIRECTORIES=str(tmp_path))
    assert done.returncode == 2
    assert "needs a git repository" in done.stderr


def apply_patch(old: str, diff: list[str]) -> str:
    """`old` with a unified diff applied, checking every context and removed line."""
    source, result, at = old.splitlines(), [], 0
    for line in diff[2:]:
        hunk = re.match(r"@@ -(\d+)(?:,(\d+))? ", line)
        if hunk:
            start = int(hunk.group(1)) - (0 if hunk.group(2) == "0" else 1)
            result += source[at:start]
            at = start
        elif line[0] == "+":
            result.append(line[1:])
        else:
            assert source[at] == line[1:], f"line {at + 1}: {source[at]!r} != {line[1:]!r}"
            at += 1
            if line[0] == " ":
                result.append(line[1:])
    return "\n".join(result + source[at:]) + "\n"


@pytest.mark.parametrize(("old", "new"), [("dev", "ack-gpu"), ("ack-gpu", "ask-eci"), ("", "dev")])
def test_the_object_aware_diff_is_a_correct_unified_diff(old: str, new: str) -> None:
    """Between very different renders too (matched objects, added, removed, moved)."""
    old_text = render_stack(old) if old else ""
    new_text = render_stack(new)
    diff = unified_diff(old_text, new_text, "a", "b")
    assert diff[:2] == ["--- a", "+++ b"]
    assert apply_patch(old_text, diff) == new_text
    assert unified_diff(new_text, new_text, "a", "b") == []


# --- `--diff` in a throwaway repository --------------------------------------------------------


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This project's files (tracked, plus new ones not yet committed, such as the renderer
    itself; .venv is not among them) committed into a fresh repository."""
    try:
        top = Path(git(PROJECT, "rev-parse", "--show-toplevel").strip())
    except subprocess.CalledProcessError:
        top = None
    if top != PROJECT:
        # A copy inside another repository's ignored directory (a mutation run's), or no
        # repository at all: git lists none of its files, so there is no project to commit.
        pytest.skip(f"{PROJECT} is not a git checkout of its own")
    root = tmp_path_factory.mktemp("origin")
    listed = git(PROJECT, "ls-files", "--cached", "--others", "--exclude-standard", "-z")
    for name in filter(None, listed.split("\0")):
        if (PROJECT / name).is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(PROJECT / name, root / name)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


@pytest.fixture
def repo(origin: Path, tmp_path: Path) -> Path:
    """A private clone per test, so each can commit and edit freely."""
    clone = tmp_path / "repo"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    return clone


def edit_stack(repo: Path, stack: str, change: Callable[[dict[str, Any]], None]) -> None:
    path = stack_file(stack, repo / "stacks")
    document = {"config": read_stack_entries(path)}
    change(document["config"])
    path.write_text(yaml.safe_dump(document, sort_keys=False))


def diff_parts(repo: Path, stack: str) -> tuple[str, list[str]]:
    """What `--diff HEAD` opens with (the config change, consequences, cost and the folded
    run-id lines), and the diff lines after its `---`/`+++` header."""
    done = render_cli(repo, stack, "--diff", "HEAD")
    assert done.returncode == 0, done.stderr
    head, _, diff = done.stdout.partition(f"\n--- {stack}@HEAD\n")
    assert head.startswith("Config changes, HEAD → working-tree:\n")
    assert f"\n\nConsequences for {stack}, HEAD → working-tree:\n" in head
    lines = diff.splitlines()
    assert lines[0] == f"+++ {stack}@working-tree"
    return head, lines[1:]


def diff_head(repo: Path, stack: str) -> list[str]:
    """The diff lines of `--diff HEAD`, after what it opens with."""
    return diff_parts(repo, stack)[1]


# A deploy generation in a supervisor's argv: 12 hex digits (infra.lifecycle.deploy_generation).
GENERATION = re.compile(r"^- [0-9a-f]{12}$")


def changed(lines: list[str], sign: str) -> Counter[str]:
    """The removed (`-`) or added (`+`) lines, without the sign and indentation, leaving out
    the deploy generation (`generations`): it changes with every change to any Job."""
    stripped = (line[1:].strip() for line in lines if line.startswith(sign))
    return Counter(line for line in stripped if not GENERATION.match(line))


def generations(lines: list[str], sign: str) -> Counter[str]:
    stripped = (line[1:].strip() for line in lines if line.startswith(sign))
    return Counter(line for line in stripped if GENERATION.match(line))


def assert_one_new_generation(lines: list[str], replicas: int) -> None:
    """A changed Job is a new deploy generation, the same one for every replica's Job."""
    (old,), (new,) = generations(lines, "-"), generations(lines, "+")
    assert old != new
    assert generations(lines, "-")[old] == generations(lines, "+")[new] == replicas


def set_learning_rate(value: float) -> Callable[[dict[str, Any]], None]:
    return lambda config: config["tftrain:hyperparams"].update(learningRate=value)


def test_learning_rate_change_shows_the_env_values_and_the_new_run(repo: Path) -> None:
    old = load_stack("dev", repo / "stacks")
    edit_stack(repo, "dev", set_learning_rate(0.01))
    new = load_stack("dev", repo / "stacks")
    head, lines = diff_parts(repo, "dev")

    # The run id is derived from the hyperparameters (infra.config.settings_fingerprint): a new
    # learning rate is a new run, in a new directory under the logs root, so TensorBoard shows
    # it beside the old run instead of it resuming the old run's checkpoints. The id is
    # rewritten in every replica's Service (metadata and selector: 2 lines) and Job (metadata
    # and pod template labels, its output directory, the outcomes in it, the run its
    # supervisor ends with, the replica's work, logs and home directories: 8 lines), and in
    # the three run selectors of the training NetworkPolicy: folded to one line per kind, so
    # the diff shows the learning rate alone.
    assert old.job.run_id != new.job.run_id
    replicas = len(build_topology(old).replicas)
    assert "  hyperparams.learningRate: 0.003 → 0.01\n" in head
    assert head.endswith(
        f"Run id {old.job.run_id} → {new.job.run_id}, folded out of the diff below "
        "(labels, names, paths):\n"
        f"  Job: {replicas} objects, {8 * replicas} lines\n"
        "  NetworkPolicy: 1 object, 3 lines\n"
        f"  Service: {replicas} objects, {2 * replicas} lines"
    )
    rate = "- {{name: TFTRAIN_LEARNING_RATE, value: '{}'}}"
    assert changed(lines, "-") == Counter({rate.format(old.hyperparams.learning_rate): replicas})
    assert changed(lines, "+") == Counter({rate.format("0.01"): replicas})
    assert_one_new_generation(lines, replicas)
    # Hunks are labelled with the object they change.
    assert any(line.endswith(" @@ Job tftrain-dev/mnist-worker-0") for line in lines)


def test_learning_rate_change_with_a_fixed_run_id_changes_the_env_values_and_run_key(
    repo: Path,
) -> None:
    """The run id stays, so do the labels and the directory. The settings are new, so the
    supervisors' run key is too: a marker of the run before must not end this one."""
    edit_stack(repo, "dev", lambda config: config["tftrain:job"].update(runId="lr-sweep"))
    git(repo, "commit", "-q", "-am", "fix the run id")
    old = load_stack("dev", repo / "stacks")
    edit_stack(repo, "dev", set_learning_rate(0.01))
    new = load_stack("dev", repo / "stacks")
    lines = diff_head(repo, "dev")
    replicas = len(build_topology(old).replicas)
    rate = "- {{name: TFTRAIN_LEARNING_RATE, value: '{}'}}"
    # The key is the pinned id and 8 hex digits of the settings: one before, another after.
    removed, added = changed(lines, "-"), changed(lines, "+")
    [old_key] = [line for line in removed if re.fullmatch(r"- lr-sweep\.[0-9a-f]{8}", line)]
    [new_key] = [line for line in added if re.fullmatch(r"- lr-sweep\.[0-9a-f]{8}", line)]
    assert old_key != new_key
    assert removed == Counter(
        {rate.format(old.hyperparams.learning_rate): replicas, old_key: replicas}
    )
    assert added == Counter({rate.format("0.01"): replicas, new_key: replicas})
    assert new.job.run_id == "lr-sweep"
    assert_one_new_generation(lines, replicas)


def tf_configs(lines: list[str], sign: str) -> dict[tuple[str, int], dict[str, Any]]:
    """The TF_CONFIG on removed or added lines, by the task they belong to."""
    found = {}
    for line in changed(lines, sign):
        if line.startswith("- {name: TF_CONFIG,"):
            (var,) = yaml.safe_load(line)
            tf_config = json.loads(var["value"])
            found[(tf_config["task"]["type"], tf_config["task"]["index"])] = tf_config
    return found


def test_adding_a_worker_adds_one_service_and_one_job_and_changes_every_tf_config(
    repo: Path,
) -> None:
    old = load_stack("dev", repo / "stacks")
    edit_stack(repo, "dev", lambda config: config["tftrain:worker"].update(number=3))
    lines = diff_head(repo, "dev")

    assert changed(lines, "+")["# Service tftrain-dev/mnist-worker-2"] == 1
    assert changed(lines, "+")["# Job tftrain-dev/mnist-worker-2"] == 1
    # Nothing else is added or removed, and no cloud line changes (comments are titles only).
    assert [line for line in changed(lines, "-") if line.startswith("#")] == []
    assert [line for line in changed(lines, "+") if line.startswith("#")] == [
        "# Service tftrain-dev/mnist-worker-2",
        "# Job tftrain-dev/mnist-worker-2",
    ]
    existing = {(r.type, r.index) for r in build_topology(old).replicas}
    removed, added = tf_configs(lines, "-"), tf_configs(lines, "+")
    assert set(removed) == existing  # every existing Job's TF_CONFIG line changed...
    assert set(added) == existing | {("worker", 2)}
    for tf_config in added.values():  # ...to a cluster with the third worker in it
        assert tf_config["cluster"]["worker"][-1] == "mnist-worker-2.tftrain-dev.svc:2222"
        assert len(tf_config["cluster"]["worker"]) == 3


def test_a_stack_new_in_the_working_tree_is_all_added(repo: Path) -> None:
    shutil.copy(stack_file("dev", repo / "stacks"), stack_file("dev2", repo / "stacks"))
    done = render_cli(repo, "dev2", "--diff", "HEAD")
    assert done.returncode == 0, done.stderr
    assert "HEAD has no stack dev2" in done.stderr
    body = done.stdout.partition("\n--- dev2@HEAD\n")[2].splitlines()[2:]  # after +++, @@
    assert body and all(line.startswith("+") for line in body)


def test_a_revision_older_than_the_renderer_is_rendered_with_the_working_trees(
    repo: Path,
) -> None:
    """The base of the change that adds the renderer: its own builders and stacks, rendered
    by the working tree's renderer, so CI can diff that change too."""
    renderer = ["infra/render", "infra/mock_deploy.py"]
    git(repo, "rm", "-q", "-r", *renderer)
    git(repo, "commit", "-q", "-m", "before the renderer")
    git(repo, "checkout", "-q", "HEAD~1", "--", *renderer)
    done = render_cli(repo, "dev", "--diff", "HEAD")
    assert done.returncode == 0, done.stderr
    assert "HEAD predates infra/render" in done.stderr
    assert done.stdout.endswith(
        "\n\nNo changes: dev renders the same at HEAD and in the working tree.\n"
    )


def test_a_stack_that_uploads_its_data_is_unchanged_against_its_own_commit(repo: Path) -> None:
    """ack-gpu uploads trainer/data/mnist into the bucket it creates: the revision's side needs
    those files too, and where a checkout lives is no change (a path from Pulumi.yaml's `main`
    folder, where the engine starts the provider that opens it)."""
    done = render_cli(repo, "ack-gpu", "--diff", "HEAD")
    assert done.returncode == 0, done.stderr
    assert "Kubernetes objects: no change\nCloud resources: no change\n" in done.stdout
    rendered = render_cli(repo, "ack-gpu", "--only", "cloud")
    assert "#     source: ../trainer/data/mnist/SHA256SUMS\n" in rendered.stdout


def test_diff_opens_with_the_consequences_of_the_change(repo: Path) -> None:
    old = load_stack("dev", repo / "stacks")
    edit_stack(repo, "dev", set_learning_rate(0.01))
    new = load_stack("dev", repo / "stacks")
    done = render_cli(repo, "dev", "--diff", "HEAD")
    assert done.returncode == 0, done.stderr
    jobs = len(build_topology(new).replicas)
    assert done.stdout.startswith(
        "Config changes, HEAD → working-tree:\n"
        "  hyperparams.learningRate: 0.003 → 0.01\n"
        "\n"
        "Consequences for dev, HEAD → working-tree:\n"
        f"Run: {old.job.run_id} is stopped; {new.job.run_id} starts, in a directory of its own\n"
        # The training NetworkPolicy selects the run by its id: updated, not replaced.
        f"Kubernetes objects: update {jobs + 1} (NetworkPolicy 1, Service {jobs}); "
        f"replace {jobs} (Job {jobs})\n"
        "Cloud resources: no change\n"
        "GPUs requested: none\n"
        "New public endpoints: none\n"
        "Idle GPU pool: none\n"
        "\n"
        "Cost (Alibaba Cloud list prices, prices.csv of "
    )
    # An existing cluster's nodes are not the stack's: nothing priced, and said so.
    assert (
        "  per hour, kept running: 0 CNY + unpriced, unchanged\n"
        "  one run at most: unbounded (no job.activeDeadlineSeconds; 0 CNY + unpriced per hour), "
        "unchanged\n"
        "  unpriced: the existing cluster's nodes: not this stack's (it runs on a cluster it "
        "did not create)\n"
        "  unpriced: 3 replica groups on the existing cluster: the existing cluster's nodes are "
        "not this stack's\n"
    ) in done.stdout


@pytest.mark.slow  # renders every stack on both sides
def test_review_comment_carries_each_changed_stack_and_says_why_dev_is_not_previewed(
    repo: Path,
) -> None:
    edit_stack(repo, "dev", set_learning_rate(0.01))
    done = subprocess.run(
        [sys.executable, "-m", "infra.render.review", "comment", "--base", "HEAD"],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith("<!-- tftrain-stack-review -->\n")  # found again on each push
    assert text.count("### ") == 1 and "### dev\n" in text
    assert "Consequences for dev, HEAD → working-tree:" in text
    assert "  hyperparams.learningRate: 0.003 → 0.01\n" in text
    assert "`tftrain render <stack> --diff HEAD`" in text and "python -m" not in text
    assert "+        - {name: TFTRAIN_LEARNING_RATE, value: '0.01'}" in text
    assert (
        "`pulumi preview`: not run, cluster.kind is existing: CI holds no kubeconfig for that "
        "cluster, so `pulumi preview` cannot reach it; review the render above." in text
    )
    assert "Unchanged: ack-cpu, ack-gpu, ask-eci" in text


def test_bare_review_on_a_branch_names_the_change_against_where_it_left_main(
    repo: Path,
) -> None:
    """`tftrain review` with no arguments: the base is the merge-base with the default
    branch (no origin here: the local main), and the comment speaks the front door."""
    others = [
        p.name for p in (repo / "stacks").glob("Pulumi.*.yaml") if p.name != "Pulumi.dev.yaml"
    ]
    git(repo, "rm", "-q", *(f"stacks/{name}" for name in others))
    git(repo, "commit", "-q", "-m", "dev only")
    git(repo, "branch", "-M", "main")
    git(repo, "remote", "remove", "origin")
    base = git(repo, "rev-parse", "--short=12", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "lower-the-rate")
    edit_stack(repo, "dev", set_learning_rate(0.01))
    git(repo, "commit", "-q", "-am", "lower the learning rate")
    done = subprocess.run(
        [sys.executable, "-m", "infra.cli", "review"],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    assert done.returncode == 0, done.stderr
    assert f"## Stack review against `{base}`" in done.stdout
    assert f"`tftrain render <stack> --diff {base}`" in done.stdout
    assert (
        f"Config changes, {base} → working-tree:\n  hyperparams.learningRate: 0.003 → 0.01\n"
        in (done.stdout)
    )
    assert "python -m" not in done.stdout


def test_a_rotated_secret_says_what_the_engine_does_though_the_renders_agree(
    repo: Path,
) -> None:
    """Offline, a secret renders as a placeholder on both sides, so the consequences read "no
    change"; the config line says what `pulumi up` does: the Jobs that carry it in their env
    are replaced (4 in dev), and the run resumes (its id counts the secret by name only)."""
    edit_stack(repo, "dev", lambda c: c["tftrain:job"].update(env={"TOKEN": {"secure": "v1:A"}}))
    git(repo, "commit", "-q", "-am", "a secret")
    edit_stack(repo, "dev", lambda c: c["tftrain:job"].update(env={"TOKEN": {"secure": "v1:B"}}))
    done = render_cli(repo, "dev", "--diff", "HEAD")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "Config changes, HEAD → working-tree:\n"
        "  job.env.TOKEN: changed (secret): the engine replaces the 4 Jobs that carry it in "
        "their pod template; the run id counts a secret by its name only, so the run resumes "
        "from its checkpoints\n"
    )
    assert "Kubernetes objects: no change\n" in done.stdout
    assert "\nSecrets: the lines above compare renders that show every secret as <secret>" in (
        done.stdout
    )
    assert "v1:" not in done.stdout
