"""Materialise a release: run the planned script, gate it on the policy, and put the files in place.

Everything happens in a private workspace (duckdb_sdc.workspace): DuckDB's spill files go to its
folder (mode 0700), and the new files are written as hidden siblings of their targets
(`.<name>.<pid>-<random>.tmp`), registered in the workspace before they exist. The script masks into
temporary tables and joins the would-be release (`plan.released_step`); the policy gate measures it
there, before any file is opened for writing: a breach raises `policy.PolicyBreach` and nothing is
written. Before anything is renamed, the source is checked to be the snapshot that was read
(`Snapshot`); then the workspace commits: the renames (the release file, then the linkage file,
which names the release it belongs to) are recorded, then done (`os.replace`, atomic on one file
system); a process killed from that moment is rolled forward by its watchdog, so a release and its
linkage are in place together or not at all. Any failure before it deletes the new files, so there
is either no output file or the previous release, untouched; a release never replaces a file that is
not a previous release of the same table (`check_outputs`).

The ledger (release/ledger.py) is locked for the whole release; its checks refuse with
`ledger.LedgerRefusal` (a PolicyBreach: exit 3, nothing written), and the release's entry and values
are the first renames of the commit.
"""

from __future__ import annotations

import functools
import os
import secrets
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import duckdb
from sqlglot import exp

from .._validate import error_message
from .._version import __version__
from ..workspace import Workspace
from ..sql.progress import watching
from . import manifest, pooling, safeguards
from .plan import (DIALECT, LINKAGE_TABLE, RELEASE_DB, RELEASED, SOURCE, Plan, Step, column, ident, key_step,
                   linkage_steps, literal, mask_steps, release_table_step, released_columns, released_step, resolve,
                   table, view_steps)
from .ledger import Composer, Ledger
from .policy import PolicyBreach, judge
from .progress import Progress
from .report import create_views, evaluation, policy_measures
from .source import Snapshot, open_source, private_connection, run_step
from .spec import MANIFEST_TABLE, Resources, Spec, SpecError


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
    notes: list[str] = field(default_factory=list)  # what the command line prints (and the manifest records)
    pooled: str | None = None  # what pooling small strata did to the released strata (pooling.summary)
    warnings: list[str] = field(default_factory=list)  # what the spec opted into (the ledger records it)


def _temporary_path(out: Path) -> Path:
    return out.with_name(f".{out.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")


_DUCKDB_MAGIC = b"DUCK"  # bytes 8-11 of a DuckDB database file


def _is_duckdb_file(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(12)
    except OSError:
        return False
    return len(head) == 12 and head[8:12] == _DUCKDB_MAGIC


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


def check_outputs(spec: Spec, snapshot: Snapshot) -> None:
    """What a release may replace: nothing but a previous release of the same table (a DuckDB file
    whose release_manifest names it), or for the linkage file a previous linkage file. Never the
    source (any of its files), the spec file, a folder, or a file open in another program."""
    protected = [(Path(f), "a file of the source") for f in snapshot.files]
    if spec.path is not None:
        protected.append((spec.path, "the spec file"))
    for where, out, expected in (("output.database", spec.output.database, MANIFEST_TABLE),
                                 ("output.linkage", spec.output.linkage, LINKAGE_TABLE)):
        if out is None:
            continue
        for path, what in protected:
            if _same_file(out, path):
                raise SpecError(f"{spec.name}: {where} {str(out)!r} is {what}: a release never replaces it; "
                                "choose another path")
        if out.is_dir():
            raise SpecError(f"{spec.name}: {where} {str(out)!r} is a folder")
        if Path(f"{out}.wal").exists():
            raise SpecError(f"{spec.name}: {where} {str(out)!r} has a write-ahead log ({out.name}.wal): "
                            "it is open in another program or was not closed cleanly; close it first")
        if out.exists() or out.is_symlink():
            _check_replaceable(spec, where, out, expected)


def _check_replaceable(spec: Spec, where: str, out: Path, expected: str) -> None:
    what = f"a previous release of table {spec.output.table!r}" if expected == MANIFEST_TABLE else "a previous linkage file"
    refuse = f"{spec.name}: {where} {str(out)!r} exists and is not {what}"
    advice = "; a release replaces nothing else: remove it or choose another path"
    if out.is_symlink() or not out.is_file():
        raise SpecError(f"{refuse} (it is {'a link' if out.is_symlink() else 'not a regular file'}){advice}")
    if not _is_duckdb_file(out):
        raise SpecError(f"{refuse} (it is not a DuckDB database file){advice}")
    try:
        con = duckdb.connect(str(out), read_only=True)
    except duckdb.Error as e:
        raise SpecError(f"{refuse} (it cannot be opened: {error_message(e).splitlines()[0]}){advice}") from None
    try:
        if expected == MANIFEST_TABLE:
            rows = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'main' "
                               "AND table_name = ?", [MANIFEST_TABLE]).fetchall()[0][0]
            reason = (previous_release_reason(con, table(MANIFEST_TABLE, "main"), spec.output.table) if rows
                      else f"it has no {MANIFEST_TABLE}")
            if reason is not None:
                raise SpecError(f"{refuse} ({reason}){advice}")
        else:
            rows = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'main' "
                               "AND table_name = ?", [LINKAGE_TABLE]).fetchall()[0][0]
            if not rows:
                raise SpecError(f"{refuse} (it has no {LINKAGE_TABLE} table){advice}")
    except duckdb.Error as e:
        raise SpecError(f"{refuse} ({error_message(e).splitlines()[0]}){advice}") from None
    finally:
        con.close()


