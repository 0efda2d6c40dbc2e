"""Time to accuracy: a stack's topology, one process and MultiWorkerMirrored, side by side.

Three setups train the same model on the same data (full MNIST) with the stack's
hyperparameters (same epochs, same global batch), each in a fresh output dir, so nothing
resumes:

- `stack`: the stack's own topology (dev: chief, 2 workers, 1 ps: ParameterServerStrategy)
  through the real launcher, `python -m infra.local <stack> --output-dir <fresh>`.
- `single`: `python -m trainer --strategy single`, no TF_CONFIG, the stack's
  hyperparameters from `infra.replica_plan.trainer_env.hyperparam_env`, and the env every local
  replica gets (`infra.local.plan.process_env`).
- `mwms`: the launcher with `--set ps.number=0 --set chief.number=0 --set worker.number=2`,
  which the trainer's `auto` strategy runs as MultiWorkerMirroredStrategy.

Repeats are interleaved (stack, single, mwms, stack, ...) so load that drifts over the benchmark
hits every setup alike, and ratios to single are taken within a round.

Per run: wall seconds from launch to the writer's final `Total Time:` line (test accuracy
evaluated, model exported), seconds until every process has exited, the writer's
`Examples/sec`, its `Test-Accuracy`, CPU seconds per process role, and the CPU other
programs used meanwhile. The trainer evaluates the test set only at the end, so afterwards
every kept checkpoint is evaluated (`bench.checkpoint_accuracy`, in one subprocess) to
find the first one at or above the target and when it was written.

    .venv/bin/python -m bench.time_to_accuracy                   # dev, one round
    .venv/bin/python -m bench.time_to_accuracy --repeat 3 --json
    .venv/bin/python -m bench.time_to_accuracy --repeat 5 --work-dir /tmp/tta --save tta.json

Before each run it waits (up to `--patience` s) until other programs use fewer than
`--quiet-below` cores; the load they put on the machine during each run is reported.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from infra.config import StackConfig, load_stack
from infra.local.plan import REPO, load_config, process_env, write_interpreters
from infra.replica_plan.trainer_env import hyperparam_env
from infra.topology import build_topology

TARGET_ACCURACY = 0.990
# `stack`: the stack's own topology; `mwms`: the same launcher with 2 workers and no ps.
SETUPS = ("stack", "single", "mwms")
MWMS_OVERRIDES = ("ps.number=0", "chief.number=0", "worker.number=2")
# The writer's last lines (trainer/train_loop.py); only the chief (or worker 0) prints them.
_TEST_ACCURACY = re.compile(r"Test-Accuracy: ([0-9.]+)")
_EXAMPLES_PER_SEC = re.compile(r"Examples/sec: ([0-9.]+)")
_TOTAL_TIME = re.compile(r"Total Time: ([0-9.]+)s")
_STEP = re.compile(r"Step: ([0-9]+)/")
_RESUMED = "Resumed from checkpoint"
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_SAMPLE_SECONDS = 0.25


@functools.cache
def shims() -> Path:
    """The interpreter shims the launcher puts first on a replica's PATH, for the processes
    this benchmark starts itself (the single-process setup, the checkpoint evaluation)."""
    scratch = Path(tempfile.mkdtemp(prefix="tftrain-bench-"))
    write_interpreters(scratch)
    return scratch


class BenchError(RuntimeError):
    """A run could not be measured (timed out, resumed, printed no result)."""


@dataclass(frozen=True)
class Setup:
    key: str  # short name: rows, JSON, the run's directory
    label: str  # what the table calls it
    processes: int  # training processes (the launcher itself is not counted)
    argv: Callable[[Path], list[str]]  # given the run's fresh output dir
    env: Callable[[Path], dict[str, str]]
    root_role: str  # what the process we start is, in the CPU breakdown


@dataclass
class Run:
    setup: str
    round: int
    returncode: int
    wall_s: float | None  # launch → the writer's `Total Time:` line
    exit_s: float  # launch → every process exited
    trainer_total_s: float | None  # the writer's own `Total Time` (from its own start)
    examples_per_sec: float | None
    test_accuracy: float | None
    examples_trained: int | None  # the last progress line's step x the global batch
    cpu_s: dict[str, float]  # CPU seconds by role, sampled from /proc
    tree_cpu_s: float  # CPU seconds of everything we started (exact: rusage)
    other_cores: float  # CPU that other programs used during the run, in cores
    trainer_processes: int  # seen running: more than the setup has means a restart
    expected_processes: int
    output_dir: str
    started_at: float  # epoch seconds, to place checkpoint mtimes on the run's clock
    other_cores_before: float = 0.0  # the same, in the seconds before the launch
    first_progress_s: float | None = None  # launch → the first `Step:` line
    accuracy_line_s: float | None = None  # launch → the `Test-Accuracy:` line
    checkpoints: list[dict[str, float]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Finished, printed its accuracy, and nothing was restarted (a fault, not a run)."""
        return (
            self.returncode == 0
            and self.test_accuracy is not None
            and self.trainer_processes <= self.expected_processes
        )

    @property
    def examples_per_cpu_s(self) -> float | None:
        """Examples trained per CPU second of everything started (start-up included)."""
        if not self.examples_trained or not self.tree_cpu_s:
            return None
        return self.examples_trained / self.tree_cpu_s

    def first_checkpoint_at_target(self) -> dict[str, float] | None:
        """The earliest kept checkpoint at or above the target, timed from launch."""
        for point in self.checkpoints:
            if point["accuracy"] >= TARGET_ACCURACY:
                return {**point, "seconds": point["written"] - self.started_at}
        return None


