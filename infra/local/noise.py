"""TensorFlow's start-up lines that say nothing in a local run: shown once, or not at all.

Every TensorFlow process prints these before its logging is configured, so
`TF_CPP_MIN_LOG_LEVEL` cannot silence them, and with four replicas they were 16 lines
ahead of the first progress line, one of them an `E…` error on every CPU-only run:
- absl's note that messages before `InitializeLog()` go to stderr: about logging itself;
  never shown.
- "Could not find cuda drivers …, GPU will not be used": shown once; that is what a
  machine without an NVIDIA driver is expected to do.
- "failed call to cuInit …": hidden when the machine has no NVIDIA device; with one it
  is news (a driver problem) and every copy is shown.
- oneDNN's "custom operations are on" and the CPU-feature notice with its continuation
  line: shown once. oneDNN itself stays on (off halves this model's CPU throughput).
Anything else, including every other warning and error, passes through untouched.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path

# glog's prefix as TensorFlow writes it: `I0000 00:00:1795.42 14028 port.cc:153] text`.
_GLOG = re.compile(r"^[IWEF]\d{4} [\d:.]+\s+\d+ (?P<source>[\w.]+):\d+\] (?P<text>.*)$")
NVIDIA_DEVICE = Path("/dev/nvidiactl")


@dataclass(frozen=True)
class _Rule:
    source: str | None  # the glog source file, or None for a line printed without a prefix
    starts: str
    policy: str  # "never", "once", or "unless_gpu" (hidden only where no GPU exists)


_RULES = (
    _Rule(None, "WARNING: All log messages before absl::InitializeLog() is called", "never"),
    _Rule("cudart_stub.cc", "Could not find cuda drivers on your machine", "once"),
    _Rule("cuda_platform.cc", "failed call to cuInit", "unless_gpu"),
    _Rule("port.cc", "oneDNN custom operations are on", "once"),
    _Rule("cpu_feature_guard.cc", "This TensorFlow binary is optimized", "once"),
    _Rule(None, "To enable the following instructions:", "once"),
)


class StartupNoise:
    """Decides, line by line and across every replica's output thread, what is shown."""

    def __init__(self, gpu_present: bool | None = None) -> None:
        self._gpu = NVIDIA_DEVICE.exists() if gpu_present is None else gpu_present
        self._shown: set[_Rule] = set()
        self._lock = threading.Lock()

    def shows(self, line: str) -> bool:
        rule = _match(line)
        if rule is None or (rule.policy == "unless_gpu" and self._gpu):
            return True
        if rule.policy != "once":
            return False
        with self._lock:
            first = rule not in self._shown
            self._shown.add(rule)
        return first


def _match(line: str) -> _Rule | None:
    glog = _GLOG.match(line)
    source, text = (glog["source"], glog["text"]) if glog else (None, line)
    for rule in _RULES:
        if rule.source == source and text.startswith(rule.starts):
            return rule
    return None
