"""The range of the variance, covariance and correlation of data known only as intervals, such as the
boxes of a box release (`boxes.box_release`): record i's value of an attribute lies somewhere in
[l_i, u_i], and the statistic of the n records can be anything the choices inside the boxes give.
Population statistics (divisor n), as the box characteristics use them: V = (1/n) sum (x_i - mean)^2,
C = (1/n) sum (x_i - mean x)(y_i - mean y), r = C / sqrt(V_x V_y). (The sample statistics are
n / (n - 1) times V and C; r is the same.)

**Variance.** V is convex in x, so its minimum over the box is a convex problem and its maximum lies
at a vertex. Ferson, Ginzburg, Kreinovich, Longpre & Aviles ("Exact bounds on finite populations of
interval data", Reliable Computing 11, 2005; "Computing variance for interval data is NP-hard", ACM
SIGACT News 33, 2002) show that the lower bound is feasible and that the upper bound is NP-hard in
general (a partition problem hides in intervals with a common midpoint).

* Lower bound, exact: at the minimum every x_i = clamp(m, l_i, u_i) with m their mean (the KKT
  conditions of the convex problem); g(m) = mean(clamp(m, l, u)) - m is non-increasing, so its root is
  found over the sorted endpoints with prefix sums, O(n log n); V_min = 0 when the intervals share a
  point.
* Upper bound: for every c, V(x) = (1/n) sum (x_i - c)^2 - (mean x - c)^2 <= f(c) = (1/n) sum_i
  max((l_i - c)^2, (u_i - c)^2), so V_max <= min_c f(c): f is strictly convex and piecewise quadratic
  between the sorted midpoints m_i = (l_i + u_i) / 2, its minimiser c* is found in O(n log n). When c*
  lies strictly between two midpoints, the vertex x_i = u_i for m_i > c*, l_i for m_i < c* has mean
  c* and variance f(c*): the bound is attained, V_max = f(c*) exactly (`exact`). When c* is a
  midpoint (the intervals J sharing it can take either end at the same distance), the bound is
  attained exactly when signs s_j give sum_(i not in J) (x_i - c*) + sum_J s_j w_j / 2 = 0 (w the
  widths): decided exactly for up to 20 such intervals or for equal widths (a count); otherwise, and
  when no such signs exist, f(c*) is returned as an outer bound (`exact` false): V_max <= f(c*).
  Within 2^-40 of a midpoint c* counts as on it (the flag is never claimed on a floating-point tie).

**Covariance.** C is bilinear in (x, y), so its extremes lie at corners of the boxes; computing them is
NP-hard too (Kreinovich, Xiang, Starks, Longpre, Ceberio, Araiza, Beck, Kandathi, Nayak, Torres &
Hajagos, "Towards combining probabilistic and interval uncertainty in engineering calculations:
algorithms for computing statistics under interval uncertainty, and their computational
complexity", Reliable Computing 12, 2006). An outer bound: for every a > 0, C = (V(a x + y / a) -
V(a x - y / a)) / 4, where a x_i + y_i / a lies in [a lx_i + ly_i / a, a ux_i + uy_i / a] and
a x_i - y_i / a in [a lx_i - uy_i / a, a ux_i - ly_i / a], so C lies in [(V_min(sum) - V_up(diff)) / 4,
(V_up(sum) - V_min(diff)) / 4] for each a; the best of a = (V_up(y) / V_up(x))^(1/4) times 1/2, 1/sqrt(2),
1, sqrt(2), 2 is kept on each side (the balanced a makes the bound follow a rescaling of x or y
alone), intersected with the Cauchy-Schwarz range +- sqrt(V_up(x) V_up(y)). Valid always; exact
when the boxes are points.

**Correlation.** From the ranges of C, V_x and V_y: r <= C_up / sqrt(V_min(x) V_min(y)) when C_up >= 0
(1 when a variance can be 0), r <= C_up / sqrt(V_up(x) V_up(y)) when C_up < 0, symmetrically below,
clipped to [-1, 1]: an outer bound. NULL (None) when V_up of x or y is 0 (every choice constant).

Numerics: each attribute is scaled by the power of two of its largest magnitude (exact) and
centred on the median of its midpoints before the sums, so the bounds at 1e308 or 1e-300 are the
rescaled ones at 1 (variances and covariances scale with the square); sums of squares use prefix
sums of centred values. The bounds hold to rounding (a relative 1e-12 in the tests).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from itertools import product

import numpy as np

from .._numerics import exponent, from_unit
from .._validate import fail, finite_values

_SUBSET_MAX = 20  # intervals on c* whose signs are searched exactly
_TIE = 2.0**-40  # relative distance below which c* counts as lying on a midpoint


@dataclass(frozen=True)
class Bounds:
    """[lower, upper] of a statistic; `exact`: upper (and lower, always exact for a variance) is the
    statistic's true extreme, not only an outer bound."""

    lower: float | None
    upper: float | None
    exact: bool


