"""Base rounding (Senavirathne & Torra 2019, after Willenborg & De Waal): the fast search against a
slow one in exact rationals that tries every base of the 1-2-5 series from below the smallest gap,
its documented properties, extreme scales and the SQL forms."""

from __future__ import annotations

import re

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from duckdb_sdc import SdcError
from duckdb_sdc.methods import base_rounding as br
from inputs import random_columns


def reference(x, alpha):
    """(m, e, rounded values) by brute force: every base m 10^e from the largest one below the
    smallest gap between distinct values upward, quotients floor(x / b + 1/2) in exact rationals;
    the first base whose every non-empty set holds >= alpha values. (None, None, x) when every
    distinct value occurs alpha times."""
    values = [Fraction(float(v)) for v in x]
    distinct = sorted(set(values))
    if min(values.count(v) for v in distinct) >= alpha:
        return None, None, [float(v) for v in values]
    gap = min(b - a for a, b in zip(distinct, distinct[1:]))
    e = math.floor(math.log10(gap)) - 1
    m_index = 0
    while True:
        m = (1, 2, 5)[m_index]
        b = Fraction(m) * Fraction(10) ** e
        q = [math.floor(v / b + Fraction(1, 2)) for v in values]
        sizes = {k: q.count(k) for k in set(q)}
        if min(sizes.values()) >= alpha:
            return m, e, [float(k * b) for k in q]
        m_index += 1
        if m_index == 3:
            m_index, e = 0, e + 1


def test_base_rounding_equals_brute_force_on_random_columns():
    for rng, x in random_columns(seed=1, count=900, max_n=40):
        if len(x) < 2:  # alpha is a group size, 2 <= alpha <= n
            continue
        alpha = int(rng.integers(2, len(x) + 1))
        m, e, want = reference(x, alpha)
        got = br.base_rounding(x, alpha)
        assert ((got.base.m, got.base.e) if got.base is not None else (None, None)) == (m, e), f"x={x.tolist()} a={alpha}"
        assert got.rounded.tolist() == want, f"x={x.tolist()} alpha={alpha}"


def test_decimal_data_and_decimal_bases():
    rng = np.random.default_rng(2)
    for _ in range(300):
        x = np.round(rng.normal(0, 10.0 ** rng.integers(-3, 4), int(rng.integers(2, 40))), int(rng.integers(0, 4)))
        alpha = int(rng.integers(2, min(8, len(x)) + 1))
        m, e, want = reference(x, alpha)
        got = br.base_rounding(x, alpha)
        assert ((got.base.m, got.base.e) if got.base is not None else (None, None)) == (m, e), f"x={x.tolist()}"
        assert got.rounded.tolist() == want


def test_the_smallest_base_is_searched_past_failures():
    # 0, 1, 2, 3 with alpha = 2: base 2 leaves 0 and 3 alone, 5 leaves 3 alone; 10 is the first
    got = br.base_rounding([0.0, 1, 2, 3], 2)
    assert (got.base.m, got.base.e, got.b) == (1, 1, 10.0) and got.rounded.tolist() == [0, 0, 0, 0]
    # halfway goes up (toward +infinity), in every exact path of the quotients
    halves = np.array([-15.0, -5.0, 4.999, 5.0, 15.0])
    for base in (br.Base(1, 1), br.Base(5, -1)):
        want = [math.floor(Fraction(v) / base.exact + Fraction(1, 2)) for v in halves.tolist()]
        assert br._halving_quotients(halves, base).tolist() == want
        integers = np.array([-15.0, -5.0, 5.0, 15.0])
        want = [math.floor(Fraction(v) / base.exact + Fraction(1, 2)) for v in integers.tolist()]
        assert br._halving_quotients(integers, base, br.integral_bound(integers)).tolist() == want
    assert br._halving_quotients(halves, br.Base(1, 1)).tolist() == [-1, 0, 0, 1, 2]
    assert br.base_rounding([1.0, 2, 3, 11, 12, 13], 3).rounded.tolist() == [0, 0, 0, 10, 10, 10]


def test_no_rounding_when_every_value_already_has_alpha_records():
    got = br.base_rounding([3.0, 3, 7, 7, 7], 2)
    assert got.base is None and got.b == 0.0
    assert got.rounded.tolist() == [3, 3, 7, 7, 7] and got.labels.tolist() == [0, 0, 1, 1, 1]
    assert br.base_rounding([4.5] * 3, 3).rounded.tolist() == [4.5] * 3


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.integers(-50, 50) | st.floats(-1e4, 1e4, allow_nan=False), min_size=2, max_size=60),
       data=st.data())