def previous_release_reason(con, manifest_table: exp.Table, release_table: str) -> str | None:
    """Why the table `manifest_table` on `con` (which exists) is not the manifest of a release of the
    table `release_table`, or None when a row of it names that table: what `check_outputs` asks of a
    release file's release_manifest, and the dbt materialization of the manifest table beside a
    model (duckdb_sdc.dbt_plugin)."""
    try:
        described = con.execute(exp.Describe(this=manifest_table.copy()).sql(dialect=DIALECT)).fetchall()
        if "release_table" not in {r[0].lower() for r in described}:
            return "it has no release_table column"
        named = con.execute(exp.select(exp.Count(this=exp.Star())).from_(manifest_table.copy()).where(
            exp.EQ(this=column("release_table"), expression=literal(release_table))).sql(dialect=DIALECT)).fetchall()[0][0]
    except duckdb.Error as e:
        return error_message(e).splitlines()[0]
    return None if named else "it has a release of another table"


def refuse_unopted_seeds(spec: Spec) -> None:
    """A seed makes noise reproducible by whoever holds it: refused unless the spec opts in."""
    for rule in spec.masked():
        if rule.seeded and not spec.reproducible(rule):
            raise SpecError(f"{spec.name}: {rule.where}: a seed makes the noise of {rule.method.name} reproducible, "
                            "so whoever holds it can remove the noise (the column would not be private, whatever "
                            "its epsilon says); leave the seed out, or set reproducible_noise = true (in the rule or "
                            "in [masking]) to release it marked \"none: reproducible noise\"")


def _gate(spec: Spec, on_breach=None) -> Step:
    """The policy gate: the would-be release (RELEASED) measured against the spec's [policy].
    `on_breach(con)`, when given, sees the would-be release (the report's views) before the
    breach is raised (release/html.py writes its page)."""
    def action(con):
        create_views(con, spec, table(RELEASED))
        outcomes = judge(spec.policy, policy_measures(evaluation(con, spec)))
        if not all(o.passed for o in outcomes):
            if on_breach is not None:
                on_breach(con)
            raise PolicyBreach(spec.name, outcomes)

    limits = ", ".join(f"{limit.measure} {limit.sign} {bound:g}" for limit, bound in spec.policy.limits())
    return Step("checking the policy", None, action=action,
                comment=f"policy gate (in Python, nothing is written on a breach): {limits}")


