"""SQL rows for sampling weights: weighted masking (`<method>_weighted`, `<method>_weighted_table`)
and the weighted measures (weighted information loss, estimated population frequencies).

A weighted masking function is the method's list function with a second list, the weights, aligned
with the values: `mdav_round_weighted(list(x ORDER BY id), list(w ORDER BY id), 5)`. The partition is
the method's own (groups of at least k records); the representatives are weighted
(`duckdb_sdc.methods.weights`). They are separate names, not a parameter of the unweighted
functions, so that those keep their signatures and results, and a release method stays a function of
one data argument (`duckdb_sdc.release.methods`); a release names the method and its spec the
weight column (`[source] weight`). The methods that take weights are `masking.weighted_methods()` (a record with a weighted run).
"""

from __future__ import annotations

import inspect

import numpy as np
import pyarrow as pa

from .. import masking
from .._validate import fail, refuse_nonfinite
from ..measures import weights as wm
from ..params import (
    COL_PARAM,
    COLS_PARAM,
    COLUMN_VALUES,
    ROWS_PARAM,
    POSITIVE,
    POOLING_ARGS,
    STRATA_PARAMS,
    TBL_PARAM,
    WEIGHT_COLUMN,
    WEIGHT_LIST,
    WEIGHT_NAME,
    XS_PARAM,
    Param,
)
from ._arrow import data_param, float_values, reported, reporting_name, single_array
from .measures import each_group, float_column
from .progress import group_done
from .keys import KEY_STRATA_PARAM, KEYS_PARAM, NULLS_PARAM
from .function import Contract, SqlFunction, Udf
from ._rows import positional_signature, rows_array, RowsChunk

GROUP = "Sampling weights"

WEIGHTS_PARAM = Param("weights", WEIGHT_LIST)
WEIGHT_PARAM = Param("weight", WEIGHT_NAME)


def _weights_of_row(func: str, wnull, r: int, offsets: np.ndarray, values, valid, n: int, mask,
                    data: str = "xs", what: str = "values"):
    """The weights of row r at the non-NULL values (`mask` of the row's values or records, None:
    all), checked."""
    if wnull is not None and wnull[r]:
        raise fail(func, f"weights must not be NULL when {data} has {what}", "weights")
    a, b = offsets[r], offsets[r + 1]
    if b - a != n:
        raise fail(func, f"weights has {b - a} weights but {data} has {n} {what}; give one weight per "
                         f"{what[:-1]} (list(w ORDER BY id) beside list(x ORDER BY id))", "weights")
    w = values[a:b]
    present = None if valid is None else valid[a:b]
    if mask is not None:
        w = w[mask]
        present = None if present is None else present[mask]
    if present is not None and not present.all():
        raise fail(func, f"weights has a NULL weight where {data} has a {'value' if data == 'xs' else 'complete record'}; "
                         "every one needs a weight (finite, > 0)", "weights")
    return w


def weighted_list_udf(func: str, name: str, n_params: int):
    """An Arrow UDF over (reporting name, xs, param1..param_n, weights): per row, the non-NULL values
    and their weights masked by `masking.mask_weighted(name, ...)`, NULLs left in place. A NULL list
    gives NULL; an empty or all-NULL list comes back unchanged (its weights are not read)."""

    def udf(fname, xs, *rest):
        report = reporting_name(fname) or func
        with reported(report, {"x": data_param(report, "xs"),
                               **({"weights": "weight"} if report.endswith("_table") else {})}):
            return _udf(report, xs, rest[:-1], rest[-1])

    def _udf(report, xs, params, ws):
        lists = single_array(xs)
        rows = [single_array(p).to_pylist() for p in params]
        offsets = np.asarray(lists.offsets, dtype=np.int64)
        base = offsets[0]
        values, valid = float_values(lists.values.slice(base, offsets[-1] - base))
        woff, wvalues, wvalid, wnull = _weight_list(single_array(ws))
        rel = offsets - base
        out = np.zeros(values.shape[0], np.float64)
        row_null = lists.is_null().to_numpy(zero_copy_only=False) if lists.null_count else None
        for r in range(len(lists)):
            if row_null is not None and row_null[r]:
                continue
            a, b = rel[r], rel[r + 1]
            mask = None if valid is None else valid[a:b]
            x = values[a:b] if mask is None else values[a:b][mask]
            if x.shape[0] == 0:
                continue
            refuse_nonfinite(report, "xs", x)
            w = _weights_of_row(report, wnull, r, woff, wvalues, wvalid, b - a, mask)
            result = masking.mask_weighted(name, x, w, [p[r] for p in rows])
            group_done()
            if mask is None:
                out[a:b] = result
            else:
                out[a:b][mask] = result
        out_values = pa.array(out, type=pa.float64(), mask=None if valid is None else ~valid)
        cls = pa.LargeListArray if pa.types.is_large_list(lists.type) else pa.ListArray
        offs = pa.array(rel, type=pa.int64() if pa.types.is_large_list(lists.type) else pa.int32())
        return cls.from_arrays(offs, out_values, mask=None if row_null is None else pa.array(row_null))

    udf.__name__ = f"sdc_{func}"
    udf.__signature__ = inspect.Signature(
        [inspect.Parameter(f"a{i}", inspect.Parameter.POSITIONAL_ONLY) for i in range(3 + n_params)])
    return udf


