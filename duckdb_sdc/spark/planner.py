"""The driver's plan for strata too large for one task: buckets of the sorted values, cut only where
the method allows, with exact global offsets, found without sorting the column.

Passes over the rule's records (never gathered):

1. a sample (`DataFrame.sampleBy`, about `Options.sample_rows` records per huge stratum), sorted on the
   driver, gives approximate boundaries: one per `Options.bucket_rows` records;
2. one counting pass: every record is given the number of its interval between sample records
   (`ordering.Order.ranked`, a binary search), the intervals are counted (so every interval's exact
   global offset is known), their smallest and largest values give the stratum's binary exponent
   (the scale the numpy methods work at) and the records of a few small intervals are collected: the guards around
   each boundary (a few thousand records) and the brackets that hold the order statistics the method
   needs (the median, which centres the means; quantiles for k = 'auto'), six standard deviations of
   the sample's rank error wide;
3. only if a needed position fell outside its bracket (probability about 1e-9), that interval is
   collected in one more pass.

Then the method's parameters are resolved and validated as the numpy function would (same messages),
and in each guard the first position at which `StratumPlan.cut_allowed` holds becomes a cut: the
record there is the bucket's first record, compared with records in the main pass by `ranked`.
A guard without an allowed position (a long run of ties MDAV may not split) drops its boundary, so
that bucket holds more records.
"""

from __future__ import annotations

import bisect
import logging
import math
import time
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import functions as F

from .. import masking
from .._numerics import exponent
from .._validate import fail, is_auto, refuse_nonfinite
from ..params import AUTO, EPSILON, GROUP_SIZE_AUTO, REPRESENTATIVE, SEED
from ..methods import dp as np_dp
from ..methods.freedman_diaconis import group_size_sorted
from .kernel import SPLIT, BucketTask, key_order
from .ordering import S, V, Order, qcol
from ..kernels.positional import Bucket, DpPlan, LaplacePlan, MdavPlan, RankingPlan, bucket_order
from .stratum import stratum_seed

INTERVAL = "__sdc_i"
_RV, _RK, _RN, _LO, _HI = "__sdc_rv", "__sdc_rk", "__sdc_rn", "__sdc_lo", "__sdc_hi"
LOG = logging.getLogger("duckdb_sdc.spark")
SIGMAS = 6.0


@dataclass(frozen=True)
class Options:
    """Sizes of the distributed path (see docs/spark.md).

    bucket_rows: records per bucket of a huge stratum (what one task holds in memory); a stratum of a
    position-based method with more non-NULL values is split.
    max_stratum_rows: the largest stratum a method that needs the whole stratum in memory may get;
    beyond it the release is refused (naming the stratum and the limit).
    max_summary_rows: the largest (distinct value, count) summary the driver gathers for equal-frequency
    discretisation (and equal width with 'auto' or medians) of a huge stratum.
    sample_rows: sample records per huge stratum for the boundaries.
    guard_rows: records collected on each side of a boundary to find an allowed cut."""
    bucket_rows: int = 1_000_000
    max_stratum_rows: int = 10_000_000
    max_summary_rows: int = 10_000_000
    sample_rows: int = 200_000
    guard_rows: int = 400
    seed: int = 1  # of the sample (the sample moves boundaries, never results)


@dataclass
class _Intervals:
    """The intervals of one stratum between sample records, after the counting pass."""
    bounds: list  # sample records (value, key) that start intervals 1..L
    collect: list[bool]  # per interval 0..L
    exponent: int = 0  # the stratum's binary exponent (`_numerics.exponent` of its smallest and largest value)
    counts: list[int] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)  # global position of each interval's first record
    records: dict = field(default_factory=dict)  # interval -> its records sorted (collected ones)

    def locate(self, position: int) -> int:
        return bisect.bisect_right(self.offsets, position) - 1

    def record(self, position: int):
        i = self.locate(position)
        recs = self.records.get(i)
        return None if recs is None else recs[position - self.offsets[i]]


