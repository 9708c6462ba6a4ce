"""PRAM (duckdb_sdc.methods.pram): every transition matrix is row-stochastic, the invariant matrix
equals sdcMicro's construction computed in exact rationals and leaves the shares invariant, released
categories are the column's own, the draws follow the matrix (tests with their tolerance stated), and
seeds behave as the package's seeded noise does."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from duckdb_sdc import SdcError
from duckdb_sdc.methods import pram as pm

import reference_recoding as ref

Z = 5.0  # a count more than 5 standard deviations from its expectation fails: probability < 6e-7 each


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=1, max_size=7), st.floats(0, 1), st.floats(0, 1), st.integers(0, 2**40))
def test_the_invariant_matrix_is_sdcmicros_row_stochastic_and_invariant(counts, pd, alpha, seed):
    shares = np.array(counts, float) / sum(counts)
    diagonal = pd + (1 - pd) * pm.uniforms(len(counts), seed)
    R = pm.invariant_matrix(shares, diagonal, alpha)
    assert (R >= 0).all() and np.allclose(R.sum(axis=1), 1, rtol=0, atol=1e-12)
    assert np.allclose(shares @ R, shares, rtol=0, atol=1e-12)
    if len(counts) > 1:
        exact = ref.invariant_matrix([Fraction(c, sum(counts)) for c in counts],
                                     [Fraction(float(d)) for d in diagonal], Fraction(alpha))
        assert np.allclose(R, np.array(exact, dtype=float), rtol=0, atol=1e-12)


def test_the_released_frequencies_keep_their_expectation():
    """Invariant PRAM: E[released count of j] = sum_i n_i R_ij = n_j. With 200,000 records of six
    categories each released count lies within Z = 5 standard deviations (sqrt(sum_i n_i R_ij (1 -
    R_ij))) of the original count."""
    rng = np.random.default_rng(1)
    x = rng.choice(list("abcdef"), 200_000, p=[0.4, 0.25, 0.15, 0.1, 0.07, 0.03])
    out = pm.pram(x, 0.6, 0.8, seed=11)
    cats = out.categories.tolist()
    n_i = np.array([(x == c).sum() for c in cats], float)
    released = np.array([(out.released == c).sum() for c in cats], float)
    var = (n_i[:, None] * out.matrix * (1 - out.matrix)).sum(axis=0)
    assert (np.abs(released - n_i) <= Z * np.sqrt(var)).all()
    assert set(out.released.tolist()) <= set(cats) and cats == sorted(set(x.tolist()))
    assert 0 < out.changed < 200_000 and out.changed == int((out.released != x).sum())


def test_each_record_draws_from_its_row():
    """The transitions observed from each category against the matrix: every cell's count within Z
    standard deviations of n_i R_ij."""
    x = np.repeat(np.array(["x", "y", "z"], dtype=object), [30_000, 20_000, 10_000])
    out = pm.pram(x, 0.5, 1.0, seed=3)
    for i, c in enumerate(out.categories):
        rows = out.released[x == c]
        for j, d in enumerate(out.categories):
            count, n = (rows == d).sum(), rows.shape[0]
            mean, sd = n * out.matrix[i, j], math.sqrt(n * out.matrix[i, j] * (1 - out.matrix[i, j]))
            assert abs(count - mean) <= Z * sd + 1e-9


def test_a_user_matrix_is_used_and_checked():
    x = ["a"] * 5000 + ["b"] * 5000 + [None]
    out = pm.pram(x, transition={("a", "a"): 0.9, ("a", "b"): 0.1, ("b", "b"): 1.0}, seed=5)
    assert out.released[-1] is None
    assert (out.released[5000:10000] == "b").all()
    moved = (out.released[:5000] == "b").sum()
    assert abs(moved - 500) <= Z * math.sqrt(5000 * 0.1 * 0.9)
    assert out.epsilon == math.inf  # 'b' is never released as 'a'
    with pytest.raises(SdcError, match=r"^pram: transition must be row-stochastic: the probabilities from 'a' do not"):
        pm.pram(["a", "b"], transition={("a", "a"): 0.5, ("b", "b"): 1.0})
    with pytest.raises(SdcError, match=r"^pram: transition lacks the column's categories 'c'"):
        pm.pram(["a", "c"], transition={("a", "a"): 1.0})


def test_seeds_repeat_and_nulls_stay():
    x = ["a", None, "b", "c", "a", "b"] * 50
    a, b = pm.pram(x, seed=7), pm.pram(x, seed=7)
    assert a.released.tolist() == b.released.tolist() and np.array_equal(a.matrix, b.matrix)
    assert [v is None for v in a.released] == [v is None for v in x]
    other = pm.pram(x, seed=8)
    assert not np.array_equal(a.matrix, other.matrix)
    fresh = [pm.pram(x).matrix for _ in range(2)]  # operating-system randomness
    assert not np.array_equal(fresh[0], fresh[1])


def test_one_category_and_no_perturbation():
    assert pm.pram(["a", "a", None], seed=1).released.tolist() == ["a", "a", None]
    x = list("abcabc")
    assert pm.pram(x, alpha=0.0, seed=1).released.tolist() == x
    assert pm.pram(x, pd=1.0, seed=1).released.tolist() == x


def test_epsilon_is_the_largest_likelihood_ratio():
    R = np.array([[0.8, 0.2], [0.4, 0.6]])
    assert pm.randomised_response_epsilon(R) == pytest.approx(max(math.log(0.8 / 0.4), math.log(0.6 / 0.2)))


@pytest.mark.parametrize("kw, message", [
    ({"pd": 1.5}, "pram: pd must be in [0, 1], got 1.5"),
    ({"alpha": -0.1}, "pram: alpha must be in [0, 1], got -0.1"),
    ({"seed": -1}, "pram: seed must be an integer in [0, 2^63), got -1"),
])
def test_bad_parameters_are_refused(kw, message):
    with pytest.raises(SdcError) as info:
        pm.pram(["a", "b"], **kw)
    assert str(info.value) == message
