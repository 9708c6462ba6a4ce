"""PRAM, the post-randomisation method (Gouweleeuw, Kooiman, Willenborg & de Wolf 1998, "Post
randomisation for statistical disclosure control: theory and implementation", Journal of Official
Statistics 14(4)), and invariant PRAM as sdcMicro's `pram` builds it.

PRAM releases, for a record whose category is i, category j with probability P_ij, independently for
every record: a Markov (row-stochastic) matrix P over the column's categories. The matrix is
published beside the release, so that an analyst can correct estimates (the expected released
frequencies are p' = p P).

Invariant PRAM (the paper's section 4; sdcMicro's construction, read from its source): with the
column's L categories and their shares p in the stratum,

1. P_ii = d_i, drawn uniformly in [pd, 1] for every category (sdcMicro's `runif(L, pd, 1)`), and
   P_ij = (1 - d_i) / (L - 1) for j != i;
2. Q, the matrix of the reverse probabilities, Q_kj = P_jk p_j / sum_l p_l P_lk;
3. R = P Q, which leaves p invariant (p R = p: the expected released frequencies are the original
   ones);
4. the released matrix R_alpha = alpha R + (1 - alpha) I (alpha in [0, 1]; sdcMicro's default 0.5
   and pd = 0.8), also invariant and row-stochastic.

Choices where the paper leaves them open: the categories are those present in the stratum (sdcMicro
uses the factor's levels; a level absent from a stratum has p_j = 0, nothing is ever released into
it, and its row is never used, so the released values are the same); a column with one category is
released unchanged (R = [1]). A user matrix (`pram` with `transition=`) is used as given: its
categories must include every category of the column, its rows must sum to 1 within 1e-9, and its
entries must lie in [0, 1].

Draws. Every random number is a 53-bit uniform u in [0, 1): the top 53 bits of a 64-bit word. Without
a seed the words come from the operating system's cryptographic generator (`os.urandom`), as the
package's noise does; with a seed, word i is SplitMix64's mix(key + (i + 1) G) with key =
stream_key(seed, 0) (`duckdb_sdc.methods.noise`), so a seeded PRAM repeats exactly and, as for every
seeded noise, whoever holds the seed can undo it (no protection). The first L words give the
diagonal (d_i = pd + (1 - pd) u_i), then word L + r gives record r (in the order given) its
released category: the first j with u < R_i1 + ... + R_ij (inverse transform on the row, exact to
2^-53).

What PRAM guarantees: no k-anonymity. A record's released category is random; the likelihood ratio of
any released category between two original ones is at most e^epsilon with epsilon = max_j ln(max_i
R_ij / min_i R_ij) (`Pram.epsilon`, infinite when some R_ij = 0): randomised response for the fixed
matrix. The matrix itself is computed from the stratum's frequencies and published, so this is not
differential privacy of the data set.

Cost: O(n log L) for the draws plus O(L^3) for the matrix; repeated values cost no more than distinct
ones. No DuckDB here.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

import numba as nb
import numpy as np

from .._validate import fail, show
from ..params import SEED, Number
from ._categories import encode_column
from .noise import stream_word, stream_key
from .recoding import offending

PROBABILITY = Number(lower=0, upper=1, doc="a probability in [0, 1]")
ROW_TOLERANCE = 1e-9  # a user matrix's rows must sum to 1 within this
_SCALE = 2.0 ** -53


@dataclass(frozen=True)
class Pram:
    """The result of `pram`: `released` aligned with the input (None where it was NULL), the
    `categories` (the rows and columns of `matrix`, in ascending order), the transition `matrix`
    (row-stochastic: P(released j | original i)), `changed` (records whose category changed) and
    `epsilon` (module docstring)."""

    released: np.ndarray
    categories: np.ndarray
    matrix: np.ndarray
    changed: int

    @property
    def epsilon(self) -> float:
        return randomised_response_epsilon(self.matrix)

    def transitions(self) -> list[tuple]:
        """(from, to, probability) of every entry of the matrix, row by row."""
        L = self.categories.shape[0]
        return [(self.categories[i], self.categories[j], float(self.matrix[i, j])) for i in range(L) for j in range(L)]


def randomised_response_epsilon(R: np.ndarray) -> float:
    """max over released j of ln(max_i R_ij / min_i R_ij); 0 for one category, inf if a column has a 0
    beside a positive entry."""
    if R.shape[0] <= 1:
        return 0.0
    top, low = R.max(axis=0), R.min(axis=0)
    if (low <= 0).any():
        return math.inf
    return float(np.log(top / low).max())


@nb.njit(cache=True, nogil=True)
def _keyed_words(seed, start, count):
    key = stream_key(np.uint64(seed), np.uint64(0))
    out = np.empty(count, np.uint64)
    for i in range(count):
        out[i] = stream_word(key, np.uint64(start + i))
    return out


def uniforms(count: int, seed: int | None, start: int = 0) -> np.ndarray:
    """`count` uniforms in [0, 1) on the 2^-53 grid: words start, start + 1, ... of the seeded stream,
    or fresh words of os.urandom without a seed."""
    if count == 0:
        return np.zeros(0)
    if seed is None:
        words = np.frombuffer(os.urandom(8 * count), dtype=np.uint64)
    else:
        words = _keyed_words(np.uint64(seed), start, count)
    return (words >> np.uint64(11)).astype(np.float64) * _SCALE


@nb.njit(cache=True, nogil=True)
def _draw(codes, u, cumulative, out):
    L = cumulative.shape[1]
    changed = 0
    for r in range(codes.shape[0]):
        i = codes[r]
        lo, hi = 0, L - 1
        while lo < hi:  # the first j with u < cumulative[i, j]
            mid = (lo + hi) // 2
            if u[r] < cumulative[i, mid]:
                hi = mid
            else:
                lo = mid + 1
        while cumulative[i, lo] - (cumulative[i, lo - 1] if lo > 0 else 0.0) <= 0.0 and lo > 0:
            lo -= 1  # never land on a zero-probability category (u at a rounding boundary)
        out[r] = lo
        if lo != i:
            changed += 1
    return changed


def invariant_matrix(shares: np.ndarray, diagonal: np.ndarray, alpha: float) -> np.ndarray:
    """sdcMicro's invariant PRAM matrix (module docstring) for category shares p (all > 0), the
    diagonal d of P and alpha."""
    L = shares.shape[0]
    if L == 1:
        return np.ones((1, 1))
    P = np.repeat(((1.0 - diagonal) / (L - 1))[:, None], L, axis=1)
    np.fill_diagonal(P, diagonal)
    s = shares @ P  # s_k = sum_l p_l P_lk > 0 since every p_l > 0 and every row of P sums to 1
    Q = (P * shares[:, None]).T / s[:, None]  # Q_kj = P_jk p_j / s_k
    R = P @ Q
    out = alpha * R + (1.0 - alpha) * np.eye(L)
    return out / out.sum(axis=1, keepdims=True)  # exact row sums up to rounding


def _user_matrix(func: str, transition, categories: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(categories, matrix) of a user transition: a mapping {(from, to): probability}; its categories
    are every from and to value, ascending; missing entries are 0."""
    if not isinstance(transition, Mapping) or not transition:
        raise fail(func, f"transition must map (from, to) pairs to probabilities, got {show(transition)}",
                   "transition")
    cats = sorted({a for a, _ in transition} | {b for _, b in transition})
    absent = [c for c in categories.tolist() if c not in set(cats)]
    if absent:
        raise fail(func, f"transition lacks the column's categories {offending(absent)}", "transition")
    index = {c: i for i, c in enumerate(cats)}
    M = np.zeros((len(cats), len(cats)))
    for (a, b), q in transition.items():
        v = PROBABILITY.check(q, func, "transition")
        M[index[a], index[b]] = v
    sums = M.sum(axis=1)
    bad = [cats[i] for i in np.flatnonzero(np.abs(sums - 1.0) > ROW_TOLERANCE)]
    if bad:
        raise fail(func, f"transition must be row-stochastic: the probabilities from {offending(bad)} do not sum "
                         "to 1", "transition")
    return np.array(cats, dtype=object), M / sums[:, None]


