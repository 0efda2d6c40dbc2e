"""A render as the summary reads it (infra/render/parsed.py), on a render written here in the
layout infra/render/cloud.py and kubernetes.py document."""

from __future__ import annotations

from infra.render.parsed import (
    CloudResource,
    kind_of_title,
    name_of_title,
    parse_render,
    training_jobs,
    type_of_title,
    value_at,
)

RENDER = """\
# Stack s, rendered offline by `python -m infra.render`: nothing deployed.
#
# ===== Cloud resources: the Pulumi program run as an offline preview =====
# <name.id>: the id the cloud assigns to resource `name`
#
# Provider config
#   alicloud:region: cn-hangzhou
#
# tftrain:cloud:Network  network
#   alicloud:vpc/network:Network  network-vpc
#     cidrBlock: 192.168.0.0/16
#     (option) ignoreChanges: [tags, description]
#   alicloud:vpc/switch:Switch  network-vswitch
#     vpcId: <network-vpc.id>
#     note: a: b
#
# pulumi:pulumi:StackReference  platform
#   name: organization/tftrain/platform-ack
#
# pulumi:providers:kubernetes  k8s
#   kubeconfig: <secret>
#
# alicloud:cs/getClusters:getClusters  (lookup)
#   nameRegex: ^x$
# ===== Sweep: each trial is a run of its own =====
# sweep method: grid
#
# ===== Kubernetes objects: the program's own builders =====
---
# Namespace t
apiVersion: v1
kind: Namespace
metadata:
  name: t
---
# Job t/mnist-worker-0
apiVersion: batch/v1
kind: Job
metadata:
  name: mnist-worker-0
  namespace: t
spec:
  suspend: false
"""


def test_the_cloud_side_is_its_resources_with_their_inputs() -> None:
    render = parse_render(RENDER)
    assert render.cloud == {
        "alicloud:vpc/network:Network  network-vpc": CloudResource(
            {"cidrBlock": "192.168.0.0/16"}, frozenset({"tags", "description"})
        ),
        "alicloud:vpc/switch:Switch  network-vswitch": CloudResource(
            {"vpcId": "<network-vpc.id>", "note": "a: b"}
        ),
        "pulumi:providers:kubernetes  k8s": CloudResource({"kubeconfig": "<secret>"}),
    }
    # A run stack's platform is its StackReference's name.
    assert render.platform == "organization/tftrain/platform-ack"


def test_the_kubernetes_side_is_its_objects_by_title() -> None:
    render = parse_render(RENDER)
    assert list(render.objects) == ["Namespace t", "Job t/mnist-worker-0"]
    assert render.objects["Job t/mnist-worker-0"]["spec"] == {"suspend": False}
    assert list(training_jobs(render)) == ["Job t/mnist-worker-0"]


def test_a_stack_that_does_not_exist_renders_as_nothing() -> None:
    render = parse_render("")
    assert (render.objects, render.cloud, render.platform) == ({}, {}, "")


def test_a_render_without_a_platform_has_none() -> None:
    text = RENDER.replace("# pulumi:pulumi:StackReference  platform\n", "").replace(
        "#   name: organization/tftrain/platform-ack\n", ""
    )
    assert parse_render(text).platform == ""


def test_a_banner_ends_the_resource_before_it() -> None:
    # The sweep banner's lines are no inputs of the lookup or resource before them.
    text = RENDER.replace(
        "# alicloud:cs/getClusters:getClusters  (lookup)\n#   nameRegex: ^x$\n", ""
    )
    cloud = parse_render(text).cloud
    assert cloud["pulumi:providers:kubernetes  k8s"].inputs == {"kubeconfig": "<secret>"}


def test_value_at_walks_mappings_and_answers_none_off_the_path() -> None:
    obj = {"spec": {"template": {"spec": {"x": 1}}, "list": [1]}}
    assert value_at(obj, "spec.template.spec.x") == 1
    assert value_at(obj, "spec.template") == {"spec": {"x": 1}}
    assert value_at(obj, "spec.missing.x") is None
    assert value_at(obj, "spec.list.0") is None
    assert value_at(None, "spec") is None


def test_the_parts_of_a_title() -> None:
    cloud = "alicloud:nas/fileSystem:FileSystem  nas-fs"
    assert type_of_title(cloud) == "alicloud:nas/fileSystem:FileSystem"
    assert kind_of_title(cloud) == "FileSystem"
    assert name_of_title(cloud) == "nas-fs"
    assert kind_of_title("Job tftrain/mnist-worker-0") == "Job"
    assert kind_of_title("Namespace tftrain") == "Namespace"
    assert kind_of_title("pulumi:providers:kubernetes  k8s") == "Provider kubernetes"
    assert kind_of_title("pulumi:providers:alicloud  default") == "Provider alicloud"