# --- the setups ------------------------------------------------------------------------


def base_env() -> dict[str, str]:
    """This shell's env without anything that would change what the trainer computes (the
    launcher passes none of it to the replicas; the single process must not get it either)."""
    return {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("TFTRAIN_") and key != "TF_CONFIG"
    }


def launcher_setup(
    key: str, label: str, stack: str, overrides: Sequence[str], timeout: float
) -> Setup:
    # Validated here, as the launcher will, so a bad override fails before any run.
    config = load_config(stack, overrides=overrides)
    sets = [part for override in overrides for part in ("--set", override)]

    def argv(output_dir: Path) -> list[str]:
        return [sys.executable, "-m", "infra.local", stack, *sets,
                "--output-dir", str(output_dir), "--timeout", str(timeout)]  # fmt: skip

    return Setup(
        key,
        label,
        len(build_topology(config).replicas),
        argv,
        lambda _output_dir: base_env(),
        root_role="launcher",
    )


def topology_label(stack: str, config: StackConfig) -> str:
    """E.g. `dev stack (chief 1, worker 2, ps 1)`."""
    groups = ", ".join(f"{g.type} {g.number}" for g in config.replica_groups if g.number)
    return f"{stack} stack ({groups})"


def single_setup(config: StackConfig) -> Setup:
    def env(output_dir: Path) -> dict[str, str]:
        contract = {
            **hyperparam_env(config),
            "TFTRAIN_STRATEGY": "single",
            "TFTRAIN_OUTPUT_DIR": str(output_dir),
        }
        if config.job.data_dir:
            contract["TFTRAIN_DATA_DIR"] = config.job.data_dir
        return process_env(base_env(), contract, shims())

    # The chief's command, with `python` found through the launcher's interpreter shims.
    argv = [*config.command_of(config.chief), *config.args_of(config.chief)]
    return Setup("single", "single process", 1, lambda _output_dir: argv, env, root_role="single")


# --- measuring one run -----------------------------------------------------------------


def cpu_busy_seconds() -> float:
    """CPU seconds spent on anything but idle and I/O wait, machine-wide, since boot.

    Includes steal (the hypervisor running other guests): that too is CPU we do not get.
    """
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]
    # guest and guest_nice (the last two) are already counted in user and nice.
    return (sum(fields[:8]) - idle) / _CLOCK_TICKS


