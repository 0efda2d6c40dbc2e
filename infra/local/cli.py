"""`python -m infra.local <stack>`: run a stack's training topology as local processes."""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shlex
import shutil
import signal
import stat
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from infra.config import ConfigError, StackConfig
from infra.config.sweep_points import point_text
from infra.config.types import SECRET_PLACEHOLDER
from infra.lifecycle import (
    TERMINATION_GRACE_SECONDS,
    run_key,
    settle_seconds,
)
from infra.local import output_lock, process
from infra.local.data import LocalData, LocalDataError, local_data
from infra.local.netns import NetworkUnavailable, PrivateNetwork
from infra.local.opening import say_plan
from infra.local.plan import (
    TENSORBOARD,
    LocalPlan,
    build_plan,
    default_output_dir,
    load_config,
    replica_names,
    resolve_secret_env,
    stack_secret_env_names,
    tensorboard_process,
    write_interpreters,
)
from infra.local.ports import PortReservation
from infra.local.supervisor import (
    LAUNCHER,
    STOP_SIGNALS,
    Backoff,
    RunFailures,
    Stopped,
    Supervisor,
    Timing,
    raise_stopped,
)
from infra.local.sweep import add_trial_option, refused_options, run_sweep
from infra.records.launch_record import end_launch_record, write_launch_record
from infra.records.report import config_that_ran, write_report
from infra.records.run_state import RESUME, read_run
from infra.topology import hang_warnings
from trainer.output_dir import OutputDirError, prepare_output_dir

EXIT_CONFIG = 2


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="tftrain run",
        description="Run a stack's ps/worker/chief topology as processes on this machine, "
        "with the stack's own command and TF_CONFIG on localhost ports.",
        epilog="""\
examples:
  tftrain run dev                                  train the dev stack here
  tftrain run dev --set hyperparams.learningRate=0.01
  tftrain run dev --dry-run                        each replica's command, env and TF_CONFIG
  tftrain run dev-sweep                            every trial of a sweep, then the comparison
  tftrain run dev --input ~/mnist --export ~/models

exit status:
  0  the run succeeded (the replica that ends it exited 0)
  N  it failed: the status of the replica that failed it (1, 137 if killed, …)
  2  bad arguments or stack config (nothing started)
  124  --timeout (job.activeDeadlineSeconds) passed
  130, 143  stopped by Ctrl-C or SIGTERM: run the same command again to continue
""",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "stack", metavar="STACK", nargs="?", default="dev", help="stack name (default: dev)"
    )
    parser.add_argument(
        "--stacks-dir",
        type=Path,
        metavar="DIR",
        help="where Pulumi.STACK.yaml lives (default: stacks/)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a stack value for this run, e.g. hyperparams.maxSteps=200 "
        "(YAML value; repeatable)",
    )
    _add_data_options(parser)
    _add_timing_options(parser)
    parser.add_argument(
        "--tensorboard",
        action="store_true",
        help="serve TensorBoard over all runs of the job while training",
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="train this run again from scratch: its output dir (checkpoints, outcome) is "
        "first moved aside to <dir>.before-<UTC time>, never deleted",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print each replica's command and env; start nothing"
    )
    add_trial_option(parser)
    return parser.parse_args(argv)


def _add_data_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output-dir", type=Path, metavar="DIR", help="default: runs/STACK/JOB/RUN_ID in the repo"
    )
    parser.add_argument(
        "--input",
        type=Path,
        metavar="DIR",
        help="the training data, in place of the bucket's input prefix (data.localInputDir)",
    )
    parser.add_argument(
        "--export",
        type=Path,
        metavar="DIR",
        help="where a succeeded run is copied, as DIR/JOB/RUN_ID/, in place of the "
        "bucket's export prefix (data.localExportDir)",
    )


def _add_timing_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="stop everything after SECONDS (exit 124); default: job.activeDeadlineSeconds",
    )
    parser.add_argument(
        "--grace",
        type=float,
        metavar="SECONDS",
        help="seconds the replicas get to end by themselves once the run has ended, before "
        "the launcher stops them (default: what their supervisors need, plus 5)",
    )
    parser.add_argument(
        "--stop-grace",
        type=float,
        default=float(TERMINATION_GRACE_SECONDS),
        metavar="SECONDS",
        help="seconds between SIGTERM and SIGKILL when stopping replicas (default: "
        f"{TERMINATION_GRACE_SECONDS}, a pod's terminationGracePeriodSeconds)",
    )


