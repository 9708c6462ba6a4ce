"""The SQL binding: `register(con)` installs every function and macro of `REGISTRY` on a DuckDB
connection.

What DuckDB shares and what it does not (measured on DuckDB 2.0):
* Python UDFs live in the database instance's catalog, so every connection and cursor to the same
  database sees them; they are registered once per database instance (internal names `__sdc_*`).
* The public names are TEMP macros, which belong to one connection: they are (re)created on every
  call, so registering twice is harmless and a cursor only needs `register(cursor)`. Nothing is ever
  written into the database file itself.
* DuckDB keeps only a borrowed reference to a UDF's Python callable, owned by the connection that
  registered it; closing that connection freed the callable, and a call from another connection to
  the same file then crashed the process. Every callable registered here is therefore kept alive
  for the life of the process (they hold no connection state), so such a call simply works.
"""

from __future__ import annotations

import threading
from importlib import resources
from pathlib import Path

import duckdb
import pyarrow as pa

from ..params import SEED, stratum_seed
from . import small_strata
from ._arrow import reported, reporting_name, single_array
from .comments import describe
from .function import Param, SqlFunction, Udf
from .prepare import prepare_in_background
from .registry import REGISTRY

__all__ = ["REGISTRY", "Param", "SqlFunction", "Udf", "connect", "register", "sql_files"]

_KEEP_ALIVE: list = []
_LOCK = threading.Lock()


def sql_files() -> list[tuple[str, str]]:
    """(file name, text) of the pure-SQL macro files, in installation order."""
    repo_dir = Path(__file__).resolve().parents[2] / "sql"
    if repo_dir.is_dir():
        paths = sorted(repo_dir.glob("*.sql"))
        return [(p.name, p.read_text()) for p in paths]
    pkg = resources.files("duckdb_sdc._sqlfiles")
    entries = sorted((e for e in pkg.iterdir() if e.name.endswith(".sql")), key=lambda e: e.name)
    return [(e.name, e.read_text()) for e in entries]


def _as_temp(text: str) -> str:
    return text.replace("CREATE OR REPLACE MACRO", "CREATE OR REPLACE TEMP MACRO")


def _stratum_seed(name, seed, column, stratum):
    """__sdc_stratum_seed(reporting name, seed as text, column, stratum number) -> BIGINT: the seed a
    table form gives a stratum's call (`params.stratum_seed`); NULL for NULL. Checks the seed."""
    func = reporting_name(name) or "stratum_seed"
    seeds, columns, strata = (single_array(a).to_pylist() for a in (seed, column, stratum))
    with reported(func):
        out = [stratum_seed(SEED.check(s, func, "seed"), c, i) for s, c, i in zip(seeds, columns, strata)]
    return pa.array(out, type=pa.int64())


# internal UDFs that are no function of the registry: name -> (callable, parameter types, return type)
_INTERNAL = {"__sdc_stratum_seed": (_stratum_seed, ("VARCHAR", "VARCHAR", "VARCHAR", "BIGINT"), "BIGINT"),
             "__sdc_pool_strata": (small_strata.pool_strata, small_strata.TYPES, small_strata.RETURNS)}


def _existing_udfs(con) -> set[str]:
    rows = con.execute(
        "SELECT function_name FROM duckdb_functions() "
        "WHERE function_type = 'scalar' AND starts_with(function_name, '__sdc_')"
    ).fetchall()
    return {r[0] for r in rows}


def register(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Install every duckdb_sdc function and macro on `con` and return `con`. Idempotent."""
    prepare_in_background()
    with _LOCK:
        existing = _existing_udfs(con)
        udfs = {row.udf_name: (row.udf.fn, ("VARCHAR",) + row.udf.types, row.udf.returns, row.udf.side_effects)
                for row in REGISTRY if row.udf is not None}
        udfs.update({name: (fn, types, returns, False) for name, (fn, types, returns) in _INTERNAL.items()})
        for name, (fn, types, returns, side_effects) in udfs.items():
            if name in existing:
                continue
            _KEEP_ALIVE.append(fn)
            con.create_function(
                name,
                fn,
                [duckdb.sqltype(t) for t in types],
                duckdb.sqltype(returns),
                type="arrow",
                null_handling="special",
                side_effects=side_effects,
            )
    for _, text in sql_files():
        con.execute(_as_temp(text))
    for row in REGISTRY:
        if row.source is None:
            con.execute(row.macro_sql())
    describe(con)
    return con


def connect(path: str | None = None, **config) -> duckdb.DuckDBPyConnection:
    """Open a DuckDB connection (in memory when path is None) and register everything on it."""
    con = duckdb.connect(path if path is not None else ":memory:", config=config)
    return register(con)
