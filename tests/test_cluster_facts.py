"""The facts the manifests place but the stack config does not hold (infra.platform.
cluster_facts): what each comes from, per stack shape, worked by hand from docs/config.md,
docs/data.md ("Bring your data") and docs/deploy.md (run stacks read the platform's outputs).

Offline, each fact the program would pass is a placeholder a reader recognises; in the
program, the value it passes; a value the config states (data.endpoint, data.bucket,
data.rrsaRoleName, storage.nfsServer) wins over both."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from infra.config import StackConfig, parse_config, read_stack_file, stack_file
from infra.platform.cluster_facts import ClusterFacts, cluster_facts, needs_load_balancer_acl

# What the program hands over while `pulumi up` runs (made-up values of the right shape).
PASSED = {
    "nas_domain": "0a1b2c3d4e-xyz12.cn-hangzhou.nas.aliyuncs.com",
    "load_balancer_acl_id": "acl-bp1example",
    "oss_endpoint": "oss-cn-shanghai-internal.aliyuncs.com",
    "oss_role_name": "tftrain-ack-gpu-oss",
    "oss_bucket": "tftrain-ack-gpu-1234567890",
}


def stack(name: str, **sections: dict[str, Any]) -> StackConfig:
    raw = copy.deepcopy(read_stack_file(stack_file(name)))
    for key, value in sections.items():
        raw[key] = {**raw.get(key, {}), **value}
    return parse_config(raw)


OPEN_BOARD = {"allowedSourceRanges": ["203.0.113.0/24"]}


def test_ack_with_a_bucket_it_creates_offline() -> None:
    # ack-gpu: NAS, a bucket it creates (no data.bucket), data.endpoint stated, RRSA (ack's).
    assert cluster_facts(stack("ack-gpu", tensorboard=OPEN_BOARD)) == ClusterFacts(
        cluster_kind="ack",
        nfs_server="<nas-mount-target-domain>",
        load_balancer_acl_id="<tensorboard-slb-acl-id>",
        oss_endpoint="oss-cn-hangzhou-internal.aliyuncs.com",
        oss_role_name="<oss-rrsa-role-name>",
        oss_bucket="<tftrain-<stack>-<account-id>>",
    )


def test_ack_with_a_bucket_it_creates_in_the_program() -> None:
    facts = cluster_facts(stack("ack-gpu", tensorboard=OPEN_BOARD), **PASSED)
    assert facts == ClusterFacts(
        cluster_kind="ack",
        nfs_server=PASSED["nas_domain"],
        load_balancer_acl_id=PASSED["load_balancer_acl_id"],
        oss_endpoint="oss-cn-hangzhou-internal.aliyuncs.com",  # data.endpoint wins
        oss_role_name=PASSED["oss_role_name"],
        oss_bucket=PASSED["oss_bucket"],
    )


def test_what_the_config_states_wins_over_what_the_program_passes() -> None:
    config = stack(
        "ack-gpu",
        data={"endpoint": "", "bucket": "team-data-01", "createBucket": False,
              "rrsaRoleName": "team-oss-reader", "localInputDir": ""},
    )  # fmt: skip
    facts = cluster_facts(config, **PASSED)
    assert (facts.oss_endpoint, facts.oss_bucket, facts.oss_role_name) == (
        PASSED["oss_endpoint"],  # no data.endpoint: the one the program derived
        "team-data-01",
        "team-oss-reader",
    )
    offline = cluster_facts(config)
    assert (offline.oss_endpoint, offline.oss_bucket, offline.oss_role_name) == (
        "<oss-region-internal-endpoint>",
        "team-data-01",
        "team-oss-reader",
    )


def test_a_run_stack_s_objects_name_no_volume_fact_of_its_own() -> None:
    # Its platform issues its namespace's volumes (docs/teams.md), so a run stack's own
    # objects name no NAS server, OSS endpoint, role or bucket: not even its offline
    # placeholders (hand-written here as a standalone stack's offline render shows them).
    import json

    from tests.test_manifests_schema import objects_for

    text = json.dumps(objects_for("run-ack"))
    for placeholder in (
        "<nas-mount-target-domain>",
        "<oss-region-internal-endpoint>",
        "<oss-rrsa-role-name>",
        "<tftrain-<stack>-<account-id>>",
    ):
        assert placeholder not in text
    assert cluster_facts(stack("run-ack")).cluster_kind == "ack"  # the run's own cluster.kind


def test_a_run_stack_in_the_program_takes_the_platform_s_values() -> None:
    passed = {k: v for k, v in PASSED.items() if k != "load_balancer_acl_id"}
    assert cluster_facts(stack("run-ack"), **passed) == ClusterFacts(
        cluster_kind="ack",
        nfs_server=PASSED["nas_domain"],
        oss_endpoint=PASSED["oss_endpoint"],
        oss_role_name=PASSED["oss_role_name"],
        oss_bucket=PASSED["oss_bucket"],
    )


def test_an_existing_cluster_with_an_nfs_server_and_keys_in_a_secret() -> None:
    config = stack(
        "dev",
        storage={"kind": "nfs", "nfsServer": "10.0.0.5", "nfsPath": "/exports/tftrain"},
        data={"bucket": "team-data-01", "inputPrefix": "mnist/", "exportPrefix": "results/",
              "credentialsSecret": "oss/oss-credentials",
              "endpoint": "oss-cn-hangzhou-internal.aliyuncs.com"},
    )  # fmt: skip
    assert cluster_facts(config, **PASSED) == ClusterFacts(
        cluster_kind="existing",
        nfs_server="10.0.0.5",
        oss_endpoint="oss-cn-hangzhou-internal.aliyuncs.com",
        oss_role_name="",  # keys, not RRSA: no role
        oss_bucket="team-data-01",
    )


def test_a_hostpath_stack_without_data_has_no_facts() -> None:
    assert cluster_facts(stack("dev"), **PASSED) == ClusterFacts(
        cluster_kind="existing", nfs_server=""
    )


@pytest.mark.parametrize(
    ("name", "board", "expected"),
    [
        ("ack-gpu", OPEN_BOARD, True),
        ("ask-eci", OPEN_BOARD, True),
        ("ack-gpu", {}, False),  # no allow-list: no ACL to make
        # (ranges with serviceType ClusterIP: the config refuses them)
        ("ack-gpu", {**OPEN_BOARD, "enabled": False}, False),  # no TensorBoard
        ("dev", {**OPEN_BOARD, "serviceType": "LoadBalancer"}, False),  # not the stack's cloud
    ],
    ids=["ack", "ask", "no-ranges", "no-tensorboard", "existing"],
)
def test_which_stacks_get_a_load_balancer_acl(
    name: str, board: dict[str, Any], expected: bool
) -> None:
    config = stack(name, tensorboard=board)
    assert needs_load_balancer_acl(config) is expected
    offline = "<tensorboard-slb-acl-id>" if expected else ""
    assert cluster_facts(config).load_balancer_acl_id == offline
