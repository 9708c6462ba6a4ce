"""SQL rows for perturbative masking: additive noise (`add_noise`, and `add_noise_multi` over records)
and rank swapping (`rank_swap`), each with its table form. The algorithms are in
`duckdb_sdc.methods.noise_addition` and `duckdb_sdc.methods.rank_swap`."""

from __future__ import annotations

import pyarrow as pa

from ..methods import noise_addition, rank_swap
from .arrow import list_udf
from .registry import Param, SqlFunction, Udf
from .rows import record_macro, rows_udf

GROUP = "Perturbation: noise addition and rank swapping"

_XS = Param("xs", "DOUBLE[]", doc="the column as a list, e.g. list(income); any numeric list type")
_ROWS = Param("rows", "DOUBLE[][]", doc="the records as a list of equally long numeric lists, e.g. list([a, b, c])")
_LEVEL = Param("level", "DOUBLE",
               doc="the noise's variance as a fraction of the column's sample variance, > 0 (Brand's alpha; "
                   "0.1: noise sd = sqrt(0.1) = 0.32 sd)")
_CORRELATED = Param("correlated", "BOOLEAN", "true",
                    doc="noise covariance level * the records' covariance matrix (true), or each column "
                        "independently with variance level * its variance (false)")
_P = Param("p", "DOUBLE", doc="the largest rank distance of a swap, in percent of the number of values, "
                              "0 < p <= 100 (it must allow a distance of at least 1 rank)")
_SEED = Param("seed", "BIGINT", "NULL", doc="random seed, 0 <= seed < 2^63; NULL: not reproducible")
_TBL = Param("tbl", "VARCHAR", doc="table or view name (may be qualified: 'schema.table')")
_COL = Param("col", "VARCHAR", doc="name of the column to mask")
_COLS = Param("cols", "VARCHAR[]", doc="the columns forming the records (a name or a list of names)")
_STRATA = Param("strata", "VARCHAR or VARCHAR[]", "NULL", doc="column(s) whose groups are masked separately")

_NOISE_DOC = ("The noise is drawn once, when the query runs, and a table or release stores it; with a seed "
              "the same list in the same order gives the same noise (and every group of a GROUP BY the same "
              "draws; releases derive a seed per column and stratum). Noise addition guarantees nothing "
              "formal: its protection is measured (record linkage, interval disclosure).")


def _add_noise(func, x, level, seed):
    return noise_addition.add_noise(x, level, seed=seed, _func=func)


def _add_noise_multi(func, X, level, correlated, seed):
    return noise_addition.add_noise_multi(X, level, correlated=correlated, seed=seed, _func=func)


def _rank_swap(func, x, p, seed):
    return rank_swap.rank_swap(x, p, seed=seed, _func=func)


def _list_row(name: str, params: tuple[Param, ...], compute, doc: str, example: str) -> SqlFunction:
    n = len(params) - 1
    return SqlFunction(
        name=name, kind="scalar", params=params, returns="DOUBLE[]", group=GROUP, doc=doc, example=example,
        udf=Udf(list_udf(name, compute, pa.float64(), n), ("DOUBLE[]",) + ("VARCHAR",) * n, "DOUBLE[]",
                side_effects=True),
    )


def _table_row(name: str, tail: tuple[Param, ...], doc: str, example: str) -> SqlFunction:
    args = ", ".join(f"{p.name}::VARCHAR" for p in tail)
    return SqlFunction(
        name=f"{name}_table", kind="table", params=(_TBL, _COL, *tail, _STRATA), returns="table", group=GROUP,
        doc=doc, example=example,
        body=f"FROM query(__sdc_mask_column_sql('{name}', tbl, col, [{args}], strata))",
    )


_MULTI_PARAMS = (_ROWS, _LEVEL, _CORRELATED, _SEED)
_MULTI_ARGS = ", ".join(f"{p.name}::VARCHAR" for p in _MULTI_PARAMS[1:])

