"""Equal-width and equal-frequency discretisation of strata too large for one task, in Spark SQL.

Intervals are ranges of values (equal values are never split), so once the driver knows each
stratum's intervals and rounding points, every record's masked value is a function of its value
alone: a CASE tree over the intervals' smallest values, evaluated in the JVM, with no shuffle.
The intervals and points are computed exactly as `methods.discretisation` computes them:

* equal frequency (and equal width with c = 'auto' or medians), from the stratum's
  (distinct value, count) summary gathered on the driver (`Options.max_summary_rows` at most): the cut
  rule `efd_bounds` (`discretisation.efd_split`) is one call on that summary (swap it for another rule), the Freedman-Diaconis
  count for 'auto' reads the summary as the sorted column, and means are summed over the runs in
  ascending order, centred on the median value, as `_bounds_points` sums the sorted column;
* equal width with a given c and means or midpoints, as `_run_ewd`: the stratum's minimum and
  maximum, each record's bin in Spark SQL, and each bin's sum of (x - min) added in key order by a
  window (a running sum over the bin's records ordered by key, the last one kept), which is the order
  in which the numpy method adds them. Each bin's records pass through one task (streamed).
"""

from __future__ import annotations

import numpy as np
from pyspark.sql import Window
from pyspark.sql import functions as F

from .._numerics import exponent
from ..params import INTERVALS, POINT
from ..methods import discretisation as disc
from .ordering import S, V, per_stratum, qcol, qsql, sql_literal, sql_tree
from ..kernels.summary import summary_points

def lookup(lows: np.ndarray, points: np.ndarray):
    """points[number of lows <= V], as a CASE tree on V (SQL text, parsed once: see `ordering`)."""
    texts = [sql_literal(float(x)) for x in (*lows, *points)]
    if any(t is None for t in texts):  # the summaries hold finite values only (refused before)
        raise RuntimeError(f"duckdb_sdc.spark: a summary point that is not finite: {lows}, {points}")
    tests = [f"{qsql(V)} < {t}" for t in texts[:len(lows)]]
    return F.expr(sql_tree(tests, lambda i: texts[len(lows) + i]))


def summary_expr(src, method: str, params: dict, strata: list[int], limit: int, func: str):
    """The masked value of a record (per stratum), from the gathered summaries."""
    rows = (src.where(F.col(V).isNotNull() & F.col(S).isin(strata)).groupBy(S, V).count()
            .limit(limit + 1).toArrow())
    if rows.num_rows > limit:
        return None
    s_col = rows.column(S).to_numpy(zero_copy_only=False)
    v_col = rows.column(V).to_numpy(zero_copy_only=False)
    n_col = rows.column("count").to_numpy(zero_copy_only=False)
    cases = {}
    for s in strata:
        idx = np.flatnonzero(s_col == s)
        order = np.argsort(v_col[idx], kind="stable")
        values = np.ascontiguousarray(v_col[idx][order], dtype=np.float64)
        counts = np.ascontiguousarray(n_col[idx][order], dtype=np.int64)
        lows, points = summary_points(method, params, values, counts, func)
        cases[s] = lookup(lows, points)
    return per_stratum(F.lit(None).cast("double"), cases)


def _times_power_of_two(x, e: int):
    """x * 2^e in Spark SQL, exact as np.ldexp (two factors, so neither overflows for any e of a double)."""
    half = e // 2
    return x * F.lit(float(np.ldexp(1.0, half))) * F.lit(float(np.ldexp(1.0, e - half)))


def window_table(spark, src, params: dict, key: str, strata: list[int], func: str):
    """Equal width with a given c (means or midpoints): per stratum the minimum and width, and a small
    table (stratum, bin, point) of the occupied bins. As `discretisation._run`, on the values scaled by
    2^-e (`_numerics.to_unit`; e from the stratum's extremes), the points scaled back."""
    c = INTERVALS.check(params.get("c"), func, "c")  # a given c (the caller routes 'auto' elsewhere)
    rep = POINT.check(params.get("representative", "mean"), func, "representative")
    stats = src.where(F.col(V).isNotNull() & F.col(S).isin(strata)).groupBy(S).agg(
        F.min(V).alias("lo"), F.max(V).alias("hi")).collect()
    e = {r[S]: exponent(np.array([r["lo"], r["hi"]], np.float64)) for r in stats}
    lo = {r[S]: float(np.ldexp(r["lo"], -e[r[S]])) for r in stats}
    width, top = {}, float(c - 1)
    for r in stats:
        width[r[S]], top = disc.ewd_width(func, lo[r[S]], float(np.ldexp(r["hi"], -e[r[S]])), c)
    unit = per_stratum(F.lit(None).cast("double"), {s: _times_power_of_two(F.col(V), -e[s]) for s in e})
    bin_expr = bins(unit, lo, width, c)
    bin_col, unit_col = "__sdc_bin", "__sdc_unit"
    data = src.where(F.col(V).isNotNull() & F.col(S).isin(strata)).select(S, unit.alias(unit_col), qcol(key).alias("k"))
    data = data.withColumn(bin_col, bins(F.col(unit_col), lo, width, c))
    if rep == "midpoint":
        occupied = data.select(S, bin_col).distinct().collect()
        table = []
        for r in occupied:
            s, b = r[S], r[bin_col]
            point = lo[s] + (b + 0.5) * width[s] if width[s] > 0 else lo[s]
            table.append((s, b, float(np.ldexp(point, e[s]))))
        return bin_expr, table
    offset = per_stratum(F.lit(0.0), {s: F.lit(lo[s]) for s in strata if s in lo})
    w = (Window.partitionBy(S, bin_col).orderBy("k")
         .rowsBetween(Window.unboundedPreceding, Window.currentRow))
    sums = (data.withColumn("__sdc_run", F.sum(F.col(unit_col) - offset).over(w))
            .groupBy(S, bin_col).agg(F.max_by("__sdc_run", "k").alias("sum"), F.count(F.lit(1)).alias("n"))
            .collect())
    table = [(r[S], r[bin_col], float(np.ldexp(lo[r[S]] + r["sum"] / r["n"], e[r[S]]))) for r in sums]
    return bin_expr, table


def bins(unit, lo: dict, width: dict, c: int):
    """Each record's bin from its value scaled to the unit range (`unit`): min(floor((u - min) / width),
    c - 1), 0 for a constant stratum."""
    cases = {}
    for s in lo:
        if width[s] > 0:
            t = F.floor((unit - F.lit(lo[s])) / F.lit(width[s]))
            cases[s] = F.when(t >= c - 1, F.lit(c - 1)).otherwise(t).cast("long")
        else:
            cases[s] = F.lit(0).cast("long")
    return per_stratum(F.lit(None).cast("long"), cases)


__all__ = ["bins", "lookup", "summary_expr", "window_table"]
