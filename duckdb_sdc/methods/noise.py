"""Laplace noise that is safe in floating point: exact discrete Laplace noise on a fine grid, drawn
from operating-system randomness.

Why not a float sampler. `value + numpy.random.laplace(0, b)` computes `b * log(u)` in floating
point. Mironov ("On significance of the least significant bits for differential privacy", CCS 2012)
showed that the set of doubles such a sampler can output depends on the true value: many doubles
are unreachable from one input and reachable from a neighbouring one, so the low-order bits of a
release can tell the two apart with high probability, whatever epsilon says. The textbook fix is to
make the output set independent of the data: release a point of a fixed grid, with noise whose law
on that grid is known exactly.

The construction (every step is exact integer arithmetic on uniformly random bits):

1. Grid. For a value c with sensitivity D > 0 and budget epsilon, take T = 2^j with j the smallest
   integer for which R = epsilon T / ln 2 >= 2^20 (j <= 50), and the integer bound N = floor(R)
   (computed with a relative margin of 2^-50 so that N <= R exactly). The grid step is
   g = D' / (N - 2) (rounded up) with D' = D plus allowances for floating-point rounding (below).
   The released value is g * (rint(c / g) + Z): a grid point, and the grid does not depend on c.
2. Noise. Z is discrete Laplace with P(Z = z) proportional to 2^(-|z| / T), on all integers. For
   neighbouring inputs, rint(c / g) moves by at most N - 2 grid steps (D' / g <= N - 2, plus one
   for rounding to the nearest integer), so every output's probability changes by a factor of at
   most 2^((N - 1) / T) <= e^epsilon: pure epsilon-DP, with no floating-point caveat on the output.
   Its scale is T g / ln 2 = D' / epsilon * (1 + at most 3 ln 2 / (epsilon T)), within a relative
   3e-6 of the nominal D / epsilon, and the grid step is ln 2 / T <= epsilon 2^-20 of the scale
   (about 1e-6 of it for epsilon = 1, less for smaller epsilon).
3. Sampling Z. Discrete Laplace noise is the geometric mechanism of Ghosh, Roughgarden &
   Sundararajan ("Universally utility-maximizing privacy mechanisms", STOC 2009); it is sampled as a
   sign and a geometric magnitude, rejecting the negative zero, as in Canonne, Kamath & Steinke
   ("The discrete Gaussian for differential privacy", NeurIPS 2020). A geometric magnitude M with P(M = m) proportional to q^m, q = 2^(-1/T), splits
   as M = U + T V with U and V independent: V counts the zero bits before the first one bit of the
   random stream (P(V = v) = 2^-(v+1), because q^T = 1/2), and U in [0, T) has P(U = u)
   proportional to q^u, which factorises over the j bits of u: bit i is an independent
   Bernoulli(1 / (1 + 2^(2^(i-j)))). These j probabilities depend only on i - j, so they are
   computed once, to 256 bits, with the decimal module at 110 digits. A Bernoulli(p) draw compares
   the random bit stream with the binary expansion of p; the first differing bit decides (a 0 where
   p has a 1 means the uniform number is below p), so a draw uses two random bits on average. Were
   the first 256 bits to agree with p (probability 2^-256 per comparison), or 256 zero bits to occur
   in a row, the sampler raises an error instead of guessing; these events do not depend on the
   data, so they cost nothing but a refusal. The magnitude saturates at 2^62 (probability below
   2^-(2^11)).
4. Floating point. The caller's sensitivity must bound the change of the computed (rounded) value;
   `duckdb_sdc.methods.dp` adds the rounding error of its sums and means to the paper's sensitivity.
   Here g / D' is rounded up, the rounding error of c / g (at most 2^-53 |c| / g) is added to D',
   and D' is at least 2^-50 N times the magnitude bound |c| <= magnitude, so that |c / g| < 2^51
   and every integer stays exact.

Randomness comes from `os.urandom` (the operating system's cryptographic generator) unless a seed
is given. A seed makes the noise reproducible, for tests and examples, and voids the privacy
guarantee (anyone with the seed can subtract the noise). Seeded noise is counter-based: draw t
reads the words mix(key_t + (i + 1) G), i = 0, 1, ..., of SplitMix64 (Steele, Lea & Flood,
"Fast splittable pseudorandom number generators", OOPSLA 2014; mix its output function, G =
0x9E3779B97F4A7C15) started at key_t = mix(mix(seed xor G) + t S), S = 0xD1B54A32D192ED03. So the
noise of cluster t (or record t) is a pure function of (seed, t): a distributed engine draws it
without drawing the ones before, and gets the same release.

Cost: j + 2 table look-ups and about 2 j + 3 random bits per draw, compiled with Numba; about
0.1 microsecond per draw for epsilon = 1.
"""

