"""Equal-width and equal-frequency discretisation of strata too large for one task, in Spark SQL.

Intervals are ranges of values (equal values are never split), so once the driver knows each
stratum's intervals and rounding points, every record's masked value is a function of its value
alone: a CASE tree over the intervals' smallest values, evaluated in the JVM, with no shuffle.
The intervals and points are computed exactly as `methods.discretisation` computes them:

* equal frequency (and equal width with c = 'auto' or medians), from the stratum's
  (distinct value, count) summary gathered on the driver (`Options.max_summary_rows` at most): the cut
  rule `efd_bounds` is one call on that summary (swap it for another rule), the Freedman-Diaconis
  count for 'auto' reads the summary as the sorted column, and means are summed over the runs in
  ascending order, centred on the median value, as `_bounds_points` sums the sorted column;
* equal width with a given c and means or midpoints, as `_run_ewd`: the stratum's minimum and
  maximum, each record's bin in Spark SQL, and each bin's sum of (x - min) added in key order by a
  window (a running sum over the bin's records ordered by key, the last one kept), which is the order
  in which the numpy method adds them. Each bin's records pass through one task (streamed).
"""

from __future__ import annotations

import numba as nb
import numpy as np
from pyspark.sql import Window
from pyspark.sql import functions as F

from .._validate import choice, interval_count, is_auto
from ..methods import discretisation as disc
from ..methods.freedman_diaconis import intervals_sorted
from .ordering import S, V, per_stratum, qcol

SUMMARY = "summary"
WINDOW = "window"


def route(method: str, params: dict) -> str | None:
    """How a huge stratum of this rule is discretised in Spark SQL, or None (the method needs the
    stratum in memory: stochastic rounding, k-means, re-sampling)."""
    if method not in ("efd_round", "ewd_round") or str(params.get("stochastic", False)).lower() in ("true", "1"):
        return None
    if method == "ewd_round" and not is_auto(params.get("c")) and params.get("representative", "mean") != "median":
        return WINDOW
    return SUMMARY


class SortedSummary:
    """The sorted column of one stratum given as its distinct values and their counts: an array-like
    (shape, integer indexing) for numpy code written for a sorted array."""

    def __init__(self, values: np.ndarray, counts: np.ndarray):
        self.values = values
        self.counts = counts
        self.ends = np.cumsum(counts)
        self.shape = (int(self.ends[-1]) if counts.shape[0] else 0,)

    def __getitem__(self, i):
        i = int(i)
        if i < 0:
            i += self.shape[0]
        return self.values[int(np.searchsorted(self.ends, i, side="right"))]


def efd_bounds(values: np.ndarray, counts: np.ndarray, c: int) -> np.ndarray:
    """Equal-frequency interval bounds (positions 0 = b_0 < ... < b_c' = n of the sorted column) from
    the stratum's sorted distinct values and their counts: the cut rule of
    `discretisation._efd_bounds`, whose gaps are the run ends. The one place to swap the rule."""
    n = int(counts.sum())
    gaps = np.cumsum(counts)[:-1].astype(np.int64)
    ce = min(c, gaps.shape[0] + 1)
    cuts = gaps[disc._efd_cuts(gaps, n, ce)] if ce > 1 else np.empty(0, np.int64)
    return np.concatenate(([0], cuts, [n])).astype(np.int64)


@nb.njit(cache=True, nogil=True)
def _summary_points(values, ends, bounds, rep, centre):
    """`discretisation._bounds_points` on the sorted column given by its runs (values, run ends): the
    same additions in the same order, without expanding the runs."""
    g = bounds.shape[0] - 1
    out = np.empty(g, np.float64)
    r = 0  # the run holding position bounds[t]
    for t in range(g):
        a = bounds[t]
        b = bounds[t + 1]
        while ends[r] <= a:
            r += 1
        if rep == 0:
            s = 0.0
            q = r
            pos = a
            while pos < b:
                stop = min(ends[q], b)
                d = values[q] - centre
                for _ in range(pos, stop):
                    s += d
                pos = stop
                q += 1
            out[t] = s / (b - a) + centre
        else:
            h = a + (b - a - 1) // 2
            vh = values[np.searchsorted(ends, h, side="right")]
            if rep == 1:
                if (b - a) % 2 == 1:
                    out[t] = (vh - centre) + centre
                else:
                    vh1 = values[np.searchsorted(ends, h + 1, side="right")]
                    out[t] = 0.5 * ((vh - centre) + (vh1 - centre)) + centre
            else:
                out[t] = 0.5 * (values[np.searchsorted(ends, a, side="right")]
                                + values[np.searchsorted(ends, b - 1, side="right")])
    return out


