"""Base rounding (Senavirathne & Torra 2019, after Willenborg & De Waal): the fast search against a
slow one in exact integers that tries every multiple of the unit from the first above zero, its
documented properties, the user's base, extreme scales and the SQL forms."""

from __future__ import annotations

import re

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from duckdb_sdc import SdcError
from duckdb_sdc.methods import base_rounding as br
from inputs import random_columns


def quotients(values, b: Fraction) -> list[int]:
    """floor(x / b + 1/2) for every value (its exact binary value), in integers."""
    return [math.floor(v / b + Fraction(1, 2)) for v in values]


def meets(values, b: Fraction, alpha) -> bool:
    q = quotients(values, b)
    return min(q.count(k) for k in set(q)) >= alpha


def reference(x, alpha, unit: Fraction, start: int = 1):
    """(k, rounded values) by brute force: every multiple k unit from k = start upward, quotients in
    exact rationals; the first whose every non-empty set holds >= alpha values. (None, x) when every
    distinct value occurs alpha times."""
    values = [Fraction(float(v)) for v in x]
    if min(values.count(v) for v in set(values)) >= alpha:
        return None, [float(v) for v in values]
    k = start
    while not meets(values, k * unit, alpha):
        k += 1
    return k, [float(q * k * unit) for q in quotients(values, k * unit)]


def reference_unit(x, bound: float) -> Fraction:
    """The default unit as documented: 10^e, e = max(floor(log10 W) - 3, -d), d >= 0 the fewest decimals
    of the values' shortest decimals (read with Decimal)."""
    e = math.floor(math.log10(bound)) - 3
    d = max(0, max(-Decimal(repr(float(v))).normalize().as_tuple().exponent for v in x))
    return Fraction(10) ** max(e, -d)


def reference_125(x, alpha):
    """The base the earlier definition chose: the smallest of the 1-2-5 series m 10^e meeting alpha."""
    values = [Fraction(float(v)) for v in x]
    distinct = sorted(set(values))
    gap = min(b - a for a, b in zip(distinct, distinct[1:]))
    e, i = math.floor(math.log10(gap)) - 1, 0
    while not meets(values, Fraction((1, 2, 5)[i]) * Fraction(10) ** e, alpha):
        i, e = (i + 1) % 3, e + (i == 2)
    return Fraction((1, 2, 5)[i]) * Fraction(10) ** e


def _exact_base(got) -> Fraction | None:
    return None if got.base is None else got.base.exact


def test_base_rounding_equals_brute_force_on_random_columns():
    """Units ten times the lower bound's leading power, so that the brute force tries few multiples from
    1 upward; the fast search jumps over the same multiples."""
    for rng, x in random_columns(seed=1, count=900, max_n=40):
        if len(x) < 2:  # alpha is a group size, 2 <= alpha <= n
            continue
        alpha = int(rng.integers(2, len(x) + 1))
        values, counts = np.unique(x, return_counts=True)
        if counts.min() >= alpha:
            assert br.base_rounding(x, alpha).base is None
            continue
        bound = br._lower_bound(np.sort(x), alpha)
        unit = 10.0 ** (math.floor(math.log10(bound)) - int(rng.integers(0, 2)))
        k, want = reference(x, alpha, Fraction(Decimal(repr(unit))))
        got = br.base_rounding(x, alpha, unit=unit)
        assert got.base.exact == k * Fraction(Decimal(repr(unit))), f"x={x.tolist()} a={alpha}"
        assert got.rounded.tolist() == want, f"x={x.tolist()} alpha={alpha}"


def test_the_default_unit_and_the_smallest_multiple_of_it():
    """The default unit against its documented definition, and the base against brute force from the
    lower bound W upward (every multiple up to W fails: tested below)."""
    rng = np.random.default_rng(5)
    for case in range(300):
        n = int(rng.integers(2, 30))
        kind = case % 3
        x = (rng.integers(0, 60, n).astype(float) if kind == 0 else
             np.round(rng.normal(0, 10.0 ** rng.integers(-2, 3), n), int(rng.integers(0, 3))) if kind == 1 else
             rng.normal(0, 1, n) * 10.0 ** rng.integers(-3, 3))
        alpha = int(rng.integers(2, min(6, n) + 1))
        values, counts = np.unique(x, return_counts=True)
        if counts.min() >= alpha:
            continue
        bound = br._lower_bound(np.sort(x), alpha)
        unit = reference_unit(x, bound)
        assert br.default_unit(values, bound).exact == unit, x.tolist()
        k, want = reference(x, alpha, unit, start=max(1, math.floor(Fraction(bound) / unit)))
        got = br.base_rounding(x, alpha)
        assert got.base.exact == k * unit, f"x={x.tolist()} alpha={alpha}"
        assert got.rounded.tolist() == want


