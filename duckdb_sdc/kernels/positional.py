"""Position-based masking of one huge stratum, piece by piece: the numpy core of the distributed path.

A stratum's non-NULL values, sorted, are cut into consecutive *buckets*; each bucket is masked on
its own (one Spark task) knowing only its offset (the global position of its first record) and a
few constants of the stratum that the driver computes beforehand (`StratumPlan`). Nothing here
imports Spark: the same functions are tested against the numpy methods on buckets cut by hand.

Order. The numpy methods see a stratum's values ordered by the release key and sort them stably, so
records of equal value are in key order. Here the records are sorted by (value, key) (key ascending)
for individual ranking and the DP mechanisms. MDAV is the exception, see `MdavPlan`: above a threshold
value `tie_split` its ties are sorted by key descending, which makes MDAV's tie rule positional there.

Cuts. A bucket boundary may only fall where the method allows it (`StratumPlan.cut_allowed`): never
inside a group, so that every group's representative is computed by one task from all its values,
in order, by the same numpy code as the numpy method (`partition.group_stats_sorted`, centred on the
stratum's median value `centre` exactly as `microaggregation.microaggregate` centres). Results are
therefore equal to the numpy method's value for value, not merely close.

* individual ranking (`RankingPlan`): groups of k consecutive positions, the last one also takes the
  remainder; a cut is allowed at any multiple of k up to the last group's start.
* plain Laplace noise (`LaplacePlan`): per record, records in key order, cuts anywhere.
* the DP mechanisms on ranking clusters (`DpPlan`): the same clusters, on values clamped to the domain;
  cluster statistics come from `methods.dp._cluster_stats` on the bucket's slice (identical to the
  whole column's, because the bucket starts at a cluster boundary), noise from `draw_noise`.
* univariate MDAV (`MdavPlan`): see the class docstring for the positions, the two value decisions
  and the tie rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import reporting
from ..methods._exact import accumulator, add_range, midpoint_side
from ..methods import dp as _dp
from ..methods.noise import laplace_mechanism
from ..methods.partition import group_stats_sorted

RANKING, MDAV, DP = "ranking", "mdav", "dp"


# ---------------------------------------------------------------------------------------------
# helpers shared by the plans


def runs(v: np.ndarray) -> np.ndarray:
    """Start positions of the runs of equal values of v, with len(v) appended."""
    if v.shape[0] == 0:
        return np.zeros(1, np.int64)
    starts = np.flatnonzero(v[1:] != v[:-1]) + 1
    return np.concatenate(([0], starts, [v.shape[0]])).astype(np.int64)


def _representatives(v: np.ndarray, local: np.ndarray, g: int, centre: float, median: bool,
                     e: int = 0) -> np.ndarray:
    """Representative of each local group 0..g-1 of the ascending values v, with the arithmetic of
    `microaggregation.microaggregate`: values scaled by 2^-e (e: the stratum's binary exponent, so
    that nothing overflows near 1.8e308 nor loses bits among subnormal numbers), centred on the
    stratum's median value, summed in ascending order per group (`group_stats_sorted`), the centre
    added back, scaled back by 2^e."""
    c = np.ldexp(centre, -e)
    return np.ldexp(group_stats_sorted(np.ldexp(v, -e) - c, local, g, median) + c, e)


def _dense(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct ids ascending, rank of each entry's id among them), for ids that come in blocks (a
    group's positions are consecutive): only the blocks' ids are sorted."""
    starts = np.concatenate(([0], np.flatnonzero(ids[1:] != ids[:-1]) + 1))
    block = ids[starts]
    order = np.argsort(block, kind="stable")
    uniq = block[order]
    if uniq.shape[0] > 1 and (uniq[1:] == uniq[:-1]).any():  # an id in two blocks: rank them all
        uniq, local = np.unique(ids, return_inverse=True)
        return uniq, local.astype(np.int64)
    rank = np.empty(block.shape[0], np.int64)
    rank[order] = np.arange(block.shape[0])
    return uniq, np.repeat(rank, np.diff(np.concatenate((starts, [ids.shape[0]]))))