FUNCTIONS: list[SqlFunction] = [
    _list_row(
        "add_noise", (_XS, _LEVEL, _SEED), _add_noise,
        doc=("Adds uncorrelated Gaussian noise (Brand 2002): every value x becomes x + e with e ~ N(0, level * S^2), "
             "S the sample sd (n - 1) of the non-NULL values, so level is the noise's share of the variance. The "
             "result is aligned with xs; NULLs stay NULL in place; a list needs at least 2 values. Use it with "
             "GROUP BY to scale the noise to each stratum. " + _NOISE_DOC),
        example="SELECT region, add_noise(list(income), 0.1, seed := 7) FROM people GROUP BY region"),
    _table_row(
        "add_noise", (_LEVEL, _SEED),
        doc=("Table form of add_noise: the rows of tbl with column col replaced by its noisy values (same column "
             "names and order; the column becomes DOUBLE), optionally per stratum (each stratum with the same "
             "seed). Rows come back in no particular order."),
        example="SELECT * FROM add_noise_table('people', 'income', 0.1, strata := 'region')"),
    SqlFunction(
        name="add_noise_multi", kind="scalar", params=_MULTI_PARAMS, returns="DOUBLE[][]", group=GROUP,
        doc=("Adds Gaussian noise to records of several columns (Brand 2002): with correlated := true (default) "
             "each record x becomes x + e with e ~ N(0, level * Sigma), Sigma the sample covariance matrix "
             "(n - 1) of the complete records, so the correlations are kept; with false, every column gets "
             "independent noise of variance level * its variance, as add_noise gives it. The result is aligned "
             "with rows. A record that is NULL or has a NULL attribute takes no part and comes back NULL; at "
             "least 2 complete records are needed. " + _NOISE_DOC),
        example=("SELECT region, add_noise_multi(list([income, expenses, savings]), 0.1) FROM people "
                 "GROUP BY region"),
        udf=Udf(rows_udf("add_noise_multi", _add_noise_multi, "rows", len(_MULTI_PARAMS) - 1),
                ("DOUBLE[][]",) + ("VARCHAR",) * (len(_MULTI_PARAMS) - 1), "DOUBLE[][]", side_effects=True),
        body=record_macro("add_noise_multi", _MULTI_PARAMS),
    ),
    SqlFunction(
        name="add_noise_multi_table", kind="table", params=(_TBL, _COLS, *_MULTI_PARAMS[1:], _STRATA),
        returns="table", group=GROUP,
        doc=("Table form of add_noise_multi: the rows of tbl with the columns cols replaced by their noisy values "
             "(same column names and order; the columns become DOUBLE; a row with a NULL in any of them gets "
             "NULL in all), optionally per stratum (each stratum with the same seed). Rows come back in no "
             "particular order."),
        example="SELECT * FROM add_noise_multi_table('people', ['income', 'expenses'], 0.1, strata := 'region')",
        body=f"FROM query(__sdc_mask_columns_sql('add_noise_multi', tbl, cols, [{_MULTI_ARGS}], strata))",
    ),
    _list_row(
        "rank_swap", (_XS, _P, _SEED), _rank_swap,
        doc=("Rank swapping (Moore 1996): the values are ranked; in increasing rank, each value not yet swapped "
             "is exchanged with one chosen uniformly at random among those not yet swapped whose rank is higher "
             "by at most floor(p n / 100); a value that finds none keeps its place. The list keeps its values "
             "exactly (a permutation) and no value moves more than p percent of the ranks; equal values are "
             "ranked in list order. The result is aligned with xs; NULLs stay NULL in place and take no part; a "
             "list needs at least 2 values and p must allow a distance of 1 rank. Random: with a seed the same "
             "list in the same order gives the same swaps (every group of a GROUP BY uses the same words)."),
        example="SELECT region, rank_swap(list(income), 5, seed := 7) FROM people GROUP BY region"),
    _table_row(
        "rank_swap", (_P, _SEED),
        doc=("Table form of rank_swap: the rows of tbl with column col rank-swapped (same column names and order; "
             "the column becomes DOUBLE), optionally per stratum (each stratum with the same seed). Rows come "
             "back in no particular order."),
        example="SELECT * FROM rank_swap_table('people', 'income', 5, strata := 'region')"),
]
