"""Materialise a release: run the planned script and put the file in place atomically.

The script writes a new file next to the output (`.<name>.<pid>-<random>.tmp`); only when every
statement has succeeded is it renamed over the output path (`os.replace`, atomic on one file
system). Any failure closes the connection and deletes the new file, so there is either no output
file or the previous release, untouched.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
from sqlglot import exp

from .. import __version__
from ..sql import connect
from ..sql.progress import watching
from .plan import DIALECT, SOURCE, Plan, Step, build, column, ident, released_columns, source_steps, table
from .progress import Progress
from .spec import Spec, SpecError


@dataclass
class ReleaseResult:
    path: Path
    table: str
    rows: int
    columns: int
    masked: list[str]
    seconds: float


def _attach_path(spec: Spec) -> Path:
    out = spec.output.database
    return out.with_name(f".{out.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")


def check_source(spec: Spec) -> None:
    """The source file, or at least one file of each pattern, exists."""
    if spec.source.database is not None:
        if not spec.source.database.is_file():
            raise SpecError(f"{spec.name}: source.database: no such file {str(spec.source.database)!r}")
    else:
        import glob

        for pattern in spec.source.files:
            if not glob.glob(pattern):
                raise SpecError(f"{spec.name}: source.files: no file matches {pattern!r}")


def _check_paths(spec: Spec) -> None:
    check_source(spec)
    out = spec.output.database
    if spec.source.database is not None:
        if out.resolve() == spec.source.database.resolve():
            raise SpecError(f"{spec.name}: output.database must be a separate file from the source")
    if out.is_dir():
        raise SpecError(f"{spec.name}: output.database {str(out)!r} is a folder")
    if Path(f"{out}.wal").exists():
        raise SpecError(f"{spec.name}: output.database {str(out)!r} has a write-ahead log ({out.name}.wal): "
                        "it is open in another program or was not closed cleanly; close it first")


def error_message(error: Exception) -> str:
    """DuckDB's text of an error raised in a UDF, reduced to the duckdb_sdc message."""
    text = str(error)
    found = re.search(r"SdcError: (.*)", text, re.S)
    return found.group(1).strip() if found else text.strip()


def _run(con, step: Step, spec: Spec) -> None:
    try:
        rows = con.execute(step.sql.sql(dialect=DIALECT)).fetchall()
    except duckdb.Error as e:
        where = f"{step.where}: " if step.where else f"{step.label}: "
        raise SpecError(f"{spec.name}: {where}{error_message(e)}") from None
    if step.check is not None:
        step.check(rows)


def open_source(con, spec: Spec) -> tuple[list[Step], list[tuple[str, str]]]:
    """Set up the source on `con` (read-only) as the temporary relation `__sdc_source`; return the
    steps that did it and the source's (column, type) pairs."""
    setup = source_steps(spec)
    for step in setup:
        _run(con, step, spec)
    described = con.execute(exp.Describe(this=table(SOURCE)).sql(dialect=DIALECT)).fetchall()
    return setup, [(r[0], r[1]) for r in described]


def plan_release(con, spec: Spec, attach_path: Path | None = None) -> Plan:
    """Set up the source on `con` (read-only) and return the whole script."""
    _check_paths(spec)
    attach_path = attach_path or _attach_path(spec)
    setup, source_columns = open_source(con, spec)
    steps = build(spec, source_columns, attach_path, package_version=__version__,
                  duckdb_version=duckdb.__version__)
    return Plan(spec=spec, source_columns=source_columns, attach_path=attach_path, setup=setup, steps=steps)


def dry_run(spec: Spec) -> str:
    """The release script, without running it (the source is only read for its columns)."""
    con = connect()
    try:
        return plan_release(con, spec).sql()
    finally:
        con.close()


def _count_strata(con, strata: tuple[str, ...]) -> int:
    """How many groups a masking step masks apart (1 without strata)."""
    if not strata:
        return 1
    distinct = exp.select(*(column(c) for c in strata)).distinct().from_(table(SOURCE))
    query = exp.select(exp.Count(this=exp.Star())).from_(distinct.subquery(ident("__sdc_strata")))
    return con.execute(query.sql(dialect=DIALECT)).fetchall()[0][0]


def release(spec: Spec, *, progress: Progress | None = None) -> ReleaseResult:
    """Write the release file declared by `spec`; raise SpecError (nothing written) on any failure."""
    start = time.perf_counter()
    progress = progress or Progress(enabled=False)
    con = connect()
    con.execute("SET enable_progress_bar = false")
    attach_path = _attach_path(spec)
    try:
        plan = plan_release(con, spec, attach_path)
        out = spec.output.database
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise SpecError(f"{spec.name}: output.database: cannot create {str(out.parent)!r} ({e.strerror})") from None
        with progress.task(f"release {spec.output.table}", len(plan.steps)) as task:
            for step in plan.steps:
                if step.strata is None:
                    task.advance(step.label)
                    _run(con, step, spec)
                    continue
                task.advance(step.label, _count_strata(con, step.strata) if progress.enabled else 0)
                with watching(task.group):
                    _run(con, step, spec)
        rows = con.execute(exp.select(exp.Count(this=exp.Star())).from_(table(SOURCE)).sql(dialect=DIALECT)).fetchall()[0][0]
        con.close()
        try:
            os.replace(attach_path, out)
        except OSError as e:
            raise SpecError(f"{spec.name}: output.database: cannot write {str(out)!r} ({e.strerror})") from None
    except BaseException:
        con.close()
        for leftover in (attach_path, Path(f"{attach_path}.wal")):
            try:
                leftover.unlink(missing_ok=True)
            except OSError:  # its folder could not be made: nothing was written
                pass
        raise
    return ReleaseResult(path=out, table=spec.output.table, rows=rows,
                         columns=len(released_columns(spec, plan.source_columns)),
                         masked=[c for r in spec.masked() for c in r.columns], seconds=time.perf_counter() - start)


__all__ = ["ReleaseResult", "dry_run", "error_message", "open_source", "plan_release", "release"]
