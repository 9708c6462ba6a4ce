"""SQL rows for differentially private releases on microaggregated data: idp_cbls, idp_ls, dp_um,
dp_laplace (list and table forms), idp_sensitivity and dp_budget."""

from __future__ import annotations

import pyarrow as pa

from .. import guarantees, masking
from ..methods import dp
from ..params import (
    BOUND,
    EPSILON,
    MECHANISM,
    OPTIONAL_BOUND,
    SEED,
    SPLIT,
    POOLING_ARGS,
    STRATA_PARAMS,
    TBL_PARAM,
    XS_PARAM,
    ColumnNames,
    GroupSize,
    Param,
    PerColumn,
)
from ._arrow import list_udf
from .function import Contract, SqlFunction, Udf

GROUP = "Differential privacy on microaggregated data"

_SAFETY = ("Noise: exact discrete Laplace on a grid at most epsilon * 1e-6 of the noise scale, from the operating "
           "system's randomness, one draw per cluster shared by its members (never a float Laplace "
           "sampler, whose low-order bits leak; Mironov 2012). Without a seed every call draws new noise "
           "(never cached or folded); a seed makes the release repeat exactly (the noise of cluster t, or of "
           "record t for dp_laplace, is a function of the seed and t) and voids the guarantee. "
           "Values outside [lb, ub] are clamped into it first, outputs are clamped to it; NULLs stay "
           "NULL in place.")

_TEPS = Param("epsilon", EPSILON, doc="total privacy budget of the release, > 0, split over the columns")
_TLB = Param("lb", PerColumn(BOUND), doc="domain lower bound: one for all columns or one per column", example="0")
_TUB = Param("ub", PerColumn(BOUND), doc="domain upper bound: one for all columns or one per column", example="1000")
_TLB_OPT = Param("lb", PerColumn(OPTIONAL_BOUND, nullable=True), "NULL",
                 doc="optional domain lower bound(s): clamp inputs and outputs")
_TUB_OPT = Param("ub", PerColumn(OPTIONAL_BOUND, nullable=True), "NULL",
                 doc="optional domain upper bound(s): clamp inputs and outputs")
_SPLIT = Param("split", SPLIT, "NULL", doc="NULL: equal shares; or one positive weight per column "
                                           "(budget_j = epsilon w_j / sum w); dp_budget reports it")
_TSEED = Param("seed", SEED, "NULL", doc="NULL: operating-system randomness; an integer 0 <= seed < 2^63: "
                                         "reproducible noise (column c of stratum i draws with "
                                         "stratum_seed(seed, c, i), as a release does), which voids the guarantee")
_COLS = Param("cols", ColumnNames(), doc="the column(s) to release")

_METHOD = {
    "idp_cbls": ("iDP-CBLS (Soria-Comas, Sanchez, Domingo-Ferrer, Martinez & Del Vasto-Terrientes 2025): "
                 "individual ranking clusters of k values; in each, one smallest value is replaced by the "
                 "second smallest and one largest by the second largest, and the mean of the result gets "
                 "Laplace noise of scale LS / epsilon, LS = max(2 x(m) + x(3) - 2 x(2) - x(m-1), "
                 "2 x(m-1) + x(2) - 2 x(1) - x(m-2)) / m for the sorted cluster x(1..m). Needs no domain."),
    "idp_ls": ("iDP-LS: individual ranking clusters of k values; each mean gets Laplace noise of scale "
               "LS / epsilon with the local sensitivity LS = max(ub - min(C), max(C) - lb) / |C|."),
    "dp_um": ("DP-UM (Sanchez, Domingo-Ferrer, Martinez & Soria-Comas 2016): individual ranking clusters "
              "of k values; each mean gets Laplace noise of scale GS / epsilon, GS = (ub - lb) / |C|, and every "
              "record of the cluster gets that noisy mean."),
    "dp_laplace": ("Plain Laplace DP, the baseline: every value gets its own Laplace noise of scale "
                   "(ub - lb) / epsilon, no microaggregation."),
}
# the guarantee words come from duckdb_sdc.guarantees, their one source
_GUARANTEES = {m: f"{text} Guarantee: {guarantees.of(m).statement}" for m, text in _METHOD.items()}


def _masked(name: str):
    def compute(x, *params):
        return masking.mask(name, x, params)

    return compute


def _sensitivity(x, k, mechanism, lb, ub):
    return dp.idp_sensitivity(x, k, mechanism, lb, ub)