@dataclass(frozen=True)
class Bucket:
    """What the driver tells one bucket: the global position of its first record, and whether the run
    of equal values at each end continues in the neighbouring bucket (the run is then split by the
    cut, which `StratumPlan.cut_allowed` only allows where no run needs its records re-dealt)."""
    offset: int
    first_continues: bool = False
    last_continues: bool = False


def bucket_order(v: np.ndarray, by_key: np.ndarray, tie_split: float = np.inf) -> np.ndarray:
    """The permutation that puts a bucket's records in the order of its stratum (`ordering.Order`):
    by value ascending, ties by key ascending, or descending for values above tie_split. by_key: the
    permutation that sorts the bucket's keys ascending (`kernel.key_order`). The records go in key order
    (those above tie_split in reverse key order, after the others), then a stable sort on the value
    keeps that order among equal values (1M records: about 0.25 s, half of a lexsort on (value, signed
    key rank)). The executors sort each bucket with this after Spark has only grouped the records by
    bucket: a sort on one long key is several times cheaper in Spark than one on (bucket, value, key)
    (10M records: 12-22 s against 65-93 s on local[2], the machine shared)."""
    by_key = np.asarray(by_key, np.int64)
    above = v[by_key] > tie_split
    seq = np.concatenate((by_key[~above], by_key[above][::-1])) if above.any() else by_key
    return seq[np.argsort(v[seq], kind="stable")]


class StratumPlan:
    """Constants of one stratum for the per-bucket masking; subclasses per method."""

    kind: str = ""
    n: int
    k: int
    tie_split = np.inf  # values above it have their ties in reverse key order (MdavPlan sets it)

    def cut_allowed(self, p: int, before: float | None, after: float | None) -> bool:
        """Whether a bucket may start at global position p (0 < p < n), given the values of the records
        at positions p - 1 and p (None if unknown: then only a cut that does not depend on them)."""
        raise NotImplementedError

    def mask(self, bucket: Bucket, v: np.ndarray, keys, x=None) -> np.ndarray:
        """Masked values of the bucket's records (v: their sort values in the bucket's order, ascending;
        keys: their release keys; x: their values, where they differ from v), aligned with v."""
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------
# individual ranking


