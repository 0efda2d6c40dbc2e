"""`render_stack`: the header, the sections `--only` asks for in the order the docs give
(cloud, then Kubernetes), and a sweep the cluster cannot run refused as the program refuses it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from infra.config import ConfigError, stack_file
from infra.render import render_stack

HEADER = "# Stack dev, rendered offline by `python -m infra.render`: nothing deployed.\n"
CLOUD = "# ===== Cloud resources"
KUBERNETES = "# ===== Kubernetes objects"


def test_only_kubernetes_is_the_header_and_the_objects() -> None:
    text = render_stack("dev", only="kubernetes")
    assert text.startswith(HEADER + "#\n" + KUBERNETES)
    assert CLOUD not in text
    kinds = {doc["kind"] for doc in yaml.safe_load_all(text) if doc}
    assert {"Job", "Service", "NetworkPolicy"} <= kinds


def test_only_cloud_is_the_header_and_the_cloud_section() -> None:
    text = render_stack("dev", only="cloud")
    assert text.startswith(HEADER + "#\n" + CLOUD)
    assert KUBERNETES not in text
    assert [doc for doc in yaml.safe_load_all(text) if doc] == []  # comments only


def test_both_sections_cloud_first_each_after_a_lone_hash_line() -> None:
    text = render_stack("dev")
    lines = text.splitlines()
    cloud = next(i for i, line in enumerate(lines) if line.startswith(CLOUD))
    kubernetes = next(i for i, line in enumerate(lines) if line.startswith(KUBERNETES))
    assert lines[0] + "\n" == HEADER
    assert 0 < cloud < kubernetes
    assert lines[cloud - 1] == "#" and lines[kubernetes - 1] == "#"
    assert render_stack("dev", only=None) == text


def test_a_sweep_the_cluster_cannot_run_is_refused_before_anything_is_rendered(
    tmp_path: Path,
) -> None:
    # An existing cluster holds nothing back, so two trials one at a time would both start.
    stack = yaml.safe_load(stack_file("dev-sweep").read_text())
    stack["config"]["tftrain:sweep"]["parallel"] = 1
    (tmp_path / "Pulumi.narrow.yaml").write_text(yaml.safe_dump(stack))
    with pytest.raises(ConfigError, match=r"tftrain:sweep\.parallel = 1: must be 2"):
        render_stack("narrow", tmp_path, only="kubernetes")
    stack["config"]["tftrain:sweep"]["parallel"] = 2
    (tmp_path / "Pulumi.narrow.yaml").write_text(yaml.safe_dump(stack))
    assert "# Stack narrow, rendered offline" in render_stack("narrow", tmp_path, "kubernetes")


def test_a_platform_stacks_kubernetes_section_says_where_the_run_objects_are() -> None:
    text = render_stack("platform-ack", only="kubernetes")
    assert (
        "# None: a platform stack (cluster.role platform) has no run; its run stacks\n"
        "# hold the run's objects; it issues each of cluster.runNamespaces these.\n---\n"
    ) in text
    assert "kind: Job\n" not in text
