"""SQL rows for rounding by discretisation: <method>_round, <method>_labels, <method>_sizes and
<method>_round_table for ewd, efd, kmd and rbd, and the Freedman-Diaconis aggregates."""

from __future__ import annotations

import pyarrow as pa

from .. import masking
from ..methods import discretisation as disc
from ..params import COLUMN_VALUES, XS_PARAM, Param
from ._arrow import list_udf
from .function import Contract, SqlFunction, Udf
from .masking_rows import list_row, table_row

GROUP = "Rounding by discretisation"

_DESCRIPTIONS = {
    "ewd": ("equal-width discretisation", "c intervals of equal width over the observed range "
                                          "(the maximum belongs to the last interval)"),
    "efd": ("equal-frequency discretisation", "c intervals as equal in size as ties allow (least sum of "
                                              "squared sizes; a group of equal values is never split; "
                                              "without ties, cuts at the gaps nearest to t n / c)"),
    "kmd": ("exact univariate k-means", "the c intervals with the smallest within-interval sum of "
                                        "squares (globally optimal, deterministic)"),
    "rbd": ("re-sampling based discretisation",
            "bootstrap centroids drawn within quantile groups are clustered by exact k-means into c "
            "rounding points, and every value goes to the nearest one (seeded)"),
}


def _labels_compute(method: str, sizes: bool):
    target = disc.attraction_sizes if sizes else disc.discretise_labels

    def compute(x, c, *rest):
        if method == "rbd":
            groups, centroid, seed = rest
            return target(x, c, method, seed=seed, groups=groups, centroid=centroid)
        return target(x, c, method)

    return compute


def _udf(name: str, compute, n_params: int, returns: str, pa_type, side_effects: bool) -> Udf:
    return Udf(list_udf(name, compute, pa_type, n_params), ("DOUBLE[]",) + ("VARCHAR",) * n_params, returns,
               side_effects=side_effects)


# the table forms' examples: equal frequency with 'auto'; the others leave the demo's largest incomes
# alone with the Freedman-Diaconis c, which 'auto' refuses
_TABLE_C = {"ewd": "5", "efd": "'auto'", "kmd": "5", "rbd": "5"}


