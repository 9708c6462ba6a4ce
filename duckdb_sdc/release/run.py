"""Materialise a release: run the planned script, gate it on the policy, and put the files in place.

The script masks into temporary tables and joins the would-be release (`plan.released_step`); the
policy gate measures it there, before any file is opened for writing: a breach raises
`policy.PolicyBreach` and nothing is written. Then it writes a new file next to the output
(`.<name>.<pid>-<random>.tmp`), and the linkage file when the spec asks for one, the same way; only
when every statement has succeeded are they renamed over their paths (`os.replace`, atomic on one
file system; the linkage first, and it names the release it belongs to). Any failure closes the
connection and deletes the new files, so there is either no output file or the previous release,
untouched.
"""

from __future__ import annotations

import os
import re
import secrets
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import duckdb
from sqlglot import exp

from .. import __version__
from ..sql import connect
from ..sql.progress import watching
from . import manifest, pooling, safeguards
from .plan import (DIALECT, RAW, RELEASE_DB, RELEASED, SOURCE, Plan, Step, column, ident, key_step, keyed_step, linkage_steps,
                   literal, mask_steps, release_table_step, released_columns, released_step, resolve, source_steps,
                   table, view_steps)
from .policy import PolicyBreach, judge
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
    not_private: list[str]  # columns released with reproducible noise (the spec opted in)
    linkage: Path | None = None
    pooled: str | None = None  # what pooling small strata did to the released strata (pooling.summary)


def _temporary_path(out: Path) -> Path:
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
    for where, out in (("output.database", spec.output.database), ("output.linkage", spec.output.linkage)):
        if out is None:
            continue
        if spec.source.database is not None and out.resolve() == spec.source.database.resolve():
            raise SpecError(f"{spec.name}: {where} must be a separate file from the source")
        if out.is_dir():
            raise SpecError(f"{spec.name}: {where} {str(out)!r} is a folder")
        if Path(f"{out}.wal").exists():
            raise SpecError(f"{spec.name}: {where} {str(out)!r} has a write-ahead log ({out.name}.wal): "
                            "it is open in another program or was not closed cleanly; close it first")


def error_message(error: Exception) -> str:
    """DuckDB's text of an error raised in a UDF, reduced to the duckdb_sdc message."""
    text = str(error)
    found = re.search(r"SdcError: (.*)", text, re.S)
    return found.group(1).strip() if found else text.strip()


def _run(con, step: Step, spec: Spec) -> None:
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


def open_source(con, spec: Spec) -> tuple[list[Step], list[tuple[str, str]]]:
    """Set up the source on `con` (read-only) as the temporary relation RAW and its keyed view SOURCE;
    return the steps that did it and the source's (column, type) pairs."""
    setup = source_steps(spec)
    for step in setup:
        _run(con, step, spec)
    described = con.execute(exp.Describe(this=table(RAW)).sql(dialect=DIALECT)).fetchall()
    source_columns = [(r[0], r[1]) for r in described]
    keyed = keyed_step(spec, source_columns)
    _run(con, keyed, spec)
    return setup + [keyed], source_columns


def _refuse_unopted_seeds(spec: Spec) -> None:
    """A seed makes noise reproducible by whoever holds it: refused unless the spec opts in."""
    for rule in spec.masked():
        if rule.seeded and not spec.reproducible(rule):
            raise SpecError(f"{spec.name}: {rule.where}: a seed makes the noise of {rule.method.name} reproducible, "
                            "so whoever holds it can remove the noise (the column would not be private, whatever "
                            "its epsilon says); leave the seed out, or set reproducible_noise = true (in the rule or "
                            "in [masking]) to release it marked \"none: reproducible noise\"")


def _gate(spec: Spec) -> Step:
    """The policy gate: the would-be release (RELEASED) measured against the spec's [policy]."""
    from .report import create_views, evaluation, policy_measures

    def action(con):
        create_views(con, spec, table(RELEASED))
        outcomes = judge(spec.policy, policy_measures(evaluation(con, spec)))
        if not all(o.passed for o in outcomes):
            raise PolicyBreach(spec.name, outcomes)

    limits = ", ".join(f"{limit.measure} {limit.sign} {bound:g}" for limit, bound in spec.policy.limits())
    return Step("checking the policy", None, action=action,
                comment=f"policy gate (in Python, nothing is written on a breach): {limits}")


