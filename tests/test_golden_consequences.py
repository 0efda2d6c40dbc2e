"""Each review golden (tests/goldens/*.txt) checked against consequences stated here by hand.

The goldens are written by the code they test (`python -m tests.goldens`), so a wrong
summary regenerated and committed would pass `test_summary_matches_its_golden`. These rules
state what each edit must do, worked out from the stack files and from how Kubernetes and the
provider behave, independently of the summary code: how many Jobs a run has (chief 1 unless
set, plus workers, ps), whether the run restarts, which cloud resources are touched, what
becomes public. A golden that contradicts them fails here, whatever the code says.

Replica counts, read off stacks/: ack-gpu 1 chief + 2 workers (1 GPU each) + 2 ps = 5 Jobs;
ack-cpu 1 chief + 4 workers + 1 ps = 6 Jobs; ask-eci 1 chief + 2 workers (1 GPU each) + 1 ps
= 4 Jobs; run-ack 1 chief + 2 workers (1 GPU each) + 1 ps = 4 Jobs; platform-ack none.
"""

from __future__ import annotations

import re

import pytest

from tests.goldens import CASES, Case

RUN_ID = r"run-[0-9a-f]{8}"
NEW_RUN = rf"{RUN_ID} is stopped; {RUN_ID} starts, in a directory of its own"
UNTOUCHED = rf"{RUN_ID} keeps running, untouched"
FRESH_VOLUME = rf"{RUN_ID} is stopped; it starts over from step 0 on the new, empty file system"

