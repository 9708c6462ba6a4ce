"""SQL rows for the information-loss and disclosure-risk measures.

Two kinds of aggregate macros:
* pure SQL (`sql/10_measures.sql`): mae, mse, il1, il1s, il1s_sum, sse_sst; one pass at DuckDB speed;
* Python-backed: the macro aggregates the pairs of its group into ONE list of structs (so the two
  sides stay aligned) and hands it to an internal UDF that calls `duckdb_sdc.measures`. Per-column
  measures take two values (`rank_bounded_mae(x, xm)`); multi-column measures take two row vectors
  (`record_linkage([a, b, c], [a_m, b_m, c_m])`), every record one list of its p values.
NULL handling: a pair with a NULL side is left out (pairwise); for row vectors a record with a NULL
vector or a NULL inside either vector is left out (listwise). No complete record, or a measure
undefined for the data (a constant original column, ...), gives NULL; bad input is an error.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .. import measures
from .._validate import fail, refuse_nonfinite
from ..measures._input import UndefinedMeasure
from ..measures.risk import LINKAGE_RANK
from ..params import (
    COLUMN_VALUES,
    IL1S_FORM,
    NONNEGATIVE,
    NONNEGATIVE_INTEGER,
    ROW_VECTOR,
    SEED,
    TABLE,
    TIES,
    ColumnNames,
    Param,
)
from ._arrow import reported, reporting_name, single_array
from .groups import STACKED, grouped
from .function import Contract, SqlFunction, Udf
from ._rows import positional_signature

GROUP_LOSS = "Information loss"
GROUP_RISK = "Disclosure risk"
GROUP_EVAL = "Evaluating a masked table"

_X = Param("x", COLUMN_VALUES, doc="original value (a column)")
_XM = Param("xm", COLUMN_VALUES, doc="masked value of the same record")
_XV = Param("x", ROW_VECTOR, doc="original record as a row vector, e.g. [a, b, c]")
_XMV = Param("xm", ROW_VECTOR, doc="masked record, the same columns in the same order, e.g. [a_m, b_m, c_m]")
_TIES = Param("ties", TIES, "'random'")
_SEED = Param("seed", SEED, "0", doc="seed of the 'random' tie rule, 0 <= seed < 2^63; NULL: drawn from the "
                                     "operating system's randomness (ties then differ between calls)")
_HALF_WIDTH = Param("half_width", NONNEGATIVE, "0.05",
                    doc="half-width of the interval in masked standard deviations, >= 0")
_MAX_OUTSIDE = Param("max_outside", NONNEGATIVE_INTEGER, "0",
                     doc="values allowed outside their interval (0: the literature and sdcMicro's dRisk since "
                         "5.5.2; 1: dRisk before)")

_PAIRS = "STRUCT(x DOUBLE, xm DOUBLE)[]"
_ROWS = "STRUCT(x DOUBLE[], xm DOUBLE[])[]"


def float_column(func: str, arr: pa.Array, name: str) -> np.ndarray:
    """float64 values of a numeric Arrow array with NaN where NULL; NaN or infinity in the data itself
    is refused (NULL is the only way to say missing)."""
    if arr.null_count:  # a writable copy: the NULL slots become NaN below
        values = np.array(arr.fill_null(0.0).to_numpy(zero_copy_only=False), dtype=np.float64)
    else:
        values = np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.float64)
    refuse_nonfinite(func, name, values)
    if arr.null_count:
        values[~arr.is_valid().to_numpy(zero_copy_only=False)] = np.nan
    return values


def _pair_sides(func: str, group: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(x, xm) as n x 1 matrices of one group's list of structs, NaN where missing."""
    return float_column(func, group.field("x"), "x")[:, None], float_column(func, group.field("xm"), "xm")[:, None]


