"""`up`, `destroy`, `up` again: what a destroy keeps is adopted, not created anew.

Expected values come from the providers' sources and hand-worked names, not from the code:
- the provider's bucket create refuses a name that exists (terraform-provider-alicloud
  resource_alicloud_oss_bucket.go: IsBucketExist, then "The specified bucket name ... is not
  available"), so a kept bucket must be imported; its import id is the bucket name (SDK
  `oss/bucket.py`, "## Import": `pulumi import alicloud:oss/bucket:Bucket bucket <name>`);
- `force_destroy` "Defaults to false" (SDK `oss/bucket.py`), and DeleteBucket refuses a bucket
  that still holds objects, versions or delete markers (BucketNotEmpty);
- a NAS file system's import id is its id (SDK `nas/file_system.py`, "## Import");
- the engine's import option on a resource the stack already holds with the same id is no
  change (pulumi/pulumi developer-docs/architecture/import.md, case 2).
The ack-gpu stack's bucket is `tftrain-ack-gpu-<account>` and its file system's description
names `tftrain-ack-gpu-nas` (project-stack-component).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pulumi
import pytest

from infra.render import render_stack
from infra.render.summary import summarize
from tests.pulumi_mocks import (
    EXISTING_VPC_CIDR,
    EXISTING_VSWITCH_ZONE,
    MOCK_ACCOUNT_ID,
    PlausibleCloud,
    all_stacks,
    run_program,
    stack_raw,
)

PROJECT = Path(__file__).resolve().parent.parent
BUCKET = "alicloud:oss/bucket:Bucket"
FILE_SYSTEM = "alicloud:nas/fileSystem:FileSystem"
ACK_GPU_BUCKET = f"tftrain-ack-gpu-{MOCK_ACCOUNT_ID}"
ACK_GPU_NAS_DESCRIPTION = "tftrain data, checkpoints and logs of tftrain-ack-gpu-nas"


def kept_file_system(fs_id: str, **overrides: Any) -> dict[str, Any]:
    """A file system as nas.get_file_systems lists it, as ack-gpu's destroy left it."""
    return {
        "id": fs_id,
        "description": ACK_GPU_NAS_DESCRIPTION,
        "fileSystemType": "standard",
        "storageType": "Performance",
        "protocolType": "NFS",
        "zoneId": "cn-hangzhou-i",
        **overrides,
    }


# --- the bucket -----------------------------------------------------------------------------


def test_a_first_up_creates_the_bucket() -> None:
    (bucket,) = run_program("ack-gpu").of_type(BUCKET)
    assert bucket.inputs["bucket"] == ACK_GPU_BUCKET
    assert bucket.import_id == ""


def test_up_after_destroy_adopts_the_kept_bucket_by_its_name() -> None:
    run = run_program("ack-gpu", cloud=PlausibleCloud(kept_buckets=(ACK_GPU_BUCKET,)))
    (bucket,) = run.of_type(BUCKET)
    assert bucket.import_id == ACK_GPU_BUCKET
    # Kept again by the next destroy, as before; its data is uploaded over, never deleted.
    assert "forceDestroy" not in bucket.inputs


def test_another_stacks_bucket_is_not_adopted() -> None:
    other = f"tftrain-ack-cpu-{MOCK_ACCOUNT_ID}"
    run = run_program("ack-gpu", cloud=PlausibleCloud(kept_buckets=(other,)))
    (bucket,) = run.of_type(BUCKET)
    assert bucket.import_id == ""


def test_a_bucket_not_kept_is_destroyed_with_its_versions() -> None:
    raw = stack_raw("ack-gpu", {"data": {"retainOnDestroy": False}})
    (bucket,) = run_program(raw).of_type(BUCKET)
    assert bucket.inputs["forceDestroy"] is True


def test_the_review_of_a_new_bucket_says_up_adopts_a_kept_one() -> None:
    summary = summarize("", render_stack("ack-gpu"), "ack-gpu", "HEAD", "working-tree")
    assert (
        "Kept bucket: `up` looks up oss://tftrain-ack-gpu-<account-id> first and adopts it "
        "(import), with its data, when an earlier destroy kept it; otherwise creates it\n"
    ) in summary
    assert "Kept file system: `up` looks up this stack's NAS file system first" in summary


def test_a_review_without_a_new_bucket_says_nothing_of_adoption() -> None:
    text = render_stack("ack-gpu")
    assert "Kept bucket" not in summarize(text, text, "ack-gpu", "HEAD", "working-tree")


# --- the NAS file system ----------------------------------------------------------------------


