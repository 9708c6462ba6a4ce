"""Rounding by discretisation (numpy layer) against slow references, and its documented properties."""

from __future__ import annotations

import math

import numpy as np
import pytest

from duckdb_sdc import SdcError
from duckdb_sdc.methods import discretisation as disc
from duckdb_sdc.methods import kmeans1d, microaggregate, partition
from duckdb_sdc.methods.freedman_diaconis import freedman_diaconis, group_size_sorted, intervals_sorted
from inputs import random_columns
from reference_discretisation import (
    efd_labels_reference,
    ewd_labels_reference,
    kmeans_bruteforce,
    lloyd,
    rbd_reference,
    sse_of_labels,
)


def _inputs(seed: int, count: int, max_n: int = 40):
    """Random columns with a number of intervals c in 1..8."""
    for rng, x in random_columns(seed, count, max_n):
        yield x, int(rng.integers(1, 9))


# --- equal width and equal frequency ----------------------------------------------------------


def test_ewd_labels_equal_the_literal_formula():
    for x, c in _inputs(seed=1, count=2000):
        np.testing.assert_array_equal(disc.discretise_labels(x, c, "ewd"), ewd_labels_reference(x, c),
                                      err_msg=f"x={x.tolist()} c={c}")


def test_ewd_maximum_is_in_the_last_interval_and_points_are_interval_statistics():
    x = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 10.0])
    assert disc.discretise_labels(x, 5, "ewd").tolist() == [0, 0, 1, 1, 2, 4]
    assert disc.ewd_round(x, 5).tolist() == [0.5, 0.5, 2.5, 2.5, 4.0, 10.0]
    assert disc.ewd_round(x, 5, "midpoint").tolist() == [1.0, 1.0, 3.0, 3.0, 5.0, 9.0]
    assert disc.ewd_round(x, 5, "median").tolist() == [0.5, 0.5, 2.5, 2.5, 4.0, 10.0]


def test_ewd_with_many_more_intervals_than_values():
    x = np.array([0.0, 1.0, 1.0, 5.0])
    labels = disc.discretise_labels(x, 10**9, "ewd")
    assert labels.tolist() == [0, 200_000_000, 200_000_000, 10**9 - 1]
    np.testing.assert_array_equal(disc.ewd_round(x, 10**9), x)
    np.testing.assert_allclose(disc.ewd_round(x, 10**9, "midpoint"), x, atol=1e-8)


def test_efd_labels_equal_the_literal_rule():
    for x, c in _inputs(seed=2, count=2000):
        np.testing.assert_array_equal(disc.discretise_labels(x, c, "efd"), efd_labels_reference(x, c),
                                      err_msg=f"x={x.tolist()} c={c}")


def test_efd_never_splits_a_tie_group_and_reaches_min_of_c_and_distinct_values():
    for x, c in _inputs(seed=3, count=1000, max_n=200):
        labels = disc.discretise_labels(x, c, "efd")
        for value in np.unique(x):
            assert len(set(labels[x == value].tolist())) == 1
        assert labels.max() + 1 == min(c, len(np.unique(x)))
        assert sorted(set(labels.tolist())) == list(range(labels.max() + 1))


def test_efd_intervals_have_about_n_over_c_values_without_ties():
    x = np.random.default_rng(4).normal(size=1003)
    sizes = np.bincount(disc.discretise_labels(x, 10, "efd"))
    assert sizes.tolist() == [100, 101, 100, 100, 100, 101, 100, 100, 101, 100]


def test_efd_boundaries_move_to_the_nearest_gap():
    # n = 8, c = 2: ideal cut at sorted position 4 lies inside the run of 3s (positions 2..5); the
    # gaps are at 2 and 6, equally far: the lower one wins
    x = np.array([1, 2, 3, 3, 3, 3, 4, 5.0])
    assert disc.discretise_labels(x, 2, "efd").tolist() == [0, 0, 1, 1, 1, 1, 1, 1]
    # one more 3 moves the nearest gap up
    x = np.array([1, 3, 3, 3, 3, 4, 5, 6.0])
    assert disc.discretise_labels(x, 2, "efd").tolist() == [0, 0, 0, 0, 0, 1, 1, 1]