def own_cpu_seconds() -> float:
    """This process (reader and sampler threads) plus every child it has reaped."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def other_load(seconds: float) -> float:
    """Cores busy with other programs over the next `seconds`, while we run nothing."""
    busy, own = cpu_busy_seconds(), own_cpu_seconds()
    time.sleep(seconds)
    return max(0.0, (cpu_busy_seconds() - busy) - (own_cpu_seconds() - own)) / seconds


class TreeCpu:
    """CPU seconds of a process tree by role, sampled from /proc.

    The replicas are the launcher's children, in sessions of their own, so the tree is
    walked by parent pid. A role is the replica type in the process's TF_CONFIG; anything a
    replica runs (importing TensorFlow runs `uname -p`) inherits it and counts towards it.
    The last sample before a process exits misses at most one interval of its CPU; the
    exact total of the tree comes from rusage instead.
    """

    def __init__(self, root: int, root_role: str) -> None:
        self._root, self._root_role = root, root_role
        self._roles: dict[int, str] = {root: root_role}
        self._cpu: dict[int, tuple[str, float]] = {}  # pid → (role, CPU seconds)
        self._replicas: set[int] = set()  # the launcher's own children running a trainer
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cpu-sampler", daemon=True)
        self._thread.start()

    @property
    def trainer_processes(self) -> int:
        """Trainer processes started (a restarted replica counts twice), or 1: the root."""
        return len(self._replicas) if self._root_role == "launcher" else 1

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._thread.join()
        by_role: dict[str, float] = {}
        for role, seconds in self._cpu.values():
            by_role[role] = round(by_role.get(role, 0.0) + seconds, 1)
        return by_role

    def _loop(self) -> None:
        while not self._stop.wait(_SAMPLE_SECONDS):
            self._sample()

    def _sample(self) -> None:
        children: dict[int, list[int]] = {}
        cpu: dict[int, float] = {}
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat") as stat:
                    # After the command name in parentheses (which may hold spaces):
                    # state, ppid, ..., utime and stime at 11 and 12.
                    after = stat.read().rpartition(")")[2].split()
            except OSError:  # exited while we looked
                continue
            pid = int(entry.name)
            children.setdefault(int(after[1]), []).append(pid)
            cpu[pid] = (int(after[11]) + int(after[12])) / _CLOCK_TICKS
        pending = [(self._root, self._root_role)]
        while pending:
            pid, parent_role = pending.pop()
            if pid not in cpu:
                continue
            if pid not in self._roles:
                # Seen between fork and exec, a child still has the launcher's env: look
                # again on the next sample instead of remembering "no TF_CONFIG".
                role = _tf_config_role(pid)
                if role is not None:
                    self._roles[pid] = role
                    if parent_role == "launcher":
                        self._replicas.add(pid)
            role = self._roles.get(pid, parent_role)
            self._cpu[pid] = (role, cpu[pid])
            pending.extend((child, role) for child in children.get(pid, []))


def _tf_config_role(pid: int) -> str | None:
    """The task type in a process's TF_CONFIG, or None without one."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return None
    for item in environ:
        if item.startswith(b"TF_CONFIG="):
            with contextlib.suppress(ValueError, KeyError, TypeError):
                return str(json.loads(item[len(b"TF_CONFIG=") :])["task"]["type"])
    return None


def stop_group(proc: subprocess.Popen[Any], grace: float = 15.0) -> None:
    """SIGTERM the group (the launcher then stops its replicas in order), then SIGKILL.

    The replicas are in sessions of their own, but the kernel kills them with the launcher
    (PR_SET_PDEATHSIG, infra/local/process.py), so nothing outlives a killed run.
    """
    for signum, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signum)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=wait)


def first_match(
    lines: Sequence[tuple[float, str]], pattern: re.Pattern[str]
) -> tuple[float, float]:
    """(arrival seconds, value) of the first line matching `pattern`."""
    for seconds, text in lines:
        found = pattern.search(text)
        if found:
            return seconds, float(found.group(1))
    raise BenchError(f"no line matches {pattern.pattern!r}")


def last_match(lines: Sequence[tuple[float, str]], pattern: re.Pattern[str]) -> float:
    return first_match(list(reversed(lines)), pattern)[1]