def _weight_list(wlist):
    """(offsets from 0, float values, validity or None, NULL rows or None) of a chunk of weights lists."""
    woff = np.asarray(wlist.offsets, dtype=np.int64)
    wvalues, wvalid = float_values(wlist.values.slice(woff[0], woff[-1] - woff[0]))
    wnull = wlist.is_null().to_numpy(zero_copy_only=False) if wlist.null_count else None
    return woff - woff[0], wvalues, wvalid, wnull


def weighted_rows_udf(func: str, name: str, n_params: int):
    """An Arrow UDF over (reporting name, rows, param1..param_n, weights): per row, the complete records
    (no NULL attribute) and their weights masked by `masking.mask_weighted(name, ...)`; a record with
    a NULL attribute takes no part and comes back NULL (its weight is not read)."""

    def udf(fname, rows, *rest):
        report = reporting_name(fname) or func
        renames = {"X": data_param(report, "rows"), **({"weights": "weight"} if report.endswith("_table") else {})}
        with reported(report, renames):
            chunk = RowsChunk(report, rows)
            params = [single_array(p).to_pylist() for p in rest[:-1]]
            woff, wvalues, wvalid, wnull = _weight_list(single_array(rest[-1]))
            results: list = [None] * chunk.n_rows
            for r in range(chunk.n_rows):
                group = None if chunk.is_null(r) else chunk.group(r)
                if group is None:
                    continue
                n = int(chunk.rec_off[r + 1] - chunk.rec_off[r])
                w = _weights_of_row(report, wnull, r, woff, wvalues, wvalid, n, group.complete, "rows", "records")
                results[r] = (group.complete, masking.mask_weighted(name, group.X, w, [p[r] for p in params]))
                group_done()
            return rows_array(chunk, results)

    udf.__name__ = f"sdc_{func}"
    positional_signature(udf, 3 + n_params)
    return udf


def _records_rows(name: str) -> list[SqlFunction]:
    """The weighted list function and table form of the records method `name` (mdav_multi_round)."""
    wname = masking.weighted_name(name)
    tail = masking.METHODS[name].params
    args = ", ".join(f"{p.name}::VARCHAR" for p in tail)
    list_fn = SqlFunction(
        name=wname, kind="scalar", params=(ROWS_PARAM, WEIGHTS_PARAM, *tail), returns="DOUBLE[][]", group=GROUP,
        doc=(f"{name} with sampling weights: the same clusters as {name} (at least k records each, "
             "unweighted), every record replaced by its cluster's weighted attribute means. Equal weights give "
             f"{name}'s result bit for bit. Weights aligned with rows, finite and > 0 for every complete record; a "
             "record with a NULL attribute takes no part and comes back NULL (its weight is not read)."),
        example=(f"SELECT {wname}(list([income, savings] ORDER BY id), list(w ORDER BY id), 5) "
                 "FROM weighted_people WHERE income IS NOT NULL"),
        udf=Udf(weighted_rows_udf(wname, name, len(tail)),
                ("DOUBLE[][]",) + ("VARCHAR",) * len(tail) + ("DOUBLE[]",), "DOUBLE[][]"),
        body=(f"__sdc_{wname}('{wname}', __sdc_numeric_rows(rows, '{wname}'), {args}, "
              f"__sdc_numeric_list(weights, '{wname}', pname := 'weights'))"),
        scale=1,
        contract=Contract({"rows": "original", "weights": "weights"}),
    )
    table_fn = SqlFunction(
        name=f"{wname}_table", kind="table", params=(TBL_PARAM, COLS_PARAM, WEIGHT_PARAM, *tail, *STRATA_PARAMS),
        returns="table", group=GROUP,
        doc=(f"Table form of {wname}: the rows of tbl with the columns cols replaced by their clusters' weighted "
             "means (weights from column weight, kept as it is; a row with a NULL in any of cols gets NULL in "
             f"all), optionally per stratum, records in the order of the rows' whole content as in {name}_table."),
        example=f"SELECT * FROM {wname}_table('weighted_people', ['income', 'savings'], 'w', 5, strata := 'region')",
        body=f"FROM query(__sdc_mask_columns_weighted_sql('{wname}', tbl, cols, weight, [{args}], strata, {POOLING_ARGS}))",
        scale=1,
        contract=Contract({"cols": "original", "weight": "weights"}, result="rows"),
    )
    return [list_fn, table_fn]


