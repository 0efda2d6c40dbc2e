"""A second client's view of a shared directory that sees the first client's writes late, as
an NFS client does through its attribute and lookup caches (nfs(5): a name found missing
stays missing, and cached attributes stand, until they expire: acdirmin 30 s to acdirmax
60 s for directories, acregmin 3 s to acregmax 60 s for files, unless the mount says
otherwise). This kernel has no NFS client, so the delay is modelled: every new file or
directory, and every new version of a file (another mtime or size), appears in the view
`delay` seconds after it appeared in the source. One way only: what the view's own client
writes stays in the view.
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path


class DelayedView:
    def __init__(self, source: Path, view: Path, delay: float) -> None:
        self.source, self.view, self.delay = source, view, delay
        self._first_seen: dict[tuple[str, bool, int, int], float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> DelayedView:
        self.view.mkdir(parents=True, exist_ok=True)
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sync_once(time.monotonic())
            time.sleep(0.05)

    def sync_once(self, now: float) -> None:
        for path in sorted(self.source.rglob("*")):  # parents before children
            try:
                stat = path.stat()
            except FileNotFoundError:
                continue  # renamed or removed meanwhile
            rel = str(path.relative_to(self.source))
            is_dir = path.is_dir()
            version = (rel, is_dir, 0 if is_dir else stat.st_mtime_ns, stat.st_size)
            if now - self._first_seen.setdefault(version, now) < self.delay:
                continue
            target = self.view / rel
            if is_dir:
                target.mkdir(parents=True, exist_ok=True)
                continue
            known = target.stat() if target.exists() else None
            if known is None or (known.st_mtime_ns, known.st_size) != version[2:]:
                partial = target.with_name(f".view-{target.name}")
                try:
                    shutil.copy2(path, partial)  # content and mtime, then one rename
                except FileNotFoundError:
                    continue
                partial.replace(target)