def build(spec: Spec, source_columns, attach_path: Path, *, package_version: str, duckdb_version: str,
          linkage_path: Path | None = None, salt: str | None = None, release_id: str = "",
          created_at: datetime | None = None, facts: safeguards.Facts | None = None) -> list[Step]:
    """The steps after the source is set up: key check, masking and safeguards, the would-be release,
    the policy gate, writing the release file (and the linkage file). `salt` None: a dry run (the
    salt is a placeholder). `facts` receives what the steps decide as they run."""
    resolve(spec, source_columns)
    _refuse_unopted_seeds(spec)
    created_at = created_at or datetime.now(timezone.utc)
    facts = safeguards.Facts() if facts is None else facts
    steps = [key_step(spec)]
    steps += pooling.count_steps(spec, source_columns, facts) + pooling.recode_steps(spec, source_columns, facts)
    centroids = []
    for i, (rule, step) in enumerate(zip(spec.masked(), mask_steps(spec)), start=1):
        steps.append(step)
        auto = safeguards.auto_step(spec, rule, facts)
        steps += [auto] if auto is not None else []
        steps += safeguards.protect_steps(spec, rule, i, facts)
        smallest = safeguards.smallest_set_step(spec, rule, i, facts)
        steps += [smallest] if smallest is not None else []
        if rule.centroids_table is not None:
            centroids += safeguards.centroids_steps(spec, rule, i)
    steps.append(released_step(spec, source_columns, salt))
    if spec.policy is not None and spec.policy.limits():
        steps.append(_gate(spec))
    options = []
    if spec.output.storage_version:
        options.append(exp.AttachOption(this=exp.Var(this="STORAGE_VERSION"),
                                        expression=literal(spec.output.storage_version)))
    attach = exp.Attach(this=exp.Alias(this=literal(str(attach_path)), alias=ident(RELEASE_DB)),
                        expressions=options or None)
    steps += [Step("opening the release file", attach), Step("writing the release", exp.Transaction()),
              release_table_step(spec, source_columns)] + centroids
    steps += manifest.steps(lambda: manifest.rows(spec, source_columns, facts, release_id=release_id,
                                                  package_version=package_version, duckdb_version=duckdb_version,
                                                  created_at=created_at))
    steps += view_steps(spec, source_columns)
    steps += [Step("committing", exp.Commit()), Step("closing the release file", exp.Detach(this=ident(RELEASE_DB)))]
    if linkage_path is not None:
        steps += linkage_steps(spec, linkage_path, release_id)
    return steps


def plan_release(con, spec: Spec, attach_path: Path | None = None, *, linkage_path: Path | None = None,
                 salt: str | None = None, release_id: str = "", facts: safeguards.Facts | None = None) -> Plan:
    """Set up the source on `con` (read-only) and return the whole script."""
    _check_paths(spec)
    attach_path = attach_path or _temporary_path(spec.output.database)
    if linkage_path is None and spec.output.linkage is not None:
        linkage_path = _temporary_path(spec.output.linkage)
    setup, source_columns = open_source(con, spec)
    steps = build(spec, source_columns, attach_path, package_version=__version__, duckdb_version=duckdb.__version__,
                  linkage_path=linkage_path, salt=salt, release_id=release_id, facts=facts)
    return Plan(spec=spec, source_columns=source_columns, attach_path=attach_path, setup=setup, steps=steps,
                linkage_path=linkage_path)


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


def _mkdir(spec: Spec, where: str, out: Path) -> None:
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SpecError(f"{spec.name}: {where}: cannot create {str(out.parent)!r} ({e.strerror})") from None


def release(spec: Spec, *, progress: Progress | None = None) -> ReleaseResult:
    """Write the release file declared by `spec` (and its linkage file, when asked for); raise
    SpecError or PolicyBreach with nothing written on any failure."""
    start = time.perf_counter()
    progress = progress or Progress(enabled=False)
    con = connect()
    con.execute("SET enable_progress_bar = false")
    attach_path = _temporary_path(spec.output.database)
    linkage_path = None if spec.output.linkage is None else _temporary_path(spec.output.linkage)
    written = [attach_path] + ([linkage_path] if linkage_path is not None else [])
    facts = safeguards.Facts()
    try:
        plan = plan_release(con, spec, attach_path, linkage_path=linkage_path, salt=secrets.token_hex(16),
                            release_id=str(uuid.UUID(bytes=secrets.token_bytes(16), version=4)), facts=facts)
        _mkdir(spec, "output.database", spec.output.database)
        if spec.output.linkage is not None:
            _mkdir(spec, "output.linkage", spec.output.linkage)
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
        for where, new, out in (("output.linkage", linkage_path, spec.output.linkage),
                                ("output.database", attach_path, spec.output.database)):
            if new is None:
                continue
            try:
                os.replace(new, out)
            except OSError as e:
                raise SpecError(f"{spec.name}: {where}: cannot write {str(out)!r} ({e.strerror})") from None
    except BaseException:
        con.close()
        for path in written:
            for leftover in (path, Path(f"{path}.wal")):
                try:
                    leftover.unlink(missing_ok=True)
                except OSError:  # its folder could not be made: nothing was written
                    pass
        raise
    return ReleaseResult(path=spec.output.database, table=spec.output.table, rows=rows,
                         columns=len(released_columns(spec, plan.source_columns)),
                         masked=[c for r in spec.masked() for c in r.columns], seconds=time.perf_counter() - start,
                         not_private=[c for r in spec.masked() if r.seeded for c in r.columns],
                         linkage=spec.output.linkage, pooled=pooling.summary(spec, facts))


__all__ = ["ReleaseResult", "build", "dry_run", "error_message", "open_source", "plan_release", "release"]
