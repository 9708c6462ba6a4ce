"""Reading a release's source: the snapshot of the files it reads (`Snapshot`, checked again before a
release is renamed into place), the private connection a release or a report reads it on, the source
set up there as RAW and its keyed view SOURCE (`open_source`), and a plan's steps run on that
connection (`run_step`). Shared by the release (run.py), the report (report.py), the sweeps
(tradeoff.py) and the dbt plugin."""

from __future__ import annotations

import os
from dataclasses import dataclass

import duckdb
from sqlglot import exp

from .._validate import error_message
from ..sql import connect
from ..workspace import Workspace
from .plan import DIALECT, RAW, Step, keyed_step, source_steps, table
from .spec import Resources, Spec, SpecError, check_bound


@dataclass(frozen=True)
class Snapshot:
    """The source as a release reads it: the files its patterns matched when the release started (or
    its database file), with their sizes, modification times and inodes. `check` refuses a source
    that changed before the release is renamed into place: every statement reads these files only,
    so a file added meanwhile is not read, and one changed or removed would give a release of no one
    state of the source."""
    files: tuple[str, ...]
    stats: tuple[tuple[int, int, int], ...]

    @staticmethod
    def _stat(path: str) -> tuple[int, int, int]:
        info = os.stat(path)
        return info.st_size, info.st_mtime_ns, info.st_ino

    @classmethod
    def take(cls, spec: Spec, con=None) -> Snapshot:
        if spec.source.frame is not None:  # a frame in memory (duckdb_sdc.frames): no file to watch
            check_bound(spec)
            return cls((), ())
        if spec.source.database is not None:
            if not spec.source.database.is_file():
                raise SpecError(f"{spec.name}: source.database: no such file {str(spec.source.database)!r}")
            files = (str(spec.source.database),)
        else:
            own = con is None
            con = con or duckdb.connect()
            try:
                matched = []
                for pattern in spec.source.files:
                    found = [r[0] for r in con.execute("SELECT file FROM glob(?) ORDER BY file", [pattern]).fetchall()]
                    if not found:
                        raise SpecError(f"{spec.name}: source.files: no file matches {pattern!r}")
                    matched += found
            finally:
                if own:
                    con.close()
            files = tuple(dict.fromkeys(matched))
        return cls(files, tuple(cls._stat(f) for f in files))

    def check(self, spec: Spec) -> None:
        where = "source.database" if spec.source.database is not None else "source.files"
        for path, before in zip(self.files, self.stats):
            try:
                now = self._stat(path)
            except OSError:
                now = None
            if now != before:
                what = "was removed" if now is None else "changed (its size, modification time or inode)"
                raise SpecError(f"{spec.name}: {where}: {path!r} {what} while the release read it; nothing was "
                                "written; release again when the source is stable")


def check_source(spec: Spec) -> None:
    """The source file, or at least one file of each pattern, exists; a frame source has its frame."""
    Snapshot.take(spec)


def run_step(con, step: Step, spec: Spec) -> None:
    """Run one step of a plan on `con`: its action, or its statement (a DuckDB error as a SpecError naming
    the step) and its check of the rows."""
    if step.action is not None:
        step.action(con)
        return
    try:
        rows = con.execute(step.expression().sql(dialect=DIALECT)).fetchall()
    except duckdb.Error as e:
        where = f"{step.where}: " if step.where else f"{step.label}: "
        raise SpecError(f"{spec.name}: {where}{error_message(e)}") from None
    if step.check is not None:
        step.check(rows)


def open_source(con, spec: Spec, snapshot: Snapshot | None = None) -> tuple[list[Step], list[tuple[str, str]]]:
    """Set up the source on `con` (read-only) as the temporary relation RAW and its keyed view SOURCE
    (the files of `snapshot`, else the files the patterns match now); return the steps that did it
    and the source's (column, type) pairs."""
    snapshot = snapshot or Snapshot.take(spec, con)
    setup = source_steps(spec, None if spec.source.database is not None else snapshot.files)
    for step in setup:
        run_step(con, step, spec)
    described = con.execute(exp.Describe(this=table(RAW)).sql(dialect=DIALECT)).fetchall()
    source_columns = [(r[0], r[1]) for r in described]
    keyed = keyed_step(spec, source_columns)
    run_step(con, keyed, spec)
    return setup + [keyed], source_columns


def private_connection(workspace: Workspace, resources: Resources):
    """A connection with every duckdb_sdc function registered whose spill files go to the workspace's
    private folder, within the spec's memory limit and threads; encrypted by DuckDB where its httpfs
    extension (a secure random generator) is installed (see docs/releases/guarantees.md)."""
    con = connect(None, temp_directory=str(workspace.spill), **resources.config())
    con.execute("SET enable_progress_bar = false")
    encrypt_spills(con)
    return con


def encrypt_spills(con) -> bool:
    """Turn DuckDB's encryption of its temporary files on for `con`'s database where the httpfs extension
    (its secure random generator) is installed and loads; True if it is on. Without httpfs, DuckDB's
    fallback generator is not secure, so the spill files stay plain, in the private folder
    (docs/releases/guarantees.md). The release's connections and the dbt plugin's call it."""
    installed = con.execute("SELECT count(*) FROM duckdb_extensions() WHERE extension_name = 'httpfs' "
                            "AND installed").fetchall()[0][0]
    if installed:
        try:
            con.execute("LOAD httpfs")
            con.execute("SET temp_file_encryption = true")
            return True
        except duckdb.Error:  # an extension of another version: the private folder still holds
            pass
    return False


__all__ = ["Snapshot", "check_source", "encrypt_spills", "open_source", "private_connection", "run_step"]