class _Positions:
    """The sorted values of one stratum as an array-like (shape and integer indexing), answered from
    the collected intervals, so that numpy code written for a sorted array (Freedman-Diaconis) runs on
    it unchanged; a position outside them raises _Missing."""

    def __init__(self, iv: _Intervals, n: int):
        self.iv = iv
        self.shape = (n,)

    def __getitem__(self, i):
        i = int(i)
        if i < 0:
            i += self.shape[0]
        rec = self.iv.record(i)
        if rec is None:
            raise _Missing(i)
        return rec[0]


class _Missing(Exception):
    def __init__(self, position: int):
        self.position = position


@dataclass(frozen=True)
class _Sample:
    """A huge stratum's sample in the stratum's order: values (numpy) and keys (Arrow); only the few
    records that become boundaries are turned into Python objects."""
    values: np.ndarray
    keys: pa.Array

    def __len__(self) -> int:
        return self.values.shape[0]

    def record(self, j: int) -> tuple:
        return float(self.values[j]), self.keys[j].as_py()


def _sample_index_ranges(m: int, n: int, p: float) -> tuple[int, int]:
    """Sample indices around the sample point estimating the p-quantile position, wide enough that the
    true order statistic lies inside with probability about 1 - 1e-9."""
    half = math.ceil(SIGMAS * math.sqrt(max(m * p * (1 - p), 1.0))) + 2
    centre = int(p * (m - 1))
    return max(0, centre - half), min(m, centre + half + 2)


def _quantile_needs(auto: bool) -> list[float]:
    return [0.0, 0.25, 0.5, 0.75, 1.0] if auto else [0.5]


