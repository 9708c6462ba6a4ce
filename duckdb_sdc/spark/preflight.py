"""What a Spark release checks before Spark starts (no pyspark, no JVM here): the whole spec at once.

`check(spec, master)` returns the notes to print and raises one SpecError naming every refusal:

* keys that mean nothing for Parquet files are accepted with a note, where ignoring them releases
  nothing the DuckDB release would not: `output.storage_version` (Parquet has no DuckDB storage
  version; every DuckDB version reads the files) and `output.view_without_key` (Parquet holds no
  views; the DuckDB release's file holds the table with the key too, and its view is no access
  control either);
* keys a Spark release cannot honour (sampling weights, pooled small strata, cell protection, DP-UM's
  centroids table, a global recoding (duckdb_sdc.recodings), a table name Spark would hide), and a seed
  without reproducible_noise (the DuckDB release's rule and message, `run.refuse_unopted_seeds`);
* locations: the release folder and the source files must be where every executor reads and writes.
  With a master that is not local, a path without a scheme is a path on the machine that runs the
  driver, and is refused, naming the key; `file:///...` says that it is a shared mount, `hdfs://`,
  `s3a://` and the other schemes Spark reads are taken as they are written;
* the target: an existing file, or a folder that is not a previous Spark release of the same table
  (a folder holding `release_manifest/` and `<table>/` and nothing else), is never replaced; nor is
  anything at `output.linkage` but a previous linkage folder (`release_linkage/` alone), which must
  be apart from the release folder and the source;
* the source (local files or a DuckDB table): it exists, and its columns meet the rules (every column
  declared, the rules' columns present and numeric: `release.plan.resolve` on the columns DuckDB reads
  there; a CSV source's column names only, as Spark infers its types itself).
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..release.run import refuse_unopted_seeds
from .paths import is_uri, local_path
from ..release.plan import LINKAGE_TABLE
from ..release.spec import MANIFEST_TABLE, Spec, SpecError

TABLE_FOLDER_FORBIDDEN = re.compile(r"[/\\]|^[._]")


def is_local_master(master: str | None) -> bool:
    return master is None or master.startswith("local")


@dataclass
class Locations:
    """Where a Spark release reads and writes, as Spark is given them: the spec's text for a URI (the
    spec's paths resolve relative to its folder, which would mangle hdfs://...), else the resolved
    path."""
    output: str
    files: tuple[str, ...]
    linkage: str | None = None


def _written(spec: Spec, key: str, path) -> str:
    text = (spec.text.get("output") or {}).get(key)
    out = text if isinstance(text, str) and is_uri(text) else str(path)
    out = out if is_uri(out) else str(Path(out).expanduser().resolve())
    return out.rstrip("/") or "/"


def locations(spec: Spec, target=None) -> Locations:
    if target is None:
        output = _written(spec, "database", spec.output.database)
    else:
        output = str(target) if is_uri(str(target)) else str(Path(target).expanduser().resolve())
        output = output.rstrip("/") or "/"
    linkage = None if spec.output.linkage is None else _written(spec, "linkage", spec.output.linkage)
    written = (spec.text.get("source") or {}).get("files")
    written = [written] if isinstance(written, str) else list(written or [])
    files = []
    for i, f in enumerate(spec.source.files):
        raw = written[i] if i < len(written) and isinstance(written[i], str) else f
        files.append(raw if is_uri(raw) else f)
    return Locations(output, tuple(files), linkage)


def previous_release_problem(names: set[str], table: str) -> str | None:
    """Why a folder holding `names` is not a previous Spark release of `table` (None if it is one)."""
    if MANIFEST_TABLE not in names:
        return "it is not a Spark release (no release_manifest folder), and a release never replaces other files"
    extra = sorted(names - {MANIFEST_TABLE, table})
    if extra:
        return (f"it holds {', '.join(map(repr, extra[:5]))}{' ...' if len(extra) > 5 else ''} besides a release "
                f"of table {table!r}, and a release never replaces other files")
    return None


@dataclass
class Preflight:
    notes: list[str] = field(default_factory=list)
    locations: Locations | None = None


def _key_problems(spec: Spec) -> list[str]:
    out = []
    if spec.source.weight is not None:
        out.append("source.weight: a Spark release does not mask with sampling weights; remove the key, or run the "
                   "release with DuckDB")
    if spec.small_strata != "refuse":
        out.append("masking.small_strata: a Spark release does not pool small strata (it refuses a stratum too small "
                   "for its method, naming it); remove the key, or run the release with DuckDB")
    for rule in spec.masked():
        if rule.cells is not None:
            out.append(f"{rule.where}.cells: a Spark release does not protect cells (suppression or merging of "
                       "sensitive cells); remove the setting, or run the release with DuckDB")
        if rule.centroids_table is not None:
            out.append(f"{rule.where}.centroids_table: a Spark release does not write DP-UM's unlinked centroids "
                       "table; remove the setting, or run the release with DuckDB")
    for rule in spec.rules.values():
        if rule.action == "recode":
            out.append(f"{rule.where}: method {rule.recoding.name} (a global recoding) runs on the DuckDB engine only; "
                       "run the release with DuckDB")
    if TABLE_FOLDER_FORBIDDEN.search(spec.output.table):
        out.append(f"output.table: {spec.output.table!r} names the table's folder in a Spark release: it cannot "
                   "contain a slash or start with '.' or '_'")
    try:  # the DuckDB release's rule and words (its first seeded rule)
        refuse_unopted_seeds(spec)
    except SpecError as e:
        out.append(_unprefixed(spec, e))
    return out


def _notes(spec: Spec) -> list[str]:
    out = []
    if "storage_version" in (spec.text.get("output") or {}):
        out.append("output.storage_version is ignored: a Spark release writes Parquet files, which have no DuckDB "
                   "storage version (every DuckDB version reads them)")
    if spec.output.view_without_key is not None:
        key = spec.source.key
        kept = key is not None and spec.key_released()
        out.append(f"output.view_without_key is ignored: a Spark release writes Parquet files, which hold no views"
                   + (f"; the table keeps the key column {key!r}, as the DuckDB release's table does (release it "
                      "with \"drop\" if readers must not see it)" if kept else ""))
    return out


def _location_problems(spec: Spec, where: Locations, master: str | None, source_given: bool) -> list[str]:
    if is_local_master(master):
        return []
    out = []
    shared = ("give a location every executor reads and writes: a shared mount written as file:///..., "
              "hdfs://..., s3a://...")
    for key, location in (("output.database", where.output), ("output.linkage", where.linkage)):
        if location is not None and not is_uri(location):
            out.append(f"{key}: {location!r} is a path on the machine of the driver, but master {master!r} runs "
                       f"executors elsewhere, which would write the release's files on their own disks; {shared}")
    if not source_given and spec.source.database is None:
        local = [f for f in where.files if not is_uri(f)]
        if local:
            out.append(f"source.files: {local[0]!r} is a path on the machine of the driver, but master {master!r} runs "
                       f"executors elsewhere, which cannot read it; {shared}")
    return out


def _inside(a: str, b: str) -> bool:
    """Whether location a is b or inside it."""
    return a == b or a.startswith(b.rstrip("/") + "/")


def _target_problems(spec: Spec, where: Locations) -> list[str]:
    out = []
    path = local_path(where.output)
    if path is not None and os.path.lexists(path):
        if not os.path.isdir(path):
            out.append(f"output.database: {where.output!r} is a file; a Spark release writes a folder (and never "
                       "replaces a file)")
        else:
            problem = previous_release_problem(set(os.listdir(path)), spec.output.table)
            if problem is not None:
                out.append(f"output.database: {where.output!r} cannot be replaced: {problem}")
    if where.linkage is not None:
        if _inside(where.linkage, where.output) or _inside(where.output, where.linkage):
            out.append(f"output.linkage: {where.linkage!r} is inside the release folder or holds it; the private "
                       "linkage must be kept apart from the release that is handed out")
        sources = [str(spec.source.database)] if spec.source.database is not None else list(where.files)
        if any(_inside(s, where.linkage) for s in sources):
            out.append(f"output.linkage: {where.linkage!r} holds the source; a release never replaces it")
        path = local_path(where.linkage)
        if path is not None and os.path.lexists(path):
            names = set(os.listdir(path)) if os.path.isdir(path) else None
            if names != {LINKAGE_TABLE}:
                out.append(f"output.linkage: {where.linkage!r} cannot be replaced: it is not a Spark linkage folder "
                           f"(one folder {LINKAGE_TABLE}/ and nothing else), and a release never replaces other files")
    return out


def describe_source(spec: Spec, files: tuple[str, ...]) -> list[tuple[str, str]] | None:
    """(column, DuckDB type) of a local source, as DuckDB reads it; None for a source DuckDB does not
    read here (a URI). A CSV source's types are Spark's to infer: its columns come back as DOUBLE, so
    that only their names are checked here."""
    import duckdb

    con = duckdb.connect()
    try:
        if spec.source.database is not None:
            con.execute("ATTACH ? AS src (READ_ONLY)", [str(spec.source.database)])
            q = '"' + spec.source.schema.replace('"', '""') + '"."' + spec.source.table.replace('"', '""') + '"'
            return [(r[0], r[1]) for r in con.execute(f"DESCRIBE src.{q}").fetchall()]
        if any(is_uri(f) for f in files):
            return None
        if spec.source.format == "parquet":
            return [(r[0], r[1]) for r in con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [list(files)]).fetchall()]
        return [(r[0], "DOUBLE") for r in con.execute("DESCRIBE SELECT * FROM read_csv(?, header = true)",
                                                      [list(files)]).fetchall()]
    except duckdb.Error as e:
        raise SpecError(f"{spec.name}: source: {e}") from None
    finally:
        con.close()


def _source_problems(spec: Spec, where: Locations) -> list[str]:
    from ..release.plan import resolve

    if spec.source.database is not None:
        if not spec.source.database.is_file():
            return [f"source.database: no such file {str(spec.source.database)!r}"]
    else:
        missing = [f for f in where.files if not is_uri(f) and not glob.glob(f)]
        if missing:
            return [f"source.files: no file matches {missing[0]!r}"]
    try:
        columns = describe_source(spec, where.files)
        if columns is not None:
            resolve(spec, columns)
    except SpecError as e:
        return [_unprefixed(spec, e)]
    return []


def _unprefixed(spec: Spec, error: SpecError) -> str:
    text = str(error)
    return text[len(spec.name) + 2:] if text.startswith(f"{spec.name}: ") else text


def check(spec: Spec, master: str | None = None, *, source_given: bool = False, target=None,
          ledger_path=None) -> Preflight:
    """Check everything about `spec` that needs no Spark; return the notes to print, or raise one
    SpecError naming every refusal (one per line after the first when there are several).
    master: the Spark master (None: local); source_given: the caller passes the source (a DataFrame or
    a Spark table), so the spec's [source] is not read; target: the release folder instead of
    output.database; ledger_path: the ledger (default: the spec's [ledger] path), which the DP
    composition of a source this machine reads is checked against (`spark.ledger.preflight_check`: a
    LedgerRefusal, exit 3)."""
    where = locations(spec, target)
    problems = _key_problems(spec) + _location_problems(spec, where, master, source_given)
    problems += _target_problems(spec, where)
    if not source_given:
        problems += _source_problems(spec, where)
    if len(problems) == 1:
        raise SpecError(f"{spec.name}: {problems[0]}")
    if problems:
        raise SpecError(f"{spec.name}: a Spark release refuses this spec, for {len(problems)} reasons:\n  "
                        + "\n  ".join(problems))
    if not source_given:
        from .ledger import preflight_check

        preflight_check(spec, where, ledger_path)
    return Preflight(notes=_notes(spec), locations=where)


__all__ = ["Locations", "Preflight", "check", "describe_source", "is_local_master", "is_uri", "locations",
           "previous_release_problem"]
