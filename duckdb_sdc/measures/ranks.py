"""Rank-based information loss (Chaibub Neto): rank the original and the masked values of each column
1..n with ties broken into unique ranks, then compare the ranks.

Tie rules (masked data are full of ties, so the rule matters):
* ``ties="random"`` (default): equal values are ordered by a pseudo-random key, the 64-bit SplitMix
  hash of (seed, column number, the value, the record's value on the other side), both values scaled
  by the power of two that puts the larger of the two columns' largest magnitudes in [1/2, 1) (so the
  keys, and the ranks, are the same for the data times any power of two: `duckdb_sdc._numerics`).
  The key depends on the record's values only, never on its position, so the answer does not depend
  on the order the records arrive in (SQL gives no order): the same data and seed always give the
  same answer.
  Records whose original AND masked values are both equal get equal keys; among them the input order
  decides, the same way on both sides, which gives the same sum whatever that order is.
* ``ties="first"``: equal values keep their input order (rank by position).

With ranks r (original) and r' (masked) of column j, n records, p columns, K = floor(n / 2):
    rank_mae         = sum |r - r'| / (n p)
    rank_mse         = sum (r - r')^2 / (n p)
    rank_bounded_mae = sum |r - r'| / (p * sum_{k=1..K} 2 (n - 2k + 1))    = ... / (p * 2K(n - K))
    rank_bounded_mse = sum (r - r')^2 / (p * sum_{k=1..K} 2 (n - 2k + 1)^2) = ... / (p * n(n^2 - 1) / 3)
The bounded forms lie in [0, 1] and equal 1 exactly for reversed ranks (the denominators are the
values the sums take then); without ties rank_bounded_mse = (1 - Spearman's rho) / 2. For n = 1 no
reordering is possible and both bounded forms are defined as 0.
The sums of |r - r'| and (r - r')^2 are exact integers (the squares summed in chunks that stay
below 2^62, the chunks added as Python integers); each measure is one correctly rounded division.
Cost: two sorts per column, O(n log n); the runs of tied values are put in key order by a counting
sort on the keys' top bits (the keys are uniform hashes), in parallel for large columns.
"""

from __future__ import annotations

import math
import secrets

import numba as nb
import numpy as np

from .._numerics import exponent
from .._validate import named
from ..methods._order import PARALLEL_LOCK, PARALLEL_MIN, mix64 as _mix, sort_column, unsort
from ..params import SEED, SEED_BITS, TIES as TIE_RULE
from ._input import pair

TIES = TIE_RULE.options
DEFAULT_SEED = 0

_GOLDEN = 0x9E3779B97F4A7C15
_INSERTION_MAX = 16  # larger buckets of the tie-key counting sort are merge sorted
_BUCKET_BITS_MAX = 20  # at most 2^20 buckets (8 MB of counts) however long the run
_MASK = 0xFFFFFFFFFFFFFFFF


@nb.njit(cache=True, nogil=True)
def tie_key(start, value, partner):
    """Tie-breaking key of one record from (seed, column) (in `start`), its value and its partner value
    (both already scaled, see the module docstring)."""
    h = _mix(np.float64(value + 0.0).view(np.uint64) ^ start)  # + 0.0 turns -0.0 into 0.0
    return _mix((h + np.uint64(_GOLDEN)) ^ np.float64(partner + 0.0).view(np.uint64))


@nb.njit(cache=True, nogil=True)
def _scaled_key(start, value, partner, e):
    """`tie_key` of the value and partner scaled by 2^-e (exact: the exponent of the larger magnitude)."""
    return tie_key(start, math.ldexp(value, -e), math.ldexp(partner, -e))


def key_start(seed: int, column: int) -> np.uint64:
    return np.uint64(((seed & _MASK) * _GOLDEN + column + _GOLDEN) & _MASK)