# --- exact k-means ----------------------------------------------------------------------------


@pytest.mark.parametrize("solver", ["auto", "layered", "penalised"])
def test_kmd_sse_equals_brute_force_for_small_n(solver):
    rng = np.random.default_rng(5)
    for x, c in _inputs(seed=6, count=700, max_n=12):
        v = np.sort(x)
        labels = disc.kmd_partition_sorted(v, c, solver)
        best, _ = kmeans_bruteforce(x, c)
        got = sse_of_labels(v, labels)
        assert got == pytest.approx(best, rel=1e-9, abs=1e-9 * (1 + float(np.var(x)) * len(x))), \
            f"x={x.tolist()} c={c}"
        assert labels.max() + 1 == min(c, len(np.unique(x)))
    del rng


def test_kmd_labels_equal_brute_force_where_the_optimum_is_unique():
    compared = 0
    for x, c in _inputs(seed=7, count=900, max_n=11):
        best, results = kmeans_bruteforce(x, c)
        near = [r for r in results if r[0] <= best + 1e-7 * (1 + best)]
        distinct = {tuple(r[1].tolist()) for r in near}
        if len(distinct) != 1:
            continue  # several optimal partitions: the SSE test covers these
        compared += 1
        np.testing.assert_array_equal(disc.discretise_labels(x, c, "kmd"), near[0][1],
                                      err_msg=f"x={x.tolist()} c={c}")
    assert compared > 300


def test_kmd_solvers_agree_on_larger_inputs_and_never_lose_to_lloyd():
    rng = np.random.default_rng(8)
    for i in range(40):
        n = int(rng.integers(50, 3000))
        x = (rng.integers(0, 60, n).astype(float) if i % 2 else rng.lognormal(3, 1, n))
        c = int(rng.integers(2, 30))
        v = np.sort(x)
        sse = {s: sse_of_labels(v, disc.kmd_partition_sorted(v, c, s)) for s in ("layered", "penalised")}
        assert sse["penalised"] == pytest.approx(sse["layered"], rel=1e-9)
        for _ in range(3):
            assert sse["layered"] <= lloyd(x, c, rng) * (1 + 1e-12)


def test_kmd_penalised_solver_with_a_coarse_penalty_search(monkeypatch):
    monkeypatch.setattr(kmeans1d, "COARSE_POINTS", 256)
    rng = np.random.default_rng(9)
    for x in (rng.lognormal(0, 1.5, 5000), rng.normal(size=4000), rng.integers(0, 3000, 6000) * 1.0):
        v = np.sort(x)
        for c in (3, 10):
            a = sse_of_labels(v, disc.kmd_partition_sorted(v, c, "penalised"))
            b = sse_of_labels(v, disc.kmd_partition_sorted(v, c, "layered"))
            assert a == pytest.approx(b, rel=1e-9)


def _penalised_cost(SW, Q, splits, lam):
    return sum(kmeans1d._cost(SW, Q, a, b) for a, b in zip(splits[:-1], splits[1:])) + lam * (len(splits) - 1)


