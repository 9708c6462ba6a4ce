"""Rank-based information loss (Chaibub Neto): rank the original and the masked values of each column
1..n with ties broken into unique ranks, then compare the ranks.

Tie rules (masked data are full of ties, so the rule matters):
* ``ties="random"`` (default): equal values are ordered by a pseudo-random key, the 64-bit SplitMix
  hash of (seed, column number, the value, the record's value on the other side). The key depends on
  the record's values only, never on its position, so the answer does not depend on the order the
  records arrive in (SQL gives no order): the same data and seed always give the same answer.
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
Cost: two sorts per column, O(n log n).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .._validate import choice, fail, show
from ..methods._order import sort_column
from ._input import pair

TIES = ("random", "first")
DEFAULT_SEED = 0

_GOLDEN = 0x9E3779B97F4A7C15
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB
_MASK = 0xFFFFFFFFFFFFFFFF


@nb.njit(cache=True, nogil=True)
def _mix(z):
    """SplitMix64 finaliser of a uint64 (wraps around by design)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(_M1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(_M2)
    return z ^ (z >> np.uint64(31))


@nb.njit(cache=True, nogil=True)
def _key(start, value, partner):
    """Tie-breaking key of one record from (seed, column) (in `start`), its value and its partner value."""
    h = _mix(np.float64(value + 0.0).view(np.uint64) ^ start)  # + 0.0 turns -0.0 into 0.0
    return _mix((h + np.uint64(_GOLDEN)) ^ np.float64(partner + 0.0).view(np.uint64))


def key_start(seed: int, column: int) -> np.uint64:
    return np.uint64(((seed & _MASK) * _GOLDEN + column + _GOLDEN) & _MASK)


@nb.njit(cache=True, nogil=True)
def _order_ties_by_key(order, v, values, partner, start):
    """Within every run of equal sorted values, reorder by (key, position); `order` is stable, so
    records with equal keys keep their input order."""
    n = v.shape[0]
    s = _mix(start)
    i = 0
    while i < n:
        j = i + 1
        while j < n and v[j] == v[i]:
            j += 1
        if j - i > 1:
            run = order[i:j].copy()
            keys = np.empty(j - i, np.uint64)
            for t in range(j - i):
                keys[t] = _key(s, values[run[t]], partner[run[t]])
            perm = np.argsort(keys, kind="mergesort")
            for t in range(j - i):
                order[i + t] = run[perm[t]]
        i = j


def ranks(values: np.ndarray, partner: np.ndarray, ties: str, seed: int, column: int) -> np.ndarray:
    """Unique ranks 1..n of `values` (float64), ties broken by the rule `ties` (see module docstring)."""
    values = np.ascontiguousarray(values)
    order, v = sort_column(values)
    if ties == "random":
        _order_ties_by_key(order, v, values, np.ascontiguousarray(partner), key_start(seed, column))
    r = np.empty(values.shape[0], dtype=np.int64)
    r[order] = np.arange(1, values.shape[0] + 1)
    return r


def _seed(func: str, seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise fail(func, f"seed must be an integer, got {show(seed) if isinstance(seed, str) else repr(seed)}")
    return int(seed)


def _rank_sums(func: str, x, xm, ties, seed) -> tuple[float, float, int, int]:
    """(sum |r - r'|, sum (r - r')^2, n, p) over all columns."""
    X, XM = pair(func, x, xm)
    ties = choice(func, "ties", ties, TIES)
    seed = _seed(func, seed)
    n, p = X.shape
    abs_sum = 0.0
    sq_sum = 0.0
    for j in range(p):
        d = (ranks(X[:, j], XM[:, j], ties, seed, j) - ranks(XM[:, j], X[:, j], ties, seed, j)).astype(np.float64)
        abs_sum += float(np.abs(d).sum())
        sq_sum += float((d * d).sum())
    return abs_sum, sq_sum, n, p


def rank_mae(x, xm, ties: str = "random", seed: int = DEFAULT_SEED) -> float:
    """rMAE = sum |r - r'| / (n p) (see the module docstring for ranks and ties)."""
    return rank_measures(x, xm, ties, seed, func="rank_mae")["rank_mae"]


def rank_mse(x, xm, ties: str = "random", seed: int = DEFAULT_SEED) -> float:
    """rMSE = sum (r - r')^2 / (n p)."""
    return rank_measures(x, xm, ties, seed, func="rank_mse")["rank_mse"]


def bounded_mae_denominator(n: int) -> int:
    """sum_{k=1..K} 2 (n - 2k + 1) with K = floor(n / 2), i.e. 2K(n - K): sum |r - r'| of reversed ranks."""
    k = n // 2
    return 2 * k * (n - k)


def bounded_mse_denominator(n: int) -> int:
    """sum_{k=1..K} 2 (n - 2k + 1)^2 = n (n^2 - 1) / 3: sum (r - r')^2 of reversed ranks."""
    return n * (n * n - 1) // 3


def rank_bounded_mae(x, xm, ties: str = "random", seed: int = DEFAULT_SEED) -> float:
    """Bounded rank MAE in [0, 1]: sum |r - r'| / (p * sum_{k=1..K} 2(n - 2k + 1)); 0 for n = 1."""
    return rank_measures(x, xm, ties, seed, func="rank_bounded_mae")["rank_bounded_mae"]


def rank_bounded_mse(x, xm, ties: str = "random", seed: int = DEFAULT_SEED) -> float:
    """Bounded rank MSE in [0, 1]: sum (r - r')^2 / (p * sum_{k=1..K} 2(n - 2k + 1)^2); 0 for n = 1.
    Without ties it equals (1 - Spearman's rho) / 2."""
    return rank_measures(x, xm, ties, seed, func="rank_bounded_mse")["rank_bounded_mse"]


def rank_measures(x, xm, ties: str = "random", seed: int = DEFAULT_SEED, *,
                  func: str = "rank_measures") -> dict[str, float]:
    """rank_mae, rank_mse, rank_bounded_mae and rank_bounded_mse from one ranking of both sides."""
    a, s, n, p = _rank_sums(func, x, xm, ties, seed)
    den_a, den_s = bounded_mae_denominator(n), bounded_mse_denominator(n)
    return {"rank_mae": a / (n * p), "rank_mse": s / (n * p),
            "rank_bounded_mae": a / (p * den_a) if den_a else 0.0,
            "rank_bounded_mse": s / (p * den_s) if den_s else 0.0}
