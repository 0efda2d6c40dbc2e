"""Helpers for tests that run the local launcher: a fake TFJob-style trainer, stack files
that run it, and checks that no process outlives a test.

The fake stands in for any user's trainer: it only reads TF_CONFIG and the env, records
what it got in the output dir (per start, so restarts can be compared), and then behaves
as its flags say (exit, fail, fail its first starts, hang). Unless told otherwise the chief
(or worker 0 without one) exits 0 and every other replica serves forever, as a TFJob ps
in `server.join()` does: the replica supervisor ends them.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import yaml

from infra.local.plan import REPO

FAKE_TRAINER = """
import argparse, json, os, signal, socket, sys, time
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--fail", default="", help="TYPE:INDEX:CODE: that replica exits CODE")
parser.add_argument("--fail-starts", default="", help="TYPE:INDEX:N: exits 3 on its first N starts")
parser.add_argument("--hang", action="store_true", help="every replica runs until killed")
parser.add_argument("--ignore-sigterm", action="store_true")
parser.add_argument("--chief-seconds", type=float, default=0.3, help="the chief's run time")
parser.add_argument("--chief-until", default="", help="PATH: the chief ends once it exists")
parser.add_argument("--kill-starts", default="", help="TYPE:INDEX:N: SIGKILLed on its first N")
parser.add_argument("--scalars", action="store_true",
                    help="the chief writes TF2-style loss/accuracy events and metrics.txt")
args, _unknown = parser.parse_known_args()  # a real trainer has flags of its own

SCALARS = {"loss": (2.0, 1.0, 0.5), "accuracy": (0.5, 0.8, 0.9)}  # at steps 10, 20, 30


def write_scalars(output):
    # What a TF2 trainer's tf.summary.scalar writes (a rank-0 float tensor of the scalars
    # plugin, its metadata on the first value only), with TensorBoard's writer: no TensorFlow.
    from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, types_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(str(output / "train"))
    for i, step in enumerate((10, 20, 30)):
        values = []
        for tag, series in SCALARS.items():
            tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, float_val=[series[i]])
            value = summary_pb2.Summary.Value(tag=tag, tensor=tensor)
            if i == 0:
                value.metadata.plugin_data.plugin_name = "scalars"
            values.append(value)
        summary = summary_pb2.Summary(value=values)
        writer.add_event(event_pb2.Event(wall_time=time.time(), step=step, summary=summary))
    writer.close()
    (output / "metrics.txt").write_text("test_accuracy 0.9\\nglobal_step 30\\n")


if args.ignore_sigterm:  # before anything is recorded: a test that saw the record may signal
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
tf_config = json.loads(os.environ["TF_CONFIG"])
task = tf_config["task"]
role = f"{task['type']}:{task['index']}"
output = Path(os.environ["TFTRAIN_OUTPUT_DIR"])
record = {"pid": os.getpid(), "argv": sys.argv[1:], "tf_config": tf_config,
          "env": dict(os.environ)}
name = f"{task['type']}-{task['index']}"
tmp = output / f".{name}"
tmp.write_text(json.dumps(record))
tmp.rename(output / f"{name}.json")  # the latest start's record
with open(output / f"{name}.starts", "a") as starts:  # one line per start
    starts.write(json.dumps(record) + "\\n")
start_number = len((output / f"{name}.starts").read_text().splitlines())
# Listen on this replica's TF_CONFIG port, as a TensorFlow server does: a restart that
# got another port, or whose port were still held, would fail here. An evaluator is in no
# cluster (TensorFlow's convention): it serves nothing.
if task["type"] in tf_config["cluster"]:
    server = socket.socket()
    server.bind(("", int(tf_config["cluster"][task["type"]][task["index"]].rpartition(":")[2])))
    server.listen()
print(f"TF_CONFIG {os.environ['TF_CONFIG']}")
print(f"stderr of {role}", file=sys.stderr)

fail_role, _, code = args.fail.rpartition(":")
if fail_role == role:
    sys.exit(int(code))
flaky_role, _, failing_starts = args.fail_starts.rpartition(":")
if flaky_role == role and start_number <= int(failing_starts):
    print(f"failing on start {start_number}")
    sys.exit(3)
