"""The release ledger (release/ledger.py) for a Spark release: the same fingerprint, the same checks, the
same refusals and the same entries as a DuckDB release, through its `Composer`, so that releases of one
source by either engine compose (docs/releases/ledger.md).

* The fingerprint. A source on this machine (local files, `file:` locations, a DuckDB table) is
  fingerprinted by DuckDB in the driver over the same files, with the DuckDB release's reader
  (`plan.source_relation`) and `ledger.fingerprint`: the DuckDB release's value by construction, also
  for a CSV file whose types Spark infers otherwise. It is computed in the preflight, before a JVM
  starts (one DuckDB scan of the source: 1.6 s of CPU per million records of six columns, on every
  core), and kept for the release (`_FINGERPRINTS`, keyed by the files' sizes, modification times and
  inodes, so a changed file is fingerprinted again). A source the driver cannot read (hdfs://, s3a://,
  a DataFrame or Spark table given to `release`) is fingerprinted in the executors: each partition's
  records, as Arrow, by an in-process DuckDB running `ledger.fingerprint_query` (`mapInArrow`), and the
  partitions' sums added on the driver (the multiset hash is a sum): the same value as the DuckDB
  release's for the same records and types (Parquet; a CSV file as Spark types it). Cost: one more
  pass over the source, one MD5 per record, in the executors.
* The checks. The ledger's lock is taken before the ledger is read and held until the release folder
  is in place (`held`), so releases serialise with each other and with DuckDB releases. The DP
  composition (`ledger.check_dp`) runs in the preflight (before Spark starts) and again under the lock
  before the source is read; the linked releases are checked on the would-be release after the policy
  gate (`check_linked`): its row key and released quasi-identifiers are gathered on the driver (Arrow:
  8 bytes a number, the text's bytes) and joined there, in DuckDB, with the stored values of the
  linked earlier releases (`ledger.union_classes`), as the DuckDB release joins them.
* The record. The entry and the values (those gathered columns, as Parquet) are written as temporary
  files of a private workspace and renamed into the ledger just before the release folder is renamed
  into place (`commit`); if that rename fails they are removed. So a failed or interrupted release is
  not recorded; a process killed in the instant between the two renames leaves the release recorded
  but not in place (counted against later releases, which is the safe side: `ledger forget` removes
  it).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from ..release.ledger import Composer, Ledger, LedgerError, fingerprint, fingerprint_query, redrawn
from ..release.plan import RELEASED, ROW_KEY, source_attach, source_relation
from ..release.spec import Spec, SpecError
from ..workspace import Workspace
from .paths import local_path

_FINGERPRINTS: dict[tuple, tuple[str, list[tuple[str, str]]]] = {}  # source state -> (fingerprint, columns)


def _local_files(where) -> list[str] | None:
    """The source's file patterns as paths of this machine, or None if one is not on it."""
    paths = [local_path(f) for f in where.files]
    return None if any(p is None for p in paths) else paths


def _state(con, spec: Spec, files: list[str] | None) -> tuple:
    """What identifies the source's content on disk: its files, sizes, modification times and inodes."""
    if spec.source.database is not None:
        matched = [str(spec.source.database)]
    else:
        matched = sorted({r[0] for p in files for r in con.execute("SELECT file FROM glob(?)", [p]).fetchall()})
    stats = []
    for f in matched:
        info = os.stat(f)
        stats.append((f, info.st_size, info.st_mtime_ns, info.st_ino))
    return (spec.source.format, spec.source.schema, spec.source.table, tuple(files or ()), tuple(stats))


def local_fingerprint(spec: Spec, where) -> tuple[str, list[tuple[str, str]]] | None:
    """(fingerprint, the source's columns as DuckDB reads them) of a source on this machine, by DuckDB in
    the driver as the DuckDB release computes it; None for a source the driver does not read (then the
    executors fingerprint it as Spark reads it: `spark_fingerprint`), a CSV file DuckDB cannot parse
    whole included."""
    import duckdb

    files = None if spec.source.database is not None else _local_files(where)
    if spec.source.database is None and files is None:
        return None
    con = duckdb.connect(config={"temp_directory": ""})  # a streaming aggregate: nothing spills, nothing is written
    try:
        key = _state(con, spec, files)
        if key not in _FINGERPRINTS:
            if spec.source.database is not None:
                con.execute(source_attach(spec).sql(dialect="duckdb"))
            relation = source_relation(spec, None if files is None else tuple(files))
            from sqlglot import exp

            described = con.execute(exp.Describe(this=exp.select(exp.Star()).from_(relation))
                                    .sql(dialect="duckdb")).fetchall()
            columns = [(r[0], r[1]) for r in described]
            _FINGERPRINTS[key] = (fingerprint(con, relation, columns), columns)
    except duckdb.Error:
        return None
    except OSError as e:
        raise SpecError(f"{spec.name}: source: {e}") from None
    finally:
        con.close()
    return _FINGERPRINTS[key]


