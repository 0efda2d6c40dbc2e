"""What `up` does to each object and resource (infra/render/actions.py), on renders built here.

Expected actions follow the providers' rules, not the code: the Terraform provider marks a
vSwitch's `cidr_block` and a NAS mount target's `vswitch_id` ForceNew
(resource_alicloud_vswitch.go, resource_alicloud_nas_mount_target.go), so changing them
replaces the resource, and an input holding a replaced resource's id changes with it;
`description` is updatable; an input in ignoreChanges is never diffed by the engine."""

from __future__ import annotations

from infra.render.actions import (
    actions_of,
    cloud_changes,
    cloud_replace_lines,
    cloud_update_note,
    counts,
    kubernetes_action_after,
    moved_run_lines,
    platform_lines,
)
from infra.render.kubernetes import PLATFORM_NOTE
from infra.render.parsed import CloudResource, Render

SWITCH = "alicloud:vpc/switch:Switch  net-vswitch"
MOUNT = "alicloud:nas/mountTarget:MountTarget  nas-mount"
RULE = "alicloud:nas/accessRule:AccessRule  nas-rule"
ALARM = "alicloud:ess/alarm:Alarm  alarm"  # a type with no schema table: the SDK's docs only
ACK = "alicloud:cs/managedKubernetes:ManagedKubernetes"
NAS = "alicloud:nas/fileSystem:FileSystem"
MOUNT_TYPE = "alicloud:nas/mountTarget:MountTarget"


def _cloud(cidr: str = "10.0.0.0/24", description: str = "a", **extra: str) -> dict:
    return {
        SWITCH: CloudResource({"cidrBlock": cidr, "description": description, **extra}),
        MOUNT: CloudResource({"vswitchId": "<net-vswitch.id>", "fileSystemId": "<fs.id>"}),
        RULE: CloudResource({"sourceCidrIp": cidr}),
    }


def test_an_updatable_input_is_an_update_and_nothing_else_moves() -> None:
    changes = cloud_changes(_cloud(), _cloud(description="b"))
    assert {t: c.action for t, c in changes.items()} == {SWITCH: "update"}
    assert changes[SWITCH].replacing == ()


def test_a_force_new_input_replaces_and_the_replace_reaches_what_holds_its_id() -> None:
    changes = cloud_changes(_cloud(), _cloud(cidr="10.0.1.0/24"))
    assert {t: c.action for t, c in changes.items()} == {
        SWITCH: "replace",
        MOUNT: "replace",  # its vswitchId is the new vSwitch's id
        RULE: "update",  # the CIDR it admits changed; sourceCidrIp updates in place
    }
    assert (changes[SWITCH].replacing, changes[SWITCH].referring) == (("cidrBlock",), ("",))
    assert (changes[MOUNT].replacing, changes[MOUNT].referring) == (
        ("vswitchId",),
        ("net-vswitch",),
    )
    assert cloud_replace_lines(changes) == [
        "  nas-mount: the provider replaces it on a change of vswitchId (new id of net-vswitch); "
        "a new NFS server name: the PersistentVolume that mounts it is replaced",
        "  net-vswitch: the provider replaces it on a change of cidrBlock",
    ]


def test_an_ignored_input_is_no_change() -> None:
    old, new = _cloud(), _cloud(cidr="10.0.1.0/24")
    new[SWITCH].ignore_changes = frozenset({"cidrBlock"})
    new[RULE].ignore_changes = frozenset({"sourceCidrIp"})
    assert cloud_changes(old, new) == {}
    # The new side's option counts: ignored before, diffed now.
    old[SWITCH].ignore_changes = frozenset({"cidrBlock"})
    assert cloud_changes(old, _cloud(cidr="10.0.1.0/24"))[SWITCH].action == "replace"


def test_an_input_added_or_removed_is_a_change() -> None:
    assert cloud_changes(_cloud(), _cloud(tags="{a: b}"))[SWITCH].action == "update"
    assert cloud_changes(_cloud(tags="{a: b}"), _cloud())[SWITCH].action == "update"


def test_updates_of_a_type_without_a_schema_table_carry_the_caveat() -> None:
    old = {ALARM: CloudResource({"name": "a"}), SWITCH: CloudResource({"description": "a"})}
    new = {ALARM: CloudResource({"name": "b"}), SWITCH: CloudResource({"description": "b"})}
    changes = cloud_changes(old, new)
    updated = actions_of(old, new, lambda title: changes[title].action)["update"]
    assert updated == {ALARM: "Alarm", SWITCH: "Switch"}
    [note] = cloud_update_note(updated)
    assert note.startswith("  (updates of Alarm: no provider schema recorded for their type;")
    assert cloud_update_note({SWITCH: "Switch"}) == []
    two = {ALARM: "Alarm", "alicloud:log/project:Project  logs": "Project", SWITCH: "Switch"}
    [note] = cloud_update_note(two)
    assert note.startswith("  (updates of Alarm, Project: no provider schema recorded")


