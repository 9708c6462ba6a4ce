"""SQL rows for box anonymisation (Xiang et al., IFSA 2013): the density, c(x) and optimal half-widths of
every record, the characteristic-aware Mondrian release of boxes, dismissal and fuzzy weights; the
pure-SQL aggregates (weighted mean, variance, covariance, correlation; mean bounds from boxes) and the
table form's SQL generator are in `sql/50_boxes.sql`. Numpy layer: `duckdb_sdc.methods.boxes`.

The record functions take `rows DOUBLE[][]` like the multivariate ones (plumbing: `sql/_rows.py`) and
return one value, one vector or one box per record, aligned with the records, NULL for a record with a
NULL attribute.
"""

from __future__ import annotations

import pyarrow as pa

from .. import masking
from ..methods import boxes as bx
from ..methods import interval_moments as im
from ..params import (
    COLS_PARAM,
    COLUMN,
    COLUMN_VALUES,
    INTEGER_1,
    ROWS_PARAM,
    STRATA_PARAMS,
    TBL_PARAM,
    Data,
    Number,
    Param,
)
from ._arrow import list_udf
from .measures import aggregate_udf
from .function import Contract, SqlFunction, Udf
from ._rows import labels_array, record_macro, records_list, rows_array, rows_udf, RowsChunk

GROUP = "Box anonymisation"
_SQL = "sql/50_boxes.sql"

BOX_TYPE = "STRUCT(box BIGINT, lower DOUBLE[], upper DOUBLE[])"
_BOX_ARROW = pa.struct([("box", pa.int64()), ("lower", pa.list_(pa.float64())), ("upper", pa.list_(pa.float64()))])


def _boxes_array(chunk: RowsChunk, results: list) -> pa.Array:
    """list<struct<box, lower, upper>> aligned with the records, NULL where a record took no part."""
    labels = [None if res is None else (res[0], res[1].labels) for res in results]
    box = labels_array(chunk, labels).values
    lower = rows_array(chunk, [None if res is None else (res[0], res[1].lower) for res in results]).values
    upper = rows_array(chunk, [None if res is None else (res[0], res[1].upper) for res in results]).values
    mask = lower.is_null()
    struct = pa.StructArray.from_arrays([box, lower, upper], fields=list(_BOX_ARROW), mask=mask)
    return records_list(chunk, struct)


def _density(X, m):
    return bx.density(X, m)


def _optimum(X, k, characteristic, l, eps, m, names):
    return bx.optimal_boxes(X, characteristic, k, l, eps, m, names)


def _c(X, *params):
    return _optimum(X, *params).c


def _half_widths(X, *params):
    return _optimum(X, *params).half_widths


def _release(X, *params):
    return masking.mask("box_release", X, params)


def _weights(fn):
    def compute(cs, n, A):
        return fn(cs, n, A)

    return compute


_K, _CHAR, _L, _EPS, _NAMES = masking.METHODS["box_release"].params
_M = Param("m", bx.OPTIONAL_NEIGHBOURS, "NULL")
_CS = Param("cs", Data("values", scales=True, source="box_c"), doc="c(x) of every record (box_c), >= 0")
_N = Param("n", INTEGER_1, doc="number of attributes of the boxes, >= 1")
_A = Param("A", Number(lower=0, lower_open=True, scales=True),
           doc="statistical error constant: an estimate from N records errs by A / sqrt(N); > 0")
_BOX_COL = Param("box_col", COLUMN, "'box'", doc="name of the added box id column")

_NULLS = ("A record with a NULL attribute takes no part and gets NULL; an empty list, or one without a complete "
          "record, comes back as it is.")


def _record_row(name, params, returns, out, compute, doc, example, scale) -> SqlFunction:
    n = len(params) - 1
    return SqlFunction(
        name=name, kind="scalar", params=params, returns=returns, group=GROUP, doc=doc, example=example, scale=scale,
        udf=Udf(rows_udf(name, compute, out, n), ("DOUBLE[][]",) + ("VARCHAR",) * n, returns),
        body=record_macro(name, params),
        contract=Contract({"rows": "original"}),
    )


_OPT = (ROWS_PARAM, _K, _CHAR, _L, _EPS, _M, _NAMES)