def test_up_after_destroy_adopts_the_kept_file_system_with_its_checkpoints() -> None:
    cloud = PlausibleCloud(kept_file_systems=(kept_file_system("0a1b2c3d4e"),))
    run = run_program("ack-gpu", cloud=cloud)
    (file_system,) = run.of_type(FILE_SYSTEM)
    assert file_system.import_id == "0a1b2c3d4e"
    assert file_system.inputs["description"] == ACK_GPU_NAS_DESCRIPTION
    (lookup,) = [args for token, args in run.calls if token.endswith("getFileSystems")]
    # RE2 (the provider's regexp) reads it as the literal description.
    assert lookup == {
        "fileSystemType": "standard",
        "descriptionRegex": f"^{ACK_GPU_NAS_DESCRIPTION}$",
    }


def test_adopting_a_kept_file_system_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[str] = []
    monkeypatch.setattr(pulumi.log, "info", lambda message, *_, **__: said.append(message))
    cloud = PlausibleCloud(kept_file_systems=(kept_file_system("0a1b2c3d4e"),))
    run_program("ack-gpu", cloud=cloud)
    assert (
        "NAS file system 0a1b2c3d4e holds this stack's runs (kept by an earlier destroy, "
        "storage.retainOnDestroy): adopted with its checkpoints, not created anew "
        "(docs/data.md, Up after destroy)"
    ) in said


def test_in_an_existing_vswitch_the_kept_file_system_is_adopted_whatever_zone_id_says() -> None:
    # The existing vSwitch's zone (the mock's cn-hangzhou-j) is the file system's, known only
    # once looked up: a leftover network.zoneId is not compared.
    existing = {"vpcId": "vpc-existing", "vpcCidr": EXISTING_VPC_CIDR, "vswitchId": "vsw-existing"}
    raw = stack_raw(
        "ack-gpu",
        {
            "network": {
                **existing,
                "zoneId": "cn-hangzhou-i",
                "podVswitchCidr": "172.20.0.0/16",
                "serviceCidr": "10.96.0.0/20",
            }
        },
    )
    # A stack given as a mapping is named `test`.
    description = "tftrain data, checkpoints and logs of tftrain-test-nas"
    kept = kept_file_system("0a1b2c3d4e", zoneId=EXISTING_VSWITCH_ZONE, description=description)
    run = run_program(raw, cloud=PlausibleCloud(kept_file_systems=(kept,)))
    (file_system,) = run.of_type(FILE_SYSTEM)
    assert file_system.import_id == "0a1b2c3d4e"


def test_a_first_up_creates_the_file_system() -> None:
    (file_system,) = run_program("ack-gpu").of_type(FILE_SYSTEM)
    assert file_system.import_id == ""


@pytest.mark.parametrize(
    ("kept", "named"),
    [
        (
            (kept_file_system("0a1b2c3d4e"), kept_file_system("9f8e7d6c5b")),
            "(0a1b2c3d4e, 9f8e7d6c5b; 2 of them)",
        ),
        ((kept_file_system("0a1b2c3d4e", storageType="Capacity"),), "differs in storageType"),
        ((kept_file_system("0a1b2c3d4e", zoneId="cn-hangzhou-k"),), "differs in zoneId"),
        (
            (kept_file_system("0a1b2c3d4e", storageType="Capacity", zoneId="cn-hangzhou-k"),),
            "it differs in storageType, zoneId)",
        ),
    ],
)
def test_kept_file_systems_that_cannot_be_adopted_stop_up_naming_the_key(
    kept: tuple[dict[str, Any], ...], named: str
) -> None:
    run = run_program("ack-gpu", cloud=PlausibleCloud(kept_file_systems=kept), raise_errors=False)
    assert run.error is not None
    message = str(run.error)
    assert message.startswith("tftrain:storage.fileSystemId = '': this stack's kept NAS file")
    assert named in message
    assert message.endswith(
        "Set tftrain:storage.fileSystemId to the one whose checkpoints you want (the others "
        "can then be deleted in the NAS console), or delete them first"
    )
    assert run.of_type(FILE_SYSTEM) == []


def test_a_re_attached_file_system_is_not_looked_up() -> None:
    raw = stack_raw("ack-gpu", {"storage": {"fileSystemId": "0a1b2c3d4e"}})
    run = run_program(raw)
    assert run.of_type(FILE_SYSTEM) == []
    assert not [token for token, _ in run.calls if token.endswith("getFileSystems")]


# --- the ASK endpoint lookup ------------------------------------------------------------------

# Data sources that call DescribeClusters (GET /clusters), being switched off by ACK, and
# deprecated in the provider since v1.276.0 in favour of cs.get_clusters.
DESCRIBE_CLUSTERS = re.compile(
    r"get_(serverless_|managed_)?kubernetes_clusters|get(Serverless|Managed)?KubernetesClusters"
)


def test_no_lookup_uses_describe_clusters() -> None:
    sources = list((PROJECT / "infra").rglob("*.py"))
    assert sources
    for path in sources:
        assert not DESCRIBE_CLUSTERS.search(path.read_text()), path
    for stack in all_stacks():
        calls = run_program(stack).calls
        assert not [token for token, _ in calls if DESCRIBE_CLUSTERS.search(token)], stack
