"""The SQL rows of a one-column masking method, derived from its record (duckdb_sdc.masking): the list
function `<name>(xs, params...)` and its table form `<name>_table(tbl, col, params..., strata...)`.

A family module adds these two rows for each of its methods (with its own words: the doc and the
example) and whatever else it offers (labels, sizes). The parameters, the UDF that calls
`masking.mask`, the randomness flag and the table form's body all come from the record: a seeded
method's UDF is volatile (DuckDB never folds or reuses a call), and its table form draws stratum i of
column col with `stratum_seed(seed, col, i)`, the seed a release uses."""

from __future__ import annotations

import pyarrow as pa

from .. import masking
from .._validate import fail
from ..masking import MaskingMethod
from ..params import COL_PARAM, POOLING_ARGS, STRATA_PARAMS, TBL_PARAM, XS_PARAM
from ._arrow import list_udf
from .function import Contract, SqlFunction, Udf


def masked(name: str):
    """A UDF compute function that masks a list with method `name` (`masking.mask`)."""

    def compute(values, *params):
        return masking.mask(name, values, params)

    return compute


def list_row(m: MaskingMethod, *, group: str, doc: str, example: str) -> SqlFunction:
    """The list function of one-column method `m`: xs DOUBLE[] and its parameters, DOUBLE[] aligned with xs;
    its contract's scale and expected failures are the record's."""
    n = len(m.params)
    return SqlFunction(
        name=m.name, kind="scalar", params=(XS_PARAM, *m.params), returns="DOUBLE[]", group=group, doc=doc,
        example=example,
        udf=Udf(list_udf(m.name, masked(m.name), pa.float64(), n), ("DOUBLE[]",) + ("VARCHAR",) * n, "DOUBLE[]",
                side_effects=m.seeded),
        scale=m.scale,
        contract=Contract({"xs": "original"}, expected_failures=m.expected_failures_of(m.name)),
    )


def table_row(m: MaskingMethod, *, group: str, doc: str, example: str) -> SqlFunction:
    """The table form of one-column method `m`: the rows of tbl with col masked, per stratum; its
    contract's scale and expected failures are the record's."""
    args = ", ".join(f"{p.name}::VARCHAR" for p in m.params if p.name != "seed")
    seeded = ", seeded := true, seed := seed" if m.seeded else ""
    return SqlFunction(
        name=f"{m.name}_table", kind="table", params=(TBL_PARAM, COL_PARAM, *m.params, *STRATA_PARAMS),
        returns="table", group=group, doc=doc, example=example,
        body=f"FROM query(__sdc_mask_column_sql('{m.name}', tbl, col, [{args}], strata{seeded}, {POOLING_ARGS}))",
        scale=m.scale,
        contract=Contract({"col": "original"}, result="rows",
                          expected_failures=m.expected_failures_of(f"{m.name}_table")),
    )


DECLARED_GROUP = "Masking methods declared by their records"


def declared_rows(written: set[str]) -> list[SqlFunction]:
    """The list function and table form of every registered one-column method that no family module
    writes rows for (`written`: the names the families write), from the record's doc and example: how
    a plug-in method (duckdb_sdc.masking.load_entry_points) gets its SQL, and so its release rule. A
    records method, or a record without doc and example, has no rows to derive: an error naming it."""
    rows = []
    for m in masking.METHODS.values():
        if m.name in written:
            continue
        if m.data != masking.COLUMN or not m.doc or not m.example:
            raise fail("masking.register", f"method {m.name!r} has no SQL rows: a one-column record "
                                                   "with doc and example gets them derived; a records method "
                                                   "needs its family module's rows")
        required = ", ".join(p.valid for p in m.params if p.default is None)
        rows += [list_row(m, group=DECLARED_GROUP, doc=m.doc, example=m.example),
                 table_row(m, group=DECLARED_GROUP,
                           doc=(f"Table form of {m.name}: the rows of tbl with column col replaced by its masked "
                                "values (same column names and order; the column becomes DOUBLE), each stratum "
                                "masked separately. Rows come back in no particular order."),
                           example=f"SELECT * FROM {m.name}_table('people', 'income'"
                                   f"{', ' + required if required else ''}, strata := 'region')")]
    return rows


__all__ = ["DECLARED_GROUP", "declared_rows", "list_row", "masked", "table_row"]
