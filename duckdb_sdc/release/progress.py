"""A one-line progress bar on standard error, drawn only when that is a terminal: one step per
statement of a release, per section of a report, per point of a sweep; within a masking statement one
tick per stratum masked. While a step runs the line is redrawn twice a second, so the elapsed time
moves even when one step (a large evaluation) takes long."""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager

REDRAW_SECONDS = 0.5


class Progress:
    def __init__(self, stream=None, enabled: bool | None = None, width: int = 24):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.width = width

    @contextmanager
    def task(self, title: str, total: int):
        bar = _Bar(self, title, total)
        ticker = None
        if self.enabled:
            ticker = threading.Thread(target=bar.tick, name="duckdb-sdc-progress", daemon=True)
            ticker.start()
        try:
            yield bar
        finally:
            bar.close()
            if ticker is not None:
                ticker.join()


class _Bar:
    def __init__(self, progress: Progress, title: str, total: int):
        self.p, self.title, self.total = progress, title, max(total, 1)
        self.done, self.start, self.shown = 0, time.perf_counter(), False
        self.label, self.groups, self.groups_total, self.drawn_at = "", 0, 0, 0.0
        self.lock = threading.Lock()
        self.closed = threading.Event()

    def advance(self, label: str, groups: int = 0) -> None:
        """Start the next step (named `label`), which masks `groups` strata (0: not counted)."""
        with self.lock:
            self.done += 1
            self.label, self.groups, self.groups_total = label, 0, groups
            self._draw()

    def group(self) -> None:
        """One stratum of the current step masked (called from DuckDB's threads)."""
        with self.lock:
            self.groups += 1
            if time.perf_counter() - self.drawn_at > 0.1 or self.groups == self.groups_total:
                self._draw()

    def tick(self) -> None:
        """Redraw the running step every REDRAW_SECONDS until the task ends (a thread)."""
        while not self.closed.wait(REDRAW_SECONDS):
            with self.lock:
                if self.done and not self.closed.is_set():
                    self._draw()

    def _draw(self) -> None:
        if not self.p.enabled:
            return
        filled = int(self.p.width * (self.done - 1) / self.total)
        bar = "#" * filled + "-" * (self.p.width - filled)
        elapsed = time.perf_counter() - self.start
        strata = f" (stratum {self.groups}/{self.groups_total})" if self.groups_total > 1 else ""
        line = f"{self.title} [{bar}] {self.done}/{self.total} {elapsed:5.1f}s {self.label}{strata}"
        self.p.stream.write("\r\x1b[2K" + line[:160])
        self.p.stream.flush()
        self.shown, self.drawn_at = True, time.perf_counter()

    def close(self) -> None:
        with self.lock:
            self.closed.set()
            if self.shown:
                self.p.stream.write("\r\x1b[2K")
                self.p.stream.flush()