# case → {line label: the value, as a regular expression the whole value must match}
EXPECTED: dict[str, dict[str, str]] = {
    # A hyperparameter is part of the run id: a new run, every Job replaced (a Job's pod
    # template is immutable), the run's Services and policy relabelled; the cloud untouched.
    "learning-rate": {
        "Run": NEW_RUN,
        "Kubernetes objects": r"update \d+ \(.*Service 5\); replace 5 \(Job 5\)",
        "Cloud resources": "no change",
        "GPUs requested": "2, unchanged",
        "New public endpoints": "none",
    },
    # The same, with the run id pinned: the run's directory stays, so it resumes; only the
    # Jobs (immutable templates) are replaced, nothing relabelled.
    "run-id-pinned-learning-rate": {
        "Run": rf"{RUN_ID} resumes from its checkpoints \(5 Jobs restart\)",
        "Kubernetes objects": r"replace 5 \(Job 5\)",
        "Cloud resources": "no change",
    },
    # One more worker on ack-cpu: a Job and a Service of its own, a new run for the rest.
    "worker-added": {
        "Run": NEW_RUN,
        "Kubernetes objects": r"create 2 \(Job 1, Service 1\); .*replace 6 \(Job 6\)",
        "Cloud resources": "no change",
        "GPUs requested": "none",
    },
    # One GPU worker fewer: its Job and Service go, the 4 others are replaced; GPUs 2 → 1.
    "gpu-worker-removed": {
        "Run": NEW_RUN,
        "Kubernetes objects": r".*replace 4 \(Job 4\); delete 2 \(Job 1, Service 1\)",
        "Cloud resources": "no change",
        "GPUs requested": "2 → 1",
    },
    # Two GPUs per worker on ECI: 2 workers x 2 = 4 GPUs, a new run (the ImageCache carries
    # the run id, so it is updated); no cloud resource of the stack changes (ECI sizes pods).
    "gpu-added": {
        "Run": NEW_RUN,
        "Kubernetes objects": r"update \d+ \(ImageCache 1, .*\); replace 4 \(Job 4\)",
        "Cloud resources": "no change",
        "GPUs requested": "2 → 4",
    },
    # A public TensorBoard: its Service becomes a LoadBalancer limited by an SLB ACL the stack
    # creates; training is untouched.
    "tensorboard-public": {
        "Run": UNTOUCHED,
        "Kubernetes objects": r"update 1 \(Service 1\)",
        "Cloud resources": r"create 2 \(Acl 1, AclEntryAttachment 1\)",
        "New public endpoints": r"Service tftrain/mnist-tensorboard",
    },
    # ASK's public API server is an argument of the cluster (endpointPublicAccessEnabled),
    # updated in place: a public endpoint, nothing else.
    "ask-public-api-server": {
        "Run": UNTOUCHED,
        "Kubernetes objects": "no change",
        "New public endpoints": r".*ServerlessKubernetes  cluster-ask",
    },
    "no-op": {
        "Run": UNTOUCHED,
        "Kubernetes objects": "no change",
        "Cloud resources": "no change",
        "New public endpoints": "none",
        "Idle GPU pool": "none",
    },
    # A bigger CPU pool is an update of its node pool; nothing of the run changes.
    "cpu-pool-grown": {
        "Run": UNTOUCHED,
        "Kubernetes objects": "no change",
        "Cloud resources": r"update 1 \(NodePool 1\)",
    },
    # A fixed GPU pool of 3 nodes (one GPU each) for 2 one-GPU workers: one node idles; the
    # autoscaler's config goes, since the pool no longer scales.
    "gpu-pool-fixed-oversized": {
        "Run": UNTOUCHED,
        "Cloud resources": r"update 1 \(NodePool 1\); delete 1 \(AutoscalingConfig 1\)",
        "Idle GPU pool": r".*3 nodes for 2 GPU replicas: at least 1 node idle",
    },
    # A new vSwitch CIDR replaces the vSwitch, so the NAS mount target in it (new NFS server
    # name: the PersistentVolumes are replaced); the file system and its checkpoints stay.
    "vswitch-cidr-changed": {
        "Run": rf"{RUN_ID} loses its volume's NFS server; restarted, it resumes from its "
        r"checkpoints",
        "Kubernetes objects": r"replace 3 \(PersistentVolume 3\)",
        "Cloud resources": r".*replace 3 \(MountTarget 1, SnatEntry 1, Switch 1\)",
    },
    # Another NAS storage type is a new file system: the checkpoints are gone with the old one.
    "nas-storage-type-changed": {
        "Run": FRESH_VOLUME,
        "Cloud resources": r"replace 2 \(FileSystem 1, MountTarget 1\)",
    },
    # Another zone on ASK: a new vSwitch, so a new cluster (every object created anew) and a
    # new file system in the zone.
    "zone-changed": {
        "Run": FRESH_VOLUME,
        "Kubernetes objects": r"replace \d+ \(ConfigMap 1, Deployment 1, ImageCache 1, Job 4, .*\)",
        "Cloud resources": r".*replace 5 \(FileSystem 1, MountTarget 1, ServerlessKubernetes 1, "
        r"SnatEntry 1, Switch 1\)",
    },
    # Other input data is another run; the input volume points at the new prefix, and the
    # bucket policy the pods use is updated.
    "input-prefix-changed": {
        "Run": NEW_RUN,
        "Kubernetes objects": r".*replace 6 \(Job 5, PersistentVolume 1\)",
        # The RAM policy follows the prefix; the seeded input is uploaded under the new prefix
        # (the old objects are dropped from the state and kept in the bucket: retainOnDestroy).
        "Cloud resources": r"create 5 \(BucketObject 5\); update 1 \(Policy 1\); "
        r"delete 5 \(BucketObject 5\)",
        "Data in": r"oss://(?P<b>\S+)/mnist/ → oss://(?P=b)/mnist-v2/",
    },
    # Registry credentials on ask-eci: a new Secret; every pod template gains imagePullSecrets,
    # so the 4 Jobs (immutable templates) are replaced and TensorBoard's Deployment rolls; the
    # ImageCache's spec gains them too (a new spec is a new cache). Credentials are not part
    # of the run id: the same run resumes. Nothing in the cloud changes.
    "registry-credentials-added": {
        "Run": rf"{RUN_ID} resumes from its checkpoints \(4 Jobs restart\)",
        "Kubernetes objects": r"create 1 \(Secret 1\); update 1 \(Deployment 1\); "
        r"replace 5 \(ImageCache 1, Job 4\)",
        "Cloud resources": "no change",
        "New public endpoints": "none",
    },
    # A run stack (run-ack: 1 chief + 2 workers + 1 ps = 4 Jobs): a new run in its own
    # namespace, nothing of the cloud (the platform is another stack, read, never changed).
    "run-learning-rate": {
        "Run": NEW_RUN,
        "Kubernetes objects": r"update \d+ \(.*Service 4\); replace 4 \(Job 4\)",
        "Cloud resources": "no change",
        "GPUs requested": "2, unchanged",
    },
    # Another platform is another cluster: the same run (its id does not depend on where it
    # runs) resumes there only if that platform's NAS has its checkpoints; every object of it
    # (22: 4 Jobs, 5 Services, 4 policies, 3 PVs, 3 PVCs, namespace, ConfigMap, TensorBoard)
    # is created anew; still no cloud resource.
    "run-moved-platform": {
        "Run": rf"{RUN_ID} is stopped here; on the other platform it resumes only from "
        r"checkpoints its NAS holds \(none on a new one\)",
        "Kubernetes objects": r"replace 22 \(.*Job 4.*\)",
        "Cloud resources": "no change",
        "Platform": r"organization/tftrain/platform-ack → organization/tftrain/platform-ack-2: "
        r"another cluster.*anew.*",
    },
    # A platform has no run of its own; what its changes do happens to every run stack on it.
    # A bigger CPU pool is an update in place: no run is disturbed.
    "platform-cpu-pool-grown": {
        "Run": "no training Jobs on either side",
        "Kubernetes objects": "no change",
        "Cloud resources": r"update 1 \(NodePool 1\)",
        "Run stacks on this platform": "untouched",
    },
    # Another zone: new vSwitches, so a new NAS file system and mount target there; every
    # run on the platform loses its checkpoints (new file system) and its NFS server name.
    "platform-zone-changed": {
        "Run": "no training Jobs on either side",
        "Kubernetes objects": "no change",
        "Cloud resources": r".*replace \d+ \(FileSystem 1, MountTarget 1, .*Switch 2\)",
        "Run stacks on this platform": r".*starts over from step 0.*PersistentVolume",
    },
    # ACK cannot change a cluster's service CIDR: a new cluster, and with it new node pools;
    # every run stack on the platform stops and must be deployed again.
    "platform-service-cidr-changed": {
        "Run": "no training Jobs on either side",
        "Cloud resources": r"replace 3 \(ManagedKubernetes 1, NodePool 2\)",
        "Run stacks on this platform": r"every one is stopped with the old cluster.*anew",
    },
}


def _labelled(text: str) -> dict[str, str]:
    lines = text.splitlines()[1:]  # after "Consequences for <stack>, before → after:"
    return dict(line.split(": ", 1) for line in lines if not line.startswith(" "))


def test_every_golden_has_its_stated_consequences() -> None:
    assert sorted(EXPECTED) == sorted(case.name for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_golden_says_what_the_edit_must_do(case: Case) -> None:
    golden = _labelled(case.golden.read_text(encoding="utf-8"))
    for label, expected in EXPECTED[case.name].items():
        assert label in golden, (label, golden)
        assert re.fullmatch(expected, golden[label]), (label, golden[label], expected)
