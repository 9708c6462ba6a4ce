"""SQL rows for differentially private releases on microaggregated data: idp_cbls, idp_ls, dp_um,
dp_laplace (list and table forms), idp_sensitivity and dp_budget."""

from __future__ import annotations

import pyarrow as pa

from .. import guarantees
from ..methods import dp
from .arrow import list_udf
from .registry import Param, SqlFunction, Udf

GROUP = "Differential privacy on microaggregated data"

_SAFETY = ("Noise: exact discrete Laplace on a grid at most epsilon * 1e-6 of the noise scale, from the operating "
           "system's randomness, one draw per cluster shared by its members (never a float Laplace "
           "sampler, whose low-order bits leak; Mironov 2012). Without a seed every call draws new noise "
           "(never cached or folded); a seed makes the release repeat exactly (the noise of cluster t, or of "
           "record t for dp_laplace, is a function of the seed and t) and voids the guarantee. "
           "Values outside [lb, ub] are clamped into it first, outputs are clamped to it; NULLs stay "
           "NULL in place.")

_XS = Param("xs", "DOUBLE[]", doc="the attribute as a list, e.g. list(income); any numeric list type")
_K = Param("k", "INTEGER", doc="cluster size of individual ranking microaggregation (the last cluster "
                               "takes the remainder), k <= number of non-NULL values")
_K3 = Param("k", "INTEGER", doc="cluster size, 3 <= k <= number of non-NULL values (the last cluster "
                                "takes the remainder)")
_EPS = Param("epsilon", "DOUBLE", doc="privacy budget of this attribute, > 0")
_LB = Param("lb", "DOUBLE", doc="lower bound of the attribute's domain (public, not taken from the data)")
_UB = Param("ub", "DOUBLE", doc="upper bound of the attribute's domain, > lb")
_LB_OPT = Param("lb", "DOUBLE", "NULL", doc="optional lower bound of the domain: clamps inputs and outputs")
_UB_OPT = Param("ub", "DOUBLE", "NULL", doc="optional upper bound of the domain: clamps inputs and outputs")
_SEED = Param("seed", "UBIGINT", "NULL", doc="NULL: operating-system randomness; an integer in [0, 2^64): "
                                              "reproducible noise, which voids the guarantee")
_TBL = Param("tbl", "VARCHAR", doc="table or view name (may be qualified: 'schema.table')")
_COLS = Param("cols", "VARCHAR or VARCHAR[]", doc="the column(s) to release")
_TEPS = Param("epsilon", "DOUBLE", doc="total privacy budget of the release, > 0, split over the columns")
_TLB = Param("lb", "DOUBLE or DOUBLE[]", doc="domain lower bound: one for all columns or one per column")
_TUB = Param("ub", "DOUBLE or DOUBLE[]", doc="domain upper bound: one for all columns or one per column")
_TLB_OPT = Param("lb", "DOUBLE or DOUBLE[]", "NULL", doc="optional domain lower bound(s): clamp inputs and outputs")
_TUB_OPT = Param("ub", "DOUBLE or DOUBLE[]", "NULL", doc="optional domain upper bound(s): clamp inputs and outputs")
_SPLIT = Param("split", "DOUBLE[]", "NULL", doc="NULL: equal shares; or one positive weight per column "
                                                "(budget_j = epsilon w_j / sum w); dp_budget reports it")
_TSEED = Param("seed", "any", "NULL", doc="NULL: operating-system randomness; a value: reproducible noise "
                                          "(column j of stratum s uses hash(seed, j, hash(s))), which voids "
                                          "the guarantee")
_STRATA = Param("strata", "VARCHAR or VARCHAR[]", "NULL", doc="column(s) whose groups are released separately")

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


def _compute(mechanism: str):
    if mechanism == "dp_laplace":
        def compute(func, x, epsilon, lb, ub, seed):
            return dp.release(x, mechanism, None, epsilon, lb, ub, seed, _func=func)
    else:
        def compute(func, x, k, epsilon, lb, ub, seed):
            return dp.release(x, mechanism, k, epsilon, lb, ub, seed, _func=func)
    return compute


def _sensitivity(func, x, k, mechanism, lb, ub):
    return dp.idp_sensitivity(x, k, mechanism, lb, ub, _func=func)


