"""The range of the variance, covariance and correlation over released boxes (issue 33, item 3):
the variance's lower bound against an exact search over the faces of the box, its upper bound against
every vertex (exact where flagged, never below the true maximum), the covariance and correlation
bounds never inside the range that every box corner (and random points) reach, point boxes exact,
the extremes of the float64 range, and the SQL aggregates."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import duckdb
import numpy as np
import pytest

from duckdb_sdc import SdcError
from duckdb_sdc.methods import interval_moments as im


def variance(xs) -> Fraction:
    n = len(xs)
    m = sum(xs, Fraction(0)) / n
    return sum(((x - m) ** 2 for x in xs), Fraction(0)) / n


def reference_min(lo, hi) -> Fraction:
    """The exact minimum of the population variance over the box, by its faces: every record at its
    lower end (L), its upper end (U) or free (I); the free ones at the common mean of a stationary
    point, m = (sum_L l + sum_U u) / (n - |I|) (all free: V = 0 if the intervals meet), kept when m lies
    in every free interval. The convex minimum is the stationary point of one face."""
    n = len(lo)
    L = [Fraction(float(v)) for v in lo]
    U = [Fraction(float(v)) for v in hi]
    best = None
    for pattern in itertools.product("LUI", repeat=n):
        free = [i for i, p in enumerate(pattern) if p == "I"]
        fixed = sum((L[i] if p == "L" else U[i] for i, p in enumerate(pattern) if p != "I"), Fraction(0))
        if len(free) == n:
            if max(L) <= min(U):
                return Fraction(0)
            continue
        m = fixed / (n - len(free))
        if any(not (L[i] <= m <= U[i]) for i in free):
            continue
        xs = [m if p == "I" else (L[i] if p == "L" else U[i]) for i, p in enumerate(pattern)]
        v = variance(xs)
        best = v if best is None or v < best else best
    return best


def reference_max(lo, hi) -> Fraction:
    """The exact maximum: every vertex (a convex function's maximum over a box is at a vertex)."""
    L = [Fraction(float(v)) for v in lo]
    U = [Fraction(float(v)) for v in hi]
    return max(variance([U[i] if bit else L[i] for i, bit in enumerate(bits)])
               for bits in itertools.product((0, 1), repeat=len(lo)))


def _boxes(rng, n, kind):
    if kind == 0:  # integer endpoints with ties and nesting
        a = rng.integers(-5, 6, n).astype(float)
        b = a + rng.integers(0, 4, n)
    elif kind == 1:  # symmetric around a few centres: midpoints shared, the NP-hard shape
        c = rng.choice([-1.0, 0.0, 2.0], n)
        w = rng.integers(1, 5, n).astype(float)
        a, b = c - w, c + w
    else:  # continuous, some degenerate
        a = rng.normal(0, 3, n)
        b = a + np.where(rng.random(n) < 0.3, 0.0, rng.exponential(2, n))
    return a, b


def _close(a, b) -> bool:
    return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-12)


def test_the_variance_bounds_against_the_exact_references():
    rng = np.random.default_rng(1)
    exact_seen = not_exact_seen = 0
    for case in range(900):
        n = int(rng.integers(2, 7))
        lo, hi = _boxes(rng, n, case % 3)
        got = im.variance_bounds(lo, hi)
        assert _close(got.lower, reference_min(lo, hi)), (lo.tolist(), hi.tolist())
        top = reference_max(lo, hi)
        assert got.upper >= float(top) * (1 - 1e-12) - 1e-12, (lo.tolist(), hi.tolist())
        if got.exact:
            exact_seen += 1
            assert _close(got.upper, top), (lo.tolist(), hi.tolist())
        else:
            not_exact_seen += 1
    assert exact_seen > 700 and not_exact_seen > 10  # most cases are exact; the shared midpoints are not


def test_a_partition_problem_is_decided_by_its_signs():
    """[-a_i, a_i]: the maximum is sum a_i^2 / n exactly when the a_i split into two equal sums."""
    assert im.variance_bounds([-1, -2, -3], [1, 2, 3]) == im.Bounds(0.0, 14 / 3, True)
    odd = im.variance_bounds([-1, -2, -4], [1, 2, 4])  # 1 + 2 != 4: the bound 7 is not attained
    assert odd.upper == 7.0 and not odd.exact and float(reference_max([-1, -2, -4], [1, 2, 4])) < 7.0
    equal = im.variance_bounds([-1] * 4, [1] * 4)  # equal widths: a count of signs
    assert equal == im.Bounds(0.0, 1.0, True)
    assert im.variance_bounds([-1] * 3, [1] * 3).exact is False  # three signs cannot cancel