@nb.njit(cache=True, nogil=True)
def _tie_runs(v):
    """(starts, ends) of the runs of equal values in sorted `v` that hold two or more values."""
    n = v.shape[0]
    starts = np.empty(n // 2 + 1, np.int64)
    ends = np.empty(n // 2 + 1, np.int64)
    count = 0
    i = 0
    while i < n:
        j = i + 1
        while j < n and v[j] == v[i]:
            j += 1
        if j - i > 1:
            starts[count] = i
            ends[count] = j
            count += 1
        i = j
    return starts[:count], ends[:count]


@nb.njit(cache=True, nogil=True)
def _order_run(order, i, j, v, partner, s, e):
    """Reorder order[i:j], one run of equal sorted values v[i:j] in input order, by (key, input order).

    The keys are uniform 64-bit hashes, so a counting sort on their top b bits (2^b >= m buckets for
    the m records, at most 2^20) leaves O(1) records per bucket on average; each bucket, in input order, is then
    sorted stably by its full keys: insertion sort when small, a merge sort otherwise (records with
    equal values on both sides share a key and can fill one bucket)."""
    m = j - i
    b = 1
    while (1 << b) < m and b < _BUCKET_BITS_MAX:
        b += 1
    shift = np.uint64(64 - b)
    keys = np.empty(m, np.uint64)
    ends = np.zeros((1 << b) + 1, np.int64)
    for t in range(m):
        k = _scaled_key(s, v[i + t], partner[order[i + t]], e)
        keys[t] = k
        ends[np.int64(k >> shift) + 1] += 1
    for h in range(1, (1 << b) + 1):
        ends[h] += ends[h - 1]
    perm = np.empty(m, np.int64)
    for t in range(m):
        h = np.int64(keys[t] >> shift)
        perm[ends[h]] = t
        ends[h] += 1
    lo = 0
    for h in range(1 << b):
        hi = ends[h]
        if hi - lo > _INSERTION_MAX:
            bucket = perm[lo:hi].copy()
            perm[lo:hi] = bucket[np.argsort(keys[bucket], kind="mergesort")]
        else:
            for t in range(lo + 1, hi):
                q = perm[t]
                u = t
                while u > lo and keys[perm[u - 1]] > keys[q]:
                    perm[u] = perm[u - 1]
                    u -= 1
                perm[u] = q
        lo = hi
    run = order[i:j].copy()
    for t in range(m):
        order[i + t] = run[perm[t]]


@nb.njit(cache=True, nogil=True)
def _order_runs(order, v, partner, s, e, starts, ends):
    for r in range(starts.shape[0]):
        _order_run(order, starts[r], ends[r], v, partner, s, e)


@nb.njit(cache=True, nogil=True, parallel=True)
def _order_runs_parallel(order, v, partner, s, e, starts, ends, cuts):
    """The runs cuts[c]..cuts[c+1]-1 are block c; blocks hold about equal numbers of records."""
    for c in nb.prange(cuts.shape[0] - 1):
        for r in range(cuts[c], cuts[c + 1]):
            _order_run(order, starts[r], ends[r], v, partner, s, e)


def _blocks(sizes: np.ndarray, count: int) -> np.ndarray:
    """Cut points splitting the runs, in order, into at most `count` blocks of about equal total size
    (a few huge runs, one value repeated, would otherwise leave a core idle)."""
    total = np.cumsum(sizes)
    if total.shape[0] == 0:
        return np.zeros(1, np.int64)
    cuts = np.searchsorted(total, np.arange(1, count) * (total[-1] / count)) + 1  # the run holding a cut ends its block
    return np.unique(np.concatenate(([0], cuts, [total.shape[0]]))).astype(np.int64)


def rank_order(values: np.ndarray, partner: np.ndarray, ties: str, seed: int, column: int) -> np.ndarray:
    """The permutation that sorts `values` (finite float64) by value, equal values by the rule `ties`
    (see the module docstring): order[r - 1] is the record of rank r."""
    values = np.ascontiguousarray(values)
    order, v = sort_column(values)
    if ties == "random":
        starts, ends = _tie_runs(v)
        partner = np.ascontiguousarray(partner)
        e = exponent(v[[0, -1]] if v.shape[0] else v, partner)
        args = (order, v, partner, np.uint64(_mix(key_start(seed, column))), e, starts, ends)
        if values.shape[0] < PARALLEL_MIN:
            _order_runs(*args)
        else:
            with PARALLEL_LOCK:
                _order_runs_parallel(*args, _blocks(ends - starts, 4 * nb.get_num_threads()))
    return order


def ranks(values: np.ndarray, partner: np.ndarray, ties: str, seed: int, column: int) -> np.ndarray:
    """Unique ranks 1..n of `values` (float64), ties broken by the rule `ties` (see module docstring)."""
    order = rank_order(values, partner, ties, seed, column)
    return unsort(order, np.arange(1, order.shape[0] + 1, dtype=np.int64))


@nb.njit(cache=True, nogil=True)
def _chunk_sums(rank, order_m, lo, hi):
    """sum |d| and sum d^2 of d = rank[order_m[i]] - i over i in [lo, hi) (both exact in int64)."""
    a = 0
    q = 0
    for i in range(lo, hi):
        d = rank[order_m[i]] - i
        a += abs(d)
        q += d * d
    return a, q


@nb.njit(cache=True, nogil=True)
def _diff_sums(rank, order_m, chunk):
    count = (order_m.shape[0] + chunk - 1) // chunk
    a = np.empty(count, np.int64)
    q = np.empty(count, np.int64)
    for c in range(count):
        a[c], q[c] = _chunk_sums(rank, order_m, c * chunk, min(order_m.shape[0], (c + 1) * chunk))
    return a, q


@nb.njit(cache=True, nogil=True, parallel=True)
def _diff_sums_parallel(rank, order_m, chunk):
    count = (order_m.shape[0] + chunk - 1) // chunk
    a = np.empty(count, np.int64)
    q = np.empty(count, np.int64)
    for c in nb.prange(count):
        a[c], q[c] = _chunk_sums(rank, order_m, c * chunk, min(order_m.shape[0], (c + 1) * chunk))
    return a, q


def _rank_differences(order: np.ndarray, order_m: np.ndarray) -> tuple[int, int]:
    """Exact (sum |r - r'|, sum (r - r')^2) of the ranks the two orders give. Each chunk's sum of
    squares fits in int64 (chunk * n^2 <= 2^62; one record per chunk from n = 2^31 on, exact up to
    n of about 3e9); the chunks are added as Python integers."""
    n = order.shape[0]
    rank = unsort(order, np.arange(n, dtype=np.int64))
    chunk = max(1, min(n, (1 << 62) // (n * n), -(-n // 64)))
    if n < PARALLEL_MIN:
        a, q = _diff_sums(rank, order_m, chunk)
    else:
        with PARALLEL_LOCK:
            a, q = _diff_sums_parallel(rank, order_m, chunk)
    return sum(int(v) for v in a), sum(int(v) for v in q)


def tie_seed(func: str, seed) -> int:
    """The seed of the 'random' tie rule: `params.SEED` (an integer 0 <= seed < 2^63), or None for a
    seed drawn from the operating system's randomness (ties then differ between calls)."""
    s = SEED.check(seed, func, "seed")
    return secrets.randbits(SEED_BITS) if s is None else s


def _rank_sums(func: str, x, xm, ties, seed) -> tuple[int, int, int, int]:
    """Exact (sum |r - r'|, sum (r - r')^2, n, p) over all columns."""
    X, XM = pair(func, x, xm)
    ties = TIE_RULE.check(ties, func, "ties")
    seed = tie_seed(func, seed)
    n, p = X.shape
    abs_sum = sq_sum = 0
    for j in range(p):
        a, q = _rank_differences(rank_order(X[:, j], XM[:, j], ties, seed, j),
                                 rank_order(XM[:, j], X[:, j], ties, seed, j))
        abs_sum += a
        sq_sum += q
    return abs_sum, sq_sum, n, p


@named
def rank_mae(x, xm, ties: str = "random", seed: int = DEFAULT_SEED) -> float:
    """rMAE = sum |r - r'| / (n p) (see the module docstring for ranks and ties)."""
    return rank_measures(x, xm, ties, seed)["rank_mae"]


@named
def rank_mse(x, xm, ties: str = "random", seed: int = DEFAULT_SEED) -> float:
    """rMSE = sum (r - r')^2 / (n p)."""
    return rank_measures(x, xm, ties, seed)["rank_mse"]


def bounded_mae_denominator(n: int) -> int:
    """sum_{k=1..K} 2 (n - 2k + 1) with K = floor(n / 2), i.e. 2K(n - K): sum |r - r'| of reversed ranks."""
    k = n // 2
    return 2 * k * (n - k)


def bounded_mse_denominator(n: int) -> int:
    """sum_{k=1..K} 2 (n - 2k + 1)^2 = n (n^2 - 1) / 3: sum (r - r')^2 of reversed ranks."""
    return n * (n * n - 1) // 3


@named
def rank_bounded_mae(x, xm, ties: str = "random", seed: int = DEFAULT_SEED) -> float:
    """Bounded rank MAE in [0, 1]: sum |r - r'| / (p * sum_{k=1..K} 2(n - 2k + 1)); 0 for n = 1."""
    return rank_measures(x, xm, ties, seed)["rank_bounded_mae"]


@named
def rank_bounded_mse(x, xm, ties: str = "random", seed: int = DEFAULT_SEED) -> float:
    """Bounded rank MSE in [0, 1]: sum (r - r')^2 / (p * sum_{k=1..K} 2(n - 2k + 1)^2); 0 for n = 1.
    Without ties it equals (1 - Spearman's rho) / 2."""
    return rank_measures(x, xm, ties, seed)["rank_bounded_mse"]


def rank_measures(x, xm, ties: str = "random", seed: int = DEFAULT_SEED) -> dict[str, float]:
    """rank_mae, rank_mse, rank_bounded_mae and rank_bounded_mse from one ranking of both sides."""
    a, s, n, p = _rank_sums("rank_measures", x, xm, ties, seed)
    den_a, den_s = bounded_mae_denominator(n), bounded_mse_denominator(n)
    return {"rank_mae": a / (n * p), "rank_mse": s / (n * p),
            "rank_bounded_mae": a / (p * den_a) if den_a else 0.0,
            "rank_bounded_mse": s / (p * den_s) if den_s else 0.0}