def test_every_set_of_attraction_holds_alpha_records(values, data):
    x = np.array(values, dtype=float)
    alpha = data.draw(st.integers(2, len(values)))
    got = br.base_rounding(x, alpha)
    assert got.sizes.min() >= alpha
    # labels follow the rounded values and number them in increasing order
    _, inverse = np.unique(got.rounded, return_inverse=True)
    np.testing.assert_array_equal(got.labels, inverse)
    if got.base is not None:
        b = got.base.exact
        for v, r in zip(x.tolist(), got.rounded.tolist()):
            q = math.floor(Fraction(v) / b + Fraction(1, 2))
            assert r == float(q * b)
            assert abs(Fraction(v) - q * b) <= b / 2


def test_lower_bound_of_the_search_is_right():
    rng = np.random.default_rng(3)
    for _ in range(1000):
        n = int(rng.integers(1, 30))
        a = int(rng.integers(1, n + 1))
        x = np.sort(rng.integers(0, 20, n).astype(float))
        want = 0.0
        for i in range(n):
            want = max(want, min(x[j + a - 1] - x[j] for j in range(max(0, i - a + 1), min(i, n - a) + 1)))
        assert br._lower_bound(x, a) == want


@pytest.mark.parametrize("power", [-300, -150, 150, 290])
def test_decimal_rescaling_shifts_the_base_exponent(power):
    rng = np.random.default_rng(4)
    x = rng.normal(0, 1, 200) + 0.123456789  # no value near a half of a base
    small = br.base_rounding(x, 5)
    big = br.base_rounding(x * 10.0**power, 5)
    assert (big.base.m, big.base.e) == (small.base.m, small.base.e + power)
    np.testing.assert_array_equal(big.labels, small.labels)
    np.testing.assert_allclose(big.rounded, small.rounded * 10.0**power, rtol=1e-15)


def test_extremes_round_or_refuse_clearly():
    got = br.base_rounding([1.2e308, 1.3e308, -1.2e308, -1.3e308], 2)
    assert got.base.text() == "1e308" and got.rounded.tolist() == [1e308, 1e308, -1e308, -1e308]
    with pytest.raises(SdcError, match=r"base_round: a rounded value is beyond the float64 range \(base 1e308\)"):
        br.base_rounding([1.2e308, 1.3e308, -1.7e308, -1.6e308], 2)  # -1.7e308 goes to -2e308
    with pytest.raises(SdcError, match="base_round: the values are so far apart"):
        br.base_rounding([1.7e308, -1.7e308], 2)
    with pytest.raises(SdcError, match=r"base_round: the smallest base that meets alpha = 3, 5e308, is beyond the float64"):
        br.base_rounding([1.0e308, 0.9e308, 0.0], 3)  # 2e308 sends 1e308 (a half) up alone
    tiny = br.base_rounding([1e-320, 2e-320, 3e-320, 9e-320], 2)
    assert tiny.sizes.min() >= 2 and np.isfinite(tiny.rounded).all()


@pytest.mark.parametrize("call, message", [
    (lambda: br.base_round([1.0, 2.0], 3), "base_round: alpha = 3 is larger than the number of non-NULL values"),
    (lambda: br.base_round([1.0, 2.0], 0), "base_round: alpha must be >= 2 (a group of one record releases its value "
                                           "unchanged), got 0"),
    (lambda: br.base_round([1.0, 2.0], 1), "base_round: alpha must be >= 2"),
    (lambda: br.base_round([1.0, 2.0], None), "base_round: alpha must not be NULL"),
    (lambda: br.base_round([1.0, np.inf], 1), "base_round: x contains inf"),
])
def test_bad_input_is_refused(call, message):
    with pytest.raises(SdcError, match=re.escape(message)):
        call()


# --- SQL --------------------------------------------------------------------------------------


def test_sql_forms(con):
    row = con.execute("SELECT base_round(l, 3), base_round_labels(l, 3), base_round_sizes(l, 3), base_round_base(l, 3) "
                      "FROM (SELECT [1, NULL, 2, 3, 11, 12, 13]::INTEGER[] AS l)").fetchone()
    assert row == ([0.0, None, 0.0, 0.0, 10.0, 10.0, 10.0], [0, None, 0, 0, 1, 1, 1], [3, None, 3, 3, 3, 3, 3], 10.0)
    assert con.execute("SELECT base_round_base(NULL::DOUBLE[], 2), base_round_base([]::DOUBLE[], 2)").fetchone() == (None, None)
    con.execute("CREATE TABLE t AS SELECT i AS id, i % 2 AS g, i * 3 + (i % 7) AS x FROM range(200) r(i)")
    sizes = con.execute("SELECT g, min(c) FROM (SELECT g, x, count(*) AS c FROM base_round_table('t', 'x', 4, "
                        "strata := 'g') GROUP BY g, x) GROUP BY g ORDER BY g").fetchall()
    assert all(c >= 4 for _, c in sizes)
    with pytest.raises(Exception, match="base_round: alpha = 9 is larger than the number of non-NULL values"):
        con.execute("SELECT base_round([1, 2, 3], 9)").fetchall()