def spark_fingerprint(df, source_columns: list[tuple[str, str]]) -> str:
    """The fingerprint of the records of `df` (columns `source_columns`, with their DuckDB types), computed
    in the executors: per partition, DuckDB's `fingerprint_query` on its Arrow batches; the sums added
    here, as `ledger.fingerprint` adds them."""
    import hashlib
    import json

    from sqlglot import exp

    from ..release.ledger import FINGERPRINT_VERSION
    from .ordering import qcol

    query = fingerprint_query(exp.Table(this=exp.to_identifier("__sdc_batch", quoted=True)), source_columns).sql(dialect="duckdb")

    def partial(batches):
        import duckdb
        import pyarrow as pa

        con = duckdb.connect(config={"threads": 1, "temp_directory": ""})
        n = lo = hi = 0
        try:
            for batch in batches:
                con.register("__sdc_batch", pa.Table.from_batches([batch]))
                rows, a, b = con.execute(query).fetchall()[0]
                n, lo, hi = n + int(rows), lo + int(a or 0), hi + int(b or 0)
                con.unregister("__sdc_batch")
        finally:
            con.close()
        yield pa.RecordBatch.from_pydict({"n": [n], "lo": [str(lo)], "hi": [str(hi)]})

    names = [n for n, _ in source_columns]
    parts = df.select(*(qcol(n) for n in names)).mapInArrow(partial, "n long, lo string, hi string").collect()
    rows = sum(int(p["n"]) for p in parts)
    summary = {"version": FINGERPRINT_VERSION, "rows": rows, "columns": sorted(names),
               "sum": [sum(int(p["lo"]) for p in parts) % 2 ** 64, sum(int(p["hi"]) for p in parts) % 2 ** 64]}
    return hashlib.sha256(json.dumps(summary, sort_keys=True).encode()).hexdigest()[:32]


def preflight_check(spec: Spec, where, ledger_path=None) -> None:
    """The DP composition against the ledger before Spark starts (a LedgerRefusal: exit 3), for a source
    this machine reads; the release checks it again under the ledger's lock."""
    found = local_fingerprint(spec, where)
    if found is not None:
        Composer(_book(spec, ledger_path), spec).known(found[0], found[1])


def _book(spec: Spec, ledger_path) -> Ledger:
    return Ledger(ledger_path if ledger_path is not None else spec.ledger.path)


class SparkLedger:
    """One Spark release's use of the ledger (see the module): `held` around the release, `source` once
    the source is read, `check_linked` on the would-be release, `commit` to put it in place."""

    def __init__(self, spec: Spec, where, ledger_path=None, *, source_given: bool = False):
        self.spec, self.where, self.source_given = spec, where, source_given
        self.book = _book(spec, ledger_path)
        self.composer = Composer(self.book, spec)
        self.workspace: Workspace | None = None
        self._con = None
        self._checked: str | None = None  # the fingerprint the DP composition was checked for

    @property
    def notes(self) -> list[str]:
        return self.composer.notes

    @property
    def warnings(self) -> list[str]:
        return self.composer.warnings

    def redraws(self) -> bool:
        """Whether masking the source again would release other values (a rule with a seed parameter and
        no seed: its noise is drawn afresh): then the values the ledger keeps must be read from the
        persisted masked records, not from a second masking."""
        return any(redrawn(rule) for rule in self.spec.masked())

    @contextmanager
    def held(self):
        """The ledger's lock and a private workspace for its files, for the whole release; the DP
        composition checked first, for a source this machine reads."""
        import duckdb

        with self.book.locked(), Workspace(self.spec.resources.temp_directory) as workspace:
            self.workspace = workspace
            self._con = duckdb.connect(config={"temp_directory": str(workspace.spill), **self.spec.resources.config()})
            try:
                if not self.source_given:
                    self._local()
                yield self
            finally:
                self._con.close()
                self._con = self.workspace = None

    def _local(self) -> bool:
        found = local_fingerprint(self.spec, self.where)
        if found is None:
            return False
        if found[0] != self._checked:
            self.composer.notes.clear()
            self.composer.known(found[0], found[1])
            self._checked = found[0]
        return True

    def source(self, df, source_columns) -> None:
        """The source as Spark read it: fingerprinted in the executors when the driver cannot read it,
        else checked again (the files unchanged since their fingerprint, or fingerprinted again)."""
        if self.source_given or not self._local():
            fp = spark_fingerprint(df, source_columns)
            if fp != self._checked:
                self.composer.known(fp, source_columns)
                self._checked = fp
        self.composer.source_columns = source_columns

    def check_linked(self, released) -> None:
        """Gather the would-be release's row key and released quasi-identifiers on the driver (as RELEASED
        of the ledger's DuckDB connection) and check the linked earlier releases on them (a
        LedgerRefusal, or notes and warnings)."""
        from ..release.ledger import released_qi_columns
        from .ordering import qcol

        mine = released_qi_columns(self.spec, self.composer.source_columns)
        values = released.select(qcol(ROW_KEY), *(qcol(c) for c in mine)).toArrow()
        self._con.register(RELEASED, values)
        try:
            self.composer._check_linked(self._con)
        except LedgerError as e:  # a user error (exit 2), not a failed Spark job
            raise SpecError(str(e)) from None

    def commit(self, put, release_id: str, created_at: datetime, facts, rows: int) -> None:
        """Write the entry and the values, rename them into the ledger, then `put()` the release in place;
        if `put` raises OSError (the previous release is untouched), remove them again."""
        recorded = self.composer.write(self._con, self.workspace, release_id, created_at, facts, rows)
        self.workspace.commit(recorded)
        try:
            put()
        except OSError:
            for _, path in recorded:
                Path(path).unlink(missing_ok=True)
            raise


__all__ = ["SparkLedger", "local_fingerprint", "preflight_check", "spark_fingerprint"]
