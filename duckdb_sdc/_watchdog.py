"""The watchdog of one private workspace (duckdb_sdc.workspace): a small process that outlives a release
killed with SIGKILL and finishes or undoes what it left on disk.

    python -S -E _watchdog.py WORKSPACE

It waits until its standard input reaches end of file, which happens when the release process ends in
any way (its end of the pipe is closed by the kernel, also after SIGKILL), then takes the workspace's
lock (the release holds it while it runs, so a release that is still alive is never touched) and
recovers the workspace with `recover_workspace`: a release that had started to commit is rolled
forward (its remaining renames are done), any other release's temporary files are deleted, and the
workspace folder (DuckDB's spill files included) is removed.

It runs as its own script with the standard library alone (`-S -E`: no site-packages, no PYTHON*
variables), in a session of its own, so that it starts in milliseconds and survives the signals sent
to the release's process group. `duckdb_sdc.workspace` imports `recover_workspace` from here, so the
watchdog and a later release recover with the same code.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

SCRIPT = __file__  # this file: Workspace runs it as the watchdog process
STATE = "state.json"
LOCK = "lock"
RUNNING, COMMITTING, DONE = "running", "committing", "done"


def _remove(path: str) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError:  # a folder that cannot be written: nothing of ours can be in it
        pass


def read_state(folder: str) -> dict:
    try:
        with open(os.path.join(folder, STATE), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {"status": RUNNING, "temporaries": [], "moves": []}


def recover_workspace(folder: str) -> str:
    """Finish or undo the release whose workspace is `folder` (its lock must be held by the caller, or
    its owner dead) and remove the folder. Returns what was done: 'rolled forward', 'removed' or
    'cleaned' (a release that had finished)."""
    state = read_state(folder)
    status = state.get("status", RUNNING)
    done = "cleaned"
    if status == COMMITTING:
        for tmp, target in state.get("moves", []):
            if os.path.lexists(tmp):
                try:
                    os.replace(tmp, target)
                except OSError:
                    pass
        done = "rolled forward"
    elif status != DONE:
        done = "removed"
    for path in state.get("temporaries", []):
        _remove(path)
    _remove(folder)
    return done


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        return 2
    folder = argv[0]
    try:
        while os.read(0, 4096):
            pass
    except OSError:
        pass
    try:
        import fcntl

        lock = os.open(os.path.join(folder, LOCK), os.O_RDWR)
    except (ImportError, OSError):  # no workspace any more: the release cleaned up itself
        return 0
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.isdir(folder):
            recover_workspace(folder)
    finally:
        os.close(lock)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