FUNCTIONS: list[SqlFunction] = [
    _record_row(
        "box_density", (ROWS_PARAM, Param("m", bx.NEIGHBOURS, doc="neighbours, 2 <= m <= number of records")),
        "DOUBLE[]",
        "values", _density,
        ("Data density at every record, rho(x) = m / (2 r_m(x))^n records per unit volume, r_m(x) the max-norm "
         "distance to its m-th nearest record counting itself (k-d tree); +inf where m records coincide. "
         + _NULLS),
        "SELECT box_density(list([income, savings]), 5) FROM people",
        None),  # records per unit volume: s^-p for p attributes
    _record_row(
        "box_c", _OPT, "DOUBLE[]", "values", _c,
        ("c(x) of every record's optimal box for the characteristic: its cost sum_i a_i(x) Delta_i(x) divided by "
         "the number n of attributes, a_i = sum_C p_C / d0_C |dC/dx_i| N; without l-diversity c(x) = "
         "(1/2) (k / rho(x))^(1/n) (prod a_j(x))^(1/n). The characteristic's uncertainty is (n / N) sum c(x). "
         "Input of fuzzy_weights. " + _NULLS),
        "SELECT box_c(list([income, savings]), 5, 'corr(1, 2)') FROM people",
        1),  # for a characteristic of means (whose a_i do not scale); the power depends on the characteristic
    _record_row(
        "box_half_widths", _OPT, "DOUBLE[][]", "rows", _half_widths,
        ("The optimal box of every record for the characteristic: half-widths Delta_i(x) minimising "
         "sum_i a_i Delta_i with rho 2^n prod Delta_i = k (Delta_i = c / a_i) and, with l, 2 Delta_i >= l eps_i "
         "(the attributes of largest a_i eps_i held at their bound). Where a_i(x) = 0 the optimum is a limit: "
         "without l, 0 for the other attributes and +inf for those. " + _NULLS),
        "SELECT box_half_widths(list([income, savings]), 5, 'mean(1) + mean(2)', l := 2, eps := 100) FROM people",
        1),  # as box_c
    _record_row(
        "box_release", (ROWS_PARAM, _K, _CHAR, _L, _EPS, _NAMES), f"{BOX_TYPE}[]", _boxes_array, _release,
        ("k-anonymous (and l-diverse) boxes by the characteristic-aware Mondrian: a region is cut at the median of "
         "the attribute with the largest a_i * width_i (a_i averaged over its records) while both sides keep k "
         "records (and l values eps_i apart in every attribute), else the next attribute; an attribute whose term "
         "is 0 is never cut. Every record gets its box: id (left to right) and the smallest and largest value of "
         "every attribute among the box's records. " + _NULLS + " A group with fewer than k complete records is "
         "an error."),
        "SELECT box_release(list([income, savings]), 5, 'corr(1, 2)') FROM people",
        {"box": 0, "lower": 1, "upper": 1}),
    SqlFunction(
        name="box_release_table", kind="table", group=GROUP, source=_SQL, returns="table", scale=1,
        params=(TBL_PARAM, COLS_PARAM, _K, _CHAR, _L, _EPS, *STRATA_PARAMS, _BOX_COL),
        doc=("Table form of box_release: the rows of tbl without the columns cols, then for each of them "
             "<col>_lower and <col>_upper (its record's box), then box_col (the box id, numbered within each "
             "stratum). The characteristic may name the columns. A row with a NULL in cols gets NULL bounds and "
             "box; columns of those names are replaced. Rows come back in no particular order."),
        example="SELECT * FROM box_release_table('people', ['income', 'savings'], 5, 'corr(income, savings)')",
        contract=Contract({"cols": "original", "box_col": "adds"}, result="rows")),
    SqlFunction(
        name="fuzzy_weights", kind="scalar", params=(_CS, _N, _A), returns="DOUBLE[]", group=GROUP, scale=0,
        doc=("Weights w >= 0, summing to 1, minimising n sum w c + A sqrt(sum w^2) (box uncertainty plus "
             "statistical error of the weighted estimate): w = (lambda - n c) / (N~ (lambda - mean n c)) on the "
             "N~ records of smallest c, 0 on the rest, lambda and N~ found exactly. Aligned with cs; NULL stays "
             "NULL."),
        example="SELECT fuzzy_weights(box_c(r, 5, 'mean(1)'), 2, 40) FROM (SELECT list([income, savings]) r FROM people)",
        udf=Udf(list_udf("fuzzy_weights", _weights(bx.fuzzy_weights), pa.float64(), 2, param="cs"),
                ("DOUBLE[]", "VARCHAR", "VARCHAR"), "DOUBLE[]"),
        body="__sdc_fuzzy_weights('fuzzy_weights', __sdc_cost_list(cs, 'fuzzy_weights'), n::VARCHAR, A::VARCHAR)",
        contract=Contract({"cs": "original"})),
    SqlFunction(
        name="crisp_weights", kind="scalar", params=(_CS, _N, _A), returns="DOUBLE[]", group=GROUP, scale=0,
        doc=("Dismissal of rare points: 1 / #S on the records with c <= c0 and 0 on the others, c0 minimising "
             "(n / #S) sum_S c + A / sqrt(#S) (records with equal c go together; a tie keeps more records)."),
        example="SELECT crisp_weights([0.1, 0.2, 5.0], 2, 1)",
        udf=Udf(list_udf("crisp_weights", _weights(bx.crisp_weights), pa.float64(), 2, param="cs"),
                ("DOUBLE[]", "VARCHAR", "VARCHAR"), "DOUBLE[]"),
        body="__sdc_crisp_weights('crisp_weights', __sdc_cost_list(cs, 'crisp_weights'), n::VARCHAR, A::VARCHAR)",
        contract=Contract({"cs": "original"})),
]

