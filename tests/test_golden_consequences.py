"""Each review golden (tests/goldens/*.txt) checked against consequences stated here by hand.

The goldens are written by the code they test (`python -m tests.goldens`), so a wrong
summary regenerated and committed would pass `test_summary_matches_its_golden` (which keeps
the code equal to the golden). These rules state every top-level line of each golden exactly
(only the run ids, hashes of the config, are matched by shape): what each edit must do,
worked out from the stack files and from how Kubernetes and the provider behave,
independently of the summary code: how many Jobs a run has (chief 1 unless set, plus
workers, ps), whether the run restarts, which cloud resources are touched, what becomes
public. A golden that contradicts them fails here, whatever the code says.

Replica counts, read off stacks/: ack-gpu 1 chief + 2 workers (1 GPU each) + 2 ps = 5 Jobs;
ack-cpu 1 chief + 4 workers + 1 ps = 6 Jobs; ask-eci 1 chief + 2 workers (1 GPU each) + 1 ps
= 4 Jobs; run-ack 1 chief + 2 workers (1 GPU each) + 1 ps = 4 Jobs; platform-ack none.
"""

from __future__ import annotations

import re

import pytest

from tests.goldens import CASES, Case

# A run id is a hash of the run's config (tested with the run ids); everything else is exact.
RUN_ID = "<run>"
NEW_RUN = "<run> is stopped; <run> starts, in a directory of its own"
UNTOUCHED = "<run> keeps running, untouched"
FRESH_VOLUME = "<run> is stopped; it starts over from step 0 on the new, empty file system"
NO_JOBS = "no training Jobs on either side"
# The bucket ack-gpu creates, named from the account (known only at deploy, so a placeholder
# offline), and the platform's that run-ack uses; ack-cpu, ask-eci (bundled data) and the
# platform itself have no data lines.
DERIVED_BUCKET = "<tftrain-<stack>-<account-id>>"
DATA = {
    "Data in": f"oss://{DERIVED_BUCKET}/mnist/, unchanged",
    "Results out": f"oss://{DERIVED_BUCKET}/exports/, unchanged",
}
# A run stack's volumes are the ones its platform issued its namespace (lr-sweep-a).
PLATFORM_DATA = {
    "Data in": "the platform's volume tftrain-lr-sweep-a-input, unchanged",
    "Results out": "the platform's volume tftrain-lr-sweep-a-export, unchanged",
}
QUIET = {"New public endpoints": "none", "Idle GPU pool": "none"}
# On ASK the review says what isolates the job, whatever the change (docs/security.md: ECI
# enforces no NetworkPolicy): ask-eci's TensorBoard is an intranet load balancer without
# allowedSourceRanges, its podVswitchCidr the default 192.168.64.0/18.
ASK_ISOLATION = (
    "ECI enforces no NetworkPolicy on ASK; the stack's security groups and NAS rule do: "
    "pods-replicas admits TCP 2222 from pods-replicas; pods-tensorboard admits TCP 6006 from "
    "0.0.0.0/0; NAS (no_squash, RDWR) from 192.168.64.0/18 only (network-pod-vswitch); any pod "
    "annotated into these groups or onto that vSwitch passes too (docs/security.md)"
)
ASK_QUIET = {"New public endpoints": "none", "Isolation": ASK_ISOLATION, "Idle GPU pool": "none"}
# 2 workers x 1 GPU on ack-gpu, ask-eci and run-ack; ack-cpu and the platform request none.
TWO_GPUS = {"GPUs requested": "2, unchanged"}
NO_GPUS = {"GPUs requested": "none"}
# A run's objects besides its Jobs: a Service per replica and TensorBoard's (replicas + 1),
# 4 NetworkPolicies (one of them selects the run's pods by run id), 3 PersistentVolumes and
# 3 claims (output volume, input, export), its Namespace, a ConfigMap (the lifecycle
# scripts) and TensorBoard's Deployment. Only the per-replica Services and the one policy
# carry the run id, so a new run relabels (updates) exactly those.