def test_kmd_sweep_in_two_halves_reaches_the_serial_sweeps_optimum():
    # forward and backward halves combined across the middle against the one forward sweep, for
    # penalties from "every value its own cluster" to "one cluster"
    rng = np.random.default_rng(30)
    for i in range(150):
        n = int(rng.integers(4, 2500))
        x = [rng.lognormal(0, 1.5, n), rng.integers(0, max(2, n // 8), n) * 1.0, rng.normal(size=n),
             np.r_[rng.normal(size=n - 2), 40.0, -300.0]][i % 4]
        _, SW, Q = kmeans1d.prefix_sums(np.sort(x))
        total = kmeans1d._cost(SW, Q, 0, SW.shape[0] - 1)
        for lam in total * np.array([1e-9, 1e-5, 1e-3, 0.02, 0.3, 3.0]):
            serial = kmeans1d._penalised_serial(SW, Q, lam)
            halves = kmeans1d._penalised_halves(SW, Q, lam)
            assert halves[0] == 0 and halves[-1] == SW.shape[0] - 1 and np.all(np.diff(halves) > 0)
            a, b = _penalised_cost(SW, Q, serial, lam), _penalised_cost(SW, Q, halves, lam)
            assert b == pytest.approx(a, rel=1e-12, abs=1e-15), f"n={n} lam={lam}"


def test_kmd_with_the_two_core_sweep_on_small_inputs(monkeypatch):
    monkeypatch.setattr(kmeans1d, "PARALLEL_MIN", 4)
    for x, c in _inputs(seed=31, count=500, max_n=12):
        v = np.sort(x)
        got = sse_of_labels(v, disc.kmd_partition_sorted(v, c, "penalised"))
        assert got == pytest.approx(kmeans_bruteforce(x, c)[0], rel=1e-9, abs=1e-9 * (1 + float(np.var(x)) * len(x)))
    rng = np.random.default_rng(32)
    for i in range(30):
        n = int(rng.integers(50, 3000))
        v = np.sort(rng.integers(0, 80, n).astype(float) if i % 2 else rng.lognormal(3, 1, n))
        c = int(rng.integers(3, 30))
        a = sse_of_labels(v, disc.kmd_partition_sorted(v, c, "penalised"))
        assert a == pytest.approx(sse_of_labels(v, disc.kmd_partition_sorted(v, c, "layered")), rel=1e-9)


@pytest.mark.parametrize("kind", ["ties", "lognormal"])
def test_kmd_large_input_on_both_cores_equals_the_layered_solver(kind):
    # more distinct values than kmeans1d's two-core threshold: the coarse penalty search, the sweep
    # in two halves on two threads and the value lookup for the labels all take part
    rng = np.random.default_rng(33)
    x = rng.integers(0, 400_000, 600_000) * 0.5 if kind == "ties" else rng.lognormal(9, 1.2, 300_000)
    v = np.sort(x)
    assert len(np.unique(v)) >= kmeans1d.PARALLEL_MIN
    for c in (12, 25):
        labels = disc.kmd_partition_sorted(v, c)
        assert sse_of_labels(v, labels) == pytest.approx(sse_of_labels(v, disc.kmd_partition_sorted(v, c, "layered")),
                                                         rel=1e-9)
        assert labels.max() + 1 == c and np.all(v[1:][np.diff(labels) > 0] > v[:-1][np.diff(labels) > 0])
        got = disc.discretise_labels(x, c, "kmd")
        np.testing.assert_array_equal(got[np.argsort(x, kind="stable")], labels)


def test_kmd_is_exactly_invariant_to_scaling_by_powers_of_two_and_survives_extreme_scales():
    x = np.random.default_rng(34).lognormal(2, 1, 3000)
    labels = disc.discretise_labels(x, 9, "kmd")
    for factor in (2.0**-1000, 2.0**-30, 2.0**40, 2.0**1000):
        np.testing.assert_array_equal(disc.discretise_labels(x * factor, 9, "kmd"), labels)
    # squares of these values over- or underflow: the solver scales them first
    for factor in (1e-300, 1e300):
        np.testing.assert_array_equal(disc.discretise_labels(x * factor, 9, "kmd"), labels)
        out = disc.kmd_round(x * factor, 9)
        assert np.all(np.isfinite(out)) and len(np.unique(out)) == 9


@pytest.mark.parametrize("method", ["efd", "kmd"])
def test_interval_lookup_by_value_equals_the_scatter_back_to_input_order(method, monkeypatch):
    """efd and kmd sort values only and find each input value's interval again by value (counting
    bounds, or a binary search past LOOKUP_MAX bounds); the reference carries a stable argsort of
    the input and scatters the labels of the sorted values back through it."""
    rng = np.random.default_rng(35)
    bounds_of = disc._efd_bounds if method == "efd" else disc._kmd_bounds
    for i in range(80):
        n = int(rng.integers(1, 400))
        x = rng.integers(-5, 6, n) * 1.0 if i % 3 == 0 else rng.lognormal(0, 1, n)
        if i % 3 == 1:
            x[::7] = -0.0  # -0.0 and 0.0 are equal values
            x[1::7] = 0.0
        c = int(rng.integers(1, 60))
        order = np.argsort(x, kind="stable")
        v = x[order]
        bounds = bounds_of(v, c)
        sizes = np.diff(bounds)
        labels = np.empty(n, np.int64)
        labels[order] = np.repeat(np.arange(sizes.shape[0]), sizes)
        expected = {}
        for r, rep in enumerate(disc.POINTS):
            points = disc._bounds_points(v, bounds, r)
            expected[rep] = points[labels]
        for lookup_max in (disc.LOOKUP_MAX, -1):  # counting bounds and binary search
            for parallel_min in (disc.PARALLEL_MIN, 1):  # numpy and the two-core kernel
                with monkeypatch.context() as m:
                    m.setattr(disc, "PARALLEL_MIN", parallel_min)
                    m.setattr(disc, "LOOKUP_MAX", lookup_max)
                    for rep in disc.POINTS:
                        np.testing.assert_array_equal(disc.discretise(x, c, method, rep), expected[rep])
                    np.testing.assert_array_equal(disc.discretise_labels(x, c, method), labels)


def test_kmd_more_clusters_than_distinct_values_gives_one_per_value():
    x = np.array([3, 1, 3, 2, 1, 3.0])
    assert disc.discretise_labels(x, 10, "kmd").tolist() == [2, 0, 2, 1, 0, 2]
    np.testing.assert_array_equal(disc.kmd_round(x, 10), x)


def test_kmd_is_invariant_to_shift_and_scale():
    x = np.random.default_rng(10).lognormal(2, 1, 2000).round(1)
    labels = disc.discretise_labels(x, 7, "kmd")
    np.testing.assert_array_equal(disc.discretise_labels(x + 1e9, 7, "kmd"), labels)
    np.testing.assert_array_equal(disc.discretise_labels(x * 1e-6, 7, "kmd"), labels)


# --- re-sampling ------------------------------------------------------------------------------


def test_rbd_equals_algorithm_1_step_by_step():
    rng = np.random.default_rng(11)
    for i in range(120):
        n = int(rng.integers(1, 10))
        x = rng.integers(0, 6, n).astype(float) if i % 2 else rng.normal(size=n)
        c = int(rng.integers(1, 5))
        groups = int(rng.integers(1, 4))
        median = bool(i % 3 == 0)
        seed = int(rng.integers(0, 1000))
        expected, _ = rbd_reference(x, c, groups, median, seed)
        got = disc.rbd_round(x, c, groups=groups, centroid="median" if median else "mean", seed=seed)
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12,
                                   err_msg=f"x={x.tolist()} c={c} groups={groups} seed={seed}")


def test_rbd_with_heavily_repeated_values_equals_algorithm_1_step_by_step():
    # groups with 4 d <= g distinct values draw binomial counts per value instead of positions
    rng = np.random.default_rng(12)
    for i in range(60):
        n = int(rng.integers(8, 40))
        x = rng.integers(0, int(rng.integers(1, 4)), n).astype(float) * 2.5 - 1.0
        c = int(rng.integers(1, 4))
        groups = int(rng.integers(1, 3))
        median = bool(i % 2)
        seed = int(rng.integers(0, 1000))
        expected, _ = rbd_reference(x, c, groups, median, seed)
        got = disc.rbd_round(x, c, groups=groups, centroid="median" if median else "mean", seed=seed)
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12,
                                   err_msg=f"x={x.tolist()} c={c} groups={groups} seed={seed}")


