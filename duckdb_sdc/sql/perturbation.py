"""SQL rows for perturbative masking: additive noise (`add_noise`, and `add_noise_multi` over records)
and rank swapping (`rank_swap`), each with its table form. The algorithms are in
`duckdb_sdc.methods.noise_addition` and `duckdb_sdc.methods.rank_swap`."""

from __future__ import annotations


from .. import masking
from ..params import COLS_PARAM, POOLING_ARGS, ROWS_PARAM, STRATA_PARAMS, TBL_PARAM, Param
from ._rows import record_macro, rows_udf
from .function import Contract, SqlFunction, Udf
from .masking_rows import list_row, masked, table_row

GROUP = "Perturbation: noise addition and rank swapping"

_NOISE_DOC = ("The noise is drawn once, when the query runs, and a table or release stores it; with a seed "
              "the same list in the same order gives the same noise (and every group of a GROUP BY the same "
              "draws; table forms and releases derive a seed per column and stratum). Noise addition guarantees "
              "nothing formal: its protection is measured (record linkage, interval disclosure).")
_SEEDED_TABLE = ("Each stratum's values reach the method in the order of the rows' whole content; with a seed, "
                 "stratum i of column col draws with the seed stratum_seed(seed, col, i) (see duckdb_sdc.masking), "
                 "the one a release uses, so the result repeats exactly whatever DuckDB's threads and scan order. "
                 "Rows come back in no particular order.")


def _list_row(name: str, doc: str, example: str) -> SqlFunction:
    return list_row(masking.METHODS[name], group=GROUP, doc=doc, example=example)


def _args(params: tuple[Param, ...]) -> str:
    """A records table form's literal arguments: every parameter but the seed (derived per stratum)."""
    return ", ".join(f"{p.name}::VARCHAR" for p in params if p.name != "seed")


def _table_row(name: str, doc: str, example: str) -> SqlFunction:
    return table_row(masking.METHODS[name], group=GROUP, doc=doc, example=example)


_MULTI_TAIL = masking.METHODS["add_noise_multi"].params

FUNCTIONS: list[SqlFunction] = [
    _list_row(
        "add_noise",
        doc=("Adds uncorrelated Gaussian noise (Brand 2002): every value x becomes x + e with e ~ N(0, level * S^2), "
             "S the sample sd (n - 1) of the non-NULL values, so level is the noise's share of the variance. The "
             "result is aligned with xs; NULLs stay NULL in place; a list needs at least 2 values. Use it with "
             "GROUP BY to scale the noise to each stratum. " + _NOISE_DOC),
        example="SELECT region, add_noise(list(income), 0.1, seed := 7) FROM people GROUP BY region"),
    _table_row(
        "add_noise",
        doc=("Table form of add_noise: the rows of tbl with column col replaced by its noisy values (same column "
             "names and order; the column becomes DOUBLE), optionally adding noise scaled to each stratum "
             "separately. " + _SEEDED_TABLE),
        example="SELECT * FROM add_noise_table('people', 'income', 0.1, strata := 'region')"),
    SqlFunction(
        name="add_noise_multi", kind="scalar", params=(ROWS_PARAM, *_MULTI_TAIL), returns="DOUBLE[][]", group=GROUP,
        doc=("Adds Gaussian noise to records of several columns (Brand 2002): with correlated := true (default) "
             "each record x becomes x + e with e ~ N(0, level * Sigma), Sigma the sample covariance matrix "
             "(n - 1) of the complete records, so the correlations are kept; with false, every column gets "
             "independent noise of variance level * its variance, as add_noise gives it. The result is aligned "
             "with rows. A record that is NULL or has a NULL attribute takes no part and comes back NULL; at "
             "least 2 complete records are needed. " + _NOISE_DOC),
        example=("SELECT region, add_noise_multi(list([income, expenses, savings]), 0.1) FROM people "
                 "GROUP BY region"),
        udf=Udf(rows_udf("add_noise_multi", masked("add_noise_multi"), "rows", len(_MULTI_TAIL)),
                ("DOUBLE[][]",) + ("VARCHAR",) * len(_MULTI_TAIL), "DOUBLE[][]", side_effects=True),
        body=record_macro("add_noise_multi", (ROWS_PARAM, *_MULTI_TAIL)),
        scale=1,
        contract=Contract({"rows": "original"}),
    ),
    SqlFunction(
        name="add_noise_multi_table", kind="table", params=(TBL_PARAM, COLS_PARAM, *_MULTI_TAIL, *STRATA_PARAMS),
        returns="table", group=GROUP,
        doc=("Table form of add_noise_multi: the rows of tbl with the columns cols replaced by their noisy values "
             "(same column names and order; the columns become DOUBLE; a row with a NULL in any of them gets "
             "NULL in all), optionally per stratum. Each stratum's records reach the method in the order of the "
             "rows' whole content; with a seed, stratum i draws with the seed stratum_seed(seed, c, i), c the first "
             "column of cols (see duckdb_sdc.masking), the one a release uses. Rows come back in no particular "
             "order."),
        example="SELECT * FROM add_noise_multi_table('people', ['income', 'expenses'], 0.1, strata := 'region')",
        body=(f"FROM query(__sdc_mask_columns_sql('add_noise_multi', tbl, cols, [{_args(_MULTI_TAIL)}], strata, "
              f"seeded := true, seed := seed, {POOLING_ARGS}))"),
        scale=1,
        contract=Contract({"cols": "original"}, result="rows"),
    ),
    _list_row(
        "rank_swap",
        doc=("Rank swapping (Moore 1996): the values are ranked; in increasing rank, each value not yet swapped "
             "is exchanged with one chosen uniformly at random among those not yet swapped whose rank is higher "
             "by at most floor(p n / 100); a value that finds none keeps its place. The list keeps its values "
             "exactly (a permutation) and no value moves more than p percent of the ranks; equal values are "
             "ranked in list order. The result is aligned with xs; NULLs stay NULL in place and take no part; a "
             "list needs at least 2 values and p must allow a distance of 1 rank. top_percent and bottom_percent "
             "code the tails first, as sdcMicro's rankSwap (TopPercent, BottomPercent) does: the floor(n "
             "top_percent / 100) largest values are replaced by their mean and take no part, likewise the "
             "smallest, and the m others are swapped within floor(p m / 100) ranks. sdcMicro's P is a fraction "
             "and its partners lie at most floor(P m) - 1 ranks apart. Random: with a seed the same list in the "
             "same order gives the same swaps (every group of a GROUP BY uses the same words)."),
        example="SELECT region, rank_swap(list(income), 10, seed := 7) FROM people GROUP BY region"),
    _table_row(
        "rank_swap",
        doc=("Table form of rank_swap: the rows of tbl with column col rank-swapped (same column names and order; "
             "the column becomes DOUBLE), optionally each stratum separately. " + _SEEDED_TABLE),
        example="SELECT * FROM rank_swap_table('people', 'income', 10, strata := 'region')"),
]