def summary_points(method: str, params: dict, values: np.ndarray, counts: np.ndarray, func: str):
    """(lows, points) of one stratum: interval t holds the values v with lows[t-1] <= v < lows[t]
    (lows of length c' - 1), rounded to points[t]; as `discretisation._run` computes them."""
    rep = choice(func, "representative", params.get("representative", "mean"), disc.POINTS)
    c = params.get("c")
    sorted_v = SortedSummary(values, counts)
    c = intervals_sorted(sorted_v) if is_auto(c) else interval_count(func, c)
    ends = sorted_v.ends.astype(np.int64)
    n = sorted_v.shape[0]
    centre = float(sorted_v[(n - 1) // 2])
    if method == "efd_round":
        bounds = efd_bounds(values, counts, c)
        points = _summary_points(values, ends, bounds, disc.POINTS.index(rep), centre)
        return values[np.searchsorted(ends, bounds[1:-1], side="right")], points
    lo, hi = float(values[0]), float(values[-1])
    width = (hi - lo) / c
    bins = disc._ewd_bins(values, lo, width, c) if width > 0 else np.zeros(values.shape[0], np.int64)
    occupied, first = np.unique(bins, return_index=True)
    if rep == "midpoint" and width > 0:
        points = lo + (occupied + 0.5) * width
    else:
        run_bounds = np.concatenate((first, [values.shape[0]]))
        bounds = np.concatenate(([0], ends))[run_bounds]
        points = _summary_points(values, ends, bounds.astype(np.int64),
                                 disc.POINTS.index(rep if rep != "midpoint" else "mean"), centre)
    return values[first[1:]], points


def lookup(lows: np.ndarray, points: np.ndarray):
    """points[number of lows <= V], as a CASE tree on V."""

    def tree(lo: int, hi: int):
        if lo == hi:
            return F.lit(float(points[lo]))
        mid = (lo + hi) // 2
        return F.when(F.col(V) < F.lit(float(lows[mid])), tree(lo, mid)).otherwise(tree(mid + 1, hi))

    return tree(0, len(lows))


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


def window_table(spark, src, params: dict, key: str, strata: list[int], func: str):
    """Equal width with a given c (means or midpoints): per stratum the minimum and width, and a small
    table (stratum, bin, point) of the occupied bins."""
    c = interval_count(func, params.get("c"))
    rep = choice(func, "representative", params.get("representative", "mean"), disc.POINTS)
    stats = src.where(F.col(V).isNotNull() & F.col(S).isin(strata)).groupBy(S).agg(
        F.min(V).alias("lo"), F.max(V).alias("hi")).collect()
    lo = {r[S]: float(r["lo"]) for r in stats}
    width = {r[S]: (float(r["hi"]) - float(r["lo"])) / c for r in stats}
    bin_expr = bins(lo, width, c)
    bin_col = "__sdc_bin"
    data = src.where(F.col(V).isNotNull() & F.col(S).isin(strata)).select(S, V, qcol(key).alias("k"))
    data = data.withColumn(bin_col, bin_expr)
    if rep == "midpoint":
        occupied = data.select(S, bin_col).distinct().collect()
        table = []
        for r in occupied:
            s, b = r[S], r[bin_col]
            if width[s] > 0:
                table.append((s, b, lo[s] + (b + 0.5) * width[s]))
            else:
                table.append((s, b, lo[s]))
        return bin_expr, table
    offset = per_stratum(F.lit(0.0), {s: F.lit(lo[s]) for s in strata})
    w = (Window.partitionBy(S, bin_col).orderBy("k")
         .rowsBetween(Window.unboundedPreceding, Window.currentRow))
    sums = (data.withColumn("__sdc_run", F.sum(F.col(V) - offset).over(w))
            .groupBy(S, bin_col).agg(F.max_by("__sdc_run", "k").alias("sum"), F.count(F.lit(1)).alias("n"))
            .collect())
    table = [(r[S], r[bin_col], lo[r[S]] + r["sum"] / r["n"]) for r in sums]
    return bin_expr, table


def bins(lo: dict, width: dict, c: int):
    """Each record's bin: min(floor((x - min) / width), c - 1), 0 for a constant stratum."""
    cases = {}
    for s in lo:
        if width[s] > 0:
            t = F.floor((F.col(V) - F.lit(lo[s])) / F.lit(width[s]))
            cases[s] = F.when(t >= c - 1, F.lit(c - 1)).otherwise(t).cast("long")
        else:
            cases[s] = F.lit(0).cast("long")
    return per_stratum(F.lit(None).cast("long"), cases)


__all__ = ["SUMMARY", "WINDOW", "SortedSummary", "efd_bounds", "lookup", "route", "summary_expr",
           "summary_points", "window_table"]