def _intervals(func: str, lower, upper, names=("lower", "upper")) -> tuple[np.ndarray, np.ndarray]:
    lo = finite_values(func, names[0], lower)
    hi = finite_values(func, names[1], upper)
    if lo.shape != hi.shape:
        raise fail(func, f"{names[0]} and {names[1]} must have the same length, got {lo.shape[0]} and {hi.shape[0]}")
    bad = np.flatnonzero(lo > hi)
    if bad.size:
        i = int(bad[0])
        raise fail(func, f"{names[0]} bound {float(lo[i])!r} is above its {names[1]} bound {float(hi[i])!r} (record {i + 1})")
    return lo, hi


def _unit(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """The endpoints scaled by the power of two of their largest magnitude and centred on the median
    of the midpoints; the exponent (the variance scales by 2^(2e))."""
    e = exponent(np.concatenate((lo, hi)))
    lo, hi = np.ldexp(lo, -e), np.ldexp(hi, -e)
    centre = float(np.median(0.5 * lo + 0.5 * hi))
    return lo - centre, hi - centre, e


def _variance_min(lo: np.ndarray, hi: np.ndarray) -> float:
    """min over the box of (1/n) sum (x_i - mean x)^2 (see the module docstring), on unit data."""
    n = lo.shape[0]
    if float(lo.max()) <= float(hi.min()):
        return 0.0  # a common point: every x_i equal
    L, U = np.sort(lo), np.sort(hi)
    pL = np.concatenate(([0.0], np.cumsum(L)))
    pU = np.concatenate(([0.0], np.cumsum(U)))

    def parts(m: float) -> tuple[int, float, int, float]:
        a = int(np.searchsorted(L, m, side="right"))  # l_i <= m: L[:a]; l_i > m: L[a:]
        b = int(np.searchsorted(U, m, side="left"))  # u_i < m: U[:b]
        return n - a, pL[n] - pL[a], b, pU[b]

    # n (mean(clamp(m)) - m) = sum_(l > m) (l - m) + sum_(u < m) (u - m), non-increasing in m, at every
    # endpoint; its root lies at an endpoint or between two, where the counts are constant
    points = np.unique(np.concatenate((L, U)))
    a = np.searchsorted(L, points, side="right")
    b = np.searchsorted(U, points, side="left")
    values = (pL[n] - pL[a] - (n - a) * points) + (pU[b] - b * points)
    j = int(np.searchsorted(-values, 0.0, side="left"))  # the first point with g <= 0
    if values[j] == 0.0:
        m = float(points[j])
    else:
        above, s_above, below, s_below = parts(float(points[j - 1] + points[j]) / 2.0)
        m = (s_above + s_below) / (above + below)  # n m = s_above + s_below + (n - above - below) m
    x = np.clip(m, lo, hi)  # the minimiser, a point of the box: its variance, summed directly
    d = x - x.mean()
    return float(np.dot(d, d) / n)


def _signs_reach(target: Fraction, halves: list[Fraction]) -> bool:
    """Whether sum s_j halves_j = target for some signs s_j = +-1 (exact)."""
    halves = [h for h in halves if h != 0]  # a point on c adds nothing whatever its sign
    if not halves:
        return target == 0
    if len(set(halves)) == 1:  # equal widths: a count of + signs
        h = halves[0]
        count = (target / h + len(halves)) / 2  # (2a - |J|) h = target
        return count.denominator == 1 and 0 <= count <= len(halves)
    if len(halves) > _SUBSET_MAX:
        return False
    reach = {Fraction(0)}
    for h in halves:
        reach = {r + s for r in reach for s in (h, -h)}
    return target in reach


def _variance_max(lo: np.ndarray, hi: np.ndarray) -> tuple[float, bool]:
    """(min_c f(c), whether it is V's maximum exactly) on unit data (see the module docstring)."""
    n = lo.shape[0]
    mid = 0.5 * lo + 0.5 * hi
    order = np.argsort(mid, kind="stable")
    ms, ls, us = mid[order], lo[order], hi[order]
    # mean_k: the first k intervals (smallest midpoints) at their lower end, the others at their upper
    pl = np.concatenate(([0.0], np.cumsum(ls)))
    pu = np.concatenate(([0.0], np.cumsum(us)))
    means = (pl + (pu[n] - pu)) / n  # k = 0..n, non-increasing in k
    below = np.concatenate(([-np.inf], ms))  # piece k is (ms[k-1], ms[k])
    above = np.concatenate((ms, [np.inf]))
    inside = np.flatnonzero((means > below) & (means < above))
    if inside.size:
        k = int(inside[0])
        c = float(means[k])
        near = min(abs(c - float(below[k])), abs(float(above[k]) - c))
        on_kink = near <= _TIE * max(1.0, abs(c))
    else:  # the root of c - mean(e(c)) is at a midpoint: the first with means[k] <= ms[k-1]
        k = int(np.flatnonzero(means <= below)[0])
        c = float(below[k])
        on_kink = True
    f = float(np.mean(np.maximum((lo - c) ** 2, (hi - c) ** 2)))
    if not on_kink:
        return f, True
    # intervals whose midpoint is (within the tie) c: either end is at the same distance
    J = np.flatnonzero(np.abs(mid - c) <= _TIE * max(1.0, abs(c)))
    if J.size == 0:
        return f, False
    cf = Fraction(c)
    others = np.setdiff1d(np.arange(n), J)
    far = np.where(mid[others] < c, lo[others], hi[others])  # the end farther from c
    if np.any(mid[others] == c):
        return f, False
    target = -sum((Fraction(float(v)) - cf for v in far), Fraction(0))
    halves = [(Fraction(float(hi[j])) - Fraction(float(lo[j]))) / 2 for j in J]
    if any(Fraction(float(mid[j])) != cf for j in J):
        return f, False  # within the tie but not exactly on c: the flag is not claimed
    return f, _signs_reach(target, halves)


def variance_bounds(lower, upper) -> Bounds:
    """[V_min, V_max] (population variance) of values known to lie in [lower_i, upper_i]; V_min exact,
    V_max exact when `exact`, else an outer bound (see the module docstring). Errors name
    `box_var_bounds`."""
    func = "box_var_bounds"
    lo, hi = _intervals(func, lower, upper)
    if lo.shape[0] == 0:
        return Bounds(None, None, True)
    if lo.shape[0] == 1:
        return Bounds(0.0, 0.0, True)
    lo, hi, e = _unit(lo, hi)
    vmin = _variance_min(lo, hi)
    vmax, exact = _variance_max(lo, hi)
    return Bounds(from_unit(func, "the variance", vmin, e, power=2),
                  from_unit(func, "the variance", max(vmax, vmin), e, power=2), exact)


def _unit_pair(xl, xu, yl, yu):
    ex = exponent(np.concatenate((xl, xu)))
    ey = exponent(np.concatenate((yl, yu)))
    return np.ldexp(xl, -ex), np.ldexp(xu, -ex), np.ldexp(yl, -ey), np.ldexp(yu, -ey), ex, ey


def _unit_bounds(lo: np.ndarray, hi: np.ndarray) -> tuple[float, float]:
    """(V_min, V_up) of data already near unit scale (centred here)."""
    centre = float(np.median(0.5 * lo + 0.5 * hi))
    lo, hi = lo - centre, hi - centre
    return _variance_min(lo, hi), max(_variance_max(lo, hi)[0], 0.0)


_BALANCE = (0.5, 2.0**-0.5, 1.0, 2.0**0.5, 2.0)  # factors of the balanced a tried for each side


def _cov_unit(xl, xu, yl, yu) -> tuple[float, float, tuple[float, float], tuple[float, float]]:
    """(C_low, C_up, (Vx_min, Vx_up), (Vy_min, Vy_up)) on unit-scaled attributes. C = (V(a x + y / a) -
    V(a x - y / a)) / 4 for every a > 0, so each a gives an outer bound; a = (Vy_up / Vx_up)^(1/4) puts
    both attributes on one scale (so that rescaling x or y alone rescales the bounds), and the best of
    a few multiples of it is kept on each side."""
    vx, vy = _unit_bounds(xl, xu), _unit_bounds(yl, yu)
    if np.all(xl == xu) and np.all(yl == yu):  # points: the covariance itself
        x, y = xl - xl.mean(), yl - yl.mean()
        c = float(np.mean(x * y))
        return c, c, vx, vy
    if vx[1] <= 0.0 or vy[1] <= 0.0:  # x or y constant in every choice: C = 0
        return 0.0, 0.0, vx, vy
    balanced = (vy[1] / vx[1]) ** 0.25
    low, up = -math.inf, math.inf
    for factor in _BALANCE:
        a = balanced * factor
        s_min, s_up = _unit_bounds(a * xl + yl / a, a * xu + yu / a)
        d_min, d_up = _unit_bounds(a * xl - yu / a, a * xu - yl / a)
        low, up = max(low, (s_min - d_up) / 4.0), min(up, (s_up - d_min) / 4.0)
    cs = math.sqrt(vx[1] * vy[1])
    return max(low, -cs), min(up, cs), vx, vy


def covariance_bounds(x_lower, x_upper, y_lower, y_upper) -> Bounds:
    """An outer bound [C_low, C_up] of the population covariance of records whose (x, y) lie in the
    boxes [x_lower, x_upper] x [y_lower, y_upper] (see the module docstring); `exact` only for point
    boxes. Errors name `box_cov_bounds`."""
    func = "box_cov_bounds"
    xl, xu = _intervals(func, x_lower, x_upper, ("x_lower", "x_upper"))
    yl, yu = _intervals(func, y_lower, y_upper, ("y_lower", "y_upper"))
    if xl.shape != yl.shape:
        raise fail(func, f"x and y must have the same number of records, got {xl.shape[0]} and {yl.shape[0]}")
    if xl.shape[0] == 0:
        return Bounds(None, None, True)
    if xl.shape[0] == 1:
        return Bounds(0.0, 0.0, True)
    xl, xu, yl, yu, ex, ey = _unit_pair(xl, xu, yl, yu)
    low, up, _, _ = _cov_unit(xl, xu, yl, yu)
    exact = bool(np.all(xl == xu) and np.all(yl == yu))
    return Bounds(from_unit(func, "the covariance", low, ex + ey), from_unit(func, "the covariance", up, ex + ey),
                  exact)


def correlation_bounds(x_lower, x_upper, y_lower, y_upper) -> Bounds:
    """An outer bound [r_low, r_up] of the correlation over the boxes (see the module docstring); None
    bounds when x or y is constant whatever the choices. Errors name `box_corr_bounds`."""
    func = "box_corr_bounds"
    xl, xu = _intervals(func, x_lower, x_upper, ("x_lower", "x_upper"))
    yl, yu = _intervals(func, y_lower, y_upper, ("y_lower", "y_upper"))
    if xl.shape != yl.shape:
        raise fail(func, f"x and y must have the same number of records, got {xl.shape[0]} and {yl.shape[0]}")
    if xl.shape[0] < 2:
        return Bounds(None, None, True)
    xl, xu, yl, yu, _, _ = _unit_pair(xl, xu, yl, yu)
    low, up, (vx_min, vx_up), (vy_min, vy_up) = _cov_unit(xl, xu, yl, yu)
    if vx_up <= 0.0 or vy_up <= 0.0:
        return Bounds(None, None, True)
    points = bool(np.all(xl == xu) and np.all(yl == yu))
    if points:
        r = max(-1.0, min(1.0, low / math.sqrt(vx_min * vy_min)))
        return Bounds(r, r, True)
    least, most = vx_min * vy_min, vx_up * vy_up
    upper = (up / math.sqrt(least) if least > 0 else 1.0) if up >= 0 else up / math.sqrt(most)
    lower = (low / math.sqrt(least) if least > 0 else -1.0) if low <= 0 else low / math.sqrt(most)
    return Bounds(max(-1.0, min(1.0, lower)), max(-1.0, min(1.0, upper)), False)


__all__ = ["Bounds", "correlation_bounds", "covariance_bounds", "variance_bounds"]