def _masking_rows(name: str) -> list[SqlFunction]:
    """The weighted list function and table form of masking method `name` (a column method)."""
    wname = masking.weighted_name(name)
    tail = masking.METHODS[name].params
    seeded = any(p.name == "seed" for p in tail)
    plain = tuple(p for p in tail if p.name != "seed")
    args = ", ".join(f"{p.name}::VARCHAR" for p in tail)
    list_fn = SqlFunction(
        name=wname, kind="scalar", params=(XS_PARAM, WEIGHTS_PARAM, *tail), returns="DOUBLE[]", group=GROUP,
        doc=(f"{name} with sampling weights: the same partition as {name} (groups of records, unweighted), "
             "each value replaced by its group's weighted mean (or weighted median: the value where the "
             "cumulative weight reaches half, the midpoint of two values when it is exactly half). Equal weights "
             f"give {name}'s result bit for bit. Weights aligned with xs, finite and > 0 where xs is not NULL; "
             "NULLs stay NULL in place. Order both lists by the same key."),
        example=(f"SELECT {wname}(list(income ORDER BY id), list(w ORDER BY id), "
                 f"{'5' if tail[0].name == 'k' else '3'}) FROM weighted_people"),
        udf=Udf(weighted_list_udf(wname, name, len(tail)), ("DOUBLE[]",) + ("VARCHAR",) * len(tail) + ("DOUBLE[]",),
                "DOUBLE[]"),
        body=(f"__sdc_{wname}('{wname}', __sdc_numeric_list(xs, '{wname}'), {args}"
              f"{', ' if args else ''}__sdc_numeric_list(weights, '{wname}', pname := 'weights'))"),
        scale=1,
        contract=Contract({"xs": "original", "weights": "weights"}),
    )
    targs = ", ".join(f"{p.name}::VARCHAR" for p in plain)
    seed = ", seed := seed" if seeded else ""
    table_fn = SqlFunction(
        name=f"{wname}_table", kind="table", params=(TBL_PARAM, COL_PARAM, WEIGHT_PARAM, *tail, *STRATA_PARAMS),
        returns="table", group=GROUP,
        doc=(f"Table form of {wname}: the rows of tbl with column col replaced by its masked values, the "
             "representatives weighted by column weight (kept as it is), optionally per stratum. Each "
             "stratum's rows reach the method in the order of their whole content, as in "
             f"{name}_table. Rows come back in no particular order."),
        example=f"SELECT * FROM {wname}_table('weighted_people', 'income', 'w', {'5' if tail[0].name == 'k' else '3'})",
        body=(f"FROM query(__sdc_mask_weighted_sql('{wname}', tbl, col, weight, [{targs}], strata, "
              f"seeded := {'true' if seeded else 'false'}{seed}, {POOLING_ARGS}))"),
        scale=1,
        contract=Contract({"col": "original", "weight": "weights"}, result="rows"),
    )
    return [list_fn, table_fn]


# ---------------------------------------------------------------------------------------------
# weighted measures

_X = Param("x", COLUMN_VALUES, doc="original value (a column)")
_XM = Param("xm", COLUMN_VALUES, doc="masked value of the same record")
_W = Param("w", WEIGHT_COLUMN)
_TRIPLES = "STRUCT(x DOUBLE, xm DOUBLE, w DOUBLE)[]"


