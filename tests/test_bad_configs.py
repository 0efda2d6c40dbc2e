"""Bad stack configs: rejected with the key and what is allowed, before any resource exists.

Each case is checked twice: `parse_config` alone (the message a user reads), and the whole
program under mocks (which must fail having registered nothing, not even the provider).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pulumi
import pytest

from infra import mock_deploy
from infra.config import ConfigError, parse_config
from tests.pulumi_mocks import PlausibleCloud, run_program

IMAGE = "registry.example.com/tftrain/trainer:1"
BASE: dict[str, Any] = {"image": IMAGE}
ACK: dict[str, Any] = {
    **BASE,
    "cluster": {"kind": "ack", "cpuPool": {"size": 2}},
    "network": {"zoneId": "cn-hangzhou-i"},
}
# An ASK stack with the keys every ASK stack needs.
ASK: dict[str, Any] = {
    **BASE,
    "cluster": {"kind": "ask"},
    "network": {"zoneId": "cn-hangzhou-i"},
    "storage": {"kind": "nas"},
}


class Bad(NamedTuple):
    config: dict[str, Any]
    key: str  # as the user would type it for `pulumi config set --path`
    allowed: str  # a fragment of what the message says is allowed


def on_two_cpu_types(ps: dict[str, Any]) -> dict[str, Any]:
    """ACK with a CPU pool of two types, the bigger listed first, and the ps as given."""
    pool = {"size": 2, "instanceTypes": ["ecs.g7.2xlarge", "ecs.g7.xlarge"]}
    return {**ACK, "cluster": {**ACK["cluster"], "cpuPool": pool}, "ps": {"number": 1, **ps}}


CASES: dict[str, Bad] = {
    "negative-workers": Bad(
        {**BASE, "worker": {"number": -1}}, "tftrain:worker.number", "an integer from 0 to 1000"
    ),
    "gpus-on-an-ack-without-gpu-pool": Bad(
        # An explicit maxSize 0 and no size: the GPU pool is turned off.
        {
            **ACK,
            "cluster": {**ACK["cluster"], "gpuPool": {"maxSize": 0}},
            "worker": {"gpuCount": 1},
        },
        "tftrain:worker.gpuCount",
        "0 while cluster.gpuPool has size 0",
    ),
    "gpu-pool-both-fixed-and-autoscaling": Bad(
        {
            **ACK,
            "cluster": {**ACK["cluster"], "gpuPool": {"size": 1, "maxSize": 2}},
            "worker": {"gpuCount": 1},
        },
        "tftrain:cluster.gpuPool.size",
        "0 when maxSize > 0 (an autoscaling pool has no fixed size",
    ),
    # terraform-provider-alicloud 81c43b67, resource_alicloud_cs_managed_kubernetes.go: the
    # schema default of new_nat_gateway is true and create sends it only `if v, ok :=
    # d.GetOk("new_nat_gateway"); ok`, which a false bool never is.
    "nat-off-on-ack": Bad(
        {**ACK, "network": {**ACK["network"], "natGateway": False}},
        "tftrain:network.natGateway",
        "true on ack (ACK creates its own NAT gateway and EIP",
    ),
    # A VPC the stack creates does not exist before the first up: nothing can be joined to it.
    "vpn-joined-new-vpc": Bad(
        {**ACK, "network": {**ACK["network"], "vpnJoined": True}},
        "tftrain:network.vpnJoined",
        "false unless vpcId names the existing VPC",
    ),
    # A blank argv element runs nothing; a multi-line script is fine (test_tf1_fixtures.py).
    "blank-command-element": Bad(
        {**BASE, "job": {**BASE.get("job", {}), "command": ["python", "  \n"]}},
        "tftrain:job.command[1]",
        "a non-empty list of non-blank strings",
    ),
    "unknown-cluster-kind": Bad(
        {**BASE, "cluster": {"kind": "gke"}}, "tftrain:cluster.kind", "one of existing, ack, ask"
    ),
    "malformed-pv-label": Bad(
        {**BASE, "storage": {"pvLabels": {"train!": "mnist"}}},
        "tftrain:storage.pvLabels.train!",
        "a Kubernetes label",
    ),
    "missing-image": Bad({}, "tftrain:worker.image", "a container image"),
    "unknown-kubernetes-version": Bad(
        {**BASE, "cluster": {"kubernetesVersion": "newest"}},
        "tftrain:cluster.kubernetesVersion",
        "latest (the newest ACK offers at creation, then kept) or a version ACK offers",
    ),
    # Kubernetes docs, Jobs: Pod failure policy is alpha (off) in 1.25, beta (on) from 1.26.
    "existing-cluster-before-pod-failure-policy": Bad(
        {**BASE, "cluster": {"kind": "existing", "kubernetesVersion": "1.25.16"}},
        "tftrain:cluster.kubernetesVersion",
        "1.26 or newer: an older API server drops the Jobs' podFailurePolicy, so exit 2",
    ),
    "ack-version-before-pod-failure-policy": Bad(
        {**ACK, "cluster": {**ACK["cluster"], "kubernetesVersion": "1.24.6-aliyun.1"}},
        "tftrain:cluster.kubernetesVersion",
        "1.26 or newer",
    ),
    "unknown-network-plugin": Bad(
        {**BASE, "cluster": {"networkPlugin": "calico"}},
        "tftrain:cluster.networkPlugin",
        "one of terway, flannel",
    ),
    "terway-pod-vswitch-outside-the-vpc": Bad(
        {**ACK, "network": {"podVswitchCidr": "10.200.0.0/18"}},
        "tftrain:network.podVswitchCidr",
        "a block inside vpcCidr 192.168.0.0/16",
    ),
    "terway-pod-vswitch-on-the-node-vswitch": Bad(
        {**ACK, "network": {"podVswitchCidr": "192.168.0.0/18"}},
        "tftrain:network.podVswitchCidr",
        "a block that does not overlap vswitchCidr 192.168.0.0/20",
    ),
    "ask-pod-vswitch-outside-the-vpc": Bad(
        {**ASK, "network": {**ASK["network"], "podVswitchCidr": "10.200.0.0/18"}},
        "tftrain:network.podVswitchCidr",
        "a block inside vpcCidr 192.168.0.0/16",
    ),
    "typo-in-key": Bad(
        {**BASE, "hyperparams": {"learningrate": 0.01}},
        "tftrain:hyperparams.learningrate",
        "known keys here: batchSize",
    ),
    "bad-learning-rate": Bad(
        {**BASE, "hyperparams": {"learningRate": -0.1}},
        "tftrain:hyperparams.learningRate",
        "a number > 0",
    ),
    "hostpath-on-ack": Bad(
        {**ACK, "storage": {"kind": "hostPath"}},
        "tftrain:storage.kind",
        "nas or nfs on ack/ask",
    ),
    "hostpath-the-node-root": Bad(
        {**BASE, "storage": {"kind": "hostPath", "hostPath": "/"}},
        "tftrain:storage.hostPath",
        "not / and not in a system directory",
    ),
    "hostpath-in-the-kubelets-directory": Bad(
        {**BASE, "storage": {"kind": "hostPath", "hostPath": "/var/lib/kubelet/pods"}},
        "tftrain:storage.hostPath",
        "not / and not in a system directory",
    ),
    "hostpath-in-etc": Bad(
        {**BASE, "storage": {"kind": "hostPath", "hostPath": "/etc/tftrain"}},
        "tftrain:storage.hostPath",
        "not / and not in a system directory",
    ),
    "upload-from-outside-the-project": Bad(
        # Everything under it would be published to the bucket.
        {
            **ACK,
            "data": {
                "bucket": "team-data",
                "inputPrefix": "mnist/",
                "createBucket": True,
                "localInputDir": "/etc/ssl",
            },
        },
        "tftrain:data.localInputDir",
        "a directory inside the project",
    ),
    "upload-escaping-the-project": Bad(
        {
            **ACK,
            "data": {
                "bucket": "team-data",
                "inputPrefix": "mnist/",
                "createBucket": True,
                "localInputDir": "../..",
            },
        },
        "tftrain:data.localInputDir",
        "a directory inside the project",
    ),
    "oss-endpoint-not-alibabas": Bad(
        # The signed requests (and the RRSA token's use) would go to that host.
        {
            **ACK,
            "data": {
                "bucket": "team-data",
                "inputPrefix": "mnist/",
                "endpoint": "oss.attacker.example.com",
            },
        },
        "tftrain:data.endpoint",
        "an Alibaba Cloud OSS endpoint host",
    ),
    "oss-endpoint-lookalike": Bad(
        {
            **ACK,
            "data": {
                "bucket": "team-data",
                "inputPrefix": "mnist/",
                "endpoint": "oss-cn-hangzhou.aliyuncs.com.example.com",
            },
        },
        "tftrain:data.endpoint",
        "an Alibaba Cloud OSS endpoint host",
    ),
    "ps-without-chief": Bad(
        {**BASE, "chief": {"number": 0}, "ps": {"number": 1}},
        "tftrain:chief.number",
        "1 when ps.number > 0",
    ),
    "bad-cidr": Bad(
        {**BASE, "network": {"vpcCidr": "192.168.0.0/33"}},
        "tftrain:network.vpcCidr",
        "an IPv4 CIDR block",
    ),
    "vswitch-outside-vpc": Bad(
        {**BASE, "network": {"vpcCidr": "10.0.0.0/16", "vswitchCidr": "10.1.0.0/24"}},
        "tftrain:network.vswitchCidr",
        "a block inside vpcCidr 10.0.0.0/16",
    ),
    "image-cache-on-ack": Bad(
        {**ACK, "cluster": {**ACK["cluster"], "imageCache": True}},
        "tftrain:cluster.imageCache",
        "false unless cluster.kind is ask",
    ),
    "nfs-without-server": Bad(
        {**BASE, "storage": {"kind": "nfs"}}, "tftrain:storage.nfsServer", "the NFS server"
    ),
    "gpu-on-ask-without-spec": Bad(
        {**BASE, "cluster": {"kind": "ask"}, "worker": {"gpuCount": 1}},
        "tftrain:worker.gpuCount",
        "cluster.eciGpuSpec",
    ),
    "nas-on-existing-cluster": Bad(
        {**BASE, "storage": {"kind": "nas"}}, "tftrain:storage.kind", "nfs or hostPath"
    ),
    "public-clusterip-tensorboard": Bad(
        {**BASE, "tensorboard": {"serviceType": "ClusterIP", "public": True}},
        "tftrain:tensorboard.public",
        "false unless serviceType is LoadBalancer",
    ),
    "cloud-stack-without-zone": Bad(
        {**ACK, "network": {}},
        "tftrain:network.zoneId",
        "set when cluster.kind is ack or ask",
    ),
    "public-tensorboard-open-to-all": Bad(
        {**BASE, "tensorboard": {"public": True}},
        "tftrain:tensorboard.allowedSourceRanges",
        "a non-empty list of IPv4 CIDRs",
    ),
    "tensorboard-range-not-a-cidr": Bad(
        {**BASE, "tensorboard": {"public": True, "allowedSourceRanges": ["10.0.0.0/8", "me"]}},
        "tftrain:tensorboard.allowedSourceRanges[1]",
        "an IPv4 CIDR block such as 203.0.113.0/24",
    ),
    "tensorboard-open-to-the-internet": Bad(
        {**BASE, "tensorboard": {"public": True, "allowedSourceRanges": ["0.0.0.0/0"]}},
        "tftrain:tensorboard.allowedSourceRanges[0]",
        "not 0.0.0.0/0 (the whole Internet)",
    ),
    "tensorboard-ranges-on-clusterip": Bad(
        {
            **BASE,
            "tensorboard": {"serviceType": "ClusterIP", "allowedSourceRanges": ["10.0.0.0/8"]},
        },
        "tftrain:tensorboard.allowedSourceRanges",
        "empty unless serviceType is LoadBalancer",
    ),
    "uppercase-job-name": Bad(
        {**BASE, "job": {"name": "MNIST"}}, "tftrain:job.name", "a DNS label"
    ),
    "on-failure-restart-policy": Bad(
        {**BASE, "job": {"restartPolicy": "OnFailure"}},
        "tftrain:job.restartPolicy",
        "one of Never",
    ),
    "zero-deadline": Bad(
        {**BASE, "job": {"activeDeadlineSeconds": 0}},
        "tftrain:job.activeDeadlineSeconds",
        "an integer from 1 to 2147483647",
    ),
    "gang-scheduling-not-a-bool": Bad(
        {**ACK, "job": {"gangScheduling": "yes"}}, "tftrain:job.gangScheduling", "true or false"
    ),
    "pod-range-overlaps-vpc": Bad(
        {**BASE, "network": {"podCidr": "192.168.128.0/20"}},
        "tftrain:network.podCidr",
        "a block that does not overlap vpcCidr 192.168.0.0/16",
    ),
    "mount-path-under-tmp": Bad(
        {**BASE, "storage": {"mountPath": "/tmp/data"}},
        "tftrain:storage.mountPath",
        "outside /tmp",
    ),
    "gpus-on-ps": Bad({**BASE, "ps": {"gpuCount": 1}}, "tftrain:ps.gpuCount", "0: the bundled"),
    "two-chiefs": Bad(
        {**BASE, "chief": {"number": 2}}, "tftrain:chief.number", "an integer from 0 to 1"
    ),
    "mirrored-strategy-with-ps": Bad(
        {**BASE, "hyperparams": {"strategy": "multi_worker_mirrored"}},
        "tftrain:hyperparams.strategy",
        "auto or parameter_server when ps.number > 0",
    ),
    "fractional-epochs": Bad(
        {**BASE, "hyperparams": {"epochs": 1.5}},
        "tftrain:hyperparams.epochs",
        "an integer from 1 to 100000",
    ),
    "bad-memory-quantity": Bad(
        {**BASE, "worker": {"memory": "lots"}},
        "tftrain:worker.memory",
        "a positive Kubernetes quantity",
    ),
    "idle-gpu-pool": Bad(
        {**ACK, "cluster": {**ACK["cluster"], "gpuPool": {"size": 2}}},
        "tftrain:cluster.gpuPool.size",
        "0 when no replica requests a GPU",
    ),
    "relative-data-dir": Bad(
        {**BASE, "job": {"dataDir": "data/mnist"}}, "tftrain:job.dataDir", "an absolute path"
    ),
    "short-image-digest": Bad(
        {**BASE, "worker": {"image": "registry.example.com/tftrain/trainer@sha256:0badc0de"}},
        "tftrain:worker.image",
        "a sha256 digest is 64 lower-case hex digits",
    ),
    "upper-case-tensorboard-image": Bad(
        {**BASE, "tensorboard": {"image": "registry.example.com/TFTrain/board:1"}},
        "tftrain:tensorboard.image",
        "must be lower case",
    ),
    "spot-on-an-existing-cluster": Bad(
        {**BASE, "worker": {"spot": True}},
        "tftrain:worker.spot",
        "false on an existing cluster",
    ),
    "spot-cpu-group-on-ack": Bad(
        {**ACK, "ps": {"spot": True}, "cluster": {**ACK["cluster"], "spotGpuPool": {"maxSize": 2}}},
        "tftrain:ps.spot",
        "false unless gpuCount > 0",
    ),
    "spot-gpu-group-on-ack-without-a-spot-pool": Bad(
        {**ACK, "worker": {"gpuCount": 1, "spot": True}},
        "tftrain:worker.spot",
        "false unless cluster.spotGpuPool.maxSize > 0",
    ),
    "spot-pool-off-ack": Bad(
        {**BASE, "cluster": {"kind": "ask", "spotGpuPool": {"maxSize": 2}}},
        "tftrain:cluster.spotGpuPool.maxSize",
        "0 unless cluster.kind is ack",
    ),
    # Accepted before, then refused by Kubernetes or the cloud mid-deploy (issue 14).
    "job-name-starting-with-a-digit": Bad(
        {**BASE, "job": {"name": "1mnist"}}, "tftrain:job.name", "starting with a letter"
    ),
    "namespace-over-63": Bad(
        {**BASE, "job": {"namespace": "a" * 64}}, "tftrain:job.namespace", "at most 63"
    ),
    "run-id-over-63": Bad({**BASE, "job": {"runId": "r" * 64}}, "tftrain:job.runId", "DNS label"),
    "ttl-past-int32": Bad(
        {**BASE, "job": {"ttlSecondsAfterFinished": 2**31}},
        "tftrain:job.ttlSecondsAfterFinished",
        "an integer from 0 to 2147483647",
    ),
    "image-with-a-space": Bad(
        {"image": "registry.example.com/trainer :1"}, "tftrain:image", "an image reference"
    ),
    "empty-storage-size": Bad(
        {**BASE, "storage": {"size": ""}}, "tftrain:storage.size", "a size in Mi, Gi or Ti"
    ),
    "empty-instance-types": Bad(
        {**ACK, "cluster": {**ACK["cluster"], "cpuPool": {"size": 2, "instanceTypes": []}}},
        "tftrain:cluster.cpuPool.instanceTypes",
        "a non-empty list",
    ),
    "blank-instance-type": Bad(
        {**ACK, "cluster": {**ACK["cluster"], "cpuPool": {"size": 2, "instanceTypes": [" "]}}},
        "tftrain:cluster.cpuPool.instanceTypes[0]",
        "ECS instance type",
    ),
    "unknown-zone-string": Bad(
        {**BASE, "network": {"zoneId": "zone a"}}, "tftrain:network.zoneId", "a zone id"
    ),
    # Accepted before, but wrong.
    "mount-path-double-slash-tmp": Bad(
        {**BASE, "storage": {"mountPath": "//tmp"}}, "tftrain:storage.mountPath", "normalised"
    ),
    "mount-path-dot-dot-tmp": Bad(
        {**BASE, "storage": {"mountPath": "/data/../tmp"}}, "tftrain:storage.mountPath", "/tmp"
    ),
    "memory-in-millibytes": Bad(
        {**BASE, "worker": {"memory": "100m"}}, "tftrain:worker.memory", "quantity of memory"
    ),
    "cpu-in-gibibytes": Bad(
        {**BASE, "worker": {"cpu": "1.5Gi"}}, "tftrain:worker.cpu", "quantity of CPU"
    ),
    "command-as-empty-string": Bad(
        {**BASE, "job": {"command": ""}}, "tftrain:job.command", "a non-empty list"
    ),
    "kube-system-namespace": Bad(
        {**BASE, "job": {"namespace": "kube-system"}}, "tftrain:job.namespace", "kube-*"
    ),
    "ipv6-vpc": Bad(
        {**BASE, "network": {"vpcCidr": "fd00::/8"}}, "tftrain:network.vpcCidr", "an IPv4 CIDR"
    ),
    "section-as-scalar": Bad({**BASE, "job": "mnist"}, "tftrain:job", "a mapping with the keys"),
    "misspelt-section": Bad({**BASE, "confg": {}}, "tftrain:confg", "unknown key"),
    # What the trainer would refuse at start, retried backoffLimit times.
    "batch-not-divisible-by-mirrored-replicas": Bad(
        {**BASE, "ps": {"number": 0}},
        "tftrain:hyperparams.batchSize",
        "a multiple of 3: multi_worker_mirrored",
    ),
    "mirrored-replicas-with-unequal-gpus": Bad(
        {
            **BASE,
            "cluster": {"kind": "ask", "eciGpuSpec": "ecs.gn6i-c4g1.xlarge"},
            "storage": {"kind": "nas"},
            "ps": {"number": 0},
            "worker": {"number": 2, "gpuCount": 2},
        },
        "tftrain:chief.gpuCount",
        "as many devices",
    ),
    # The config fuzzer's traceback: no replica at all divided the batch by zero.
    "no-replica-at-all": Bad(
        {**BASE, "chief": {"number": 0}, "worker": {"number": 0}, "ps": {"number": 0}},
        "tftrain:worker.number",
        ">= 1 (or chief.number 1)",
    ),
    # 10^20 bytes: no ECS or ECI instance has it; the pods would stay Pending.
    "memory-no-instance-has": Bad(
        {**BASE, "worker": {"memory": "100000000000000000000"}},
        "tftrain:worker.memory",
        "at most 32Ti",
    ),
    "cpu-no-instance-has": Bad(
        {**BASE, "worker": {"cpu": "5000"}}, "tftrain:worker.cpu", "at most 1024"
    ),
    # ecs.gn6i-c4g1.xlarge: 4 vCPUs, 1 NVIDIA T4 (ECS instance families, gn6i table).
    "more-gpus-than-the-eci-spec-has": Bad(
        {
            **BASE,
            "cluster": {"kind": "ask", "eciGpuSpec": "ecs.gn6i-c4g1.xlarge"},
            "network": {"zoneId": "cn-hangzhou-i"},
            "hyperparams": {"batchSize": 256},
            "ps": {"number": 0},
            "chief": {"number": 0},
            "worker": {"number": 1, "gpuCount": 16},
        },
        "tftrain:worker.gpuCount",
        "at most 1: one ecs.gn6i-c4g1.xlarge pod has 1 GPU(s)",
    ),
    "more-cpu-than-the-eci-gpu-spec-has": Bad(
        {
            **BASE,
            "cluster": {"kind": "ask", "eciGpuSpec": "ecs.gn6i-c4g1.xlarge"},
            "network": {"zoneId": "cn-hangzhou-i"},
            "worker": {"gpuCount": 1, "cpu": "6"},
        },
        "tftrain:worker.cpu",
        "at most 4: one ecs.gn6i-c4g1.xlarge pod has no more",
    ),
    # ACK pools (infra/config/node_fit.py; the numbers are worked in tests/test_node_fit.py).
    "more-cpu-than-an-autoscaled-gpu-node-leaves": Bad(
        {**ACK, "worker": {"gpuCount": 1, "cpu": "3"}},
        "tftrain:worker.cpu",
        "at most 2800m: what one ecs.gn6i-c4g1.xlarge node of cluster.gpuPool can give a pod",
    ),
    "more-memory-than-an-autoscaled-gpu-node-leaves": Bad(
        {**ACK, "worker": {"gpuCount": 1, "memory": "12Gi"}},
        "tftrain:worker.memory",
        "at most 10685Mi: what one ecs.gn6i-c4g1.xlarge node of cluster.gpuPool can give a pod",
    ),
    "more-memory-than-a-cpu-node-leaves": Bad(
        {**ACK, "ps": {"memory": "12Gi"}},
        "tftrain:ps.memory",
        "at most 11653Mi: what one ecs.g7.xlarge node of cluster.cpuPool can give a pod",
    ),
    "tensorboard-bigger-than-a-cpu-node": Bad(
        {**ACK, "tensorboard": {"cpu": "4"}},
        "tftrain:tensorboard.cpu",
        "at most 3330m: what one ecs.g7.xlarge node of cluster.cpuPool",
    ),
    "more-gpus-than-a-gpu-node-has": Bad(
        {**ACK, "worker": {"gpuCount": 2}, "hyperparams": {"batchSize": 256}},
        "tftrain:worker.gpuCount",
        "at most 1: one ecs.gn6i-c4g1.xlarge node has 1 GPU(s)",
    ),
    # A pool of several types may start any of them: the smallest is what a pod can count on
    # (ecs.g7.2xlarge leaves 7320m and 27133Mi, ecs.g7.xlarge 3330m and 11653Mi).
    "more-cpu-than-the-smallest-type-of-a-pool-leaves": Bad(
        on_two_cpu_types({"cpu": "5"}),
        "tftrain:ps.cpu",
        "at most 3330m: what one ecs.g7.xlarge node of cluster.cpuPool",
    ),
    "more-memory-than-the-smallest-type-of-a-pool-leaves": Bad(
        on_two_cpu_types({"memory": "20Gi"}),
        "tftrain:ps.memory",
        "at most 11653Mi: what one ecs.g7.xlarge node of cluster.cpuPool",
    ),
    # ecs.gn6i-c24g1.12xlarge has 2 GPUs (48 vCPUs, 24 per GPU), ecs.gn6i-c4g1.xlarge 1.
    "more-gpus-than-the-smallest-type-of-a-pool-has": Bad(
        {
            **ACK,
            "cluster": {
                **ACK["cluster"],
                "gpuPool": {
                    "maxSize": 2,
                    "instanceTypes": ["ecs.gn6i-c24g1.12xlarge", "ecs.gn6i-c4g1.xlarge"],
                },
            },
            "worker": {"gpuCount": 2, "cpu": "2"},
            "hyperparams": {"batchSize": 256},
        },
        "tftrain:worker.gpuCount",
        "at most 1: one ecs.gn6i-c4g1.xlarge node has 1 GPU(s)",
    ),
    "run-stack-with-a-spot-gpu-pool": Bad(
        {
            **BASE,
            "cluster": {
                "kind": "ack",
                "role": "run",
                "platformStack": "o/tftrain/p",
                "spotGpuPool": {"maxSize": 2},
            },
        },
        "tftrain:cluster.spotGpuPool",
        "a cloud key, and a run stack (cluster.role run) creates no cloud resource",
    ),
    "a-spot-group-checked-against-the-gpu-types-as-autoscaled": Bad(
        {
            **ACK,
            "cluster": {**ACK["cluster"], "gpuPool": {"size": 1}, "spotGpuPool": {"maxSize": 2}},
            "worker": {"gpuCount": 1, "spot": True, "cpu": "3"},
        },
        "tftrain:worker.cpu",
        "at most 2800m",
    ),
    # storage.fileSystemId: a General-purpose NAS id (NAS API samples 31a8e4****, 1ca404****).
    "extreme-nas-file-system": Bad(
        {**ACK, "storage": {"fileSystemId": "extreme-0015abcd"}},
        "tftrain:storage.fileSystemId",
        "ten lower-case letters and digits such as 31a8e48eda",
    ),
    "file-system-id-in-capitals": Bad(
        {**ACK, "storage": {"fileSystemId": "31A8E48EDA"}},
        "tftrain:storage.fileSystemId",
        "existing General-purpose NAS file system",
    ),
    "file-system-id-without-nas": Bad(
        {
            **BASE,
            "storage": {"kind": "nfs", "nfsServer": "10.0.0.5", "fileSystemId": "31a8e48eda"},
        },
        "tftrain:storage.fileSystemId",
        "empty unless storage.kind is nas",
    ),
    # The OSS input and export (issue 21): a run's export must never land in what runs read.
    "export-inside-input": Bad(
        {
            **ACK,
            "data": {"bucket": "team-data", "inputPrefix": "mnist/", "exportPrefix": "mnist/out/"},
        },
        "tftrain:data.exportPrefix",
        "apart from inputPrefix mnist/",
    ),
    "export-equals-input": Bad(
        {**ACK, "data": {"bucket": "team-data", "inputPrefix": "mnist/", "exportPrefix": "mnist/"}},
        "tftrain:data.exportPrefix",
        "neither inside the other",
    ),
    "input-inside-export": Bad(
        {**ACK, "data": {"bucket": "team-data", "inputPrefix": "exports/a/"}},
        "tftrain:data.exportPrefix",
        "apart from inputPrefix",
    ),
    "input-is-the-whole-bucket": Bad(
        {**ACK, "data": {"bucket": "team-data"}},
        "tftrain:data.inputPrefix",
        "empty is the whole bucket",
    ),
    "export-prefix-with-a-ram-wildcard": Bad(
        # RAM would read `bucket/*/*` as every prefix: the input's too.
        {**ACK, "data": {"bucket": "team-data", "inputPrefix": "mnist/", "exportPrefix": "*/"}},
        "tftrain:data.exportPrefix",
        "no * or ? (RAM wildcards)",
    ),
    "input-prefix-with-a-ram-wildcard": Bad(
        {**ACK, "data": {"bucket": "team-data", "inputPrefix": "mn?st/"}},
        "tftrain:data.inputPrefix",
        "no * or ? (RAM wildcards)",
    ),
    "bucket-name-oss-refuses": Bad(
        {**ACK, "data": {"bucket": "Team_Data", "inputPrefix": "mnist/"}},
        "tftrain:data.bucket",
        "an OSS bucket name",
    ),
    "ask-without-oss-credentials": Bad(
        {
            **ASK,
            "data": {"bucket": "team-data", "inputPrefix": "mnist/"},
        },
        "tftrain:data.accessKeyId",
        "a RAM user's AccessKey as Pulumi secrets",
    ),
    # Issue 27: a Secret in the namespace the stack creates cannot exist before the first up.
    "credentials-secret-in-the-jobs-own-namespace": Bad(
        {
            **ASK,
            "data": {
                "bucket": "team-data",
                "inputPrefix": "mnist/",
                "credentialsSecret": "tftrain/oss-credentials",
            },
        },
        "tftrain:data.credentialsSecret",
        "a Secret in a namespace that exists before `up`, not job.namespace tftrain",
    ),
    "credentials-secret-without-its-namespace": Bad(
        {
            **BASE,
            "data": {
                "bucket": "team-data",
                "inputPrefix": "mnist/",
                "credentialsSecret": "oss-credentials",
            },
        },
        "tftrain:data.credentialsSecret",
        "<namespace>/<name> of a Secret you manage",
    ),
    "a-plaintext-access-key-secret": Bad(
        {
            **ASK,
            "data": {
                "bucket": "team-data",
                "inputPrefix": "mnist/",
                "accessKeyId": "LTAI5t",
                "accessKeySecret": "typed-in-the-clear",
            },
        },
        "tftrain:data.accessKeySecret",
        "a Pulumi secret",
    ),
    # The README says the kubeconfig exists only as a secret: typed without --secret, refused.
    "plaintext-kubeconfig": Bad(
        {**BASE, "kubeconfig": "apiVersion: v1\nkind: Config\n"},
        "tftrain:kubeconfig",
        "must be a Pulumi secret",
    ),
    "another-accounts-bucket-the-stack-creates": Bad(
        {
            **ACK,
            "data": {
                "createBucket": True,
                "bucket": "team-data",
                "inputPrefix": "mnist/",
                "bucketOwner": "another-account",
            },
        },
        "tftrain:data.bucketOwner",
        "another-account only with data.bucket naming that account's bucket",
    ),
    "rrsa-on-ask": Bad(
        {
            **BASE,
            "cluster": {"kind": "ask"},
            "network": {"zoneId": "cn-hangzhou-i"},
            "storage": {"kind": "nas"},
            "data": {"bucket": "team-data", "inputPrefix": "mnist/", "credentials": "rrsa"},
        },
        "tftrain:data.credentials",
        "secret or auto on ask",
    ),
    "existing-without-endpoint": Bad(
        {
            **BASE,
            "data": {
                "bucket": "team-data",
                "inputPrefix": "mnist/",
                "credentialsSecret": "oss/oss-credentials",
            },
        },
        "tftrain:data.endpoint",
        "OSS endpoint",
    ),
    "existing-rrsa-without-role": Bad(
        {
            **BASE,
            "data": {
                "bucket": "team-data",
                "inputPrefix": "mnist/",
                "credentials": "rrsa",
                "endpoint": "oss-cn-hangzhou-internal.aliyuncs.com",
            },
        },
        "tftrain:data.rrsaRoleName",
        "RAM role",
    ),
    "create-bucket-without-an-input-prefix": Bad(
        {**ACK, "data": {"createBucket": True}}, "tftrain:data.inputPrefix", "a prefix"
    ),
    # Platform and run stacks (docs/teams.md "Teams and many runs").
    "platform-with-the-volumes-credentials": Bad(
        {
            "cluster": {"kind": "ask", "role": "platform"},
            "network": {"zoneId": "cn-hangzhou-i"},
            "data": {
                "createBucket": True,
                "inputPrefix": "mnist/",
                "credentialsSecret": "oss/oss-credentials",
            },
        },
        "tftrain:data.credentialsSecret",
        "a run's key, and a platform stack (cluster.role platform) has no run",
    ),
    "run-stack-on-an-existing-cluster": Bad(
        {**BASE, "cluster": {"role": "run", "platformStack": "o/tftrain/p"}},
        "tftrain:cluster.role",
        "standalone when cluster.kind is existing",
    ),
    "run-stack-without-its-platform": Bad(
        {**BASE, "cluster": {"kind": "ack", "role": "run"}},
        "tftrain:cluster.platformStack",
        "<organization>/<project>/<stack> of the platform stack",
    ),
    "platform-stack-named-outside-a-run": Bad(
        {**ACK, "cluster": {**ACK["cluster"], "platformStack": "o/tftrain/p"}},
        "tftrain:cluster.platformStack",
        "empty unless cluster.role is run",
    ),
    "platform-stack-not-fully-qualified": Bad(
        {**BASE, "cluster": {"kind": "ack", "role": "run", "platformStack": "platform-ack"}},
        "tftrain:cluster.platformStack",
        "<organization>/<project>/<stack>",
    ),
    "run-stack-with-network-keys": Bad(
        {**ACK, "cluster": {"kind": "ack", "role": "run", "platformStack": "o/tftrain/p"}},
        "tftrain:network",
        "a cloud key, and a run stack (cluster.role run) creates no cloud resource",
    ),
    "run-stack-with-a-node-pool": Bad(
        {
            **BASE,
            "cluster": {"kind": "ack", "role": "run", "platformStack": "o/t/p", "cpuPool": {}},
        },
        "tftrain:cluster.cpuPool",
        "set it in its platform stack",
    ),
    "run-stack-with-a-public-tensorboard-allow-list": Bad(
        {
            **BASE,
            "cluster": {"kind": "ack", "role": "run", "platformStack": "o/tftrain/p"},
            "tensorboard": {"public": True, "allowedSourceRanges": ["203.0.113.0/24"]},
        },
        "tftrain:tensorboard.allowedSourceRanges",
        "empty in a run stack",
    ),
    # Pull credentials are a run's (a Secret in its namespace); the NAS is the platform's.
    "platform-stack-with-registry-credentials": Bad(
        {
            "cluster": {**ACK["cluster"], "role": "platform"},
            "network": ACK["network"],
            "imageRegistry": {"server": "registry.example.com", "username": "u"},
        },
        "tftrain:imageRegistry",
        "a platform stack (cluster.role platform) has no run",
    ),
    "run-stack-naming-a-file-system": Bad(
        {
            **BASE,
            "cluster": {"kind": "ack", "role": "run", "platformStack": "o/tftrain/p"},
            "storage": {"kind": "nas", "fileSystemId": "31a8e48eda"},
        },
        "tftrain:storage.fileSystemId",
        "set it in its platform stack",
    ),
    "platform-stack-with-a-run": Bad(
        {**ACK, "cluster": {**ACK["cluster"], "role": "platform"}},
        "tftrain:image",
        "a platform stack (cluster.role platform) has no run",
    ),
    # A budget (infra.pricing.budget checks the amounts; these are the keys' own rules).
    "budget-per-run-without-a-deadline": Bad(
        {**BASE, "budget": {"maxCnyPerRun": 5}},
        "tftrain:budget.maxCnyPerRun",
        "unset unless job.activeDeadlineSeconds is set: without it a run has no most",
    ),
    "budget-per-sweep-without-a-deadline": Bad(
        {
            **BASE,
            "budget": {"maxCnyPerSweep": 5},
            "sweep": {"parameters": {"hyperparams.learningRate": {"values": [0.1, 0.2]}}},
        },
        "tftrain:budget.maxCnyPerSweep",
        "unset unless job.activeDeadlineSeconds is set",
    ),
    "budget-per-sweep-without-a-sweep": Bad(
        {**BASE, "job": {"activeDeadlineSeconds": 60}, "budget": {"maxCnyPerSweep": 5}},
        "tftrain:budget.maxCnyPerSweep",
        "unset unless the stack has a sweep",
    ),
    "budget-of-zero": Bad(
        {**BASE, "budget": {"maxCnyPerHour": 0}},
        "tftrain:budget.maxCnyPerHour",
        "an amount in CNY greater than 0",
    ),
    "budget-per-run-on-a-platform": Bad(
        {
            **{key: value for key, value in ACK.items() if key != "image"},
            "cluster": {**ACK["cluster"], "role": "platform"},
            "budget": {"maxCnyPerRun": 5},
        },
        "tftrain:budget.maxCnyPerRun",
        "a platform stack (cluster.role platform) has no run",
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_parse_config_names_the_key_and_what_is_allowed(case: Bad) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(case.config)
    problem = next((p for p in error.value.problems if p.startswith(case.key)), None)
    assert problem is not None, f"no problem names {case.key}: {error.value.problems}"
    assert case.allowed in problem


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_the_program_registers_nothing(case: Bad) -> None:
    run = run_program(case.config, raise_errors=False)
    assert isinstance(run.error, pulumi.RunError)
    assert case.key in str(run.error)
    assert run.resources == []
    assert run.calls == []


@pytest.mark.parametrize("version", ["1.26.0", "1.31.1", "latest"])
def test_an_existing_cluster_from_1_26_is_accepted(version: str) -> None:
    cluster = {"kind": "existing", "kubernetesVersion": version}
    assert parse_config({**BASE, "cluster": cluster}).cluster.kubernetes_version == version


def test_a_good_config_does_register() -> None:
    # The control: the same harness with a valid config registers the stack.
    run = run_program(BASE)
    assert run.error is None
    assert run.of_type("pulumi:providers:kubernetes")


def test_a_key_that_is_not_a_string_fails_the_program_with_its_name() -> None:
    # A YAML `1: x` at the top of `config:` reaches the program as the JSON key "1": the
    # language host hands config over as a JSON object (PULUMI_CONFIG), whose keys are strings.
    config: dict[Any, str] = {"tftrain:image": IMAGE, 1: "x"}
    run = mock_deploy.run_program(
        config, stack="test", secret_keys=[], answers=PlausibleCloud(), raise_errors=False
    )
    assert isinstance(run.error, pulumi.RunError)
    assert "  - 1: unknown config namespace; keys are <namespace>:<name>" in str(run.error)
    assert run.resources == []


def test_a_misspelt_namespace_fails_the_program() -> None:
    # Pulumi keeps config of any namespace; `tftrian:worker` would be silently ignored.
    run = run_program({**BASE, "tftrian:worker": {"number": 4}}, raise_errors=False)
    assert isinstance(run.error, pulumi.RunError)
    assert "tftrian:worker: unknown config namespace, did you mean tftrain?" in str(run.error)
    assert run.resources == []