def _rows(mechanism: str) -> list[SqlFunction]:
    cbls = mechanism == "idp_cbls"
    tail = masking.METHODS[mechanism].params  # [k,] epsilon, lb, ub, seed
    k = tuple(p for p in tail if p.name == "k")
    params = (XS_PARAM, *tail)
    n = len(tail)
    example_args = {"idp_cbls": "5, 1.0", "idp_ls": "5, 1.0, 0, 1e6", "dp_um": "5, 1.0, 0, 1e6",
                    "dp_laplace": "1.0, 0, 1e6"}[mechanism]
    list_fn = SqlFunction(
        name=mechanism,
        kind="scalar",
        params=params,
        returns="DOUBLE[]",
        group=GROUP,
        doc=f"{_GUARANTEES[mechanism]} {_SAFETY} Use it with GROUP BY to release strata separately.",
        example=f"SELECT region, {mechanism}(list(income), {example_args}) FROM people GROUP BY region",
        udf=Udf(list_udf(mechanism, _masked(mechanism), pa.float64(), n),
                ("DOUBLE[]",) + ("VARCHAR",) * n, "DOUBLE[]", side_effects=True),
        scale=1,
        contract=Contract({"xs": "original"}),
    )
    tbounds = (_TLB_OPT, _TUB_OPT) if cbls else (_TLB, _TUB)
    fixed = "[k::VARCHAR]" if k else "[]"
    table_name = f"{mechanism}_table"
    table_example_args = {"idp_cbls": "5, 1.0", "idp_ls": "5, 1.0, 0, [1e6, 1e5]",
                          "dp_um": "5, 1.0, 0, [1e6, 1e5]", "dp_laplace": "1.0, 0, [1e6, 1e5]"}[mechanism]
    table_fn = SqlFunction(
        name=table_name,
        kind="table",
        params=(TBL_PARAM, _COLS, *k, _TEPS, *tbounds, _SPLIT, _TSEED, *STRATA_PARAMS),
        returns="table",
        group=GROUP,
        doc=(f"Table form of {mechanism}: the rows of tbl with every column of cols replaced by its "
             f"release (same column names and order; released columns become DOUBLE). Column j gets "
             "the budget epsilon_j of the split (equal shares unless split is given; dp_budget(cols, "
             "epsilon, split) reports it), so the release is epsilon-(i)DP in total by sequential "
             "composition. No noise, seed or sensitivity is written into the result. Rows come back in "
             "no particular order."),
        example=f"SELECT * FROM {table_name}('people', ['income', 'savings'], {table_example_args}, strata := 'region')",
        # the checked columns are bound once (list_transform([v], lambda ...)[1]): see 00_internal.sql
        body=(f"FROM query(list_transform([__sdc_column_names('{table_name}', 'cols', cols)], lambda __sdc_cs: "
              f"__sdc_dp_table_sql('{mechanism}', tbl, __sdc_cs, {fixed}, "
              f"__sdc_dp_split('{table_name}', len(__sdc_cs), epsilon, split), "
              f"__sdc_dp_bounds('{table_name}', 'lb', lb, len(__sdc_cs)), "
              f"__sdc_dp_bounds('{table_name}', 'ub', ub, len(__sdc_cs)), seed, strata, {POOLING_ARGS}))[1])"),
        scale=1,
        contract=Contract({"cols": "original"}, result="rows"),
    )
    return [list_fn, table_fn]


_SENSITIVITY = SqlFunction(
    name="idp_sensitivity",
    kind="scalar",
    params=(XS_PARAM, Param("k", GroupSize(1), doc="cluster size as in the release (ignored by 'dp_laplace')"),
            Param("mechanism", MECHANISM, example="'dp_um'"),  # the contract's call: k >= 1 as its kind says
            Param("lb", OPTIONAL_BOUND, "NULL", doc="domain lower bound (required except for 'idp_cbls')",
                  example="0"),
            Param("ub", OPTIONAL_BOUND, "NULL", doc="domain upper bound (required except for 'idp_cbls')",
                  example="1000")),
    returns="DOUBLE[]",
    group=GROUP,
    doc=("For each value, the sensitivity of its cluster's released statistic under the mechanism "
         "(the papers' formula on the clamped values; the sampler adds only a floating-point rounding "
         "allowance of about 1e-15 relative). The noise scale is this divided by the attribute's epsilon. "
         "A diagnostic for checking a release: it is computed from the raw data (for iDP it reveals "
         "cluster extremes), so never publish it."),
    example="SELECT idp_sensitivity([1, 2, 2, 5, 9, 30], 6, 'idp_cbls')  -- 49 / 6 for every value",
    scale=1,
    udf=Udf(list_udf("idp_sensitivity", _sensitivity, pa.float64(), 4),
            ("DOUBLE[]", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"), "DOUBLE[]"),
    contract=Contract({"xs": "original"}),
)

_BUDGET = SqlFunction(
    name="dp_budget",
    kind="table",
    params=(Param("cols", ColumnNames(), doc="the columns of the release"),
            Param("epsilon", EPSILON, doc="total privacy budget, > 0"),
            Param("split", SPLIT, "NULL", doc="NULL: equal shares; or one positive weight per column")),
    returns="table(column_name VARCHAR, epsilon DOUBLE)",
    group=GROUP,
    doc=("The split of a release's total epsilon over its columns, exactly as the table forms apply it: "
         "one row per column with its budget (sequential composition: the budgets add up to epsilon)."),
    example="SELECT * FROM dp_budget(['income', 'savings'], 1.0, split := [3, 1])  -- 0.75, 0.25",
    source="sql/40_dp.sql",
    scale=None,
    contract=Contract({"cols": "names"}, result="report"),
)

FUNCTIONS = [row for m in dp.MECHANISMS for row in _rows(m)] + [_SENSITIVITY, _BUDGET]
