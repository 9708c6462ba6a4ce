"""The one table of every SQL function and macro duckdb_sdc installs.

Each family of methods has a module in this package with a `FUNCTIONS` list of `SqlFunction` rows
(declared with the types of `function.py`, which is all a family imports of the registry's);
`REGISTRY` concatenates them. `register(con)` walks it, the README's function reference is generated
from it (`python -m duckdb_sdc.sql.docs`), the release spec's vocabulary is derived from it
(`duckdb_sdc.release.methods`) and the contract tests (tests/sql/test_contract.py) run over it.

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

from . import base_rounding, boxes, datasets, discretisation, dp, keys, measures, microaggregation, multivariate
from . import perturbation, recoding, weights
from ._arrow import DATA_PARAMS
from .function import READS, RESULTS, Contract, Param, Scale, SqlFunction, Udf
from .masking_rows import declared_rows

__all__ = ["READS", "REGISTRY", "RESULTS", "Contract", "Param", "Scale", "SqlFunction", "Udf"]


def _collect() -> tuple[SqlFunction, ...]:
    rows: list[SqlFunction] = []
    for module in (microaggregation, discretisation, base_rounding, perturbation, multivariate, dp, measures, boxes,
                   datasets, weights, keys, recoding):
        rows.extend(module.FUNCTIONS)
    rows.extend(declared_rows({r.name for r in rows}))  # the rows of the methods declared by their records alone
    names = [r.name for r in rows]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise RuntimeError(f"duckdb_sdc registry: duplicate SQL names {sorted(duplicates)}")
    return tuple(rows)


REGISTRY: tuple[SqlFunction, ...] = _collect()

# the plumbing's messages name a table form's data parameter (`_arrow.data_param`): the one its
# contract reads as 'original'
for _row in REGISTRY:
    if _row.kind == "table" and _row.contract is not None:
        _param = next((p for p, role in _row.contract.reads.items() if role == "original"), None)
        if _param is not None:
            DATA_PARAMS[_row.name] = _param
