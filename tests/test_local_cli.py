"""The launcher's decisions before anything starts (infra/local/cli.py), in process: what it
refuses and how (exit 2, one line on stderr, nothing created), what --dry-run shows, the
opening lines, the time limits it derives, and the output dir it accepts. The runs
themselves: tests/test_local_launcher.py."""

from __future__ import annotations

import atexit
import json
import os
import re
import signal
import stat
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from infra.config import parse_config
from infra.local import cli
from infra.local.cli import check_owned, main, parse_args
from infra.local.netns import NetworkUnavailable, PrivateNetwork
from infra.local.opening import command_lines, data_lines, opening_lines
from infra.local.plan import ProcessSpec
from infra.local.supervisor import STOP_SIGNALS, Stopped
from infra.topology import build_topology
from tests.test_local_netns import NAMESPACES
from tests.test_run_report import failed_run
from trainer.output_dir import OutputDirError

IMAGE = "registry.example.com/tftrain/trainer:1"
SWEEP = {"parameters": {"hyperparams.learningRate": {"values": [0.01, 0.05]}}}


def stacks(tmp_path: Path, **config: Any) -> Path:
    run_id = {} if "sweep" in config else {"job": {"runId": "r1"}}
    values = {"image": IMAGE, **run_id, **config}
    document = {"config": {f"tftrain:{key}": value for key, value in values.items()}}
    (tmp_path / "Pulumi.s.yaml").write_text(yaml.safe_dump(document))
    return tmp_path


def launch(tmp_path: Path, *options: str) -> int:
    return main(["s", "--stacks-dir", str(tmp_path), "--output-dir", str(tmp_path / "out"),
                 *options])  # fmt: skip


def test_the_defaults_are_the_dev_stack_and_a_pods_grace() -> None:
    args = parse_args([])
    assert (args.stack, args.set, args.stop_grace, args.timeout, args.grace) == (
        "dev", [], 45.0, None, None,
    )  # fmt: skip
    assert not (args.tensorboard or args.fresh or args.dry_run)


def test_input_and_export_become_their_keys_as_absolute_json_strings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    args = parse_args(["s", "--input", "my data:1", "--export", "out"])
    assert cli._data_overrides(args) == [
        f"data.localInputDir={json.dumps(str(tmp_path / 'my data:1'))}",
        f"data.localExportDir={json.dumps(str(tmp_path / 'out'))}",
    ]
    assert cli._data_overrides(parse_args(["s"])) == []


def test_a_bad_config_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert launch(stacks(tmp_path), "--set", "worker.numbr=3") == 2
    err = capsys.readouterr().err
    assert err.startswith("tftrain run: ") and "tftrain:worker.numbr" in err
    assert not (tmp_path / "out").exists()


def test_a_suspended_stack_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert launch(stacks(tmp_path, job={"runId": "r1", "suspend": True}), "--dry-run") == 2
    assert capsys.readouterr().err.startswith(
        "tftrain run: s is suspended (tftrain:job.suspend true): it runs nowhere until that "
        "is false; to run it here anyway: --set job.suspend=false"
    )


def test_a_platform_stack_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["platform-ack", "--dry-run", "--output-dir", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.startswith(
        "tftrain run: platform-ack is a platform stack (tftrain:cluster.role platform): it has "
        "no run to launch"
    )


def test_trial_options_are_checked_against_the_stacks_sweep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert launch(stacks(tmp_path), "--trial", "x") == 2
    assert capsys.readouterr().err == "tftrain run: --trial: s has no sweep\n"
    stacks(tmp_path, sweep=SWEEP)
    assert launch(tmp_path, "--trial", "x", "--dry-run") == 2
    err = capsys.readouterr().err
    assert re.fullmatch(
        r"tftrain run: --trial x: not a trial of s "
        r"\(its trials: run-[0-9a-f]{8}, run-[0-9a-f]{8}\)\n",
        err,
    )
    assert launch(tmp_path, "--tensorboard") == 2
    assert capsys.readouterr().err.startswith("tftrain run: a sweep cannot take --tensorboard")
    assert not (tmp_path / "out").exists()


def test_a_sweeps_dry_run_lists_its_trials_and_one_trial_its_replicas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert launch(stacks(tmp_path, sweep=SWEEP), "--dry-run") == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[1] for line in lines] == [
        " hyperparams.learningRate=0.01",
        " hyperparams.learningRate=0.05",
    ]
    trial = lines[1].split()[1].rstrip(":")
    assert launch(tmp_path, "--trial", trial, "--dry-run") == 0
    out = capsys.readouterr().out
    # The second trial's point, shared by its replicas, and the trial's run id in their names.
    assert "\n  TFTRAIN_LEARNING_RATE=0.05\n" in out.split(f"mnist-{trial}-chief-0:")[0]
    assert out.startswith(f"output dir: {tmp_path / 'out'}\nenv of every replica:\n")
    assert not (tmp_path / "out").exists()  # a dry run creates nothing