def test_a_force_new_input_removed_replaces_and_names_no_resource() -> None:
    new = _cloud()
    del new[SWITCH].inputs["cidrBlock"]
    changes = cloud_changes(_cloud(), new)
    assert changes[SWITCH].action == "replace"
    assert (changes[SWITCH].replacing, changes[SWITCH].referring) == (("cidrBlock",), ("",))


def test_an_input_holding_two_replaced_ids_names_both() -> None:
    other = "alicloud:vpc/switch:Switch  net-vswitch-b"

    def cloud(cidr: str) -> dict:
        return {
            SWITCH: CloudResource({"cidrBlock": cidr}),
            other: CloudResource({"cidrBlock": cidr.replace("10.0", "10.1")}),
            MOUNT: CloudResource({"vswitchId": "<net-vswitch.id> <net-vswitch-b.id>"}),
        }

    changes = cloud_changes(cloud("10.0.0.0/24"), cloud("10.0.2.0/24"))
    assert changes[MOUNT].referring == ("net-vswitch, net-vswitch-b",)


def test_actions_and_counts() -> None:
    old = {"Job t/a": 1, "Job t/b": 1, "Service t/a": 1, "Job t/c": 1}
    new = {"Job t/a": 2, "Job t/b": 1, "Service t/a": 2, "Job t/d": 1, "Service t/d": 1}
    actions = actions_of(old, new, lambda title: "update" if old[title] != new[title] else None)
    assert actions == {
        "create": {"Job t/d": "Job", "Service t/d": "Service"},
        "update": {"Job t/a": "Job", "Service t/a": "Service"},
        "replace": {},
        "delete": {"Job t/c": "Job"},
    }
    assert counts(actions) == (
        "create 2 (Job 1, Service 1); update 2 (Job 1, Service 1); delete 1 (Job 1)"
    )
    assert counts(actions_of(old, old, lambda title: None)) == "no change"


def _pv(driver: str) -> dict:
    return {
        "kind": "PersistentVolume",
        "metadata": {"name": "v"},
        "spec": {"csi": {"driver": driver}},
    }


def _renders(platform: tuple[str, str] = ("", "")) -> tuple[Render, Render]:
    objects = {
        "PersistentVolume v": _pv("nasplugin.csi.alibabacloud.com"),
        "PersistentVolume o": _pv("ossplugin.csi.alibabacloud.com"),
        "Service t/s": {"kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": []}},
    }
    return (
        Render(objects=objects, cloud={}, platform=platform[0]),
        Render(objects=objects, cloud={}, platform=platform[1]),
    )


def test_what_a_replaced_cloud_resource_does_to_the_kubernetes_objects() -> None:
    old, new = _renders()
    titles = ("PersistentVolume v", "PersistentVolume o", "Service t/s")

    def acts(replaced: set[str], renders: tuple[Render, Render] = (old, new)) -> list:
        return [kubernetes_action_after(*renders, title, replaced) for title in titles]

    assert acts(set()) == [None, None, None]
    assert acts({ACK}) == ["replace", "replace", "replace"]  # a new cluster: all anew
    assert acts({MOUNT_TYPE}) == ["replace", None, None]  # the NAS volume's server
    assert acts({NAS}) == [None, None, None]
    assert acts(set(), _renders(("p1", "p2"))) == ["replace", "replace", "replace"]


def test_a_platform_change_says_what_it_does_to_its_run_stacks() -> None:
    platform = f"# ===== Kubernetes objects =====\n{PLATFORM_NOTE}\n"
    assert platform_lines("# ===== Kubernetes objects =====\n---\n", {ACK}) == []
    assert platform_lines(platform, set()) == ["Run stacks on this platform: untouched"]
    [line] = platform_lines(platform, {ACK, NAS})
    assert line.startswith("Run stacks on this platform: every one is stopped with the old cluster")
    assert "; every run's checkpoints and event files stay on the old file system" in line


def test_a_run_stack_moved_to_another_platform() -> None:
    assert moved_run_lines(*_renders(("p1", "p1"))) == []
    assert moved_run_lines(*_renders(("", "p1"))) == []
    assert moved_run_lines(*_renders(("p1", ""))) == []
    [line] = moved_run_lines(*_renders(("p1", "p2")))
    assert line.startswith("Platform: p1 → p2: another cluster (its id is the provider's ")