def _data_overrides(args: argparse.Namespace) -> list[str]:
    """--input and --export as the keys they stand for, so that they are validated, and
    another input is another run id, as with the key."""
    pairs = (("data.localInputDir", args.input), ("data.localExportDir", args.export))
    # A JSON string is a YAML string: any path survives, spaces and colons included.
    return [f"{key}={json.dumps(str(path.resolve()))}" for key, path in pairs if path]


def _supervise(supervisor: Supervisor) -> int:
    previous = {signum: signal.signal(signum, raise_stopped) for signum in STOP_SIGNALS}
    atexit.register(supervisor.kill)  # if something bypasses the finally below
    try:
        return supervisor.run()
    except Stopped as stop:  # a second signal while the first was stopping the replicas
        return 128 + stop.signum
    finally:
        # Hold further signals until the last resort has run, so nothing outlives us.
        for signum in previous:
            signal.signal(signum, signal.SIG_IGN)
        try:
            supervisor.kill()
        finally:
            atexit.unregister(supervisor.kill)
            for signum, handler in previous.items():
                signal.signal(signum, handler)


def _timeout(args: argparse.Namespace, plan: LocalPlan) -> float | None:
    """--timeout, else the stack's run deadline (each Job's activeDeadlineSeconds)."""
    if args.timeout is not None:
        return float(args.timeout)
    deadline = plan.config.job.active_deadline_seconds
    return float(deadline) if deadline else None


def _grace(args: argparse.Namespace, plan: LocalPlan) -> float:
    """--grace, else a safety net just past what the supervisors need to end every replica."""
    if args.grace is not None:
        return float(args.grace)
    return float(settle_seconds(plan.config, plan.topology) + 5)


def _print_plan(plan: LocalPlan, secret_names: frozenset[str] = frozenset()) -> None:
    """What would start: the env every replica shares once, then each replica's own. A value
    resolved from a Pulumi secret is shown as [secret], in the env and in the command."""
    secrets = {v for spec in plan.replicas for k, v in spec.env.items() if k in secret_names and v}

    def shown(text: str) -> str:
        for value in sorted(secrets, key=len, reverse=True):
            text = text.replace(value, SECRET_PLACEHOLDER)
        return text

    print(f"output dir: {plan.output_dir}")
    shared = dict(
        set.intersection(*(set(spec.env.items()) for spec in plan.replicas))
        if plan.replicas
        else ()
    )
    print("env of every replica:")
    for key in sorted(shared):
        print(f"  {key}={shown(shared[key])}")
    for spec in plan.replicas:
        print(f"{spec.name}:")
        for key in sorted(spec.env.keys() - shared.keys()):
            print(f"  {key}={shown(spec.env[key])}")
        print(f"  {shown(shlex.join(spec.argv))}")


def _report(plan: LocalPlan, shown: StackConfig, stack: str) -> str:
    """The post-run report, rendered here (with this project's Python, which the trainer's
    image need not have); a line saying where it is, or why there is none."""
    state = read_run(plan.output_dir)
    if state is None:
        return "report: none (no replica started)"
    title = f"Run {plan.config.job.run_id} of stack {stack}: {state.outcome}"
    try:
        path = write_report(state, title, config_that_ran(shown))
    except OSError as error:
        return f"report: could not be written ({error})"
    return f"report: {path}"


def _private_network() -> tuple[PrivateNetwork | None, str]:
    """The run's private network, or None, and the line that says which, before any start."""
    try:
        network = PrivateNetwork.create()
    except (NetworkUnavailable, OSError) as error:
        return None, (
            f"WARNING: no private network for the replicas ({error}): their TensorFlow "
            "servers listen on every interface of this machine, unauthenticated, while the "
            "run lasts (see docs/run-locally.md)"
        )
    return network, "network: the replicas share a private network namespace, loopback only"


