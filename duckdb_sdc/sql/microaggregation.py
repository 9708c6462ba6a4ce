"""SQL rows for univariate microaggregation: <method>_round, <method>_labels, <method>_round_table.

The masking methods and their parameters are declared once, in `duckdb_sdc.masking`; this module
adds their SQL rows (list function, labels function, table form)."""

from __future__ import annotations

import pyarrow as pa

from .. import masking, methods
from ..params import XS_PARAM
from ._arrow import list_udf
from .function import Contract, SqlFunction, Udf
from .masking_rows import list_row, table_row

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


def _labels_compute(method: str):
    def compute(x, k, *gamma):
        opts = {"gamma": gamma[0]} if gamma else {}
        return methods.partition(x, k, method, **opts)

    return compute


def _rows(method: str) -> list[SqlFunction]:
    title, what = _DESCRIPTIONS[method]
    round_name, labels_name, table_name = f"{method}_round", f"{method}_labels", f"{method}_round_table"
    masker = masking.METHODS[round_name]
    tail = masker.params  # k, [gamma,] representative
    partition = tuple(p for p in tail if p.name != "representative")
    round_fn = list_row(
        masker, group=GROUP,
        doc=(f"Rounds a column by {title} microaggregation: {what}. Every value is replaced by its "
             "group's mean (or median); the result is aligned with xs, NULLs stay NULL in place and "
             "join no group. Use it with GROUP BY to mask strata separately."),
        example=(f"SELECT region, {round_name}(list(income), 5) FROM people GROUP BY region"))
    labels_fn = SqlFunction(
        name=labels_name,
        kind="scalar",
        params=(XS_PARAM, *partition),
        returns="BIGINT[]",
        group=GROUP,
        doc=(f"The groups of {round_name}: group numbers 0..g-1 aligned with xs, numbered in increasing "
             "order of the groups' values; NULL where xs is NULL."),
        example=f"SELECT {labels_name}([5, 1, 9, 2, 8, 3], 3)  -- [1, 0, 1, 0, 1, 0]",
        udf=Udf(list_udf(labels_name, _labels_compute(method), pa.int64(), len(partition)),
                ("DOUBLE[]",) + ("VARCHAR",) * len(partition), "BIGINT[]"),
        scale=0,
        contract=Contract({"xs": "original"}),
    )
    table_fn = table_row(
        masker, group=GROUP,
        doc=(f"Table form of {round_name}: the rows of tbl with column col replaced by its masked "
             "values (same column names and order; the masked column becomes DOUBLE), optionally "
             "masking each stratum separately. Each stratum's values reach the method in the order of "
             "the rows' whole content, so ties are broken alike in every run. Rows come back in no "
             "particular order."),
        example=f"SELECT * FROM {table_name}('people', 'income', 5, strata := 'region')")
    return [round_fn, labels_fn, table_fn]


FUNCTIONS = [row for m in methods.METHODS for row in _rows(m)]