def run_once(setup: Setup, round_: int, output_dir: Path, batch_size: int, timeout: float) -> Run:
    if output_dir.exists():
        raise BenchError(f"{output_dir} exists: every run needs a fresh output dir")
    output_dir.parent.mkdir(parents=True, exist_ok=True)
    lines: list[tuple[float, str]] = []  # (seconds since launch, text)
    busy_before, own_before = cpu_busy_seconds(), own_cpu_seconds()
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started_at, started = time.time(), time.monotonic()
    proc = subprocess.Popen(
        setup.argv(output_dir),
        cwd=REPO,
        env=setup.env(output_dir),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # one killpg reaches it and anything it forks
    )
    sampler = TreeCpu(proc.pid, setup.root_role)

    def read() -> None:
        assert proc.stdout is not None
        with proc.stdout:
            for raw in iter(proc.stdout.readline, b""):
                lines.append((time.monotonic() - started, raw.decode(errors="replace").rstrip()))

    reader = threading.Thread(target=read, name="output-reader", daemon=True)
    reader.start()
    try:
        returncode = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise BenchError(f"{setup.key} round {round_} ran over {timeout:g}s") from None
    finally:
        stop_group(proc)  # a no-op after a normal exit
        exit_s = time.monotonic() - started
        cpu_s = sampler.stop()
        reader.join(timeout=5)
        (output_dir / "bench.log").write_text(
            "".join(f"{seconds:8.2f} {text}\n" for seconds, text in lines)
        )
    children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    tree_cpu = sum(
        getattr(children_after, name) - getattr(children_before, name)
        for name in ("ru_utime", "ru_stime")
    )
    others = (cpu_busy_seconds() - busy_before) - (own_cpu_seconds() - own_before)
    if any(_RESUMED in text for _, text in lines):
        raise BenchError(f"{setup.key} resumed from a checkpoint in {output_dir}")
    run = Run(
        setup=setup.key,
        round=round_,
        returncode=returncode,
        wall_s=None,
        exit_s=round(exit_s, 2),
        trainer_total_s=None,
        examples_per_sec=None,
        test_accuracy=None,
        examples_trained=None,
        cpu_s=cpu_s,
        tree_cpu_s=round(tree_cpu, 1),
        other_cores=round(max(0.0, others) / exit_s, 2),
        trainer_processes=sampler.trainer_processes,
        expected_processes=setup.processes,
        output_dir=str(output_dir),
        started_at=started_at,
    )
    if returncode == 0:
        arrived, run.trainer_total_s = first_match(lines, _TOTAL_TIME)
        run.wall_s = round(arrived, 2)
        run.examples_per_sec = first_match(lines, _EXAMPLES_PER_SEC)[1]
        accuracy_at, run.test_accuracy = first_match(lines, _TEST_ACCURACY)
        run.accuracy_line_s = round(accuracy_at, 2)
        run.first_progress_s = round(first_match(lines, _STEP)[0], 2)
        run.examples_trained = int(last_match(lines, _STEP)) * batch_size
    return run


def wait_for_quiet(threshold: float, patience: float) -> float:
    """Wait up to `patience` seconds for other programs to use < `threshold` cores."""
    deadline = time.monotonic() + patience
    while True:
        load = other_load(2.0)
        if load < threshold or time.monotonic() >= deadline:
            return load
        say(f"  others use {load:.2f} cores; waiting for < {threshold:g}")
        time.sleep(5.0)