def pram_codes(codes: np.ndarray, L: int, pd: float = 0.8, alpha: float = 0.5, seed: int | None = None,
               matrix: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """PRAM of integer codes 0..L-1 (no NULL; every code present unless `matrix` is given): (released
    codes, matrix, changed). With `matrix` (L x L, row-stochastic) it is used as it is."""
    n = codes.shape[0]
    if matrix is None:
        shares = np.bincount(codes, minlength=L) / max(n, 1)
        diagonal = pd + (1.0 - pd) * uniforms(L, seed)
        matrix = invariant_matrix(shares, diagonal, alpha)
        start = L
    else:
        start = 0
    if n == 0:
        return codes.copy(), matrix, 0
    u = uniforms(n, seed, start)
    out = np.empty(n, np.int64)
    changed = _draw(codes.astype(np.int64), u, np.cumsum(matrix, axis=1), out)
    return out, matrix, int(changed)


def pram(x, pd=0.8, alpha=0.5, *, seed=None, transition: Mapping | None = None) -> Pram:
    """Invariant PRAM of the categorical column x (any values; None / NaN is NULL and stays NULL), or
    PRAM with a user `transition` {(from, to): probability}. pd: the least diagonal entry of P, in
    [0, 1]; alpha: the weight of R, in [0, 1]; seed: None (operating-system randomness) or an integer
    (reproducible, no protection). See the module docstring."""
    func = "pram"
    seed = SEED.check(seed, func, "seed")
    codes, categories = encode_column(np.asarray(x, dtype=object) if not isinstance(x, np.ndarray) else x)
    present = codes >= 0
    if transition is None:
        pd = PROBABILITY.check(pd, func, "pd")
        alpha = PROBABILITY.check(alpha, func, "alpha")
        released, matrix, changed = pram_codes(codes[present], categories.shape[0], pd, alpha, seed)
        cats = categories
    else:
        cats, matrix = _user_matrix(func, transition, categories)
        index = {c: i for i, c in enumerate(cats.tolist())}
        mapped = np.array([index[c] for c in categories.tolist()], np.int64)
        released, matrix, changed = pram_codes(mapped[codes[present]], cats.shape[0], seed=seed, matrix=matrix)
    out = np.full(codes.shape[0], None, dtype=object)
    out[present] = np.asarray(cats, dtype=object)[released]
    return Pram(out, np.asarray(cats, dtype=object), matrix, changed)


__all__ = ["PROBABILITY", "Pram", "invariant_matrix", "pram", "pram_codes", "randomised_response_epsilon",
           "uniforms"]
