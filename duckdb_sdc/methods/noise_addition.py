"""Masking by additive Gaussian noise (Brand 2002, "Microdata protection through noise addition",
in Inference Control in Statistical Databases, LNCS 2316, pp. 97-116; the noise experiments of the
bounded rank-measures paper use it).

Definitions, following Brand (one parameter, `level`, written alpha there):

* uncorrelated noise, `add_noise`: every column j gets x'_ij = x_ij + e_ij with independent
  e_ij ~ N(0, level * S_j^2), S_j the column's sample standard deviation (n - 1). So `level` scales
  the VARIANCE: the noise's standard deviation is sqrt(level) * S_j, and the released column's
  variance is about (1 + level) S_j^2.
* correlated noise, `add_noise_multi(..., correlated=True)`: the records of p columns get
  x'_i = x_i + e_i with e_i ~ N(0, level * Sigma), Sigma the sample covariance matrix (n - 1) of the
  columns, so the released covariance is about (1 + level) Sigma and the correlations are kept. Each
  column's noise has the same variance level * S_j^2 as in the uncorrelated form, which is
  `add_noise_multi(..., correlated=False)` (every column independently, one call).

sdcMicro's `addNoise` scales differently in its two forms: method 'additive' draws with sd
noise/100 * S_j (so noise = 100 sqrt(level)), method 'correlated' with covariance noise/100 * Sigma
(so noise = 100 level). Here both forms take the variance fraction, as Brand does.

What is guaranteed: nothing formal. Noise addition is not differential privacy (its scale follows
the data, it is Gaussian on an unbounded domain, and a constant column gets no noise at all); its
protection is measured, by record linkage and interval disclosure, like every masking method here.

The noise is drawn once, when the function runs, and returned; a release stores it. Draws: standard
normals from NumPy's PCG64; draw number i (in input order, row by row for several columns) comes
from block i // 2^20, whose generator is seeded with SeedSequence(seed, spawn_key=(block,)), so the
same input in the same order with the same seed gives the same noise whatever the number of threads
(two threads fill the blocks of large inputs). seed None draws fresh entropy (not reproducible).

Numerics: each column is first scaled by a power of two 2^-e (e the exponent of its largest
magnitude), its moments and noise are computed at that scale, and the result is scaled back: no
square of a value near 1e308 overflows, no subnormal spread underflows, and data multiplied by any
power of two give exactly the noise multiplied by it (same seed). A noisy value beyond the float64
range is refused, never returned as infinity. Cost O(n p + p^3) (one eigendecomposition).
"""

from __future__ import annotations

import math
import threading

import numba as nb
import numpy as np

from .._validate import fail, finite_values
from ..params import FLAG, POSITIVE, SEED
from ._order import PARALLEL_LOCK, PARALLEL_MIN

BLOCK = 1 << 20  # draws per generator block (the reproducibility unit)


def normals(count: int, seed: int | None) -> np.ndarray:
    """`count` standard normal draws, block by block as the module docstring says."""
    entropy = np.random.SeedSequence(seed).entropy
    out = np.empty(count, np.float64)
    blocks = (count + BLOCK - 1) // BLOCK

    def fill(first: int) -> None:
        for b in range(first, blocks, 2):
            gen = np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=(b,))))
            gen.standard_normal(out=out[b * BLOCK:min(count, (b + 1) * BLOCK)])

    if blocks > 1:  # two threads: numpy's generators release the GIL while filling
        worker = threading.Thread(target=fill, args=(1,))
        worker.start()
        fill(0)
        worker.join()
    else:
        fill(0)
    return out


def _exponent(column: np.ndarray) -> int:
    """e with max |column| in [2^(e-1), 2^e) (0 for an all-zero column)."""
    top = float(np.max(np.abs(column))) if column.size else 0.0
    return math.frexp(top)[1] if top > 0 else 0


def _power(e: int) -> float:
    return math.ldexp(1.0, e)


def _scaled(column: np.ndarray, e: int) -> np.ndarray:
    """column * 2^-e, exactly (a product by a normal power of two; ldexp beyond)."""
    if -1021 <= e <= 1021:
        return column * _power(-e)
    return np.ldexp(column, -e)


@nb.njit(cache=True, nogil=True, parallel=True)
def _noisy_parallel(x, inv, s, z, pw, out):
    for i in nb.prange(x.shape[0]):
        out[i] = (x[i] * inv + s * z[i]) * pw


