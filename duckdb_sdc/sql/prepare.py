"""The one-time work of a process's first call that no Numba cache removes (see duckdb_sdc.warmup,
which fills the cache): importing pandas (pyarrow's conversion to numpy does) and initialising
Numba's compiler target, 1 to 1.5 s, done in a thread that `register()` starts so that it overlaps
with registering the functions.
"""

from __future__ import annotations

import atexit
import threading

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def _ready(x):
    return x.shape[0]


def _prepare(stop: threading.Event) -> None:
    """The one-time work of a process's first call that no cache removes: pyarrow's conversion to
    numpy imports pandas (0.35-0.7 s here), and Numba's first dispatch initialises its compiler
    target (0.5-0.8 s) even when it then only loads cached code."""
    try:
        import pandas  # noqa: F401

        if not stop.is_set():
            _ready(np.zeros(1))
    except Exception:  # the first real call reports whatever is wrong
        pass


_PREPARING: list[threading.Thread] = []
_LOCK = threading.Lock()


def prepare_in_background() -> None:
    """Start `_prepare` once per process in a thread, so it overlaps with registering the functions
    and whatever the caller does before its first query (loading data: DuckDB releases the GIL).
    A first call that comes sooner waits for it (Numba's compiler lock) and costs no more than without
    it. At exit the interpreter lets the step in progress finish (it must not be stopped inside Numba)
    and skips the rest: a process that never calls a function waits at most one step."""
    with _LOCK:
        if _PREPARING:
            return
        stop = threading.Event()
        thread = threading.Thread(target=_prepare, args=(stop,), name="duckdb-sdc-prepare", daemon=True)
        _PREPARING.append(thread)
        thread.start()

        def finish():
            stop.set()
            thread.join()

        atexit.register(finish)
