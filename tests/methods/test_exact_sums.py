"""The exact accumulator of doubles (`duckdb_sdc.methods._exact`), which decides MDAV's ends on both
engines, against exact rationals: sums over the whole range of doubles it accepts (subnormal numbers
included), products by counts up to 2^63, and the sign of 2 T - c (a + b) at exact ties."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from duckdb_sdc.methods import _exact

doubles = st.floats(min_value=-(2.0**20), max_value=2.0**20, allow_nan=False, allow_infinity=False,
                    exclude_max=True, exclude_min=True)
wide = st.one_of(doubles, st.floats(min_value=-1e-300, max_value=1e-300), st.sampled_from([5e-324, -5e-324, 0.0]))


def _value(acc) -> Fraction:
    _exact.normalise(acc)
    return sum((Fraction(int(limb)) * Fraction(2) ** (32 * j - _exact._BIAS) for j, limb in enumerate(acc[:_exact.LIMBS])),
               Fraction(0))


def _sign(x: Fraction) -> int:
    return (x > 0) - (x < 0)


@settings(max_examples=300, deadline=None)
@given(xs=st.lists(wide, max_size=40), signs=st.lists(st.sampled_from([1, -1]), min_size=40, max_size=40))
def test_sums_are_exact(xs, signs):
    acc = _exact.accumulator()
    for x, s in zip(xs, signs):
        _exact.add(acc, x, s)
    want = sum((s * Fraction(x) for x, s in zip(xs, signs)), Fraction(0))
    assert _value(acc) == want
    assert _exact.sign_of(acc) == _sign(want)


@settings(max_examples=300, deadline=None)
@given(x=wide, c=st.integers(0, 2**63 - 1), base=st.lists(wide, max_size=5))
def test_products_by_counts_are_exact(x, c, base):
    acc = _exact.accumulator()
    for y in base:
        _exact.add(acc, y, 1)
    _exact.add_product(acc, x, c, -1)
    assert _value(acc) == sum(map(Fraction, base), Fraction(0)) - c * Fraction(x)


@settings(max_examples=300, deadline=None)
@given(d=st.lists(st.integers(1, 10**6), min_size=1, max_size=30), scale=st.sampled_from([0.01, 0.1, 2.0**-40, 1e-310, 5e-324]),
       shift=st.sampled_from([0, 1, -1]))
def test_midpoint_side_decides_exact_ties_and_their_neighbours(d, scale, shift):
    """Values symmetric about 0 (an exact tie: the mean is the midpoint of the two ends), then the same
    with one value moved by one unit in the last place either way."""
    v = np.sort(np.concatenate([-np.array(d) * scale, np.array(d) * scale]))
    if shift:
        v[0] = np.nextafter(v[0], shift * np.inf)
    acc = _exact.accumulator()
    _exact.add_range(acc, v, 0, v.shape[0], 1)
    exact = 2 * sum(map(Fraction, v.tolist()), Fraction(0)) - v.shape[0] * (Fraction(v[0]) + Fraction(v[-1]))
    assert _exact.midpoint_side(acc, v.shape[0], v[0], v[-1], _exact.accumulator()) == _sign(exact)
    assert _value(acc) == sum(map(Fraction, v.tolist()), Fraction(0))  # left unchanged


def test_carries_are_propagated_before_a_limb_could_overflow():
    """Limbs near their largest lazy value (the counter at the flush threshold): the next additions
    propagate the carries first, and the value stays exact."""
    acc = _exact.accumulator()
    x = 1.0 - 2.0**-53
    for _ in range(3):
        _exact.add_product(acc, x, 2**62, 1)
    _exact.normalise(acc)
    acc[:_exact.LIMBS - 1] += (1 << 62) - (1 << 32)  # as if 2^28 additions had each put 2^34 there
    acc[_exact.LIMBS] = _exact._FLUSH - 2
    want = _value(acc.copy())
    for _ in range(4):
        _exact.add(acc, 0.75, 1)
    assert acc[_exact.LIMBS] < 4 and _value(acc) == want + 3
    assert int(np.abs(acc[:_exact.LIMBS]).max()) < 2**40


def test_values_out_of_range_are_refused():
    with pytest.raises(ValueError, match="too large for the exact accumulator"):
        _exact.add(_exact.accumulator(), 2.0**21, 1)
