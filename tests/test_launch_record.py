"""The launcher's record (infra/records/launch_record.py) against proc(5): a process is named
by this boot (/proc/sys/kernel/random/boot_id), its PID namespace (/proc/self/ns/pid), its
pid and its start time (field 22 of /proc/PID/stat); a record naming another boot or
namespace says nothing, one naming a process that is gone says so, and an ended launch is
ended whatever its process does."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from infra.records import launch_record
from infra.records.launch_record import (
    Launch,
    end_launch_record,
    live_launcher_pids,
    read_launch,
    write_launch_record,
)
from infra.records.run_state import read_run

GENERATION = "0123456789ab"


def _proc_fields(pid: int) -> tuple[str, str, str]:
    """Boot id, PID namespace and start ticks, read with the shell's tools, not the module."""
    script = (
        f"cat /proc/sys/kernel/random/boot_id; readlink /proc/{pid}/ns/pid; "
        # Field 2, the command name, may hold spaces (an xdist worker's does): count from
        # the ") " that ends it, where field 3 starts.
        f"sed 's/.*) //' /proc/{pid}/stat | cut -d' ' -f20"
    )
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True)
    boot, namespace, start = out.stdout.split("\n")[:3]
    return boot, namespace, start


def test_a_running_launch_is_recorded_as_this_process_and_reads_live(tmp_path: Path) -> None:
    outcomes = tmp_path / "out" / ".tftrain-run"  # made if missing
    write_launch_record(outcomes, GENERATION)
    boot, namespace, start = _proc_fields(os.getpid())
    record = (outcomes / f"launcher.{GENERATION}").read_text()
    assert record == f"{boot} {namespace} {os.getpid()} {start}\n"
    assert read_launch(outcomes, GENERATION) is Launch.LIVE
    assert [p.name for p in outcomes.iterdir()] == [f"launcher.{GENERATION}"]  # no partials


def test_a_launch_whose_process_has_exited_reads_gone(tmp_path: Path) -> None:
    code = (
        "import sys; from pathlib import Path; "
        "from infra.records.launch_record import write_launch_record; "
        f"write_launch_record(Path(sys.argv[1]), '{GENERATION}')"
    )
    root = Path(__file__).resolve().parent.parent
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=root, check=True)
    assert read_launch(tmp_path, GENERATION) is Launch.GONE


def test_a_pid_reused_by_another_process_reads_gone(tmp_path: Path) -> None:
    # This process's pid, another start time: the launcher that had it is gone.
    boot, namespace, start = _proc_fields(os.getpid())
    other = str(int(start) - 1)
    (tmp_path / f"launcher.{GENERATION}").write_text(f"{boot} {namespace} {os.getpid()} {other}\n")
    assert read_launch(tmp_path, GENERATION) is Launch.GONE


@pytest.mark.parametrize(
    "record",
    [
        "00000000-0000-0000-0000-000000000000 {namespace} {pid} {start}\n",  # another boot
        "{boot} pid:[1] {pid} {start}\n",  # another PID namespace: its pids mean others
        "{boot} {namespace} x{pid} {start}\n",  # not a pid
        "{boot} {namespace} {pid}\n",  # cut short
        "{boot} {namespace} {pid} {start} more\n",
        "",
    ],
)
def test_a_record_this_process_cannot_check_says_nothing(tmp_path: Path, record: str) -> None:
    boot, namespace, start = _proc_fields(os.getpid())
    text = record.format(boot=boot, namespace=namespace, pid=os.getpid(), start=start)
    (tmp_path / f"launcher.{GENERATION}").write_text(text)
    assert read_launch(tmp_path, GENERATION) is Launch.UNKNOWN
    assert read_launch(tmp_path, "another-gen") is Launch.UNKNOWN  # no record at all


def test_an_ended_launch_reads_ended_and_a_missing_record_is_not_made_up(tmp_path: Path) -> None:
    write_launch_record(tmp_path, GENERATION)
    end_launch_record(tmp_path, GENERATION)
    assert (tmp_path / f"launcher.{GENERATION}").read_text() == "ended\n"
    assert read_launch(tmp_path, GENERATION) is Launch.ENDED
    end_launch_record(tmp_path, "never-written")  # where none was written (no /proc)
    assert not (tmp_path / "launcher.never-written").exists()