_X = Param("x", COLUMN_VALUES, doc="the values (an aggregate's argument)")
_Y = Param("y", COLUMN_VALUES, doc="the second variable's values")
_W = Param("w", Data("column", scales=False), doc="the record weights, >= 0 (e.g. unnested fuzzy_weights)")
_LO = Param("lower", COLUMN_VALUES, doc="the box's lower bound (e.g. income_lower of box_release_table)")
_HI = Param("upper", COLUMN_VALUES, doc="the box's upper bound")
_PAIRS = "Rows where an argument is NULL are left out; NULL when no weight is positive."

FUNCTIONS += [
    SqlFunction(name="weighted_mean", kind="aggregate", scale=1, params=(_X, _W), returns="DOUBLE", group=GROUP, source=_SQL,
                doc="sum w x / sum w. Negative weights are an error. " + _PAIRS,
                example="SELECT weighted_mean(income, w) FROM weighted",
                contract=Contract({"x": "original", "w": "weights"})),
    SqlFunction(name="weighted_var", kind="aggregate", scale=2, params=(_X, _W), returns="DOUBLE", group=GROUP, source=_SQL,
                doc=("Weighted population variance sum w (x - m)^2 / sum w, m the weighted mean (two passes over "
                     "the group's values, so no cancellation). " + _PAIRS),
                example="SELECT weighted_var(income, w) FROM weighted",
                contract=Contract({"x": "original", "w": "weights"})),
    SqlFunction(name="weighted_cov", kind="aggregate", scale=2, params=(_X, _Y, _W), returns="DOUBLE", group=GROUP,
                source=_SQL, doc="sum w (x - mx)(y - my) / sum w with the weighted means. " + _PAIRS,
                example="SELECT weighted_cov(income, savings, w) FROM weighted",
                contract=Contract({"x": "original", "y": "second", "w": "weights"})),
    SqlFunction(name="weighted_corr", kind="aggregate", scale=0, params=(_X, _Y, _W), returns="DOUBLE", group=GROUP,
                source=_SQL,
                doc="weighted_cov / sqrt(weighted_var(x) weighted_var(y)); NULL when either variance is 0. " + _PAIRS,
                example="SELECT weighted_corr(income, savings, w) FROM weighted",
                contract=Contract({"x": "original", "y": "second", "w": "weights"})),
    SqlFunction(name="box_mean_bounds", kind="aggregate", scale={"lower": 1, "upper": 1}, params=(_LO, _HI), returns="STRUCT(lower DOUBLE, upper DOUBLE)",
                group=GROUP, source=_SQL,
                doc=("The range of the mean over the records' boxes: [avg(lower), avg(upper)]. A lower bound above its "
                     "upper bound is an error; rows with a NULL bound are left out."),
                example="SELECT box_mean_bounds(income_lower, income_upper) FROM released",
                contract=Contract({"lower": "lower", "upper": "upper"})),
    SqlFunction(name="box_weighted_mean_bounds", kind="aggregate", scale={"lower": 1, "upper": 1}, params=(_LO, _HI, _W),
                returns="STRUCT(lower DOUBLE, upper DOUBLE)", group=GROUP, source=_SQL,
                doc=("The range of the weighted mean over the boxes: [sum w lower / sum w, sum w upper / sum w]. "
                     + _PAIRS),
                example="SELECT box_weighted_mean_bounds(income_lower, income_upper, w) FROM released",
                contract=Contract({"lower": "lower", "upper": "upper", "w": "weights"})),
]


