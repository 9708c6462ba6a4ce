"""Exact sums of doubles in Numba: a fixed-point accumulator wide enough for every bit of the values a
masking method compares, so that a comparison that ties in exact arithmetic is found to tie, whatever
the order of the additions (a float running sum decides such a tie by its rounding, and two engines
that add in different orders would decide it differently).

A value is held as 40 limbs of 32 bits in int64 (bit 0 of limb 0 is 2^-1127, one below the last
mantissa bit of the smallest subnormal double as `_split` writes it; limb 39 ends at 2^153), limb j
worth 2^(32 j - 1127). A double m 2^q (|m| < 2^53) is added as three 32-bit pieces to three
neighbouring limbs, each below 2^33; carries are propagated only when asked (`normalise`), and by the
additions before a limb could overflow (after 2^28 additions, a quarter of what int64 holds). Doubles of magnitude below 2^20 and their products by a count below 2^63 can be
added (others are refused): the callers' values are below 2 (masking methods scale a stratum's values
by a power of two into [-1, 1) and centre them), and any number of such terms fits.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

LIMBS = 40
_BIAS = 1127  # bit 0 of limb 0 is 2^-1127: 2^-1074 (the smallest subnormal) is 2^53 of it, and half of it 2^52
_MASK = 0xFFFFFFFF
_FLUSH = 1 << 28  # additions between carry propagations: each adds below 2^33 to a limb
_LIMIT = 2.0**20


def accumulator() -> np.ndarray:
    """A new accumulator (zero); the last entry counts additions since the last propagation."""
    return np.zeros(LIMBS + 1, np.int64)


@nb.njit(cache=True, nogil=True)
def normalise(acc):
    """Propagate carries: limbs 0..LIMBS-2 in [0, 2^32), the last one signed; the value is unchanged."""
    for j in range(LIMBS - 1):
        carry = acc[j] >> 32  # floor division by 2^32
        acc[j] -= carry << 32
        acc[j + 1] += carry
    acc[LIMBS] = 0


@nb.njit(cache=True, nogil=True)
def _add_bits(acc, m, pos, sign):
    """acc += sign m 2^(pos - 1127), for 0 <= m < 2^53 and pos >= 0."""
    j = pos >> 5
    s = pos & 31
    t = (m & _MASK) << s  # < 2^63
    u = (m >> 32) << s  # < 2^52
    acc[j] += sign * (t & _MASK)
    acc[j + 1] += sign * ((t >> 32) + (u & _MASK))
    acc[j + 2] += sign * (u >> 32)
    acc[LIMBS] += 1
    if acc[LIMBS] >= _FLUSH:
        normalise(acc)


@nb.njit(cache=True, nogil=True)
def _split(x):
    """(m, q, sign) with x = sign m 2^q, 0 <= m < 2^53, q >= -1126 (2^-1074 is 2^52 2^-1126)."""
    f, e = math.frexp(x)
    m = np.int64(f * 9007199254740992.0)  # f 2^53: an integer, |f| in [1/2, 1)
    sign = 1
    if m < 0:
        m = -m
        sign = -1
    return m, e - 53, sign


@nb.njit(cache=True, nogil=True)
def add(acc, x, sign):
    """acc += sign x (sign: 1 or -1), exactly."""
    if x == 0.0:
        return
    if not abs(x) < _LIMIT:
        raise ValueError("duckdb_sdc.methods._exact: a value too large for the exact accumulator")
    m, q, s = _split(x)
    _add_bits(acc, m, q + _BIAS, s * sign)


_LIMIT_EXPONENT = 1023 + 20  # biased exponent of 2^20


@nb.njit(cache=True, nogil=True)
def add_range(acc, v, lo, hi, sign):
    """acc += sign (v[lo] + ... + v[hi - 1]), exactly (v: a contiguous float64 array). The doubles are
    taken apart from their bits (about 3 ns a value, a tenth of `math.frexp`'s way)."""
    bits = v.view(np.int64)
    count = acc[LIMBS]
    for i in range(lo, hi):
        b = bits[i]
        biased = (b >> 52) & 0x7FF
        m = b & 0xFFFFFFFFFFFFF
        if biased == 0:
            if m == 0:
                continue
            pos = 53  # a subnormal number: m 2^-1074
        elif biased >= _LIMIT_EXPONENT:
            raise ValueError("duckdb_sdc.methods._exact: a value too large for the exact accumulator")
        else:
            m |= 1 << 52
            pos = biased + 52  # m 2^(biased - 1075)
        # `_add_bits` written out: a call per value (with its array reference counting) cost 30 times this
        s = -sign if b < 0 else sign
        j = pos >> 5
        t = (m & _MASK) << (pos & 31)
        u = (m >> 32) << (pos & 31)
        acc[j] += s * (t & _MASK)
        acc[j + 1] += s * ((t >> 32) + (u & _MASK))
        acc[j + 2] += s * (u >> 32)
        count += 1
        if count >= _FLUSH:
            normalise(acc)
            count = 0
    acc[LIMBS] = count


@nb.njit(cache=True, nogil=True)
def _add_product_bits(acc, m, pos, c, sign):
    """acc += sign c m 2^(pos - 1127) for 0 <= m < 2^53 and 0 <= c < 2^63: the 26-bit pieces of c times
    the 26- and 27-bit pieces of m, each product below 2^53, added as `_add_bits` adds (written out:
    a call per piece cost more than the arithmetic)."""
    m0 = m & ((1 << 26) - 1)
    m1 = m >> 26
    count = acc[LIMBS]
    while c > 0:
        piece = c & ((1 << 26) - 1)
        if piece:
            for part, at in ((piece * m0, pos), (piece * m1, pos + 26)):
                j = at >> 5
                t = (part & _MASK) << (at & 31)
                u = (part >> 32) << (at & 31)
                acc[j] += sign * (t & _MASK)
                acc[j + 1] += sign * ((t >> 32) + (u & _MASK))
                acc[j + 2] += sign * (u >> 32)
                count += 1
        c >>= 26
        pos += 26
    acc[LIMBS] = count
    if count >= _FLUSH:
        normalise(acc)


@nb.njit(cache=True, nogil=True)
def add_product(acc, x, c, sign):
    """acc += sign c x for an integer 0 <= c < 2^63, exactly."""
    if x == 0.0 or c == 0:
        return
    if not abs(x) < _LIMIT:
        raise ValueError("duckdb_sdc.methods._exact: a value too large for the exact accumulator")
    m, q, s = _split(x)
    _add_product_bits(acc, m, q + _BIAS, c, s * sign)


@nb.njit(cache=True, nogil=True)
def sign_of(acc):
    """-1, 0 or 1: the sign of the accumulated value (propagates the carries first)."""
    normalise(acc)
    top = acc[LIMBS - 1]
    if top != 0:
        return 1 if top > 0 else -1
    for j in range(LIMBS - 2, -1, -1):
        if acc[j] != 0:
            return 1  # the lower limbs are non-negative once normalised
    return 0


@nb.njit(cache=True, nogil=True)
def midpoint_side(acc, count, a, b, work):
    """The sign of 2 T - count (a + b), T the value of `acc` (left unchanged): 1 when the mean T / count
    is above the midpoint of a and b, -1 below, 0 exactly on it. Computed as the sign of
    T - count a / 2 - count b / 2 (halving a product is one bit position lower: exact, subnormal
    numbers included) in `work`, an accumulator that is overwritten."""
    work[:] = acc  # (the twelve pieces of the two products fit in the headroom `_FLUSH` leaves)
    for x in (a, b):
        if x != 0.0 and count != 0:
            if not abs(x) < _LIMIT:
                raise ValueError("duckdb_sdc.methods._exact: a value too large for the exact accumulator")
            m, q, s = _split(x)
            _add_product_bits(work, m, q + _BIAS - 1, count, -s)
    return sign_of(work)


__all__ = ["LIMBS", "accumulator", "add", "add_product", "add_range", "midpoint_side", "normalise", "sign_of"]