def test_only_launchers_that_still_run_are_named_whatever_their_generation(
    tmp_path: Path,
) -> None:
    boot, namespace, start = _proc_fields(os.getpid())
    live = f"{boot} {namespace} {os.getpid()} {start}\n"
    records = {
        "launcher.aaaa": live,
        "launcher.bbbb": "ended\n",
        "launcher.cccc": f"{boot} {namespace} {os.getpid()} {int(start) - 1}\n",  # pid reused
        "launcher.dddd": f"{boot} pid:[1] {os.getpid()} {start}\n",  # cannot be checked here
        ".partial.launcher.eeee": live,  # half-written, never read
        "failed.ffff": live,  # another kind of record
    }
    for name, text in records.items():
        (tmp_path / name).write_text(text)
    assert live_launcher_pids(tmp_path) == [os.getpid()]
    (tmp_path / "launcher.ffff").write_text(live)
    assert live_launcher_pids(tmp_path) == [os.getpid(), os.getpid()]
    assert live_launcher_pids(tmp_path / "missing") == []


def test_the_start_time_is_field_22_whatever_the_command_name_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A command may be named "a) b" (comm is free text): the fields start after the last ')'.
    fields = " ".join(str(n) for n in range(3, 53))  # field N holds N
    (tmp_path / "77").mkdir()
    (tmp_path / "77" / "stat").write_text(f"77 (a) b) {fields}\n")
    (tmp_path / "78").mkdir()
    (tmp_path / "78" / "stat").write_text("78 (short) S 1 2\n")
    # Exactly up to field 22, and one field short of it.
    (tmp_path / "80").mkdir()
    (tmp_path / "80" / "stat").write_text("80 (x) " + " ".join(str(n) for n in range(3, 23)))
    (tmp_path / "81").mkdir()
    (tmp_path / "81" / "stat").write_text("81 (x) " + " ".join(str(n) for n in range(3, 22)))
    monkeypatch.setattr(launch_record, "_PROC", tmp_path)
    assert launch_record._start_ticks(77) == "22"
    assert launch_record._start_ticks(78) is None
    assert launch_record._start_ticks(79) is None
    assert launch_record._start_ticks(80) == "22"
    assert launch_record._start_ticks(81) is None


def test_without_a_boot_id_no_pid_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Its pid and start are readable, but without this boot's id a later reader could not
    # tell this machine from another: no record.
    proc = tmp_path / "proc"
    (proc / "self" / "ns").mkdir(parents=True)
    (proc / "self" / "ns" / "pid").symlink_to("pid:[4026531836]")
    (proc / str(os.getpid())).mkdir()
    (proc / str(os.getpid()) / "stat").write_text("1 (x) " + " ".join(["0"] * 50))
    monkeypatch.setattr(launch_record, "_PROC", proc)
    write_launch_record(tmp_path / "out", GENERATION)
    assert not (tmp_path / "out" / f"launcher.{GENERATION}").exists()


def test_a_record_of_raw_bytes_says_nothing_and_breaks_nothing(tmp_path: Path) -> None:
    (tmp_path / f"launcher.{GENERATION}").write_bytes(b"\xff\xfe ended\n")
    assert read_launch(tmp_path, GENERATION) is Launch.UNKNOWN


def test_without_proc_nothing_is_written_and_nothing_is_claimed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launch_record, "_PROC", tmp_path / "no-proc")
    write_launch_record(tmp_path / "out", GENERATION)
    assert not (tmp_path / "out" / f"launcher.{GENERATION}").exists()