from __future__ import annotations

import math
import os
from decimal import Decimal, localcontext

import numba as nb
import numpy as np
from numba.cpython.unsafe.numbers import leading_zeros

from .._validate import SdcError, fail
from ._order import mix64 as _mix  # SplitMix64's output function (Steele, Lea & Flood 2014)

PRECISION_BITS = 20  # epsilon * T / ln 2 >= 2^PRECISION_BITS: the noise scale is exact to ~2^-20
J_MAX = 50
WORDS = 4  # 256-bit expansions of the Bernoulli thresholds
_LOG2E = 1.4426950408889634  # 1 / ln 2, correctly rounded
_MIN_EPSILON = 1e-12
_MAX_WORDS_PER_CALL = 1 << 21  # 16 MB of random bits per refill


def _thresholds() -> np.ndarray:
    """Row r: the first 256 bits of 1 / (1 + 2^(2^-(r+1))), the probability that bit j-1-r of U is
    set, as four 64-bit words, most significant first."""
    rows = np.empty((J_MAX, WORDS), dtype=np.uint64)
    with localcontext() as ctx:
        ctx.prec = 110
        ln2 = Decimal(2).ln()
        tolerance = Decimal(10) ** -100  # far above the error of three correctly rounded steps
        scale = Decimal(2) ** (64 * WORDS)
        for r in range(J_MAX):
            p = 1 / (1 + (ln2 * Decimal(2) ** -(r + 1)).exp())
            low, high = int((p - tolerance) * scale), int((p + tolerance) * scale)
            if low != high:  # the 256-bit prefix would be uncertain; never happens for these p
                raise RuntimeError(f"noise: threshold {r} is not determined to 256 bits")
            for t in range(WORDS):
                rows[r, t] = (low >> (64 * (WORDS - 1 - t))) & 0xFFFFFFFFFFFFFFFF
    return rows


THRESHOLDS = _thresholds()


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # SplitMix64's increment
_STREAM = np.uint64(0xD1B54A32D192ED03)  # odd multiplier that spreads the counters of one seed
_NO_WORDS = np.zeros(1, dtype=np.uint64)  # the buffer argument in keyed mode (never read)



@nb.njit(cache=True, nogil=True)
def stream_key(seed, counter):
    """The key of draw `counter` under `seed`: mix(mix(seed ^ G) + counter * S) (64-bit words)."""
    return _mix(_mix(np.uint64(seed) ^ _GOLDEN) + np.uint64(counter) * _STREAM)


@nb.njit(cache=True, nogil=True)
def stream_word(key, i):
    """Word i of the stream of `key`: SplitMix64 started at `key`, mix(key + (i + 1) G)."""
    return _mix(key + (np.uint64(i) + np.uint64(1)) * _GOLDEN)


@nb.njit(cache=True, nogil=True)
def _peek(buf, key, keyed, pos):
    """The 64 random bits starting at bit `pos` of the stream (words read most significant bit
    first): of the buffer `buf` (which holds one spare word at its end), or with `keyed` of the
    stream of `key`."""
    w = pos >> 6
    o = pos & 63
    hi = stream_word(key, w) if keyed else buf[w]
    if o == 0:
        return hi
    lo = stream_word(key, w + 1) if keyed else buf[w + 1]
    return (hi << np.uint64(o)) | (lo >> np.uint64(64 - o))


@nb.njit(cache=True, nogil=True)
def _bernoulli(buf, key, keyed, pos, table, row):
    """Bernoulli(p) with p's expansion in table[row]: (outcome, new position); outcome -1 if the
    stream agreed with all 256 bits of p."""
    for t in range(table.shape[1]):
        word = table[row, t]
        diff = _peek(buf, key, keyed, pos) ^ word
        if diff != 0:
            z = leading_zeros(diff)
            return np.int64((word >> np.uint64(63 - z)) & np.uint64(1)), pos + z + 1
        pos += 64
    return np.int64(-1), pos


@nb.njit(cache=True, nogil=True)
def _attempt(buf, key, keyed, pos, j, table):
    """One attempt at a discrete Laplace draw (P(z) ~ 2^(-|z| / 2^j)) from bit `pos` of the stream:
    (z, new position, status) with status 1 = drawn, 0 = the negative zero (rejected: attempt
    again from the new position), -1 = a 256-bit tie (see the module docstring)."""
    big_t = np.int64(1) << np.int64(j)
    v_max = (np.int64(1) << np.int64(62 - j)) - 1
    negative = (_peek(buf, key, keyed, pos) >> np.uint64(63)) != 0
    pos += 1
    u = np.int64(0)
    for b in range(j):
        bit, pos = _bernoulli(buf, key, keyed, pos, table, j - 1 - b)
        if bit < 0:
            return np.int64(0), pos, -1
        u |= bit << np.int64(b)
    v = np.int64(0)
    found = False
    for _ in range(table.shape[1]):
        word = _peek(buf, key, keyed, pos)
        if word != 0:
            z = leading_zeros(word)
            v += z
            pos += z + 1
            found = True
            break
        v += 64
        pos += 64
    if not found:
        return np.int64(0), pos, -1
    magnitude = u + big_t * min(v, v_max)
    if negative and magnitude == 0:
        return np.int64(0), pos, 0
    return (-magnitude if negative else magnitude), pos, 1