def _run(
    plan: LocalPlan, ports: PortReservation, args: argparse.Namespace, shown: StackConfig
) -> int:
    network, network_line = _private_network()
    try:
        return _run_in(plan, ports, args, shown, network, network_line)
    finally:
        if network is not None:
            network.close()


def _run_in(
    plan: LocalPlan,
    ports: PortReservation,
    args: argparse.Namespace,
    shown: StackConfig,
    network: PrivateNetwork | None,
    network_line: str,
) -> int:
    sidecars = []
    if args.tensorboard:
        # The parent of the run dir holds every run of the job: TensorBoard overlays them.
        port = ports.port(TENSORBOARD)
        sidecars.append(
            tensorboard_process(plan.output_dir.parent, port, os.environ, plan.scratch_root)
        )
    names = [LAUNCHER, *(spec.name for spec in (*plan.replicas, *sidecars))]
    output = process.PrefixedOutput(names, sys.stdout)
    supervisor = Supervisor(
        plan.replicas,
        plan.primary,
        output,
        ports,
        Timing(grace=_grace(args, plan), stop_grace=args.stop_grace, timeout=_timeout(args, plan)),
        sidecars,
        Backoff(limit=plan.config.job.backoff_limit),
        RunFailures(plan.outcomes, plan.generation, run_key(plan.config)),
        network,
    )
    say = supervisor.say
    config = plan.config
    say_plan(say, plan, args, ports, network_line)
    finished_before = (plan.outcomes / f"succeeded.{run_key(config)}").exists()
    started = time.monotonic()
    write_launch_record(plan.outcomes, plan.generation)
    status = _supervise(supervisor)
    end_launch_record(plan.outcomes, plan.generation)  # before the report reads the run
    say("summary:")
    for line in supervisor.summary(time.monotonic() - started, plan.output_dir):
        say(line)
    say(_report(plan, shown, args.stack))
    if supervisor.stopped:
        # As the sweep says it: nothing is lost, the same command resumes the same run id.
        say(f"stopped: {RESUME}")
    if finished_before and status == 0:
        say(
            f"run {config.job.run_id} had already succeeded before this launch: nothing was "
            f"trained. To train it again from scratch: --fresh (keeps the old output as "
            f"{plan.output_dir.name}.before-<time>), or change a setting or job.runId"
        )
    say(f"exit status {status}")
    return status


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        # `shown` keeps Pulumi secrets as placeholders: the report shows the config that ran.
        shown = load_config(args.stack, args.stacks_dir, [*args.set, *_data_overrides(args)])
        secret_names = stack_secret_env_names(shown)
        config = resolve_secret_env(shown, os.environ)
    except (ConfigError, ValueError) as error:
        print(f"tftrain run: {error}", file=sys.stderr)
        return EXIT_CONFIG
    refused = _no_run(args.stack, config)
    if refused:
        print(f"tftrain run: {refused}", file=sys.stderr)
        return EXIT_CONFIG
    if config.trials or args.trial:
        chosen = _sweep_or_trial(args, config)
        if isinstance(chosen, int):
            return chosen
        config = chosen
    for warning in hang_warnings(config):
        print(f"tftrain run: {warning}", file=sys.stderr)
    # Absolute: the replicas work in their own directories, not in the caller's.
    output_dir = (
        args.output_dir.resolve() if args.output_dir else default_output_dir(args.stack, config)
    )
    try:
        data = local_data(config, output_dir)
    except LocalDataError as error:
        print(f"tftrain run: {error}", file=sys.stderr)
        return EXIT_CONFIG
    with ExitStack() as claim:
        if not args.dry_run:
            try:
                _claim_output_dir(output_dir, args.fresh, claim)
            except (OutputDirError, OSError) as error:
                print(f"tftrain run: {error}", file=sys.stderr)
                return EXIT_CONFIG
        return _launch(args, config, shown, output_dir, data, secret_names)