def test_a_volume_that_refuses_the_record_costs_nothing_but_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")  # a file where the records directory would be
    write_launch_record(blocked / ".tftrain-run", GENERATION)
    assert blocked.read_text() == ""

    def full(self: Path, *args: object, **kwargs: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    outcomes = tmp_path / "full"
    outcomes.mkdir()
    monkeypatch.setattr(Path, "write_text", full)
    write_launch_record(outcomes, GENERATION)  # the launch goes on without it
    end_launch_record(outcomes, GENERATION)
    assert list(outcomes.iterdir()) == []
    assert read_launch(outcomes, GENERATION) is Launch.UNKNOWN


# --- what status reads from it ---------------------------------------------------------------


def _claim(run: Path, replica: str, beat: str, exit_record: str | None = None) -> None:
    claim = run / ".tftrain-run" / "attempts" / f"run-1a2b3c4d.{GENERATION}.{replica}.1"
    claim.mkdir(parents=True)
    (claim / "start").write_text(f"{beat}\n")
    (claim / "beat").write_text(f"{beat}\n")
    if exit_record is not None:
        (claim / "exit").write_text(exit_record)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read at 1002: a beat written at 1000 is 2 s old, well inside the 30 s window."""
    monkeypatch.setattr(time, "time", lambda: 1002.0)


def test_a_run_whose_launcher_is_gone_is_lost_at_once(tmp_path: Path, clock: None) -> None:
    _claim(tmp_path, "mnist-chief-0", "1000")  # beat just now: by heartbeat, running
    _claim(tmp_path, "mnist-ps-0", "1000")
    (tmp_path / ".tftrain-run" / f"launcher.{GENERATION}").write_text(
        " ".join(_proc_fields(os.getpid())[:2]) + f" {os.getpid()} 1\n"  # a process now gone
    )
    state = read_run(tmp_path, with_scalars=False)
    assert state is not None and state.outcome == "lost"
    assert state.describe().startswith(
        "lost: its launcher was killed, and its replicas with it (mnist-chief-0 attempt 1 ("
    )
    assert state.result(state.attempts["mnist-ps-0"][0]) == (
        "lost (no exit: its launcher was killed; last heartbeat 2s ago)"
    )


def test_a_run_whose_launcher_lives_runs_by_its_heartbeats(tmp_path: Path, clock: None) -> None:
    _claim(tmp_path, "mnist-chief-0", "1000")
    write_launch_record(tmp_path / ".tftrain-run", GENERATION)
    state = read_run(tmp_path, with_scalars=False)
    assert state is not None and state.outcome == "running"
    assert state.result(state.attempts["mnist-chief-0"][0]) == "running"


@pytest.mark.parametrize(("outcome_record", "outcome"), [
    (None, "stopped"),  # Ctrl-C: the launcher stopped them, one outlasted its grace
    ("succeeded.run-1a2b3c4d", "succeeded"),
])  # fmt: skip
def test_replicas_the_launcher_killed_as_it_ended_read_killed_not_lost(
    tmp_path: Path, clock: None, outcome_record: str | None, outcome: str
) -> None:
    _claim(tmp_path, "mnist-chief-0", "1000", "0 exited\n")
    _claim(tmp_path, "mnist-ps-0", "1000")  # SIGKILLed before its supervisor wrote `exit`
    if outcome_record:
        (tmp_path / ".tftrain-run" / outcome_record).write_text("mnist-chief-0\n")
    (tmp_path / ".tftrain-run" / f"launcher.{GENERATION}").write_text("ended\n")
    state = read_run(tmp_path, with_scalars=False)
    assert state is not None and state.outcome == outcome
    assert state.result(state.attempts["mnist-ps-0"][0]) == (
        "killed by the launcher as the run stopped (no exit recorded)"
    )
    assert state.result(state.attempts["mnist-chief-0"][0]) == "exit 0"


def test_the_replica_its_peers_judged_lost_stays_lost_whatever_the_launcher_did(
    tmp_path: Path, clock: None
) -> None:
    _claim(tmp_path, "mnist-chief-0", "1000")
    (tmp_path / ".tftrain-run" / f"failed.run-1a2b3c4d.{GENERATION}").write_text(
        "mnist-chief-0 lost attempt 1 on h: no heartbeat for 31s\n"
    )
    (tmp_path / ".tftrain-run" / f"launcher.{GENERATION}").write_text("ended\n")
    state = read_run(tmp_path, with_scalars=False)
    assert state is not None and state.outcome == "failed"
    assert state.result(state.attempts["mnist-chief-0"][0]) == (
        "lost (no exit, no heartbeat for 2s)"
    )
