"""Which process runs a local launch, so `status` knows at once when it is gone.

A SIGKILLed launcher takes its replicas' supervisors with it (their parent-death signal), and
their heartbeats only age: read by heartbeat alone, the run would look "running" for
`lost_after` seconds more. The launcher writes, in the run's outcome records,

  launcher.G   "<boot id> <pid namespace> <pid> <start>" while launch G runs; "ended" once
               it has stopped every replica of G

where `<start>` is the process's start time in clock ticks since boot (proc(5), stat field
22): with the boot id and the PID namespace it names one process, never a later one that
reuses the pid. A reader on the same machine, boot and PID namespace checks that process;
anywhere else (another machine reading a copy, a cluster's run) the record says nothing.
"""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path

RECORD = "launcher.{generation}"
ENDED = "ended"
_PROC = Path("/proc")


class Launch(Enum):
    LIVE = "live"  # its launcher runs
    GONE = "gone"  # its launcher died without ending it: every supervisor died with it
    ENDED = "ended"  # its launcher stopped every replica, then ended it
    UNKNOWN = "unknown"  # no record, or one this process cannot check


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return None


def _start_ticks(pid: int | str) -> str | None:
    """Field 22 of /proc/PID/stat; the command name before it may hold spaces or ')'."""
    stat = _read(_PROC / str(pid) / "stat")
    if stat is None:
        return None
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else None


def _this_process() -> str | None:
    """This machine's boot, this PID namespace: where a pid means one process."""
    boot = _read(_PROC / "sys" / "kernel" / "random" / "boot_id")
    try:
        namespace = os.readlink(_PROC / "self" / "ns" / "pid")
    except OSError:
        return None
    return None if boot is None else f"{boot} {namespace}"


def write_launch_record(outcomes: Path, generation: str) -> None:
    """Launch `generation` runs in this process (no record where /proc cannot name it)."""
    where, start = _this_process(), _start_ticks(os.getpid())
    if where is None or start is None:
        return
    try:
        outcomes.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    _write(outcomes / RECORD.format(generation=generation), f"{where} {os.getpid()} {start}\n")


def end_launch_record(outcomes: Path, generation: str) -> None:
    """Every replica of `generation` is stopped: none of its supervisors runs any more."""
    if (outcomes / RECORD.format(generation=generation)).exists():
        _write(outcomes / RECORD.format(generation=generation), f"{ENDED}\n")


def _write(path: Path, text: str) -> None:
    # A reader sees the old record or the new one, never half of one.
    partial = path.with_name(f".partial.{path.name}")
    try:
        partial.write_text(text)
        partial.replace(path)
    except OSError:
        pass  # a full volume: the heartbeats still tell, only later


def read_launch(outcomes: Path, generation: str) -> Launch:
    return _check(outcomes / RECORD.format(generation=generation))[0]


def live_launcher_pids(outcomes: Path) -> list[int]:
    """The pids of the launchers whose launches in `outcomes` still run, any generation."""
    checked = (_check(record) for record in sorted(outcomes.glob(RECORD.format(generation="*"))))
    return [pid for launch, pid in checked if launch is Launch.LIVE and pid is not None]


def _check(record: Path) -> tuple[Launch, int | None]:
    """What the record says of its launch, and its launcher's pid where it names one."""
    words = (_read(record) or "").split()
    if words == [ENDED]:
        return Launch.ENDED, None
    if len(words) != 4 or not words[2].isdigit():
        return Launch.UNKNOWN, None
    boot, namespace, pid, start = words
    if _this_process() != f"{boot} {namespace}":
        return Launch.UNKNOWN, None
    return (Launch.LIVE if _start_ticks(pid) == start else Launch.GONE), int(pid)
