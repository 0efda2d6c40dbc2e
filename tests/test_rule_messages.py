"""What a user reads for each rule between keys (infra/config/rules.py), word for word: each
problem names the key to change and what it allows; and the configs next to each rule that
must pass. The configs are worked by hand: the defaults are 1 chief, 2 workers and 1 ps on
an existing cluster (README "Stack keys"), and a batch of 120 splits evenly over 1 to 6
replicas, so only the rule under test speaks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from infra.config import ConfigError, parse_config

IMAGE = "registry.example.com/tftrain/trainer:1"
EVEN = {"batchSize": 120}
OWN_IMAGE = "registry.example.com/team/trainer:1"
ZONE = {"zoneId": "cn-hangzhou-i"}
ACK: dict[str, Any] = {"cluster": {"kind": "ack", "cpuPool": {"size": 2}}, "network": ZONE}
ASK: dict[str, Any] = {
    "cluster": {"kind": "ask", "eciGpuSpec": "ecs.gn6i-c4g1.xlarge"},
    "network": ZONE,
}
RUN: dict[str, Any] = {"cluster": {"kind": "ack", "role": "run", "platformStack": "o/tftrain/p"}}
RANGES = ["203.0.113.0/24"]
DATA = {"bucket": "tftrain-data", "inputPrefix": "mnist/"}
# A Secret the user manages, named <namespace>/<name> (its namespace is not the job's).
BY_SECRET = {"credentials": "secret", "credentialsSecret": "oss/oss-credentials"}
ENDPOINT = "oss-cn-hangzhou-internal.aliyuncs.com"
KEYS = {"accessKeyId": "LTAI-id", "accessKeySecret": "key-secret"}  # as Pulumi secrets
RRSA_WITH_KEY = (
    "must be secret when data.accessKeyId, accessKeySecret or credentialsSecret is set (rrsa "
    "uses a RAM role, no key)"
)
BOTH_KEYS = "must be set when the other AccessKey key is: both or neither"
INIT = (
    "must be run:<runId> (another run of job mnist), or an absolute path under "
    "storage.mountPath /data"
)


def on(base: dict[str, Any], **sections: dict[str, Any]) -> dict[str, Any]:
    """`base` with keys merged into its sections."""
    raw = dict(base)
    for name, keys in sections.items():
        raw[name] = {**raw.get(name, {}), **keys}
    return raw


PARTIAL_CREDENTIALS = (
    "must be set when any of imageRegistry's server, username and password is: all three or none"
)

CASES: dict[str, tuple[dict[str, Any], list[str]]] = {
    # TFJob's older name for the chief is no name ParameterServerStrategy takes.
    "master-for-the-bundled-trainer": (
        {"chief": {"number": 0}, "master": {"number": 1}, "ps": {"number": 0}},
        [
            "tftrain:master.number = 1: must be 0 for the bundled trainer (its chief is "
            "chief.number 1)"
        ],
    ),
    "gpus-on-the-ps": (
        {"ps": {"gpuCount": 1}, "hyperparams": EVEN},
        [
            "tftrain:ps.gpuCount = 1: must be 0: the bundled trainer's parameter servers do no "
            "GPU work"
        ],
    ),
    # ParameterServerStrategy: the chief is the coordinator, the workers run its closures.
    "ps-without-a-chief": (
        {"chief": {"number": 0}, "hyperparams": EVEN},
        [
            "tftrain:chief.number = 0: must be 1 when ps.number > 0: ParameterServerStrategy "
            "needs a chief"
        ],
    ),
    "ps-without-workers": (
        {"worker": {"number": 0}, "hyperparams": EVEN},
        [
            "tftrain:worker.number = 0: must be >= 1 when ps.number > 0: the chief dispatches "
            "to workers"
        ],
    ),
    "parameter-server-strategy-without-ps": (
        {"ps": {"number": 0}, "hyperparams": {**EVEN, "strategy": "parameter_server"}},
        [
            'tftrain:hyperparams.strategy = "parameter_server": must be auto or '
            "multi_worker_mirrored with 0 ps"
        ],
    ),
    "mirrored-strategy-with-ps": (
        {"hyperparams": {**EVEN, "strategy": "multi_worker_mirrored"}},
        [
            'tftrain:hyperparams.strategy = "multi_worker_mirrored": must be auto or '
            "parameter_server when ps.number > 0"
        ],
    ),
    # MultiWorkerMirrored keeps one model copy per device, in lockstep.
    "mirrored-with-unequal-devices": (
        {
            "ps": {"number": 0},
            "chief": {"gpuCount": 2},
            "worker": {"gpuCount": 1},
            "hyperparams": EVEN,
        },
        [
            "tftrain:chief.gpuCount = 2: must be worker.gpuCount or both <= 1: as many devices "
            "on every replica"
        ],
    ),
    # 1 chief + 2 workers under MultiWorkerMirrored: 3 replicas in sync; 128 = 3 x 42 + 2.
    "batch-that-does-not-split": (
        {"ps": {"number": 0}, "hyperparams": {"batchSize": 128}},
        [
            "tftrain:hyperparams.batchSize = 128: must be a multiple of 3: "
            "multi_worker_mirrored splits each batch over 3 replicas"
        ],
    ),
    # Only the empty keys are named: a password is never shown.
    "registry-server-alone": (
        {"imageRegistry": {"server": "registry.example.com"}, "hyperparams": EVEN},
        [
            f'tftrain:imageRegistry.username = "": {PARTIAL_CREDENTIALS}',
            f'tftrain:imageRegistry.password = "": {PARTIAL_CREDENTIALS}',
        ],
    ),
    # Roles (docs/teams.md "Teams and many runs").
    "platform-on-an-existing-cluster": (
        {"cluster": {"role": "platform"}, "image": None},
        [
            'tftrain:cluster.role = "platform": must be standalone when cluster.kind is '
            "existing (platform and run stacks share the ack or ask cluster a platform stack "
            "creates; stacks on an existing cluster already share it, one namespace each)"
        ],
    ),
    "run-without-its-platform": (
        {"cluster": {"kind": "ack", "role": "run"}},
        [
            'tftrain:cluster.platformStack = "": must be <organization>/<project>/<stack> of '
            "the platform stack whose cluster this run uses"
        ],
    ),
    "platform-named-outside-a-run": (
        on(ACK, cluster={"platformStack": "o/tftrain/p"}),
        ['tftrain:cluster.platformStack = "o/tftrain/p": must be empty unless cluster.role is run'],
    ),
    "run-on-its-own-nfs-server": (
        on(RUN, storage={"kind": "nfs", "nfsServer": "10.0.0.5"}),
        [
            "tftrain:storage.nfsServer: a volume's key, and a run stack's volumes are the ones "
            "its platform issues to its namespace (cluster.runNamespaces): remove it here; the "
            "platform's storage and data decide it",
            'tftrain:storage.kind = "nfs": must be nas in a run stack: its volume is the one its '
            "platform issues to its namespace (/tftrain/<namespace> on the platform's NAS)",
        ],
    ),
    "platform-on-its-own-nfs-server": (
        {
            **on(
                ACK, cluster={"role": "platform"}, storage={"kind": "nfs", "nfsServer": "10.0.0.5"}
            ),
            "image": None,
        },
        [
            'tftrain:storage.kind = "nfs": must be nas in a platform stack: it issues each of '
            "cluster.runNamespaces a volume on its NAS (/tftrain/<namespace>), the only volume "
            "a run stack mounts"
        ],
    ),
    "run-namespaces-outside-a-platform": (
        on(ACK, cluster={"runNamespaces": ["team-a"]}),
        [
            'tftrain:cluster.runNamespaces = ["team-a"]: must be empty unless cluster.role is '
            "platform (the platform issues each listed namespace its run stack's credentials)"
        ],
    ),
    "an-image-cache-in-a-run-stack": (
        {
            "cluster": {
                "kind": "ask",
                "role": "run",
                "platformStack": "o/tftrain/p",
                "imageCache": True,
            }
        },
        [
            "tftrain:cluster.imageCache = true: must be false in a run stack: an ECI ImageCache "
            "is cluster-scoped, and a run's credentials (its platform's for its namespace) "
            "create nothing outside its namespace"
        ],
    ),
    # Budgets (docs/cost.md): a bound on money needs a bound on time.
    "a-budget-per-run-without-a-deadline": (
        {"budget": {"maxCnyPerRun": 10}},
        [
            "tftrain:budget.maxCnyPerRun = 10.0: must be unset unless job.activeDeadlineSeconds "
            "is set: without it a run has no most it can cost"
        ],
    ),
    "a-budget-per-sweep-without-a-sweep": (
        {"budget": {"maxCnyPerSweep": 10}, "job": {"activeDeadlineSeconds": 600}},
        ["tftrain:budget.maxCnyPerSweep = 10.0: must be unset unless the stack has a sweep"],
    ),
    "an-rrsa-role-on-a-platform": (
        {
            **on(ACK, cluster={"role": "platform"}, data={**DATA, "rrsaRoleName": "my-role"}),
            "image": None,
        },
        [
            'tftrain:data.rrsaRoleName = "my-role": must be empty on a platform stack: it makes '
            "a RAM role per run namespace (its output runOssRoleNames)"
        ],
    ),
    "registry-credentials-without-server": (
        {"imageRegistry": {"username": "u", "password": "p"}},
        [f'tftrain:imageRegistry.server = "": {PARTIAL_CREDENTIALS}'],
    ),
    "registry-of-no-image": (
        {"imageRegistry": {"server": "other.example.com", "username": "u", "password": "p"}},
        [
            'tftrain:imageRegistry.server = "other.example.com": must be the registry of an '
            "image the stack pulls (registry.example.com): the kubelet offers credentials only "
            "to images of their host"
        ],
    ),
    "tensorboard-without-an-image-that-has-it": (
        {"image": OWN_IMAGE, "job": {"command": ["python", "t.py"]}},
        [
            'tftrain:tensorboard.image = "": must be an image with tensorboard in it (unset: '
            "tftrain:image when that is tftrain's <registry>/tftrain/trainer, which has it; a "
            "trainer image of yours may not)"
        ],
    ),
    "public-tensorboard-on-cluster-ip": (
        {
            "tensorboard": {
                "public": True,
                "serviceType": "ClusterIP",
                "allowedSourceRanges": RANGES,
            }
        },
        [
            "tftrain:tensorboard.public = true: must be false unless serviceType is LoadBalancer",
            'tftrain:tensorboard.allowedSourceRanges = ["203.0.113.0/24"]: must be empty unless '
            "serviceType is LoadBalancer",
        ],
    ),
    "public-tensorboard-open-to-all": (
        {"tensorboard": {"public": True}},
        [
            "tftrain:tensorboard.allowedSourceRanges = []: must be a non-empty list of IPv4 "
            "CIDRs if public is true"
        ],
    ),
    "allow-list-in-a-run-stack": (
        on(RUN, tensorboard={"allowedSourceRanges": RANGES}),
        [
            'tftrain:tensorboard.allowedSourceRanges = ["203.0.113.0/24"]: must be empty in a '
            "run stack: the allow-list is a cloud ACL, which a run stack does not create (use "
            "the intranet load balancer, or serviceType ClusterIP and port-forward)"
        ],
    ),
    # GPUs, pools, spot.
    "gpus-without-gpu-nodes": (
        on(ACK, cluster={"gpuPool": {"maxSize": 0}}, worker={"gpuCount": 1}),
        [
            "tftrain:worker.gpuCount = 1: must be 0 while cluster.gpuPool has size 0 and "
            "maxSize 0 (no GPU nodes)"
        ],
    ),
    "gpus-on-ask-without-an-eci-type": (
        {"cluster": {"kind": "ask"}, "network": ZONE, "worker": {"gpuCount": 1}},
        [
            "tftrain:worker.gpuCount = 1: must be 0 unless cluster.eciGpuSpec names an ECI GPU "
            "instance type"
        ],
    ),
    "idle-gpu-nodes": (
        on(ACK, cluster={"gpuPool": {"size": 1}}),
        [
            "tftrain:cluster.gpuPool.size = 1: must be 0 when no replica requests a GPU (idle "
            "GPU nodes are billed)"
        ],
    ),
    # An ECI pod of a named type gets the whole type: 15 GiB = 15360 MiB.
    "more-memory-than-an-eci-type-has": (
        on(ASK, worker={"gpuCount": 1, "memory": "16Gi"}),
        [
            'tftrain:worker.memory = "16Gi": must be at most 15360Mi: one ecs.gn6i-c4g1.xlarge '
            "pod has no more"
        ],
    ),
    "spot-on-an-existing-cluster": (
        {"worker": {"spot": True}},
        [
            "tftrain:worker.spot = true: must be false on an existing cluster (its nodes are "
            "not the stack's)"
        ],
    ),
    "spot-cpu-replicas-on-ack": (
        on(ACK, worker={"spot": True}),
        [
            "tftrain:worker.spot = true: must be false unless gpuCount > 0: on ack only the GPU "
            "pool has a spot twin"
        ],
    ),
    "spot-without-a-spot-pool": (
        on(ACK, worker={"spot": True, "gpuCount": 1}),
        [
            "tftrain:worker.spot = true: must be false unless cluster.spotGpuPool.maxSize > 0 "
            "(the spot GPU pool)"
        ],
    ),
    "spot-pool-on-ask": (
        on(ASK, cluster={"spotGpuPool": {"maxSize": 2}}),
        [
            "tftrain:cluster.spotGpuPool.maxSize = 2: must be 0 unless cluster.kind is ack "
            "(ask: set <group>.spot)"
        ],
    ),
    "pool-maximum-below-its-minimum": (
        on(ACK, cluster={"gpuPool": {"maxSize": 1, "minSize": 2}}, worker={"gpuCount": 1}),
        ["tftrain:cluster.gpuPool.maxSize = 1: must be 0 (fixed size) or >= minSize (autoscaling)"],
    ),
    "pool-both-fixed-and-autoscaled": (
        on(ACK, cluster={"cpuPool": {"size": 2, "maxSize": 3}}),
        [
            "tftrain:cluster.cpuPool.size = 2: must be 0 when maxSize > 0 (an autoscaling pool "
            "has no fixed size)"
        ],
    ),
    "run-with-no-cpu-nodes": (
        on(ACK, cluster={"cpuPool": {"size": 0}}),
        [
            "tftrain:cluster.cpuPool.size = 0: must be > 0 (or maxSize > 0): ps and TensorBoard "
            "run on the CPU pool"
        ],
    ),
    "image-cache-on-ack": (
        on(ACK, cluster={"imageCache": True}),
        [
            "tftrain:cluster.imageCache = true: must be false unless cluster.kind is ask (an "
            "ECI feature)"
        ],
    ),
    "nas-on-an-existing-cluster": (
        {"storage": {"kind": "nas"}},
        [
            'tftrain:storage.kind = "nas": must be nfs or hostPath on an existing cluster (NAS '
            "needs the stack's VPC)"
        ],
    ),
    # Fine-tuning: without an input, only the volume and other runs are offered.
    "init-checkpoint-of-a-bad-run-id": (
        {"job": {"initCheckpoint": "run:Bad_Id"}},
        [f'tftrain:job.initCheckpoint = "run:Bad_Id": {INIT}; the run id is a DNS label'],
    ),
    "init-checkpoint-of-its-own-run": (
        {"job": {"runId": "run-1", "initCheckpoint": "run:run-1"}},
        [
            f'tftrain:job.initCheckpoint = "run:run-1": {INIT}; not this run\'s own id (it '
            "resumes by itself)"
        ],
    ),
    "init-checkpoint-in-an-input-there-is-not": (
        {"job": {"initCheckpoint": "/input/ckpt-5"}},
        [f'tftrain:job.initCheckpoint = "/input/ckpt-5": {INIT}'],
    ),
    # Any TFJob-style run.
    "master-beside-a-chief": (
        {"master": {"number": 1}, "hyperparams": EVEN},
        [
            "tftrain:master.number = 1: must be 0 when chief.number is 1: master is TFJob's "
            "older name for chief",
            "tftrain:master.number = 1: must be 0 for the bundled trainer (its chief is "
            "chief.number 1)",
        ],
    ),
    "no-replica-to-end-the-run": (
        {"chief": {"number": 0}, "worker": {"number": 0}, "ps": {"number": 0}},
        [
            "tftrain:worker.number = 0: must be >= 1 (or chief.number 1): a chief or worker 0 "
            "ends the run"
        ],
    ),
    "own-image-without-a-command": (
        {"image": OWN_IMAGE, "tensorboard": {"enabled": False}},
        [
            "tftrain:job.command = null: must be the command that starts your trainer in "
            "registry.example.com/team/trainer:1 (or chief.command), e.g. [python, "
            "/app/train.py]: the image's ENTRYPOINT does not run under the replica supervisor; "
            "unset runs the bundled trainer (python -m trainer), which only tftrain's image "
            "<registry>/tftrain/trainer has"
        ],
    ),
    "a-name-the-stack-sets-in-job-env": (
        {"job": {"env": {"TF_CONFIG": "{}"}}},
        [
            'tftrain:job.env = {"TF_CONFIG": "{}"}: must be names the stack does not set '
            "itself, not TF_CONFIG (hyperparameters, paths and TF_CONFIG have their own keys: "
            'docs/trainer.md "What your trainer gets")'
        ],
    ),
    # Storage.
    "file-system-id-without-nas": (
        {"storage": {"kind": "nfs", "nfsServer": "10.0.0.2", "fileSystemId": "31a8e48eda"}},
        ['tftrain:storage.fileSystemId = "31a8e48eda": must be empty unless storage.kind is nas'],
    ),
    "nfs-without-a-server": (
        {"storage": {"kind": "nfs"}},
        [
            'tftrain:storage.nfsServer = "": must be the NFS server\'s address when storage.kind '
            "is nfs"
        ],
    ),
    "host-path-on-ack": (
        on(ACK, storage={"kind": "hostPath"}),
        [
            'tftrain:storage.kind = "hostPath": must be nas or nfs on ack/ask (hostPath is local '
            "to a node; pods move)"
        ],
    ),
    # The OSS bucket.
    "input-is-the-whole-bucket": (
        on(ACK, data={"bucket": "tftrain-data"}),
        [
            'tftrain:data.inputPrefix = "": must be a prefix such as mnist/ (empty is the whole '
            "bucket, which includes the exports)"
        ],
    ),
    "export-inside-the-input": (
        on(ACK, data={**DATA, "exportPrefix": "mnist/exports/"}),
        [
            'tftrain:data.exportPrefix = "mnist/exports/": must be a prefix apart from '
            "inputPrefix mnist/ (neither inside the other): a run's export must not change "
            "what the next run reads"
        ],
    ),
    "bucket-created-from-an-existing-cluster": (
        {"data": {**DATA, **BY_SECRET, "createBucket": True, "endpoint": ENDPOINT}},
        [
            "tftrain:data.createBucket = true: must be false on an existing cluster (the stack "
            "has no cloud account)"
        ],
    ),
    "unnamed-bucket-to-create-from-an-existing-cluster": (
        {
            "data": {
                "inputPrefix": "mnist/",
                **BY_SECRET,
                "createBucket": True,
                "endpoint": ENDPOINT,
            }
        },
        [
            "tftrain:data.createBucket = true: must be false on an existing cluster (the stack "
            "has no cloud account)",
            'tftrain:data.bucket = "": must be the name of your bucket on an existing cluster',
        ],
    ),
    "existing-cluster-without-an-endpoint": (
        {"data": {**DATA, **BY_SECRET}},
        ['tftrain:data.endpoint = "": must be the bucket\'s OSS endpoint on an existing cluster'],
    ),
    "rrsa-on-ask": (
        on(ASK, data={**DATA, "credentials": "rrsa"}),
        [
            'tftrain:data.credentials = "rrsa": must be secret or auto on ask (RRSA for the CSI '
            "OSS plugin is ACK's)"
        ],
    ),
    "rrsa-on-an-existing-cluster-without-a-role": (
        {"data": {**DATA, "credentials": "rrsa", "endpoint": ENDPOINT}},
        [
            'tftrain:data.rrsaRoleName = "": must be the RAM role the cluster\'s CSI OSS plugin '
            "assumes (rrsa)"
        ],
    ),
    "registry-of-neither-image": (
        {
            "worker": {"image": "a.example.com/tftrain/trainer:1"},
            "imageRegistry": {"server": "c.example.com", "username": "u", "password": "p"},
        },
        [
            'tftrain:imageRegistry.server = "c.example.com": must be the registry of an image '
            "the stack pulls (registry.example.com, a.example.com): the kubelet offers "
            "credentials only to images of their host"
        ],
    ),
    "another-accounts-bucket-created-here": (
        on(ACK, data={**DATA, "createBucket": True, "bucketOwner": "another-account"}),
        [
            'tftrain:data.bucketOwner = "another-account": must be this-account when the stack '
            "creates the bucket or takes its platform's; another-account only with data.bucket "
            "naming that account's bucket"
        ],
    ),
    "upload-of-a-directory-that-is-not-there": (
        on(ACK, data={**DATA, "createBucket": True, "localInputDir": "no/such/dir"}),
        [
            'tftrain:data.localInputDir = "no/such/dir": must be a directory of this machine '
            "(relative to the repository root) whose files are uploaded to the bucket's input "
            "prefix when the stack creates the bucket"
        ],
    ),
    # OSS credentials: a RAM role (rrsa), or an AccessKey the stack or the user puts in a Secret.
    "rrsa-with-an-access-key": (
        on(ACK, data={**DATA, "credentials": "rrsa", **KEYS}),
        [f'tftrain:data.credentials = "rrsa": {RRSA_WITH_KEY}'],
    ),
    "rrsa-with-a-secret-of-yours": (
        on(ACK, data={**DATA, "credentials": "rrsa", "credentialsSecret": "oss/oss-credentials"}),
        [f'tftrain:data.credentials = "rrsa": {RRSA_WITH_KEY}'],
    ),
    "access-key-and-a-secret-of-yours": (
        on(ACK, data={**DATA, **BY_SECRET, **KEYS}),
        [
            'tftrain:data.credentialsSecret = "oss/oss-credentials": must be empty when '
            "data.accessKeyId and accessKeySecret are set (the stack then makes the Secret): "
            "one of the two"
        ],
    ),
    "access-key-id-alone": (
        on(ACK, data={**DATA, "credentials": "secret", "accessKeyId": "LTAI-id"}),
        [f'tftrain:data.accessKeySecret = "": {BOTH_KEYS}'],
    ),
    "access-key-secret-alone": (
        on(ACK, data={**DATA, "credentials": "secret", "accessKeySecret": "key-secret"}),
        [f'tftrain:data.accessKeyId = "": {BOTH_KEYS}'],
    ),
    "secret-credentials-from-nowhere": (
        on(ACK, data={**DATA, "credentials": "secret"}),
        [
            'tftrain:data.accessKeyId = "": must be a RAM user\'s AccessKey as Pulumi secrets '
            "(pulumi config set --secret --path tftrain:data.accessKeyId / accessKeySecret) "
            "when credentials is secret, or data.credentialsSecret naming a Secret you manage"
        ],
    ),
    "a-secret-in-the-namespace-the-stack-creates": (
        on(ACK, data={**DATA, "credentials": "secret", "credentialsSecret": "tftrain/oss"}),
        [
            'tftrain:data.credentialsSecret = "tftrain/oss": must be a Secret in a namespace '
            "that exists before `up`, not job.namespace tftrain (the stack creates that one, so "
            "no Secret can be in it first); or unset, with data.accessKeyId and accessKeySecret "
            "as Pulumi secrets"
        ],
    ),
    # Kubernetes and the network.
    "kubernetes-without-pod-failure-policy": (
        on(ACK, cluster={"kubernetesVersion": "1.25.6-aliyun.1"}),
        [
            'tftrain:cluster.kubernetesVersion = "1.25.6-aliyun.1": must be 1.26 or newer: an '
            "older API server drops the Jobs' podFailurePolicy, so exit 2 (a bad flag, env or "
            "TF_CONFIG) would be retried like any failure"
        ],
    ),
    "vswitch-without-its-vpc": (
        on(ACK, network={"vswitchId": "vsw-1"}),
        [
            'tftrain:network.vswitchId = "vsw-1": must be empty unless vpcId is set (the '
            "existing VPC of that vSwitch)"
        ],
    ),
    "no-nat-on-ack": (
        on(ACK, network={"natGateway": False}),
        [
            "tftrain:network.natGateway = false: must be true on ack (ACK creates its own NAT "
            "gateway and EIP when the stack does not: the provider cannot send "
            "new_nat_gateway=false); ask honours false"
        ],
    ),
    "vpn-joined-to-a-new-vpc": (
        on(ACK, network={"vpnJoined": True}),
        [
            "tftrain:network.vpnJoined = true: must be false unless vpcId names the existing "
            "VPC your network joins"
        ],
    ),
    "terway-pods-in-the-nodes-vswitch": (
        on(ACK, network={"podVswitchCidr": "192.168.0.0/24"}),
        [
            'tftrain:network.podVswitchCidr = "192.168.0.0/24": must be a block that does not '
            "overlap vswitchCidr 192.168.0.0/20"
        ],
    ),
    # ASK's isolated pods: a vSwitch of their own inside the VPC, apart from the cluster's.
    "ask-pods-outside-the-vpc": (
        on(ASK, network={"podVswitchCidr": "10.99.0.0/24"}),
        [
            'tftrain:network.podVswitchCidr = "10.99.0.0/24": must be a block inside vpcCidr '
            "192.168.0.0/16"
        ],
    ),
    "ask-pods-in-the-cluster-vswitch": (
        on(ASK, network={"podVswitchCidr": "192.168.8.0/22"}),
        [
            'tftrain:network.podVswitchCidr = "192.168.8.0/22": must be a block that does not '
            "overlap vswitchCidr 192.168.0.0/20"
        ],
    ),
    "a-cloud-without-a-zone": (
        {"cluster": {"kind": "ack", "cpuPool": {"size": 2}}},
        [
            'tftrain:network.zoneId = "": must be set when cluster.kind is ack or ask (e.g. '
            "cn-hangzhou-i), unless vswitchId is: the vSwitch, NAS file system and cluster are "
            "created in it"
        ],
    ),
}

# Next to each refusal, what its rule lets through.
ACCEPTED: dict[str, dict[str, Any]] = {
    "public-tensorboard-behind-an-allow-list": {
        "tensorboard": {"public": True, "allowedSourceRanges": RANGES}
    },
    # ps and TensorBoard on ASK are sized by their own requests, not the ECI GPU type.
    "cpu-pods-on-ask-bigger-than-the-gpu-type": on(ASK, ps={"cpu": "8", "memory": "32Gi"}),
    # A run stack's pools are its platform's: no fit or spot pool to check here.
    "run-stack-pod-bigger-than-a-default-node": on(RUN, ps={"cpu": "6"}),
    "run-stack-spot-gpu-workers": on(RUN, worker={"gpuCount": 1, "spot": True}),
    # A fixed pool (maxSize 0) has no autoscaling range to check minSize against.
    "fixed-gpu-pool-with-a-min-size": on(
        ACK, cluster={"gpuPool": {"size": 1, "minSize": 2}}, worker={"gpuCount": 1, "number": 1}
    ),
    "ask-with-no-cpu-pool": on(ASK, cluster={"cpuPool": {"size": 0}}),
    "an-existing-nas-file-system": on(ACK, storage={"fileSystemId": "31a8e48eda"}),
    "a-bucket-created-on-ack": on(ACK, data={**DATA, "createBucket": True}),
    "an-existing-vswitch-in-its-vpc": on(ACK, network={"vswitchId": "vsw-1", "vpcId": "vpc-1"}),
    "kubernetes-1-26": on(ACK, cluster={"kubernetesVersion": "1.26.3-aliyun.1"}),
    "another-accounts-bucket-named": on(ACK, data={**DATA, "bucketOwner": "another-account"}),
    # Uploaded only into a bucket the stack creates: otherwise a local run's directory.
    "a-local-directory-not-uploaded": on(ACK, data={**DATA, "localInputDir": "no/such/dir"}),
    "an-access-key-for-the-stack-s-secret": on(ACK, data={**DATA, "credentials": "secret", **KEYS}),
    # Only the namespace itself is the stack's: one whose name starts the same is not.
    "a-secret-in-a-namespace-named-alike": on(
        ACK, data={**DATA, "credentials": "secret", "credentialsSecret": "tftrain-ops/oss"}
    ),
    # The pods' own vSwitch is Terway's and a standalone ASK stack's: an ASK platform (whose
    # run stacks' pods share the cluster's vSwitch) and flannel ignore podVswitchCidr.
    "an-ask-platform-ignores-the-pod-vswitch": {
        **on(ASK, cluster={"role": "platform"}, network={"podVswitchCidr": "10.99.0.0/24"}),
        "image": None,  # a platform has no run
    },
    "flannel-ignores-the-pod-vswitch": on(
        ACK, cluster={"networkPlugin": "flannel"}, network={"podVswitchCidr": "192.168.0.0/24"}
    ),
    "init-checkpoint-in-the-input": {
        "job": {"initCheckpoint": "/input/ckpt-5"},
        "data": {"localInputDir": "/srv/mnist"},
    },
}


@pytest.mark.parametrize("name", ACCEPTED)
def test_what_each_rule_lets_through(name: str) -> None:
    parse_config({"image": IMAGE, **ACCEPTED[name]}, secret_keys=["imageRegistry", "data"])


@pytest.mark.parametrize("name", CASES)
def test_each_problem_is_stated_word_for_word(name: str) -> None:
    overrides, problems = CASES[name]
    with pytest.raises(ConfigError) as raised:
        # imageRegistry and data as `pulumi config set --secret` leaves them: passwords and
        # AccessKeys are allowed.
        parse_config({"image": IMAGE, **overrides}, secret_keys=["imageRegistry", "data"])
    assert str(raised.value).splitlines() == [
        "invalid stack config:",
        *(f"  - {problem}" for problem in problems),
    ]


def test_an_uploaded_directory_outside_the_project_is_refused_naming_the_project() -> None:
    # Everything under it is uploaded to the bucket: /etc/ssl would be published there.
    project = Path(__file__).resolve().parents[1]
    uploaded = {**DATA, "createBucket": True, "localInputDir": "/etc/ssl"}
    with pytest.raises(ConfigError) as raised:
        parse_config({"image": IMAGE, **on(ACK, data=uploaded)}, secret_keys=["data"])
    assert str(raised.value).splitlines()[1:] == [
        f'  - tftrain:data.localInputDir = "/etc/ssl": must be a directory inside the project '
        f"({project}), relative to it, such as data/mnist: its files are uploaded to the bucket"
    ]


BUNDLED_ONLY = list(CASES)[:8]


def test_a_users_own_trainer_is_not_held_to_the_bundled_trainers_rules() -> None:
    own = {
        "image": "registry.example.com/team/trainer:1",
        "job": {"command": ["python", "t.py"]},
        "tensorboard": {"enabled": False},
    }
    for name in BUNDLED_ONLY:
        overrides = CASES[name][0]
        if name in BUNDLED_ONLY:
            parse_config({**overrides, **own})