@dataclass(frozen=True)
class RankingPlan(StratumPlan):
    """Individual ranking (`microaggregation._ranking_sorted`): position p is in group
    min(p // k, n // k - 1)."""
    n: int
    k: int
    centre: float  # the stratum's value at position (n - 1) // 2
    median: bool = False  # representative: median instead of mean
    e: int = 0  # the stratum's binary exponent (`_numerics.exponent` of its smallest and largest value)
    kind = RANKING

    @property
    def groups(self) -> int:
        return self.n // self.k

    def cut_allowed(self, p, before=None, after=None) -> bool:
        return 0 < p <= (self.groups - 1) * self.k and p % self.k == 0

    def mask(self, bucket, v, keys=None, x=None) -> np.ndarray:
        if v.shape[0] == 0:
            return v.copy()
        pos = bucket.offset + np.arange(v.shape[0], dtype=np.int64)
        gid = np.minimum(pos // self.k, self.groups - 1)
        local = gid - gid[0]  # group numbers increase by one along the positions
        return _representatives(v, local, int(local[-1]) + 1, self.centre, self.median, self.e)[local]


# ---------------------------------------------------------------------------------------------
# DP mechanisms on individual ranking clusters


def draw_noise(centre: np.ndarray, allowed: np.ndarray, epsilon: float, magnitude, seed: int | None,
               first_counter: int, func: str) -> np.ndarray:
    """Noisy values of the clusters (dp_laplace: the records) first_counter, first_counter + 1, ... of
    one bucket: `noise.laplace_mechanism`, the numpy layer's sampler. Without a seed every bucket
    draws from the operating system's randomness (the guarantee needs independent noise per cluster,
    nothing more). With a seed, the draw of cluster t is the counter-based draw of (seed, t) that
    `methods.dp.release` makes for cluster t of the whole stratum, whatever the bucket layout."""
    counters = None if seed is None else np.arange(first_counter, first_counter + centre.shape[0], dtype=np.uint64)
    with reporting(func):
        return laplace_mechanism(centre, allowed, epsilon, magnitude, seed=seed, counters=counters)


@dataclass(frozen=True)
class DpPlan(StratumPlan):
    """idp_cbls, idp_ls or dp_um (`methods.dp.release`) on the clusters of individual ranking of the
    values clamped to [lb, ub] (clusters of k, the last one takes the remainder), solved like the numpy
    layer on the values times 2^-e (`dp.scale_exponent` of the stratum, from the domain, or for
    idp_cbls without one from the largest clamped magnitude, which the planner measures)."""
    n: int
    k: int
    mechanism: str
    epsilon: float
    lb: float | None
    ub: float | None
    seed: int | None = None
    e: int = 0
    kind = DP

    @property
    def groups(self) -> int:
        return self.n // self.k

    def cut_allowed(self, p, before=None, after=None) -> bool:
        return 0 < p <= (self.groups - 1) * self.k and p % self.k == 0

    def mask(self, bucket, v, keys=None, x=None) -> np.ndarray:
        """v: the clamped values, ascending; the bucket starts at a cluster boundary, so the clusters of
        `_cluster_stats` on the slice are the stratum's (the last one takes the remainder only in the
        stratum's last bucket, whose length is then a multiple of k plus the remainder)."""
        if v.shape[0] == 0:
            return v.copy()
        v, lo, hi = _dp.scale_down(np.asarray(v, np.float64), self.lb, self.ub, self.e)
        centre, sens, mag = _dp.centroid_stats(self.mechanism, self.k, lo, hi, v)
        sizes = _dp.cluster_sizes(v.shape[0], self.k)
        allowed = np.where(sens > 0, sens * (1 + 2.0**-48) + _dp.rounding_allowance(sizes, mag), 0.0)
        noisy = draw_noise(centre, allowed, self.epsilon, mag, self.seed, bucket.offset // self.k, self.mechanism)
        return _dp.scale_back(self.mechanism, np.repeat(_dp.clamp_to_domain(noisy, lo, hi), sizes), self.e)


@dataclass(frozen=True)
class LaplacePlan(StratumPlan):
    """dp_laplace (`methods.dp.release`): every value clamped to [lb, ub] gets its own Laplace noise of
    scale (ub - lb) / epsilon, on the values times 2^-e (e from the domain, as the numpy layer).
    Records are ordered by key alone (their sort value is a constant), so a record's position is its
    index in key order, the counter of its seeded draw; any cut is allowed."""
    n: int
    epsilon: float
    lb: float
    ub: float
    seed: int | None = None
    kind = DP
    k: int = 1

    def cut_allowed(self, p, before=None, after=None) -> bool:
        return 0 < p < self.n

    def mask(self, bucket, v, keys=None, x=None) -> np.ndarray:
        x = np.clip(np.asarray(x, np.float64), self.lb, self.ub)
        e = _dp.scale_exponent(x, self.lb, self.ub)
        x, lo, hi = _dp.scale_down(x, self.lb, self.ub, e)
        sens = np.full(x.shape[0], (hi - lo) * (1 + 2.0**-48))
        out = draw_noise(x, sens, self.epsilon, max(abs(lo), abs(hi)), self.seed, bucket.offset, "dp_laplace")
        return _dp.scale_back("dp_laplace", np.clip(out, lo, hi), e)


# ---------------------------------------------------------------------------------------------
# univariate MDAV


@dataclass(frozen=True)
class MdavPlan(StratumPlan):
    """Univariate MDAV (`microaggregation._mdav_sorted`) as a function of positions.

    Every round while at least 3k values remain takes k values from each end, so with
    I = (number of those rounds) bottom group B_i = [i k, (i + 1) k) and top group
    T_i = [n - (i + 1) k, n - i k) for i < I; of the r = n - 2 I k values left, one group F of k is
    taken from the end that is farther from their mean when r >= 2k (the last decision; exact
    comparison), and the rest is the last group L. So all groups but F and L are fixed by n and k.

    Tie rule. Records of equal value are taken in key order from whichever end reaches them: within a
    run of equal values, the groups overlapping it take its records in the order in which the groups
    were formed (round i's two groups in the order of round i's decision). Formation order equals
    position order for a run below the stratum's median value (only bottom groups and F/L reach it in
    that order) and is the reverse of it above (top groups, formed from the top down); only the run of
    the median value itself can need a round's decision (the first round i whose B_i and T_i both
    reach it; later rounds see equal ends and take the bottom first). A bucket re-deals every run it
    holds whole, sorting the groups by formation order; a run split by a cut is split only where that
    is already its positional order: below the centre with ties in key order, above it with ties in
    reverse key order (`tie_split`: records of value > tie_split are sorted by key descending).

    Decisions are exact: the sign of 2 T - c (a + b) on the centred values (T their sum, c their count,
    a and b the two ends), computed by `methods._exact` as the numpy method computes it
    (`microaggregation._mdav_sorted`), so both take the same decision on any data, ties included.
    """
    n: int
    k: int
    centre: float
    tie_split: float  # records of value > tie_split are ordered by key descending
    median: bool = False
    e: int = 0  # the stratum's binary exponent: the decisions and means work on the values times 2^-e
    kind = MDAV

    @property
    def rounds(self) -> int:
        n, k = self.n, self.k
        return 0 if n < 3 * k else (n - 3 * k) // (2 * k) + 1

    @property
    def middle(self) -> tuple[int, int]:
        """[lo, hi): the values left after the double rounds (F and L)."""
        i = self.rounds
        return i * self.k, self.n - i * self.k

    def _safe_split(self, u: float) -> bool:
        """Whether a run of value u may be cut: its positional order (in the bucket order) is already
        its tie rule's order."""
        if u < self.centre:
            return u <= self.tie_split
        if u > self.centre:
            return u > self.tie_split
        return False  # the median value's run needs the formation order of both ends

    def cut_allowed(self, p, before=None, after=None) -> bool:
        n, k = self.n, self.k
        lo, hi = self.middle
        if not 0 < p < n or lo < p < hi:
            return False
        if not ((p <= lo and p % k == 0) or (p >= hi and (n - p) % k == 0)):
            return False
        if before is None or after is None:
            return False
        return before != after or self._safe_split(before)

    # -- per bucket ---------------------------------------------------------------------------

    def mask(self, bucket, v, keys, x=None) -> np.ndarray:
        m = v.shape[0]
        if m == 0:
            return v.copy()
        keys = np.asarray(keys)
        bounds = runs(v)
        length = np.diff(bounds)
        a = np.repeat(bounds[:-1], length)  # per position: its run [a, b)
        b = np.repeat(bounds[1:], length)
        idx = np.arange(m, dtype=np.int64)
        whole = ~(((a == 0) & bucket.first_continues) | ((b == m) & bucket.last_continues))
        mirror = a + b - 1 - idx  # the position's mirror image in its run
        # canonical order: ties in key order inside every run held whole (those above tie_split come
        # in reverse key order); a run split by a cut keeps the bucket's order, its tie rule's order
        perm = np.where(whole & (v > self.tie_split), mirror, idx)
        vc = v[perm]
        kc = keys[perm]
        pos = bucket.offset + idx
        bottom_first, f_bottom = self._decisions(bucket, vc, kc)
        step = self._group_step(pos, bottom_first, f_bottom)
        uniq, local = _dense(step)  # local labels are ranks of the formation steps
        reps = _representatives(vc, local, uniq.shape[0], self.centre, self.median, self.e)
        # runs held whole: their groups take the records in formation order (`_finish_labels`): the
        # position order below the middle, the reverse of it above, a sort where a run meets the middle
        lo, hi = self.middle
        top = whole & (bucket.offset + a >= hi)
        dealt = np.where(top, local[mirror], local)
        meets = whole & (bucket.offset + b > lo) & (bucket.offset + a < hi) & (b - a > 1)
        for start in np.unique(a[meets]):
            end = int(b[start])
            dealt[start:end] = np.sort(local[start:end])
        out = np.empty(m, np.float64)
        out[perm] = reps[dealt]
        return out

    def _group_step(self, pos: np.ndarray, bottom_first: np.ndarray, f_bottom: bool | None) -> np.ndarray:
        """Formation step of the group holding each position (unique per group): B_i is 2i or 2i + 1
        and T_i the other, as round i's decision says; F is 2I, L is 2I + 1 (2I without F). Only the
        relative order of groups that share a run matters, so rounds whose decision cannot matter are
        taken as bottom first."""
        n, k, rounds = self.n, self.k, self.rounds
        lo, hi = self.middle
        step = np.empty(pos.shape[0], np.int64)
        bot = pos < lo
        top = pos >= hi
        mid = ~(bot | top)
        i_b = pos[bot] // k
        step[bot] = 2 * i_b + np.where(bottom_first[i_b], 0, 1)
        i_t = (n - 1 - pos[top]) // k
        step[top] = 2 * i_t + np.where(bottom_first[i_t], 1, 0)
        if hi - lo >= 2 * k and f_bottom is not None:
            in_f = (pos[mid] < lo + k) if f_bottom else (pos[mid] >= hi - k)
            step[mid] = np.where(in_f, 2 * rounds, 2 * rounds + 1)
        else:
            step[mid] = 2 * rounds
        return step

    def _decisions(self, bucket, vc, kc) -> tuple[np.ndarray, bool | None]:
        """(bottom-first flag of every round, F taken from the bottom?) as far as this bucket needs them:
        round i* (the first whose two groups both reach the median value's run, which a bucket holds
        whole or not at all) is decided here when the bucket holds that run; F's decision when it holds
        the middle [lo, hi) (cuts never fall inside it)."""
        n, k, m, off = self.n, self.k, vc.shape[0], bucket.offset
        flags = np.ones(max(self.rounds, 1), bool)
        a = int(np.searchsorted(vc, self.centre, side="left"))
        if a < m and vc[a] == self.centre:
            b = int(np.searchsorted(vc, self.centre, side="right"))
            i_star = self._first_shared_round(off + a, off + b)
            if i_star is not None:
                flags[i_star] = self._decide(i_star * k, n - i_star * k, bucket, vc, kc)
        lo, hi = self.middle
        f_bottom = None
        if hi - lo >= 2 * k and off <= lo and off + m >= hi:
            f_bottom = self._decide(lo, hi, bucket, vc, kc)
        return flags, f_bottom

    def _first_shared_round(self, a: int, b: int) -> int | None:
        """Smallest i < I whose B_i and T_i both overlap the run [a, b) of global positions, or None."""
        n, k = self.n, self.k
        i = max(a // k, (n - b) // k)  # B_i reaches past a, T_i reaches below b
        if i < self.rounds and i * k < b and n - i * k > a:
            return i
        return None

    def _decide(self, lo: int, hi: int, bucket, vc, kc) -> bool:
        """MDAV's decision when the global positions [lo, hi) are left (all in this bucket): True when
        the next group is taken from the bottom (`microaggregation._mdav_sorted`)."""
        off = bucket.offset
        # the scaled, centred values, as the numpy method has them
        seg = np.ldexp(vc[lo - off:hi - off], -self.e) - np.ldexp(self.centre, -self.e)
        vlo, vhi = float(seg[0]), float(seg[-1])
        if vlo == vhi:
            return True  # all remaining values equal: both ends give the same groups
        total = accumulator()
        add_range(total, seg, 0, seg.shape[0], 1)
        c = midpoint_side(total, hi - lo, vlo, vhi, accumulator())  # 1: bottom farther
        if c != 0:
            return c > 0
        # equally far: the end whose first remaining record comes first in key order. At the bottom
        # that is the record at lo (bottom groups took its run's first records in key order); at the
        # top, the top groups took the first (e - hi) records in key order of the run [s, e) of
        # v[hi - 1], so it is the run's (e - hi)-th record in key order.
        key_lo = kc[lo - off]
        u = vc[hi - 1 - off]
        s = int(np.searchsorted(vc, u, side="left"))
        e = int(np.searchsorted(vc, u, side="right"))
        if e == vc.shape[0] and bucket.last_continues:
            # a run split by a cut above the centre is in reverse key order: that record sits at hi - 1
            key_hi = kc[hi - 1 - off]
        else:
            key_hi = kc[s + (off + e - hi)]
        return bool(key_lo <= key_hi)


__all__ = ["Bucket", "DpPlan", "bucket_order", "LaplacePlan", "MdavPlan", "RankingPlan", "StratumPlan", "draw_noise", "runs"]