def test_a_dry_run_shows_each_replica_once_and_the_shared_env_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert launch(stacks(tmp_path, job={"runId": "r1", "env": {"SHARED": "yes"}}), "--dry-run") == 0
    out = capsys.readouterr().out
    assert out.count("  SHARED=yes\n") == 1
    assert out.index("env of every replica:") < out.index("  SHARED=yes") < out.index("mnist-")
    for name in ("mnist-chief-0:", "mnist-worker-0:", "mnist-worker-1:", "mnist-ps-0:"):
        assert out.count(f"\n{name}\n") == 1, name
    assert "TF_CONFIG" in out.split("mnist-ps-0:\n")[1]


def test_the_opening_lines_say_what_this_launch_trains_with() -> None:
    config = parse_config(
        {"image": IMAGE, "job": {"name": "j", "runId": "r"}, "worker": {"number": 3},
         "hyperparams": {"learningRate": 0.0005, "batchSize": 64, "epochs": 2, "maxSteps": 9}}
    )  # fmt: skip
    assert opening_lines("dev", config) == [
        "stack dev: job j, run r",
        "replicas: 1 chief, 3 worker, 1 ps",
        "hyperparameters: learning rate 0.0005, batch size 64, epochs 2, max steps 9, "
        f"strategy {config.effective_strategy}",
    ]
    plain = parse_config({"image": IMAGE, "hyperparams": {"epochs": 1}})
    assert opening_lines("dev", plain)[2].split(", ")[2] == "epochs 1"
    assert "max steps" not in opening_lines("dev", plain)[2]


def test_the_deadline_and_grace_come_from_the_flags_else_the_stack() -> None:
    plan: Any = SimpleNamespace(config=parse_config({"image": IMAGE}))
    plan.topology = SimpleNamespace(replicas=())
    assert cli._timeout(parse_args(["s"]), plan) is None
    assert cli._timeout(parse_args(["s", "--timeout", "12"]), plan) == 12.0
    timed = parse_config({"image": IMAGE, "job": {"activeDeadlineSeconds": 600}})
    assert cli._timeout(parse_args(["s"]), SimpleNamespace(config=timed)) == 600.0
    assert cli._timeout(parse_args(["s", "--timeout", "5"]), SimpleNamespace(config=timed)) == 5
    assert cli._grace(parse_args(["s", "--grace", "3"]), plan) == 3.0
    # No evaluator: a silent death's bound (30 s + a 5 s beat + 2 s grace), plus 5.
    assert cli._grace(parse_args(["s"]), plan) == 42.0


def test_the_data_lines_name_the_export_target_and_the_fine_tuning() -> None:
    config = parse_config(
        {"image": IMAGE, "job": {"name": "j", "runId": "r", "initCheckpoint": "run:old"},
         "data": {"localInputDir": "/in", "localExportDir": "/ex"}}
    )  # fmt: skip
    assert data_lines(config) == [
        "input: /in",
        "export: /ex/j/r once the run succeeds",
        "fine-tuning from run:old (job.initCheckpoint)",
    ]
    assert data_lines(parse_config({"image": IMAGE})) == []


def test_commands_are_listed_once_per_distinct_command() -> None:
    config = parse_config(
        {"image": IMAGE, "job": {"command": ["python", "t.py"], "args": ["--a"]},
         "ps": {"command": ["python", "ps.py"]}}
    )  # fmt: skip
    assert command_lines(SimpleNamespace(config=config)) == [  # type: ignore[arg-type]
        "chief/worker: python t.py --a",
        "ps: python ps.py --a",
    ]


def test_an_output_dir_others_may_write_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "job" / "run"
    run.mkdir(parents=True)
    check_owned(run)
    run.chmod(0o777)
    with pytest.raises(OutputDirError, match=r"writable by every user \(mode 0777\): chmod o-w"):
        check_owned(run)
    run.chmod(0o755)
    run.parent.chmod(0o777)
    with pytest.raises(OutputDirError, match=f"output dir {run.parent} is writable"):
        check_owned(run)
    run.parent.chmod(0o777 | stat.S_ISVTX)  # like /tmp: nobody may rename our entries
    check_owned(run)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory away needs root")