@nb.njit(cache=True, nogil=True)
def _draw(out, start, j, buf, table):
    """Fill out[start:] with discrete Laplace draws from the buffer, one stream for all, while it has
    room for a whole attempt. Returns (next index to fill, status): status 0 = buffer used up,
    1 = done, -1 = a 256-bit tie."""
    nbits = (buf.shape[0] - 1) * 64
    budget = 1 + 64 * table.shape[1] * (j + 1)  # most bits one attempt can consume
    pos = np.int64(0)
    i = start
    while i < out.shape[0]:
        if pos + budget > nbits:
            return i, 0
        z, pos, status = _attempt(buf, np.uint64(0), False, pos, j, table)
        if status < 0:
            return i, -1
        if status == 1:
            out[i] = z
            i += 1
    return i, 1


@nb.njit(cache=True, nogil=True)
def _draw_keyed(out, seed, counters, j, table):
    """out[i] = the discrete Laplace draw of the stream of stream_key(seed, counters[i]): each draw
    a pure function of (seed, counter). Returns -1 at a 256-bit tie, else 1."""
    for i in range(out.shape[0]):
        key = stream_key(seed, counters[i])
        pos = np.int64(0)
        status = 0
        while status == 0:
            z, pos, status = _attempt(_NO_WORDS, key, True, pos, j, table)
        if status < 0:
            return -1
        out[i] = z
    return 1


class RandomWords:
    """Uniform 64-bit words from the operating system's cryptographic generator."""

    def __call__(self, n: int) -> np.ndarray:
        return np.frombuffer(os.urandom(8 * n), dtype=np.uint64).copy()


def precision_exponent(epsilon: float) -> int:
    """j such that T = 2^j is the noise's scale in grid steps (times ln 2): the smallest j >= 0
    with epsilon 2^j / ln 2 >= 2^20, at most 50."""
    j = 0
    while j < J_MAX and epsilon * _LOG2E * 2.0 ** j < 2.0 ** PRECISION_BITS:
        j += 1
    return j


def _tie() -> RuntimeError:
    return RuntimeError("noise: 256 random bits agreed with a sampling threshold (probability 2^-256, "
                        "independent of the data); nothing was released, try again")


def discrete_laplace(n: int, j: int, words=None) -> np.ndarray:
    """n independent draws of Z with P(Z = z) proportional to 2^(-|z| / 2^j), z any integer, from one
    stream of uniform 64-bit words (`words(count)` returns them; default the operating system's)."""
    if not 0 <= j <= J_MAX:
        raise ValueError(f"discrete_laplace: j must be in [0, {J_MAX}], got {j}")
    words = words or RandomWords()
    out = np.empty(n, dtype=np.int64)
    bits_per_draw = 2 * j + 4
    budget_words = WORDS * (j + 1) + 2
    i = 0
    while i < n:
        need = (n - i) * bits_per_draw // 64 * 9 // 8 + budget_words + 2
        i, status = _draw(out, i, j, words(min(need, _MAX_WORDS_PER_CALL)), THRESHOLDS)
        if status < 0:
            raise _tie()
    return out


def discrete_laplace_keyed(seed: int, counters, j: int) -> np.ndarray:
    """One draw of Z (as `discrete_laplace`) per counter: the draw of counter t reads the stream of
    words mix(key + (i + 1) G), i = 0, 1, ..., with key = stream_key(seed, t) (SplitMix64 over a
    hashed key; see `stream_key`). So the draw of cluster t is a pure function of (seed, t): another
    engine can draw it without drawing the ones before. For reproducible noise only: it is not
    private (anyone with the seed can recompute it)."""
    if not 0 <= j <= J_MAX:
        raise ValueError(f"discrete_laplace_keyed: j must be in [0, {J_MAX}], got {j}")
    counters = np.ascontiguousarray(counters, dtype=np.uint64)
    out = np.empty(counters.shape[0], dtype=np.int64)
    if _draw_keyed(out, np.uint64(seed), counters, j, THRESHOLDS) < 0:
        raise _tie()
    return out


