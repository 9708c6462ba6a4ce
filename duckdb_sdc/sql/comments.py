"""Descriptions of the installed functions, visible in `duckdb_functions()`.

DuckDB 2.0 keeps a comment on a macro, TEMP macros included (`COMMENT ON MACRO f IS '...'`, and
`COMMENT ON MACRO TABLE f IS '...'` for a table macro); it shows in the `comment` column of
`duckdb_functions()` (the `description` column is reserved to DuckDB's built-in functions). Every
public name of duckdb_sdc is such a macro, so each gets its registry doc, the same text the function
reference shows. DuckDB refuses comments on Python UDFs ("Can not comment on System Catalog entries"):
those are the internal `__sdc_<name>` functions the macros call, which users never call directly.

`describe(con)` is called by `register(con)` after the macros exist; it is one statement for all of
them, as cheap as creating the macros.
"""

from __future__ import annotations

from .registry import REGISTRY, SqlFunction


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def comment_sql(row: SqlFunction) -> str:
    """The COMMENT statement that gives `row`'s macro its registry doc."""
    kind = "MACRO TABLE" if row.kind == "table" else "MACRO"
    return f"COMMENT ON {kind} {row.name} IS {_literal(' '.join(row.doc.split()))}"


def describe(con, rows: tuple[SqlFunction, ...] = REGISTRY) -> None:
    """Comment every public macro of `rows` on `con` (they must be installed)."""
    con.execute(";\n".join(comment_sql(row) for row in rows))