# case → every top-level line of its golden: label → the exact value ("<run>": a run id).
EXPECTED: dict[str, dict[str, str]] = {
    # ack-gpu: 1 chief + 2 workers + 2 ps = 5 Jobs, replaced (a Job's pod template is
    # immutable); 5 replica Services + 1 policy relabelled = 6 updates.
    "learning-rate": {
        "Run": NEW_RUN,
        "Kubernetes objects": "update 6 (NetworkPolicy 1, Service 5); replace 5 (Job 5)",
        "Cloud resources": "no change",
        **TWO_GPUS,
        **DATA,
        **QUIET,
    },
    # The same, with the run id pinned: the run's directory stays, so it resumes; only the
    # 5 Jobs are replaced, nothing relabelled.
    "run-id-pinned-learning-rate": {
        "Run": "<run> resumes from its checkpoints (5 Jobs restart)",
        "Kubernetes objects": "replace 5 (Job 5)",
        "Cloud resources": "no change",
        **TWO_GPUS,
        **DATA,
        **QUIET,
    },
    # ack-cpu 1 chief + 4 workers + 1 ps = 6 Jobs, replaced; the 5th worker's Job and Service
    # created; 6 replica Services + 1 policy relabelled = 7 updates.
    "worker-added": {
        "Run": NEW_RUN,
        "Kubernetes objects": (
            "create 2 (Job 1, Service 1); update 7 (NetworkPolicy 1, Service 6); replace 6 (Job 6)"
        ),
        "Cloud resources": "no change",
        **NO_GPUS,
        **QUIET,
    },
    # ack-gpu with one GPU worker: its Job and Service go, the 4 other Jobs are replaced, their
    # 4 Services and the policy relabelled; GPUs 2 → 1.
    "gpu-worker-removed": {
        "Run": NEW_RUN,
        "Kubernetes objects": (
            "update 5 (NetworkPolicy 1, Service 4); replace 4 (Job 4); delete 2 (Job 1, Service 1)"
        ),
        "Cloud resources": "no change",
        "GPUs requested": "2 → 1",
        **DATA,
        **QUIET,
    },
    # ask-eci (1 chief + 2 workers + 1 ps = 4 Jobs) with 2 GPUs per worker: 4 GPUs; the
    # ImageCache carries the run id, so it is updated with the 4 Services and the policy.
    "gpu-added": {
        "Run": NEW_RUN,
        "Kubernetes objects": (
            "update 6 (ImageCache 1, NetworkPolicy 1, Service 4); replace 4 (Job 4)"
        ),
        "Cloud resources": "no change",
        "GPUs requested": "2 → 4",
        **ASK_QUIET,
    },
    # TensorBoard's Service becomes public behind an SLB ACL and its entry, which the stack
    # creates; training untouched.
    "tensorboard-public": {
        "Run": UNTOUCHED,
        "Kubernetes objects": "update 1 (Service 1)",
        "Cloud resources": "create 2 (Acl 1, AclEntryAttachment 1)",
        **TWO_GPUS,
        **DATA,
        "New public endpoints": "Service tftrain/mnist-tensorboard",
        "Idle GPU pool": "none",
    },
    # ASK's public API server is an argument of the cluster (endpointPublicAccessEnabled),
    # updated in place: the summary names it as a public endpoint and nothing else.
    "ask-public-api-server": {
        "Run": UNTOUCHED,
        "Kubernetes objects": "no change",
        "Cloud resources": "no change",
        **TWO_GPUS,
        "New public endpoints": (
            "alicloud:cs/serverlessKubernetes:ServerlessKubernetes  cluster-ask"
        ),
        "Isolation": ASK_ISOLATION,
        "Idle GPU pool": "none",
    },
    "no-op": {
        "Run": UNTOUCHED,
        "Kubernetes objects": "no change",
        "Cloud resources": "no change",
        **TWO_GPUS,
        **DATA,
        **QUIET,
    },
    # A bigger CPU pool is an update of its node pool; nothing of the run changes.
    "cpu-pool-grown": {
        "Run": UNTOUCHED,
        "Kubernetes objects": "no change",
        "Cloud resources": "update 1 (NodePool 1)",
        **NO_GPUS,
        **QUIET,
    },
    # A fixed GPU pool of 3 one-GPU nodes for 2 one-GPU workers: 3 - 2 = 1 node idles; the
    # autoscaler's config goes with the range.
    "gpu-pool-fixed-oversized": {
        "Run": UNTOUCHED,
        "Kubernetes objects": "no change",
        "Cloud resources": "update 1 (NodePool 1); delete 1 (AutoscalingConfig 1)",
        **TWO_GPUS,
        **DATA,
        "New public endpoints": "none",
        "Idle GPU pool": "cluster-gpu-pool has 3 nodes for 2 GPU replicas: at least 1 node idle",
    },
    # A new vSwitch CIDR replaces the vSwitch, and so its SNAT entry and the NAS mount target
    # in it (a new NFS server name: the NAS PersistentVolume is replaced; the 2 OSS volumes
    # mount the bucket, not the NFS server, and stay); what names
    # the vSwitch (cluster, 2 node pools, NAT gateway) and the NAS access rule (its CIDR) are
    # updated; the file system and its checkpoints stay.
    "vswitch-cidr-changed": {
        "Run": "<run> loses its volume's NFS server; restarted, it resumes from its checkpoints",
        "Kubernetes objects": "replace 1 (PersistentVolume 1)",
        "Cloud resources": (
            "update 5 (AccessRule 1, ManagedKubernetes 1, NatGateway 1, NodePool 2); "
            "replace 3 (MountTarget 1, SnatEntry 1, Switch 1)"
        ),
        **TWO_GPUS,
        **DATA,
        **QUIET,
    },
    # Another NAS storage type is a new file system (and its mount target): the checkpoints
    # are gone with the old one; the NAS PersistentVolume mounts the new server (the OSS ones
    # do not mount it).
    "nas-storage-type-changed": {
        "Run": FRESH_VOLUME,
        "Kubernetes objects": "replace 1 (PersistentVolume 1)",
        "Cloud resources": "replace 2 (FileSystem 1, MountTarget 1)",
        **TWO_GPUS,
        **DATA,
        **QUIET,
    },
    # Another zone on ASK: a new vSwitch (and SNAT entry), so a new cluster and a new file
    # system and mount target in the zone; every object of the run created anew in the new
    # cluster: 4 Jobs + 15 others (ask-eci trains on the image's bundled data, so it has the
    # output volume and its claim only, no input or export volume), the ImageCache included.
    "zone-changed": {
        "Run": FRESH_VOLUME,
        "Kubernetes objects": (
            "replace 19 (ConfigMap 1, Deployment 1, ImageCache 1, Job 4, Namespace 1, "
            "NetworkPolicy 4, PersistentVolume 1, PersistentVolumeClaim 1, Service 5)"
        ),
        "Cloud resources": (
            # Both vSwitches (the cluster's and the pods') and their SNAT entries move zone.
            "update 2 (NatGateway 1, Provider kubernetes 1); replace 7 (FileSystem 1, "
            "MountTarget 1, ServerlessKubernetes 1, SnatEntry 2, Switch 2)"
        ),
        **TWO_GPUS,
        **ASK_QUIET,
    },
    # Other input data is another run: 5 Jobs replaced, and the input PersistentVolume (its
    # OSS path) too; the bucket policy the pods use names the new prefix.
    "input-prefix-changed": {
        "Run": NEW_RUN,
        "Kubernetes objects": (
            "update 6 (NetworkPolicy 1, Service 5); replace 6 (Job 5, PersistentVolume 1)"
        ),
        # The RAM policy follows the prefix; the seeded input is uploaded under the new prefix
        # (the old objects are dropped from the state and kept in the bucket: retainOnDestroy).
        "Cloud resources": (
            "create 5 (BucketObject 5); update 1 (Policy 1); delete 5 (BucketObject 5)"
        ),
        **TWO_GPUS,
        "Data in": f"oss://{DERIVED_BUCKET}/mnist/ → oss://{DERIVED_BUCKET}/mnist-v2/",
        "Results out": f"oss://{DERIVED_BUCKET}/exports/, unchanged",
        **QUIET,
    },
    # Registry credentials on ask-eci: a new Secret; every pod template gains
    # imagePullSecrets, so the 4 Jobs and the ImageCache are replaced and TensorBoard's
    # Deployment rolls. Credentials are not part of the run id: the same run resumes.
    "registry-credentials-added": {
        "Run": "<run> resumes from its checkpoints (4 Jobs restart)",
        "Kubernetes objects": (
            "create 1 (Secret 1); update 1 (Deployment 1); replace 5 (ImageCache 1, Job 4)"
        ),
        "Cloud resources": "no change",
        **TWO_GPUS,
        **ASK_QUIET,
    },
    # run-ack (1 chief + 2 workers + 1 ps = 4 Jobs): a new run in its own namespace, nothing
    # of the cloud (the platform is another stack, read, never changed).
    "run-learning-rate": {
        "Run": NEW_RUN,
        "Kubernetes objects": "update 5 (NetworkPolicy 1, Service 4); replace 4 (Job 4)",
        "Cloud resources": "no change",
        **TWO_GPUS,
        **PLATFORM_DATA,
        **QUIET,
    },
    # Another platform is another cluster: every one of the run's 18 objects (4 Jobs + 14; its
    # namespace and volumes are its platform's) is created there anew; the run resumes only
    # from checkpoints that platform's NAS holds.
    "run-moved-platform": {
        "Run": (
            "<run> is stopped here; on the other platform it resumes only from checkpoints "
            "its NAS holds (none on a new one)"
        ),
        "Kubernetes objects": (
            "replace 18 (ConfigMap 1, Deployment 1, Job 4, NetworkPolicy 4, "
            "PersistentVolumeClaim 3, Service 5)"
        ),
        "Cloud resources": "no change",
        "Platform": (
            "organization/tftrain/platform-ack → organization/tftrain/platform-ack-2: another "
            "cluster (its id is the provider's clusterIdentifier), so every object of this run "
            "is created there anew and deleted here"
        ),
        **TWO_GPUS,
        **PLATFORM_DATA,
        **QUIET,
    },
    # A platform has no run of its own; its changes happen to every run stack on it. A bigger
    # CPU pool is an update in place.
    "platform-cpu-pool-grown": {
        "Run": NO_JOBS,
        "Kubernetes objects": "no change",
        "Cloud resources": "update 1 (NodePool 1)",
        "Run stacks on this platform": "untouched",
        **NO_GPUS,
        **QUIET,
    },
    # Another zone: 2 new vSwitches (nodes and Terway pods) and their 2 SNAT entries, a new
    # NAS file system and mount target; the cluster, its 2 pools and the NAT gateway that name
    # the vSwitches are updated. Every run loses its checkpoints; the NAS volume the platform
    # issued lr-sweep-a names the new mount target (its OSS volumes do not mount it).
    "platform-zone-changed": {
        "Run": NO_JOBS,
        "Kubernetes objects": "replace 1 (PersistentVolume 1)",
        "Cloud resources": (
            "update 4 (ManagedKubernetes 1, NatGateway 1, NodePool 2); replace 6 (FileSystem 1, "
            "MountTarget 1, SnatEntry 2, Switch 2)"
        ),
        "Run stacks on this platform": (
            "every run's checkpoints and event files stay on the old file system: each run "
            "starts over from step 0; the platform replaces each run namespace's NAS volume, "
            "and its delete waits (pv-protection) until the run stack there has given up its "
            "claim: destroy those run stacks first, `up` them again after"
        ),
        **NO_GPUS,
        **QUIET,
    },
    # ACK cannot change a cluster's service CIDR: a new cluster and its 2 node pools; every
    # run stack on the platform stops and must be deployed again; what the platform issued
    # lr-sweep-a (Namespace, ServiceAccount, Role, RoleBinding, token Secret, 3 volumes) is
    # created in the new cluster through its provider, whose cluster changes.
    "platform-service-cidr-changed": {
        "Run": NO_JOBS,
        "Kubernetes objects": (
            "replace 8 (Namespace 1, PersistentVolume 3, Role 1, RoleBinding 1, Secret 1, "
            "ServiceAccount 1)"
        ),
        "Cloud resources": (
            "update 1 (Provider kubernetes 1); replace 3 (ManagedKubernetes 1, NodePool 2)"
        ),
        "Run stacks on this platform": (
            "every one is stopped with the old cluster; its next `pulumi up` reads the new "
            "cluster's id and credential and creates all of its objects anew"
        ),
        **NO_GPUS,
        **QUIET,
    },
}


def _pattern(expected: str) -> str:
    return re.escape(expected).replace(re.escape(RUN_ID), "run-[0-9a-f]{8}")


def _labelled(text: str) -> dict[str, str]:
    lines = text.splitlines()[1:]  # after "Consequences for <stack>, before → after:"
    return dict(line.split(": ", 1) for line in lines if not line.startswith(" "))


def test_every_golden_has_its_stated_consequences() -> None:
    assert sorted(EXPECTED) == sorted(case.name for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_golden_says_what_the_edit_must_do(case: Case) -> None:
    golden = _labelled(case.golden.read_text(encoding="utf-8"))
    # Every line stated, in the order a reader meets them.
    assert list(golden) == list(EXPECTED[case.name]), case.name
    for label, expected in EXPECTED[case.name].items():
        assert re.fullmatch(_pattern(expected), golden[label]), (label, golden[label], expected)