def _pairs(func: str, group: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(x, xm) as n x 1 matrices of the complete pairs of one group's list of structs."""
    x, xm = _pair_sides(func, group)
    keep = ~(np.isnan(x[:, 0]) | np.isnan(xm[:, 0]))
    if keep.all():
        return x, xm
    return x[keep], xm[keep]


def _vectors(func: str, side: pa.Array, name: str) -> tuple[np.ndarray, int]:
    """One side's row vectors as an n x p matrix, NaN for a NULL value or a NULL vector, and p (-1
    when every vector is NULL)."""
    n = len(side)
    offsets = np.asarray(side.offsets, dtype=np.int64)
    lengths = np.diff(offsets)
    present = ~side.is_null().to_numpy(zero_copy_only=False) if side.null_count else np.ones(n, bool)
    if not present.any():
        return np.full((n, 0), np.nan), -1
    p = int(lengths[present][0])
    wrong = present & (lengths != p)
    if wrong.any():
        raise fail(func, f"{name} row vectors must all have the same length: the first has {p} values, "
                         f"another {int(lengths[wrong][0])}")
    if p == 0:
        raise fail(func, f"{name} row vectors are empty; give each record's values as a list, e.g. [a, b]")
    values = float_column(func, side.values.slice(offsets[0], offsets[-1] - offsets[0]), name)
    if side.null_count == 0:  # every vector present with p values: the values are the matrix
        return values.reshape(n, p), p
    out = np.full((n, p), np.nan)
    starts = offsets[:-1][present] - offsets[0]
    out[present] = values[starts[:, None] + np.arange(p)]
    return out, p


def _sides(func: str, group: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(X, XM) n x p of one group's list of (x vector, xm vector) structs, NaN where missing."""
    X, p = _vectors(func, single_array(group.field("x")), "x")
    XM, pm = _vectors(func, single_array(group.field("xm")), "xm")
    if p >= 0 and pm >= 0 and p != pm:
        raise fail(func, f"x and xm must have the same number of values per record, got {p} and {pm}")
    if p < 0 or pm < 0:
        return np.empty((0, 0)), np.empty((0, 0))
    return X, XM


def _records(func: str, group: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(X, XM) of the records complete on both sides (listwise exclusion)."""
    X, XM = _sides(func, group)
    keep = ~(np.isnan(X).any(axis=1) | np.isnan(XM).any(axis=1))
    if keep.all():
        return X, XM
    return X[keep], XM[keep]


def aggregate_udf(func: str, compute, out_type: pa.DataType, n_params: int, vectors: bool,
                  renames: dict[str, str] | None = None):
    """Arrow UDF over (reporting name, list of pairs or of row-vector pairs, param1, ...): one result
    per group. compute(X, XM, *params) -> value; no complete record or an undefined measure gives
    NULL. Errors name the reporting name (the numpy layer's parameter names mapped by `renames`)."""
    extract = _records if vectors else _pairs
    stacked = STACKED.get(func)  # many small groups at once (sql/groups.py)

    def udf(name, groups, *params):
        fname = reporting_name(name) or func
        with reported(fname, renames):
            return _aggregate_udf(fname, groups, params)

    def _aggregate_udf(func, groups, params):
        lists = single_array(groups)
        rows = [single_array(p).to_pylist() for p in params]
        if stacked is not None:
            done = grouped(func, lists, rows, _sides if vectors else _pair_sides, compute, stacked, out_type)
            if done is not None:
                return done
        return pa.array(each_group(lists, lambda group: extract(func, group), compute, rows), type=out_type)

    udf.__name__ = f"sdc_{func}"
    positional_signature(udf, 2 + n_params)  # DuckDB checks the callable's arity against the parameter types
    return udf


def each_group(lists: pa.ListArray, extract, compute, params=()) -> list:
    """compute(*extract(group), *that group's parameters) for every group (list) of `lists`, one group
    at a time: None for a NULL group, for one with no complete record (extract gives empty arrays) and
    where the measure is undefined for the data (UndefinedMeasure)."""
    offsets = np.asarray(lists.offsets, dtype=np.int64)
    valid = lists.is_valid().to_numpy(zero_copy_only=False)
    out = []
    for r in range(len(lists)):
        if not valid[r]:
            out.append(None)
            continue
        data = extract(lists.values.slice(offsets[r], offsets[r + 1] - offsets[r]))
        if data[0].shape[0] == 0:
            out.append(None)
            continue
        try:
            out.append(compute(*data, *(p[r] for p in params)))
        except UndefinedMeasure:
            out.append(None)
    return out


def _rank(measure):
    def compute(x, xm, ties, seed):
        return measure(x[:, 0], xm[:, 0], ties=ties, seed=seed)

    return compute


def _plain(measure):
    def compute(x, xm):
        return measure(x, xm)

    return compute


def _idr(x, xm, half_width, max_outside):
    return measures.interval_disclosure(x, xm, half_width, max_outside=max_outside)


def _linkage(x, xm, rank):
    return measures.record_linkage(x, xm, rank)


def _regression(x, xm):
    return measures.regression_utility(x, xm, response=0)


def _score(x, xm, half_width, max_outside, il1s_form):
    return measures.il_dr_score(x, xm, half_width, max_outside=max_outside, il1s_form=il1s_form)


_IL_TYPE = pa.struct([(c, pa.float64()) for c in (*measures.IL_COMPONENTS, "composite")])
_IL_SQL = "STRUCT(" + ", ".join(f"{c} DOUBLE" for c in (*measures.IL_COMPONENTS, "composite")) + ")"
_REG_TYPE = pa.struct([("mse", pa.float64()), ("r2", pa.float64()), ("r2_original", pa.float64())])


def _value_args(params: tuple[Param, ...], fname: str, vectors: bool) -> str:
    """The macro's list(...) of the group's pairs or row-vector pairs, followed by its parameters."""
    x, xm, *rest = params
    if vectors:
        pack = (f"struct_pack(x := __sdc_numeric_list(x, '{fname}', pname := 'x'), "
                f"xm := __sdc_numeric_list(xm, '{fname}', pname := 'xm'))")
    else:
        pack = f"struct_pack(x := __sdc_value(x, '{fname}'), xm := __sdc_value(xm, '{fname}'))"
    return ", ".join([f"'{fname}'", f"list({pack})"] + [f"{p.name}::VARCHAR" for p in rest])


def _aggregate(name, params, returns, group, doc, example, compute, out_type, vectors, scale) -> SqlFunction:
    n_params = len(params) - 2
    renames = {"k": "half_width"} if any(p.name == "half_width" for p in params) else None
    return SqlFunction(
        name=name, kind="aggregate", params=params, returns=returns, group=group, doc=doc, example=example,
        udf=Udf(aggregate_udf(name, compute, out_type, n_params, vectors, renames),
                (_ROWS if vectors else _PAIRS,) + ("VARCHAR",) * n_params, returns),
        body=f"__sdc_{name}({_value_args(params, name, vectors)})",
        scale=scale,
        contract=Contract({"x": "original", "xm": "masked"}),
    )


_SQL_FILE = "sql/10_measures.sql"
_PURE = [
    ("mae", "Mean absolute error: sum |x - xm| / n over the complete pairs."),
    ("mse", "Mean squared error: sum (x - xm)^2 / n over the complete pairs."),
    ("il1", "IL1, mean variation: the mean of |x - xm| / |x| over the complete pairs with x <> 0 "
            "(pairs with x = 0 are left out; NULL if none is left)."),
    ("il1s", "IL1s (Yancey, Winkler & Creecy 2002): sum |x - xm| / (sqrt(2) S) / n, S the sample sd "
             "(n - 1) of the original values of the complete pairs. NULL when S = 0 or n = 1. Scale free."),
    ("il1s_sum", "The un-normalised IL1s that sdcMicro's dUtility reports: sum |x - xm| / (sqrt(2) S), "
                 "i.e. n * il1s. NULL when S = 0 or n = 1."),
    ("sse_sst", "100 * SSE / SST on the column standardised with the original's mean and sd: "
                "100 sum (x - xm)^2 / sum (x - mean x)^2 (the sd cancels). NULL when the original is "
                "constant or n = 1."),
]

_PURE_SCALE = {"mae": 1, "mse": 2, "il1": 0, "il1s": 0, "il1s_sum": 0, "sse_sst": 0}

FUNCTIONS: list[SqlFunction] = [
    SqlFunction(name=name, kind="aggregate", params=(_X, _XM), returns="DOUBLE", group=GROUP_LOSS,
                doc=doc + " Pure SQL, one pass; a pair with a NULL side is left out.",
                example=f"SELECT region, {name}(income, income_m) FROM j GROUP BY region",
                source=_SQL_FILE, scale=_PURE_SCALE[name], contract=Contract({"x": "original", "xm": "masked"}))
    for name, doc in _PURE
]

FUNCTIONS += [
    _aggregate(
        "rank_mae", (_X, _XM, _TIES, _SEED), "DOUBLE", GROUP_LOSS,
        "Rank MAE (rMAE): ranks 1..n of x and of xm with ties broken into unique ranks, sum |r - r'| / n.",
        "SELECT rank_mae(income, income_m) FROM j",
        _rank(measures.rank_mae), pa.float64(), False, 0),
    _aggregate(
        "rank_mse", (_X, _XM, _TIES, _SEED), "DOUBLE", GROUP_LOSS,
        "Rank MSE (rMSE): sum (r - r')^2 / n, ranks as in rank_mae.",
        "SELECT rank_mse(income, income_m) FROM j",
        _rank(measures.rank_mse), pa.float64(), False, 0),
    _aggregate(
        "rank_bounded_mae", (_X, _XM, _TIES, _SEED), "DOUBLE", GROUP_LOSS,
        "Bounded rank MAE (Chaibub Neto) in [0, 1]: ranks 1..n of x and of xm with ties broken into "
        "unique ranks, sum |r - r'| / sum_{k=1..floor(n/2)} 2(n - 2k + 1); 1 for reversed ranks, 0 for n = 1.",
        "SELECT rank_bounded_mae(income, income_m) FROM j",
        _rank(measures.rank_bounded_mae), pa.float64(), False, 0),
    _aggregate(
        "rank_bounded_mse", (_X, _XM, _TIES, _SEED), "DOUBLE", GROUP_LOSS,
        "Bounded rank MSE in [0, 1]: sum (r - r')^2 / sum_{k=1..floor(n/2)} 2(n - 2k + 1)^2; without "
        "ties (1 - Spearman's rho) / 2.",
        "SELECT rank_bounded_mse(income, income_m, ties := 'first') FROM j",
        _rank(measures.rank_bounded_mse), pa.float64(), False, 0),
    _aggregate(
        "il_metrics", (_XV, _XMV), _IL_SQL, GROUP_LOSS,
        "The Domingo-Ferrer & Torra information-loss metrics over several columns: mean variation of "
        "the values (il1), of the means, of the covariance matrix (pairs i <= j), of the variances, "
        "mean absolute error of the correlation matrix (pairs i < j; NULL for one column), and "
        "composite = 100 * mean of the present components.",
        "SELECT (il_metrics([a, b, c], [a_m, b_m, c_m])).composite FROM j",
        _plain(measures.il_metrics), _IL_TYPE, True, 0),
    _aggregate(
        "regression_utility", (_XV, _XMV), "STRUCT(mse DOUBLE, r2 DOUBLE, r2_original DOUBLE)", GROUP_LOSS,
        "Regression utility: least squares of the first value of the row vector on the others (with "
        "intercept) fitted on the masked data, used to predict the original response from the original "
        "predictors; mse of that prediction, r2 of the masked fit and r2_original of the same regression "
        "fitted on the original data (the baseline r2 is read against).",
        "SELECT regression_utility([y, a, b], [y_m, a_m, b_m]) FROM j",
        _regression, _REG_TYPE, True, {"mse": 2, "r2": 0, "r2_original": 0}),
    _aggregate(
        "interval_disclosure",
        (_XV, _XMV, _HALF_WIDTH, _MAX_OUTSIDE),
        "DOUBLE", GROUP_RISK,
        "Interval disclosure risk (sdcMicro dRisk): the share of records whose original values all lie "
        "in the closed intervals xm +- half_width * sd(xm_j), sd the masked column's sample sd (with "
        "max_outside := 1, at most one value outside, as sdcMicro's dRisk counted before 5.5.2; since then "
        "it counts no value outside, the default).",
        "SELECT interval_disclosure([a, b], [a_m, b_m], half_width := 0.05) FROM j",
        _idr, pa.float64(), True, 0),
    _aggregate(
        "sd_interval_disclosure", (_XV, _XMV), "DOUBLE", GROUP_RISK,
        "SD-based interval disclosure: the share of original values inside xm +- p% of the original "
        "column's sample sd, averaged over p = 1..10.",
        "SELECT sd_interval_disclosure([income], [income_m]) FROM j",
        _plain(measures.sd_interval_disclosure), pa.float64(), True, 0),
    _aggregate(
        "rank_interval_disclosure", (_XV, _XMV), "DOUBLE", GROUP_RISK,
        "Rank-based interval disclosure: the share of original values inside the interval of masked "
        "values whose rank differs by less than p% of n from the masked value's, averaged over p = 1..10.",
        "SELECT rank_interval_disclosure([a, b], [a_m, b_m]) FROM j",
        _plain(measures.rank_interval_disclosure), pa.float64(), True, 0),
    _aggregate(
        "record_linkage", (_XV, _XMV, Param("rank", LINKAGE_RANK, "1")),
        "DOUBLE", GROUP_RISK,
        "Distance-based record linkage risk (DDR) on columns standardised with the original's mean and "
        "sample sd: the share of masked records whose own original is the nearest (Euclidean), credit "
        "1/t when t originals tie; rank := 2 for the second nearest.",
        "SELECT record_linkage([a, b, c], [a_m, b_m, c_m]) FROM j",
        _linkage, pa.float64(), True, 0),
    _aggregate(
        "global_linkage", (_XV, _XMV), "DOUBLE", GROUP_RISK,
        "Global one-to-one record linkage (Herranz et al.): the share of masked records matched to their "
        "own original by the assignment of least total distance (Hungarian, O(n^3), n <= 5000).",
        "SELECT global_linkage([a, b], [a_m, b_m]) FROM j",
        _plain(measures.global_linkage), pa.float64(), True, 0),
    _aggregate(
        "il_dr_score", (_XV, _XMV, _HALF_WIDTH, _MAX_OUTSIDE, Param("il1s_form", IL1S_FORM, "'yancey'")),
        "DOUBLE", GROUP_EVAL,
        "The seed's IL-DR score, lower is better: 0.25 * (il_metrics composite + 100 * il1s + "
        "100 * record_linkage + 100 * interval_disclosure(half_width)), every term in percent. "
        "max_outside and il1s_form give the readings of sdcMicro's measures: max_outside := 1 counts "
        "interval disclosure as dRisk did before 5.5.2, il1s_form := 'sdcmicro' doubles the IL1s term as "
        "dUtility did before 5.0.3, il1s_form := 'sum' takes dUtility's summed IL1s since 5.0.3 as the term.",
        "SELECT il_dr_score([a, b, c], [a_m, b_m, c_m]) FROM j",
        _score, pa.float64(), True, 0),
]


_EVAL_ROW = pa.struct([("measure", pa.string()), ("column", pa.string()), ("value", pa.float64()),
                       ("note", pa.string())])


def _evaluate_udf(name, groups, names, masked_names, half_width, seed):
    """Arrow UDF of evaluate_masking: one list of (x vector, xm vector) per call, NULLs as NaN."""
    func = reporting_name(name) or "evaluate_masking"
    with reported(func, {"k": "half_width"}):
        return _evaluate(func, groups, names, masked_names, half_width, seed)


def _evaluate(func, groups, names, masked_names, k, seed):
    lists = single_array(groups)
    names, masked_names = single_array(names).to_pylist(), single_array(masked_names).to_pylist()
    ks, seeds = single_array(k).to_pylist(), single_array(seed).to_pylist()
    offsets = np.asarray(lists.offsets, dtype=np.int64)
    valid = lists.is_valid().to_numpy(zero_copy_only=False)
    out = []
    for r in range(len(lists)):
        if not valid[r]:
            out.append(None)
            continue
        if names[r] != masked_names[r]:
            raise fail(func, f"the original table's columns {names[r]} and the masked table's columns "
                             f"{masked_names[r]} differ; name the columns to compare with columns := [...]")
        X, XM = _sides(func, lists.values.slice(offsets[r], offsets[r + 1] - offsets[r]))
        if X.size == 0:
            out.append(None)
            continue
        rows = measures.evaluate(X, XM, names[r], k=NONNEGATIVE.check(ks[r], func, "half_width"), seed=seeds[r])
        out.append([{"measure": row.measure, "column": row.column, "value": row.value, "note": row.note}
                    for row in rows])
    return pa.array(out, type=pa.list_(_EVAL_ROW))


_EVAL_SQL = 'STRUCT(measure VARCHAR, "column" VARCHAR, value DOUBLE, note VARCHAR)[]'

FUNCTIONS.append(SqlFunction(
    name="evaluate_masking",
    kind="table",
    params=(Param("original", TABLE, doc="the original table (may be qualified: 'schema.table')"),
            Param("masked", TABLE, doc="the masked table, with the same key and value columns"),
            Param("key", ColumnNames(), doc="column(s) identifying a record in both tables"),
            Param("columns", ColumnNames(optional=True), "NULL",
                  doc="the value columns; NULL: every column but the key(s)"),
            _HALF_WIDTH, _SEED),
    returns="table",
    group=GROUP_EVAL,
    doc=("Every measure for a pair of tables joined on a key, as a tidy table (measure, column, value, "
         "note): each per-column measure on every column alone (NULLs excluded pairwise), then the "
         "overall measures on all columns together (column NULL; records complete in every column), "
         "with the IL metrics' components, the regression utility (the first column the response), the "
         f"second-nearest linkage, global linkage (up to {measures.EVALUATE_GLOBAL_MAX_N} complete records) "
         "and the IL-DR score. A "
         "measure undefined for the data has value NULL and the reason in note."),
    example="SELECT * FROM evaluate_masking('people', 'people_masked', 'id', columns := ['income', 'age'])",
    udf=Udf(_evaluate_udf, (_ROWS, "VARCHAR[]", "VARCHAR[]", "VARCHAR", "VARCHAR"), _EVAL_SQL),
    body="FROM query(__sdc_evaluate_sql(original, masked, key, columns, half_width::VARCHAR, seed::VARCHAR))",
    scale=None,  # a table of measures in different units
    contract=Contract({"key": "key", "columns": "original"}, result="report"),
))