def _noisy(x: np.ndarray, e: int, s: float, z: np.ndarray) -> np.ndarray:
    """(x 2^-e + s z) 2^e in one pass where the powers are normal numbers."""
    if -1021 <= e <= 1021:
        out = np.empty_like(x)
        if x.shape[0] >= PARALLEL_MIN:
            with PARALLEL_LOCK:
                _noisy_parallel(x, _power(-e), s, z, _power(e), out)
        else:
            np.multiply(x, _power(-e), out=out)
            out += s * z
            out *= _power(e)
        return out
    return np.ldexp(_scaled(x, e) + s * z, e)


def _sample_sd(y: np.ndarray) -> float:
    mean = float(y.mean())
    d = y - mean
    return math.sqrt(float(np.dot(d, d)) / (y.shape[0] - 1))


def _check_count(func: str, n: int) -> None:
    if n < 2:
        raise fail(func, f"needs at least 2 values to measure the spread the noise is scaled to, got {n} "
                         "(a single record would be released with no noise)")


def _refuse_overflow(func: str, out: np.ndarray) -> np.ndarray:
    if not np.isfinite(out).all():
        raise fail(func, "a noisy value is beyond the float64 range (about 1.8e308); lower level or rescale "
                         "the column")
    return out


def add_noise(x, level, *, seed=None) -> np.ndarray:
    """Uncorrelated noise: x + N(0, level * S^2) for every value, S the sample sd (n - 1) of x;
    `level` > 0 is the noise's variance as a fraction of the column's (Brand's alpha). See the module
    docstring for the draws, the seed and the numerics. Needs at least 2 values."""
    func = "add_noise"
    x = finite_values(func, "x", x)
    level = POSITIVE.check(level, func, "level")
    seed = SEED.check(seed, func, "seed")
    if x.shape[0] == 0:
        return x.copy()
    _check_count(func, x.shape[0])
    e = _exponent(x)
    s = math.sqrt(level) * _sample_sd(_scaled(x, e))
    z = normals(x.shape[0], seed)
    with np.errstate(over="ignore"):  # an overflow gives infinity, refused here
        out = _noisy(x, e, s, z)
    return _refuse_overflow(func, out)


def _matrix(func: str, X) -> np.ndarray:
    A = np.asarray(X, dtype=np.float64)
    if A.ndim != 2 or A.shape[1] == 0:
        raise fail(func, f"X must be an n x p array with p >= 1, got shape {A.shape}")
    if not np.isfinite(A).all():
        bad = A[~np.isfinite(A)][0]
        raise fail(func, f"X contains {float(bad)}; NaN and infinite values are refused (use NULL for a missing value)")
    return A


def noise_root(cov: np.ndarray) -> np.ndarray:
    """A p x p matrix R with R R^T = cov for a symmetric positive semi-definite cov (singular ones
    too): V sqrt(max(Lambda, 0)) from the eigendecomposition, each eigenvector's largest entry made
    positive so that the root, and with it the noise, is deterministic."""
    values, vectors = np.linalg.eigh(cov)
    pivot = np.argmax(np.abs(vectors), axis=0)
    signs = np.where(vectors[pivot, np.arange(vectors.shape[1])] < 0, -1.0, 1.0)
    return (vectors * signs) * np.sqrt(np.clip(values, 0.0, None))


def add_noise_multi(X, level, *, correlated=True, seed=None) -> np.ndarray:
    """Noise for the n records (rows) of X, n x p: correlated (default), x_i + N(0, level * Sigma)
    with Sigma the sample covariance matrix (n - 1) of the columns; or uncorrelated, every column j
    independently with variance level * S_j^2. Draws are taken record by record (row-major). See the
    module docstring. Needs at least 2 records."""
    func = "add_noise_multi"
    A = _matrix(func, X)
    level = POSITIVE.check(level, func, "level")
    correlated = FLAG.check(correlated, func, "correlated")
    seed = SEED.check(seed, func, "seed")
    n, p = A.shape
    if n == 0:
        return A.copy()
    _check_count(func, n)
    exps = [_exponent(A[:, j]) for j in range(p)]
    Y = np.column_stack([_scaled(A[:, j], exps[j]) for j in range(p)])
    Z = normals(n * p, seed).reshape(n, p)
    if correlated:
        noise = (Z @ noise_root(np.cov(Y, rowvar=False, ddof=1).reshape(p, p)).T) * math.sqrt(level)
    else:
        noise = Z * (math.sqrt(level) * np.array([_sample_sd(Y[:, j]) for j in range(p)]))
    with np.errstate(over="ignore"):  # an overflow gives infinity, refused below
        out = np.column_stack([np.ldexp(Y[:, j] + noise[:, j], exps[j]) for j in range(p)])
    return _refuse_overflow(func, out)


__all__ = ["BLOCK", "add_noise", "add_noise_multi", "noise_root", "normals"]