def add_checkpoint_curves(runs: Sequence[Run], data_dir: str, timeout: float) -> None:
    """Evaluate every kept checkpoint of the successful runs, in one subprocess."""
    dirs = [run.output_dir for run in runs if run.ok]
    if not dirs:
        return
    argv = [sys.executable, "-m", "bench.checkpoint_accuracy", *dirs]
    if data_dir:
        argv += ["--data-dir", data_dir]
    proc = subprocess.Popen(
        argv,
        cwd=REPO,
        env=process_env(base_env(), {}, shims()),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise BenchError(f"evaluating checkpoints ran over {timeout:g}s") from None
    finally:
        stop_group(proc, grace=2.0)
    if proc.returncode != 0:
        raise BenchError(f"evaluating checkpoints failed:\n{err[-2000:]}")
    curves = {}
    for line in out.splitlines():
        record = json.loads(line)
        curves[record["output_dir"]] = record["checkpoints"]
    for run in runs:
        run.checkpoints = curves.get(run.output_dir, [])


# --- reporting -------------------------------------------------------------------------


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def stats(values: Sequence[float | None]) -> dict[str, float] | None:
    present = [value for value in values if value is not None]
    if not present:
        return None
    return {"median": statistics.median(present), "min": min(present), "max": max(present)}


def spread(values: Sequence[float | None], fmt: str) -> str:
    """`median (min-max)` of the measured values, or the one value; `-` if none."""
    found = stats(values)
    if found is None:
        return "-"
    if found["min"] == found["max"]:
        return format(found["median"], fmt)
    return f"{found['median']:{fmt}} ({found['min']:{fmt}}-{found['max']:{fmt}})"


def throughput(run: Run) -> float | None:
    """Training-loop speed: the writer's `Examples/sec` (start-up and the tail excluded)."""
    return run.examples_per_sec


def end_to_end(run: Run) -> float | None:
    """Whole-run speed: one over the wall time from launch to the final accuracy."""
    return 1 / run.wall_s if run.wall_s else None


def all_exited(run: Run) -> float | None:
    """Whole-job speed: one over the wall time from launch until every process exited."""
    return 1 / run.exit_s if run.exit_s else None


def exited_after_accuracy(run: Run) -> float | None:
    """Seconds from the accuracy line until every replica had exited: the run's tail."""
    return run.exit_s - run.accuracy_line_s if run.accuracy_line_s is not None else None


def time_to_target(run: Run) -> float | None:
    point = run.first_checkpoint_at_target()
    return point["seconds"] if point else None


def ratios_to_single(
    runs: Sequence[Run], setup: str, speed: Callable[[Run], float | None]
) -> list[float]:
    """`speed` of `setup` ÷ single's, paired within a round (same load, same minutes)."""
    by_round = {(run.setup, run.round): run for run in runs if run.ok}
    ratios = []
    for (key, round_), run in by_round.items():
        single = by_round.get(("single", round_))
        if key != setup or single is None:
            continue
        mine, theirs = speed(run), speed(single)
        if mine and theirs:
            ratios.append(mine / theirs)
    return ratios


def column(runs: Sequence[Run], get: Callable[[Run], float | None]) -> list[float | None]:
    return [get(run) for run in runs if run.ok]


# What the JSON summary reports per setup, each as median/min/max over its good runs.
_SUMMARY_COLUMNS: dict[str, Callable[[Run], float | None]] = {
    "wall_s": lambda run: run.wall_s,
    "exit_s": lambda run: run.exit_s,
    "examples_per_sec": throughput,
    "test_accuracy": lambda run: run.test_accuracy,
    "first_checkpoint_at_target_s": time_to_target,
    "first_progress_s": lambda run: run.first_progress_s,
    "exited_after_accuracy_s": exited_after_accuracy,
    "tree_cpu_s": lambda run: run.tree_cpu_s,
    "other_cores": lambda run: run.other_cores,
}


def summary(setups: Sequence[Setup], runs: Sequence[Run]) -> dict[str, dict[str, Any]]:
    result = {}
    for setup in setups:
        mine = [run for run in runs if run.setup == setup.key]
        result[setup.key] = {
            "label": setup.label,
            "processes": setup.processes,
            "runs": len(mine),
            "ok": sum(run.ok for run in mine),
            "reached_target": sum(reached_target(run) for run in mine),
            **{name: stats(column(mine, get)) for name, get in _SUMMARY_COLUMNS.items()},
            "throughput_ratio_to_single": stats(ratios_to_single(runs, setup.key, throughput)),
            "end_to_end_ratio_to_single": stats(ratios_to_single(runs, setup.key, end_to_end)),
            "all_exited_ratio_to_single": stats(ratios_to_single(runs, setup.key, all_exited)),
        }
    return result


def reached_target(run: Run) -> bool:
    return run.ok and (run.test_accuracy or 0.0) >= TARGET_ACCURACY


def markdown(setups: Sequence[Setup], runs: Sequence[Run]) -> Iterator[str]:
    target = f"{TARGET_ACCURACY:.3f}"
    yield (
        "| setup | processes | wall s to final accuracy | all exited s | examples/s | "
        f"÷ single | test accuracy | ≥ {target} | first kept checkpoint ≥ {target}: "
        "step @ s |"
    )
    yield "| --- | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: |"
    for setup in setups:
        mine = [run for run in runs if run.setup == setup.key]
        failed = sum(not run.ok for run in mine)
        ratio = ratios_to_single(runs, setup.key, throughput)
        steps = sorted({int(p["step"]) for r in mine if (p := r.first_checkpoint_at_target())})
        yield (
            f"| {setup.label}{f' ({failed} failed)' if failed else ''} | {setup.processes} "
            f"| {spread(column(mine, lambda r: r.wall_s), '.1f')} "
            f"| {spread(column(mine, lambda r: r.exit_s), '.1f')} "
            f"| {spread(column(mine, throughput), '.0f')} "
            f"| {'1' if setup.key == 'single' else spread(ratio, '.2f')} "
            f"| {spread(column(mine, lambda r: r.test_accuracy), '.4f')} "
            f"| {sum(map(reached_target, mine))}/{len(mine)} "
            f"| {'/'.join(map(str, steps)) or 'none'} "
            f"@ {spread(column(mine, time_to_target), '.1f')} |"
        )


def ratio_lines(setups: Sequence[Setup], runs: Sequence[Run]) -> Iterator[str]:
    for setup in setups:
        if setup.key == "single":
            continue
        for what, speed in (
            ("examples/s", throughput),
            ("end to end (launch to final accuracy)", end_to_end),
            ("end to end (launch until every process exited)", all_exited),
        ):
            ratios = ratios_to_single(runs, setup.key, speed)
            if ratios:
                yield f"- {setup.label} ÷ single, {what}: {spread(ratios, '.2f')}"


def runs_markdown(setups: Sequence[Setup], runs: Sequence[Run]) -> Iterator[str]:
    """Every run, in the order run, with the load other programs put on the machine."""
    labels = {setup.key: setup.label for setup in setups}
    yield (
        "| round | setup | first progress line s | wall s | all exited s "
        "| exited after accuracy line s | examples/s | test accuracy "
        "| first checkpoint ≥ target | others' cores before / during | note |"
    )
    yield "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
    for run in runs:
        point = run.first_checkpoint_at_target()
        first = f"{point['step']:.0f} @ {point['seconds']:.1f} s" if point else "-"
        extra = run.trainer_processes - run.expected_processes
        notes = [f"exit {run.returncode}"] if run.returncode else []
        notes += [f"{extra} restart(s), not counted"] if extra > 0 else []
        yield (
            f"| {run.round} | {labels[run.setup]} | {spread([run.first_progress_s], '.1f')} "
            f"| {spread([run.wall_s], '.1f')} | {run.exit_s:.1f} "
            f"| {spread([exited_after_accuracy(run)], '.1f')} "
            f"| {spread([run.examples_per_sec], '.0f')} "
            f"| {spread([run.test_accuracy], '.4f')} "
            f"| {first} | {run.other_cores_before:.2f} / {run.other_cores:.2f} "
            f"| {', '.join(notes)} |"
        )


def timeline_markdown(setups: Sequence[Setup], runs: Sequence[Run]) -> Iterator[str]:
    """When a run shows life, gives its result and is gone, seconds from launch; the largest
    tail is the one that matters (a replica left running holds its node)."""
    yield (
        "| setup | first progress line s | accuracy line s | all exited s "
        "| exited after accuracy line s (max) | all exited ÷ single |"
    )
    yield "| --- | ---: | ---: | ---: | ---: | ---: |"
    for setup in setups:
        mine = [run for run in runs if run.setup == setup.key]
        tails = [tail for tail in column(mine, exited_after_accuracy) if tail is not None]
        ratio = [1 / r for r in ratios_to_single(runs, setup.key, all_exited)]
        yield (
            f"| {setup.label} | {spread(column(mine, lambda r: r.first_progress_s), '.1f')} "
            f"| {spread(column(mine, lambda r: r.accuracy_line_s), '.1f')} "
            f"| {spread(column(mine, lambda r: r.exit_s), '.1f')} "
            f"| {f'{max(tails):.1f}' if tails else '-'} "
            f"| {'1' if setup.key == 'single' else spread(ratio, '.2f')} |"
        )


def cpu_markdown(setups: Sequence[Setup], runs: Sequence[Run]) -> Iterator[str]:
    """Where the CPU went, per role: what explains examples/s on a 2-core machine."""
    roles = sorted({role for run in runs for role in run.cpu_s})
    yield (
        "| setup | " + " | ".join(f"{role} CPU s" for role in roles)
        + " | all CPU s | cores used | examples / CPU s | others' load, cores |"
    )  # fmt: skip
    yield "| --- |" + " ---: |" * (len(roles) + 4)
    for setup in setups:
        mine = [run for run in runs if run.setup == setup.key and run.ok]
        cells = [spread([run.cpu_s.get(role) for run in mine], ".1f") for role in roles]
        yield (
            f"| {setup.label} | " + " | ".join(cells)
            + f" | {spread([r.tree_cpu_s for r in mine], '.1f')}"
            f" | {spread([r.tree_cpu_s / r.exit_s for r in mine], '.2f')}"
            f" | {spread([r.examples_per_cpu_s for r in mine], '.0f')}"
            f" | {spread([r.other_cores for r in mine], '.2f')} |"
        )  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="dev")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of all setups")
    parser.add_argument("--setups", nargs="+", choices=SETUPS, default=list(SETUPS))
    parser.add_argument("--timeout", type=float, default=600.0, help="per run, seconds")
    parser.add_argument(
        "--quiet-below",
        type=float,
        default=0.3,
        metavar="CORES",
        help="before each run, wait until other programs use fewer cores than this",
    )
    parser.add_argument(
        "--patience", type=float, default=180.0, help="longest such wait, seconds (then run)"
    )
    parser.add_argument(
        "--work-dir", type=Path, help="keep every run's output dir here (default: a temp dir)"
    )
    parser.add_argument("--no-curve", action="store_true", help="skip evaluating checkpoints")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument(
        "--save", type=Path, metavar="FILE", help="also write that JSON document to FILE"
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    try:
        return bench(args)
    except BenchError as error:
        say(f"bench.time_to_accuracy: {error}")
        return 1


def bench(args: argparse.Namespace) -> int:
    config = load_stack(args.stack)
    hyper = config.hyperparams
    every = {
        "stack": launcher_setup(
            "stack", topology_label(args.stack, config), args.stack, (), args.timeout
        ),
        "single": single_setup(config),
        "mwms": launcher_setup(
            "mwms", "MultiWorkerMirrored, 2 workers", args.stack, MWMS_OVERRIDES, args.timeout
        ),
    }
    setups = [every[key] for key in args.setups]
    say(
        f"stack {args.stack}: {hyper.epochs} epochs, global batch {hyper.batch_size}, "
        f"learning rate {hyper.learning_rate}, {args.repeat} round(s) of "
        + ", ".join(setup.key for setup in setups)
    )
    with contextlib.ExitStack() as cleanup:
        work = args.work_dir or Path(
            cleanup.enter_context(tempfile.TemporaryDirectory(prefix="tta-"))
        )
        runs: list[Run] = []
        for round_ in range(1, args.repeat + 1):
            for setup in setups:
                load = wait_for_quiet(args.quiet_below, args.patience)
                output_dir = work.resolve() / f"{setup.key}-{round_}"
                run = run_once(setup, round_, output_dir, hyper.batch_size, args.timeout + 60)
                run.other_cores_before = round(load, 2)
                runs.append(run)
                restarted = run.trainer_processes - run.expected_processes
                say(
                    f"round {round_} {setup.key}: exit {run.returncode}, wall {run.wall_s}s, "
                    f"{run.examples_per_sec} examples/s, accuracy {run.test_accuracy}, "
                    f"others {load:.2f} cores before / {run.other_cores:.2f} during"
                    + (f"; {restarted} restart(s): not counted" if restarted > 0 else "")
                )
        if not args.no_curve:
            try:
                add_checkpoint_curves(runs, config.job.data_dir, args.timeout)
            except BenchError as error:  # the timed runs still stand without the curve
                say(f"warning: {error}")
    report(args, config, setups, runs)
    return 0 if all(run.ok for run in runs) else 1


def report(
    args: argparse.Namespace, config: StackConfig, setups: Sequence[Setup], runs: Sequence[Run]
) -> None:
    document = {
        "stack": args.stack,
        "hyperparams": asdict(config.hyperparams),
        "target_accuracy": TARGET_ACCURACY,
        "summary": summary(setups, runs),
        "runs": [
            {**asdict(run), "first_checkpoint_at_target": run.first_checkpoint_at_target()}
            for run in runs
        ],
    }
    if args.save:
        args.save.write_text(json.dumps(document, indent=2) + "\n")
    if args.json:
        print(json.dumps(document, indent=2))
        return
    hyper = config.hyperparams
    rounds = "one run each" if args.repeat == 1 else f"median (min-max) of {args.repeat} runs"
    print(
        f"Full MNIST, stack {args.stack}: {hyper.epochs} epochs, global batch "
        f"{hyper.batch_size}, learning rate {hyper.learning_rate}; {rounds}\n"
    )
    print("\n".join(markdown(setups, runs)) + "\n")
    print("\n".join(timeline_markdown(setups, runs)) + "\n")
    print("\n".join(ratio_lines(setups, runs)) + "\n")
    print("\n".join(cpu_markdown(setups, runs)) + "\n")
    print("\n".join(runs_markdown(setups, runs)))


if __name__ == "__main__":
    raise SystemExit(main())