def _rows(method: str) -> list[SqlFunction]:
    title, what = _DESCRIPTIONS[method]
    rbd = method == "rbd"
    names = {kind: f"{method}_{kind}" for kind in ("round", "labels", "sizes")}
    table_name = f"{method}_round_table"
    tail = masking.METHODS[names["round"]].params  # c, representative, [groups, centroid,] stochastic, seed
    part_params = (XS_PARAM, *(p for p in tail if p.name not in ("representative", "stochastic"))) if rbd \
        else (XS_PARAM, masking.C)
    seeded = " The re-sampling is random: pass a seed to reproduce it." if rbd else ""
    round_fn = list_row(
        masking.METHODS[names["round"]], group=GROUP,
        doc=(f"Rounds a column by {title}: {what}. Every value is replaced by its interval's rounding "
             "point (mean, median or midpoint), or with stochastic := true by one of the two "
             "rounding points enclosing it, chosen at random so that the expected result is the "
             "value itself. The result is aligned with xs; NULLs stay NULL in place and join no "
             "interval. With c := 'auto' (Freedman-Diaconis) a result that would release a value alone (a "
             "set of attraction of 1) is refused, as a release refuses it; an explicit c is the caller's "
             f"choice. Use it with GROUP BY to mask strata separately.{seeded}"),
        example=(f"SELECT region, {names['round']}(list(income), 5) FROM people GROUP BY region"))
    labels_fn = SqlFunction(
        name=names["labels"],
        kind="scalar",
        params=part_params,
        returns="BIGINT[]",
        group=GROUP,
        doc=(f"The intervals of {names['round']}: interval numbers aligned with xs, in increasing order "
             "of value; NULL where xs is NULL. "
             + {"ewd": "Numbers are 0..c-1 (some intervals may be empty).",
                "efd": "Numbers are 0..c'-1 with c' = min(c, distinct values): the maximum + 1 is "
                       "the achieved number of intervals.",
                "kmd": "Numbers are 0..c'-1 with c' = min(c, distinct values).",
                "rbd": "Numbers are those of the rounding points 0..c'-1 (a point may attract no "
                       "value)."}[method]),
        example=f"SELECT {names['labels']}([5, 1, 9, 2, 8, 3], 3)",
        udf=_udf(names["labels"], _labels_compute(method, False), len(part_params) - 1, "BIGINT[]",
                 pa.int64(), side_effects=rbd),
        scale=0,
        contract=Contract({"xs": "original"}),
    )
    sizes_fn = SqlFunction(
        name=names["sizes"],
        kind="scalar",
        params=part_params,
        returns="BIGINT[]",
        group=GROUP,
        doc=(f"The set of attraction of {names['round']}: for every value, how many values of xs are "
             "rounded to the same rounding point (deterministic rounding), which is the protection "
             "rounding gives it; NULL where xs is NULL. list_min() of it is the smallest interval."),
        example=f"SELECT list_min({names['sizes']}(list(income), 5)) FROM people",
        udf=_udf(names["sizes"], _labels_compute(method, True), len(part_params) - 1, "BIGINT[]",
                 pa.int64(), side_effects=rbd),
        scale=0,
        contract=Contract({"xs": "original"}),
    )
    table_fn = table_row(
        masking.METHODS[names["round"]], group=GROUP,
        doc=(f"Table form of {names['round']}: the rows of tbl with column col replaced by its rounded "
             "values (same column names and order; the rounded column becomes DOUBLE), optionally "
             "rounding each stratum separately. Each stratum's values reach the method in the order of "
             "the rows' whole content; with a seed, stratum i of column col draws with the seed "
             "stratum_seed(seed, col, i) (see duckdb_sdc.masking), the one a release uses, so the result "
             "repeats exactly whatever DuckDB's threads and scan order. Rows come back in no particular "
             "order."),
        example=f"SELECT * FROM {table_name}('people', 'income', {_TABLE_C[method]}, strata := 'region')")
    return [round_fn, labels_fn, sizes_fn, table_fn]


_FD_SOURCE = "sql/20_discretisation.sql"

FREEDMAN_DIACONIS = [
    SqlFunction(
        name="fd_intervals",
        kind="aggregate",
        params=(Param("x", COLUMN_VALUES, doc="the column"),),
        returns="BIGINT",
        group=GROUP,
        doc=("Number of intervals c that the Freedman-Diaconis rule gives a column, as 'auto' uses "
             "it: c = ceil(range / (2 IQR / n^(1/3))) with linearly interpolated quartiles; when the "
             "IQR is 0, the spread of the central 3/4, 7/8, ... 255/256 of the values (divided by "
             "that share) replaces 2 IQR; 1 for a constant or nearly constant column. Pure SQL."),
        example="SELECT region, fd_intervals(income) FROM people GROUP BY region",
        source=_FD_SOURCE,
        scale=0,
        contract=Contract({"x": "original"}, no_data=1),  # no data: one interval (documented)
    ),
    SqlFunction(
        name="fd_group_size",
        kind="aggregate",
        params=(Param("x", COLUMN_VALUES, doc="the column"),),
        returns="BIGINT",
        group=GROUP,
        doc=("Minimum group size k = max(2, ceil(n / fd_intervals(x))) that 'auto' gives the "
             "microaggregation functions (2 is the smallest group size they take). Pure SQL."),
        example="SELECT fd_group_size(income) FROM people",
        source=_FD_SOURCE,
        scale=0,
        contract=Contract({"x": "original"}, no_data=2),  # no data: the smallest group size
    ),
]

FUNCTIONS = [row for m in disc.METHODS for row in _rows(m)] + FREEDMAN_DIACONIS
