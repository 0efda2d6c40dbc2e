"""The cloud section's layout as infra/render/cloud.py's docstring states it: a tree
(component, then its resources beneath it), each level in name order, one input per line in
key order, the lookups after; secrets never in the text; and what it says where a stack
creates no cloud resource."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from infra.config import read_stack_entries, stack_file
from infra.render import render_stack
from infra.render.cloud import offline_config
from infra.render.style import title_of

SECRET = "<secret>"


def _depth(line: str) -> int:
    return (len(line) - len(line.lstrip("# ")) - 1) // 2 if line.startswith("#") else -1


@pytest.fixture
def ack_gpu() -> list[str]:
    # Per test, not per module: mutmut maps a mutant to the tests that reach it, and a cached
    # render would reach only the first.
    return render_stack("ack-gpu", only="cloud").splitlines()


def test_top_level_entries_are_components_by_name_then_resources_then_lookups(
    ack_gpu: list[str],
) -> None:
    tops = [title_of(line) for line in ack_gpu if title_of(line) and _depth(line) == 0]
    assert tops.pop(0) == "Provider config"
    components = [t for t in tops if t.startswith("tftrain:")]
    lookups = [t for t in tops if t.endswith("  (lookup)")]
    rest = [t for t in tops if t not in components and t not in lookups]
    assert tops == components + rest + lookups
    assert [c.split("  ")[1] for c in components] == sorted(c.split("  ")[1] for c in components)
    assert {"cluster", "data", "nas", "network"} <= {c.split("  ")[1] for c in components}
    assert rest == ["pulumi:providers:kubernetes  k8s"]
    assert lookups == sorted(lookups)
    # Each top-level entry opens after a lone `#`.
    for i, line in enumerate(ack_gpu):
        if title_of(line) and _depth(line) == 0:
            assert ack_gpu[i - 1] == "#", line


def test_a_components_resources_are_beneath_it_by_name(ack_gpu: list[str]) -> None:
    start = ack_gpu.index("# tftrain:cloud:AckCluster  cluster")
    end = ack_gpu.index("#", start)
    children = [
        title_of(line) for line in ack_gpu[start:end] if _depth(line) == 1 and title_of(line)
    ]
    assert children == [
        "alicloud:cs/managedKubernetes:ManagedKubernetes  cluster-ack",
        "alicloud:cs/autoscalingConfig:AutoscalingConfig  cluster-autoscaler",
        "alicloud:cs/nodePool:NodePool  cluster-cpu-pool",
        "alicloud:cs/nodePool:NodePool  cluster-gpu-pool",
    ]


def test_inputs_are_one_a_line_in_key_order_with_ignore_changes_last(ack_gpu: list[str]) -> None:
    start = ack_gpu.index("#   alicloud:cs/managedKubernetes:ManagedKubernetes  cluster-ack")
    block = []
    for line in ack_gpu[start + 1 :]:
        if _depth(line) != 2:
            break
        block.append(line.strip("# ").split(": ", 1)[0])
    assert block[-1] == "(option) ignoreChanges"
    assert block[:-1] == sorted(block[:-1])
    assert "slbInternetEnabled" in block and "vswitchIds" in block


def test_the_render_opens_with_its_banner_and_the_provider_config(ack_gpu: list[str]) -> None:
    assert ack_gpu[2:8] == [
        "# ===== Cloud resources: the Pulumi program run as an offline preview =====",
        "# <name.id>: the id the cloud assigns to resource `name`; <computed>: known once created",
        "# or looked up at deploy time; <secret>: a secret, never shown.",
        "#",
        "# Provider config",
        "#   alicloud:region: cn-hangzhou",
    ]


def test_offline_config_replaces_every_secret(tmp_path: Path) -> None:
    entries = {
        "alicloud:region": "cn-hangzhou",
        "tftrain:kubeconfig": "apiVersion: v1",  # secret even when written in plain text
        "tftrain:imageRegistry": {"server": "r.example.com", "password": {"secure": "v1:AA"}},
        "tftrain:token": {"secure": "v1:BB"},
        "tftrain:notSecret": {"secure": "v1:CC", "other": 1},
    }
    path = tmp_path / "Pulumi.s.yaml"
    path.write_text(yaml.safe_dump({"config": entries}))
    config, keys = offline_config(path)
    assert keys == ["tftrain:kubeconfig", "tftrain:token"]
    assert config == {**entries, "tftrain:kubeconfig": SECRET, "tftrain:token": SECRET}


def test_an_existing_cluster_at_the_latest_version_is_told_what_it_needs(tmp_path: Path) -> None:
    text = render_stack("dev", only="cloud")
    assert "# No cloud resources: cluster.kind is existing, so `pulumi up` creates\n" in text
    assert "# Its Kubernetes must be 1.26 or newer, or it drops the Jobs' podFailurePolicy" in text
    document = {"config": read_stack_entries(stack_file("dev"))}
    document["config"]["tftrain:cluster"]["kubernetesVersion"] = "1.31.1-aliyun.1"
    (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump(document))
    pinned = render_stack("dev", tmp_path, only="cloud")
    assert "# No cloud resources: cluster.kind is existing" in pinned
    assert "1.26 or newer" not in pinned


def test_a_run_stack_names_its_platform_and_creates_no_cloud_resource() -> None:
    text = render_stack("run-ack", only="cloud")
    assert (
        "#\n"
        "# No cloud resources: a run stack (cluster.role run) creates only Kubernetes objects,\n"
        "# on the cluster of platform stack organization/tftrain/platform-ack, whose outputs\n"
        "# it reads at deploy time (offline: <platform output NAME> placeholders).\n"
    ) in text
    assert "cluster.kind is" not in text
    assert "clusterIdentifier: <platform output clusterId>" in text