def test_the_base_is_never_above_the_1_2_5_series_and_usually_below():
    """Issue 33 item 6: the 1-2-5 series returned a larger base than needed in 119 of 120 random lists.
    Every base of the series above the lower bound is a multiple of the default unit, so the smallest
    multiple is never larger, and it is smaller in most lists."""
    rng = np.random.default_rng(120)
    smaller = 0
    for _ in range(120):
        n = int(rng.integers(5, 60))
        x = rng.integers(0, 1000, n).astype(float)
        alpha = int(rng.integers(2, 6))
        new, old = _exact_base(br.base_rounding(x, alpha)), reference_125(x, alpha)
        assert new <= old
        smaller += new < old
    assert smaller >= 110


def test_tarragona_at_alpha_5_keeps_two_released_values_in_every_column(shared_data):
    """Issue 33 item 6: with the 1-2-5 series, FIXED.ASSETS, UNCOMMITTED.FUNDS, SHORT.TERM.DEBT, SALES,
    DEPRECIATION, FINANCIAL.OUTCOME and NET.PROFIT were each rounded to one value (b = 1e6 to 5e7)."""
    import pandas as pd

    df = pd.read_csv(shared_data / "Tarragona.csv")
    for column in df.columns:
        got = br.base_rounding(df[column].to_numpy(float), 5)
        assert len(np.unique(got.rounded)) >= 2, (column, got.b)
        assert got.sizes.min() >= 5
    assert br.base_rounding(df["SALES"].to_numpy(float), 5).b == 10_255_000.0  # not 5e7


def test_a_given_base_rounds_to_its_multiples_or_is_refused():
    x = [1.0, 2, 3, 11, 12, 13, 24]
    got = br.base_rounding(x, 3, base=20)
    assert (got.b, got.rounded.tolist()) == (20.0, [0, 0, 0, 20, 20, 20, 20])
    assert br.base_rounding([0.1, 0.15, 0.25, 0.3], 2, base=0.5).rounded.tolist() == [0, 0, 0.5, 0.5]
    with pytest.raises(SdcError, match=re.escape(
            "base_round: base = 10.0 gives a set of attraction of 1 records (the values rounded to 20.0), fewer than "
            "alpha = 3; leave base out to search the smallest base that meets alpha")):
        br.base_rounding(x, 3, base=10)
    assert br.base_rounding([3.0, 3, 7, 7], 2, base=5).rounded.tolist() == [5, 5, 5, 5]  # rounded though no need
    with pytest.raises(SdcError, match=r"base_round: give unit \(the search's resolution\) or base \(no search\), not "
                                       r"both; got unit = 1.0 and base = 5.0"):
        br.base_rounding(x, 3, unit=1, base=5)
    for param in ("unit", "base"):
        for bad in (0, -1, float("inf")):
            with pytest.raises(SdcError, match=rf"base_round: {param} must be a finite number > 0"):
                br.base_rounding(x, 3, **{param: bad})


def test_the_search_gives_up_after_its_limit_naming_a_coarser_unit(monkeypatch):
    monkeypatch.setattr(br, "SEARCH_LIMIT", 3)
    with pytest.raises(SdcError, match=r"base_round: no multiple of unit = 0.001 up to .* meets alpha = 5 after 3 "
                                       r"candidates; give a coarser unit \(unit := 0.01\) or a base"):
        br.base_rounding(np.random.default_rng(1).normal(1e6, 1, 400), 5, unit=0.001)


