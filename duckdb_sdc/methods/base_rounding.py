"""Rounding to multiples of a base b (Senavirathne & Torra 2019, "Rounding based continuous data
discretization for statistical disclosure control", Journal of Ambient Intelligence and Humanized
Computing, whose introduction takes the conventional rounding of Willenborg & De Waal, Elements of
Statistical Disclosure Control, 2001): the rounding set is the multiples of a base b, every value is
replaced by its nearest multiple, and b is the smallest base whose every rounding point's set of
attraction holds at least alpha records, the minimum protection.

Definitions:

* rounding point q b (q an integer); its set of attraction is the interval
  [(q - 1/2) b, (q + 1/2) b): x is rounded to q b with q = floor(x / b + 1/2) (a value halfway
  between two multiples goes up, toward +infinity). Computed exactly: b is an exact decimal (below),
  q is decided by exact rational comparison where floating point could err, and the released value
  is the double nearest to q b.
* the size of a set of attraction is the number of records (not distinct values) rounded to its
  point; a point no value is rounded to has an empty set, which publishes nothing and is not
  counted. b meets alpha when every non-empty set holds at least alpha records.
* candidate bases: the positive multiples k u (k = 1, 2, 3, ...) of a unit u, an exact decimal. By
  default u = 10^e with e = max(floor(log10 W) - 3, -d): four significant digits at the lower bound
  W (below), or the data's decimal resolution 10^-d where that is coarser (d >= 0 the fewest decimals
  that write every value, so integer data get integer bases); `unit` sets u (unit = 1000 searches
  1000, 2000, 3000, ...). The set of all real b is not searched: the smallest real b meeting alpha
  always lies where a value sits exactly on the edge of a set, b = 2 |x| / (2 j + 1), so publishing it
  would publish that value; the unit keeps the base at a known resolution.
* the base is the smallest candidate that meets alpha. Meeting alpha is not monotone in b (values
  0, 1, 2, 3 with alpha = 2: b = 3 and 4 meet it, b = 5 does not, 7 does). The search starts from a
  proven lower bound: a record's set of attraction is an interval of width b holding it and at least
  alpha - 1 other records, so b must exceed W = the largest, over the records, of the least span of
  alpha consecutive sorted values that include the record. From k u it jumps to the next candidate
  that can meet alpha: every set that is too small must change, a set changes only when one of its
  outermost values or the nearest value of the neighbouring set crosses the edge of a set (the
  quotient of x > 0 drops at b > 2 x / (2 q - 1), that of x < 0 rises at b >= 2 x / (2 q + 1)), so the
  next candidate is the largest, over the sets too small, of the first multiple of u at which such a
  value crosses: no candidate in between can meet alpha. The search ends: any b > 2 max |x| puts
  every value in the set of 0. It gives up, refusing, after SEARCH_LIMIT candidates, naming a unit
  ten times coarser.
* `base`: the user's base instead of the search; the values are rounded to its multiples if every
  set holds alpha records, and refused otherwise, naming the smallest set.
* b = 0, the values unchanged, when every distinct value already occurs at least alpha times (then
  W = 0: every base below the smallest gap between distinct values meets alpha with one set per
  distinct value, and none is needed), unless a base is given.
* refused: alpha > n (no base can give alpha records to a set), unit and base together, and a base
  or a rounded value beyond the float64 range.

What is guaranteed: every released value is shared by at least alpha records of the column (its
set of attraction), the protection the source defines; nothing about several columns together.

Cost: one sort, O(n) for W, then O(d) per candidate tried (d distinct values), exact integer
arithmetic for integer data and bases, floating point with an exact check of the values near a
boundary otherwise. The jumps usually try a few candidates (2 to 6 on each Tarragona column);
data far from 0 against their spread (1e6 + N(0, 1)) try more (about a hundred at a million values).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import numba as nb
import numpy as np

from .._validate import fail, finite_values
from ..params import GROUP_SIZE, OPTIONAL_POSITIVE
from ._order import sort_column, unsort

_EXACT_INT = 2**53  # integers below are exact in float64
_INT64_SAFE = 2**62
SEARCH_LIMIT = 10_000  # candidates the search tries before it refuses
_SIGNIFICANT = 4  # digits of the default unit at the lower bound W


@dataclass(frozen=True)
class Base:
    """A base m 10^e (m a positive integer), exact."""

    m: int
    e: int

    @classmethod
    def of(cls, value: float) -> Base:
        """A positive double read as the shortest decimal that gives it (0.3 is 3/10)."""
        sign, digits, exponent = Decimal(repr(float(value))).as_tuple()
        m, e = int("".join(map(str, digits))), int(exponent)
        while m % 10 == 0:
            m, e = m // 10, e + 1
        return cls(m, e)

    @property
    def exact(self) -> Fraction:
        return Fraction(self.m) * Fraction(10) ** self.e

    def __float__(self) -> float:
        """The nearest double; infinity beyond the float64 range."""
        try:
            return float(self.exact)
        except OverflowError:
            return math.inf

    def times(self, k: int) -> Base:
        return Base(self.m * k, self.e)

    def text(self) -> str:
        value = Decimal(self.m).scaleb(self.e).normalize()
        return format(value, "f") if -12 <= self.e <= 20 else str(value)


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
    if not math.isfinite(b) or b < np.finfo(np.float64).tiny:  # a subnormal b is not the exact base to 2^-53
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
    from scipy.ndimage import minimum_filter1d  # imported here: scipy.ndimage costs 0.2-0.3 s at connect

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


def default_unit(values: np.ndarray, bound: float) -> Base:
    """10^e, e = max(floor(log10 W) - 3, -d): four significant digits at the lower bound W, or the
    data's decimal resolution 10^-d (d >= 0 the fewest decimals that write every distinct value,
    tested as values == round(values 10^d) / 10^d, exact while 10^d is (d <= 22) and
    max |v| 10^d < 2^52; beyond, the resolution counts as finer) where that is coarser."""
    e = math.floor(math.log10(bound)) - (_SIGNIFICANT - 1)
    if e >= 0:
        return Base(1, e)
    top = float(np.max(np.abs(values)))
    for d in range(0, min(-e, 23)):
        if d == 0:
            if bool(np.all(values == np.floor(values))):
                return Base(1, 0)
            continue
        if top * 10.0**d >= 2.0**52:
            break
        scale = 10.0**d
        if bool(np.all(values == np.round(values * scale) / scale)):
            return Base(1, -d)
    return Base(1, e)


def _crossings(values: np.ndarray, q: np.ndarray, unit: float) -> np.ndarray:
    """For every distinct value, a lower bound on the first k at which its quotient changes (b = k u
    growing): x > 0 drops below q at b > 2 x / (2 q - 1), x < 0 rises above q at b >= 2 x / (2 q + 1);
    infinity where it never changes (q = 0). The floating quotient is lowered by 2^-45 of itself, more
    than its rounding, so that the bound never exceeds the exact one."""
    qf = np.asarray(q, dtype=np.float64)
    out = np.full(values.shape, np.inf)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        pos = (values > 0) & (qf >= 1)
        neg = (values < 0) & (qf <= -1)
        out[pos] = np.floor(2 * values[pos] / ((2 * qf[pos] - 1) * unit) * (1 - 2.0**-45)) + 1
        out[neg] = np.ceil(2 * values[neg] / ((2 * qf[neg] + 1) * unit) * (1 - 2.0**-45))
    return out


def _crossings_exact(values: np.ndarray, q: np.ndarray, unit: Fraction) -> np.ndarray:
    """`_crossings` in exact rationals (for a unit outside the normal float64 range)."""
    out = np.full(values.shape, np.inf)
    for i, (x, qq) in enumerate(zip(values.tolist(), np.asarray(q).tolist())):
        if x > 0 and qq >= 1:
            out[i] = math.floor(2 * Fraction(x) / ((2 * qq - 1) * unit)) + 1
        elif x < 0 and qq <= -1:
            out[i] = math.ceil(2 * Fraction(x) / ((2 * qq + 1) * unit))
    return out


def _next_candidate(values: np.ndarray, q: np.ndarray, counts: np.ndarray, alpha: int, k: int, unit: Base) -> int:
    """The next k worth trying after k u failed (see the module docstring): the largest, over the sets
    with fewer than alpha records, of the first k at which one of its outermost values or the nearest
    value of a neighbouring set crosses the edge of a set; at least k + 1."""
    u = float(unit)
    starts = np.flatnonzero(np.concatenate(([True], q[1:] != q[:-1])))
    ends = np.concatenate((starts[1:], [q.shape[0]]))
    small = np.flatnonzero(np.add.reduceat(counts, starts) < alpha)
    # the floating quotients hold within 2^-45 where u is a normal double (its rounding is 2^-53)
    cross = (_crossings(values, q, u) if math.isfinite(u) and u >= np.finfo(np.float64).tiny
             else _crossings_exact(values, q, unit.exact))
    first, last = cross[starts], cross[ends - 1]
    inf = np.array([np.inf])
    earliest = np.minimum(np.minimum(first, last),
                          np.minimum(np.concatenate((inf, last[:-1])), np.concatenate((first[1:], inf))))[small]
    jump = float(np.max(earliest))
    return max(k + 1, int(jump)) if math.isfinite(jump) else k + 1


@nb.njit(cache=True, nogil=True)
def _scan(v, counts, b, u, alpha):
    """One candidate b = k u on the sorted distinct values v, in floating point: (0, _) when every set
    holds alpha records, (1, jump) when not, jump the next k worth trying (`_next_candidate`: a lower
    bound, below k + 1 when no set constrains it), (2, _) when a quotient lies within rounding of an
    integer (a value near the edge of a set) or beyond 2^51: then the candidate is decided exactly.
    b and u are normal doubles (u within 2^-53 of the exact unit); the same floating quotients and
    tolerances as `_halving_quotients` and `_crossings`."""
    d = v.shape[0]
    q = np.empty(d, np.int64)
    cross = np.empty(d, np.float64)
    shrink = 1.0 - 2.0**-45
    for i in range(d):
        x = v[i]
        w = x / b + 0.5
        f = np.floor(w)
        if not np.isfinite(w) or abs(w) >= 2.0**51 or min(w - f, f + 1.0 - w) <= (abs(w) + 1.0) * 2.0**-48:
            return 2, 0.0
        q[i] = np.int64(f)
        if x > 0 and f >= 1:
            cross[i] = np.floor(2.0 * x / ((2.0 * f - 1.0) * u) * shrink) + 1.0
        elif x < 0 and f <= -1:
            cross[i] = np.ceil(2.0 * x / ((2.0 * f + 1.0) * u) * shrink)
        else:
            cross[i] = np.inf
    jump = -np.inf
    small = False
    start = 0
    prev_last = np.inf
    while start < d:
        end = start
        size = 0
        while end < d and q[end] == q[start]:
            size += counts[end]
            end += 1
        if size < alpha:
            small = True
            early = min(cross[start], cross[end - 1], prev_last, cross[end] if end < d else np.inf)
            jump = max(jump, early)
        prev_last = cross[end - 1]
        start = end
    return (1, jump) if small else (0, 0.0)


def _smallest(values: np.ndarray, counts: np.ndarray, bound: float, alpha: int, unit: Base, top, func: str):
    """(the smallest multiple of `unit` above `bound` that meets alpha, its quotients). Each candidate is
    scanned in floating point (`_scan`) and decided exactly (`_halving_quotients`, `_next_candidate`)
    where that cannot decide it."""
    tiny = np.finfo(np.float64).tiny
    u = float(unit)
    k = max(1, math.floor(Fraction(bound) * (1 - Fraction(1, 2**40)) / unit.exact))
    counts = counts.astype(np.int64)
    for _ in range(SEARCH_LIMIT):
        base = unit.times(k)
        b = float(base)
        if math.isfinite(b) and b >= tiny and math.isfinite(u) and u >= tiny:
            status, jump = _scan(values, counts, b, u, alpha)
            if status == 0:
                return base, _halving_quotients(values, base, top)
            if status == 1:
                k = max(k + 1, int(jump)) if math.isfinite(jump) else k + 1
                continue
        q = _halving_quotients(values, base, top)
        if _meets(q, counts, alpha):
            return base, q
        k = _next_candidate(values, q, counts, alpha, k, unit)
    coarser = Base(unit.m, unit.e + 1)
    raise fail(func, f"no multiple of unit = {unit.text()} up to {unit.times(k).text()} meets alpha = {alpha} after "
                     f"{SEARCH_LIMIT} candidates; give a coarser unit (unit := {coarser.text()}) or a base")


@dataclass(frozen=True)
class _Sorted:
    """x sorted once: its order, the sorted values, the distinct values, their counts and the distinct
    value's number of every sorted position."""

    order: np.ndarray
    v: np.ndarray
    values: np.ndarray
    counts: np.ndarray
    value_of: np.ndarray

    @classmethod
    def of(cls, x: np.ndarray) -> _Sorted:
        order, v = sort_column(x)
        change = np.empty(v.shape[0], np.bool_)
        change[0] = True
        np.not_equal(v[1:], v[:-1], out=change[1:])
        starts = np.flatnonzero(change)
        counts = np.diff(np.append(starts, v.shape[0]))
        return cls(order, v, v[starts], counts, np.cumsum(change) - 1)

    def labels(self, of_value: np.ndarray) -> np.ndarray:
        """Per distinct value labels, aligned with the input."""
        return unsort(self.order, of_value[self.value_of])