def test_an_output_dir_of_another_user_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    os.chown(run, 12345, -1)
    with pytest.raises(OutputDirError, match="owned by uid 12345, not by you"):
        check_owned(run)
    os.chown(run, 0, -1)
    os.chown(tmp_path, 12345, -1)  # the job dir: root's or ours only
    with pytest.raises(OutputDirError, match=f"output dir {tmp_path} is owned by uid 12345"):
        check_owned(run)


def test_fresh_moves_the_earlier_output_aside_never_deletes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run-1"
    cli._move_aside(run)  # nothing there: nothing to keep
    assert list(tmp_path.iterdir()) == []
    run.mkdir()
    (run / "ckpt").write_text("kept")
    cli._move_aside(run)
    [aside] = tmp_path.iterdir()
    assert aside.name.startswith("run-1.before-") and aside.name.endswith("Z")
    assert len(aside.name.removeprefix("run-1.before-")) == len("20260101T000000Z")
    assert (aside / "ckpt").read_text() == "kept"
    assert capsys.readouterr().out == f"tftrain run: --fresh: the earlier output is now {aside}\n"


class _Interrupted:
    """A supervisor whose run is cut short by a second signal while stopping the replicas."""

    def __init__(self) -> None:
        self.killed = 0

    def run(self) -> int:
        raise Stopped(signal.SIGTERM)

    def kill(self) -> None:
        self.killed += 1