def test_rbd_rounds_to_the_nearest_point_and_reproduces_with_a_seed():
    x = np.random.default_rng(12).exponential(12.5, 500)
    a = disc.rbd_round(x, 5, seed=7)
    np.testing.assert_array_equal(a, disc.rbd_round(x, 5, seed=7))
    assert not np.array_equal(a, disc.rbd_round(x, 5, seed=8))
    points = np.unique(a)
    assert len(points) <= 5
    labels = disc.discretise_labels(x, 5, "rbd", seed=7)
    assert labels.max() < 5
    # every value is at least as close to its point as to any other point that some value uses
    dist = np.abs(x[:, None] - points[None, :])
    assert np.all(np.abs(x - a) <= dist.min(axis=1) + 1e-12)


# --- rounding points, sets of attraction, determinism -------------------------------------------


@pytest.mark.parametrize("method", ["ewd", "efd", "kmd"])
def test_points_are_the_mean_median_or_midpoint_of_each_interval(method):
    for x, c in _inputs(seed=13, count=300):
        labels = disc.discretise_labels(x, c, method)
        for rep in disc.POINTS:
            out = disc.discretise(x, c, method, rep)
            for g in np.unique(labels):
                members = x[labels == g]
                if rep == "mean":
                    expected = members.mean()
                elif rep == "median":
                    expected = np.median(members)
                elif method == "ewd" and x.min() < x.max():
                    w = (x.max() - x.min()) / c
                    expected = x.min() + (g + 0.5) * w
                else:
                    expected = (members.min() + members.max()) / 2
                np.testing.assert_allclose(out[labels == g], expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", disc.METHODS)
def test_attraction_sizes_count_the_values_sharing_a_rounding_point(method):
    for x, c in _inputs(seed=14, count=200):
        sizes = disc.attraction_sizes(x, c, method, seed=1)
        out = disc.discretise(x, c, method, seed=1)
        for i in range(len(x)):
            assert sizes[i] == np.sum(out == out[i])


@pytest.mark.parametrize("method", ["ewd", "efd", "kmd"])
def test_deterministic_methods_are_deterministic_and_ignore_the_seed(method):
    x = np.random.default_rng(15).lognormal(5, 1, 3000).round()
    a = disc.discretise(x, 8, method)
    np.testing.assert_array_equal(a, disc.discretise(x, 8, method, seed=1))
    np.testing.assert_array_equal(a, disc.discretise(x.copy(), 8, method))


# --- stochastic rounding ----------------------------------------------------------------------


@pytest.mark.parametrize("method", ["ewd", "efd", "kmd"])
def test_stochastic_rounding_is_unbiased_and_stays_between_the_enclosing_points(method):
    rng = np.random.default_rng(16)
    x = rng.normal(50, 10, 300)
    det = disc.discretise(x, 6, method, seed=0)
    points = np.unique(det)
    draws = np.array([disc.discretise(x, 6, method, stochastic=True, seed=s) for s in range(400)])
    inside = (x >= points[0]) & (x <= points[-1])
    below = np.searchsorted(points, x, side="right") - 1
    for i in np.flatnonzero(inside):
        lo = points[below[i]]
        hi = points[min(below[i] + 1, len(points) - 1)]
        assert set(np.unique(draws[:, i])) <= {lo, hi}
        # a draw has standard deviation <= (hi - lo) / 2; the mean of 400 draws is within 5 of
        # its standard errors of x (fixed seeds: deterministic; failure probability < 1e-6 per value)
        assert abs(draws[:, i].mean() - x[i]) <= 5 * (hi - lo) / 2 / math.sqrt(400) + 1e-12
    np.testing.assert_array_equal(draws[:, ~inside], np.broadcast_to(det[~inside], draws[:, ~inside].shape))


def test_stochastic_rbd_goes_to_one_of_the_two_enclosing_points_of_its_own_rounding_set():
    # the seed drives the re-sampling too, so the rounding set differs from seed to seed;
    # unbiasedness given the rounding set is the kernel's (test_stochastic_kernel_...)
    x = np.random.default_rng(19).normal(50, 10, 300)
    for seed in range(20):
        points = np.unique(disc.rbd_round(x, 6, seed=seed))
        out = disc.rbd_round(x, 6, stochastic=True, seed=seed)
        t = np.clip(np.searchsorted(points, x, side="right") - 1, 0, len(points) - 1)
        hi = points[np.minimum(t + 1, len(points) - 1)]
        assert np.all((out == points[t]) | (out == hi))


def test_stochastic_rounding_reproduces_with_a_seed_and_differs_with_another():
    x = np.random.default_rng(17).uniform(0, 1, 1000)
    for method in disc.METHODS:
        a = disc.discretise(x, 5, method, stochastic=True, seed=3)
        np.testing.assert_array_equal(a, disc.discretise(x, 5, method, stochastic=True, seed=3))
        assert not np.array_equal(a, disc.discretise(x, 5, method, stochastic=True, seed=4))


def test_stochastic_kernel_converges_to_each_value():
    points = np.array([0.0, 1.0, 4.0])
    x = np.array([0.25, 0.5, 1.0, 2.5, 3.9])
    rng = np.random.default_rng(18)
    draws = np.array([disc.stochastic_round(x, points, rng.random(5)) for _ in range(20000)])
    # standard error <= 1.5 / sqrt(20000) ~ 0.011; tolerance 0.05
    np.testing.assert_allclose(draws.mean(axis=0), x, atol=0.05)


# --- Freedman-Diaconis ------------------------------------------------------------------------


def test_freedman_diaconis_formula():
    x = np.arange(1.0, 1001.0)  # IQR = 499.5, n^(1/3) = 10, width = 99.9, range 999
    assert freedman_diaconis(x) == 10
    assert group_size_sorted(x) == 100
    np.testing.assert_array_equal(disc.discretise(x, "auto", "efd"), disc.discretise(x, 10, "efd"))
    np.testing.assert_array_equal(microaggregate(x, "auto", "mdav"), microaggregate(x, 100, "mdav"))
    np.testing.assert_array_equal(partition(x, "AUTO ", "oma"), partition(x, 100, "oma"))


def test_freedman_diaconis_fallback_when_iqr_is_zero():
    x = np.sort(np.r_[np.zeros(800), np.arange(1.0, 201.0)])
    # IQR = 0; central 3/4: q(7/8) - q(1/8) = 75.125 - 0 -> 2 IQR replaced by 75.125 / 0.75
    assert x[874] + 0.125 * (x[875] - x[874]) == 75.125
    assert intervals_sorted(x) == math.ceil(200 / (75.125 / 0.75 / 1000 ** (1 / 3))) == 20
    assert intervals_sorted(np.r_[np.zeros(999), 5.0]) == 1  # all central ranges are 0
    assert intervals_sorted(np.full(10, 3.0)) == 1
    assert intervals_sorted(np.array([2.0])) == 1


# --- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize("call, message", [
    (lambda: disc.efd_round([1, 2], 0), "efd_round: c must be >= 1 or 'auto', got 0"),
    (lambda: disc.kmd_round([1, 2], -3), "kmd_round: c must be >= 1 or 'auto', got -3"),
    (lambda: disc.ewd_round([1, 2], 1.5), "ewd_round: c must be an integer, got 1.5"),
    (lambda: disc.ewd_round([1, 2], "many"), "ewd_round: c must be an integer, got 'many'"),
    (lambda: disc.ewd_round([1, 2], None), "ewd_round: c must not be NULL"),
    (lambda: disc.efd_round([1, np.nan], 1), "efd_round: x contains nan"),
    (lambda: disc.efd_round([1, 2], 1, "mode"),
     "efd_round: representative must be one of 'mean', 'median', 'midpoint', got 'mode'"),
    (lambda: disc.rbd_round([1, 2], 1, groups=0), "rbd_round: groups must be >= 1"),
    (lambda: disc.rbd_round([1, 2], 1, centroid="midpoint"), "rbd_round: centroid must be one of"),
    (lambda: disc.kmd_round([1, 2], 1, seed=-1), "kmd_round: seed must be an integer in [0, 2^63), got -1"),
    (lambda: disc.kmd_round([1, 2], 1, stochastic="maybe"), "kmd_round: stochastic must be true or false"),
])
def test_bad_input_gives_a_clear_error(call, message):
    with pytest.raises(SdcError) as info:
        call()
    assert message in str(info.value)


