"""A one-line progress bar on standard error, drawn only when that is a terminal."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager


class Progress:
    def __init__(self, stream=None, enabled: bool | None = None, width: int = 24):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.width = width

    @contextmanager
    def task(self, title: str, total: int):
        bar = _Bar(self, title, total)
        try:
            yield bar
        finally:
            bar.close()


class _Bar:
    def __init__(self, progress: Progress, title: str, total: int):
        self.p, self.title, self.total = progress, title, max(total, 1)
        self.done, self.start, self.shown = 0, time.perf_counter(), False

    def advance(self, label: str) -> None:
        """Start the next step (named `label`)."""
        self.done += 1
        self._draw(label)

    def _draw(self, label: str) -> None:
        if not self.p.enabled:
            return
        filled = int(self.p.width * (self.done - 1) / self.total)
        bar = "#" * filled + "-" * (self.p.width - filled)
        elapsed = time.perf_counter() - self.start
        line = f"{self.title} [{bar}] {self.done}/{self.total} {elapsed:5.1f}s {label}"
        self.p.stream.write("\r\x1b[2K" + line[:160])
        self.p.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.p.stream.write("\r\x1b[2K")
            self.p.stream.flush()