def test_a_second_signal_ends_the_launch_with_its_status_and_kills_everything(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at_exit: list[Any] = []  # what would run at interpreter exit
    monkeypatch.setattr(atexit, "register", at_exit.append)
    monkeypatch.setattr(atexit, "unregister", at_exit.remove)
    supervisor = _Interrupted()
    handlers = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    assert cli._supervise(supervisor) == 128 + 15  # type: ignore[arg-type]
    assert supervisor.killed == 1
    # Its last resort is no longer registered for exit, and the handlers are the caller's.
    assert at_exit == []
    assert {signum: signal.getsignal(signum) for signum in STOP_SIGNALS} == handlers


def test_a_secret_is_masked_whole_even_inside_a_longer_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    specs = (
        ProcessSpec("a", ("run", "--key=abcdef", "--short=bcd"), {"K": "abcdef", "S": "bcd"}),
        ProcessSpec("b", ("run",), {"K": "abcdef", "S": "bcd", "OWN": "abcdefbcd"}),
    )
    plan: Any = SimpleNamespace(output_dir=tmp_path, replicas=specs)
    cli._print_plan(plan, frozenset({"K", "S"}))
    assert capsys.readouterr().out == (
        f"output dir: {tmp_path}\nenv of every replica:\n  K=[secret]\n  S=[secret]\n"
        "a:\n  run --key=[secret] --short=[secret]\n"
        "b:\n  OWN=[secret][secret]\n  run\n"
    )
    cli._print_plan(SimpleNamespace(output_dir=tmp_path, replicas=()))  # type: ignore[arg-type]
    assert capsys.readouterr().out == f"output dir: {tmp_path}\nenv of every replica:\n"


def test_the_report_line_names_the_written_report_or_says_why_none(tmp_path: Path) -> None:
    config = parse_config({"image": IMAGE, "job": {"runId": "r9"}})
    empty: Any = SimpleNamespace(output_dir=tmp_path / "nothing", config=config)
    assert cli._report(empty, config, "dev") == "report: none (no replica started)"
    run = failed_run(tmp_path)
    line = cli._report(SimpleNamespace(output_dir=run, config=config), config, "dev")  # type: ignore[arg-type]
    path = Path(line.removeprefix("report: "))
    assert line.startswith("report: ") and path.is_file()
    assert "Run r9 of stack dev: failed" in path.read_text()


def test_without_a_private_network_the_warning_says_what_it_costs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse() -> PrivateNetwork:
        raise NetworkUnavailable("the kernel refused a network namespace (EPERM)")

    monkeypatch.setattr(PrivateNetwork, "create", staticmethod(refuse))
    assert cli._private_network() == (
        None,
        "WARNING: no private network for the replicas (the kernel refused a network "
        "namespace (EPERM)): their TensorFlow servers listen on every interface of this "
        "machine, unauthenticated, while the run lasts (see docs/run-locally.md)",
    )


@NAMESPACES
def test_with_a_private_network_the_line_says_so() -> None:
    network, line = cli._private_network()
    try:
        assert network is not None
        assert line == "network: the replicas share a private network namespace, loopback only"
    finally:
        if network is not None:
            network.close()


def test_a_sweep_is_run_with_this_launchs_options_and_overrides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []

    def sweep(args: Any, config: Any, overrides: list[str]) -> int:
        calls.append((args.stack, len(config.trials), overrides))
        return 7

    monkeypatch.setattr(cli, "run_sweep", sweep)
    monkeypatch.chdir(tmp_path)
    assert launch(stacks(tmp_path, sweep=SWEEP), "--set", "hyperparams.epochs=1",
                  "--input", "data") == 7  # fmt: skip
    assert calls == [
        (
            "s",
            2,
            ["hyperparams.epochs=1", f"data.localInputDir={json.dumps(str(tmp_path / 'data'))}"],
        )
    ]


def test_a_trials_secret_env_comes_from_this_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stacks(tmp_path, sweep=SWEEP)
    stack = tmp_path / "Pulumi.s.yaml"
    stack.write_text(
        stack.read_text() + "  tftrain:job:\n    env:\n      TOKEN:\n        secure: v1:AAAA\n"
    )
    monkeypatch.setenv("TOKEN", "t0k3n")
    assert launch(tmp_path, "--dry-run") == 0
    trial = capsys.readouterr().out.split()[1].rstrip(":")
    assert launch(tmp_path, "--trial", trial, "--dry-run") == 0
    out = capsys.readouterr().out
    assert "  TOKEN=[secret]\n" in out and "t0k3n" not in out


def test_fresh_stamps_the_kept_output_in_utc(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "Etc/GMT-14")  # 14 h ahead of UTC: a local stamp would show it
    time.tzset()
    try:
        (tmp_path / "run").mkdir()
        cli._move_aside(tmp_path / "run")
    finally:
        monkeypatch.undo()
        time.tzset()
    [aside] = tmp_path.iterdir()
    stamp = datetime.strptime(aside.name.removeprefix("run.before-"), "%Y%m%dT%H%M%SZ")
    assert abs(stamp.replace(tzinfo=UTC) - datetime.now(UTC)) < timedelta(minutes=5)


NET = """
import os, sys, time
from pathlib import Path
seen, name = Path(sys.argv[1]), os.environ["POD_NAME"]
net = os.readlink("/proc/self/ns/net")
seen.mkdir(exist_ok=True)
(seen / name).write_text(net)
print("net", net, flush=True)
# The chief's success ends the run, and a replica that starts after it runs nothing: the
# chief waits until all four have run (on a loaded machine they start late).
deadline = time.monotonic() + 100
while name.endswith("chief-0") and len(list(seen.iterdir())) < 4 and time.monotonic() < deadline:
    time.sleep(0.05)
"""
REPLICAS = ["mnist-chief-0", "mnist-ps-0", "mnist-worker-0", "mnist-worker-1"]


@NAMESPACES
def test_every_replica_runs_in_the_runs_private_network(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = ["python", "-c", NET, str(tmp_path / "seen")]
    stacks(tmp_path, job={"runId": "r1", "command": command, "backoffLimit": 0})
    assert launch(tmp_path, "--timeout", "120") == 0
    out = capsys.readouterr().out
    assert "network: the replicas share a private network namespace, loopback only" in out
    # Names are padded to the longest: "[mnist-chief-0]  net ..." has two spaces.
    seen = dict(re.findall(r"^\[(mnist-\S+)\]\s+net (net:\[\d+\])$", out, re.MULTILINE))
    assert sorted(seen) == REPLICAS, out
    # One network for the whole run, and not this machine's.
    assert len(set(seen.values())) == 1, out
    assert set(seen.values()) != {os.readlink("/proc/self/ns/net")}


def test_a_trial_that_would_put_a_secret_on_its_command_line_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The stack's own args name no secret; one trial's swept args do.
    args_sweep = {"parameters": {"job.args": {"values": [["--a"], ["--t=$(TOKEN)"]]}}}
    stacks(tmp_path, sweep=args_sweep)
    stack = tmp_path / "Pulumi.s.yaml"
    stack.write_text(
        stack.read_text() + "  tftrain:job:\n    env:\n      TOKEN:\n        secure: v1:AAAA\n"
    )
    monkeypatch.setenv("TOKEN", "t0k3n")
    assert launch(tmp_path, "--dry-run") == 0
    trial = capsys.readouterr().out.splitlines()[1].split()[1].rstrip(":")
    assert launch(tmp_path, "--trial", trial, "--dry-run") == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "tftrain run: tftrain:job.args: $(TOKEN) is a Pulumi secret; on this machine it would "
        "be on the replica's command line, visible to every user in ps: read TOKEN from the "
        "environment in the trainer instead\n"
    )


def test_tensorboard_serves_the_jobs_runs_on_its_own_port(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    served = []

    def tensorboard(logdir: Path, port: int, base_env: Any, scratch_root: Path) -> Any:
        served.append((logdir, port, base_env, scratch_root))
        return real(logdir, port, base_env, scratch_root)

    real = cli.tensorboard_process
    monkeypatch.setattr(cli, "tensorboard_process", tensorboard)
    stacks(tmp_path, job={"runId": "r1", "command": ["python", "-c", "pass"], "backoffLimit": 0})
    assert launch(tmp_path, "--tensorboard", "--timeout", "120") == 0
    out = capsys.readouterr().out
    [(logdir, port, base_env, scratch_root)] = served
    # Every run of the job (the parent of this run's dir), on the port the launcher names.
    assert logdir == tmp_path
    assert re.findall(r"^\[launcher\] +TensorBoard: http://127\.0\.0\.1:(\d+)/$", out, re.M) == [
        str(port)
    ]
    assert base_env is os.environ
    assert scratch_root.name.startswith("tftrain-")  # the launch's scratch root


# `tftrain run --help` as a user should read it, at 200 columns (no wrapping but argparse's
# own): every option with its metavar and meaning, the examples, and the exit statuses, a
# contract with scripts and CI (docs/run-locally.md), line breaks and all.
HELP = """\
usage: tftrain run [-h] [--stacks-dir DIR] [--set KEY=VALUE] [--output-dir DIR] [--input DIR] \
[--export DIR] [--timeout SECONDS] [--grace SECONDS] [--stop-grace SECONDS] [--tensorboard] \
[--fresh]
                   [--dry-run] [--trial RUN_ID]
                   [STACK]

Run a stack's ps/worker/chief topology as processes on this machine, with the stack's own \
command and TF_CONFIG on localhost ports.

positional arguments:
  STACK                 stack name (default: dev)

options:
  -h, --help            show this help message and exit
  --stacks-dir DIR      where Pulumi.STACK.yaml lives (default: stacks/)
  --set KEY=VALUE       override a stack value for this run, e.g. hyperparams.maxSteps=200 \
(YAML value; repeatable)
  --output-dir DIR      default: runs/STACK/JOB/RUN_ID in the repo
  --input DIR           the training data, in place of the bucket's input prefix \
(data.localInputDir)
  --export DIR          where a succeeded run is copied, as DIR/JOB/RUN_ID/, in place of the \
bucket's export prefix (data.localExportDir)
  --timeout SECONDS     stop everything after SECONDS (exit 124); default: \
job.activeDeadlineSeconds
  --grace SECONDS       seconds the replicas get to end by themselves once the run has ended, \
before the launcher stops them (default: what their supervisors need, plus 5)
  --stop-grace SECONDS  seconds between SIGTERM and SIGKILL when stopping replicas (default: 45, \
a pod's terminationGracePeriodSeconds)
  --tensorboard         serve TensorBoard over all runs of the job while training
  --fresh               train this run again from scratch: its output dir (checkpoints, \
outcome) is first moved aside to <dir>.before-<UTC time>, never deleted
  --dry-run             print each replica's command and env; start nothing
  --trial RUN_ID        a stack with a sweep: run only this trial (default: every trial not \
yet succeeded, sweep.parallel at a time; --output-dir is then the directory of the trials' RUN_ID
                        directories, default runs/STACK/JOB)

examples:
  tftrain run dev                                  train the dev stack here
  tftrain run dev --set hyperparams.learningRate=0.01
  tftrain run dev --dry-run                        each replica's command, env and TF_CONFIG
  tftrain run dev-sweep                            every trial of a sweep, then the comparison
  tftrain run dev --input ~/mnist --export ~/models

exit status:
"""


def _documented_exit_statuses() -> str:
    """docs/run-locally.md's "Exit status" table, as the help's lines: the docs are the
    contract the help repeats."""
    docs = (Path(__file__).resolve().parents[1] / "docs" / "run-locally.md").read_text()
    table = docs.split("## Exit status", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("| ").split(" | ") for line in table.splitlines() if line.startswith("| ")]
    return "".join(f"  {status}  {means}\n" for status, means in rows[2:])


def test_the_help_says_what_it_runs_how_to_call_it_and_each_exit_status(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as stop:
        parse_args(["--help"])
    assert stop.value.code == 0
    statuses = _documented_exit_statuses()
    assert statuses.count("\n") == 5, statuses
    assert capsys.readouterr().out == HELP + statuses


def test_with_an_evaluator_the_grace_covers_its_finish_time() -> None:
    # The evaluator's job.evaluatorFinishSeconds (100) + its stop grace (30) + 1, which is
    # longer than a silent death's bound (30 + 5 + 30), plus 5.
    config = parse_config(
        {"image": IMAGE, "evaluator": {"number": 1}, "job": {"evaluatorFinishSeconds": 100}}
    )
    plan: Any = SimpleNamespace(config=config, topology=build_topology(config))
    assert cli._grace(parse_args(["s"]), plan) == 136.0


def test_an_output_dir_anyone_may_write_is_refused_even_if_sticky(tmp_path: Path) -> None:
    # Sticky is fine for the job dir (nobody may rename our entries in it), never for the run
    # dir itself, where anyone could add a checkpoint.
    run = tmp_path / "run"
    run.mkdir()
    run.chmod(0o777 | stat.S_ISVTX)
    with pytest.raises(OutputDirError) as refused:
        check_owned(run)
    assert str(refused.value) == (
        f"output dir {run} is writable by every user (mode 1777): chmod o-w {run}, or choose "
        "another (--output-dir)"
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory away needs root")
def test_a_job_dir_of_a_third_user_is_refused_in_so_many_words(tmp_path: Path) -> None:
    # Root's job dir is fine (/tmp, a system path); uid 1's is someone else's.
    run = tmp_path / "run"
    run.mkdir()
    os.chown(tmp_path, 1, -1)
    with pytest.raises(OutputDirError) as refused:
        check_owned(run)
    assert str(refused.value) == (
        f"output dir {tmp_path} is owned by uid 1, not by you (uid 0): choose a directory of "
        "your own (--output-dir)"
    )


def test_missing_local_data_is_one_line_on_stderr_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no-such-input"
    assert launch(stacks(tmp_path), "--input", str(missing), "--dry-run") == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("tftrain run: ") and str(missing) in captured.err
    assert captured.err.count("\n") == 1


def test_the_local_data_and_the_stack_reach_the_replicas_env(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, export = tmp_path / "mnist", tmp_path / "models"
    data.mkdir()
    options = ("--input", str(data), "--export", str(export), "--dry-run")
    assert launch(stacks(tmp_path), *options) == 0
    out = capsys.readouterr().out
    # The run's success is exported by the replica that ends it, named for its stack.
    assert "  TFTRAIN_STACK=s\n" in out, out
    assert f"  TFTRAIN_EXPORT_DIR={export}\n" in out, out
    assert str(data) in out, out


def test_the_launchers_scratch_directory_is_gone_when_it_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    assert launch(stacks(tmp_path), "--dry-run") == 0
    assert list(scratch.iterdir()) == []


def test_a_topology_that_would_hang_is_warned_of_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A user's ParameterServerStrategy trainer with the evaluator in every cluster waits for
    # it forever (infra/topology.py hang_warnings): said before anything starts, on stderr,
    # where it is not mixed with the plan.
    own = {
        "image": "registry.example.com/team/trainer:1",
        "job": {"runId": "r1", "command": ["python", "t.py"], "evaluatorInCluster": True},
        "evaluator": {"number": 1},
        "tensorboard": {"image": "registry.example.com/tensorflow/tensorflow:2.21.0"},
    }
    assert launch(stacks(tmp_path, **own), "--dry-run") == 0
    captured = capsys.readouterr()
    assert captured.err == (
        "tftrain run: warning: tftrain:job.evaluatorInCluster is true with ps and an "
        "evaluator: a TF2 ParameterServerStrategy trainer that builds its cluster from "
        "TF_CONFIG as is waits forever for the evaluator, which serves nothing. Set it false, "
        "unless your trainer is TF1-style or removes the evaluator from the cluster itself\n"
    )
    assert "evaluatorInCluster" not in captured.out