@pytest.mark.parametrize("method", disc.METHODS)
def test_constant_column_and_single_value(method):
    for x in (np.full(7, 4.5), np.array([4.5])):
        for c in (1, 3, "auto"):
            assert disc.discretise_labels(x, c, method, seed=1).tolist() == [0] * len(x)
            if c == "auto" and len(x) == 1:  # 'auto' never releases a value unchanged (below)
                with pytest.raises(SdcError, match="left a set of attraction of 1 value"):
                    disc.discretise(x, c, method, seed=1)
                continue
            np.testing.assert_array_equal(disc.discretise(x, c, method, seed=1), x)
            np.testing.assert_array_equal(disc.discretise(x, c, method, stochastic=True, seed=1), x)


@pytest.mark.parametrize("method", disc.METHODS)
def test_auto_never_releases_a_value_unchanged(method):
    """Issue 33 item 5: on 0..199 and one value of 1e6, Freedman-Diaconis gives 29,289 intervals, more
    than the 201 distinct values, and efd_round(xs, 'auto') returned every value unchanged. 'auto' now
    refuses a set of attraction of one value (as a release does); an explicit c is the user's choice
    and still shows its sets with <method>_sizes."""
    x = np.append(np.arange(200.0), 1e6)
    with pytest.raises(SdcError, match=rf"^{method}_round: c = 'auto' chose 29289 intervals \(Freedman-Diaconis\) "
                                       rf"and left a set of attraction of 1 value, which would be released unchanged; "
                                       rf"give c \(fewer intervals: {method}_sizes shows the sets\)"):
        disc.discretise(x, "auto", method, seed=1)
    assert disc.attraction_sizes(x, "auto", method, seed=1).min() == 1  # the sizes still show it
    fine = np.random.default_rng(3).normal(size=500)
    sizes = disc.attraction_sizes(fine, "auto", method, seed=1)
    if sizes.min() >= 2:
        assert len(np.unique(disc.discretise(fine, "auto", method, seed=1))) < 500
    else:
        with pytest.raises(SdcError, match="left a set of attraction of 1 value"):
            disc.discretise(fine, "auto", method, seed=1)