killed_role, _, killed_starts = args.kill_starts.rpartition(":")
if killed_role == role and start_number <= int(killed_starts):
    print(f"killing myself on start {start_number}", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
chief = task["type"] == "chief" or (
    "chief" not in tf_config["cluster"] and task["type"] == "worker" and task["index"] == 0)
if args.hang or not chief:
    while True:
        time.sleep(1)
# Every replica has started and recorded itself before the run ends: on a busy machine a
# replica may start seconds after the chief (an event, not a fixed time; at most 60 s).
cluster = tf_config["cluster"]
peers = [f"{kind}-{i}.json" for kind, hosts in cluster.items() for i in range(len(hosts))]
deadline = time.monotonic() + 60
while not all((output / peer).exists() for peer in peers) and time.monotonic() < deadline:
    time.sleep(0.05)
while args.chief_until and not os.path.exists(args.chief_until):
    time.sleep(0.05)
time.sleep(args.chief_seconds)
if args.scalars:
    write_scalars(output)
print("chief done")
"""

STACK = "fake"
REPLICAS = ("mnist-chief-0", "mnist-worker-0", "mnist-worker-1", "mnist-ps-0")
WAIT = 60  # seconds: an upper bound for any single wait in these tests


def fake_stacks_dir(directory: Path) -> Path:
    """`directory` with the fake trainer and a stack file that runs it."""
    (directory / "fake.py").write_text(FAKE_TRAINER)
    return write_stack(directory, {})


def write_stack(directory: Path, config: dict) -> Path:
    """A dev-like stack whose command is the fake trainer; `config` merges over it."""
    base = {
        "image": "registry.example.com/tftrain/fake:1",
        "job": {
            "command": ["python", str(directory / "fake.py")],
            "runId": "test",
            # No restarts unless a test asks: most are about how a job ends.
            "backoffLimit": 0,
        },
        "hyperparams": {"maxSteps": 5, "learningRate": 0.01},
        # A user's image may have no tensorboard: TensorBoard names its own.
        "tensorboard": {"image": "registry.example.com/tensorflow/tensorflow:2.21.0"},
    }
    document = {"config": {f"tftrain:{key}": value for key, value in {**base, **config}.items()}}
    (directory / f"Pulumi.{STACK}.yaml").write_text(yaml.safe_dump(document))
    return directory


def launcher_args(stacks_dir: Path, *options: str) -> list[str]:
    output = stacks_dir / "out"
    return [STACK, "--stacks-dir", str(stacks_dir), "--output-dir", str(output), *options]


def records(stacks_dir: Path) -> dict[str, dict]:
    """What each replica's latest process recorded, by `type-index`."""
    return {
        path.stem: json.loads(path.read_text()) for path in (stacks_dir / "out").glob("*-*.json")
    }


def starts(stacks_dir: Path) -> dict[str, list[dict]]:
    """What every process of each replica recorded, in start order, by `type-index`."""
    return {
        path.stem: [json.loads(line) for line in path.read_text().splitlines()]
        for path in (stacks_dir / "out").glob("*-*.starts")
    }


def all_pids(stacks_dir: Path) -> list[int]:
    return [record["pid"] for runs in starts(stacks_dir).values() for record in runs]


def alive(pid: int) -> bool:
    """Running or stopped; a zombie counts as gone (PID 1 here may never reap orphans)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def wait_until(condition: Callable[[], bool], timeout: float = WAIT) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def assert_all_gone(pids: list[int]) -> None:
    assert pids
    assert wait_until(lambda: not any(alive(pid) for pid in pids), timeout=10), [
        pid for pid in pids if alive(pid)
    ]


@contextlib.contextmanager
def reaping(stacks_dir: Path) -> Iterator[None]:
    """Whatever a test leaves running (a launcher bug), kill it so later tests are clean: each
    recorded replica command, and the process group it runs in (its supervisor's session)."""
    try:
        yield
    finally:
        own = os.getpgrp()
        for pid in all_pids(stacks_dir):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                group = os.getpgid(pid)
                if group != own:
                    os.killpg(group, signal.SIGKILL)
                os.kill(pid, signal.SIGKILL)


def summary_line(out: str, name: str) -> str:
    summary = out[out.rindex("summary:") :]
    [line] = [line for line in summary.splitlines() if re.match(rf"\[launcher\] +{name} ", line)]
    return line


class Launcher:
    """`python -m infra.local` as a subprocess, its output collected on a thread."""

    def __init__(self, stacks_dir: Path, *options: str) -> None:
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "infra.local", *launcher_args(stacks_dir, *options)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # so `close` can stop it without reaching pytest
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.out: list[str] = []
        assert self.popen.stdout is not None
        threading.Thread(target=self._collect, args=(self.popen.stdout,), daemon=True).start()

    def _collect(self, stdout: IO[str]) -> None:
        for line in stdout:
            self.lines.put(line)

    def wait_for_line(self, pattern: str) -> re.Match[str]:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            with contextlib.suppress(queue.Empty):
                line = self.lines.get(timeout=0.5)
                self.out.append(line)
                if match := re.search(pattern, line):
                    return match
        raise AssertionError(f"no line matching {pattern!r} in:\n{''.join(self.out)}")

    def text(self) -> str:
        """Everything it printed so far."""
        while not self.lines.empty():
            self.out.append(self.lines.get_nowait())
        return "".join(self.out)

    def finish(self) -> int:
        """The launcher's exit status; still running after WAIT, it is stopped (see `close`)
        and the test fails with what it printed."""
        try:
            return self.popen.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.close()
            output = "".join(self.out)
            raise AssertionError(f"the launcher still ran after {WAIT}s:\n{output}") from None

    def close(self) -> None:
        """Kill the launcher's process group; its replicas die with it (PR_SET_PDEATHSIG),
        and `reaping` gets any replica command that outlived its supervisor."""
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait(timeout=WAIT)
