"""Rank swapping (Moore 1996, "Controlled data-swapping techniques for masking public use microdata
sets", U.S. Census Bureau, Statistical Research Division Report RR 96-04; the swapping of the
bounded rank-measures paper's experiments), with the top and bottom coding of sdcMicro's `rankSwap`
as options.

One column at a time: the values are ranked 1..n; with P = floor(p n / 100), the records are visited
in increasing rank, and each record not yet swapped exchanges its value with a partner chosen
uniformly at random among the records not yet swapped whose rank is above its own by at most P.
A record that finds no such partner keeps its value (near the top of the ranking, or when every
record in its range is taken). So:

* the column keeps its multiset of values exactly (the output is a permutation of the input: a
  product of disjoint swaps);
* a value moves to a record whose rank differs from its own by at most P, i.e. at most p percent of
  n, the criterion |i - j| <= P N / 100 of Moore's paper.

Top and bottom coding (`top_percent`, `bottom_percent`, 0 by default), as sdcMicro's `rankSwap`
defines them in its C++ code (RankSwapping.h, read in 5.8.1): before swapping, the t = floor(n
top_percent / 100) largest values are all replaced by their mean, and so are the b = floor(n
bottom_percent / 100) smallest; these t + b records take no part in the swapping, which runs on the
m = n - t - b others with P = floor(p m / 100) (sdcMicro also counts its rank range over the records
left to swap). The coded tails keep their sums, so the column's sum is kept; its multiset is kept
outside the tails. A tail of one record (t = 1) is its own mean: that record keeps its value and is
not swapped, as in sdcMicro. Together they may code at most half of the values (t + b <= n / 2 for
every n: top_percent + bottom_percent <= 50).

sdcMicro's `rankSwap` (5.8.1) differs from this function in three stated ways, besides its random
numbers: its P is a fraction, not a percent; its partner lies at a rank distance of at most floor(P m)
- 1 (its loop stops before rank j + floor(P m)), where this function allows floor(p m / 100); and it
ranks from the largest value down, so its swaps are this function's mirrored (in distribution, the
same process on the reversed ranking: there the smallest values are the ones left without a
partner). It computes t, b and P m in single precision. Its default codes 5 % of each tail
(TopPercent = BottomPercent = 5) and, without P, derives P from R0 = 0.95.

Choices where the sources leave them open:

* Ties: ranks are those of a stable sort, equal values in input order. Swapping two equal values
  changes nothing, so the tie order only decides which of the equal records a value goes to; the
  multiset and the rank bound hold whatever the order. A tie across the edge of a coded tail codes
  the later records of the tie at the top and the earlier ones at the bottom (sdcMicro's order too).
* The partner is uniform among the free records of the range (Moore's description, and sdcMicro's
  code). mu-ARGUS's code instead draws a rank in the range and walks to the nearest free one, which
  favours records next to taken ones; it is not followed.
* p, top_percent and bottom_percent are read as the shortest decimal that gives the same double
  (0.29 means 29/100), so P, t and b are exact. p must leave P >= 1 (otherwise no value could move
  and the column would be released unchanged: refused), and m >= 2.

What is guaranteed: the two properties above, nothing formal. Rank swapping keeps every value of the
column, so an outlying value is still published (at another record), unless a coded tail of at least
two records averages it; its protection is measured by record linkage and interval disclosure like
every masking method here.

Randomness: record i (in rank order among the m swapped) uses the 64-bit words SplitMix64(k + (i 2^16
+ t) g), t = 0, 1, ..., with k derived from the seed (g the golden-ratio increment): the same input in
the same order with the same seed gives the same swaps. A uniform choice among w candidates rejects
the words below 2^64 mod w (Lemire's multiply-and-shift), so it is exactly uniform. The partner is the
r-th free record of the range with r uniform; it is found by rejection (a random rank of the range,
kept if free) up to 32 times, then by counting the free records of the range (at once for a range of
at most 64 ranks, else with a Fenwick tree of the free ranks, built the first time a range is nearly
full): every way gives the same partner for the same words. seed None draws a fresh key.

Cost: O(n log n) for the ranking (the package's parallel stable sort) plus O(n) expected for the
swaps while ranges have free room (small p); O(n log n) at most once the Fenwick tree is built
(p near 100, where the last ranges fill up).
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numba as nb
import numpy as np

from .._validate import fail, finite_values
from ..params import PERCENT, SEED, TAIL_PERCENT
from ._order import PARALLEL_LOCK, PARALLEL_MIN, mul128 as _mul128, mix64 as _mix, sort_column
from .partition import group_representatives

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_ATTEMPTS = 32  # rejection draws before the range is counted
_SCAN = 64  # a range of at most this many ranks is counted at once



@nb.njit(cache=True, nogil=True)
def _word(key, i, t):
    return _mix(key + (np.uint64(i) * np.uint64(65536) + np.uint64(t)) * _GOLDEN)


@nb.njit(cache=True, nogil=True)
def _uniform(key, i, t, w):
    """(a uniform integer in [0, w), the next word number): the high half of word * w (Lemire 2019),
    rejecting the words whose low half falls below 2^64 mod w, so that every value has the same
    number of words."""
    w64 = np.uint64(w)
    while True:
        h = _word(key, i, t)
        t += 1
        high, low = _mul128(h, w64)
        if low < w64:
            if low < (np.uint64(0) - w64) % w64:
                continue
        return np.int64(high), t


@nb.njit(cache=True, nogil=True)
def _bit_add(bit, i, delta):
    k = i + 1
    while k < bit.shape[0]:
        bit[k] += delta
        k += k & -k


@nb.njit(cache=True, nogil=True)
def _bit_prefix(bit, i):
    """The number of free ranks among 0..i - 1."""
    total = 0
    k = i
    while k > 0:
        total += bit[k]
        k -= k & -k
    return total


@nb.njit(cache=True, nogil=True)
def _bit_select(bit, r):
    """The rank of the r-th free rank (r >= 1)."""
    pos = 0
    step = 1
    while step * 2 < bit.shape[0]:
        step *= 2
    while step > 0:
        nxt = pos + step
        if nxt < bit.shape[0] and bit[nxt] < r:
            pos = nxt
            r -= bit[nxt]
        step //= 2
    return pos


@nb.njit(cache=True, nogil=True)
def _swap_partners(n, P, key, partner):
    """partner[i] = the rank that rank i exchanges its value with (i itself when it keeps its value).

    The partner of rank i is the r-th free rank of its range, r uniform: found by up to _ATTEMPTS
    draws of a rank of the range (kept if free), else by counting the free ranks of the range, at once
    for a range of at most _SCAN ranks and otherwise with a Fenwick tree of the free ranks, built the
    first time it is needed (a nearly full range) and kept up to date from then on."""
    taken = np.zeros(n, np.bool_)
    bit = np.zeros(1, np.int32)
    built = False
    for i in range(n):
        partner[i] = i
    for i in range(n):
        if taken[i]:
            continue
        taken[i] = True
        if built:
            _bit_add(bit, i, -1)
        w = min(P, n - 1 - i)  # the range is i + 1 .. i + w
        if w == 0:
            continue
        t = 0
        j = -1
        if w > _SCAN:
            for _ in range(_ATTEMPTS):
                r, t = _uniform(key, i, t, w)
                if not taken[i + 1 + r]:
                    j = i + 1 + r
                    break
            if j < 0:
                if not built:
                    bit = np.zeros(n + 1, np.int32)
                    for k in range(n):  # linear construction: each node passes its sum to its parent
                        if not taken[k]:
                            bit[k + 1] += 1
                        up = k + 1 + ((k + 1) & -(k + 1))
                        if up <= n:
                            bit[up] += bit[k + 1]
                    built = True
                before = _bit_prefix(bit, i + 1)
                free = _bit_prefix(bit, i + w + 1) - before
                if free == 0:
                    continue
                r, t = _uniform(key, i, t, free)
                j = _bit_select(bit, before + r + 1)
        else:
            free = 0
            for k in range(i + 1, i + w + 1):
                if not taken[k]:
                    free += 1
            if free == 0:
                continue
            r, t = _uniform(key, i, t, free)
            for k in range(i + 1, i + w + 1):
                if not taken[k]:
                    if r == 0:
                        j = k
                        break
                    r -= 1
        taken[j] = True
        if built:
            _bit_add(bit, j, -1)
        partner[i] = j
        partner[j] = i


@nb.njit(cache=True, nogil=True, parallel=True)
def _scatter_parallel(order, v, partner, out):
    for i in nb.prange(order.shape[0]):
        out[order[i]] = v[partner[i]]


def _released(order: np.ndarray, v: np.ndarray, partner: np.ndarray) -> np.ndarray:
    """In input order: the value of each record's partner rank."""
    if order.shape[0] < PARALLEL_MIN:
        out = np.empty_like(v)
        out[order] = v[partner]
        return out
    out = np.empty_like(v)
    with PARALLEL_LOCK:
        _scatter_parallel(order, v, partner, out)
    return out