def test_kmd_penalised_falls_back_to_layers_when_no_penalty_gives_c_clusters():
    # four equally spaced values: SSE is 5, 1, 0.5, 0 for 1..4 clusters, not strictly convex at 3,
    # so no penalty makes 3 clusters strictly best
    u = np.array([0.0, 1.0, 2.0, 3.0])
    _, SW, Q = kmeans1d.prefix_sums(u)
    assert kmeans1d._full_search(SW, Q, 3, kmeans1d._cost(SW, Q, 0, 4), None) is None
    labels = disc.kmd_partition_sorted(u, 3, "penalised")
    assert labels.max() == 2 and sse_of_labels(u, labels) == 0.5


def test_the_compiled_draws_are_numpys_integers_stream():
    """RBD's bootstrap draws integers(0, g) in compiled code from the PCG64 state (issue 33 item 5: the
    draws through Numba's Generator made RBD take 109 s at 50,000 rows); the same stream as NumPy's
    rng.integers(0, g) one draw at a time, also for g = 1 (no draw) and g = 2^32, and the state goes
    back so that later draws continue it."""
    for seed in range(30):
        rng_numpy, rng_ours = np.random.default_rng(seed), np.random.default_rng(seed)
        sizes = np.random.default_rng(100 + seed).integers(1, 5000, 3000)
        sizes[::11] = 1
        sizes[::13] = 2**32
        want = [rng_numpy.integers(0, int(g)) for g in sizes]
        state = disc._pcg_state(rng_ours)
        got = [disc._pcg_below(state, int(g)) for g in sizes]
        disc._pcg_restore(rng_ours, state)
        assert got == want
        assert rng_ours.random() == rng_numpy.random()


def test_rbd_states_its_limit_and_refuses_beyond_it(monkeypatch):
    x = np.random.default_rng(9).normal(size=400)  # 10 groups of 40: 16,000 draws
    monkeypatch.setattr(disc, "RBD_DRAWS_MAX", 15_999)
    with pytest.raises(SdcError, match=r"^rbd_round: Algorithm 1 draws a bootstrap sample of its group's size for "
                                       r"every value: 16,000 random draws for these 400 values in 10 groups, more "
                                       r"than the limit 15,999 \(the draws cost about n\^2 / groups\); use groups := "
                                       r"11 or more, or kmd_round"):
        disc.rbd_round(x, 5, seed=1)
    monkeypatch.setattr(disc, "RBD_DRAWS_MAX", 16_000)
    assert len(np.unique(disc.rbd_round(x, 5, seed=1))) <= 5
    ties = np.repeat(np.arange(5.0), 80)  # heavily repeated: binomial counts, 400 * 5 draws at most
    monkeypatch.setattr(disc, "RBD_DRAWS_MAX", 2_000)
    assert len(np.unique(disc.rbd_round(ties, 3, seed=1))) <= 3