def _rounded(data: _Sorted, q: np.ndarray, base: Base, func: str) -> BaseRounding:
    change = np.concatenate(([True], q[1:] != q[:-1]))
    point_of_value = np.cumsum(change) - 1  # rounding point number of each distinct value
    points = _points(np.asarray(q)[change], base, func)
    labels = data.labels(point_of_value.astype(np.int64))
    return BaseRounding(base, float(base), labels, points[labels])


def base_rounding(x, alpha, *, unit=None, base=None) -> BaseRounding:
    """Round x to the multiples of the smallest base b = k unit whose every set of attraction holds at
    least alpha records, or of `base` (refused unless it meets alpha); see the module docstring. alpha
    is a group size (`params.GROUP_SIZE`: 2 <= alpha <= n; alpha = 1 would release every value
    unchanged). Errors name `base_round`."""
    func = "base_round"
    x = finite_values(func, "x", x)
    unit = OPTIONAL_POSITIVE.check(unit, func, "unit")
    base = OPTIONAL_POSITIVE.check(base, func, "base")
    if unit is not None and base is not None:
        raise fail(func, f"give unit (the search's resolution) or base (no search), not both; got unit = {unit!r} "
                         f"and base = {base!r}", "base")
    n = x.shape[0]
    if n == 0:
        return BaseRounding(None, 0.0, np.empty(0, np.int64), x.copy())
    alpha = GROUP_SIZE.check(alpha, func, "alpha", n=n)
    data = _Sorted.of(x)
    values, counts = data.values, data.counts
    top = integral_bound(values)
    if base is not None:
        chosen = Base.of(base)
        q = _halving_quotients(values, chosen, top)
        starts = np.flatnonzero(np.concatenate(([True], q[1:] != q[:-1])))
        sizes = np.add.reduceat(counts, starts)
        if sizes.min() < alpha:
            at = int(np.argmin(sizes))
            raise fail(func, f"base = {base!r} gives a set of attraction of {int(sizes[at])} records (the values "
                             f"rounded to {float(Fraction(int(q[starts[at]])) * chosen.exact)!r}), fewer than alpha = "
                             f"{alpha}; leave base out to search the smallest base that meets alpha", "base")
        return _rounded(data, q, chosen, func)
    if counts.min() >= alpha:
        return BaseRounding(None, 0.0, data.labels(np.arange(values.shape[0], dtype=np.int64)), x.copy())
    bound = _lower_bound(data.v, alpha)
    if not math.isfinite(bound):
        raise fail(func, f"the values are so far apart that a base meeting alpha = {alpha} would be beyond the "
                         "float64 range")
    chosen, q = _smallest(values, counts, bound, alpha, default_unit(values, bound) if unit is None else Base.of(unit),
                          top, func)
    if not math.isfinite(float(chosen)):
        raise fail(func, f"the smallest base that meets alpha = {alpha}, {chosen.text()}, is beyond the float64 range")
    return _rounded(data, q, chosen, func)


def base_round(x, alpha, unit=None, base=None) -> np.ndarray:
    """The rounded values (see `base_rounding`)."""
    return base_rounding(x, alpha, unit=unit, base=base).rounded


__all__ = ["SEARCH_LIMIT", "Base", "BaseRounding", "base_round", "base_rounding", "default_unit"]
