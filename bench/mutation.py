"""Mutation score of every module of infra/ and trainer/: how many one-token changes the
tests catch, per module.

mutmut 3 (`[tool.mutmut]` in pyproject.toml: every module of infra/ and trainer/ against the
whole suite) makes every mutant of a module, runs the selected tests once to learn which
tests call each function, then runs each mutant against only those tests, fastest first,
stopping at the first failure. A run over the whole tree would pay the whole suite's stats
run for every module; this script runs one module at a time instead, each in its own copy
of the tracked files (.mutation/<module>/, so each keeps its own mutmut cache), with the
tests that reach the module in at most DEPTH imports (through test helpers and package
`__init__`s: what exercises it) plus EXTRA_TESTS, niced (the machine is shared). It writes
the score per module to docs/mutation-score.md: the modules run now, the rows of earlier
runs for the others, and "not yet run" for a module no run has covered.

    .venv/bin/python -m bench.mutation                         # every module (hours)
    .venv/bin/python -m bench.mutation infra.records.report 'infra.status.*'   # these modules
    .venv/bin/python -m bench.mutation --list                  # modules and their tests
    .venv/bin/python -m bench.mutation --survivors infra.records.report   # its survivors again
    .venv/bin/python -m bench.mutation --not-caught infra.program   # the score file's not caught
    .venv/bin/python -m bench.mutation --score-only            # rewrite the score file
    cd .mutation/<module> && ../../.venv/bin/mutmut show <mutant>   # what a survivor changed

A mutant counts as caught when a test fails or it times out (a loop that no longer ends).
Under a mutant, tests/conftest.py runs the files that launch processes last (mutmut stops at
the first failure) and fails a test still running after 240 s (a launcher that never handles
an exit sleeps, which mutmut's CPU-time limit does not end).
A function that runs only in a child process the tests start (CHILD_PROCESS_TESTS) is
invisible to mutmut's record of which tests call what: its mutants are run against the
tests named there, directly.
EQUIVALENT lists mutants no test can catch because they change nothing observable, each
with the reason; they are left out of the score. The shell scripts (supervise.sh,
export.sh) have their own run: bench/shell_mutation.py. Not part of ./scripts/test.sh.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter, deque
from collections.abc import Iterable, Sequence
from pathlib import Path

from bench.session import TIMED_OUT, run_session, stop_on_sigterm

ROOT = Path(__file__).resolve().parent.parent
SCORE_FILE = ROOT / "docs" / "mutation-score.md"
WORK = ROOT / ".mutation"
MUTMUT = Path(sys.executable).with_name("mutmut")
SOURCES = ("infra", "trainer")
# "segfault": the mutant crashed the test process, which fails the run as a failed test does.
CAUGHT = {"killed", "timeout", "segfault"}
# The modules run again once tests/conftest.py gave mutmut's forks a thread pool of their own
# (the score file's header says why).
RUN_AGAIN = (
    "infra.cloud.cluster",
    "infra.cloud.load_balancer_acl",
    "infra.cloud.nas",
    "infra.cloud.network",
    "infra.cloud.pod_isolation",
    "infra.config.stack_file",
    "infra.local.cli",
    "infra.local.netns",
    "infra.local.plan",
    "infra.local.sweep",
    "infra.manifests.network_policy",
    "infra.manifests.oss",
    "infra.manifests.run_access",
    "infra.manifests.secret_env",
    "infra.manifests.security",
    "infra.manifests.storage",
    "infra.manifests.tensorboard",
    "infra.manifests.workloads",
    "infra.mock_deploy",
    "infra.program",
    "infra.render.actions",
    "infra.render.cloud",
    "infra.render.diff",
    "infra.render.parsed",
    "infra.render.sweep",
    "trainer.distribution",
    "trainer.outputs",
)
NOT_RUN = "not checked"  # a run stopped before it, or a mutant newer than the last run
RECHECKED = "tftrain-rechecked.json"  # in a copy's mutants/: recheck_not_caught's verdicts
GONE = "gone"  # a recheck's verdict for a listed mutant today's source no longer makes
TARGET = 0.90
# How many imports away from a test file a module may be and still have it selected: the
# test itself (1), a helper or package the test imports (2).
DEPTH = 2
# Tests that exercise a module without importing it that closely: they run it as a process
# (the launcher, the supervisor's readers) or reach it through the program.
EXTRA_TESTS: dict[str, tuple[str, ...]] = {
    "infra.config.sweep_points": ("tests/test_sweep_config.py", "tests/test_sweep_bounds.py"),
    "infra.status.causes": ("tests/test_status_cloud.py", "tests/test_watch_a_run.py"),
    "infra.status.local": ("tests/test_run_state_restarts.py",),
    "infra.sweep.plot": ("tests/test_sweep_results.py", "tests/test_sweep_plot.py"),
    "infra.records.run_state": (
        "tests/test_run_state_restarts.py",
        "tests/test_run_state_records.py",
        "tests/test_watch_a_run.py",
    ),
    "infra.records.report": ("tests/test_run_report.py",),
    "infra.charts": (
        "tests/test_charts.py",
        "tests/test_run_report.py",
        "tests/test_sweep_plot.py",
    ),
    "infra.render.exposure": ("tests/test_golden_consequences.py", "tests/test_render_summary.py"),
    "infra.manifests.placement": (
        "tests/test_eci_isolation.py",
        "tests/test_spot_placement.py",
        "tests/test_stacks_program.py",
    ),
    # The review's parts, reached through `summarize` (the golden cases and its rules) and
    # through `--diff` (test_render's review tests).
    "infra.render.data": ("tests/test_render_data.py", "tests/test_render_summary.py"),
    "infra.render.gpus": ("tests/test_render_summary.py",),
    "infra.render.run_line": ("tests/test_render_summary.py", "tests/test_sweep_config.py"),
    "infra.render.sweep": ("tests/test_render_summary.py", "tests/test_sweep_config.py"),
    **dict.fromkeys(
        ("infra.render.diff", "infra.render.relabel", "infra.render.review_summary"),
        ("tests/test_render.py", "tests/test_render_summary.py"),
    ),
    "infra.replica_plan.trainer_env": (
        "tests/test_local_plan.py",
        "tests/test_secret_env.py",
        "tests/test_trainer_env.py",
    ),
}

# Modules whose package re-exports them to nearly every test (infra.config): their own
# tests instead of everything that parses a config.
TESTS: dict[str, tuple[str, ...]] = {
    "infra.config.sweep": (
        "tests/test_sweep_config.py",
        "tests/test_sweep_bounds.py",
        "tests/test_sweep_trial_keys.py",
    ),
    "infra.config.sweep_platform": (
        "tests/test_sweep_config.py",
        "tests/test_sweep_bounds.py",
        "tests/test_sweep_trial_keys.py",
    ),
    # The components one at a time, the whole program under mocks for ask-eci's variants, and
    # up after destroy (the NAS adoption). (tests/test_api_server_reach.py runs the program
    # in a subprocess that finds no code under mutmut's copy: it fails before any mutant.)
    **{
        module: (
            "tests/test_cloud_components.py",
            "tests/test_cloud_tree.py",
            "tests/test_eci_isolation.py",
            "tests/test_up_after_destroy.py",
        )
        for module in ("infra.cloud.network", "infra.cloud.nas")
    },
    "infra.cloud.pod_isolation": ("tests/test_cloud_tree.py", "tests/test_eci_isolation.py"),
    # The cloud layer's other modules: the components under mocks, the preflight checks' own
    # tests, and the whole program only where the module's behaviour is the program's.
    "infra.cloud": ("tests/test_cloud_components.py",),
    "infra.cloud.api_server_reach": (
        "tests/test_api_server_reach.py",
        "tests/test_cloud_api_server_reach.py",
    ),
    # Not test_gpu_driver.py: its trainer subprocess cannot run from the mutated copy, so the
    # stats run fails before any mutant (the pools' driver label is test_cloud_components').
    "infra.cloud.cluster": (
        "tests/test_cloud_components.py",
        "tests/test_cloud_node_pools.py",
        "tests/test_cloud_tree.py",
        "tests/test_eci_isolation.py",
    ),
    # Its own tests, with the lookup stubbed: the components' tests (the program for every
    # stack, minutes per stats run) reach its lookup and refusal too, and catch nothing more.
    "infra.cloud.kubernetes_version": ("tests/test_cloud_kubernetes_version.py",),
    "infra.cloud.load_balancer_acl": ("tests/test_cloud_components.py", "tests/test_cloud_tree.py"),
    "infra.cloud.lookup": (
        "tests/test_bucket_ownership.py",
        "tests/test_cloud_lookup.py",
        "tests/test_zone_offers.py",
    ),
    # The naming rule on its own (every component's names come from the one function).
    "infra.cloud.naming": ("tests/test_cloud_naming.py",),
    "infra.cloud.zone_offers": ("tests/test_cloud_components.py", "tests/test_zone_offers.py"),
    # Constants only (no function, so no mutant): the pools that read them. Not
    # test_gpu_driver.py, whose trainer subprocess cannot run from the mutated copy.
    "infra.platform.gpu_driver": ("tests/test_cloud_components.py",),
    "infra.program_dir": (
        "tests/test_engine_cwd.py",
        "tests/test_oss_access.py",
        "tests/test_program_dir.py",
    ),
    "infra.mock_deploy": (
        "tests/test_engine_cwd.py",
        "tests/test_mock_deploy.py",
        "tests/test_mock_deploy_recording.py",
        "tests/test_mock_deploy_tree.py",
        "tests/test_provider_identity.py",
        "tests/test_run_namespaces.py",
    ),
    # The program: every test file that runs it under mocks (each takes seconds per mutant:
    # the whole program runs per test), but test_render.py, whose diff tests need a git
    # checkout the copy is not, and test_gpu_driver.py / test_engine_cwd.py, whose
    # subprocesses find no code under mutmut's copy. Its refusals (a bad key, a budget, an
    # unreachable API server) are held by test_bad_configs.py, test_pricing.py and
    # test_cloud_api_server_reach.py.
    "infra.program": (
        "tests/test_api_server_reach.py",
        "tests/test_bad_configs.py",
        "tests/test_bucket_acl.py",
        "tests/test_bucket_ownership.py",
        "tests/test_cloud_api_server_reach.py",
        "tests/test_cloud_components.py",
        "tests/test_cloud_tree.py",
        "tests/test_config_properties.py",
        "tests/test_eci_isolation.py",
        "tests/test_export_in_pods.py",
        "tests/test_finished_runs.py",
        "tests/test_force_new_fields.py",
        "tests/test_image_registry.py",
        "tests/test_mock_deploy_recording.py",
        "tests/test_mock_deploy_tree.py",
        "tests/test_one_reading.py",
        "tests/test_oss_access.py",
        "tests/test_oss_data.py",
        "tests/test_platform_stacks.py",
        "tests/test_platform_volumes.py",
        "tests/test_pricing.py",
        "tests/test_program_existing_cluster.py",
        "tests/test_program_exports.py",
        "tests/test_provider_identity.py",
        "tests/test_run_namespaces.py",
        "tests/test_run_namespaces_order.py",
        "tests/test_secret_env.py",
        "tests/test_stacks_program.py",
        "tests/test_sweep_config.py",
        "tests/test_up_after_destroy.py",
        "tests/test_zone_offers.py",
    ),
    # The trainer's SIGTERM steps: the fast tests, which call them in the test process too
    # (mutmut counts only calls it sees there); the multi-process ones are @slow.
    "trainer.preemption": ("tests/test_preemption.py",),
    "trainer.process_exit": ("tests/test_preemption.py",),
    # The loop's bookkeeping and the progress lines with stand-ins (fast); the training
    # itself only multi-process runs observe (test_fault_tolerance.py and others, @slow).
    "trainer.train_loop": ("tests/test_train_to_end.py", "tests/test_train_loop_run.py"),
    "trainer.progress": ("tests/test_progress_report.py",),
    # Tiny data sets written by the test, then the bundled files (50 MB to decompress).
    "trainer.data": ("tests/test_trainer_data_files.py", "tests/test_trainer_data.py"),
    "trainer.checksums": (
        "tests/test_trainer_files.py",
        "tests/test_trainer_data_files.py",
        "tests/test_checkpoint_store.py",
    ),
    "trainer.output_dir": ("tests/test_trainer_files.py",),
    "trainer.outputs": ("tests/test_trainer_outputs.py",),
    "trainer.evaluator": ("tests/test_evaluator_loop.py",),
    # With one training run in process: its losses follow the optimizer and its schedule.
    "trainer.model": ("tests/test_trainer_model.py", "tests/test_train_loop_run.py"),
    # Not test_gpu_driver.py: its Pulumi mocks (gRPC) do not survive the fork server.
    "trainer.gpu_check": ("tests/test_gpu_check.py",),
    # Its own clock-driven tests; test_train_loop_run.py (which imports it to watch what the
    # loop tells it) runs TensorFlow, which a run without the fork server cannot fork.
    "trainer.watchdog": ("tests/test_watchdog.py",),
    "trainer.distribution": (
        "tests/test_distribution_steps.py",
        "tests/test_training_batches.py",
        "tests/test_train_loop_run.py",
    ),
    "trainer.__main__": ("tests/test_trainer_main.py",),
    # Its tests start servers in processes of their own (a replica's imports), and the one
    # in-process server test reaches it through trainer.server.
    "trainer.grpc_server": ("tests/test_grpc_server.py", "tests/test_trainer_server.py"),
    # The package's docstring only (no code, no mutant): one cheap file, not the 11 that
    # import the package (TensorFlow ones among them).
    "trainer": ("tests/test_trainer_files.py",),
    # Not test_bring_your_data.py: its whole-launcher runs add minutes per mutant.
    "trainer.settings": (
        "tests/test_trainer_settings.py",
        "tests/test_keep_checkpoints.py",
        "tests/test_trainer_main.py",
    ),
    "trainer.startup": ("tests/test_trainer_files.py",),
    # Not test_everyday_verbs.py: a child one of its tests leaves behind is reaped by
    # mutmut's own wait for its workers, which then stops with a KeyError.
    "infra.cli": ("tests/test_front_door.py",),
    # Its own tables, the plans built on it, the launcher's plan: what reads the addresses and
    # TF_CONFIG (the whole-program tests that also reach it add minutes and catch nothing more).
    "infra.topology": (
        "tests/test_topology.py",
        "tests/test_topology_rules.py",
        "tests/test_replica_plan.py",
        "tests/test_local_plan.py",
    ),
    "infra.platform.cluster_facts": ("tests/test_cluster_facts.py", "tests/test_oss_data.py"),
    "infra.completion": ("tests/test_front_door.py",),
    # The reader, the model and its words: the tests that parse configs for what they
    # accept and refuse (not the program's stack tests, which reach them 60 times over); the
    # property draws (a minute) are left out, as the schema's own tests cover the schema.
    "infra.config": (
        "tests/test_bad_configs.py",
        "tests/test_config.py",
        "tests/test_config_package.py",
        "tests/test_one_reading.py",
        "tests/test_rule_messages.py",
        "tests/test_secret_env.py",
        "tests/test_stack_file.py",
        "tests/test_sweep_config.py",
    ),
    "infra.config.errors": (
        "tests/test_bad_configs.py",
        "tests/test_config.py",
        "tests/test_config_errors.py",
        "tests/test_rule_messages.py",
    ),
    "infra.config.model": (
        "tests/test_bad_configs.py",
        "tests/test_config.py",
        "tests/test_config_model.py",
        "tests/test_config_ranges.py",
        "tests/test_config_schema.py",
        "tests/test_replica_plan.py",
        "tests/test_roles.py",
        "tests/test_rule_messages.py",
        "tests/test_secret_env.py",
        "tests/test_topology_rules.py",
    ),
    "infra.config.schema": ("tests/test_config_schema.py",),
    "infra.config.stack_file": (
        "tests/test_bad_configs.py",
        "tests/test_config.py",
        "tests/test_config_schema.py",
        "tests/test_pricing.py",
        "tests/test_review_config_changes.py",
        "tests/test_stack_file.py",
    ),
    "infra.config.types": (
        "tests/test_bad_configs.py",
        "tests/test_config.py",
        "tests/test_config_errors.py",
        "tests/test_config_model.py",
        "tests/test_config_ranges.py",
        # The factories on their own: the model's types are made at import, before a mutant.
        "tests/test_config_types.py",
        "tests/test_config_schema.py",
        "tests/test_image_ref.py",
        "tests/test_rule_messages.py",
        "tests/test_secret_env.py",
    ),
    "infra.cloud.oss": (
        "tests/test_bucket_acl.py",
        "tests/test_bucket_ownership.py",
        "tests/test_oss_access.py",
        "tests/test_oss_data.py",
    ),
    # The launcher's modules: their unit tests and the launcher run in process (the rest
    # of the 20-odd files that import infra.local.plan train, at minutes per survivor).
    "infra.local.plan": (
        "tests/test_local_plan.py",
        "tests/test_local_plan_parts.py",
        "tests/test_local_launcher.py",
        "tests/test_secret_env.py",
        "tests/test_bring_your_data.py",
    ),
    "infra.local.supervisor": (
        "tests/test_supervisor_policy.py",
        "tests/test_local_launcher.py",
        "tests/test_fault_tolerance.py",
    ),
    "infra.local.process": ("tests/test_local_processes.py", "tests/test_local_launcher.py"),
    "infra.local.ports": ("tests/test_local_plan.py", "tests/test_local_launcher.py"),
    # The render's entry point: its own tests and the golden reviews built on it (not the
    # ten files that render a stack to look at one object, minutes of stats per run).
    "infra.render": ("tests/test_render_stack.py", "tests/test_render_summary.py"),
    # test_render.py's `--diff` tests clone a repository of the project's tracked files, which
    # mutmut's copy (under the ignored .mutation/) has none of: they fail before any mutant.
    # Its tests that need no repository, by node id, and each part's own tests.
    "infra.render.__main__": (
        "tests/test_render_main.py",
        "tests/test_local_plan.py::test_a_stack_that_would_hang_is_warned_of_by_render_and_launcher",
        "tests/test_render.py::test_bad_config_exits_2_with_the_config_error",
        "tests/test_render.py::test_diff_against_an_unknown_revision_exits_2",
    ),
    "infra.render.unified": (
        "tests/test_render_unified.py",
        "tests/test_render.py::test_the_object_aware_diff_is_a_correct_unified_diff",
    ),
    "infra.render.diff": (
        "tests/test_render_diff.py",
        "tests/test_render_at_revision.py",
        "tests/test_render.py::test_diff_against_an_unknown_revision_exits_2",
    ),
    "infra.render.relabel": ("tests/test_render_relabel.py",),
    "infra.render.review_summary": ("tests/test_render_review_summary.py",),
    "infra.render.style": (
        "tests/test_render_style.py",
        "tests/test_render_unified.py",
        "tests/test_render_relabel.py",
        "tests/test_render_summary.py",
    ),
    # The sections: their own tests, the render tests that read them (by node id, as above),
    # the golden reviews, and the one check each of the other files makes of a render.
    "infra.render.cloud": (
        "tests/test_render_cloud.py",
        "tests/test_render_stack.py",
        "tests/test_render_summary.py",
        "tests/test_render.py::test_ack_gpu_summary_shows_the_gpu_pool_and_the_nas_rule",
        "tests/test_render.py::test_no_secret_reaches_the_summary_even_when_the_cloud_hands_one_out",
        "tests/test_render.py::test_a_plaintext_kubeconfig_is_refused_by_key_and_not_echoed",
        "tests/test_render.py::"
        "test_existing_cluster_summary_says_no_cloud_resources_and_hides_the_kubeconfig",
        "tests/test_render.py::test_existing_cluster_without_a_kubeconfig_says_which_one_is_used",
        "tests/test_image_registry.py::test_the_render_shows_the_secret_s_shape_and_no_credential",
        "tests/test_oss_access.py::test_offline_the_derived_name_shows_where_the_account_id_goes",
        "tests/test_platform_stacks.py::"
        "test_the_offline_render_of_a_run_shows_the_platform_as_placeholders",
    ),
    "infra.render.kubernetes": (
        "tests/test_render_stack.py",
        "tests/test_render_summary.py",
        "tests/test_sweep_config.py",
        "tests/test_render.py::test_kubernetes_section_is_exactly_what_the_builders_make",
        "tests/test_render.py::test_every_object_has_a_title_and_every_env_var_one_line",
        "tests/test_lifecycle.py::test_the_offline_render_includes_the_supervisor_config_map",
        "tests/test_platform_stacks.py::"
        "test_the_offline_render_of_a_run_shows_the_platform_as_placeholders",
    ),
    # The docstring reader on text in the SDK's shape, and the summary and table tests that
    # read the installed SDK (not the whole-program files that check its deprecations).
    "infra.render.provider_sdk": (
        "tests/test_render_provider_sdk.py",
        "tests/test_render_summary.py",
        "tests/test_force_new_fields.py",
    ),
    # The manifests: each builder's own tests, the OpenAPI schema check of every stack's
    # objects, and each builder's module-named tests (the whole program's stack tests reach
    # them too, at minutes per survivor, and hold nothing these do not).
    "infra.manifests": ("tests/test_manifests_objects.py", "tests/test_manifests_schema.py"),
    "infra.manifests.common": (
        "tests/test_manifests_common.py",
        "tests/test_manifests_schema.py",
        "tests/test_network_policy.py",
    ),
    "infra.manifests.image_cache": (
        "tests/test_image_registry.py",
        "tests/test_manifests_image_cache.py",
        "tests/test_manifests_schema.py",
    ),
    "infra.manifests.issued_names": (
        "tests/test_manifests_issued_names.py",
        "tests/test_manifests_schema.py",
        "tests/test_run_namespaces.py",
    ),
    "infra.manifests.lifecycle": (
        "tests/test_lifecycle.py",
        "tests/test_manifests_lifecycle.py",
        "tests/test_manifests_schema.py",
    ),
    "infra.manifests.network_policy": (
        "tests/test_manifests_schema.py",
        "tests/test_network_policy.py",
    ),
    "infra.manifests.oss": (
        "tests/test_manifests_oss.py",
        "tests/test_manifests_schema.py",
        "tests/test_oss_data.py",
    ),
    "infra.manifests.registry": (
        "tests/test_manifests_issued_names.py",
        "tests/test_image_registry.py",
        "tests/test_manifests_schema.py",
    ),
    # test_run_namespaces.py deploys each platform once per session: mutmut credits only the
    # first test with reaching the builders, so the uncached whole-platform tests hold them.
    "infra.manifests.run_access": (
        "tests/test_manifests_schema.py",
        "tests/test_run_namespaces.py",
        "tests/test_run_namespaces_order.py",
    ),
    "infra.manifests.secret_env": (
        "tests/test_manifests_schema.py",
        "tests/test_secret_env.py",
    ),
    "infra.manifests.security": (
        "tests/test_manifests_schema.py",
        "tests/test_manifests_security.py",
    ),
    "infra.manifests.storage": (
        "tests/test_manifests_schema.py",
        "tests/test_manifests_storage.py",
    ),
    "infra.manifests.tensorboard": (
        "tests/test_manifests_schema.py",
        "tests/test_manifests_tensorboard.py",
        "tests/test_network_policy.py",
    ),
    "infra.manifests.workloads": (
        "tests/test_job_await.py",
        "tests/test_job_suspend.py",
        "tests/test_lifecycle.py",
        "tests/test_manifests_schema.py",
        "tests/test_manifests_workloads.py",
        "tests/test_replica_plan.py",
        "tests/test_secret_env.py",
    ),
    # What a platform issues its run namespaces, and the order the engine creates it in.
    "infra.run_namespaces": (
        "tests/test_run_namespaces.py",
        "tests/test_run_namespaces_order.py",
    ),
    # The registration rule: every kind in one fake runtime, and a platform's issued objects
    # as the whole program registers them.
    "infra.kube_resources": (
        "tests/test_kube_resources.py",
        "tests/test_run_namespaces_order.py",
    ),
    # Package `__init__`s and entry points: no function of their own (mutmut mutates
    # functions only), run against a test that imports or starts them, for a real row.
    "infra.__main__": ("tests/test_engine_cwd.py",),
    "infra.local": ("tests/test_local_noise.py",),
    "infra.local.__main__": ("tests/test_local_plan.py",),  # `python -m infra.local --dry-run`
    "infra.platform": ("tests/test_cluster_facts.py",),
    "infra.records": ("tests/test_run_state_records.py",),
    "infra.replica_plan": ("tests/test_replica_plan.py",),
    "infra.sweep": ("tests/test_sweep_results.py",),
    "infra.sweep.__main__": ("tests/test_sweep_local.py",),  # the sweep's comparison
    # The supervisor's arguments and timing, and the plans that wrap every replica in it (the
    # script's own runs, which read those arguments, have their own run: shell_mutation.py).
    "infra.lifecycle": (
        "tests/test_lifecycle.py",
        "tests/test_lifecycle_supervision.py",
        "tests/test_local_plan.py",
        "tests/test_replica_plan.py",
    ),
    # Its checks one by one, and the bundled trainer's checkpoint rule (not the file's
    # launches, which train).
    "infra.local.data": (
        "tests/test_local_data.py",
        "tests/test_bring_your_data.py::test_the_bundled_trainers_checkpoint_naming_binds_it_alone",
        "tests/test_replica_plan.py",
    ),
    "infra.local.sweep": ("tests/test_local_sweep.py", "tests/test_sweep_local.py"),
    # Its decisions in process first (refusals, --dry-run, limits), then the launches.
    "infra.local.cli": (
        "tests/test_job_suspend.py",
        "tests/test_local_cli.py",
        "tests/test_local_isolation.py",
        "tests/test_local_launcher.py",
        "tests/test_local_plan.py",
        "tests/test_local_sweep.py",
        "tests/test_secret_env.py",
    ),
    # The network seen from a child that joins it, then from the launcher's replicas.
    "infra.local.netns": ("tests/test_local_netns.py", "tests/test_local_isolation.py"),
    # Run as `python -m` runs it (runpy), which no import reaches.
    "infra.status.__main__": ("tests/test_status_main.py",),
}

# Tests no mutant run can hold, left out of every module's run: this one starts the
# checkout's launcher from another directory (a user's project), where the mutated copy's
# trampolines cannot find their mutmut config, so it fails with or without a mutant.
DESELECT = (
    "tests/test_local_launcher.py::test_a_users_own_trainer_package_is_not_shadowed_by_the_checkout",
    # It runs the program in a fresh interpreter from the checkout's root: under mutmut's copy
    # the mutated modules' trampolines find no config there, so it fails with or without a mutant.
    "tests/test_api_server_reach.py::test_an_unreachable_existing_cluster_stops_up_before_any_kubernetes_object",
    # It checks the checkout's own .venv-program, which the mutated copy does not hold.
    "tests/test_engine_cwd.py::test_the_program_venv_resolves_from_the_project_root_not_from_main",
    # The same for a sweep started in the user's project: its trials' launchers start there.
    "tests/test_sweep_local.py::test_trials_start_where_the_users_single_runs_start",
)

# Functions that run only in a child process the tests start. mutmut learns which tests reach
# a function from the calls it records in the test process, so it finds none for these and
# marks their mutants "no tests". Each such mutant is run here against these tests, with
# MUTANT_UNDER_TEST naming it as the child knows the module (the child inherits it, and the
# copy's trampolines run the mutant there: a file run as a script is module __main__), and
# its verdict is stored where mutmut keeps its own.
CHILD_PROCESS_TESTS: dict[str, tuple[str, tuple[str, ...]]] = {
    # A one-worker MultiWorkerMirroredStrategy, built in a child process (a strategy sets the
    # process' collective context for good): the strategy from TF_CONFIG and its all-reduce.
    **dict.fromkeys(
        (
            "trainer.distribution.x_make_strategy",
            "trainer.distribution.xǁLocalExecutorǁ__init__",
            "trainer.distribution.xǁLocalExecutorǁany_replica",
        ),
        ("trainer.distribution", ("tests/test_distribution_steps.py",)),
    ),
    # Two ps stood for by two logical CPUs, which only a fresh process can set up.
    **dict.fromkeys(
        (
            "trainer.weight_access.xǁPackedTransferǁ__init__",
            "trainer.weight_access.xǁPackedTransferǁread",
            "trainer.weight_access.xǁPackedTransferǁsend",
            "trainer.weight_access.xǁPackedTransferǁ_unpack",
        ),
        ("trainer.weight_access", ("tests/test_weight_access.py",)),
    ),
    # The SDK's packages loaded whole before a submodule: only a fresh process shows it.
    "infra.render.provider_sdk.x_sdk_module": (
        "infra.render.provider_sdk",
        ("tests/test_render_summary.py",),
    ),
    # A server started in a process that has not imported TensorFlow, as a replica's is.
    "trainer.grpc_server.x_start_server": ("trainer.grpc_server", ("tests/test_grpc_server.py",)),
    # The namespace holder, `python -I netns.py`, which PrivateNetwork.create starts.
    **dict.fromkeys(
        ("infra.local.netns.x__hold", "infra.local.netns.x_bring_loopback_up"),
        ("__main__", ("tests/test_local_netns.py",)),
    ),
    # The distributed path of training: a ParameterServerStrategy chief (the dev topology,
    # one `python -m trainer` per replica); the in-process tests train in one process only.
    **dict.fromkeys(
        ("trainer.train_loop.x_train", "trainer.train_loop.x_train_with"),
        ("trainer.train_loop", ("tests/test_local_trainer.py",)),
    ),
}
CHILD_PROCESS_TIMEOUT = 600  # seconds for one mutant's tests; past it: mutmut's "timeout"
TIMEOUT_EXIT_CODE = 36  # mutmut's code for a mutant that timed out

# Modules whose tests run TensorFlow in the test process. mutmut's default forks each mutant's
# worker from the process that ran the stats pass, TensorFlow's thread pools included, and a
# forked TensorFlow waits forever on locks held by threads that were not copied: every mutant
# would "time out", a catch that proves nothing. A fork server that has only collected the
# tests (TensorFlow imported, never run) forks clean workers.
FORKSERVER = {
    "trainer.train_loop",
    "trainer.progress",
    "trainer.outputs",
    "trainer.evaluator",
    "trainer.gpu_check",
    "trainer.model",
    "trainer.distribution",
    "trainer.cluster",
    "trainer.server",
    "trainer.grpc_server",
    "trainer.weight_access",
}

# Mutant → why no test can tell it from the code (mutant names: `mutmut results --all true`).
EQUIVALENT: dict[str, str] = {
    **{
        f"infra.charts.{name}": (
            "a pixel more or less of a margin, an offset or a size (legend, labels, dots): the "
            "layout rules in tests/test_charts.py hold either way, and no reader can tell"
        )
        for name in (
            *(f"x__legend__mutmut_{n}" for n in (4, 6, 10, 11, 15, 17, 20, 23, 25, 27, 29, 32)),
            *(f"x__legend__mutmut_{n}" for n in (52, 54, 57, 61, 74)),
            *(f"x__panel__mutmut_{n}" for n in (52, 68, 74)),
            *(f"x__series__mutmut_{n}" for n in (27, 28, 47, 49)),
            "xǁ_Frameǁgrid__mutmut_24",
            "xǁ_Frameǁgrid__mutmut_49",
        )
    },
    **{
        f"infra.charts.x__legend__mutmut_{n}": (
            "a point exactly on the legend box's edge counted as hidden or not: the box covers "
            "at most its edge either way"
        )
        for n in (36, 37, 39, 40)
    },
    **{
        f"infra.charts.x__powers__mutmut_{n}": (
            "the 1e-9 tolerance at the axis' ends taken away, or k one decade further: a power "
            "of ten lands within 1e-9 of a padded end only by chance, and one beyond the end "
            "is filtered out by the same condition"
        )
        for n in (14, 15, 17, 22, 23)
    },
    "infra.charts.x_nice_step__mutmut_9": (
        "`<` for `<=` against a bound already raised by 1e-9: equal only for a raw step of "
        "exactly the raised bound"
    ),
    **{
        f"infra.charts.{name}": "the axis' log flag None for False: read only as a truth value"
        for name in ("x_category_axis__mutmut_7", "x_linear_axis__mutmut_63")
    },
    "infra.charts.x__text__mutmut_8": (
        "rstrip('XX_XX') strips the characters X and _, and no attribute name ends in X"
    ),
    **{
        f"infra.charts.x_write__mutmut_{n}": (
            "the encoding left to the locale, or spelled UTF-8: Python 3.11 on Linux writes "
            "UTF-8 either way (locale coercion); the explicit name keeps other platforms' "
            "files UTF-8, which an SVG without a declaration must be"
        )
        for n in (4, 6, 12)
    },
    "trainer.gpu_check.x_require_gpus__mutmut_1": (
        "`< 0` for `<= 0` as the early return: with 0 GPUs expected, the check that follows "
        "finds at least 0 and returns as well; only TensorFlow is asked first"
    ),
    "trainer.model.x_build_optimizer__mutmut_10": (
        "max(total_steps, 2) for max(total_steps, 1) as the decay length: they differ only "
        "for a run of at most 1 step, which uses the rate at step 0, the initial rate for "
        "any decay length (Keras' CosineDecay)"
    ),
    **{
        f"infra.config.rules.x__kubernetes_version_rules__mutmut_{n}": (
            "how the version is cut before its major and minor are read: every version the "
            "config accepts is <major>.<minor>.<patch>-aliyun.<n>, so the first two numbers "
            "are the same however it is cut"
        )
        for n in (6, 7, 10)
    },
    **{
        f"trainer.outputs.{function}__mutmut_{n}": (
            "the global step variable made trainable (True, None, left out): it is no model "
            "weight, no tape or optimizer is given it, and a checkpoint stores it the same"
        )
        for function, numbers in (
            ("xǁCheckpointsǁ__init__", (5, 8, 10)),
            ("x_restore_model", (4, 7, 9)),
        )
        for n in numbers
    },
    **{
        f"trainer.outputs.{function}__mutmut_{n}": (
            "the step variable starting at 1, not 0: `save` assigns the step before every "
            "write and a read overwrites it before it is used, so its first value is never seen"
        )
        for function, n in (("xǁCheckpointsǁ__init__", 9), ("x_restore_model", 8))
    },
    "trainer.outputs.xǁCheckpointsǁ__init____mutmut_33": (
        '"" for None as the step on disk before any save or restore: no global step equals '
        "either, so the first save writes as it would"
    ),
    **{
        f"trainer.outputs.xǁCheckpointsǁsave__mutmut_{n}": (
            "the private copy written without the options: only an MWMS worker that does not "
            "write has one, and its options name no I/O device (that is the PS chief's)"
        )
        for n in (5, 7)
    },
    **{
        f"trainer.outputs.x_write_metrics__mutmut_{n}": (
            "another name for the file metrics.txt is written to before its rename, in the "
            "same directory: nothing reads it, and the rename stays atomic"
        )
        for n in (4, 5)
    },
    **{
        f"trainer.distribution.x_make_train_steps__mutmut_{n}": (
            "zip's strict=True made False, None or left out: tape.gradient returns one "
            "gradient per value it was given, and send one per gradient, so the two lists "
            "always have one length"
        )
        for n in (42, 45, 46)
    },
    **{
        f"trainer.weight_access.xǁPackedTransferǁ_unpack__mutmut_{n}": (
            "zip's strict=True made False, None or left out: tf.split with a list of sizes "
            "returns one part per size, and the sizes are one per index"
        )
        for n in (5, 8, 14)
    },
    "trainer.distribution.x_make_train_steps__mutmut_56": (
        "argmax over axis +1 for -1: the logits are (batch, classes), whose last axis is 1"
    ),
    "trainer.distribution.x_make_train_steps__mutmut_7": (
        "one local replica assumed under MWMS too: a worker's MWMS replicas are its GPUs, "
        "and without a GPU it has exactly one (its CPU), as on every machine the tests run "
        "on; several GPUs per worker would tell them apart, and none is here"
    ),
    **{
        f"trainer.distribution.x_training_batches__mutmut_{n}": (
            "a shuffle buffer one example larger or smaller than the shard: a buffer at "
            "least the shard's size is a uniform shuffle, one short is a shuffle whose order "
            "no user or test can tell from it (every example still once per epoch)"
        )
        for n in (48, 50)
    },
    "trainer.distribution.x_training_batches__mutmut_34": (
        "prefetch(None): tf.data's prefetch takes None as AUTOTUNE: the same batches in the "
        "same order, only how far ahead they are read"
    ),
    "trainer.distribution.xǁLocalExecutorǁ__init____mutmut_14": (
        "seed - pipeline id for seed + pipeline id: each pipeline still has a fixed seed of its own"
    ),
    **{
        f"trainer.distribution.xǁCoordinatorExecutorǁ__init____mutmut_{n}": (
            "the PS workers' shuffle seed (no seed, another clock-based one): it is the clock "
            "by design, so each worker reads in an order of its own either way"
        )
        for n in (5, 11, 15)
    },
    "trainer.checkpoint_store.xǁCheckpointStoreǁ_candidate__mutmut_6": (
        "the step of the empty candidate for a step without files: publish reads only its "
        "(empty) paths and checks completeness with its own step"
    ),
    "trainer.outputs.x_export_saved_model__mutmut_15": (
        "format='tf_saved_model' left out: it is keras.Model.export's default format"
    ),
    "trainer.watchdog.xǁWatchdogǁcheck__mutmut_5": (
        "int(stalled / limit) for int(stalled // limit): int() truncates toward zero, which "
        "for a stall (never negative) is the floor; the two differ only where float rounding "
        "lands a quotient within an ulp of a whole period"
    ),
    "trainer.warm_start.x_restore_init_checkpoint__mutmut_6": (
        "resume(may_change=None) for False: CheckpointStore tests it for truth only, so "
        "another run's checkpoints are read and never set aside either way"
    ),
    "trainer.checkpoint_store.xǁCheckpointStoreǁ_set_aside__mutmut_17": (
        "one more numbered name for a set-aside directory: differs only after 999 clashes "
        "within one second"
    ),
    **{
        f"infra.sweep.cli.x__link_best__mutmut_{n}": (
            "symlink_to's target_is_directory: read on Windows only (Python's pathlib); a "
            "link to a directory works alike without it on Linux and macOS"
        )
        for n in (5, 7, 8)
    },
    "infra.sweep.cli.x_write_results__mutmut_19": (
        "rstrip() for rstrip('\\n') of the markdown table: it ends in the verdict line and a "
        "newline, never in other whitespace"
    ),
    "infra.config.sweep.x__sweep_cluster__mutmut_33": (
        "`config.sweep or True`: the cluster is sized only while a sweep expands, so the "
        "sweep is always there"
    ),
    **{
        f"infra.config.sweep_points.x_grid_points__mutmut_{n}": (
            "zip's strict check: itertools.product yields exactly one value per key, so the "
            "lengths always match"
        )
        for n in (9, 12, 13)
    },
    "infra.config.sweep_platform.x_platform_problems__mutmut_1": (
        "`and` for `or` between no sweep and no trials: a sweep always has a trial (an "
        "empty one is refused before), and no sweep has none, so both read alike"
    ),
    **{
        f"infra.config.sweep.x_spec_problems__mutmut_{n}": (
            "the range check's guard regrouped: the branches before it have already answered "
            "every parameter with values, or without both min and max, so only parameters "
            "with both reach it, for which every grouping is true"
        )
        for n in (19, 20)
    },
    "infra.records.report.x_write_report__mutmut_67": (
        "yaml.safe_dump(sort_keys=None): PyYAML tests it for truth, so None keeps the order "
        "as False does"
    ),
    "infra.config.sweep_platform.x__capacity_problems__mutmut_3": (
        "nodes / per_trial < parallel for nodes // per_trial < parallel: for whole numbers "
        "both hold exactly when nodes < parallel * per_trial"
    ),
    "infra.records.tensorboard_scalars.x__values__mutmut_14": (
        "`or` for `and` after the simple_value branch: a value that is neither a simple "
        "value nor a tensor has an empty tensor, which is no number, so nothing is read"
    ),
    "infra.records.run_state.x_describe_exit__mutmut_1": (
        "128 counted as a signal too: signal 0 is no signal, so it reads `exit 128` either way"
    ),
    "infra.records.run_state.x__exit_code__mutmut_10": (
        "a window of 201 lines for 200 when looking for an attempt's end line: differs only "
        "for an end line exactly 201st from the end, and today's supervisor writes at most "
        "its verdict (a line or two) after it"
    ),
    **{
        f"infra.records.run_state.xǁRunStateǁresult__mutmut_{n}": (
            "the fallback for an attempt of a replica the state does not list: result() is "
            "only ever given the state's own attempts"
        )
        for n in (43, 45)
    },
    "infra.local.supervisor.xǁRunFailuresǁgiven_back__mutmut_21": (
        "words[1:3] for words[1:2] of an exit record: the record is two words, "
        "'<status> <how>' (supervise.sh's header), so both slices are [<how>]"
    ),
    **{
        f"infra.config.sweep_platform.x__problems__mutmut_{n}": (
            "a run stack's pool checked for capacity too: a run stack may not set "
            "cluster.gpuPool (its platform's key), and the pool derived for its sweep holds "
            "`parallel` trials, so the check finds nothing"
        )
        for n in (12, 13)
    },
    **{
        f"infra.cloud.oss.x_derived_bucket_name__mutmut_{n}": (
            "strip('XX-XX') for strip('-'): the name is lower-cased first, so it never holds "
            "the capital X the mutant also strips"
        )
        for n in (9, 16)
    },
    **{
        f"infra.cloud.oss.x_check_existing_bucket__mutmut_{n}": (
            "another default for a listing entry without an ACL: only the two public ACLs "
            "are refused, and no default is one"
        )
        for n in (22, 24, 27)
    },
    **{
        f"infra.cloud.oss.x_check_existing_bucket__mutmut_{n}": (
            "None for '' as the default location: both are false, so nothing is compared"
        )
        for n in (34, 36)
    },
    **{
        f"infra.cloud.nas.xǁNasStorageǁ{function}__mutmut_{n}": (
            "file_system_type None or left out on the access group or the file system: NAS "
            "takes standard, the type set here, when none is given (the provider's reference "
            "for alicloud_nas_file_systems and CreateFileSystem: standard is the default)"
        )
        for function, n in (("__init__", 33), ("_file_system", 41), ("_file_system", 50))
    },
    "infra.cloud.nas.xǁNasStorageǁ__init____mutmut_34": (
        "the access group's description None: it labels the group in the NAS console only; "
        "adoption reads the file system's description, which the tests hold"
    ),
    **{
        f"infra.cloud.nas.xǁNasStorageǁ_file_system__mutmut_{n}": (
            "the adoption note logged without the component: `pulumi up` prints the same "
            "words under the stack instead of under `nas`"
        )
        for n in (36, 38)
    },
    "infra.program.x_rrsa_field__mutmut_3": (
        "getattr(None, name, None) for None when there is no metadata: both are None"
    ),
    "infra.program.x_rrsa_field__mutmut_8": (
        "getattr without its default: the SDK's rrsa_metadata type has every field (None when "
        "unset), so the default is never taken"
    ),
    **{
        f"infra.program.x_platform_access__mutmut_{n}": (
            "zip's strict=True made False, None or left out: the values are the outputs of the "
            "same names, read one each, so both lists always have one length"
        )
        for n in (22, 25, 26)
    },
    "infra.program.x__check_platform__mutmut_30": (
        "False for True as what the passed check yields: the value is discarded, only its "
        "arrival lets the provider's kubeconfig through"
    ),
    **{
        f"infra.program.x_existing_cluster__mutmut_{n}": (
            "an existing cluster's DataAccess left out: it repeats data.endpoint and "
            "data.bucket, which such a stack must set and which cluster_facts takes first; it "
            "has no role and no upload to wait for"
        )
        for n in (24, 28)
    },
    **{
        f"infra.cloud.cluster.{component}__init____mutmut_{n}": (
            "another dict (or none) for the cluster component's register_outputs: the engine "
            "only stores it for display in the state; the program reads the component's "
            "attributes (cluster_id, kubeconfig, version), which the tests check"
        )
        for component, numbers in (
            ("xǁAckClusterǁ", range(74, 81)),
            ("xǁAskClusterǁ", range(84, 91)),
        )
        for n in numbers
    },
    **{
        f"infra.cloud.cluster.{component}__init____mutmut_{n}": (
            "the cluster component's options (or its enable_rrsa default) dropped: "
            "infra/program.py passes it no options and always passes enable_rrsa"
        )
        for component, numbers in (("xǁAckClusterǁ", (1, 4, 7, 8)), ("xǁAskClusterǁ", (3, 6, 7)))
        for n in numbers
    },
    **{
        f"infra.cloud.pod_isolation.xǁEciPodFirewallǁ__init____mutmut_{n}": reason
        for numbers, reason in (
            ((3, 6, 7), "the firewall component's options dropped: infra/program.py passes none"),
            (
                range(65, 70),
                "another dict (or none) for the firewall's register_outputs: the engine only "
                "stores it for display in the state; the program reads the attributes",
            ),
            (
                (61, 63, 64),
                "another tensorboard_group_id without TensorBoard: no pod reads it then "
                "(placement annotates TensorBoard's Deployment alone with it)",
            ),
            (
                (17,),
                "break for continue when TensorBoard is off: it is the last of GROUPS, so no "
                "group is skipped either way",
            ),
        )
        for n in numbers
    },
    **{
        f"infra.program.x__tensorboard_url__mutmut_{n}": (
            "getattr of an ingress's ip or hostname without a default: the SDK's "
            "LoadBalancerIngress type has both (None when unset), so it never raises"
        )
        for n in (28, 36)
    },
    **{
        f"infra.render.diff.{name}__mutmut_{n}": reason
        for name, numbers, reason in (
            (
                "x__commit",
                (11,),
                "--QUIET for --quiet: git then fails an unknown revision with its message and "
                "code 128 instead of 1; either is non-zero, and its stderr is not shown",
            ),
            (
                "x__commit",
                (13,),
                "--END-OF-OPTIONS for --end-of-options: every argument ends in ^{commit}, "
                "which git reads as a revision either way (an option-like REV stays unknown)",
            ),
            (
                "x__extract",
                (12,),
                "another word for ls-tree's '--': it only keeps a path starting with '-' from "
                "being read as an option, and the paths start with the project's own folders",
            ),
            ("x__git", (4, 8), "check=None or left out: subprocess.run's default is False"),
            (
                "x__lend_renderer",
                (13, 16, 18, 19),
                "the lent renderer's __pycache__ copied too: it is the working tree's own "
                "renderer, so its bytecode matches its sources",
            ),
            (
                "x_default_base",
                (18,),
                "an empty candidate when origin/HEAD is unset: `merge-base HEAD ''` fails, "
                "and the loop also refuses an empty branch",
            ),
            ("x_render_at_revision", (9, 10, 11), "another prefix for a temporary folder"),
            ("x_stack_file_at_revision", (11, 12, 13), "another prefix for a temporary folder"),
            (
                "x_render_at_revision",
                (84, 90, 93),
                "text=None, False or left out beside encoding='utf-8': subprocess opens the "
                "pipes in text mode whenever an encoding is given",
            ),
            ("x_render_at_revision", (95,), "'UTF-8' for 'utf-8': the same codec"),
            (
                "x_render_at_revision",
                (85, 91),
                "no encoding for the old render's output: the child is the same Python in the "
                "same environment, so it writes in the locale's encoding the parent then "
                "reads with (UTF-8 in a C locale, PEP 538)",
            ),
            (
                "x_stack_file_at_revision",
                (24,),
                "a missing file read anyway: read_stack refuses it with a ConfigError ('stack "
                "file ... not found'), which the except turns into the same None",
            ),
        )
        for n in numbers
    },
    **{
        f"infra.cloud.nas.xǁNasStorageǁ__init____mutmut_{n}": (
            "another dict (or none) for the NAS component's register_outputs: the engine only "
            "stores it for display in the state; the program reads the attributes"
        )
        for n in range(99, 104)
    },
    **{
        f"infra.mock_deploy.{name}__mutmut_{n}": reason
        for name, numbers, reason in (
            (
                "x__normalise",
                (9,),
                "None for redact inside a secret: that branch runs only when redact is false, "
                "and None is as false",
            ),
            (
                "xǁRecordingMocksǁnew_resource",
                (4,),
                "None for the inputs' root path: falsy like '', so every key's path is the key",
            ),
            (
                "xǁRecordingMocksǁcall",
                (4, 11),
                "another root path for a lookup's arguments: a lookup keeps its arguments, not "
                "their secret paths, so the paths are dropped",
            ),
            (
                "x_run_program",
                (21,),
                "None for set_mocks' mocks: the monitor is passed too, and set_mocks makes a "
                "monitor from the mocks only without one (pulumi/runtime/mocks.py)",
            ),
            (
                "x_run_program",
                (32, 33),
                "another root directory: only pulumi.get_root_directory() reads it, which "
                "neither the program nor the providers' SDKs call",
            ),
            (
                "x_run_program",
                (37, 40),
                "getattr without its default for the root's outputs: the root is always a "
                "Stack, which has them",
            ),
            (
                "xǁ_RecordingMonitorǁInvoke",
                (6, 7, 8),
                "another token for getResource: the SDK invokes it only to rehydrate a "
                "resource from its URN (runtime/resource.py get_resource), which the program "
                "never does",
            ),
            (
                "xǁRecordingMocksǁnew_resource",
                (41,),
                "None for the referenced stack's name in its state: the program reads a "
                "StackReference's outputs, never its `name` output (its name is its input)",
            ),
            (
                "xǁRecordingMocksǁnew_resource",
                (52, 53),
                "another replacement for '/' in an id: only namespaced Kubernetes objects have "
                "one in their name, and nothing the program registers or exports reads their id",
            ),
            (
                "x__freeze_imports_once",
                (1, 2, 3),
                "the import-time objects frozen on every run, or the flag stored as None or "
                "False (the list is what is tested, not its item): gc.freeze only saves time",
            ),
        )
        for n in numbers
    },
    **{
        f"infra.config.rules.x__credential_rules__mutmut_{n}": (
            "another split of data.credentialsSecret (no limit, rsplit, at most 2): its type "
            "allows exactly one '/' (<namespace>/<name>, infra/config/types.py SecretRef), so "
            "the namespace is the first part whichever way it is cut"
        )
        for n in (106, 107, 109)
    },
    "infra.records.launch_record.x__check__mutmut_4": (
        "another stand-in for a missing record ('XXXX' for ''): one word is not the four "
        "of a record nor 'ended', so it reads unknown either way"
    ),
    **{
        f"infra.local.cli.x__launch__mutmut_{n}": reason
        for numbers, reason in (
            (
                (11,),
                "TensorBoard's port reserved without --tensorboard too: only a port of this "
                "machine held until the launch ends, which nothing reads (TensorBoard starts "
                "and is announced only with the flag)",
            ),
            (
                (42, 44, 45),
                "the scratch directory's removal without ignore_errors: it is the launcher's "
                "own mkdtemp, removed once, so nothing is left for the removal to fail on",
            ),
        )
        for n in numbers
    },
    **{
        f"infra.cloud.network.{name}__mutmut_{n}": reason
        for name, numbers, reason in (
            (
                "xǁNetworkǁ__init__",
                (7, 10),
                "the network component's options dropped: infra/program.py passes none",
            ),
            (
                "xǁNetworkǁ__init__",
                (2, 3, 4),
                "another default for `pods` (a description's word): infra/program.py always "
                "passes it",
            ),
            (
                "xǁNetworkǁ__init__",
                range(63, 74),
                "another dict (or none) for the network's register_outputs: the engine only "
                "stores it for display in the state; the program reads the attributes",
            ),
            (
                "xǁNetworkǁ_vpc",
                (7, 9, 10),
                "the parent of the existing VPC's lookup: it only picks the provider the invoke "
                "inherits, and the stack has the one default alicloud provider",
            ),
            (
                "xǁNetworkǁ_vswitch",
                (5, 7, 8),
                "the parent of the existing vSwitch's lookup: it only picks the provider the "
                "invoke inherits, and the stack has the one default alicloud provider",
            ),
        )
        for n in numbers
    },
    **{
        f"infra.cloud.pod_isolation.x__register_rule__mutmut_{n}": (
            "a rule's priority left to the provider: its default is 1 (pulumi_alicloud's "
            "SecurityGroupRule docs: `Default value: 1`), what the program sets"
        )
        for n in (10, 22)
    },
    **{
        f"infra.cloud.cluster.{name}__mutmut_{n}": (
            "the parent of an invoke or a `get` read (the kubeconfig's credential, the "
            "autoscaler's role lookup, ASK's endpoint): it only picks the provider they "
            "inherit, and the stack has the one default alicloud provider; a read is looked up "
            "again on every run, so its URN moving replaces nothing"
        )
        for name, numbers in (
            ("xǁAckClusterǁ__init__", (66,)),
            ("xǁAskClusterǁ__init__", (71, 76)),
            ("x__autoscaling_config", (3, 5, 6)),
            ("x__ask_intranet_endpoint", (4, 7, 8)),
            ("x__kubeconfig", (3, 5, 6)),
        )
        for n in numbers
    },
    **{
        f"infra.cloud.cluster.x__with_server__mutmut_{n}": (
            "the credential's kubeconfig read without a default for `clusters` (it always has "
            "them), or dumped with its keys in another order: the same YAML document to every "
            "reader"
        )
        for n in (4, 6, 15, 17, 18)
    },
    **{
        f"infra.cloud.cluster.{name}__mutmut_{n}": (
            "the kubeconfig not waiting for the creation-only check: the engine awaits every "
            "outstanding output before the run ends (pulumi/runtime/stack.py), so the check's "
            "error fails the `up` all the same, before any Kubernetes object "
            "(test_a_refused_api_server_change_reaches_nothing_inside_the_cluster)"
        )
        for name, n in (("x__kubeconfig", 11), ("x__kubeconfig", 13), ("xǁAckClusterǁ__init__", 69))
    },
    **{
        f"infra.cloud.cluster.x__node_pools__mutmut_{n}": (
            ">= 0 for > 0 in whether a GPU run gets a GPU pool: the config refuses GPU replicas "
            "when size and maxSize are both 0 (no GPU nodes), so the pool is made "
            "either way"
        )
        for n in (7, 9)
    },
    "infra.cloud.cluster.x__intranet_endpoint__mutmut_8": (
        "getattr without its default: the SDK's connections type has api_server_intranet "
        "(None when unset), so the default is never taken"
    ),
    "infra.cloud.cluster.x__autoscaler_role_check__mutmut_6": (
        "False for True as what the passed role check yields: the value is discarded, only "
        "its arrival orders the autoscaler after the check"
    ),
    **{
        f"infra.cloud.cluster.x__spot_gpu_pool__mutmut_{n}": (
            "the spot pool's size or min_size changed or left out (NodePoolConfig's defaults "
            "are 0): the spot pool always autoscales (max_size > 0), so no desired size is "
            "sent and the scaling range starts at 0"
        )
        for n in (8, 9, 12)
    },
    **{
        f"infra.cloud.oss.{component}__init____mutmut_{n}": (
            "another dict (or none) for the component's register_outputs: the engine only "
            "stores it for display in the state; every consumer reads the component's Python "
            "attribute (bucket_name, role_name), which the tests check"
        )
        for component, numbers in (
            ("xǁOssBucketǁ", (83, 84, 85)),
            ("xǁOssRrsaAccessǁ", (74, 75, 76)),
        )
        for n in numbers
    },
    "infra.config.sweep_platform.x__pool_nodes__mutmut_4": (
        "`or 1` for `or 0` for a GPU pool with neither size nor maxSize: a trial with a GPU "
        "replica on it is refused by parse_config (gpuCount must be 0 ... no GPU nodes), and "
        "only trials with GPU replicas have their capacity checked"
    ),
    "infra.config.sweep_points.x__value_text__mutmut_21": (
        "repr(None) for repr(value) of a value of no YAML type: a point holds the stack "
        "reader's plain YAML values (null, booleans, numbers, strings, lists, mappings), each "
        "answered before"
    ),
    **{
        f"infra.kube_resources.x_kube_resource__mutmut_{n}": (
            "our own secret wrap of a Secret's data skipped: pulumi-kubernetes' typed Secret "
            "wraps `data` in pulumi.Output.secret itself (core/v1/Secret.py), so the engine "
            "gets the same secret input"
        )
        for n in (19, 20, 21, 22, 23)
    },
    **{
        f"infra.manifests.oss.x_credentials_secret_ref__mutmut_{n}": (
            "another cut of data.credentialsSecret (no limit, 2, from the right): the config "
            "accepts only <namespace>/<name> (one /), which every cut splits alike"
        )
        for n in (15, 16, 18)
    },
    **{
        f"infra.cloud.zone_offers.x_check_nas_storage__mutmut_{n}": (
            "another stand-in (None, 'XXXX', none given) for an offer's missing storageType or "
            "protocolType: any stand-in that is not Performance, Capacity or NFS matches "
            "nothing, as the empty string does"
        )
        for n in (14, 16, 20, 26, 28, 32)
    },
    **{
        f"infra.manifests.run_access.x_namespace_kubeconfig__mutmut_{n}": (
            "another stand-in (None, 'XXXX', none given) for a missing current-context or "
            "context cluster: it only has to name no entry of the admin kubeconfig, which "
            "names none so"
        )
        for n in (20, 22, 25, 39, 41, 44)
    },
    **{
        f"infra.manifests.run_access.x_namespace_kubeconfig__mutmut_{n}": (
            "the issued kubeconfig's key order (sort_keys None, True or left out): kubectl and "
            "the Kubernetes provider read it as a mapping, so the order changes nothing"
        )
        for n in (91, 93, 94)
    },
    **{
        f"infra.manifests.oss.x_oss_objects__mutmut_{n}": (
            "writer=None for writer=False on the input volume and claim: only its truth is read"
        )
        for n in (15, 41)
    },
    **{
        f"infra.manifests.workloads.x_replica_jobs__mutmut_{n}": (
            "another constant in the drafts whose digest is the deploy generation (a generation "
            "of None or 'XXXX', no ECI ids or the offline ones on every cluster kind): the "
            "digest still changes exactly when a pod template does, in the review and the "
            "deploy alike (tests/test_manifests_workloads.py holds the two equal)"
        )
        for n in (8, 10, 27, 31)
    },
    **{
        f"infra.render.cloud.x_render_cloud__mutmut_{n}": (
            "another rstrip of the banner (None: whitespace; 'XX\\nXX': X and newlines): the "
            "banner ends in one newline and no X, so every one strips just that"
        )
        for n in (34, 36)
    },
    **{
        f"infra.render.actions.x__changed_inputs__mutmut_{n}": (
            "another default (None, 'XXXX', none given) for an input the new side lacks: the "
            "key comes from either side, so one it lacks the old side has, the two differ, "
            "and `or` never reads the default"
        )
        for n in (7, 9, 10)
    },
    "infra.render.actions.x_cloud_changes__mutmut_34": (
        "'XXXX' for '' as a removed force-new input's value: neither holds a resource's id"
    ),
    "infra.render.actions.x_cloud_replace_lines__mutmut_16": (
        "zip without strict: replacing and referring are built together, one entry per key"
    ),
    "infra.local.sweep.x_runs_dir__mutmut_5": (
        "trials[1] for trials[0] in the default runs directory: its parent is runs/<stack>/"
        "<job>, the same for every trial (trials differ in their run id only), and a sweep "
        "has at least two"
    ),
    "infra.local.sweep.x_core_slices__mutmut_1": (
        "`>` for `>=` when there are as many trials at once as cores: the even split then "
        "gives each trial one core, as the one-core-each branch does"
    ),
    **{
        f"infra.local.sweep.xǁSweepRunǁrun__mutmut_{n}": (
            "the fallback for a system without sched_getaffinity: Linux, the only system the "
            "launcher pins trials on, has it"
        )
        for n in (3, 13)
    },
    **{
        f"infra.render.parsed.x_kind_of_title__mutmut_{n}": (
            "another split of the type token (every ':', two, or index +1 of a two-part split): "
            "the last part is the same"
        )
        for n in (11, 14, 15, 20, 23, 24)
    },
    **{
        name: (
            "split on any whitespace for a split on one or two spaces: a title's type token "
            "holds no space, so its first part is the same"
        )
        for name in (
            "infra.render.parsed.x_kind_of_title__mutmut_26",
            "infra.render.parsed.x_type_of_title__mutmut_1",
        )
    },
    "infra.render.parsed.x_parse_render__mutmut_12": (
        "no stop at the Kubernetes section's first '---': its comment lines are titles of "
        "objects ('# Kind namespace/name', one space), which the cloud reader takes for no "
        "resource; parsing every stack's render gives the same result either way"
    ),
    "infra.render.parsed.x_parse_render__mutmut_16": (
        "a banner marking a stack reference open: the lines after each banner are its fixed "
        "text, never '#   name: ', and the next title sets the mark afresh; parsing every "
        "stack's render gives the same result"
    ),
    "infra.render.parsed.x_parse_render__mutmut_59": (
        "an input line stripped of X too: inputs are the providers' camelCase names, none "
        "starting with X"
    ),
    **{
        f"infra.cloud.load_balancer_acl.xǁLoadBalancerAclǁ__init____mutmut_{n}": (
            "another dict (or none) for the ACL component's register_outputs: the engine only "
            "stores it for display in the state; the program reads the component's acl_id, "
            "which the tests check"
        )
        for n in (48, 49, 50)
    },
    **{
        f"infra.cloud.load_balancer_acl.xǁLoadBalancerAclǁ__init____mutmut_{n}": (
            "the component's opts dropped or passed as its props: the program gives it no "
            "options (None), so every form registers it alike"
        )
        for n in (8, 11, 12)
    },
    "infra.render.cloud.x_render_cloud__mutmut_11": (
        "the platform's placeholder outputs with no key marked secret: the run stack's program "
        "wraps the kubeconfig it reads in pulumi.Output.secret itself (infra/program.py), so "
        "the render shows <secret> either way (tests/test_render_cloud.py)"
    ),
    "infra.config.stack_file.x__parse__mutmut_3": (
        "None for 0 as 'no directive line': only its truth is read"
    ),
    **{
        f"infra.config.stack_file.x__parse__mutmut_{n}": (
            "the round-trip reader for the safe one: the file is only composed to nodes "
            "(yaml.compose), which both readers do alike under YAML 1.2; _Builder makes the "
            "values (tests/test_stack_file.py's resolution and fault tables pass on both)"
        )
        for n in (17, 19)
    },
    **{
        f"infra.program.x_user_secret_reads__mutmut_{n}": (
            "another default (None, 'XXXX', none given) for a Secret's missing namespace: "
            "every Secret the stack makes is namespaced, so the default is never read"
        )
        for n in (3, 5, 10)
    },
    **{
        f"infra.program.x_preflight__mutmut_{n}": (
            "another bucket or endpoint for a stack without OSS data: only a stack that uses "
            "OSS reads them (provision_data runs only then)"
        )
        for n in (19, 20)
    },
    "infra.program.x_export_outputs__mutmut_61": (
        "typing.cast(None, ...) for cast(Service, ...): cast returns its value unchanged at "
        "run time; the type is for the checker only"
    ),
    **{
        f"infra.program.x__dependencies__mutmut_{n}": (
            "another default (None, 'XXXX', none given) for a cluster-scoped object's "
            "namespace: no Namespace is named any of them or '', so none is waited for either way"
        )
        for n in (8, 10, 13)
    },
    **{
        f"infra.program.x__dependencies__mutmut_{n}": (
            "no default (None) for a container's env: every container the stack makes has an "
            "env list (the trainer's and TensorBoard's settings)"
        )
        for n in (110, 112)
    },
    **{
        f"infra.program.x__dependencies__mutmut_{n}": (
            "another cut of an ImageCache pull-secret reference (no limit, rsplit, at most 2): "
            "it is <namespace>:<name>, and a Kubernetes name holds no ':', so every cut gives "
            "the same pair"
        )
        for n in (153, 155, 156, 158)
    },
    **{
        f"infra.program.x__dependencies__mutmut_{n}": (
            "another default (None, none given) for a run's missing NetworkPolicy list: every "
            "run the program registers has NetworkPolicies (network_policies() always returns the "
            "namespace's default deny and egress policy, and each run's own), so the default "
            "is never read"
        )
        for n in (144, 146)
    },
    "infra.program.x_provision_cluster__mutmut_141": (
        "`and` for `or` in what the Kubernetes provider waits for ([cluster] on ack, [] on "
        "ask): the SDK expands a local component in depends_on to its children "
        "(pulumi/runtime/rpc.py, _expand_dependencies), and the ack cluster component parents "
        "its node pools, so [cluster] waits for them; on ask the provider's kubeconfig input "
        "is the cluster's output, a dependency on the cluster either way"
    ),
    "infra.program.x__dependencies__mutmut_168": (
        "= for += before an ImageCache's pull Secrets: the cache is cluster-scoped, so nothing "
        "was added before (no Namespace), and the list is the same"
    ),
    **{
        f"infra.program.x__volume_sources__mutmut_{n}": (
            "another default (None, none given) for a pod template's volumes: every template "
            "the stack builds has volumes (the data volume and the supervisor's ConfigMap)"
        )
        for n in (3, 5)
    },
    "infra.manifests.tensorboard.x_tensorboard_deployment__mutmut_5": (
        "gpus=None for gpus=0 in TensorBoard's placement: placement() only asks whether the "
        "count is non-zero, and None and 0 are both false"
    ),
    "infra.manifests.network_policy.x__policy__mutmut_3": (
        "run_name for job.name in every policy's name: only the training policy is made from "
        "a trial; the others from the stack's own config, whose run_name is the job name"
    ),
    "infra.run_namespaces.x__register__mutmut_51": (
        "`=` for `+=` on a PersistentVolume's dependencies: a volume is cluster-scoped, so "
        "nothing was added before (no Namespace to wait for)"
    ),
    "infra.run_namespaces.x__component__mutmut_7": (
        "the component's prefix in capitals: physical_name keeps a letter's case, so the name "
        "is as long and the namespace is cut at the same place"
    ),
    "infra.config.sweep.x_with_point__mutmut_3": (
        "a shallow copy of the raw config for a trial: every mapping on a swept key's path "
        "is copied again before it is set, so the stack's own config is never written to"
    ),
    "infra.config.sweep.x__sweep_cluster__mutmut_34": (
        "`else 2` for `else 1` when there is no sweep: the cluster is sized only while a "
        "sweep expands, so the sweep is always there"
    ),
    **{
        f"infra.records.tensorboard_scalars.x_series__mutmut_{n}": (
            "how many times a key is cut at `/` from the right: the last piece, the tag, is "
            "the same however many cuts are made"
        )
        for n in (7, 10)
    },
    "infra.sweep.cli.x_write_results__mutmut_21": (
        "rstrip('XX\\nXX') for rstrip('\\n'): the table ends in its verdict, a number or "
        "'yet.', never in an X"
    ),
    **{
        f"infra.sweep.cli.x_write_results__mutmut_{n}": (
            "another stand-in for an unset data.localExportDir: any path that does not exist "
            "links nothing"
        )
        for n in (43, 44)
    },
    **{
        f"infra.sweep.results.x_compare__mutmut_{n}": (
            "the goal's sign scaled (-2 or 2 for -1 or 1): the order of the products is the same"
        )
        for n in (22, 26)
    },
    "infra.sweep.results.x_trial_result__mutmut_3": (
        "reads the scalars of a trial directory that does not exist: the reader answers {} "
        "for a missing directory, as the guard does"
    ),
    "infra.local.ports.xǁPortReservationǁ__init____mutmut_7": (
        "socket(AF_INET) without SOCK_STREAM: a stream socket is socket()'s default type"
    ),
    **{
        f"infra.status.causes.x_job_cause__mutmut_{n}": (
            "another default for a Failed condition's reason: the Job controller sets one on "
            "every Failed condition it writes (BackoffLimitExceeded, DeadlineExceeded, "
            "PodFailurePolicy, ...), so the default is never read"
        )
        for n in (6, 8, 11)
    },
    **{
        f"infra.status.causes.x_pod_cause__mutmut_{n}": (
            "another default for a pod status without a phase: only 'Failed' is compared, "
            "and no default is it"
        )
        for n in (3, 5, 12)
    },
    **{
        f"infra.status.causes.x__pull_cause__mutmut_{n}": (
            "None for '' as the default of a message: the detail joins only the messages that "
            "are true, so a missing one is left out either way"
        )
        for n in (18, 20, 37, 39)
    },
    "infra.status.causes.x__mount_cause__mutmut_25": (
        "another default for a FailedMount event without a message, read for its volume names: "
        "neither '' nor XXXX names a volume (`volume \"..\"` or `unmounted volumes=[..]`)"
    ),
    **{
        f"infra.status.cloud.{name}": (
            "another backstop for waiting on kubectl (31 s, or none, for 30 s): every call "
            "carries --request-timeout=8s, so kubectl answers or gives up long before"
        )
        for name in (
            "x_last_lines__mutmut_21",
            "x_last_lines__mutmut_22",
            "x__items__mutmut_2",
            "x__items__mutmut_3",
        )
    },
    **{
        f"infra.status.cloud.{name}": (
            "another default for an object's name or creationTimestamp: the API server sets "
            "both on every object it returns (ObjectMeta), so the default is never read"
        )
        for name in (
            "x__name__mutmut_3",
            "x__name__mutmut_5",
            "x__name__mutmut_12",
            "x__newest__mutmut_4",
            "x__newest__mutmut_6",
            "x__newest__mutmut_14",
        )
    },
    **{
        f"infra.status.logs.{name}": (
            "the chunk size a log is copied in (all at once, or 128 KiB for 64 KiB): any size "
            "copies the same bytes in the same order"
        )
        for name in (
            "x_print_attempt__mutmut_5",
            "x_print_attempt__mutmut_7",
            "x_print_attempt__mutmut_8",
            "xǁFollowerǁ_drain__mutmut_2",
            "xǁFollowerǁ_drain__mutmut_4",
            "xǁFollowerǁ_drain__mutmut_5",
        )
    },
    **{
        f"infra.status.logs.{name}": (
            "the run read with its TensorBoard scalars too (with_scalars true or left to its "
            "default): logs reads only the attempts and the outcome, which do not depend on them"
        )
        for name in (
            "x_follow__mutmut_14",
            "x_follow__mutmut_16",
            "x_follow__mutmut_17",
            "x__newest_run__mutmut_4",
            "x__newest_run__mutmut_6",
            "x__newest_run__mutmut_7",
        )
    },
    **{
        f"infra.status.logs.x_follow__mutmut_{n}": (
            "another stand-in path for an attempt without a log: follow is only called with "
            "one that has a log (local_logs answers 'left no log' before)"
        )
        for n in (8, 9, 10)
    },
    **{
        f"infra.records.run_state.x__attempts__mutmut_{n}": (
            "another default start for an attempt with no sign of life at all: a claim always "
            "gives one (its start record or its mtime) and a log its mtime, so it is never read"
        )
        for n in (36, 38, 39)
    },
    **{
        f"infra.status.logs.x_cluster_logs__mutmut_{n}": (
            "subprocess.run's check left out or None for False: both are false, so kubectl's "
            "status is returned, not raised"
        )
        for n in (47, 50)
    },
    "infra.status.logs.x_cluster_logs__mutmut_69": (
        "the kept logs followed: a run whose pods are gone has no fresh heartbeat, so read "
        "here it is never running and following returns once it has printed"
    ),
    **{
        f"infra.status.runs_list.x_parse_args__mutmut_{n}": (
            "--stack's metavar left out or None: argparse names it STACK, from the option"
        )
        for n in (14, 17)
    },
    "infra.status.runs_list.x_collect__mutmut_13": (
        "with_scalars None for False: it is only tested for truth"
    ),
    "infra.status.cloud.x__job_phase__mutmut_47": (
        "the pod's phase read from no pod: (None or {}) has no status, so it reads Pending, "
        "as the else branch says"
    ),
    **{
        f"infra.local.supervisor.{name}": (
            ">= for > (or > for >=) between two readings of the monotonic clock and a "
            "deadline: equal to the nanosecond differs by one 100 ms poll at most"
        )
        for name in (
            "xǁSupervisorǁ_supervise__mutmut_22",
            "xǁSupervisorǁ_supervise__mutmut_42",
            "xǁSupervisorǁ_start_due_restarts__mutmut_2",
        )
    },
    **{
        f"infra.local.supervisor.xǁSupervisorǁ_restarts_note__mutmut_{n}": (
            "None for [] as the default of a replica with no earlier exits: both are false, so "
            "no note either way"
        )
        for n in (3, 5)
    },
    "infra.local.supervisor.xǁSupervisorǁ__init____mutmut_29": (
        "None for False as the first value of stopped: it is only tested for truth (the "
        "launcher's resume hint)"
    ),
    "infra.status.x__ask_cluster__mutmut_15": (
        "no runs root for the JSON answer of a stack with no cluster: _local reads the root "
        "only for the text it prints without --json"
    ),
    "infra.status.runs_list.x_trial_ids__mutmut_7": (
        "= for |= on the still empty set of trial ids: the same set"
    ),
    **{
        f"infra.status.runs_list.{name}": (
            "a run with no start or no wall time shown otherwise: a listed run has an "
            "attempt (read_run answers None without one), so it has both"
        )
        for name in (
            "x__when__mutmut_2",
            "x__when__mutmut_11",
            "x__row__mutmut_12",
            "x__row__mutmut_13",
            "x__row__mutmut_15",
        )
    },
    **{
        f"infra.status.runs_list.x_table__mutmut_{n}": (
            "zip's strict check over a row and the widths: every row has the header's 8 cells"
        )
        for n in (15, 18, 19)
    },
    "infra.status.runs_list.x_main__mutmut_11": (
        "collecting from a runs root that does not exist: its glob finds nothing, the same "
        "empty list"
    ),
    "infra.local.process.xǁPrefixedOutputǁ__init____mutmut_9": (
        "None for False as the output's closed flag: it is only tested for truth"
    ),
    **{
        f"infra.local.process.x__die_with_parent__mutmut_{n}": (
            "prctl's unused arguments (None, 1 or left out for 0) or use_errno: "
            "PR_SET_PDEATHSIG reads only its signal (Linux's prctl(2)), ctypes passes None as "
            "0, and the preexec never reads errno"
        )
        for n in (6, 8, 9, 13, 14, 15, 18, 19, 20, 21, 22, 23)
    },
    **{
        f"infra.local.process.x__die_with_parent__mutmut_{n}": (
            "the status of a child whose launcher died before prctl: nobody is left to read it"
        )
        for n in (25, 26)
    },
    **{
        f"infra.local.process.{name}": (
            "another bound on waiting for a SIGKILLed process or its output reader (5 s, 2 s): "
            "the kernel ends a SIGKILLed group at once, so the bound is never reached"
        )
        for name in (
            "xǁChildǁpoll__mutmut_6",
            "xǁChildǁpoll__mutmut_7",
            "x_kill__mutmut_5",
            "x_kill__mutmut_6",
            "x_kill__mutmut_7",
        )
    },
    **{
        f"infra.local.process.{name}": (
            "which errors a signal to a child may raise unseen: PermissionError needs another "
            "user's process group under the child's pid, ProcessLookupError a child gone "
            "between poll() and the signal (Popen.send_signal skips a reaped one)"
        )
        for name in (
            "xǁChildǁsignal_group__mutmut_2",
            "xǁChildǁsignal_group__mutmut_4",
            "x_stop__mutmut_5",
        )
    },
    "infra.local.process.x_stop__mutmut_12": (
        "<= for < against the stop deadline: a monotonic clock read equal to it to the "
        "nanosecond is one more 50 ms poll at most"
    ),
    "trainer.settings.x__positive_float__mutmut_9": (
        "float('INF') for float('inf'): float() reads infinity in any case (Python's docs)"
    ),
    **{
        f"trainer.settings.x_parse_settings__mutmut_{n}": (
            "add_argument's dest left out or None: argparse derives it from the long flag, "
            "--data-dir → data_dir, the same name"
        )
        for n in (17, 21)
    },
    "infra.cli.x_version__mutmut_3": (
        "the distribution's name in capitals: importlib.metadata normalises names (PEP 503), "
        "so TFTRAIN finds tftrain"
    ),
    "trainer.checksums.x_file_sha256__mutmut_9": (
        "'SHA256' for 'sha256': hashlib takes OpenSSL's digest names in any case"
    ),
    "trainer.data.x_load_mnist__mutmut_36": (
        "max(initial=1) for max(initial=0) of the labels: the initial value counts only for "
        "an empty array, and 0 and 1 are both digits"
    ),
    "trainer.data.x_load_mnist__mutmut_45": (
        "slice(n) for slice(None, n): Python's slice takes a lone argument as the stop"
    ),
    "trainer.data.x_count_train_examples__mutmut_8": (
        "the whole labels file read instead of its 8-byte header: the count is read from "
        "the same first 8 bytes (a ps reads 60 kB more, once)"
    ),
    "trainer.data.x_count_train_examples__mutmut_10": (
        "12 bytes read instead of the 8 of a labels header: only the first 8 are read, and a "
        "shorter file gives the same bytes either way"
    ),
    "trainer.data.x_count_train_examples__mutmut_27": (
        "int.from_bytes without a byte order: its default is 'big' since Python 3.11"
    ),
    "trainer.data.x_count_train_examples__mutmut_29": (
        "header[4:9] for header[4:8]: the header read is 8 bytes long, so both are its last 4"
    ),
    "trainer.environment.x_skip_plotting_imports__mutmut_3": (
        "setdefault('matplotlib') without its None: None is setdefault's default"
    ),
    "trainer.environment.x_cgroup_cpus__mutmut_5": (
        "split()[:3] for split()[:2] of cpu.max: the kernel writes exactly two fields "
        "(Documentation/admin-guide/cgroup-v2.rst), so both unpack the same two"
    ),
    "trainer.environment.x_cgroup_cpus__mutmut_30": (
        "a period > 1 for > 0: the kernel keeps cpu.max's period at 1000 µs or more "
        "(scheduler/sched-bwc.rst), so a period of 1 is never read"
    ),
    **{
        f"trainer.output_dir.x_prepare_output_dir__mutmut_{n}": (
            "the write check's file name: it is deleted as soon as it is made, so no name "
            "is ever seen (only a process killed in between leaves one)"
        )
        for n in (13, 15, 16, 17)
    },
    "trainer.preemption.x_serve_until_saved__mutmut_5": (
        "None for '' as the step of a saved note that cannot be read: both are false, so "
        "the ps asks for a save either way"
    ),
    "trainer.preemption.x_serve_until_saved__mutmut_15": (
        ">= for > against the ps's deadline: the clock is read at 0.1 s steps, never "
        "exactly at the deadline"
    ),
    "trainer.evaluator.x_run__mutmut_18": (
        "'' for None as the checkpoint evaluated so far: a checkpoint path is never empty, "
        "so the first one found differs from either"
    ),
    **{
        f"trainer.progress.xǁProgressǁ_report__mutmut_{n}": (
            "zip's strict check: the sums are fetched one per interval, so the lengths always match"
        )
        for n in (11, 14, 15)
    },
    "infra.config.image_ref.x__split_domain__mutmut_10": (
        "an X among the characters that make the first component a registry: a component "
        "with an X has upper case, which makes it a registry already"
    ),
    "infra.render.config_changes.x_display_key__mutmut_3": (
        "rpartition for partition at the namespace's ':': Pulumi's config keys are "
        "<namespace>:<name> with one ':' (config.ParseKey refuses more), so both cut alike"
    ),
    **{
        f"infra.render.config_changes.x_secret_effect__mutmut_{n}": (
            "another length of path looked up in the effects table: its secrets (data's keys, "
            "imageRegistry.password, kubeconfig) are leaves at exactly the depth written there"
        )
        for n in (7, 9, 13, 14)
    },
    **{
        f"infra.render.config_changes.x_secret_effect__mutmut_{n}": (
            "a secret env read only from 3 parts on: a whole <group>.env cannot be a secret "
            "(env is a map of names), so every env secret is <group>.env.<NAME>"
        )
        for n in (17, 18)
    },
    **{
        f"infra.render.config_changes.x_change_lines__mutmut_{n}": (
            "the keys sorted without turning each part into text: every part of a path is a "
            "key, a string (a list is a leaf), so both orders are the same"
        )
        for n in (6, 8)
    },
    **{
        f"infra.render.cost_lines.x_cost_lines__mutmut_{n}": (
            "another name for the sweep's figure: _side_text and _unpriced_names read the "
            "sweep for any name but 'hour' and 'run'"
        )
        for n in (50, 54, 55)
    },
    "infra.render.cost_lines.x_budget_lines__mutmut_1": (
        "`and` for `or` between no config and no cost: price_side makes a side with both or "
        "with neither"
    ),
    **{
        f"infra.render.data.x__oss_locations__mutmut_{n}": (
            "another default for an OSS volume without volumeAttributes: every OSS volume the "
            "manifests build (infra.manifests.oss) names its bucket and path there"
        )
        for n in (27, 29)
    },
    "infra.render.data.x_adoption_lines__mutmut_15": (
        "another default for a kept resource without a bucket input: only the file system has "
        "none, and its line names no bucket; the one bucket resource (OssBucket) always sets "
        "bucket"
    ),
    "infra.render.data.x_adoption_lines__mutmut_16": (
        "strip('XX\\'XX') for strip(\"'\"): an OSS bucket name is lower-case letters, digits "
        "and hyphens (OSS naming rules, checked by the config), so it never ends in an X"
    ),
    "infra.pricing.refresh.x_eci_rows__mutmut_2": (
        "another first value of the currency: each of the two probes sets it before it is read"
    ),
    "infra.pricing.refresh.x_write_atomically__mutmut_15": (
        "encoding 'UTF-8' for 'utf-8': Python's codec names are case-blind"
    ),
    "infra.pricing.refresh.x_write_atomically__mutmut_22": (
        "unlink(missing_ok=None): the temporary exists whenever it is removed (mkstemp made "
        "it, and only a failed write or rename reaches the removal)"
    ),
    "infra.pricing.refresh.x_write_atomically__mutmut_24": (
        "unlink(missing_ok=False): the temporary exists whenever it is removed (only a failed "
        "write or rename reaches the removal, and a failed rename leaves it in place)"
    ),
    **{
        f"infra.config.errors.x__locate__mutmut_{n}": (
            "skip = None for skip = False: both are false"
        )
        for n in (3, 6)
    },
    "infra.config.errors.x__locate__mutmut_15": (
        "an unknown key taken as a mapping of sections: pydantic's loc ends at the unknown "
        "key, so no part follows it to look up"
    ),
    "infra.config.errors.x__locate__mutmut_17": (
        "the early return for one entry of a mapping of sections never taken: the loop then "
        "steps into that section, skips the entry's name and returns the same fields, no "
        "field and the whole loc's length"
    ),
    **{
        f"infra.config.errors.x__allowed__mutmut_{n}": (
            "the bare fallback's words, or `or` for `and` before it: every key a user may write "
            "without a description or choices holds a section "
            "(test_every_key_a_user_may_write_says_what_it_takes), and the program's keys are "
            "refused as unknown before, so only sections get there, which both read alike"
        )
        for n in (12, 22, 23)
    },
    "infra.config.errors.x_describe__mutmut_3": (
        "errors(include_url=True): the url is a key of each error that describe never reads"
    ),
    **{
        f"infra.config.errors.x_problem__mutmut_{n}": (
            "json.dumps without default=str: a config holds JSON's types only (the engine's "
            "JSON, or the stack reader's plain YAML values), which it writes without one"
        )
        for n in (6, 8)
    },
    "infra.config.schema.x_stack_file_schema__mutmut_2": (
        "json_schema(by_alias=None): pydantic 2 reads None as its default, True"
    ),
    "infra.pricing.table.x_load_table__mutmut_4": (
        "encoding 'UTF-8' for 'utf-8': Python's codec names are case-blind"
    ),
    "infra.pricing.table.x__plain__mutmut_10": (
        "format 'F' for 'f': they differ only in how infinity and NaN are written, which the "
        "table refuses as prices"
    ),
    "infra.pricing.table.xǁPriceTableǁfind__mutmut_1": (
        "another default zone for find(): no Alibaba zone is named XXXX, so it matches no "
        "zone's row and the region's row is found, as with no zone"
    ),
    **{
        f"infra.pricing.cost.xǁPricerǁinstances__mutmut_{n}": (
            "zip's strict check: the prices are read one per type, so the lengths always match"
        )
        for n in (17, 20, 21)
    },
    "infra.pricing.cost.xǁPricerǁstored__mutmut_1": (
        "another default reason for an unknown amount: every caller that can pass no amount "
        "(the bucket) gives its reason"
    ),
    **{
        f"infra.pricing.cost.x__storage__mutmut_{n}": (
            "another reason beside a known size: stored() reads the reason only when the "
            "amount is unknown"
        )
        for n in (42, 46)
    },
    "infra.pricing.cost.x_steady_items__mutmut_19": (
        "`=` for `+=` before an ACK stack's pools: the items before them are an existing "
        "cluster's only, never an ACK stack's"
    ),
    "infra.pricing.cost.x_steady_items__mutmut_91": (
        "spot=None for spot=False for TensorBoard's pod: both are false"
    ),
    "infra.pricing.cost.x__ack_gpu_nodes__mutmut_11": (
        "`or 1` for a pool's unset maxSize: it is derived, never unset, and a maxSize of 0 "
        "beside GPU replicas is refused (the pool could never hold them), so no replica is "
        "added either way"
    ),
    **{
        f"infra.pricing.cost.xǁStackCostǁ{name}__mutmut_{n}": (
            "1 for 0 hours without job.activeDeadlineSeconds: a run's most is read only with "
            "a deadline (the review says 'unbounded' without one, and the config refuses "
            "budget.maxCnyPerRun and maxCnyPerSweep without one)"
        )
        for name, n in (("run_most", 5), ("sweep_most", 9))
    },
    **{
        f"infra.config.stack_file.x_did_you_mean__mutmut_{n}": (
            "get_close_matches' n (3 by default, or 2) and cutoff (0.6 by default) as given: "
            "only the best match, the first of any n, is shown"
        )
        for n in (10, 11, 15)
    },
    **{
        f"infra.config.stack_file.xǁStackFileǁlocate__mutmut_{n}": (
            "how a problem's first word is cut off: a key path never holds whitespace "
            "(key_path quotes such a key with JSON escapes), so every cut gives the same key"
        )
        for n in (5, 8, 11)
    },
    "infra.config.stack_file.x_read_stack__mutmut_19": (
        "the whole file read before its size is checked: the same refusal, only later"
    ),
    "infra.config.stack_file.x_engine_scalar__mutmut_12": (
        "an X among the characters a number may start with: a word starting with X is no "
        "integer or float to the checks after it either, so it is returned as written"
    ),
    "infra.config.stack_file.x_read_stack__mutmut_21": (
        "two bytes past the limit read instead of one: a file over the limit is longer than "
        "it either way, so the same refusal"
    ),
    "infra.config.stack_file.x_read_stack__mutmut_34": (
        "decode('UTF-8') for decode('utf-8'): Python's codec names are case-blind"
    ),
    "infra.config.stack_file.x__config_key__mutmut_10": (
        "another namespace's keys filed under tftrain's: the lines are read only to locate "
        "parse_config's problems, which name tftrain: keys only"
    ),
    **{
        f"infra.config.stack_file.x__go_integer__mutmut_{n}": (
            "an X among the digits a base allows: int() refuses it, and its ValueError is "
            "answered None, as the check it passes would have"
        )
        for n in (12, 28)
    },
    **{
        f"infra.config.stack_file.x_engine_config__mutmut_{n}": (
            "json.dumps' allow_nan: the reader refuses .inf and .nan with their line, so no "
            "entry it hands on holds one"
        )
        for n in (13, 16, 20)
    },
    "infra.lifecycle.x_settle_seconds__mutmut_15": (
        "`else 1` for `else 0` as the finish window without an evaluator: the larger of it "
        "and lost_bound (at least 30 + 5 + 2 s) is taken, so the bound wins either way"
    ),
    "infra.lifecycle.x_run_key__mutmut_4": (
        "settings_fingerprint(env_values=None) for False: it is only tested for truth"
    ),
    **{
        f"infra.lifecycle.x__derived__mutmut_{n}": (
            "sections without replicas or without env tried too: more combinations of secret "
            "sections, among which the one the id was derived with still matches (another "
            "would need a digest collision)"
        )
        for n in (3, 5)
    },
    "infra.lifecycle.x__derived__mutmut_16": (
        "one combination size more than there are sections: combinations() of a size larger "
        "than its input yields nothing"
    ),
    **{
        f"infra.local.netns.xǁPrivateNetworkǁcreate__mutmut_{n}": (
            "O_RDONLY & O_CLOEXEC (0) for O_RDONLY | O_CLOEXEC: os.open makes every "
            "descriptor non-inheritable anyway (PEP 446), so it is close-on-exec either way"
        )
        for n in (42, 48)
    },
    "infra.local.netns.xǁPrivateNetworkǁcreate__mutmut_20": (
        "`or` for `and` in the assert that the holder's pipes exist: Popen makes both "
        "(stdin and stdout are PIPE), so both forms hold"
    ),
    **{
        f"infra.local.netns.xǁPrivateNetworkǁentering__mutmut_{n}": (
            "setns with nstype 0 (None) for CLONE_NEWUSER or CLONE_NEWNET: 0 joins a namespace "
            "of any type (setns(2)), and each descriptor is of the type named"
        )
        for n in (5, 11)
    },
    **{
        f"infra.local.sweep.xǁSweepRunǁ__init____mutmut_{n}": (
            "`trial 0` added to, or `trial 1` left out of, the output's names: they only set "
            "the prefix width, which the longest name decides, and neither is the longest "
            "(`launcher` is one character longer)"
        )
        for n in (11, 13)
    },
    "infra.local.plan.x_build_plan__mutmut_26": (
        "LocalData(None, None, None) for LocalData(None, None, '') as the stand-in without "
        "local data: its init checkpoint is only tested for truth (init_checkpoint_env)"
    ),
    "infra.local.plan.x_data_env__mutmut_17": (
        "export_env(images=None) for images=False: it is only tested for truth"
    ),
    **{
        f"infra.local.sweep.x_run_sweep__mutmut_{n}": (
            "> 128 or >= 129 for >= 128 after the trials: the status is 0, 1 or 128 + a "
            "signal's number, never 128"
        )
        for n in (53, 54)
    },
    **{
        f"infra.local.netns.x_bring_loopback_up__mutmut_{n}": (
            "another socket for the interface ioctls (SOCK_DGRAM's value 2 is AF_INET's, and a "
            "stream socket is the default type): SIOCGIFFLAGS and SIOCSIFFLAGS take any "
            "AF_INET socket (netdevice(7))"
        )
        for n in (3, 4)
    },
    **{
        f"infra.local.netns.x_bring_loopback_up__mutmut_{n}": (
            "the flags packed or read as a signed short ('h' for 'H'): lo's flags (IFF_UP, "
            "IFF_LOOPBACK, IFF_RUNNING: 0x49) are below 0x8000, the same bytes either way"
        )
        for n in (13, 24, 46)
    },
    "infra.local.netns.x_bring_loopback_up__mutmut_17": (
        "flags 1 for 0 in the SIOCGIFFLAGS request: the kernel writes the interface's flags "
        "over them (netdevice(7)), so the same flags are read"
    ),
    "infra.local.sweep.xǁSweepRunǁ_start__mutmut_14": (
        "cwd None for Path.cwd() when starting a trial: a child started without one inherits "
        "the launcher's working directory, which Path.cwd() names"
    ),
    **{
        f"infra.local.sweep.x_compare_trials__mutmut_{n}": (
            "subprocess.run's check None or left out for False: both are false"
        )
        for n in (20, 23)
    },
    **{
        f"infra.config.x__parse_run__mutmut_{n}": (
            "validate_python's by_alias None or left out: pydantic reads None as the model's "
            "validate_by_alias, True by default, as given"
        )
        for n in (16, 20)
    },
    "infra.config.stack_file.x__config_key__mutmut_3": (
        "rpartition for partition of a written key's namespace: read_stack refuses a key with "
        "a second colon before it files any line, so the key it cuts has one colon"
    ),
    "infra.config.types.x__ipv4_block__mutmut_4": (
        "ip_network without strict=True: strict is its default (Python's ipaddress docs), so "
        "a block with host bits set is refused either way"
    ),
    "infra.replica_plan.plan.x_expand__mutmut_37": (
        "looks for `)` from i + 3 instead of i + 2: differs only for `$()`, an empty name, "
        "which no env holds (Kubernetes refuses an empty env var name), so both keep it as "
        "written"
    ),
    # The cloud layer (infra/cloud/).
    "infra.cloud.kubernetes_version.x_offered_versions__mutmut_6": (
        "getattr's default None for '' for an entry without a version: `or ''` turns both "
        "into the '' that is left out"
    ),
    "infra.cloud.kubernetes_version.x__version_key__mutmut_16": (
        "-2 for -1 as the rank of a part that is no number: any rank below 0 puts it after "
        "every number and level with every other such part, as -1 does"
    ),
    **{
        f"infra.cloud.api_server_reach.x_this_machine_vpc__mutmut_{n}": (
            "one byte more of a read's cap (a token: 512, a VPC id: 128): the cap only stops a "
            "runaway answer (tested), and a token or a VPC id (vpc- and 21 characters) is far "
            "shorter than either, so both read the same"
        )
        for n in (20, 32)
    },
    **{
        f"infra.render.relabel.x__kind__mutmut_{n}": (
            "another cut of a title: title_of only yields `Kind ns/name` (one space) or "
            "`pkg:module:Type  name` (two spaces, a type token of three ':'-parts), which "
            "split(None), any rsplit count and [1] for [-1] cut alike"
        )
        for n in (3, 11, 13, 17, 18)
    },
    "infra.render.relabel.x_fold_run_id__mutmut_18": (
        "None for '' as the title before the first: both are false, and `or` replaces either"
    ),
    "infra.render.gpus.x_gpu_pool_lines__mutmut_27": (
        "another default for a pool without desiredSize: any text that is not digits reads "
        "as 0 nodes, as '' does"
    ),
    "infra.render.gpus.x_gpu_pool_lines__mutmut_28": (
        "X stripped too from a pool's desiredSize: the render writes it as digits, quoted or "
        "not, or as <computed>, none of which begins or ends in X"
    ),
    **{
        f"infra.render.style.{name}": (
            "sort_keys=True or default_flow_style=False left out: they are yaml.dump's own "
            "defaults (PyYAML 5.1 and later)"
        )
        for name in ("x_block_yaml__mutmut_9", "x_block_yaml__mutmut_10", "x_one_line__mutmut_10")
    },
    **{
        f"infra.render.cloud.x__is_cloud_resource__mutmut_{n}": (
            "another prefix in place of kubernetes: for what is no cloud resource: it is only "
            "asked of the shown resources, from which the kubernetes: ones were just left out"
        )
        for n in (4, 5)
    },
    **{
        f"infra.render.{name}": "'UTF-8' for 'utf-8': Python's codec names are case-blind"
        for name in (
            "__main__.x_main__mutmut_5",
            "review.x_main__mutmut_5",
            "review.x__preview_section__mutmut_22",
        )
    },
    "infra.render.__main__.x_main__mutmut_21": (
        "hang warnings asked of a platform stack too: it may not set job or any replica group "
        "(refused as a run's keys), and without an evaluator hang_warnings answers none"
    ),
    **{
        f"infra.render.review.x_stack_names__mutmut_{n}": (
            "another stack name for finding the stacks directory: only the file's parent is read"
        )
        for n in (2, 6, 7)
    },
    **{
        f"infra.render.review.x_comment__mutmut_{n}": (
            "zip's strict check: the sections are made one per changed stack, so the lengths "
            "always match"
        )
        for n in (64, 67, 68)
    },
    **{
        f"infra.render.unified.x__merged__mutmut_{n}": (
            "another tag for a change: get_grouped_opcodes and unified_diff read only whether "
            "a tag is 'equal'"
        )
        for n in (16, 20, 21)
    },
    **{
        f"infra.render.unified.xǁ_Alignedǁ__init____mutmut_{n}": (
            "other sequences or autojunk for the aligned matcher: its get_opcodes is given, "
            "and get_grouped_opcodes reads nothing else (set_seqs with None keeps None)"
        )
        for n in range(1, 9)
    },
    "infra.render.unified.x_unified_diff__mutmut_11": (
        "= for += on the still empty list of lines: the same list"
    ),
    **{
        f"trainer.train_loop.x_restore_finished__mutmut_{n}": (
            "another steps_run (None for 0) or seconds (None, 1.0 for 0.0) for a run restored "
            "already finished: both are read only to print examples per second, and only "
            "when steps_run is non-zero (None and 0 alike skip it)"
        )
        for n in (17, 18, 24)
    },
    **{
        f"infra.local.netns.x__hold__mutmut_{n}": (
            "the refusal printed without flush: the holder exits at once (sys.exit), which "
            "flushes stdout, so the launcher reads the same line"
        )
        for n in (40, 42, 44)
    },
    **{
        f"infra.render.provider_sdk.x_sdk_module__mutmut_{n}": (
            "another attribute name read to load the package ('XX__all__XX', '__ALL__'): "
            "pulumi's lazy module loads itself on any attribute read that is not one of its "
            "introspection names, and the fresh-process test passes with either"
        )
        for n in (21, 22)
    },
    "infra.config.stack_file.x__parse__mutmut_48": (
        "another line stand-in for a YAML error without a mark: ruamel's scanner, parser and "
        "composer raise MarkedYAMLError with the offending token's mark, and its reader a "
        "ReaderError with a position (40,000 random short documents raised none without "
        "either), so the stand-in is never printed"
    ),
    "infra.config.stack_file.xǁ_Builderǁscalar__mutmut_19": (
        "(True, True) for the resolver's implicit flags of a plain scalar: ruamel's "
        "VersionedResolver.resolve reads only the first; the second it keeps in a local "
        "that nothing reads after"
    ),
    "infra.render.parsed.x_parse_render__mutmut_9": (
        "read as a stack reference before the first title: the lines there (the render's "
        "header and the cloud banner) hold no '#   name: ' line"
    ),
    "infra.render.parsed.x_name_of_title__mutmut_1": (
        "split(None) for split('  ') of a resource title: title_of only yields `type  name`, "
        "two parts with no other whitespace"
    ),
    **{
        f"infra.render.actions.x_cloud_replace_lines__mutmut_{n}": (
            "zip's strict check: referring is made one per replacing key, so the lengths match"
        )
        for n in (12, 15)
    },
    "infra.render.sweep.x__distinct_note__mutmut_3": (
        "config.sweep read without its None check: only sweep_section calls it, after "
        "answering '' for no sweep"
    ),
    "infra.render.sweep.x_sweep_section__mutmut_2": (
        "`and` for `or` between no sweep and no trials: a sweep always has a trial (an empty "
        "one is refused), and no sweep has none"
    ),
    **{
        f"infra.render.review.x_comment__mutmut_{n}": (
            "the diffs' budget a few characters larger (the wrapper's separator subtracted, "
            "not added; one more character of the limit; a floor of 1,001 for 1,000): "
            "COMMENT_LIMIT (65,000) keeps 536 characters below GitHub's 65,536, so no comment "
            "can reach GitHub's limit by them, and the cut diffs differ by at most a line"
        )
        for n in (49, 54, 84)
    },
    "infra.render.review.x__preview_section__mutmut_20": (
        "the preview read in the locale's encoding, not UTF-8: Python turns the C and POSIX "
        "locales into UTF-8 (PEP 538), and the CI runner and every image here run a UTF-8 "
        "locale, so the text read is the same"
    ),
    "infra.render.review.x__fenced__mutmut_20": (
        "max(..., 1) for max(..., 0): differs only for a limit shorter than the cut note, and "
        "every limit is 1,000 characters or more"
    ),
    "infra.render.unified.x__sections__mutmut_19": (
        "another stand-in title for the lines before the first title: both sides get the same "
        "one, and no real title (title_of needs a space) can equal it"
    ),
    **{
        f"infra.render.unified.{name}": (
            "zip's strict check: ends is starts shifted by one, and an equal opcode pairs "
            "ranges of one length, so the lengths always match"
        )
        for name in (
            "x__sections__mutmut_22",
            "x__sections__mutmut_25",
            "x__sections__mutmut_26",
            "x__opcodes__mutmut_21",
            "x__opcodes__mutmut_24",
            "x__opcodes__mutmut_25",
        )
    },
    **{
        f"infra.render.unified.x__opcodes__mutmut_{n}": (
            "autojunk for the titles' matcher: difflib drops as junk only items found more "
            "than 1 % + 1 times in a sequence of 200 or more, and a render's titles are unique "
            "but for a lookup made twice at most"
        )
        for n in (7, 11, 14)
    },
    **{
        f"infra.render.unified.x__opcodes__mutmut_{n}": (
            "another tag for the change between unmatched sections: _merged reads only "
            "whether a tag is 'equal'"
        )
        for n in (59, 60)
    },
    "infra.render.unified.x__opcodes__mutmut_29": (
        "autojunk=None for False: SequenceMatcher only tests it for truth"
    ),
}


# --- Which modules, and which tests reach each ---------------------------------------------


def _tracked(*paths: str) -> list[str]:
    done = subprocess.run(
        ["git", "ls-files", "-z", *paths], cwd=ROOT, capture_output=True, check=True
    )
    return [name for name in done.stdout.decode().split("\0") if name]


def _module(path: str) -> str:
    """`infra/config/rules.py` → infra.config.rules; `infra/status/__init__.py` → infra.status."""
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def every_module() -> list[str]:
    """Every module of infra/ and trainer/, in path order."""
    return [_module(path) for path in _tracked(*SOURCES) if path.endswith(".py")]


def module_path(module: str) -> str:
    """The file of `module`, relative to the repository."""
    for candidate in (module.replace(".", "/") + ".py", module.replace(".", "/") + "/__init__.py"):
        if (ROOT / candidate).is_file():
            return candidate
    raise SystemExit(f"no module {module} in {', '.join(SOURCES)}")


def _imported(path: Path, module: str, known: set[str]) -> set[str]:
    """The known modules `path` (module `module`) imports: `from a import b` names a.b when
    that is a module, else a."""
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            names = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found - {module}


def import_graph() -> dict[str, set[str]]:
    """Module → the modules it imports, over infra/, trainer/ and tests/."""
    paths = [p for p in _tracked(*SOURCES, "tests") if p.endswith(".py")]
    known = {_module(path) for path in paths}
    return {_module(path): _imported(ROOT / path, _module(path), known) for path in paths}


def reach(test: str, graph: dict[str, set[str]]) -> dict[str, int]:
    """Each module a test file reaches, with its distance in imports. An ordinary module of
    infra/ or trainer/ is not followed further (what it imports is its own tests' business);
    a test helper and a package's `__init__` are (the test uses what they hand it)."""
    seen = {test: 0}
    queue = deque([test])
    while queue:
        current = queue.popleft()
        if seen[current] >= DEPTH:
            continue
        follow = current == test or current.startswith("tests.") or _is_package(current)
        if not follow:
            continue
        for target in graph.get(current, ()):
            if target not in seen:
                seen[target] = seen[current] + 1
                queue.append(target)
    return seen


def _is_package(module: str) -> bool:
    return (ROOT / module.replace(".", "/") / "__init__.py").is_file()


def test_selection(module: str, graph: dict[str, set[str]] | None = None) -> list[str]:
    """The test files that exercise `module`: those reaching it, plus EXTRA_TESTS (or, for
    a module of TESTS, those)."""
    if module in TESTS:
        return sorted(TESTS[module])
    graph = graph if graph is not None else import_graph()
    tests = [m for m in graph if m.startswith("tests.test_")]
    chosen = {f"{t.replace('.', '/')}.py" for t in tests if module in reach(t, graph)}
    chosen |= set(EXTRA_TESTS.get(module, ()))
    return sorted(chosen)


# --- Running one module ---------------------------------------------------------------------


def _mutmut_section(module: str, tests: Sequence[str]) -> str:
    def strings(values: Iterable[str]) -> str:
        return "[" + ", ".join(f'"{value}"' for value in values) + "]"

    common = _config_section()
    keep = {k: v for k, v in common.items() if k not in ("only_mutate", "pytest_add_cli_args_"
                                                           "test_selection")}  # fmt: skip
    keep["pytest_add_cli_args"] = [
        *keep.get("pytest_add_cli_args", []),  # type: ignore[misc]
        *(arg for test in DESELECT for arg in ("--deselect", test)),
    ]
    lines = ["[tool.mutmut]"]
    for key, value in keep.items():
        lines.append(f"{key} = {strings(value) if isinstance(value, list) else repr(value)}")
    lines.append(f"only_mutate = {strings([module_path(module)])}")
    if module in FORKSERVER:
        lines.append('process_isolation = "forkserver"')
    lines.append(f"pytest_add_cli_args_test_selection = {strings(tests)}")
    return "\n".join(lines) + "\n"


def _config_section() -> dict[str, object]:
    import tomllib

    return dict(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"])


def prepare(module: str, tests: Sequence[str]) -> Path:
    """.mutation/<module>/: the tracked files as they are now, its own [tool.mutmut]."""
    work = WORK / module
    for name in _tracked():
        target = work / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    pyproject = (ROOT / "pyproject.toml").read_text()
    section = re.compile(r"^\[tool\.mutmut\]\n(?:(?!^\[).*\n?)*", re.MULTILINE)
    (work / "pyproject.toml").write_text(section.sub(_mutmut_section(module, tests), pyproject))
    return work


def run(module: str, tests: Sequence[str], jobs: int) -> None:
    work = prepare(module, tests)
    # Every mutant again: mutmut keeps a survivor's verdict when only the tests changed.
    shutil.rmtree(work / "mutants", ignore_errors=True)
    _mutmut_run(work, jobs, (), "mutation-run.log")
    run_child_process_mutants(module)


def _mutmut_run(work: Path, jobs: int, names: Sequence[str], log: str) -> None:
    """`mutmut run` in a module's copy, niced, on `names` (none: every mutant)."""
    command = ["nice", "-n", "10", str(MUTMUT), "run", "--max-children", str(jobs), *names]
    with (work / log).open("w") as out:
        # mutmut exits non-zero when mutants survive; the score says how many.
        run_session(command, work, out)


def rerun_survivors(module: str, jobs: int) -> None:
    """The survivors of a module's last run, against the tests as they are now (its config
    kept, so mutmut keeps every other verdict); a whole run if the tests that reach the
    module are other files than the last run's."""
    work = WORK / module
    config = (work / "pyproject.toml").read_text()
    tests = test_selection(module)
    if _mutmut_section(module, tests) not in config:
        # A new test file reaches the module: mutmut resets every verdict when the selection
        # changes, so only a whole run says what the tests catch now.
        run(module, tests, jobs)
        return
    names = [n for n, s in results(work).items() if s not in CAUGHT and n not in EQUIVALENT]
    if not names:
        return
    for name in _tracked():
        target = work / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    (work / "pyproject.toml").write_text(config)
    # Which tests reach which function, mapped afresh: mutmut maps only tests new since the
    # last map, so a test that asserts more than it did, or reached a function through a
    # fixture then, would not be run against the mutants it now catches.
    (work / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    _mutmut_run(work, jobs, names, "survivors-run.log")
    run_child_process_mutants(module)


def recheck_not_caught(module: str, jobs: int) -> None:
    """The mutants the score file lists as not caught for `module`, run again against the
    tests that reach it now, for a module whose last run's copy is gone (its mutmut cache
    with it). The row's other verdicts stand: a selection only grows, and more tests can
    only catch more. The verdicts go to RECHECKED in the copy; write_score applies them."""
    _, lines = earlier(SCORE_FILE.read_text())
    names = [_named(line) for line in lines.get(module, []) if _named(line) not in EQUIVALENT]
    if not names:
        return
    work = prepare(module, test_selection(module))
    shutil.rmtree(work / "mutants", ignore_errors=True)
    _mutmut_run(work, jobs, names, "recheck-run.log")
    run_child_process_mutants(module)
    statuses = results(work)  # every mutant today's source makes, run or not
    verdicts = {name: statuses.get(name, GONE) for name in names}
    (work / "mutants" / RECHECKED).write_text(json.dumps(verdicts, indent=1))


def run_child_process_mutants(module: str) -> None:
    """The mutants of CHILD_PROCESS_TESTS' functions that mutmut found no test for, each
    against its tests (stopping at the first failure, as mutmut does)."""
    work = WORK / module
    pending = [
        name
        for name, status in results(work).items()
        # Survived too: the tests mutmut saw call the function in-process may not be the ones
        # that exercise it in a child.
        if status in ("no tests", "survived")
        and name.rpartition("__mutmut_")[0] in CHILD_PROCESS_TESTS
    ]
    if not pending:
        return
    meta_path = work / "mutants" / f"{module_path(module)}.meta"
    meta = json.loads(meta_path.read_text())
    with (work / "child-process-run.log").open("w") as out:
        for name in pending:
            in_child, tests = CHILD_PROCESS_TESTS[name.rpartition("__mutmut_")[0]]
            command = ["nice", "-n", "10", sys.executable, "-m", "pytest", "-x", "-q",
                       "-p", "no:cacheprovider", "-p", "no:randomly", *tests]  # fmt: skip
            local_name = name.removeprefix(f"{module}.")
            out.write(f"{name}:\n")
            out.flush()
            code = run_session(
                command,
                work / "mutants",
                out,
                timeout=CHILD_PROCESS_TIMEOUT,
                env={**os.environ, "MUTANT_UNDER_TEST": f"{in_child}.{local_name}"},
            )  # pytest's: 0 all passed (survived), 1 a test failed
            if code == TIMED_OUT:
                code = TIMEOUT_EXIT_CODE
            meta["exit_code_by_key"][name] = code
    meta_path.write_text(json.dumps(meta, indent=4))


def results(work: Path) -> dict[str, str]:
    """Every mutant's status in one module's copy, by name."""
    done = subprocess.run(
        [str(MUTMUT), "results", "--all", "true"],
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.findall(r"^\s+(\S+): (.+)$", done.stdout, flags=re.MULTILINE)
    return {name: status.strip() for name, status in found}


def module_of(mutant: str) -> str:
    """`infra.replica_plan.run_data.x_under__mutmut_3` → infra.replica_plan.run_data
    (methods: `xǁClassǁmethod`)."""
    return mutant.split(".x", 1)[0]


# --- The score file -------------------------------------------------------------------------

HEADER = "| module | caught / counted | score | not caught | equivalent (left out) | not run |"
NOT_YET = "| {module} | - | not yet run | - | - | - |"


def row(module: str, statuses: dict[str, str]) -> str:
    mine = {n: s for n, s in statuses.items() if module_of(n) == module}
    equivalent = sum(1 for n in mine if n in EQUIVALENT)
    counted = [s for n, s in mine.items() if n not in EQUIVALENT and s != NOT_RUN]
    caught = sum(Counter(counted)[s] for s in CAUGHT)
    total = len(counted)
    not_run = sum(1 for n, s in mine.items() if n not in EQUIVALENT and s == NOT_RUN)
    return _row_line(module, caught, total, total - caught, equivalent, not_run)


def _row_line(
    module: str, caught: int, total: int, not_caught: int, equivalent: int, not_run: int
) -> str:
    share = f"{caught / total:.1%}" if total else "none reached" if not_run else "no mutants"
    return f"| {module} | {caught} / {total} | {share} | {not_caught} | {equivalent} | {not_run} |"


def _counts(row_line: str) -> tuple[str, int, int, int, int, int]:
    """A run row → module, caught, counted, not caught, equivalent, not run."""
    module, counts, _, not_caught, equivalent, not_run = (
        cell.strip() for cell in row_line.strip("|").split("|")
    )
    caught, total = (int(n) for n in counts.split("/"))
    return module, caught, total, int(not_caught), int(equivalent), int(not_run)


def earlier(text: str) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The score file's rows of modules that were run, and its survivor lines, by module."""
    rows = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 6 and re.fullmatch(r"\d+ / \d+", cells[1]):
            rows[cells[0]] = line
    # "- `name` (status)" lines only: an equivalent's line ("- `name`: why") names it too.
    lines: dict[str, list[str]] = {}
    for line in dict.fromkeys(re.findall(r"^- `\S+` \(.*$", text, flags=re.MULTILINE)):
        # Each line once (above): a file merged from two branches may hold a line twice.
        lines.setdefault(module_of(_named(line)), []).append(line)
    return rows, lines


def _named(survivor_line: str) -> str:
    """ "- `name` (survived)" → name."""
    return survivor_line.split("`", 2)[1]


def reconciled(row_line: str, survivor_lines: list[str]) -> tuple[str, list[str]]:
    """An earlier run's row and survivor lines, with the survivors EQUIVALENT has listed
    since left out (moved from "not caught" to "equivalent"), as a run now would count them."""
    gone = [line for line in survivor_lines if _named(line) in EQUIVALENT]
    if not gone or "not yet run" in row_line:
        return row_line, survivor_lines
    module, caught, total, not_caught, equivalent, not_run = _counts(row_line)
    line = _row_line(
        module, caught, total - len(gone), not_caught - len(gone), equivalent + len(gone), not_run
    )
    return line, [line_ for line_ in survivor_lines if line_ not in gone]


def rechecked(
    row_line: str, survivor_lines: list[str], verdicts: dict[str, str]
) -> tuple[str, list[str]]:
    """A kept row and its survivor lines after recheck_not_caught's `verdicts`: a listed
    mutant caught now moves to the caught count, one whose code is gone leaves the count;
    the others keep their line, with the status the recheck gave them where it ran them."""
    if "not yet run" in row_line:
        return row_line, survivor_lines
    module, caught, total, not_caught, equivalent, not_run = _counts(row_line)
    now = [line for line in survivor_lines if verdicts.get(_named(line)) in CAUGHT]
    gone = [line for line in survivor_lines if verdicts.get(_named(line)) == GONE]
    kept = [
        f"- `{name}` ({verdicts[name]})"
        if verdicts.get(name := _named(line), NOT_RUN) != NOT_RUN
        else line
        for line in survivor_lines
        if line not in now and line not in gone
    ]
    line = _row_line(
        module,
        caught + len(now),
        total - len(gone),
        not_caught - len(now) - len(gone),
        equivalent,
        not_run,
    )
    return line, kept


CHANGED_LINE = "Changed since their last run, so their rows count the code as it was then: "


def changed_before(text: str) -> set[str]:
    """The modules a score file's text lists as changed since their last run."""
    line = next((line for line in text.splitlines() if line.startswith(CHANGED_LINE)), "")
    return {name.strip() for name in line.removeprefix(CHANGED_LINE).rstrip(".").split(",")} - {""}


def source_changed(module: str) -> bool:
    """The module's source differs from the copy its last run mutated (a run copies the
    tracked files into its work directory as it starts)."""
    path = module_path(module)
    copy = WORK / module / path
    return not copy.is_file() or copy.read_bytes() != (ROOT / path).read_bytes()


def write_score(
    fresh: dict[str, dict[str, str]], rechecks: dict[str, dict[str, str]] | None = None
) -> None:
    """`fresh`: module → its mutants' statuses, for the modules read now; `rechecks`:
    module → recheck_not_caught's verdicts, applied to the module's kept row."""
    old_text = SCORE_FILE.read_text() if SCORE_FILE.exists() else ""
    old_rows, old_survivors = earlier(old_text)
    rechecks = rechecks or {}
    table, survivors = [HEADER, "|---|---|---|---|---|---|"], []
    for module in every_module():
        if module in fresh:
            table.append(row(module, fresh[module]))
            survivors += [
                f"- `{name}` ({status})"
                for name, status in sorted(fresh[module].items())
                if status not in CAUGHT and status != NOT_RUN and name not in EQUIVALENT
            ]
        else:
            line, lines = reconciled(
                old_rows.get(module, NOT_YET.format(module=module)), old_survivors.get(module, [])
            )
            if module in rechecks:
                line, lines = rechecked(line, lines, rechecks[module])
            table.append(line)
            survivors += lines
    before = changed_before(old_text)
    changed = [
        module
        for module in every_module()
        # Listed before and not run whole since (a recheck runs only the not caught), or
        # its copy, run now, differs from today's source.
        if (module in before and module not in fresh)
        or ((module in fresh or module in rechecks) and source_changed(module))
    ]
    ran = sum(1 for line in table[2:] if "not yet run" not in line)
    partial = sum(1 for line in table[2:] if re.search(r"\| [1-9][0-9]* \|$", line))
    text = [
        "# Mutation score",
        "",
        "What the tests catch of one-token changes of every module of infra/ and trainer/",
        "(mutmut 3, `[tool.mutmut]` in pyproject.toml; caught = a test failed, the mutant",
        "timed out or crashed the test process). Written by `bench/mutation.py`, which runs",
        "each module against the tests that reach it; aim: at least 90 % per module. The",
        "shell scripts' score: [shell-mutation-score.md](shell-mutation-score.md).",
        "",
        "Command: `.venv/bin/python -m bench.mutation [module...]`",
        "",
        f"**{ran} of {len(table) - 2} modules run**, {partial} of them in part (their last "
        "column counts the mutants the run did not reach); 'not yet run' rows are modules "
        "no run has covered yet: a full run takes hours on this machine's 2 shared cores. "
        "A row kept from an earlier run counts the survivors listed as equivalent since as "
        "equivalent; `--not-caught` runs a kept row's not-caught mutants again against "
        "today's tests (its other verdicts stand: more tests can only catch more). "
        "`--list` prints the tests each module runs against.",
        "",
        "A mutant runs in a fork of the process that ran its tests once. Until 2026-11-27 that "
        "fork inherited the Pulumi mocks' thread pool without its threads, so every test "
        "running a program under the mocks waited until the 240 s limit failed it: the "
        "mutant counted as caught, or the run never reached it. tests/conftest.py now gives "
        "the fork a pool of its own (tests/test_mutation_fork.py). Since then "
        f"{', '.join(RUN_AGAIN)} were run again; the other rows with mutants not run "
        "come from runs before the fix, and their caught counts may include such waits.",
        "",
        "mutmut runs a mutant only against the tests its stats run saw call the mutated "
        "function. A value a test file computed once and shared (a platform deployed once "
        "for tests/test_run_namespaces.py, a trained run, a parsed stack) counted only for "
        "the first test that asked for it, so mutants only later tests catch survived. "
        "Since 2026-11-27 every such value goes through tests/shared_values.py, which "
        "shares nothing under mutmut, and tests/test_mutation_fork.py holds every test "
        "file to it.",
        "",
        *table,
        "",
        *(
            [
                f"{CHANGED_LINE}{', '.join(changed)}.",
                "",
            ]
            if changed
            else []
        ),
        "## Left out as equivalent",
        "",
        *(f"- `{name}`: {why}" for name, why in sorted(EQUIVALENT.items())),
        *([] if EQUIVALENT else ["None."]),
        "",
        "## Not caught",
        "",
        *survivors,
        *([] if survivors else ["None."]),
        "",
    ]
    SCORE_FILE.write_text("\n".join(text))


def chosen_modules(patterns: Sequence[str]) -> list[str]:
    modules = every_module()
    if not patterns:
        return modules
    picked = [m for m in modules if any(fnmatch.fnmatch(m, p) for p in patterns)]
    if not picked:
        raise SystemExit(f"no module matches {' '.join(patterns)}")
    return picked


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="modules or globs (default: every module)")
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1)")
    parser.add_argument("--list", action="store_true", help="print each module's tests")
    parser.add_argument("--score-only", action="store_true", help="rewrite the score file")
    parser.add_argument(
        "--survivors", action="store_true", help="run only the last run's survivors again"
    )
    parser.add_argument(
        "--not-caught",
        action="store_true",
        help="run the score file's not-caught mutants again (for a module whose copy is gone)",
    )
    args = parser.parse_args(argv)
    stop_on_sigterm()
    modules = chosen_modules(args.modules)
    if args.list:
        graph = import_graph()
        for module in modules:
            print(f"{module}: {' '.join(test_selection(module, graph)) or '(no test)'}")
        return 0
    if args.not_caught:
        for module in modules:
            recheck_not_caught(module, args.jobs)
    elif args.survivors:
        for module in modules:
            if (WORK / module / "mutants" / RECHECKED).is_file():
                recheck_not_caught(module, args.jobs)  # its copy holds only those mutants
            elif (WORK / module / "mutants").is_dir():
                rerun_survivors(module, args.jobs)
    elif not args.score_only:
        for module in modules:
            tests = test_selection(module)  # the tests as they are when its turn comes
            if tests:
                run(module, tests, args.jobs)
    copies = [m for m in every_module() if (WORK / m / "mutants").is_dir()]
    rechecks = {
        m: json.loads(verdicts.read_text())
        for m in copies
        if (verdicts := WORK / m / "mutants" / RECHECKED).is_file()
    }
    fresh = {m: results(WORK / m) for m in copies if m not in rechecks}
    write_score(fresh, rechecks)
    print(SCORE_FILE.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
