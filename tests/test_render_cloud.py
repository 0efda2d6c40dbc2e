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
    assert (
        "#\n"
        "# No cloud resources: cluster.kind is existing, so `pulumi up` creates\n"
        "# nothing on Alibaba Cloud and deploys into the cluster of this kubeconfig:\n"
        "#\n"
        "# pulumi:providers:kubernetes  k8s\n"
    ) in text
    assert text.endswith(
        "#\n"
        "# Its Kubernetes must be 1.26 or newer, or it drops the Jobs' podFailurePolicy\n"
        "# and retries exit 2 like any failure. Set cluster.kubernetesVersion to the\n"
        "# version it runs to have that checked.\n"
    )
    document = {"config": read_stack_entries(stack_file("dev"))}
    document["config"]["tftrain:cluster"]["kubernetesVersion"] = "1.31.1-aliyun.1"
    (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump(document))
    pinned = render_stack("dev", tmp_path, only="cloud")
    assert "# No cloud resources: cluster.kind is existing" in pinned
    assert "1.26 or newer" not in pinned


def test_a_run_stack_names_its_platform_and_creates_no_cloud_resource() -> None:
    text = render_stack("run-ack", only="cloud")
    assert text.endswith(
        "# ===== Cloud resources: the Pulumi program run as an offline preview =====\n"
        "# <name.id>: the id the cloud assigns to resource `name`; <computed>: known once created\n"
        "# or looked up at deploy time; <secret>: a secret, never shown.\n"
        "#\n"
        "# No cloud resources: a run stack (cluster.role run) creates only Kubernetes objects,\n"
        "# on the cluster of platform stack organization/tftrain/platform-ack, whose outputs\n"
        "# it reads at deploy time (offline: <platform output NAME> placeholders).\n"
        "#\n"
        "# pulumi:pulumi:StackReference  platform\n"
        "#   name: organization/tftrain/platform-ack\n"
        "#\n"
        "# pulumi:providers:kubernetes  k8s\n"
        "#   clusterIdentifier: <platform output clusterId>\n"
        # The namespace's kubeconfig the platform issued: a secret output of that stack.
        "#   kubeconfig: <secret>\n"
    )


def test_each_lookup_shows_its_arguments_beneath_it(ack_gpu: list[str]) -> None:
    # One lookup per pool's instance type (stacks/Pulumi.ack-gpu.yaml), in the order of the
    # arguments, each argument one line deeper.
    start = ack_gpu.index("# alicloud:ecs/getInstanceTypes:getInstanceTypes  (lookup)")
    assert ack_gpu[start - 1 : start + 5] == [
        "#",
        "# alicloud:ecs/getInstanceTypes:getInstanceTypes  (lookup)",
        "#   instanceType: ecs.g7.xlarge",
        "#",
        "# alicloud:ecs/getInstanceTypes:getInstanceTypes  (lookup)",
        "#   instanceType: ecs.gn6i-c4g1.xlarge",
    ]
    assert ack_gpu[-3:] == [
        "#",
        "# alicloud:ram/getRoles:getRoles  (lookup)",
        "#   nameRegex: ^AliyunCSManagedAutoScalerRole$",
    ]


def test_lookups_of_one_kind_are_in_the_order_of_their_arguments(tmp_path: Path) -> None:
    """Not the order the program asked in: a pool's types listed the other way round render
    the same review."""
    document = {"config": read_stack_entries(stack_file("ack-gpu"))}
    pool = document["config"]["tftrain:cluster"]["gpuPool"]
    pool["instanceTypes"] = ["ecs.gn6v-c8g1.2xlarge", "ecs.gn6i-c4g1.xlarge"]
    (tmp_path / "Pulumi.ack-gpu.yaml").write_text(yaml.safe_dump(document))
    lines = render_stack("ack-gpu", tmp_path, only="cloud").splitlines()
    asked = [line for line in lines if line.startswith("#   instanceType: ")]
    assert asked == [
        "#   instanceType: ecs.g7.xlarge",
        "#   instanceType: ecs.gn6i-c4g1.xlarge",
        "#   instanceType: ecs.gn6v-c8g1.2xlarge",
    ]
