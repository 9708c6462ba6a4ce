"""Progress of the list functions, one tick per group (stratum) masked, for progress bars.

DuckDB gives a UDF no handle on the query that calls it, so the ticks go to whoever watches in this
process: `with watching(callback): con.execute(...)` calls callback() once for every list (one
stratum of a GROUP BY) a masking function finishes while the statement runs, from DuckDB's worker
threads. A release watches its masking statements to draw a bar per stratum.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Callable

_watchers: list[Callable[[], None]] = []
_lock = threading.Lock()


def group_done() -> None:
    """Called by a masking UDF after each list it masked."""
    if _watchers:
        with _lock:
            watchers = tuple(_watchers)
        for callback in watchers:
            callback()


@contextmanager
def watching(callback: Callable[[], None]):
    """Call `callback` (from any thread) for every group masked while the block runs."""
    with _lock:
        _watchers.append(callback)
    try:
        yield
    finally:
        with _lock:
            _watchers.remove(callback)
