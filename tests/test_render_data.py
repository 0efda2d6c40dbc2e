"""The review's data lines: where training data comes from and where a run's results go (the
OSS volumes), and what `up` does about a kept bucket or file system it creates."""

from __future__ import annotations

from infra.render.data import adoption_lines, data_lines
from infra.render.parsed import CloudResource, Render

BUCKET = "alicloud:oss/bucket:Bucket  data-bucket"
NAS = "alicloud:nas/fileSystem:FileSystem  storage-nas"


def volume(bucket: str, path: str, read_only: bool, kind: str = "PersistentVolume") -> dict:
    csi = {
        "driver": "ossplugin.csi.alibabacloud.com",
        "readOnly": read_only,
        "volumeAttributes": {"bucket": bucket, "path": path},
    }
    return {"kind": kind, "spec": {"csi": csi}}


def render(*objects: dict, cloud: dict | None = None) -> Render:
    return Render({f"o{i}": obj for i, obj in enumerate(objects)}, cloud or {})


def test_data_in_and_results_out_are_read_off_the_oss_volumes() -> None:
    old = render(volume("b", "/mnist/", True))
    new = render(
        volume("b", "/mnist/", True),
        volume("b", "/exports/", False),
        volume("x", "/other/", True, kind="Pod"),  # not a volume: not read
        {"kind": "PersistentVolume", "spec": {"csi": {"driver": "nasplugin.csi.alibabacloud.com"}}},
    )
    assert data_lines(old, new) == [
        "Data in: oss://b/mnist/, unchanged",
        "Results out: none → oss://b/exports/",
    ]
    assert data_lines(render(), render()) == []
    # No input on either side: the results' line still follows.
    exports = render(volume("b", "/exports/", False))
    assert data_lines(exports, exports) == ["Results out: oss://b/exports/, unchanged"]


def test_a_kept_bucket_or_file_system_the_change_creates_says_what_up_does() -> None:
    new = render(
        cloud={
            BUCKET: CloudResource({"bucket": "'tftrain-a-123'"}),
            NAS: CloudResource(),
            "alicloud:vpc/network:Network  vpc": CloudResource(),
        }
    )
    assert adoption_lines(render(), new) == [
        "Kept file system: `up` looks up this stack's NAS file system first and adopts it "
        "(import), with every run's checkpoints, when an earlier destroy kept it; several, or "
        "one unlike storage's config, stop `up` naming storage.fileSystemId",
        "Kept bucket: `up` looks up oss://tftrain-a-123 first and adopts it (import), with its "
        "data, when an earlier destroy kept it; otherwise creates it",
    ]
    assert adoption_lines(new, new) == []  # not created by this change
