"""Where training data comes from and where a finished run goes (the CSI OSS volumes), and
what `up` does about a kept-on-destroy bucket or file system it creates."""

from __future__ import annotations

from infra.manifests.common import NAMESPACE_LABEL
from infra.manifests.issued_names import (
    CLAIMS,
    EXPORT_ROLE,
    INPUT_ROLE,
    issued_volume_name,
)
from infra.manifests.oss import OSS_CSI_DRIVER
from infra.render.actions import FILE_SYSTEM_TYPE
from infra.render.parsed import Render, type_of_title, value_at


def _oss_locations(render: Render) -> dict[str, str]:
    """{"input" or "export": "oss://<bucket>/<prefix>"} from the CSI OSS PersistentVolumes; a
    run stack's are its platform's, named by their claims. A platform's, issued to its run
    namespaces, are no run's data."""
    found = {}
    for obj in render.objects.values():
        name = value_at(obj, "metadata.name") if obj.get("kind") == "PersistentVolumeClaim" else ""
        role = next((role for role in (INPUT_ROLE, EXPORT_ROLE) if CLAIMS[role] == name), None)
        if role is not None:
            namespace = value_at(obj, "metadata.namespace")
            found[role] = f"the platform's volume {issued_volume_name(namespace, role)}"
        issued = NAMESPACE_LABEL in (value_at(obj, "metadata.labels") or {})
        is_volume = obj.get("kind") == "PersistentVolume" and not issued
        csi = value_at(obj, "spec.csi") if is_volume else None
        if not csi or csi.get("driver") != OSS_CSI_DRIVER:
            continue
        attributes = csi.get("volumeAttributes", {})
        role = "input" if csi.get("readOnly") else "export"
        found[role] = f"oss://{attributes.get('bucket')}{attributes.get('path')}"
    return found


BUCKET_TYPE = "alicloud:oss/bucket:Bucket"
# What `up` does when a resource new to the stack may already exist, kept by a `destroy`
# (retainOnDestroy): infra/cloud/oss.py `kept_bucket`, infra/cloud/nas.py `kept_file_system`.
_ADOPTS = {
    BUCKET_TYPE: "Kept bucket: `up` looks up oss://{bucket} first and adopts it (import), "
    "with its data, when an earlier destroy kept it; otherwise creates it",
    FILE_SYSTEM_TYPE: "Kept file system: `up` looks up this stack's NAS file system first and "
    "adopts it (import), with every run's checkpoints, when an earlier destroy kept it; "
    "several, or one unlike storage's config, stop `up` naming storage.fileSystemId",
}


def adoption_lines(old: Render, new: Render) -> list[str]:
    """For a kept-on-destroy resource this change creates: what `up` does if it still exists."""
    lines = []
    for title in sorted(new.cloud.keys() - old.cloud.keys()):
        said = _ADOPTS.get(type_of_title(title))
        if said:
            bucket = new.cloud[title].inputs.get("bucket", "").strip("'")
            lines.append(said.format(bucket=bucket))
    return lines


def data_lines(old: Render, new: Render) -> list[str]:
    """Where training data comes from and where a finished run goes, when either side has one."""
    before, after = _oss_locations(old), _oss_locations(new)
    lines = []
    for role, label in (("input", "Data in"), ("export", "Results out")):
        was, now = before.get(role, "none"), after.get(role, "none")
        if was == now == "none":
            continue
        lines.append(f"{label}: {now}, unchanged" if was == now else f"{label}: {was} → {now}")
    return lines