def grid_parameters(sensitivity: np.ndarray, epsilon: float, magnitude) -> tuple[np.ndarray, int, int]:
    """(grid step g per value, j, N) for the construction in the module docstring; g is 0 where
    the sensitivity is 0."""
    j = precision_exponent(epsilon)
    n_bound = math.floor(epsilon * _LOG2E * 2.0 ** j * (1 - 2.0 ** -50))
    if n_bound < 3:
        raise ValueError(f"epsilon = {epsilon} is too small for the sampler")
    magnitude = np.broadcast_to(np.asarray(magnitude, dtype=np.float64), sensitivity.shape)
    allowed = np.maximum(sensitivity, magnitude * (n_bound * 2.0 ** -50)) + magnitude * 2.0 ** -51
    step = allowed / (n_bound - 2) * (1 + 2.0 ** -50)
    return np.where(sensitivity > 0, step, 0.0), j, n_bound


_SMALLEST_STEP = 2.0 ** -1022  # the grid step must be a normal double (rounding it up is exact to 2^-52)


class NoiseUnderflow(SdcError):
    """The sampler's refusal of a noise scale whose grid step would not be a normal double. It carries
    the first such value's `sensitivity` and `magnitude` (in the sampler's unit), so that a caller that
    rescaled its data can say what caused it in the data's unit (`duckdb_sdc.methods.dp`)."""

    sensitivity: float = 0.0
    magnitude: float = 0.0


def laplace_mechanism(values, sensitivity, epsilon: float, magnitude, *, seed: int | None = None,
                      counters=None) -> np.ndarray:
    """values + Laplace noise of scale sensitivity / epsilon, released on a grid (see the module
    docstring): pure epsilon-DP for each value whose computed change between neighbouring inputs is
    at most its sensitivity.

    values: float64 array; sensitivity: array of the same length, >= 0 (0: the value is released
    unchanged, it cannot change between neighbours); magnitude: a bound on |value| for this input
    and every neighbour (scalar or array); seed: None for operating-system randomness, or an integer
    for reproducible noise (which voids the guarantee): the noise of value i is then a pure function
    of (seed, counters[i]) (`discrete_laplace_keyed`; counters default to 0, 1, ..., n - 1).

    Refuses, rather than releasing a value with vanished or broken noise, a sensitivity whose grid
    step would not be a normal double (data around 1e-300 and below: rescale them, as
    `duckdb_sdc.methods.dp` does) and a noisy value beyond the largest double.
    """
    func = "laplace_mechanism"
    values = np.ascontiguousarray(values, dtype=np.float64)
    sensitivity = np.ascontiguousarray(sensitivity, dtype=np.float64)
    if sensitivity.shape != values.shape:
        raise fail(func, f"sensitivity has shape {sensitivity.shape}, values {values.shape}")
    if not np.isfinite(epsilon) or epsilon < _MIN_EPSILON:
        raise fail(func, f"epsilon = {epsilon} is outside the sampler's range [{_MIN_EPSILON}, inf)")
    bad = ~np.isfinite(sensitivity) | (sensitivity < 0)
    if bad.any():
        raise fail(func, f"the sensitivity must be finite and >= 0, got {sensitivity[bad][0]} (from the values "
                         "or their bounds lb and ub)")
    step, j, _ = grid_parameters(sensitivity, epsilon, magnitude)
    noisy = sensitivity > 0
    tiny = noisy & ~(step >= _SMALLEST_STEP)
    if tiny.any():
        first = int(np.flatnonzero(tiny)[0])
        detail = (f"the noise scale underflows: a sensitivity of {sensitivity[first]:g} with epsilon = {epsilon:g} "
                  "needs a grid finer than the smallest normal double; nothing is released (rescale the data, e.g. "
                  "by a power of two)")
        err = NoiseUnderflow(f"{func}: {detail}", func=func, detail=detail)
        err.sensitivity = float(sensitivity[first])
        err.magnitude = float(np.broadcast_to(np.asarray(magnitude, dtype=np.float64), sensitivity.shape)[first])
        raise err
    out = values.copy()
    if noisy.any():
        g = step[noisy]
        if seed is None:
            z = discrete_laplace(int(noisy.sum()), j)
        else:
            count = np.arange(values.shape[0], dtype=np.uint64) if counters is None else \
                np.ascontiguousarray(counters, dtype=np.uint64)
            if count.shape != values.shape:
                raise fail(func, f"counters has shape {count.shape}, values {values.shape}")
            z = discrete_laplace_keyed(seed, count[noisy], j)
        with np.errstate(over="ignore"):
            out[noisy] = (np.rint(values[noisy] / g) + z) * g
        if not np.isfinite(out).all():
            raise fail(func, "a noisy value exceeds the largest double; nothing is released (rescale the data)")
    return out