def prepare(spec: Spec, source_columns, *, salt: str | None = None, gate: bool = True,
            facts: safeguards.Facts | None = None, on_breach=None) -> tuple[list[Step], safeguards.Facts, list[Step]]:
    """The steps after the source is set up and before anything is written: the rules checked
    against the source, key check, masking and safeguards, the would-be release RELEASED, the policy
    gate (unless `gate` is False; `on_breach(con)` is called by it on a breach). Returns them, the
    safeguards' facts (`facts`, or new ones: what the steps measure, the manifest's numbers) and the
    steps that write the centroids tables. `build` writes a release file after them; the dbt
    materialization (duckdb_sdc.dbt_plugin) writes warehouse tables."""
    resolve(spec, source_columns)
    refuse_unopted_seeds(spec)
    facts = facts if facts is not None else safeguards.Facts()
    steps = [key_step(spec, facts)]
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
    if gate and spec.policy is not None and spec.policy.limits():
        steps.append(_gate(spec, on_breach))
    return steps, facts, centroids


def build(spec: Spec, source_columns, attach_path: Path, *, package_version: str, duckdb_version: str,
          linkage_path: Path | None = None, salt: str | None = None, release_id: str = "",
          created_at: datetime | None = None, facts: safeguards.Facts | None = None,
          on_breach=None, checks: tuple[Step, ...] = ()) -> list[Step]:
    """The steps after the source is set up: `prepare`'s, then writing the release file (and the
    linkage file). `salt` None: a dry run (the salt is a placeholder). `facts` collects what the
    steps measure (the manifest's numbers). `on_breach(con, manifest_rows)` is called by the gate on
    a breach, with the would-be manifest's rows (a callable). `checks` (the ledger's) run after the
    gate, on the would-be release too."""
    created_at = created_at or datetime.now(timezone.utc)
    facts = facts if facts is not None else safeguards.Facts()
    manifest_rows = functools.cache(lambda: manifest.rows(spec, source_columns, facts, release_id=release_id,
                                                          package_version=package_version,
                                                          duckdb_version=duckdb_version, created_at=created_at))
    steps, facts, centroids = prepare(spec, source_columns, salt=salt, facts=facts,
                                      on_breach=None if on_breach is None else lambda con: on_breach(con, manifest_rows))
    steps += list(checks)
    options = []
    if spec.output.storage_version:
        options.append(exp.AttachOption(this=exp.Var(this="STORAGE_VERSION"),
                                        expression=literal(spec.output.storage_version)))
    attach = exp.Attach(this=exp.Alias(this=literal(str(attach_path)), alias=ident(RELEASE_DB)),
                        expressions=options or None)
    steps += [Step("opening the release file", attach), Step("writing the release", exp.Transaction()),
              release_table_step(spec, source_columns)] + centroids
    steps += manifest.steps(manifest_rows)
    steps += view_steps(spec, source_columns)
    steps += manifest.comment_steps(spec, released_columns(spec, source_columns), manifest_rows)
    steps += [Step("committing", exp.Commit()), Step("closing the release file", exp.Detach(this=ident(RELEASE_DB)))]
    if linkage_path is not None:
        steps += linkage_steps(spec, linkage_path, release_id)
    return steps


def plan_release(con, spec: Spec, attach_path: Path | None = None, *, linkage_path: Path | None = None,
                 salt: str | None = None, release_id: str = "", snapshot: Snapshot | None = None,
                 on_breach=None, checks: tuple[Step, ...] = (), created_at: datetime | None = None) -> Plan:
    """Set up the source on `con` (read-only) and return the whole script (`on_breach`, `checks`: see
    build)."""
    snapshot = snapshot or Snapshot.take(spec, con)
    check_outputs(spec, snapshot)
    attach_path = attach_path or _temporary_path(spec.output.database)
    if linkage_path is None and spec.output.linkage is not None:
        linkage_path = _temporary_path(spec.output.linkage)
    setup, source_columns = open_source(con, spec, snapshot)
    facts = safeguards.Facts()
    steps = build(spec, source_columns, attach_path, package_version=__version__, duckdb_version=duckdb.__version__,
                  linkage_path=linkage_path, salt=salt, release_id=release_id, facts=facts, on_breach=on_breach,
                  checks=checks, created_at=created_at)
    return Plan(spec=spec, source_columns=source_columns, attach_path=attach_path, setup=setup, steps=steps,
                linkage_path=linkage_path, facts=facts)