def test_the_smallest_base_is_searched_past_failures():
    # 0, 1, 2, 3 with alpha = 2 (W = 1, unit 1): base 2 leaves 0 and 3 alone; 3 pairs them. The 1-2-5
    # series went on to 10, which sends all four to 0. 0..8 and 100 with alpha = 3: 200 sends 100 (a
    # half) up alone, 201 is the first (the series: 500)
    got = br.base_rounding([0.0, 1, 2, 3], 2)
    assert (got.base.m, got.base.e, got.b) == (3, 0, 3.0) and got.rounded.tolist() == [0, 0, 3, 3]
    assert br.base_rounding([0.0, 1, 2, 3, 4, 5, 6, 7, 8, 100], 3).b == 201.0
    # halfway goes up (toward +infinity), in every exact path of the quotients
    halves = np.array([-15.0, -5.0, 4.999, 5.0, 15.0])
    for base in (br.Base(1, 1), br.Base(5, -1)):
        want = [math.floor(Fraction(v) / base.exact + Fraction(1, 2)) for v in halves.tolist()]
        assert br._halving_quotients(halves, base).tolist() == want
        integers = np.array([-15.0, -5.0, 5.0, 15.0])
        want = [math.floor(Fraction(v) / base.exact + Fraction(1, 2)) for v in integers.tolist()]
        assert br._halving_quotients(integers, base, br.integral_bound(integers)).tolist() == want
    assert br._halving_quotients(halves, br.Base(1, 1)).tolist() == [-1, 0, 0, 1, 2]
    assert br.base_rounding([1.0, 2, 3, 11, 12, 13], 3).rounded.tolist() == [0, 0, 0, 14, 14, 14]  # b = 7


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
    # W = 1e307, unit 1e304: 1.041e307 puts 1.2e308 and 1.3e308 (and their negatives) in one set each
    got = br.base_rounding([1.2e308, 1.3e308, -1.2e308, -1.3e308], 2)
    assert got.base.text() == "1.041E+307" and got.rounded.tolist() == [1.2492e308, 1.2492e308, -1.2492e308, -1.2492e308]
    with pytest.raises(SdcError, match="base_round: the values are so far apart"):
        br.base_rounding([1.7e308, -1.7e308], 2)
    with pytest.raises(SdcError, match=r"base_round: the smallest base that meets alpha = 3, 2.001E\+308, is beyond the "
                                       r"float64"):
        br.base_rounding([1.0e308, 0.9e308, 0.0], 3)  # only b > 2e308 puts 1e308 with the others
    with pytest.raises(SdcError, match=r"base_round: a rounded value is beyond the float64 range \(base 1E\+308\)"):
        br.base_rounding([1.7e308, 1.6e308, 0.0, 0.1], 2, base=1e308)  # 1.7e308 goes to 2e308
    # subnormal data and units: the quotients and the jumps in exact rationals (9e-320 is 18216 * 2^-1074)
    tiny = br.base_rounding([1e-320, 2e-320, 3e-320, 9e-320], 2)
    assert tiny.base.text() == "1.8E-319" and tiny.rounded.tolist() == [0.0] * 4
    k, want = reference([1e-320, 2e-320, 3e-320, 9e-320, 7e-320], 2, Fraction(1, 10**323), start=1000)
    got = br.base_rounding([1e-320, 2e-320, 3e-320, 9e-320, 7e-320], 2)
    assert (got.base.exact, got.rounded.tolist()) == (k * Fraction(1, 10**323), want)


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
    assert row == ([0.0, None, 0.0, 0.0, 14.0, 14.0, 14.0], [0, None, 0, 0, 1, 1, 1], [3, None, 3, 3, 3, 3, 3], 7.0)
    row = con.execute("SELECT base_round(l, 3, base := 10), base_round_base(l, 3, base := 10), "
                      "base_round(l, 3, unit := 5), base_round_base(l, 3, unit := 5) "
                      "FROM (SELECT [1, NULL, 2, 3, 11, 12, 13]::INTEGER[] AS l)").fetchone()
    assert row == ([0.0, None, 0.0, 0.0, 10.0, 10.0, 10.0], 10.0, [0.0, None, 0.0, 0.0, 10.0, 10.0, 10.0], 10.0)
    with pytest.raises(Exception, match=r"base_round: base = 4.0 gives a set of attraction of 1 records"):
        con.execute("SELECT base_round([1, 2, 3, 11, 12, 13], 3, base := 4)").fetchall()
    assert con.execute("SELECT base_round_base(NULL::DOUBLE[], 2), base_round_base([]::DOUBLE[], 2)").fetchone() == (None, None)
    con.execute("CREATE TABLE t AS SELECT i AS id, i % 2 AS g, i * 3 + (i % 7) AS x FROM range(200) r(i)")
    sizes = con.execute("SELECT g, min(c) FROM (SELECT g, x, count(*) AS c FROM base_round_table('t', 'x', 4, "
                        "strata := 'g') GROUP BY g, x) GROUP BY g ORDER BY g").fetchall()
    assert all(c >= 4 for _, c in sizes)
    fixed = con.execute("SELECT DISTINCT x % 50 FROM base_round_table('t', 'x', 4, base := 50)").fetchall()
    assert fixed == [(0.0,)]
    with pytest.raises(Exception, match="base_round: alpha = 9 is larger than the number of non-NULL values"):
        con.execute("SELECT base_round([1, 2, 3], 9)").fetchall()
