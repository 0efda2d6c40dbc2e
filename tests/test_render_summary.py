"""The consequences summary `--diff` opens with: golden cases (tests/goldens.py, reviewed by
hand), its rules one by one, and the pull request comment that carries it."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest

from infra.manifests.image_cache import KIND as IMAGE_CACHE_KIND
from infra.render.actions import cloud_changes, kubernetes_action
from infra.render.cloud import IGNORE_CHANGES
from infra.render.parsed import parse_render
from infra.render.provider_sdk import force_new_arguments, replacing_arguments, says_force_new
from infra.render.review import preview_blocker
from infra.render.style import attribute, one_line, title
from infra.render.summary import summarize
from tests.goldens import CASES, Case, summary_of

REGENERATE = "regenerate with `.venv/bin/python -m tests.goldens` and review the change"


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_summary_matches_its_golden(case: Case) -> None:
    assert case.golden.is_file(), f"{case.golden} missing: {REGENERATE}"
    expected = case.golden.read_text(encoding="utf-8")
    assert summary_of(case) == expected, f"{case.name}: summary changed; {REGENERATE}"


def test_summary_is_deterministic() -> None:
    case = next(case for case in CASES if case.name == "worker-added")
    assert summary_of(case) == summary_of(case)


def test_goldens_are_exactly_the_cases() -> None:
    on_disk = {path.name for path in CASES[0].golden.parent.glob("*.txt")}
    assert on_disk == {case.golden.name for case in CASES}


def _job(template_env: str, backoff: int = 3) -> dict:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "n"},
        "spec": {
            "backoffLimit": backoff,
            "template": {"spec": {"containers": [{"name": "c", "env": [template_env]}]}},
        },
    }


def test_a_job_template_change_is_a_replace_and_other_job_fields_an_update() -> None:
    assert kubernetes_action(_job("a"), _job("b")) == "replace"
    assert kubernetes_action(_job("a"), _job("a", backoff=4)) == "update"
    assert kubernetes_action(_job("a"), _job("a")) is None


def test_the_program_s_image_cache_rule_makes_a_new_image_list_a_replace() -> None:
    old = {"kind": IMAGE_CACHE_KIND, "metadata": {"name": "c"}, "spec": {"images": ["a"]}}
    new = copy.deepcopy(old)
    new["spec"]["images"].append("b")
    assert kubernetes_action(old, new) == "replace"
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"x": "y"}
    assert kubernetes_action(old, new) == "update"


def test_a_stack_that_appears_is_all_creates_and_starts_its_run() -> None:
    new = Path(__file__).resolve().parent.parent / "stacks"
    from infra.render import render_stack

    text = render_stack("dev", new)
    summary = summarize("", text, "dev", "before", "after")
    jobs = sum(1 for obj in parse_render(text).objects.values() if obj["kind"] == "Job")
    assert f"Job {jobs}" in summary.splitlines()[2]
    assert summary.splitlines()[2].startswith("Kubernetes objects: create ")
    assert "starts (no run before)" in summary.splitlines()[1]


def test_dev_cannot_preview_in_ci_and_cloud_stacks_can() -> None:
    assert preview_blocker("dev", None) == (
        "cluster.kind is existing: CI holds no kubeconfig for that cluster, so `pulumi preview` "
        "cannot reach it; review the render above"
    )
    for stack in ("ack-gpu", "ack-cpu", "ask-eci"):
        assert preview_blocker(stack, None) is None


# --- Cloud resources: replace or update, by the provider schema table and the SDK's docs -----
# The program's own resource types carry no force-new mark in the SDK's docstrings (their
# replaces come from the table), so the SDK rules use types that do and have no table entry:
# ess Alarm (`scaling_group_id`) and kms Instance (`zone_ids`).
ALARM = "alicloud:ess/alarm:Alarm"
KMS = "alicloud:kms/instance:Instance"
VSWITCH = "alicloud:vpc/switch:Switch"
MOUNT_TARGET = "alicloud:nas/mountTarget:MountTarget"


def test_force_new_arguments_are_read_off_the_installed_sdk() -> None:
    assert "scaling_group_id" in force_new_arguments(ALARM)
    assert "zone_ids" in force_new_arguments(KMS)
    # "The ForceNew attribute has be removed": no longer replaces.
    assert "duration" not in force_new_arguments("alicloud:ga/bandwidthPackage:BandwidthPackage")
    # "will not force a replacement", and the rest of the NAS file system says nothing.
    assert force_new_arguments("alicloud:nas/fileSystem:FileSystem") == frozenset()
    assert force_new_arguments("pulumi:providers:kubernetes") == frozenset()


def test_reading_the_sdk_first_leaves_its_packages_whole() -> None:
    """In a fresh process (as a test worker is), reading a resource's SDK source before any
    program run must not leave its package without the resource's class."""
    probe = (
        "from infra.render.provider_sdk import sdk_source; "
        "sdk_source('alicloud:nas/fileSystem:FileSystem'); "
        "from pulumi_alicloud import nas; print(hasattr(nas, 'FileSystem'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.strip() == "True", done.stderr


def test_replacing_arguments_are_the_schema_table_s_and_the_sdk_s() -> None:
    assert "storage_type" in replacing_arguments("alicloud:nas/fileSystem:FileSystem")
    assert "zone_ids" in replacing_arguments(KMS)
    assert replacing_arguments("pulumi:providers:kubernetes") == frozenset()


def test_says_force_new_reads_each_sentence_and_its_negation() -> None:
    assert says_force_new("The zone. Changing this parameter will create a new resource.")
    assert says_force_new("(Optional, ForceNew) The image type.")
    assert not says_force_new("A change here is suppressed and will not force a replacement.")
    assert not says_force_new("The subscription duration. The ForceNew attribute has been removed.")


def _cloud(*resources: tuple[str, str, dict[str, str], tuple[str, ...]]) -> str:
    """A render's cloud section holding `resources` (type, name, inputs, ignore_changes)."""
    lines = ["# ===== Cloud resources ====="]
    for token, name, inputs, ignored in resources:
        lines += ["#", title(f"{token}  {name}", 1)]
        lines += [attribute(key, value, 2) for key, value in sorted(inputs.items())]
        if ignored:
            lines.append(attribute(IGNORE_CHANGES, one_line(list(ignored)), 2))
    return "\n".join(lines) + "\n"


def _cloud_summary(old: str, new: str) -> list[str]:
    lines = summarize(old, new, "s", "before", "after").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Cloud resources:"))
    end = next(i for i, line in enumerate(lines) if line.startswith("GPUs requested"))
    return lines[start:end]


def test_a_changed_force_new_input_is_a_replace_and_says_which() -> None:
    old = _cloud((KMS, "kms", {"zoneIds": "[a, b]", "instanceName": "k"}, ()))
    new = _cloud((KMS, "kms", {"zoneIds": "[a, c]", "instanceName": "k"}, ()))
    assert _cloud_summary(old, new) == [
        "Cloud resources: replace 1 (Instance 1)",
        "  kms: the provider replaces it on a change of zoneIds",
    ]


def test_a_changed_input_not_marked_force_new_is_an_update_with_its_caveat() -> None:
    old = _cloud((KMS, "kms", {"zoneIds": "[a, b]", "instanceName": "k"}, ()))
    new = _cloud((KMS, "kms", {"zoneIds": "[a, b]", "instanceName": "k2"}, ()))
    summary = _cloud_summary(old, new)
    assert summary[0] == "Cloud resources: update 1 (Instance 1)"
    assert "`pulumi preview` has the last word" in summary[1]
    assert len(summary) == 2


def test_an_input_in_ignore_changes_is_no_change_at_all() -> None:
    def kms(zones: str, ignored: tuple[str, ...]) -> str:
        return _cloud((KMS, "kms", {"zoneIds": zones}, ignored))

    assert _cloud_summary(kms("[a]", ("zoneIds",)), kms("[b]", ("zoneIds",))) == [
        "Cloud resources: no change"
    ]
    # The new program's option is the one the engine applies (REV's render may predate it).
    assert _cloud_summary(kms("[a]", ()), kms("[b]", ("zoneIds",))) == [
        "Cloud resources: no change"
    ]
    assert _cloud_summary(kms("[a]", ("zoneIds",)), kms("[b]", ()))[0].startswith(
        "Cloud resources: replace 1"
    )


def test_a_replaced_resource_s_new_id_changes_what_refers_to_it() -> None:
    def alarms(kms_zones: str) -> str:
        return _cloud(
            (KMS, "kms", {"zoneIds": kms_zones}, ()),
            (ALARM, "by-group", {"scalingGroupId": "<kms.id>"}, ()),  # force-new: replaced
            (ALARM, "by-name", {"name": "<kms.id>", "scalingGroupId": "g"}, ()),  # updated
            (ALARM, "unrelated", {"scalingGroupId": "g"}, ()),
        )

    changes = cloud_changes(parse_render(alarms("[a]")).cloud, parse_render(alarms("[b]")).cloud)
    assert {title.split("  ")[1]: change.action for title, change in changes.items()} == {
        "kms": "replace",
        "by-group": "replace",
        "by-name": "update",
    }
    assert changes[f"{ALARM}  by-group"].replacing == ("scalingGroupId",)
    assert changes[f"{ALARM}  by-group"].referring == ("kms",)
    assert changes["alicloud:kms/instance:Instance  kms"].referring == ("",)


def _network(cidr: str, description: str = "d") -> str:
    switch = {"cidrBlock": cidr, "description": description, "zoneId": "z"}
    target = {"vswitchId": "<vsw.id>", "fileSystemId": "f"}
    return _cloud((VSWITCH, "vsw", switch, ()), (MOUNT_TARGET, "mt", target, ()))


def test_a_schema_table_field_is_a_replace_and_its_dependents_say_why() -> None:
    """The SDK documents neither as force-new; the provider schema (the table) does."""
    assert _cloud_summary(_network("10.0.0.0/20"), _network("10.0.16.0/20")) == [
        "Cloud resources: replace 2 (MountTarget 1, Switch 1)",
        "  mt: the provider replaces it on a change of vswitchId (new id of vsw); "
        "a new NFS server name: the PersistentVolume that mounts it is replaced",
        "  vsw: the provider replaces it on a change of cidrBlock",
    ]


def test_an_update_of_a_type_in_the_table_carries_no_caveat() -> None:
    assert _cloud_summary(_network("10.0.0.0/20"), _network("10.0.0.0/20", "new")) == [
        "Cloud resources: update 1 (Switch 1)"
    ]


# --- Public endpoints, stated on their own (the goldens show them in context) ------------


def _case(name: str) -> Case:
    return next(case for case in CASES if case.name == name)


def test_a_public_ask_api_server_is_a_new_public_endpoint() -> None:
    # ASK's API server goes public through the cluster's endpointPublicAccessEnabled argument.
    lines = summary_of(_case("ask-public-api-server")).splitlines()
    assert (
        "New public endpoints: alicloud:cs/serverlessKubernetes:ServerlessKubernetes  cluster-ask"
    ) in lines


def test_a_public_tensorboard_counts_its_load_balancer_and_nothing_else() -> None:
    lines = summary_of(_case("tensorboard-public")).splitlines()
    [endpoints] = [line for line in lines if line.startswith("New public endpoints:")]
    assert endpoints == "New public endpoints: Service tftrain/mnist-tensorboard"


def test_several_new_public_endpoints_are_listed_sorted_by_title() -> None:
    # An internet API server (ACK's slbInternetEnabled) and an elastic IP, both new.
    api = ("alicloud:cs/managedKubernetes:ManagedKubernetes", "cluster", {}, ())
    public_api = (api[0], api[1], {"slbInternetEnabled": "true"}, ())
    eip = ("alicloud:ecs/eipAddress:EipAddress", "nat-eip", {}, ())
    lines = summarize(_cloud(api), _cloud(public_api, eip), "s", "a", "b").splitlines()
    assert (
        "New public endpoints: alicloud:cs/managedKubernetes:ManagedKubernetes  cluster, "
        "alicloud:ecs/eipAddress:EipAddress  nat-eip"
    ) in lines