def dry_run(spec: Spec, *, resources: Resources | None = None) -> str:
    """The release script, without running it (the source is only read for its columns)."""
    resources = resources or spec.resources
    with Workspace(resources.temp_directory) as workspace:
        con = private_connection(workspace, resources)
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


def release(spec: Spec, *, progress: Progress | None = None, resources: Resources | None = None,
            on_breach=None, ledger_path: Path | str | None = None) -> ReleaseResult:
    """Write the release file declared by `spec` (and its linkage file, when asked for) and record it in
    the ledger (`ledger_path`, else the spec's [ledger] path, else the default: release/ledger.py);
    raise SpecError or PolicyBreach (a LedgerRefusal too) with nothing written on any failure.
    `resources` overrides the spec's [resources] (memory limit, threads, where the private workspace
    is made). `on_breach(con, manifest_rows)` sees the would-be release of a breach before it is
    discarded (see build)."""
    start = time.perf_counter()
    progress = progress or Progress(enabled=False)
    resources = resources or spec.resources
    book = Ledger(ledger_path if ledger_path is not None else spec.ledger.path)
    # the ledger's lock first: the workspace is closed (its files deleted or renamed) before it is let go
    with book.locked(), Workspace(resources.temp_directory) as workspace:
        con = private_connection(workspace, resources)
        try:
            snapshot = Snapshot.take(spec, con)
            attach_path = workspace.temporary(spec.output.database)
            linkage_path = None if spec.output.linkage is None else workspace.temporary(spec.output.linkage)
            release_id = str(uuid.UUID(bytes=secrets.token_bytes(16), version=4))
            created_at = datetime.now(timezone.utc)
            composer = Composer(book, spec)
            plan = plan_release(con, spec, attach_path, linkage_path=linkage_path, salt=secrets.token_hex(16),
                                release_id=release_id, snapshot=snapshot, on_breach=on_breach,
                                checks=(composer.step(),), created_at=created_at)
            composer.source(con, plan.source_columns)  # the fingerprint; DP composition refused before masking
            _mkdir(spec, "output.database", spec.output.database)
            if spec.output.linkage is not None:
                _mkdir(spec, "output.linkage", spec.output.linkage)
            with progress.task(f"release {spec.output.table}", len(plan.steps)) as task:
                for step in plan.steps:
                    if step.strata is None:
                        task.advance(step.label)
                        run_step(con, step, spec)
                        continue
                    task.advance(step.label, _count_strata(con, step.strata) if progress.enabled else 0)
                    with watching(task.group):
                        run_step(con, step, spec)
            rows = con.execute(exp.select(exp.Count(this=exp.Star())).from_(table(SOURCE)).sql(dialect=DIALECT)).fetchall()[0][0]
            recorded = composer.write(con, workspace, release_id, created_at, plan.facts, rows)
        finally:
            con.close()
        snapshot.check(spec)
        # the ledger's files first: from the recorded commit on, the release and its entry are in place together
        moves = recorded + [(attach_path, spec.output.database)]
        if linkage_path is not None:
            moves.append((linkage_path, spec.output.linkage))
        try:
            workspace.commit(moves)
        except OSError as e:
            raise SpecError(f"{spec.name}: cannot write {str(e.filename2 or e.filename)!r} ({e.strerror})") from None
    return ReleaseResult(path=spec.output.database, table=spec.output.table, rows=rows,
                         columns=len(released_columns(spec, plan.source_columns)),
                         masked=[c for r in spec.masked() for c in r.columns], seconds=time.perf_counter() - start,
                         not_private=[c for r in spec.masked() if r.seeded for c in r.columns],
                         linkage=spec.output.linkage, notes=manifest.release_notes(spec, plan.facts) + composer.notes,
                         pooled=pooling.summary(spec, plan.facts), warnings=composer.warnings)


__all__ = ["ReleaseResult", "build", "check_outputs", "dry_run", "plan_release", "prepare", "previous_release_reason",
           "refuse_unopted_seeds", "release"]
