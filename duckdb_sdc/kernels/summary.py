"""Equal-frequency and equal-width intervals from a stratum's (distinct value, count) summary, and
which of them a huge stratum can use: the part of the interval path that needs no Spark (the
out-of-core path on one machine uses it too).

The numpy method (`methods.discretisation`) computes intervals and rounding points from the sorted
column; the summary is that column with its runs of equal values counted, so the functions here do
the same arithmetic in the same order without expanding the runs.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .._numerics import to_unit
from .._validate import is_auto
from ..params import AUTO, INTERVALS, POINT
from ..methods import discretisation as disc
from ..methods.freedman_diaconis import intervals_sorted

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
    the stratum's sorted distinct values and their counts: `discretisation.efd_split`, THE cut rule
    on a (value, count) summary (the one the numpy method applies), its bounds over the distinct
    values turned into positions of the sorted column."""
    ends = np.concatenate(([0], np.cumsum(counts, dtype=np.int64)))
    return ends[disc.efd_split(counts, c)]


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


def _refuse_a_lone_value(func: str, c: int, sizes: np.ndarray) -> None:
    """`discretisation.refuse_a_lone_value` on the summary: c = 'auto' must not leave a set of
    attraction of fewer than AUTO_MIN_SET values (the same refusal, in the same words)."""
    smallest = int(sizes.min()) if sizes.size else disc.AUTO_MIN_SET
    if smallest < disc.AUTO_MIN_SET:
        raise disc.lone_value_error(func, c, smallest)


def summary_points(method: str, params: dict, values: np.ndarray, counts: np.ndarray, func: str):
    """(lows, points) of one stratum: interval t holds the values v with lows[t-1] <= v < lows[t]
    (lows of length c' - 1), rounded to points[t]; as `discretisation._run` computes them: on the
    values scaled by 2^-e (`_numerics.to_unit`), the points scaled back."""
    rep = POINT.check(params.get("representative", "mean"), func, "representative")
    c = INTERVALS.check(params.get("c"), func, "c")
    sorted_v = SortedSummary(values, counts)
    auto = c == AUTO
    c = intervals_sorted(sorted_v) if auto else c
    unit, e = to_unit(values)
    ends = sorted_v.ends.astype(np.int64)
    n = sorted_v.shape[0]
    centre = float(unit[np.searchsorted(ends, (n - 1) // 2, side="right")])
    if method == "efd_round":
        bounds = efd_bounds(values, counts, c)
        if auto:
            _refuse_a_lone_value(func, c, np.diff(bounds))
        points = _summary_points(unit, ends, bounds, disc.POINTS.index(rep), centre)
        return values[np.searchsorted(ends, bounds[1:-1], side="right")], np.ldexp(points, e)
    lo, hi = float(unit[0]), float(unit[-1])
    width, top = disc.ewd_width(func, lo, hi, c)
    bins = disc.ewd_bins(unit, lo, width, top) if width > 0 else np.zeros(values.shape[0])
    occupied, first = np.unique(bins, return_index=True)
    if auto:
        _refuse_a_lone_value(func, c, np.add.reduceat(counts, first))
    if rep == "midpoint" and width > 0:
        points = lo + (occupied + 0.5) * width
    else:
        run_bounds = np.concatenate((first, [values.shape[0]]))
        bounds = np.concatenate(([0], ends))[run_bounds]
        points = _summary_points(unit, ends, bounds.astype(np.int64),
                                 disc.POINTS.index(rep if rep != "midpoint" else "mean"), centre)
    return values[first[1:]], np.ldexp(points, e)


__all__ = ["SUMMARY", "WINDOW", "SortedSummary", "efd_bounds", "route", "summary_points"]
