"""Rounding to multiples of a base b (Senavirathne & Torra 2019, "Rounding based continuous data
discretization for statistical disclosure control", Journal of Ambient Intelligence and Humanized
Computing, whose introduction takes the conventional rounding of Willenborg & De Waal, Elements of
Statistical Disclosure Control, 2001): the rounding set is the multiples of a base b, every value is
replaced by its nearest multiple, and b is chosen so that every rounding point's set of attraction
holds at least alpha records, the minimum protection.

Definitions:

* rounding point q b (q an integer); its set of attraction is the interval
  [(q - 1/2) b, (q + 1/2) b): x is rounded to q b with q = floor(x / b + 1/2) (a value halfway
  between two multiples goes up, toward +infinity). Computed exactly: b is an exact decimal (below),
  q is decided by exact rational comparison where floating point could err, and the released value
  is the double nearest to q b.
* the size of a set of attraction is the number of records (not distinct values) rounded to its
  point; a point no value is rounded to has an empty set, which publishes nothing and is not
  counted. b meets alpha when every non-empty set holds at least alpha records.
* candidate bases: the 1-2-5 series b = m 10^e, m in {1, 2, 5}, e any integer (the "round" bases of
  published figures: ..., 0.5, 1, 2, 5, 10, 20, 50, ...), each an exact decimal.
* the base is the smallest candidate that meets alpha. Meeting alpha is not monotone in b (values
  0, 1, 2, 3 with alpha = 2: b = 3 and 4 meet it, b = 5 does not, 7 does), so the candidates are
  tried in increasing order from a proven lower bound: a record's set of attraction is an interval
  of width b holding it and at least alpha - 1 other records, so b must exceed W = the largest, over
  the records, of the least span of alpha consecutive sorted values that include the record; every
  candidate up to W fails. The search ends: any b > 2 max |x| puts every value in the set of 0.
* b = 0, the values unchanged, when every distinct value already occurs at least alpha times (then
  W = 0: every base below the smallest gap between distinct values meets alpha with one set per
  distinct value, so no smallest base exists, and none is needed).
* refused: alpha > n (no base can give alpha records to a set), and a base or a rounded value
  beyond the float64 range.

What is guaranteed: every released value is shared by at least alpha records of the column (its
set of attraction), the protection the source defines; nothing about several columns together.

Cost: one sort, O(n) for W, then O(d) per candidate tried (d distinct values), exact integer
arithmetic for integer data and bases, floating point with an exact check of the values near a
boundary otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.ndimage import minimum_filter1d

from .._validate import fail, finite_values
from ..params import GROUP_SIZE

MANTISSAS = (1, 2, 5)
_EXACT_INT = 2**53  # integers below are exact in float64
_INT64_SAFE = 2**62


@dataclass(frozen=True)
class Base:
    """A candidate base m 10^e (m in MANTISSAS), exact."""

    m: int
    e: int

    @property
    def exact(self) -> Fraction:
        return Fraction(self.m) * Fraction(10) ** self.e

    def __float__(self) -> float:
        """The nearest double; infinity beyond the float64 range."""
        try:
            return float(self.exact)
        except OverflowError:
            return math.inf

    def next(self) -> Base:
        i = MANTISSAS.index(self.m)
        return Base(MANTISSAS[i + 1], self.e) if i + 1 < len(MANTISSAS) else Base(MANTISSAS[0], self.e + 1)

    def text(self) -> str:
        return f"{self.m}e{self.e}"


def first_candidate_above(bound: float) -> Base:
    """The smallest base of the 1-2-5 series greater than `bound` (> 0)."""
    e = math.floor(math.log10(bound)) - 1
    b = Base(1, e)
    while b.exact <= Fraction(bound):
        b = b.next()
    return b


def integral_bound(v: np.ndarray) -> int | None:
    """max |v| when every value is an integer below 2^53 (the exact integer path), else None."""
    if v.shape[0] == 0 or not bool(np.all(v == np.floor(v))):
        return None
    top = float(np.max(np.abs(v)))
    return int(top) if top < _EXACT_INT else None


def _halving_quotients(v: np.ndarray, base: Base, top: int | None = None) -> np.ndarray:
    """q = floor(v / b + 1/2) for the sorted distinct values v, exactly. `top` is integral_bound(v)."""
    m, e = base.m, base.e
    if e >= 0:
        scale, div = m * 10**e, 1  # b = scale
    else:
        scale, div = m, 10**-e  # b = m / div, v / b = v div / m
    if top is not None and top * 2 * div + scale < _INT64_SAFE and 2 * scale < _INT64_SAFE:
        return np.floor_divide(2 * div * v.astype(np.int64) + scale, 2 * scale)  # floor((2 v div + scale) / (2 scale))
    b = float(base)
    if not math.isfinite(b) or b == 0.0:
        return _exact_quotients(v, base, np.arange(v.shape[0]), np.zeros(v.shape[0], np.int64))
    with np.errstate(over="ignore", invalid="ignore"):
        u = v / b + 0.5
        q = np.floor(u)
        # within a few ulps of an integer (a boundary between two sets), or too large for the
        # floating quotient to be trusted: decided in exact rationals
        risky = ~np.isfinite(u) | (np.abs(u) >= 2.0**51)
        risky |= np.minimum(u - q, q + 1 - u) <= (np.abs(u) + 1) * 2.0**-48
    out = np.where(risky, 0, q).astype(np.int64)
    if risky.any():
        out = _exact_quotients(v, base, np.flatnonzero(risky), out)
    return out


def _exact_quotients(v: np.ndarray, base: Base, where: np.ndarray, out: np.ndarray) -> np.ndarray:
    b = base.exact
    values = [int(math.floor((2 * Fraction(float(v[i])) + b) / (2 * b))) for i in where]
    if values and max(abs(k) for k in values) >= _INT64_SAFE:
        out = out.astype(object)
    out[where] = values
    return out


def _meets(q: np.ndarray, counts: np.ndarray, alpha: int) -> bool:
    """Every run of equal quotients (a non-empty set of attraction) holds >= alpha records."""
    starts = np.flatnonzero(np.concatenate(([True], q[1:] != q[:-1])))
    return bool(np.add.reduceat(counts, starts).min() >= alpha)


def _lower_bound(sorted_x: np.ndarray, alpha: int) -> float:
    """W: the largest, over the records, of the least span of alpha consecutive sorted values that
    include the record (0 when every record lies in alpha equal values). Window j spans
    sorted_x[j + alpha - 1] - sorted_x[j]; record i lies in windows i - alpha + 1 .. i (those that
    exist), which are entries i .. i + alpha - 1 of the spans padded with alpha - 1 infinities on
    each side: a sliding minimum."""
    n = sorted_x.shape[0]
    if alpha == 1:
        return 0.0
    with np.errstate(over="ignore"):  # a span beyond the float64 range is infinite: a bound all the same
        spans = sorted_x[alpha - 1:] - sorted_x[:n - alpha + 1]
    pad = np.full(alpha - 1, np.inf)
    padded = np.concatenate((pad, spans, pad))
    # minimum_filter1d's window for output k is padded[k - alpha // 2 : k - alpha // 2 + alpha]
    least = minimum_filter1d(padded, size=alpha, mode="constant", cval=np.inf)
    return float(np.max(least[alpha // 2: alpha // 2 + n]))


@dataclass(frozen=True)
class BaseRounding:
    """The result of base rounding: `base` the chosen m 10^e (None when no rounding is needed),
    `b` its double (0.0 when none), and aligned with the input: `labels` (the rounding points'
    numbers 0..g-1 in increasing order) and `rounded` (the released values)."""

    base: Base | None
    b: float
    labels: np.ndarray
    rounded: np.ndarray

    @property
    def sizes(self) -> np.ndarray:
        """For every value, the size of its set of attraction."""
        if self.labels.shape[0] == 0:
            return self.labels.copy()
        return np.bincount(self.labels)[self.labels]


def _points(q_points: np.ndarray, base: Base, func: str) -> np.ndarray:
    """The doubles nearest to q b for the quotients of the used rounding points."""
    m, e = base.m, base.e
    q = q_points
    if q.dtype != object and int(np.max(np.abs(q))) * m < _EXACT_INT:
        qm = (q * m).astype(np.float64)  # exact
        if 0 <= e <= 22:
            out = qm * 10.0**e  # one rounding of an exact product
        elif -22 <= e < 0:
            out = qm / 10.0 ** (-e)  # one rounding of an exact quotient
        else:
            out = None
        if out is not None:
            if not np.isfinite(out).all():
                raise fail(func, f"a rounded value is beyond the float64 range (base {base.text()})")
            return out
    b = base.exact
    out = np.empty(len(q), np.float64)
    for k, qq in enumerate(q.tolist()):
        value = Fraction(int(qq)) * b
        try:
            out[k] = float(value)
        except OverflowError:
            raise fail(func, f"a rounded value is beyond the float64 range (base {base.text()})") from None
    return out


def base_rounding(x, alpha) -> BaseRounding:
    """Round x to the multiples of the smallest base of the 1-2-5 series whose every set of
    attraction holds at least alpha records (see the module docstring). alpha is a group size
    (`params.GROUP_SIZE`: 2 <= alpha <= n; alpha = 1 would release every value unchanged). Errors
    name `base_round`."""
    func = "base_round"
    x = finite_values(func, "x", x)
    n = x.shape[0]
    if n == 0:
        return BaseRounding(None, 0.0, np.empty(0, np.int64), x.copy())
    alpha = GROUP_SIZE.check(alpha, func, "alpha", n=n)
    v_all = np.sort(x)
    values, counts = np.unique(v_all, return_counts=True)
    if counts.min() >= alpha:
        labels = np.searchsorted(values, x)
        return BaseRounding(None, 0.0, labels.astype(np.int64), x.copy())
    bound = _lower_bound(v_all, alpha)
    if not math.isfinite(bound):
        raise fail(func, f"the values are so far apart that a base meeting alpha = {alpha} would be beyond the "
                         "float64 range")
    base = first_candidate_above(bound * (1 - 2.0**-40))
    top = integral_bound(values)
    while True:
        q = _halving_quotients(values, base, top)
        if _meets(q, counts, alpha):
            break
        base = base.next()
    if not math.isfinite(float(base)):
        raise fail(func, f"the smallest base that meets alpha = {alpha}, {base.text()}, is beyond the float64 range")
    change = np.concatenate(([True], q[1:] != q[:-1]))
    point_of_value = np.cumsum(change) - 1  # rounding point number of each distinct value
    points = _points(np.asarray(q)[change], base, func)
    per_value = point_of_value[np.searchsorted(values, x)]
    return BaseRounding(base, float(base), per_value.astype(np.int64), points[per_value])


def base_round(x, alpha) -> np.ndarray:
    """The rounded values (see `base_rounding`)."""
    return base_rounding(x, alpha).rounded


__all__ = ["MANTISSAS", "Base", "BaseRounding", "base_round", "base_rounding", "first_candidate_above"]
