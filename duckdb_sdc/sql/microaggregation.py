"""SQL rows for univariate microaggregation: <method>_round, <method>_labels, <method>_round_table."""

from __future__ import annotations

import pyarrow as pa

from .. import methods
from .arrow import list_udf
from .registry import Param, SqlFunction, Udf

GROUP = "Rounding by univariate microaggregation"

_DESCRIPTIONS = {
    "mdav": ("MDAV", "the canonical MDAV heuristic on one column (groups of k..2k-1 taken from the "
                     "two ends of the sorted values)"),
    "vmdav": ("V-MDAV", "V-MDAV (Solanas & Martinez-Balleste 2006): a group of k around the value "
                        "farthest from the centroid grows while the next value is nearer than gamma "
                        "times its distance to the rest"),
    "oma": ("optimal", "the optimal partition (Hansen & Mukherjee 2003): minimum within-group sum of "
                       "squares over groups of k..2k-1 consecutive sorted values"),
    "ranking": ("individual ranking", "individual ranking: groups of k consecutive sorted values, "
                                      "the last group takes the remainder"),
}

_XS = Param("xs", "DOUBLE[]", doc="the column as a list, e.g. list(income); any numeric list type")
_K = Param("k", "INTEGER or 'auto'",
           doc="minimum group size, 1 <= k <= number of non-NULL values, or 'auto' (Freedman-Diaconis)")
_GAMMA = Param("gamma", "DOUBLE", "0.2", doc="V-MDAV's extension factor, >= 0")
_REP = Param("representative", "VARCHAR", "'mean'", doc="'mean' or 'median' of the group")
_TBL = Param("tbl", "VARCHAR", doc="table or view name (may be qualified: 'schema.table')")
_COL = Param("col", "VARCHAR", doc="name of the column to mask")
_STRATA = Param("strata", "VARCHAR or VARCHAR[]", "NULL", doc="column(s) whose groups are masked separately")


def _round_compute(method: str):
    def compute(func, x, k, *rest):
        *gamma, representative = rest
        opts = {"gamma": gamma[0]} if gamma else {}
        return methods.microaggregate(x, k, method, representative, _func=func, **opts)

    return compute


def _labels_compute(method: str):
    def compute(func, x, k, *gamma):
        opts = {"gamma": gamma[0]} if gamma else {}
        return methods.partition(x, k, method, _func=func, **opts)

    return compute


def _rows(method: str) -> list[SqlFunction]:
    title, what = _DESCRIPTIONS[method]
    extra = (_GAMMA,) if method == "vmdav" else ()
    round_name, labels_name, table_name = f"{method}_round", f"{method}_labels", f"{method}_round_table"
    round_params = (_XS, _K, *extra, _REP)
    round_fn = SqlFunction(
        name=round_name,
        kind="scalar",
        params=round_params,
        returns="DOUBLE[]",
        group=GROUP,
        doc=(f"Rounds a column by {title} microaggregation: {what}. Every value is replaced by its "
             "group's mean (or median); the result is aligned with xs, NULLs stay NULL in place and "
             "join no group. Use it with GROUP BY to mask strata separately."),
        example=(f"SELECT region, {round_name}(list(income), 5) FROM people GROUP BY region"),
        udf=Udf(list_udf(round_name, _round_compute(method), pa.float64(), len(round_params) - 1),
                ("DOUBLE[]",) + ("VARCHAR",) * (len(round_params) - 1), "DOUBLE[]"),
    )
    labels_fn = SqlFunction(
        name=labels_name,
        kind="scalar",
        params=(_XS, _K, *extra),
        returns="BIGINT[]",
        group=GROUP,
        doc=(f"The groups of {round_name}: group numbers 0..g-1 aligned with xs, numbered in increasing "
             "order of the groups' values; NULL where xs is NULL."),
        example=f"SELECT {labels_name}([5, 1, 9, 2, 8, 3], 3)  -- [1, 0, 1, 0, 1, 0]",
        udf=Udf(list_udf(labels_name, _labels_compute(method), pa.int64(), 1 + len(extra)),
                ("DOUBLE[]",) + ("VARCHAR",) * (1 + len(extra)), "BIGINT[]"),
    )
    arg_list = ", ".join(f"{p.name}::VARCHAR" for p in (_K, *extra, _REP))
    table_fn = SqlFunction(
        name=table_name,
        kind="table",
        params=(_TBL, _COL, _K, *extra, _REP, _STRATA),
        returns="table",
        group=GROUP,
        doc=(f"Table form of {round_name}: the rows of tbl with column col replaced by its masked "
             "values (same column names and order; the masked column becomes DOUBLE), optionally "
             "masking each stratum separately. Rows come back in no particular order."),
        example=f"SELECT * FROM {table_name}('people', 'income', 5, strata := 'region')",
        body=(f"FROM query(__sdc_mask_column_sql('{round_name}', tbl, col, [{arg_list}], strata))"),
    )
    return [round_fn, labels_fn, table_fn]


FUNCTIONS = [row for m in methods.METHODS for row in _rows(m)]