def _launch(
    args: argparse.Namespace,
    config: StackConfig,
    shown: StackConfig,
    output_dir: Path,
    data: LocalData,
    secret_names: frozenset[str],
) -> int:
    names = replica_names(config)
    scratch_root = Path(tempfile.mkdtemp(prefix="tftrain-"))
    try:
        write_interpreters(scratch_root)
        with PortReservation([*names, *([TENSORBOARD] if args.tensorboard else [])]) as ports:
            ports_by_name = {name: ports.port(name) for name in names}
            plan = build_plan(
                config, ports_by_name, output_dir, scratch_root, None, data, args.stack
            )
            if args.dry_run:
                _print_plan(plan, secret_names)
                return 0
            return _run(plan, ports, args, shown)
    finally:
        shutil.rmtree(scratch_root, ignore_errors=True)


def _no_run(stack: str, config: StackConfig) -> str | None:
    """Why this stack has nothing to launch here, or None."""
    if not config.has_run:
        return (
            f"{stack} is a platform stack (tftrain:cluster.role platform): it has no run to "
            "launch; launch one of its run stacks"
        )
    if config.job.suspend:
        return (
            f"{stack} is suspended (tftrain:job.suspend true): it runs nowhere until that is "
            "false; to run it here anyway: --set job.suspend=false"
        )
    return None


def _sweep_or_trial(args: argparse.Namespace, config: StackConfig) -> StackConfig | int:
    """The trial `--trial` names, or the whole sweep run (its exit status)."""
    if not config.trials:
        print(f"tftrain run: --trial: {args.stack} has no sweep", file=sys.stderr)
        return EXIT_CONFIG
    if args.trial is None:
        refused = refused_options(args)
        if refused:
            print(f"tftrain run: a sweep cannot take {refused}", file=sys.stderr)
            return EXIT_CONFIG
        if args.dry_run:
            for trial in config.trials:
                print(f"trial {trial.job.run_id}: {point_text(trial.trial_point)}")
            return 0
        return run_sweep(args, config, [*args.set, *_data_overrides(args)])
    trial = next((t for t in config.trials if t.job.run_id == args.trial), None)
    if trial is None:
        known = ", ".join(t.job.run_id for t in config.trials)
        print(
            f"tftrain run: --trial {args.trial}: not a trial of {args.stack} (its trials: {known})",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    try:
        return resolve_secret_env(trial, os.environ)  # the trial's own env, as the stack's
    except ValueError as error:
        print(f"tftrain run: {error}", file=sys.stderr)
        return EXIT_CONFIG


def check_owned(output_dir: Path) -> None:
    """Refuse an output dir that another user owns or anyone may write, or inside a job dir
    (which TensorBoard reads whole) that anyone may rename it in: they could plant a
    checkpoint the run resumes from, a `succeeded` record that skips it, or read its output.
    A sticky job dir such as /tmp is fine: nobody else may rename or delete our entries."""
    me = os.geteuid()
    checks = ((output_dir, (me,), False), (output_dir.parent, (me, 0), True))
    for path, owners, sticky_ok in checks:
        status = path.stat()
        if status.st_uid not in owners:
            raise OutputDirError(
                f"output dir {path} is owned by uid {status.st_uid}, not by you "
                f"(uid {me}): choose a directory of your own (--output-dir)"
            )
        sticky = sticky_ok and status.st_mode & stat.S_ISVTX
        if status.st_mode & stat.S_IWOTH and not sticky:
            raise OutputDirError(
                f"output dir {path} is writable by every user (mode "
                f"{stat.S_IMODE(status.st_mode):04o}): chmod o-w {path}, or choose another "
                "(--output-dir)"
            )


def _claim_output_dir(output_dir: Path, fresh: bool, claim: ExitStack) -> None:
    """The output dir, ready and held by this launch until `claim` closes (`output_lock`)."""
    if fresh and output_dir.exists():
        claim.callback(os.close, output_lock.hold(output_dir))  # never moved from under a launch
        _move_aside(output_dir)
    prepare_output_dir(output_dir)
    check_owned(output_dir)
    claim.callback(os.close, output_lock.hold(output_dir))


def _move_aside(output_dir: Path) -> None:
    """--fresh: the run's earlier output, kept under a name of its own."""
    if output_dir.exists():
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        aside = output_dir.with_name(f"{output_dir.name}.before-{stamp}")
        output_dir.rename(aside)
        print(f"tftrain run: --fresh: the earlier output is now {aside}")