def _triples(func: str, group: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, xm, w) of the records whose x and xm are both present; a NULL weight there is refused."""
    x = float_column(func, group.field("x"), "x")
    xm = float_column(func, group.field("xm"), "xm")
    warr = group.field("w")
    w = float_column(func, warr, "w")
    keep = ~(np.isnan(x) | np.isnan(xm))
    if np.isnan(w[keep]).any():
        raise fail(func, "w has a NULL weight where x and xm have values; every record needs a weight "
                         "(finite, > 0)", "w")
    return x[keep], xm[keep], w[keep]


def weighted_aggregate_udf(func: str, compute):
    """Arrow UDF over (reporting name, list of (x, xm, w) structs): one value per group, NULL when no
    record has both x and xm or the measure is undefined for the data."""

    def udf(name, groups):
        fname = reporting_name(name) or func
        with reported(fname):
            out = each_group(single_array(groups), lambda group: _triples(fname, group), compute)
            return pa.array(out, type=pa.float64())

    udf.__name__ = f"sdc_{func}"
    positional_signature(udf, 2)
    return udf


def _measure(name: str, doc: str, compute, scale: int) -> SqlFunction:
    pack = (f"struct_pack(x := __sdc_value(x, '{name}'), xm := __sdc_value(xm, '{name}'), "
            f"w := __sdc_value(w, '{name}'))")
    return SqlFunction(
        name=name, kind="aggregate", params=(_X, _XM, _W), returns="DOUBLE", group=GROUP, doc=doc,
        example=f"SELECT {name}(income, income_m, w) FROM weighted_j",
        udf=Udf(weighted_aggregate_udf(name, compute), (_TRIPLES,), "DOUBLE"),
        body=f"__sdc_{name}('{name}', list({pack}))", scale=scale,
        contract=Contract({"x": "original", "xm": "masked", "w": "weights"}))


_PAIRS_NOTE = (" A record with a NULL x or xm is left out; a NULL weight beside both is an error. NULL when no "
               "record is left.")

MEASURES = [
    _measure("weighted_mae", "Weighted mean absolute error: sum w |x - xm| / sum w (sampling weights w > 0; "
             "equal weights give mae)." + _PAIRS_NOTE, lambda x, xm, w: wm.weighted_mae(x, xm, w), 1),
    _measure("weighted_mse", "Weighted mean squared error: sum w (x - xm)^2 / sum w (equal weights give mse)."
             + _PAIRS_NOTE, lambda x, xm, w: wm.weighted_mse(x, xm, w), 2),
    _measure("weighted_il1s", "Weighted IL1s: sum w |x - xm| / (sqrt(2) S_w) / sum w, S_w the weighted sd "
             "of x with the reliability-weights correction, S_w^2 = sum w (x - m_w)^2 / (V1 - V2 / V1), "
             "V1 = sum w, V2 = sum w^2 (equal weights give il1s; NULL when x is constant or one record is "
             "left)." + _PAIRS_NOTE, lambda x, xm, w: wm.weighted_il1s(x, xm, w), 0),
]

_THRESHOLD = Param("threshold", POSITIVE, doc="a record is at risk when its estimated population frequency F_k is "
                                              "below this, > 0", example="100")
_NULLS = (" nulls := 'any' (default): a NULL key matches any value of its key, as sdcMicro's freqCalc counts a "
          "missing value (every record takes part, so every weight is read); 'category': NULL is one more value. "
          "Strata are counted apart. Weights must be finite and > 0 (NULL is an error; up to five offending ones are "
          "named); an empty table is refused.")

RISK = [
    SqlFunction(
        name="population_frequencies_table", kind="table",
        params=(TBL_PARAM, KEYS_PARAM, WEIGHT_PARAM, KEY_STRATA_PARAM, NULLS_PARAM), returns="table",
        group=GROUP,
        doc=("The rows of tbl with two columns added: sample_fk, the number of records matching the row's "
             "combination of keys (sdcMicro's fk), and population_fk, the sum of their sampling weights, the "
             "estimated population frequency of the combination (sdcMicro's Fk, freqCalc)." + _NULLS +
             " A table that already has a column named sample_fk or population_fk is refused."),
        example="SELECT * FROM population_frequencies_table('weighted_people', ['region', 'age'], 'w')",
        body=("FROM query(__sdc_population_frequencies_sql('population_frequencies_table', tbl, keys, weight, strata, "
              "nulls))"),
        scale=None,  # the table's own columns scale with the data, the frequencies do not
        contract=Contract({"keys": "keys", "weight": "weights"}, result="rows")),
    SqlFunction(
        name="weighted_risk_summary", kind="table",
        params=(TBL_PARAM, KEYS_PARAM, WEIGHT_PARAM, _THRESHOLD, KEY_STRATA_PARAM, NULLS_PARAM),
        returns="table", group=GROUP,
        doc=("One row (one per stratum, strata first, with strata) summarising the re-identification risk of the "
             "key combinations with sampling weights: records, combinations (distinct combinations of key values, "
             "NULL a value), sample_uniques (records with fk = 1), at_risk (records whose estimated population "
             "frequency F_k, the sum of the weights of the records matching its keys, is below threshold), "
             "share_at_risk (at_risk / records) and expected_reidentifications, sum over records of 1 / F_k (the "
             "naive estimate of the number of correct matches an intruder would make; global_risk_summary gives "
             "sdcMicro's model-based global risk). Keys, weights and NULLs as in population_frequencies_table."),
        example="SELECT * FROM weighted_risk_summary('weighted_people', ['region', 'age'], 'w', 100)",
        body=("FROM query(__sdc_risk_summary_sql('weighted_risk_summary', tbl, keys, weight, "
              "__sdc_check_number(threshold, 'weighted_risk_summary', 'threshold', 0, NULL), strata, nulls))"),
        scale=0,
        contract=Contract({"keys": "keys", "weight": "weights"}, result="report")),
]

FUNCTIONS: list[SqlFunction] = [row for name in masking.weighted_methods()
                                for row in (_masking_rows(name) if masking.METHODS[name].data == masking.COLUMN
                                            else _records_rows(name))] + MEASURES + RISK