def _rows(mechanism: str) -> list[SqlFunction]:
    cbls = mechanism == "idp_cbls"
    bounds = (_LB_OPT, _UB_OPT) if cbls else (_LB, _UB)
    k = () if mechanism == "dp_laplace" else ((_K3,) if cbls else (_K,))
    params = (_XS, *k, _EPS, *bounds, _SEED)
    n = len(params) - 1
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
        udf=Udf(list_udf(mechanism, _compute(mechanism), pa.float64(), n),
                ("DOUBLE[]",) + ("VARCHAR",) * n, "DOUBLE[]", side_effects=True),
    )
    tbounds = (_TLB_OPT, _TUB_OPT) if cbls else (_TLB, _TUB)
    fixed = "[k::VARCHAR]" if k else "[]"
    table_name = f"{mechanism}_table"
    table_example_args = {"idp_cbls": "5, 1.0", "idp_ls": "5, 1.0, 0, [1e6, 1e5]",
                          "dp_um": "5, 1.0, 0, [1e6, 1e5]", "dp_laplace": "1.0, 0, [1e6, 1e5]"}[mechanism]
    table_fn = SqlFunction(
        name=table_name,
        kind="table",
        params=(_TBL, _COLS, *k, _TEPS, *tbounds, _SPLIT, _TSEED, _STRATA),
        returns="table",
        group=GROUP,
        doc=(f"Table form of {mechanism}: the rows of tbl with every column of cols replaced by its "
             f"release (same column names and order; released columns become DOUBLE). Column j gets "
             "the budget epsilon_j of the split (equal shares unless split is given; dp_budget(cols, "
             "epsilon, split) reports it), so the release is epsilon-(i)DP in total by sequential "
             "composition. No noise, seed or sensitivity is written into the result. Rows come back in "
             "no particular order."),
        example=f"SELECT * FROM {table_name}('people', ['income', 'savings'], {table_example_args}, strata := 'region')",
        body=(f"FROM query(__sdc_dp_table_sql('{mechanism}', tbl, __sdc_names(cols), {fixed}, "
              f"__sdc_dp_split('{table_name}', len(__sdc_names(cols)), epsilon, split), "
              f"__sdc_dp_bounds('{table_name}', 'lb', lb, len(__sdc_names(cols))), "
              f"__sdc_dp_bounds('{table_name}', 'ub', ub, len(__sdc_names(cols))), seed, strata))"),
    )
    return [list_fn, table_fn]


_SENSITIVITY = SqlFunction(
    name="idp_sensitivity",
    kind="scalar",
    params=(_XS, Param("k", "INTEGER", doc="cluster size as in the release (ignored by 'dp_laplace')"),
            Param("mechanism", "VARCHAR", doc="'idp_cbls', 'idp_ls', 'dp_um' or 'dp_laplace'"),
            Param("lb", "DOUBLE", "NULL", doc="domain lower bound (required except for 'idp_cbls')"),
            Param("ub", "DOUBLE", "NULL", doc="domain upper bound (required except for 'idp_cbls')")),
    returns="DOUBLE[]",
    group=GROUP,
    doc=("For each value, the sensitivity of its cluster's released statistic under the mechanism "
         "(the papers' formula on the clamped values; the sampler adds only a floating-point rounding "
         "allowance of about 1e-15 relative). The noise scale is this divided by the attribute's epsilon. "
         "A diagnostic for checking a release: it is computed from the raw data (for iDP it reveals "
         "cluster extremes), so never publish it."),
    example="SELECT idp_sensitivity([1, 2, 2, 5, 9, 30], 6, 'idp_cbls')  -- 49 / 6 for every value",
    udf=Udf(list_udf("idp_sensitivity", _sensitivity, pa.float64(), 4),
            ("DOUBLE[]", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"), "DOUBLE[]"),
)

_BUDGET = SqlFunction(
    name="dp_budget",
    kind="table",
    params=(Param("cols", "VARCHAR or VARCHAR[]", doc="the columns of the release"),
            Param("epsilon", "DOUBLE", doc="total privacy budget, > 0"),
            Param("split", "DOUBLE[]", "NULL", doc="NULL: equal shares; or one positive weight per column")),
    returns="table(column_name VARCHAR, epsilon DOUBLE)",
    group=GROUP,
    doc=("The split of a release's total epsilon over its columns, exactly as the table forms apply it: "
         "one row per column with its budget (sequential composition: the budgets add up to epsilon)."),
    example="SELECT * FROM dp_budget(['income', 'savings'], 1.0, split := [3, 1])  -- 0.75, 0.25",
    source="sql/40_dp.sql",
)

FUNCTIONS = [row for m in dp.MECHANISMS for row in _rows(m)] + [_SENSITIVITY, _BUDGET]