def test_the_mean_of_boxes_in_the_common_cases():
    assert im.variance_bounds([1.0, 2.0], [3.0, 4.0]).lower == 0.0  # they meet at 2..3
    assert im.variance_bounds([5.0], [7.0]) == im.Bounds(0.0, 0.0, True)
    assert im.variance_bounds([], []) == im.Bounds(None, None, True)
    pts = np.array([1.0, 4.0, 9.0])
    assert im.variance_bounds(pts, pts) == im.Bounds(pytest.approx(np.var(pts)), pytest.approx(np.var(pts)), True)


def _cov(x, y) -> Fraction:
    n = len(x)
    mx, my = sum(x, Fraction(0)) / n, sum(y, Fraction(0)) / n
    return sum(((a - mx) * (b - my) for a, b in zip(x, y)), Fraction(0)) / n


def test_the_covariance_bounds_hold_every_corner():
    """C is bilinear, so its extremes are at corners of the boxes (4^n of them for n records)."""
    rng = np.random.default_rng(2)
    for case in range(300):
        n = int(rng.integers(2, 6))
        xl, xu = _boxes(rng, n, case % 3)
        yl, yu = _boxes(rng, n, (case + 1) % 3)
        got = im.covariance_bounds(xl, xu, yl, yu)
        corners = [[(xl[i] if c in (0, 1) else xu[i], yl[i] if c in (0, 2) else yu[i]) for i, c in enumerate(cs)]
                   for cs in itertools.product(range(4), repeat=n)]
        exact = [([Fraction(float(a)) for a, _ in pts], [Fraction(float(b)) for _, b in pts]) for pts in corners]
        values = [float(_cov(a, b)) for a, b in exact]
        assert got.lower <= min(values) + 1e-12 and got.upper >= max(values) - 1e-12, case
        r = im.correlation_bounds(xl, xu, yl, yu)
        samples = rng.uniform(0, 1, (200, n, 2))
        xs, ys = xl + samples[:, :, 0] * (xu - xl), yl + samples[:, :, 1] * (yu - yl)
        xa, ya = xs - xs.mean(axis=1, keepdims=True), ys - ys.mean(axis=1, keepdims=True)
        sxx, syy = (xa * xa).sum(axis=1), (ya * ya).sum(axis=1)
        spread = (sxx > 0) & (syy > 0)
        rs = ((xa * ya).sum(axis=1)[spread] / np.sqrt(sxx[spread] * syy[spread])).tolist()
        var: dict = {}  # a corner's x (or y) values recur in 2^n corners: each variance computed once
        for pair in exact:
            for v in pair:
                if tuple(v) not in var:
                    var[tuple(v)] = variance(v)
        spreads = [(var[tuple(a)], var[tuple(b)]) for a, b in exact]
        rs += [v / math.sqrt(float(va * vb)) for v, (va, vb) in zip(values, spreads) if va > 0 and vb > 0]
        if r.lower is not None and rs:
            assert r.lower <= min(rs) + 1e-12 and r.upper >= max(rs) - 1e-12, case
            assert -1.0 <= r.lower <= r.upper <= 1.0


def test_point_boxes_give_the_statistics_themselves():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=30), rng.normal(size=30)
    c = im.covariance_bounds(x, x, y, y)
    assert c.exact and c.lower == c.upper == pytest.approx(np.cov(x, y, bias=True)[0, 1], rel=1e-12)
    r = im.correlation_bounds(x, x, y, y)
    assert r.exact and r.lower == r.upper == pytest.approx(np.corrcoef(x, y)[0, 1], rel=1e-12)
    assert im.correlation_bounds([1.0, 1.0], [1.0, 1.0], [0.0, 1.0], [0.0, 2.0]) == im.Bounds(None, None, True)


