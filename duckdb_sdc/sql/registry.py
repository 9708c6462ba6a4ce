"""The one table of every SQL function and macro duckdb_sdc installs.

Each family of methods has a module in this package with a `FUNCTIONS` list of `SqlFunction` rows;
`REGISTRY` concatenates them. `register(con)` walks it, the README's function reference is generated
from it (`python -m duckdb_sdc.sql.docs`), the release spec's vocabulary is derived from it
(`duckdb_sdc.release.methods`) and the contract tests (tests/test_contract.py) run over it.

Every parameter is a `duckdb_sdc.params.Param`: a name, a *kind* (group size, seed, column list, ...;
the kind gives the SQL type, the check, the doc text and the invalid values the contract tests try)
and a default. docs/contributing-parameters.md explains how to add a function.

Three kinds of rows:
* a list function backed by a Python UDF: `udf` is set; the public name is a TEMP macro that checks
  the list's type and calls the internal UDF `__sdc_<name>` (macros give defaults and named
  parameters, which UDFs lack);
* a macro whose body is generated here (`body`), for example the table form of a list function; a
  row with both `udf` and `body` installs the UDF `__sdc_<name>` and the macro `body`, which calls it
  (the Python-backed aggregate macros of the measures);
* a pure-SQL macro defined in a file under `sql/` (`source`), usable from a plain DuckDB shell.

Every UDF takes as its first argument the name of the SQL function to report in errors: the public
macro passes its own name, a table form passes the table form's name. The UDF reports every
SdcError of the numpy layer under that name (`SdcError.renamed`), so no numpy function needs to know
which SQL function called it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..params import Param

# how the result changes when the data (and the parameters whose kind `scales`) are multiplied by
# s > 0: the power p of s^p, e.g. 0 (unchanged: labels, scale-free measures), 1 (the data's unit),
# 2 (squared units); a dict of powers per field of a STRUCT result; None when it does not apply
Scale = int | dict | None


@dataclass(frozen=True)
class Udf:
    """A vectorised (Arrow) Python UDF. `types` are DuckDB type names of its parameters after the
    reporting name (which is VARCHAR)."""

    fn: Callable
    types: tuple[str, ...]
    returns: str
    side_effects: bool = False  # True for random functions, so DuckDB never folds or reuses a call


@dataclass(frozen=True)
class SqlFunction:
    name: str
    kind: str  # 'scalar', 'table' or 'aggregate': how a user calls it
    params: tuple[Param, ...]
    returns: str
    doc: str
    udf: Udf | None = None
    body: str | None = None
    source: str | None = None
    example: str = ""
    group: str = ""
    scale: Scale = None  # see Scale; the contract suite's scale test reads it

    @property
    def udf_name(self) -> str:
        return f"__sdc_{self.name}"

    def signature(self) -> str:
        parts = []
        for p in self.params:
            parts.append(f"{p.name} {p.type}" if p.default is None else f"{p.name} := {p.default}")
        return f"{self.name}({', '.join(parts)})"

    def macro_sql(self) -> str:
        """CREATE statement of the public macro (for rows with `udf` or `body`)."""
        params = ", ".join(p.name if p.default is None else f"{p.name} := {p.default}" for p in self.params)
        if self.udf is not None and self.body is None:
            first, *rest = self.params
            args = [f"'{self.name}'", f"__sdc_numeric_list({first.name}, '{self.name}')"]
            args += [f"{p.name}::VARCHAR" for p in rest]
            body = f"{self.udf_name}({', '.join(args)})"
            return f"CREATE OR REPLACE TEMP MACRO {self.name}({params}) AS {body}"
        table = " TABLE" if self.kind == "table" else ""
        return f"CREATE OR REPLACE TEMP MACRO {self.name}({params}) AS{table} {self.body}"


def _collect() -> tuple[SqlFunction, ...]:
    from . import base_rounding, boxes, datasets, discretisation, dp, measures, microaggregation, multivariate, perturbation
    from . import keys, recoding, weights

    rows: list[SqlFunction] = []
    for module in (microaggregation, discretisation, base_rounding, perturbation, multivariate, dp, measures, boxes,
                   datasets, weights, keys, recoding):
        rows.extend(module.FUNCTIONS)
    names = [r.name for r in rows]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise RuntimeError(f"duckdb_sdc registry: duplicate SQL names {sorted(duplicates)}")
    return tuple(rows)


REGISTRY: tuple[SqlFunction, ...] = _collect()
