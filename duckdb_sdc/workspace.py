"""Private workspaces: where a release (or an evaluation) may put raw data on disk, and nowhere else.

A process that reads the source (a release, `duckdb-sdc evaluate`, a trade-off sweep) works in a
workspace: a folder of its own, mode 0700, inside the user's private base folder
`<system temporary folder>/duckdb-sdc-<uid>` (mode 0700, owned by the user; refused otherwise), or
inside `temp_directory` when one is given ([resources] temp_directory, --temp-directory). DuckDB's
spill files go to its `spill/` subfolder (the connection's `temp_directory`), and the hidden files a
release writes next to its outputs are registered in the workspace *before* they are created.

The workspace ends on every path:

* normally, or on an exception: the registered temporary files that were not renamed into place are
  deleted and the folder is removed (`Workspace.close`);
* when the process is killed (SIGKILL included): its watchdog (duckdb_sdc._watchdog, a separate
  process started with the workspace, which sees the release's end as the end of a pipe) recovers it
  within milliseconds: a release that had begun to commit is rolled forward (the renames it had
  recorded are completed, so a release and its linkage file are always in place together), any
  other is undone;
* if the watchdog cannot run either (the machine stopped), the next workspace made in the same base
  folder recovers every workspace whose owner is gone (its lock is free) before it starts.

Commit: `Workspace.commit(moves)` records the renames (temporary file -> target) in the workspace's
state file, durably, and only then renames; from that moment the release is in place or will be.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ._watchdog import COMMITTING, DONE, LOCK, RUNNING, SCRIPT, STATE, recover_workspace

BASE_PREFIX = "duckdb-sdc-"
SPILL = "spill"
STARTING = ".starting-"  # a workspace being made: its lock is not held yet, so `recover` leaves it alone
STARTING_GRACE_SECONDS = 60


class WorkspaceError(OSError):
    """The private folder cannot be made or is not private (an error of the user's setup: exit 2)."""


def base_folder(root: Path | str | None = None) -> Path:
    """The user's private base folder under `root` (default: the system temporary folder): made with
    mode 0700 if missing; refused unless it is a real folder owned by this user that no one else can
    read (another user could otherwise read the spill files, or plant a link)."""
    root = Path(root) if root is not None else Path(tempfile.gettempdir())
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise WorkspaceError(f"cannot create the temporary folder {str(root)!r} ({e.strerror})") from None
    base = root / f"{BASE_PREFIX}{os.getuid()}"
    try:
        base.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError as e:
        raise WorkspaceError(f"cannot create the private folder {str(base)!r} ({e.strerror})") from None
    info = os.lstat(base)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise WorkspaceError(f"{str(base)!r} must be a folder owned by you with mode 0700 (it holds raw data "
                             f"while a release runs); it is {_describe(info)}: remove it or choose another "
                             "temp_directory")
    return base


def _describe(info: os.stat_result) -> str:
    kind = "a folder" if stat.S_ISDIR(info.st_mode) else "a link" if stat.S_ISLNK(info.st_mode) else "a file"
    return f"{kind} owned by uid {info.st_uid} with mode {stat.S_IMODE(info.st_mode):04o}"


def recover(base: Path) -> list[tuple[str, str]]:
    """Recover every workspace in `base` whose owner is gone (its lock can be taken): roll forward a
    release that had begun to commit, delete any other's temporary files, remove the folder. Returns
    (folder, what was done) for each."""
    done = []
    try:
        entries = list(os.scandir(base))
    except OSError:
        return done
    for entry in entries:
        if not entry.is_dir(follow_symlinks=False):
            continue
        if entry.name.startswith(STARTING):  # one killed while it was being made holds nothing else
            try:
                if time.time() - entry.stat(follow_symlinks=False).st_mtime > STARTING_GRACE_SECONDS:
                    shutil.rmtree(entry.path, ignore_errors=True)
            except OSError:
                pass
            continue
        try:
            lock = os.open(os.path.join(entry.path, LOCK), os.O_RDWR)
        except OSError:  # being removed right now, or not ours
            continue
        try:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # alive
                continue
            if os.path.isdir(entry.path):
                done.append((entry.path, recover_workspace(entry.path)))
        finally:
            os.close(lock)
    return done


class Workspace:
    """One process's private workspace (see the module docstring). Use it as a context manager."""

    def __init__(self, root: Path | str | None = None, *, watchdog: bool = True):
        self.base = base_folder(root)
        self.recovered = recover(self.base)
        # made under a name `recover` skips, locked, then given its name (mkdtemp: mode 0700)
        starting = Path(tempfile.mkdtemp(prefix=f"{STARTING}{os.getpid()}-", dir=self.base))
        self._lock = os.open(starting / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        self.path = self.base / starting.name.removeprefix(STARTING)
        os.rename(starting, self.path)
        self.spill = self.path / SPILL
        self.spill.mkdir(mode=0o700)
        self.state = {"status": RUNNING, "pid": os.getpid(), "temporaries": [], "moves": []}
        self._save()
        self._watchdog = None
        if watchdog:
            self._watchdog = subprocess.Popen(
                [sys.executable, "-S", "-E", SCRIPT, str(self.path)], stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
        self.closed = False

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _save(self) -> None:
        """Write the state file atomically and durably (a crash leaves the old or the new state)."""
        new = self.path / f".{STATE}.new"
        with open(new, "w", encoding="utf-8") as f:
            json.dump(self.state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(new, self.path / STATE)
        _fsync_folder(self.path)

    def temporary(self, target: Path | str, suffixes: tuple[str, ...] = ("", ".wal")) -> Path:
        """A hidden sibling of `target` to write instead of it (renamed over it by `commit`), registered
        with the suffixed names DuckDB may add (its write-ahead log) before it exists."""
        target = Path(target)
        tmp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
        self.register(*(Path(f"{tmp}{s}") for s in suffixes))
        return tmp

    def register(self, *paths: Path | str) -> None:
        """Files or folders to delete unless they are renamed into place (registered before they exist)."""
        self.state["temporaries"] += [str(Path(p).absolute()) for p in paths]
        self._save()

    def commit(self, moves: list[tuple[Path, Path]]) -> None:
        """Rename each temporary file over its target, in order, after recording the renames: from the
        moment they are recorded the release is committed (a watchdog or a later release completes
        them if this process dies)."""
        self.state["moves"] = [(str(Path(t).absolute()), str(Path(d).absolute())) for t, d in moves]
        self.state["status"] = COMMITTING
        self._save()
        for i, (tmp, target) in enumerate(moves):
            try:
                os.replace(tmp, target)
            except OSError:
                if i == 0:  # nothing is in place yet: undo instead of rolling forward
                    self.state["status"] = RUNNING
                    self._save()
                raise
            _fsync_folder(Path(target).parent)
        self.state["status"] = DONE
        self._save()

    def close(self) -> None:
        """End the workspace: delete what was not committed, remove the folder, stop the watchdog."""
        if self.closed:
            return
        self.closed = True
        try:
            recover_workspace(str(self.path))  # the state says what to finish or undo
        finally:
            os.close(self._lock)
            if self._watchdog is not None:
                try:
                    self._watchdog.stdin.close()
                except OSError:
                    pass
                try:
                    self._watchdog.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


__all__ = ["Workspace", "WorkspaceError", "base_folder", "recover"]