def _exact(value) -> Fraction:
    """A percentage as the shortest decimal that gives the same double."""
    return Fraction(Decimal(repr(value)))


def swap_distance(func: str, p, n: int) -> int:
    """P = floor(p n / 100) with p read as its shortest decimal; refuses p outside (0, 100] and a
    P below 1 (no value could move)."""
    p = PERCENT.check(p, func, "p")
    P = (_exact(p) * n // 100).__floor__()
    if P < 1:
        least = Fraction(100, n)
        raise fail(func, f"p = {p!r} allows swaps only between ranks floor(p n / 100) = 0 apart for n = {n} values, "
                         f"so no value would move; p must be at least 100 / n = {float(least):.6g} here")
    return int(P)


def tail_percents(func: str, top_percent, bottom_percent) -> tuple[Fraction, Fraction]:
    """top_percent and bottom_percent as exact fractions of one (0 <= each, sum <= 50)."""
    top = TAIL_PERCENT.check(top_percent, func, "top_percent")
    bottom = TAIL_PERCENT.check(bottom_percent, func, "bottom_percent")
    if top + bottom > 50:
        raise fail(func, f"top_percent + bottom_percent must be at most 50 (the coded tails may hold at most half "
                         f"of the values), got {top!r} + {bottom!r}", "top_percent")
    return _exact(top) / 100, _exact(bottom) / 100


def tails(n: int, top: Fraction, bottom: Fraction) -> tuple[int, int]:
    """(t, b): how many of n values the top and the bottom coding replace by their tail's mean."""
    return int((top * n).__floor__()), int((bottom * n).__floor__())


def least_values(p, top_percent=0, bottom_percent=0, func: str = "rank_swap") -> int:
    """The least n from which every list of n values can be swapped with these parameters: m = n - t -
    b >= 2 and floor(p m / 100) >= 1 for n and every larger list (m grows with n but not monotonically,
    since t and b step up by one at their own n: the last n that fails is searched down from
    n_hi = M0 / (1 - top - bottom), M0 = max(2, ceil(100 / p)), above which none fails; it lies within
    2 / (1 - top - bottom) <= 4 of it)."""
    p = PERCENT.check(p, func, "p")
    top, bottom = tail_percents(func, top_percent, bottom_percent)
    m0 = max(2, math.ceil(Fraction(100) / _exact(p)))
    n = math.ceil(Fraction(m0) / (1 - top - bottom))
    while n >= 1:
        t, b = tails(n, top, bottom)
        if n - t - b < m0:
            return n + 1
        n -= 1
    return 1


def _key(seed: int | None) -> np.uint64:
    return np.random.SeedSequence(seed).generate_state(1, np.uint64)[0]


def _tail_mean(v: np.ndarray) -> float:
    """The mean of sorted values, centred and scaled (equal values give exactly their value)."""
    return float(group_representatives(v, np.zeros(v.shape[0], np.int64))[0])


def _swaps(func: str, x, p, seed, top_percent=0, bottom_percent=0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(order, sorted values with the tails coded, partner) of a rank swapping of x; refuses fewer than 2
    values to swap."""
    n = x.shape[0]
    top, bottom = tail_percents(func, top_percent, bottom_percent)
    t, b = tails(n, top, bottom)
    m = n - t - b
    if m < 2:
        coded = f" besides the {t + b} top and bottom coded" if t + b else ""
        raise fail(func, f"needs at least 2 values to swap{coded}, got {n} (a single record would be released "
                         "unchanged)")
    P = swap_distance(func, p, m)
    key = _key(SEED.check(seed, func, "seed"))
    order, v = sort_column(x)
    if b:
        v[:b] = _tail_mean(v[:b])
    if t:
        v[n - t:] = _tail_mean(v[n - t:])
    partner = np.empty(m, np.int64)
    _swap_partners(m, P, key, partner)
    if m < n:
        partner = np.concatenate([np.arange(b), partner + b, np.arange(n - t, n)])
    return order, v, partner


def rank_swap_partners(x, p, *, seed=None, top_percent=0, bottom_percent=0) -> tuple[np.ndarray, np.ndarray]:
    """(order, partner): order is the stable ranking of x (x[order] ascending) and partner[i] the rank
    whose value rank i receives (i: kept, and every coded rank). Exposed for tests and audits;
    `rank_swap` applies it, and errors name it."""
    func = "rank_swap"
    order, _, partner = _swaps(func, finite_values(func, "x", x), p, seed, top_percent, bottom_percent)
    return order, partner


def rank_swap(x, p, *, seed=None, top_percent=0, bottom_percent=0) -> np.ndarray:
    """Rank swapping of x with swaps between ranks at most floor(p m / 100) apart (p in percent; m the
    values left after coding the top_percent largest and the bottom_percent smallest values by their
    tail's mean); see the module docstring. Needs at least 2 values to swap."""
    func = "rank_swap"
    x = finite_values(func, "x", x)
    if x.shape[0] == 0:
        tail_percents(func, top_percent, bottom_percent)
        return x.copy()
    return _released(*_swaps(func, x, p, seed, top_percent, bottom_percent))


__all__ = ["least_values", "rank_swap", "rank_swap_partners", "swap_distance", "tail_percents", "tails"]
