"""The error of a table function given a table that does not exist, worded as the function's own.

DuckDB binds a table function's table name (a catalog lookup, then its replacement scans) before any
SQL of the function runs, so the function cannot refuse it itself: the error is DuckDB's Catalog
Error ("Table with name no_such_table does not exist! Did you mean "pg_tables"?"), which names neither
the function nor its parameter (docs/contributing-parameters.md). Where duckdb_sdc runs the statement
itself (`duckdb-sdc sql`, and `reword` for a program that catches the error), the statement is at
hand: `reword` parses it with sqlglot, finds the calls of registered table functions, and says which
parameter of which call names the missing table:

    mdav_round_table: tbl = 'no_such_table' names no table or view (Catalog Error: Table with name
    no_such_table does not exist)

A statement that cannot be parsed, or whose missing table no table parameter names (a plain
`FROM no_such_table`), keeps DuckDB's message.
"""

from __future__ import annotations

import re

import sqlglot
import sqlglot.expressions as exp

from ..params import Name
from .registry import REGISTRY

# DuckDB's wording of a missing table (or of the schema of a qualified name), DuckDB 1.x and 2.x
_MISSING = re.compile(r'Catalog Error: Table with name "?(?P<name>[^"!\s]+)"? does not exist[^!\n]*')


def _table_functions() -> dict[str, tuple[list[str], set[str]]]:
    """Each registered table function that takes a table: its parameters in order (positional arguments
    are matched by it) and those that name a table."""
    found = {}
    for row in REGISTRY:
        tables = {p.name for p in row.params if isinstance(p.kind, Name) and p.kind.of == "table"}
        if row.kind == "table" and tables:
            found[row.name] = ([p.name for p in row.params], tables)
    return found


def _arguments(call, names: list[str]):
    """(parameter, literal text) of each string argument of a parsed call, positional or named."""
    for i, arg in enumerate(call.expressions):
        if isinstance(arg, (exp.PropertyEQ, exp.Kwarg)):
            param, value = arg.this.name, arg.expression
        elif i < len(names):
            param, value = names[i], arg
        else:
            continue
        if isinstance(value, exp.Literal) and value.is_string:
            yield param, value.this


def reword(message: str, query: str) -> str | None:
    """The message naming the function and the parameter, when `message` is DuckDB's error for a
    missing table that a table parameter of a registered table function names in `query`; else None."""
    found = _MISSING.search(message)
    if found is None:
        return None
    missing = found.group("name").lower()
    try:
        tree = sqlglot.parse(query, read="duckdb")
    except sqlglot.errors.SqlglotError:  # a statement sqlglot cannot read: DuckDB's message stands
        return None
    functions = _table_functions()
    for statement in filter(None, tree):
        for call in statement.find_all(exp.Anonymous):
            name = call.name.lower()
            if name not in functions:
                continue
            names, tables = functions[name]
            for param, literal in _arguments(call, names):
                if param in tables and literal.lower() == missing:
                    return f"{name}: {param} = '{literal}' names no table or view ({found.group(0).strip().rstrip('.')})"
    return None