# the range of the variance, covariance and correlation over the boxes (duckdb_sdc.methods.interval_moments):
# Python-backed aggregates over one list of (lower vector, upper vector) structs per group
_BOUNDS = "STRUCT(lower DOUBLE, upper DOUBLE, exact BOOLEAN)"
_BOUNDS_ARROW = pa.struct([("lower", pa.float64()), ("upper", pa.float64()), ("exact", pa.bool_())])
_XL = Param("x_lower", COLUMN_VALUES, doc="the box's lower bound of x")
_XU = Param("x_upper", COLUMN_VALUES, doc="the box's upper bound of x")
_YL = Param("y_lower", COLUMN_VALUES, doc="the box's lower bound of y")
_YU = Param("y_upper", COLUMN_VALUES, doc="the box's upper bound of y")
_OUTER = ("NP-hard to compute exactly in general (see docs/methods/boxes.md), so an outer bound: never narrower "
          "than the true range; exact (exact = true) only for boxes that are points. Rows with a NULL bound are "
          "left out; NULL with fewer than 2 records (correlation: also when x or y is constant in every choice).")


def _struct(bounds: im.Bounds):
    return None if bounds.lower is None else {"lower": bounds.lower, "upper": bounds.upper, "exact": bounds.exact}


def _bounds_row(name: str, params: tuple[Param, ...], compute, doc: str, example: str, scale) -> SqlFunction:
    lows = ", ".join(f"__sdc_check_value({p.name}, '{name}', '{p.name}')" for p in params[0::2])
    highs = ", ".join(f"__sdc_check_value({p.name}, '{name}', '{p.name}')" for p in params[1::2])
    names = {"x": " or ".join(p.name for p in params[0::2]), "xm": " or ".join(p.name for p in params[1::2])}
    return SqlFunction(
        name=name, kind="aggregate", params=params, returns=_BOUNDS, group=GROUP, doc=doc, example=example,
        udf=Udf(aggregate_udf(name, compute, _BOUNDS_ARROW, 0, True, names), ("STRUCT(x DOUBLE[], xm DOUBLE[])[]",),
                _BOUNDS),
        body=f"__sdc_{name}('{name}', list(struct_pack(x := [{lows}], xm := [{highs}])))",
        scale=scale,
        contract=Contract({p.name: ("lower", "upper")[i % 2] for i, p in enumerate(params)}),
    )


FUNCTIONS += [
    _bounds_row(
        "box_var_bounds", (_LO, _HI), lambda X, XM: _struct(im.variance_bounds(X[:, 0], XM[:, 0])),
        ("The range of the population variance (1/n) sum (x - mean)^2 over the records' boxes: lower exact "
         "(the convex minimum, O(n log n)); upper the minimum over c of (1/n) sum max((lower - c)^2, (upper - c)^2), "
         "which is the true maximum when exact = true (it is attained at a vertex of the boxes) and otherwise an "
         "outer bound: the maximum is NP-hard in general (Ferson, Ginzburg, Kreinovich et al. 2002, 2005). A lower "
         "bound above its upper bound is an error; rows with a NULL bound are left out; NULL without a record."),
        "SELECT box_var_bounds(income_lower, income_upper) FROM released",
        {"lower": 2, "upper": 2, "exact": 0}),
    _bounds_row(
        "box_cov_bounds", (_XL, _XU, _YL, _YU),
        lambda X, XM: _struct(im.covariance_bounds(X[:, 0], XM[:, 0], X[:, 1], XM[:, 1])),
        ("The range of the population covariance of x and y over the records' boxes, as (V(x + y) - V(x - y)) / 4 "
         "with the variance bounds of the sums and differences, within +- sqrt(Vx_up Vy_up). " + _OUTER),
        "SELECT box_cov_bounds(income_lower, income_upper, savings_lower, savings_upper) FROM released",
        {"lower": 2, "upper": 2, "exact": 0}),
    _bounds_row(
        "box_corr_bounds", (_XL, _XU, _YL, _YU),
        lambda X, XM: _struct(im.correlation_bounds(X[:, 0], XM[:, 0], X[:, 1], XM[:, 1])),
        ("The range of the correlation of x and y over the records' boxes, from the covariance and variance "
         "bounds, within [-1, 1]. " + _OUTER),
        "SELECT box_corr_bounds(income_lower, income_upper, savings_lower, savings_upper) FROM released",
        {"lower": 0, "upper": 0, "exact": 0}),
]