@pytest.mark.parametrize("scale", [1e150, 1e-150, 1e300, 1e-300, 2.0**-1060])
def test_the_bounds_at_the_extremes_are_the_rescaled_ones(scale):
    """Variances scale with the square (representable up to 1e150 here; at 1e300 refused clearly), the
    correlation not at all (any scale, subnormal boxes included)."""
    from duckdb_sdc._numerics import OutOfRange

    rng = np.random.default_rng(4)
    lo = rng.integers(-50, 50, 40).astype(float)
    hi = lo + rng.integers(0, 10, 40)
    ylo = rng.integers(-50, 50, 40).astype(float)
    yhi = ylo + rng.integers(0, 10, 40)
    one = im.variance_bounds(lo, hi)
    if scale == 1e300:
        with pytest.raises(OutOfRange, match="box_var_bounds: the variance is larger than the largest float64"):
            im.variance_bounds(lo * scale, hi * scale)
    elif scale >= 1e-150:
        big = im.variance_bounds(lo * scale, hi * scale)
        assert big.exact == one.exact
        assert math.isclose(big.lower, one.lower * scale * scale, rel_tol=1e-12)
        assert math.isclose(big.upper, one.upper * scale * scale, rel_tol=1e-12)
    r1, r2 = im.correlation_bounds(lo, hi, ylo, yhi), im.correlation_bounds(lo * scale, hi * scale, ylo, yhi)
    assert math.isclose(r1.lower, r2.lower, rel_tol=1e-9) and math.isclose(r1.upper, r2.upper, rel_tol=1e-9)


def test_bad_boxes_are_refused_by_name():
    with pytest.raises(SdcError, match=r"^box_var_bounds: lower bound 3.0 is above its upper bound 2.0 \(record 2\)"):
        im.variance_bounds([1.0, 3.0], [2.0, 2.0])
    with pytest.raises(SdcError, match=r"^box_cov_bounds: y_lower contains nan"):
        im.covariance_bounds([1.0, 2.0], [1.0, 2.0], [np.nan, 1.0], [1.0, 1.0])


# --- SQL --------------------------------------------------------------------------------------


def test_sql_aggregates_equal_the_numpy_bounds(con):
    rng = np.random.default_rng(5)
    n = 120
    g = rng.integers(0, 3, n)
    xl = rng.integers(0, 50, n).astype(float)
    xu = xl + rng.integers(0, 8, n)
    yl = xl + rng.normal(0, 5, n)
    yu = yl + rng.exponential(3, n)
    xl[7] = np.nan  # a NULL bound leaves the record out
    con.execute("CREATE TABLE b AS SELECT * FROM (SELECT unnest(?) g, unnest(?) xl, unnest(?) xu, unnest(?) yl, "
                "unnest(?) yu)", [g.tolist(), [None if np.isnan(v) else v for v in xl], xu.tolist(), yl.tolist(),
                                  yu.tolist()])
    rows = con.execute("SELECT g, box_var_bounds(xl, xu), box_cov_bounds(xl, xu, yl, yu), "
                       "box_corr_bounds(xl, xu, yl, yu) FROM b GROUP BY g ORDER BY g").fetchall()
    for k, var, cov, corr in rows:
        keep = (g == k) & ~np.isnan(xl)
        v = im.variance_bounds(xl[keep], xu[keep])
        c = im.covariance_bounds(xl[keep], xu[keep], yl[keep], yu[keep])
        r = im.correlation_bounds(xl[keep], xu[keep], yl[keep], yu[keep])
        assert var == {"lower": pytest.approx(v.lower, rel=1e-12), "upper": pytest.approx(v.upper, rel=1e-12),
                       "exact": v.exact}
        assert cov == {"lower": pytest.approx(c.lower, rel=1e-12), "upper": pytest.approx(c.upper, rel=1e-12),
                       "exact": c.exact}
        assert corr == {"lower": pytest.approx(r.lower, rel=1e-12), "upper": pytest.approx(r.upper, rel=1e-12),
                        "exact": r.exact}
    mean = con.execute("SELECT box_mean_bounds(xl, xu) FROM b").fetchone()[0]
    keep = ~np.isnan(xl)
    assert mean == {"lower": pytest.approx(xl[keep].mean()), "upper": pytest.approx(xu[keep].mean())}
    with pytest.raises(duckdb.Error, match=r"box_var_bounds: lower bound 9.0 is above its upper bound 1.0"):
        con.execute("SELECT box_var_bounds(l, u) FROM (VALUES (9.0, 1.0), (1.0, 2.0)) t(l, u)").fetchall()
    assert con.execute("SELECT box_var_bounds(l, u) FROM (VALUES (NULL::DOUBLE, 1.0)) t(l, u)").fetchone()[0] is None
