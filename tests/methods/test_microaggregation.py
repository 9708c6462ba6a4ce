"""Univariate microaggregation against slow references, and its documented properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from duckdb_sdc import SdcError
from duckdb_sdc.methods import (
    group_representatives,
    mdav_partition,
    microaggregate,
    oma_partition,
    partition,
    ranking_partition,
    represent,
    stable_argsort,
    vmdav_partition,
)
from inputs import random_columns
from reference import (
    canonical,
    mdav_reference,
    optimal_sse_bruteforce,
    ranking_reference,
    sse,
    vmdav_reference,
)


def _random_inputs(seed: int, count: int, max_n: int = 40):
    """Random columns of at least 2 values with a group size k in 2..min(n, 7)."""
    for rng, x in random_columns(seed, count, max_n):
        if len(x) >= 2:
            yield x, int(rng.integers(2, min(len(x), 7) + 1))


def _sizes(labels):
    return np.bincount(labels)


# --- stable ordering ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 1000, 300_000])
def test_stable_argsort_equals_numpy_stable(n):
    rng = np.random.default_rng(n)
    cases = [
        rng.normal(size=n),
        rng.integers(0, 5, n).astype(float),
        np.where(rng.random(n) < 0.5, -0.0, 0.0),
        1.0 + rng.random(n) * 1e-9,  # values agree in their high bits: exercises the run repair
        rng.integers(-3, 3, n) * 1e-300,
    ]
    for x in cases:
        np.testing.assert_array_equal(stable_argsort(x), np.argsort(x, kind="stable"))


# --- MDAV --------------------------------------------------------------------------------------


def test_mdav_equals_textbook_mdav_on_thousands_of_inputs():
    for x, k in _random_inputs(seed=1, count=3000):
        np.testing.assert_array_equal(canonical(mdav_partition(x, k)), canonical(mdav_reference(x, k)),
                                      err_msg=f"x={x.tolist()} k={k}")


def test_mdav_equals_textbook_on_larger_inputs():
    for x, k in _random_inputs(seed=2, count=25, max_n=400):
        np.testing.assert_array_equal(canonical(mdav_partition(x, k)), canonical(mdav_reference(x, k)))


def test_mdav_tie_between_the_two_ends_goes_to_the_earlier_record():
    # mean 2, both ends at distance 1: the record at position 0 (value 3) comes first, so the first
    # group grows from the top end
    x = np.array([3.0, 1.0, 2.0, 2.0, 1.0, 3.0, 2.0, 2.0, 2.0])
    labels = mdav_partition(x, 3)
    assert labels[0] == labels[5]  # the two 3s share the first group taken from the top
    np.testing.assert_array_equal(canonical(labels), canonical(mdav_reference(x, 3)))
    y = x[::-1].copy()  # now a 2 comes first... and the first extreme met is a 3 at position 3
    np.testing.assert_array_equal(canonical(mdav_partition(y, 3)), canonical(mdav_reference(y, 3)))


def test_mdav_equal_values_are_taken_in_input_order():
    x = np.array([5.0, 5.0, 5.0, 5.0, 0.0, 10.0, 5.0, 5.0, 5.0])
    labels = mdav_partition(x, 3)
    np.testing.assert_array_equal(canonical(labels), canonical(mdav_reference(x, 3)))


@given(st.lists(st.integers(-20, 20), min_size=2, max_size=30), st.integers(2, 5))
@settings(max_examples=300, deadline=None)
def test_mdav_property_matches_reference(values, k):
    x = np.array(values, dtype=float)
    k = min(k, len(x))
    np.testing.assert_array_equal(canonical(mdav_partition(x, k)), canonical(mdav_reference(x, k)))


# --- V-MDAV ------------------------------------------------------------------------------------


@pytest.mark.parametrize("gamma", [0.0, 0.2, 1.0, 3.0])
def test_vmdav_equals_textbook_vmdav(gamma):
    for x, k in _random_inputs(seed=3 + int(gamma * 10), count=800):
        np.testing.assert_array_equal(canonical(vmdav_partition(x, k, gamma)),
                                      canonical(vmdav_reference(x, k, gamma)),
                                      err_msg=f"x={x.tolist()} k={k} gamma={gamma}")


def test_vmdav_group_sizes():
    rng = np.random.default_rng(4)
    for _ in range(200):
        n = int(rng.integers(5, 300))
        k = int(rng.integers(2, 6))
        x = rng.exponential(1, n)
        sizes = _sizes(vmdav_partition(x, k, 1.5))
        assert sizes.min() >= k
        # only groups that received leftover values may exceed 2k - 1, and there are fewer than k
        assert sizes.sum() - np.minimum(sizes, 2 * k - 1).sum() < k


def test_vmdav_gamma_grows_a_group_over_a_small_gap():
    x = np.array([0.0, 1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0, 20.0, 21.0, 22.0, 23.0])
    # the ends tie (mean 11.5), position 0 wins: the group {0, 1, 2} forms first. 3 is 1 from it and
    # 7 from 10: it joins when 1 < gamma * 7.
    assert vmdav_partition(x, 3, 0.1)[3] != vmdav_partition(x, 3, 0.1)[0]
    assert vmdav_partition(x, 3, 0.2)[3] == vmdav_partition(x, 3, 0.2)[0]
    np.testing.assert_array_equal(canonical(vmdav_partition(x, 3, 0.1)),
                                  [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3])


# --- optimal -----------------------------------------------------------------------------------


def test_oma_equals_bruteforce_over_all_partitions():
    rng = np.random.default_rng(5)
    for i in range(400):
        n = int(rng.integers(2, 15))
        k = int(rng.integers(2, min(n, 5) + 1))
        x = rng.integers(0, 6, n).astype(float) if i % 2 else rng.normal(0, 1, n)
        labels = oma_partition(x, k)
        assert sse(x, labels) == pytest.approx(optimal_sse_bruteforce(x, k), rel=1e-9, abs=1e-9)
        sizes = _sizes(labels)
        assert sizes.min() >= k and (n < 2 * k or sizes.max() <= 2 * k - 1)


def test_oma_never_worse_than_mdav_or_ranking():
    for x, k in _random_inputs(seed=6, count=500, max_n=200):
        best = sse(x, oma_partition(x, k))
        assert best <= sse(x, mdav_partition(x, k)) * (1 + 1e-9) + 1e-9
        assert best <= sse(x, ranking_partition(x, k)) * (1 + 1e-9) + 1e-9


def test_oma_groups_are_consecutive_in_sorted_order():
    rng = np.random.default_rng(7)
    x = rng.integers(0, 20, 2000).astype(float)
    labels = oma_partition(x, 7)
    assert np.all(np.diff(labels[stable_argsort(x)]) >= 0)


def test_oma_large_n_matches_its_definition_on_chunk_boundaries():
    # n spans several 4096-wide chunks of the local prefix sums; compare with an unchunked DP
    rng = np.random.default_rng(8)
    x = rng.lognormal(0, 2, 9000) + 1e9
    k = 4
    v = np.sort(x) - 1e9
    n = len(v)
    dp = np.full(n + 1, np.inf)
    dp[0] = 0
    for j in range(k, n + 1):
        for m in range(k, min(2 * k - 1, j) + 1):
            part = v[j - m:j]
            dp[j] = min(dp[j], dp[j - m] + ((part - part.mean()) ** 2).sum())
    assert sse(x - 1e9, oma_partition(x, k)) == pytest.approx(dp[n], rel=1e-9)


# --- individual ranking ------------------------------------------------------------------------


def test_ranking_equals_reference():
    for x, k in _random_inputs(seed=9, count=1000):
        np.testing.assert_array_equal(ranking_partition(x, k), ranking_reference(x, k))


# --- shared properties -------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["mdav", "vmdav", "oma", "ranking"])
def test_every_group_has_at_least_k_members(method):
    for x, k in _random_inputs(seed=10, count=400, max_n=120):
        sizes = _sizes(partition(x, k, method))
        assert sizes.min() >= k
        if method in ("mdav", "oma", "ranking") and len(x) >= 2 * k:
            assert sizes.max() <= 2 * k - 1


@pytest.mark.parametrize("method", ["mdav", "vmdav", "oma", "ranking"])
def test_same_partition_when_shifted_or_scaled(method):
    rng = np.random.default_rng(11)
    for _ in range(50):
        n = int(rng.integers(2, 200))
        k = int(rng.integers(2, min(n, 6) + 1))
        grid = rng.integers(0, 64, n) / 8.0  # exact after a shift by 1e9
        base = canonical(partition(grid, k, method))
        np.testing.assert_array_equal(base, canonical(partition(grid + 1e9, k, method)))
        smooth = rng.normal(0, 1, n)
        base = canonical(partition(smooth, k, method))
        np.testing.assert_array_equal(base, canonical(partition(smooth * 1e-6, k, method)))


@pytest.mark.parametrize("method", ["mdav", "vmdav", "oma", "ranking"])
@pytest.mark.parametrize("representative", ["mean", "median"])
def test_rounding_replaces_values_by_their_group_representative(method, representative):
    rng = np.random.default_rng(12)
    x = rng.lognormal(3, 1, 500)
    labels = partition(x, 4, method)
    rounded = microaggregate(x, 4, method, representative)
    for lab in np.unique(labels):
        members = x[labels == lab]
        expected = members.mean() if representative == "mean" else np.median(members)
        np.testing.assert_allclose(rounded[labels == lab], expected, rtol=1e-12)
    np.testing.assert_allclose(represent(x, labels, representative), rounded, rtol=1e-12)


def test_means_keep_precision_under_a_large_offset():
    x = np.array([1e12 + 1, 1e12 + 2, 1e12 + 3, 1e12 + 10, 1e12 + 11, 1e12 + 12])
    np.testing.assert_array_equal(microaggregate(x, 3, "oma"), [1e12 + 2] * 3 + [1e12 + 11] * 3)
    np.testing.assert_array_equal(group_representatives(x, [0, 0, 0, 1, 1, 1]), [1e12 + 2, 1e12 + 11])


def test_rounding_preserves_the_total():
    rng = np.random.default_rng(13)
    x = rng.exponential(1000, 10_001)
    for method in ("mdav", "vmdav", "oma", "ranking"):
        assert microaggregate(x, 5, method).sum() == pytest.approx(x.sum(), rel=1e-12)


def test_parallel_path_matches_serial_path():
    # 300k values take the two-core path of the sort and the scatter
    rng = np.random.default_rng(14)
    x = rng.integers(0, 50_000, 300_000).astype(float)
    labels = ranking_partition(x, 10)
    np.testing.assert_array_equal(labels, ranking_reference(x, 10))


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("func", [mdav_partition, oma_partition, ranking_partition, vmdav_partition])
def test_bad_input_is_refused_with_a_clear_message(func):
    name = func.__name__
    with pytest.raises(SdcError, match=rf"{name}: k must be >= 2 \(a group of one record releases its value unchanged\), got 1"):
        func([1.0, 2.0], 1)
    with pytest.raises(SdcError, match=rf"{name}: k = 3 is larger than the number of non-NULL values \(2\)"):
        func([1.0, 2.0], 3)
    with pytest.raises(SdcError, match=rf"{name}: k must be an integer, got 2.5"):
        func([1.0, 2.0], 2.5)
    with pytest.raises(SdcError, match=rf"{name}: x contains nan"):
        func([1.0, np.nan], 2)
    with pytest.raises(SdcError, match=rf"{name}: x contains inf"):
        func([1.0, np.inf], 2)


def test_bad_representative_and_gamma():
    with pytest.raises(SdcError, match=r"mdav_round: representative must be one of 'mean', 'median', got 'mode'"):
        microaggregate([1.0, 2.0], 2, "mdav", "mode")
    with pytest.raises(SdcError, match=r"vmdav_partition: gamma must be a finite number >= 0, got -1"):
        vmdav_partition([1.0, 2.0], 2, -1)