def plan_huge_strata(src, *, method: str, params: dict, key: str, order: Order, strata: dict[int, int],
                     options: Options, func: str, median_tie_split: bool):
    """Sample and count the huge strata `strata` (index -> number of non-NULL values) of a rule whose
    records in `src` carry S and V. Returns (order with the tie thresholds, per stratum the sorted
    sample and its intervals)."""
    ids = sorted(strata)
    fractions = {s: min(1.0, options.sample_rows / strata[s]) for s in ids}
    rows = (src.where(F.col(S).isin(ids) & F.col(V).isNotNull()).select(S, V, qcol(key).alias("k"))
            .sampleBy(S, fractions, options.seed).toArrow())
    s_col = rows.column(S).to_numpy(zero_copy_only=False)
    v_col = rows.column(V).to_numpy(zero_copy_only=False)
    parts = {}  # stratum -> (values, keys as Arrow, their key order): sorted by numpy, not by Python tuples
    for s in ids:
        idx = np.flatnonzero(s_col == s)
        keys = rows.column("k").take(pa.array(idx))
        parts[s] = (v_col[idx], keys, key_order(keys))
    splits = dict(order.tie_split)
    if median_tie_split:
        for s, (v, _, _) in parts.items():
            if v.shape[0]:
                splits[s] = float(np.sort(v)[(v.shape[0] - 1) // 2])
    order = Order(order.key, splits)
    samples = {}
    for s, (v, keys, by_key) in parts.items():  # in the order of `order.sort_key(s)`
        perm = bucket_order(v, by_key, order.split_of(s))
        samples[s] = _Sample(v[perm], keys.take(pa.array(perm)))
    return order, samples


def count_pass(src, *, key: str, order: Order, strata: dict[int, int], samples: dict, options: Options,
               quantiles: list[float]) -> dict[int, _Intervals]:
    """The counting pass: intervals between sample records, counted; guards and quantile brackets
    collected."""
    layout = {}
    for s, n in strata.items():
        sample = samples[s]
        m = len(sample)
        buckets = max(1, math.ceil(n / options.bucket_rows))
        cut_idx = sorted({round(b * m / buckets) for b in range(1, buckets)} - {0, m})
        per_point = n / max(m, 1)
        h = max(1, math.ceil(options.guard_rows / max(per_point, 1e-9)))
        ranges = [(max(0, j - h), min(m, j + h)) for j in cut_idx]
        ranges += [_sample_index_ranges(m, n, p) for p in quantiles]
        points = sorted({j for r in ranges for j in r if 0 < j < m} | set(cut_idx))
        bounds = [sample.record(j) for j in points]
        # interval i holds the records from sample record edges[i] (interval 0: from -inf) up to
        # edges[i + 1] (the last: to +inf); a collect range [a, b) of sample indices covers whole intervals
        edges = [0, *points, m]
        collect = [any(a <= lo and hi <= b for a, b in ranges) for lo, hi in zip(edges[:-1], edges[1:])]
        layout[s] = _Intervals(bounds=bounds, collect=collect)
        layout[s].cut_points = cut_idx
        layout[s].point_index = points
    base, wanted = 0, []
    for s in sorted(layout):
        iv = layout[s]
        wanted += [base + i for i, c in enumerate(iv.collect) if c]
        iv.base = base
        base += len(iv.bounds) + 1
    # One aggregate with fixed-width buffers (Spark's hash aggregate, partial on the map side): a
    # record of a collected interval is its own group (its value and key in the grouping), any other
    # record only counts for its interval. collect_list would make it an object aggregate, which
    # Spark sorts all rows for once there are more than 128 groups (50M rows: 106 s against 7 s).
    wanted_col = F.col(INTERVAL).isin(wanted or [-2])
    records = src.where(F.col(S).isin(list(strata)) & F.col(V).isNotNull()).select(S, V, qcol(key))
    table = (order.ranked(records, INTERVAL, {s: iv.bounds for s, iv in layout.items()},
                          {s: iv.base for s, iv in layout.items()}, F.lit(-1))
             .groupBy(F.col(INTERVAL).cast("long").alias(INTERVAL), F.when(wanted_col, F.col(V)).alias(_RV),
                      F.when(wanted_col, qcol(key)).alias(_RK))
             .agg(F.count(F.lit(1)).alias(_RN), F.min(V).alias(_LO), F.max(V).alias(_HI))
             .toArrow())
    per_interval = table.group_by(INTERVAL).aggregate([(_RN, "sum"), (_LO, "min"), (_HI, "max")])
    got = {i: (int(n), lo, hi) for i, n, lo, hi in zip(*(per_interval.column(c).to_pylist() for c in
                                                         (INTERVAL, f"{_RN}_sum", f"{_LO}_min", f"{_HI}_max")))}
    records = table.filter(pc.is_in(table.column(INTERVAL), pa.array(wanted or [-2], pa.int64())))
    interval_of = records.column(INTERVAL).to_numpy(zero_copy_only=False)
    for s, iv in layout.items():
        size = len(iv.bounds) + 1
        mine = [got[iv.base + i][1:] for i in range(size) if iv.base + i in got]
        iv.exponent = exponent([min(lo for lo, _ in mine), max(hi for _, hi in mine)]) if mine else 0
        iv.counts = [got.get(iv.base + i, (0,))[0] for i in range(size)]
        iv.offsets = np.concatenate(([0], np.cumsum(iv.counts)[:-1])).astype(np.int64).tolist()
        for i in range(size):
            if iv.collect[i]:
                iv.records[i] = _sorted_records(records, np.flatnonzero(interval_of == iv.base + i),
                                                order.split_of(s))
        if sum(iv.counts) != strata[s]:
            raise RuntimeError(f"duckdb_sdc.spark: the counting pass found {sum(iv.counts)} values in stratum "
                               f"{s}, the strata pass {strata[s]}")
    return layout


def _sorted_records(records, idx: np.ndarray, tie_split: float) -> list:
    """The (value, key) records at rows `idx` of the counting pass's table, each repeated its count
    (records equal in value and key are one group there), in the stratum's order (`bucket_order`)."""
    idx = np.repeat(idx, records.column(_RN).to_numpy(zero_copy_only=False)[idx])
    v = records.column(_RV).to_numpy(zero_copy_only=False)[idx]
    keys = records.column(_RK).take(pa.array(idx, pa.int64()))
    perm = bucket_order(v, key_order(keys), tie_split)
    return list(zip(v[perm].tolist(), keys.take(pa.array(perm, pa.int64())).to_pylist()))


def fetch_intervals(src, *, key: str, order: Order, layout: dict[int, _Intervals], missing: dict[int, set[int]]):
    """Collect the intervals holding the positions `missing` (stratum -> positions)."""
    wanted = [layout[s].base + layout[s].locate(p) for s, positions in missing.items() for p in positions]
    records = src.where(F.col(S).isin(list(missing)) & F.col(V).isNotNull())
    # the interval before the key is renamed: it compares keys
    rows = (order.ranked(records, INTERVAL, {s: layout[s].bounds for s in missing},
                         {s: layout[s].base for s in missing}, F.lit(-1))
            .where(F.col(INTERVAL).isin(wanted))
            .select(INTERVAL, V, qcol(key).alias("k"))
            .groupBy(INTERVAL).agg(F.collect_list(F.struct(F.col(V).alias("v"), F.col("k"))).alias("r"))
            .collect())
    by_id = {r[INTERVAL]: r["r"] for r in rows}
    for s, positions in missing.items():
        iv = layout[s]
        for p in positions:
            i = iv.locate(p)
            recs = [(r["v"], r["k"]) for r in by_id.get(iv.base + i, [])]
            recs.sort(key=order.sort_key(s))
            iv.records[i] = recs


def _with_positions(src, key, order, layout, s, n, compute):
    """Run compute(array-like of the sorted values) and collect missing positions until it succeeds."""
    while True:
        try:
            return compute(_Positions(layout[s], n))
        except _Missing as miss:
            fetch_intervals(src, key=key, order=order, layout=layout, missing={s: {miss.position}})


# ---------------------------------------------------------------------------------------------
# per method


POSITIONAL = masking.capable(masking.SPARK_BUCKETS)  # the methods whose records declare Spark buckets


def _stratum_plan(src, *, method, params, key, order, layout, s, n, func, column=None):
    """Resolve and validate the method's parameters on stratum s (n values), as the numpy function
    does, and return its StratumPlan. A seed becomes the stratum's, `stratum.stratum_seed(seed,
    column, s)`, as a whole stratum's does (without `column`: the seed as given)."""
    if method in ("ranking_round", "mdav_round"):
        k = GROUP_SIZE_AUTO.check(params["k"], func, "k", n=n)
        if k == AUTO:  # Freedman-Diaconis, at least the minimum group size (as `methods.microaggregate`)
            fd = _with_positions(src, key, order, layout, s, n, group_size_sorted)
            k = GROUP_SIZE_AUTO.check(max(fd, GROUP_SIZE_AUTO.minimum), func, "k", n=n)
        rep = REPRESENTATIVE.check(params.get("representative", "mean"), func, "representative")
        centre = float(_with_positions(src, key, order, layout, s, n, lambda v: v[(n - 1) // 2]))
        e = layout[s].exponent  # the numpy method's scale (`microaggregation.prepare_input`)
        if method == "ranking_round":
            return RankingPlan(n, k, centre, median=rep == "median", e=e)
        return MdavPlan(n, k, centre, order.split_of(s), median=rep == "median", e=e)
    mechanism = method
    eps = EPSILON.check(params.get("epsilon"), func, "epsilon")
    lo, hi = np_dp.checked_domain(func, params.get("lb"), params.get("ub"), required=mechanism != "idp_cbls")
    seed = SEED.check(params.get("seed"), func, "seed")
    if seed is not None and column is not None:
        seed = stratum_seed(seed, column, s)
    if mechanism == "dp_laplace":
        return LaplacePlan(n, eps, lo, hi, seed)
    k = np_dp.checked_cluster_size(func, params.get("k"), n, mechanism)
    if lo is None or hi is None:  # idp_cbls without a domain: scaled by the largest clamped magnitude
        e = _with_positions(src, key, order, layout, s, n,
                            lambda v: np_dp.scale_exponent(np.array([v[0], v[n - 1]], np.float64), lo, hi))
    else:
        e = np_dp.scale_exponent(np.empty(0), lo, hi)
    return DpPlan(n, k, mechanism, eps, lo, hi, seed, e)


def _cuts(plan, iv: _Intervals, order: Order) -> list[int]:
    """Allowed cut positions, one per bucket boundary of the sample (none where its guard has none)."""
    cuts = []
    for j in iv.cut_points:
        target_interval = iv.point_index.index(j) + 1
        target = iv.offsets[target_interval]
        # the guard: the collected intervals around the boundary, as one stretch of positions
        lo_i = hi_i = target_interval
        while lo_i - 1 >= 0 and iv.collect[lo_i - 1]:
            lo_i -= 1
        while hi_i + 1 < len(iv.collect) and iv.collect[hi_i + 1]:
            hi_i += 1
        if not iv.collect[target_interval]:
            continue
        first = iv.offsets[lo_i]
        last = iv.offsets[hi_i] + iv.counts[hi_i]
        candidates = sorted(range(first + 1, last), key=lambda p: (p < target, abs(p - target)))
        for p in candidates:
            before, after = iv.record(p - 1), iv.record(p)
            if plan.cut_allowed(p, before[0], after[0]):
                cuts.append(p)
                break
    return sorted(set(cuts))


def plan_rule(src, *, method: str, params: dict, key: str, strata: dict[int, int], options: Options,
              func: str, base: int, column: str | None = None):
    """Buckets of the huge strata of one position-based rule. Returns (order, tasks: bucket id ->
    BucketTask, `bucket(df, name, default)`: df with the bucket id of each record of a huge stratum
    as column `name` (`default` for the others), next free bucket id)."""
    order = Order(key)
    mdav = method == "mdav_round"
    start = time.perf_counter()
    order, samples = plan_huge_strata(src, method=method, params=params, key=key, order=order, strata=strata,
                                      options=options, func=func, median_tie_split=mdav)
    auto = method in ("ranking_round", "mdav_round") and is_auto(params.get("k"))
    quantiles = _quantile_needs(auto) if method in ("ranking_round", "mdav_round") else []
    LOG.info("%s: sample of %d records in %.1f s", func, sum(len(v) for v in samples.values()),
             time.perf_counter() - start)
    layout = count_pass(src, key=key, order=order, strata=strata, samples=samples, options=options,
                        quantiles=quantiles)
    LOG.info("%s: counting pass with %d intervals in %.1f s", func, sum(len(v.counts) for v in layout.values()),
             time.perf_counter() - start)
    tasks, bounds_of, base_of = {}, {}, {}
    for s in sorted(strata):
        n = strata[s]
        iv = layout[s]
        plan = _stratum_plan(src, method=method, params=params, key=key, order=order, layout=layout, s=s, n=n,
                             func=func, column=column)
        cuts = _cuts(plan, iv, order)
        starts = [0, *cuts]
        bounds = []
        for j, p in enumerate(starts):
            first_continues = p > 0 and iv.record(p - 1)[0] == iv.record(p)[0]
            nxt = starts[j + 1] if j + 1 < len(starts) else n
            last_continues = nxt < n and iv.record(nxt - 1)[0] == iv.record(nxt)[0]
            tasks[base + j] = BucketTask(SPLIT, s, plan, Bucket(p, first_continues, last_continues))
            if p > 0:
                bounds.append(iv.record(p))
        bounds_of[s], base_of[s] = bounds, base
        base += len(starts)
    return order, tasks, lambda df, name, default: order.ranked(df, name, bounds_of, base_of, default), base


def check_finite(func: str, bad) -> None:
    """The numpy layer's refusal of NaN and infinity, for a value found by a Spark aggregate."""
    if bad is not None:
        refuse_nonfinite(func, "xs", np.array([bad], dtype=np.float64))


def refuse_oversized(func: str, where: str, stratum_label: str, rows: int, limit: int):
    raise fail(func, f"{where}: stratum {stratum_label} has {rows} records, more than max_stratum_rows = "
                     f"{limit}; this method needs a whole stratum in one task's memory (raise the limit "
                     "for executors with more memory, or use finer strata)")


__all__ = ["INTERVAL", "Options", "POSITIONAL", "check_finite", "plan_rule", "refuse_oversized"]
