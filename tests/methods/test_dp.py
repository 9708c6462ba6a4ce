"""DP / iDP releases on microaggregated data (numpy layer): sensitivities against brute force, the
noise law, the sampler's exactness, shared draws, clamping, reproducibility, bad input."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from duckdb_sdc import SdcError
from duckdb_sdc.methods import dp, noise, ranking_partition
from reference_dp import (
    candidate_values,
    cbls_preprocessed_sum,
    kolmogorov_pvalue,
    laplace_cdf,
    max_change,
    mean,
    ranking_centroids,
    ranking_sizes,
)


def _random_cluster(rng, lo=-20, hi=20):
    """Sizes 3..9; integer values from a small range (many ties) or a wide one."""
    m = int(rng.integers(3, 10))
    width = min(int(rng.choice([3, 8, 40])), hi - lo)
    base = int(rng.integers(lo, hi - width + 1))
    return (base + rng.integers(0, width + 1, m)).astype(float)


# --- sensitivities against brute force ---------------------------------------------------------


def test_cbls_sensitivity_equals_brute_force_over_single_record_changes():
    rng = np.random.default_rng(11)
    for _ in range(120):
        x = _random_cluster(rng)
        m = len(x)
        brute = max_change(x.tolist(), cbls_preprocessed_sum, candidate_values(x.tolist())) / m
        got = dp.idp_sensitivity(x, m, "idp_cbls")
        assert np.all(got == got[0])
        assert got[0] == pytest.approx(float(brute), rel=1e-12, abs=1e-12), (x, brute)


def test_cbls_sensitivity_formula_as_written_in_the_paper():
    x = np.array([1.0, 2.0, 2.0, 5.0, 9.0, 30.0])  # x(1..6)
    up = 2 * 30 + 2 - 2 * 2 - 9
    down = 2 * 9 + 2 - 2 * 1 - 5
    assert dp.idp_sensitivity(x, 6, "idp_cbls")[0] == max(up, down) / 6
    assert dp.idp_sensitivity([4.0, 4.0, 4.0, 4.0], 4, "idp_cbls").tolist() == [0.0] * 4
    # m = 3: the pre-processed mean is the median
    assert dp.idp_sensitivity([1.0, 5.0, 6.0], 3, "idp_cbls")[0] == max(3 * (6 - 5), 3 * (5 - 1)) / 3


def test_ls_sensitivity_equals_brute_force_within_the_domain():
    rng = np.random.default_rng(12)
    for _ in range(80):
        x = _random_cluster(rng, -10, 10)
        lb, ub = -10 - float(rng.integers(0, 5)), 10 + float(rng.integers(0, 5))
        m = len(x)
        brute = max_change(x.tolist(), mean, candidate_values(x.tolist(), lb, ub))
        got = dp.idp_sensitivity(x, m, "idp_ls", lb, ub)
        assert got[0] == pytest.approx(float(brute), rel=1e-12), (x, lb, ub)


def test_um_sensitivity_is_the_largest_local_sensitivity_over_the_domain():
    rng = np.random.default_rng(13)
    lb, ub = -10.0, 10.0
    for _ in range(60):
        x = _random_cluster(rng, -10, 10)
        m = len(x)
        gs = dp.idp_sensitivity(x, m, "dp_um", lb, ub)[0]
        assert gs == (ub - lb) / m
        assert float(max_change(x.tolist(), mean, candidate_values(x.tolist(), lb, ub))) <= gs
        x[0] = lb  # a cluster holding a bound attains it
        assert float(max_change(x.tolist(), mean, candidate_values(x.tolist(), lb, ub))) == pytest.approx(gs)


def test_dp_um_privacy_loss_stays_within_epsilon_when_the_change_reclusters():
    """DP-UM is DP without assuming a fixed clustering: after any single-record change, with the
    clusters recomputed, sum over clusters |change of centroid| / GS_C <= 1 (loss <= epsilon)."""
    rng = np.random.default_rng(14)
    lb, ub = 0, 20
    for _ in range(40):
        n = int(rng.integers(4, 16))
        k = int(rng.integers(1, min(n, 5) + 1))
        x = rng.integers(lb, ub + 1, n).tolist()
        base = ranking_centroids(x, k)
        gs = [Fraction(ub - lb, m) for m in ranking_sizes(n, k)]
        worst = Fraction(0)
        for i in range(n):
            for y in range(lb, ub + 1):
                changed = list(x)
                changed[i] = y
                moved = ranking_centroids(changed, k)
                worst = max(worst, sum(abs(a - b) / s for a, b, s in zip(moved, base, gs)))
        assert worst <= 1


def test_idp_cbls_assumes_a_fixed_clustering():
    """With the clusters recomputed after the change, noise scaled to the local sensitivities of
    the actual data can lose more than epsilon: the documented guarantee is for the fixed
    clustering (the changed record stays in its cluster)."""
    x = [0, 1, 2, 3, 4, 5, 6, 7, 8]
    k = 3

    def centroids(values):
        s = sorted(values)
        return [cbls_preprocessed_sum(s[i:i + k]) / k for i in range(0, len(s), k)]

    sens = [Fraction(float(s)) for s in dp.idp_sensitivity(np.array(x, float), k, "idp_cbls")[::k]]
    changed = [100] + x[1:]  # the smallest record jumps to the top: every cluster shifts
    loss = sum(abs(a - b) / s for a, b, s in zip(centroids(changed), centroids(x), sens))
    assert loss > 1


def test_vectorised_sensitivities_equal_the_per_cluster_reference():
    rng = np.random.default_rng(15)
    for trial in range(60):
        n = int(rng.integers(3, 60))
        x = rng.integers(0, max(2, n // 3), n).astype(float) if trial % 2 else rng.normal(0, 100, n)
        k = int(rng.integers(3, min(n, 8) + 1))
        labels = ranking_partition(x, k)
        lb, ub = float(x.min() - 5), float(x.max() + 5)
        for mechanism in ("idp_cbls", "idp_ls", "dp_um"):
            got = dp.idp_sensitivity(x, k, mechanism, lb, ub)
            for g in range(labels.max() + 1):
                c = np.sort(x[labels == g])
                m = len(c)
                if mechanism == "idp_cbls":
                    expected = max(2 * c[-1] + c[2] - 2 * c[1] - c[-2], 2 * c[-2] + c[1] - 2 * c[0] - c[-3]) / m
                elif mechanism == "idp_ls":
                    expected = max(ub - c[0], c[-1] - lb) / m
                else:
                    expected = (ub - lb) / m
                np.testing.assert_allclose(got[labels == g], expected, rtol=1e-12, atol=1e-9)
        np.testing.assert_array_equal(dp.idp_sensitivity(x, k, "dp_laplace", lb, ub), ub - lb)


# --- releases ----------------------------------------------------------------------------------


def test_members_of_a_cluster_share_one_draw_and_clusters_draw_independently():
    rng = np.random.default_rng(16)
    x = rng.lognormal(8, 1, 1001)
    for mechanism in ("idp_cbls", "idp_ls", "dp_um"):
        out = dp.release(x, mechanism, 7, 1.0, 0, 1e6)
        labels = ranking_partition(x, 7)
        per_cluster = []
        for g in range(labels.max() + 1):
            assert len(set(out[labels == g].tolist())) == 1
            per_cluster.append(out[labels == g][0])
        inside = [v for v in per_cluster if 0 < v < 1e6]  # clamped ones coincide at a bound
        assert len(inside) > 10 and len(set(inside)) == len(inside)


def test_noise_follows_the_laplace_law_with_the_stated_scale():
    """Kolmogorov-Smirnov at a fixed seed: (release - pre-processed mean) / (sensitivity / eps) is
    Laplace(0, 1); the same statistic with a 15% wrong scale is rejected (the test has power)."""
    rng = np.random.default_rng(17)
    x = rng.normal(0, 1000, 60_000)
    k, eps = 3, 0.7
    out = dp.idp_cbls(x, k, eps, seed=2024)
    first = np.argsort(x, kind="stable")[1::3]  # n = 3 * 20000: clusters are sorted triples
    centre = np.sort(x)[1::3]  # pre-processed mean of three values: the median
    scale = dp.idp_sensitivity(x, k, "idp_cbls")[first] / eps
    z = (out[first] - centre) / scale
    assert kolmogorov_pvalue(z, laplace_cdf) > 0.01
    assert kolmogorov_pvalue(z, lambda t: laplace_cdf(t, 1.15)) < 1e-6
    assert kolmogorov_pvalue(z, lambda t: laplace_cdf(t, 0.85)) < 1e-6


def test_laplace_mechanism_law_over_many_scales_and_magnitudes():
    rng = np.random.default_rng(18)
    n = 40_000
    values = rng.normal(0, 1, n) * 10.0 ** rng.integers(-3, 9, n)
    sens = np.abs(values) * 10.0 ** rng.uniform(-3, 1, n) + 1e-3
    for eps in (0.01, 1.0, 50.0):
        out = noise.laplace_mechanism(values, sens, eps, np.abs(values), seed=7)
        z = (out - values) / (sens / eps)
        assert kolmogorov_pvalue(z, laplace_cdf) > 0.01, eps


def test_discrete_laplace_has_its_exact_law_on_a_coarse_grid():
    """For j = 0, 1, 2 the grid is coarse enough to compare every frequency with
    P(z) = (1 - q) / (1 + q) q^|z|, q = 2^(-1/2^j): a chi-square test over |z| <= 12."""
    for j, keyed in ((0, False), (1, True), (2, False), (2, True)):
        n = 200_000
        if keyed:  # seeded: one stream per counter, streams of consecutive counters side by side
            z = noise.discrete_laplace_keyed(100 + j, np.arange(n), j)
        else:  # operating-system randomness
            z = noise.discrete_laplace(n, j)
        q = 2.0 ** (-1 / 2**j)
        support = np.arange(-12, 13)
        p = (1 - q) / (1 + q) * q ** np.abs(support)
        counts = np.array([(z == s).sum() for s in support])
        expected = n * p
        chi2 = float(np.sum((counts - expected) ** 2 / expected))
        tail_obs = n - counts.sum()
        tail_exp = n * (1 - p.sum())
        chi2 += (tail_obs - tail_exp) ** 2 / tail_exp
        assert chi2 < 60, (j, chi2)  # 25 degrees of freedom: p < 1e-4 above 60
        assert abs(z.mean()) < 5 * z.std() / math.sqrt(n)


def test_thresholds_are_the_bit_probabilities():
    for r in range(noise.J_MAX):
        words = noise.THRESHOLDS[r]
        value = sum(int(w) * 2.0 ** (-64 * (t + 1)) for t, w in enumerate(words))
        assert value == pytest.approx(1 / (1 + 2 ** (2.0 ** -(r + 1))), rel=1e-15)


def _stream(*words):
    return np.array(list(words) + [0], dtype=np.uint64)


def test_bernoulli_decides_at_the_first_differing_bit_even_past_the_first_word():
    table = noise.THRESHOLDS
    p0 = int(table[0, 0])
    below = _stream(p0 - 1, 0)  # uniform below p: success
    above = _stream(p0 + 1, 0)
    key = np.uint64(0)

    def bernoulli(buf):
        return noise._bernoulli(buf, key, False, 0, table, 0)

    assert bernoulli(below)[0] == 1
    assert bernoulli(above)[0] == 0
    p1 = int(table[0, 1])
    assert bernoulli(_stream(p0, p1 - 1, 0))[0] == 1
    assert bernoulli(_stream(p0, p1 + 1, 0))[0] == 0
    # the position advances past the deciding bit only
    bit, pos = bernoulli(_stream(p0 ^ (1 << 60), 0))
    assert pos == 4
    tie = _stream(*[int(w) for w in table[0]], 0)
    assert bernoulli(tie)[0] == -1


def test_a_256_bit_tie_refuses_instead_of_guessing():
    table = noise.THRESHOLDS
    j = 1
    # sign bit 0, then the 256 bits of the only threshold (row 0) shifted by one bit
    bits = "0" + "".join(format(int(w), "064b") for w in table[0])
    bits += "0" * (64 * 40 - len(bits))
    words = [int(bits[i:i + 64], 2) for i in range(0, len(bits), 64)]

    def fake(n):
        return np.array((words + [0] * n)[:max(n, len(words))], dtype=np.uint64)

    with pytest.raises(RuntimeError, match="256 random bits agreed"):
        noise.discrete_laplace(1, j, fake)


def test_grid_keeps_neighbouring_values_within_the_privacy_bound():
    """The shift in grid steps between two computed values at most `sensitivity` apart never
    exceeds N - 2, also for huge values with a tiny sensitivity, and the grid index stays exact."""
    rng = np.random.default_rng(19)
    for eps in (1e-4, 0.05, 1.0, 30.0):
        c = rng.normal(0, 1, 20_000) * 10.0 ** rng.integers(-5, 15, 20_000)
        sens = np.abs(c) * 10.0 ** rng.uniform(-17, 0, c.shape[0])
        step, j, n_bound = noise.grid_parameters(sens, eps, np.abs(c) * 1.5)
        other = c + sens * rng.choice([-1.0, 1.0], c.shape[0])
        shift = np.abs(np.rint(c / step) - np.rint(other / step))
        assert shift.max() <= n_bound - 2
        assert np.abs(c / step).max() < 2.0**51
        assert n_bound <= eps * 2.0**j / math.log(2)
        scale = step * 2.0**j / math.log(2)  # the effective Laplace scale
        assert np.all(scale >= sens / eps)
        relative = scale / (sens / eps) - 1
        small = sens > np.abs(c) * 1e-6
        assert relative[small].max() < 1e-5


def test_released_values_lie_on_the_grid():
    values = np.array([0.1, 1 / 3, 2.5e6, -7.25])
    sens = np.array([0.05, 0.2, 10.0, 1.0])
    out = noise.laplace_mechanism(values, sens, 0.5, np.abs(values), seed=3)
    step, _, _ = noise.grid_parameters(sens, 0.5, np.abs(values))
    steps = out / step
    np.testing.assert_allclose(steps, np.rint(steps), rtol=0, atol=1e-6)


def test_zero_sensitivity_clusters_are_released_exactly():
    x = np.array([3.0, 3.0, 3.0, 3.0, 10.0, 11.0, 12.0, 13.0])
    out = dp.idp_cbls(x, 4, 0.1)  # clusters [3, 3, 3, 3] and [10, 11, 12, 13]
    assert out[:4].tolist() == [3.0] * 4
    assert out[4] == out[5] == out[6] == out[7] != 11.5


def test_outputs_are_clamped_and_inputs_outside_the_domain_are_clamped_first():
    rng = np.random.default_rng(20)
    x = rng.uniform(0, 100, 500)
    x[:5] = [-50, 1e9, 150, -1, 101]
    for mechanism in dp.MECHANISMS:
        out = dp.release(x, mechanism, 5, 0.05, 0, 100, seed=1)
        assert out.min() >= 0 and out.max() <= 100
        assert (out == 0).any() and (out == 100).any()  # small epsilon: many hit the bounds
        same = dp.release(np.clip(x, 0, 100), mechanism, 5, 0.05, 0, 100, seed=1)
        np.testing.assert_array_equal(out, same)
    one_sided = dp.idp_cbls(x, 5, 0.01, lb=0, seed=1)
    assert one_sided.min() >= 0 and one_sided.max() > 100


def test_seed_reproduces_and_no_seed_differs():
    x = np.random.default_rng(21).normal(50, 10, 300)
    for mechanism in dp.MECHANISMS:
        a = dp.release(x, mechanism, 3, 1.0, 0, 100, seed=99)
        b = dp.release(x, mechanism, 3, 1.0, 0, 100, seed=99)
        c = dp.release(x, mechanism, 3, 1.0, 0, 100, seed=100)
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)
        d = dp.release(x, mechanism, 3, 1.0, 0, 100)
        e = dp.release(x, mechanism, 3, 1.0, 0, 100)
        assert not np.array_equal(d, e)


def test_cbls_is_orders_of_magnitude_more_accurate_on_skewed_data():
    x = np.random.default_rng(22).lognormal(10, 1, 2000)
    ub = float(x.max())
    sse = {m: np.mean([np.sum((dp.release(x, m, 10, 0.1, 0, ub, seed=s) - x) ** 2) for s in range(5)])
           for m in dp.MECHANISMS}
    assert sse["idp_cbls"] * 100 < sse["dp_um"] < sse["dp_laplace"]
    assert sse["idp_cbls"] * 100 < sse["idp_ls"]


@pytest.mark.parametrize("call, message", [
    (lambda: dp.idp_cbls([1, 2, 3], 3, 0), "idp_cbls: epsilon must be a finite number > 0, got 0"),
    (lambda: dp.idp_cbls([1, 2, 3], 3, -1), "idp_cbls: epsilon must be a finite number > 0, got -1"),
    (lambda: dp.idp_cbls([1, 2, 3, 4], 2, 1), "idp_cbls: k must be >= 3"),
    (lambda: dp.idp_cbls([1, 2], 3, 1), "idp_cbls: k = 3 is larger than the number of non-NULL values (2)"),
    (lambda: dp.dp_um([1, 2, 3], 1, 1, 5, 5), "dp_um: lb = 5 must be smaller than ub = 5"),
    (lambda: dp.idp_cbls([1, 2, 3], 3, 1, 9, 2), "idp_cbls: lb = 9 must be smaller than ub = 2"),
    (lambda: dp.idp_ls([1, 2, 3], 3, 1, None, 5), "idp_ls: lb must not be NULL (the sensitivity is defined by the domain"),
    (lambda: dp.dp_laplace([1, 2, 3], 1, 0, None), "dp_laplace: ub must not be NULL (the sensitivity is defined by the domain"),
    (lambda: dp.dp_um([1, 2, 3], 3, 1, 0, float("inf")), "dp_um: ub must be a finite number, got inf"),
    (lambda: dp.dp_um([1, 2, 3], 3, 1, 0, 9, seed=-1), "dp_um: seed must be an integer in [0, 2^63), got -1"),
    (lambda: dp.dp_um([1, 2, 3], 3, 1, 0, 9, seed=1.5), "dp_um: seed must be an integer, got 1.5"),
    (lambda: dp.idp_cbls([1, 2, float("nan")], 3, 1), "idp_cbls: x contains nan"),
    (lambda: dp.idp_sensitivity([1, 2, 3], 3, "snap"), "idp_sensitivity: mechanism must be one of"),
    (lambda: dp.idp_cbls([1, 2, 3], 3, 1e-13), "idp_cbls: epsilon = 1e-13 is outside the sampler's range"),
    (lambda: dp.split_epsilon(1, ["a", "b"], [1]), "split_epsilon: split must have one weight per column (2 columns)"),
    (lambda: dp.split_epsilon(1, ["a", "b"], [1, 0]), "split_epsilon: split weight must be a finite number > 0, got 0"),
])
def test_bad_input_gives_a_clear_error(call, message):
    with pytest.raises(SdcError) as info:
        call()
    assert message in str(info.value)


def test_split_epsilon_and_multi_attribute_release():
    assert dp.split_epsilon(0.9, ["a", "b", "c"]) == pytest.approx({"a": 0.3, "b": 0.3, "c": 0.3})
    assert dp.split_epsilon(1.0, ["a", "b"], [1, 3]) == pytest.approx({"a": 0.25, "b": 0.75})
    assert dp.split_epsilon(1.0, ["a", "b"], {"b": 1, "a": 1}) == pytest.approx({"a": 0.5, "b": 0.5})
    rng = np.random.default_rng(23)
    cols = {"a": rng.uniform(0, 10, 50), "b": rng.uniform(0, 10, 50)}
    out, budgets = dp.dp_release(cols, "idp_cbls", 5, 1.0, split=[1, 3], lb=0, ub={"a": 10, "b": 10}, seed=5)
    assert budgets == pytest.approx({"a": 0.25, "b": 0.75})
    again, _ = dp.dp_release(cols, "idp_cbls", 5, 1.0, split=[1, 3], lb=0, ub=10, seed=5)
    for name in cols:
        np.testing.assert_array_equal(out[name], again[name])
    assert not np.array_equal(out["a"] - cols["a"], out["b"] - cols["b"])


# ---------------------------------------------------------------------------------------------
# scale, underflow and counter-based seeds (issue 13 leak 10, issue 16)


@pytest.mark.parametrize("mechanism", dp.MECHANISMS)
def test_noise_never_vanishes_with_an_underflowing_sensitivity(mechanism):
    x = np.array([1e-320, 2e-320, 3e-320])
    for _ in range(20):  # before: the sensitivity 1e-318 underflowed and every call returned x
        out = dp.release(x, mechanism, 3, 0.01, 0, 1e-318)
        assert not np.array_equal(out, x)
        assert out.min() >= 0 and out.max() <= 1e-318


@pytest.mark.parametrize("mechanism", dp.MECHANISMS)
@pytest.mark.parametrize("power", [1000, -1000, 900, -1020])
def test_extreme_scales_give_the_rescaled_release_bit_for_bit(mechanism, power):
    rng = np.random.default_rng(abs(power))
    x = np.round(rng.lognormal(3, 1, 200), 3)
    x[:3] = [0.0, -5.0, 300.0]  # clamped into [0, 200]
    base = dp.release(x, mechanism, 4, 0.5, 0, 200, seed=11)
    got = dp.release(np.ldexp(x, power), mechanism, 4, 0.5, 0, np.ldexp(200.0, power), seed=11)
    expected = np.ldexp(base, power)
    normal = np.abs(expected) >= 2.0**-1022  # below, the scaled release is rounded (subnormal)
    np.testing.assert_array_equal(got[normal], expected[normal])
    assert np.isfinite(got).all()


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_idp_cbls_on_data_near_the_largest_double_returns_the_rescaled_answer(sign):
    rng = np.random.default_rng(5)
    x = sign * rng.uniform(0.1, 1.0, 300) * 1.7e308  # cluster sums overflowed to inf before
    got = dp.idp_cbls(x, 3, 1.0, seed=3)
    small = dp.idp_cbls(np.ldexp(x, -600), 3, 1.0, seed=3)
    big = np.finfo(np.float64).max
    with np.errstate(over="ignore"):
        expected = np.clip(np.ldexp(small, 600), -big, big)  # clamped to the finite range
    assert np.isfinite(got).all()
    np.testing.assert_array_equal(got, expected)


def test_a_domain_as_wide_as_the_doubles_is_accepted():
    # before: "sensitivity must be finite" (ub - lb overflowed), naming neither lb nor ub
    x = np.array([1.0, -3e307, 5e307, 2.0])
    out = dp.dp_laplace(x, 1.0, -1e308, 1e308, seed=1)
    expected = np.ldexp(dp.dp_laplace(np.ldexp(x, -100), 1.0, np.ldexp(-1e308, -100), np.ldexp(1e308, -100),
                                      seed=1), 100)
    np.testing.assert_array_equal(out, expected)
    assert np.abs(out).max() <= 1e308


def test_the_sampler_refuses_a_grid_finer_than_the_smallest_normal_double():
    with pytest.raises(SdcError, match=r"laplace_mechanism: the noise scale underflows"):
        noise.laplace_mechanism(np.array([1e-320]), np.array([1e-320]), 1.0, 1e-320)
    with pytest.raises(SdcError, match=r"laplace_mechanism: a noisy value exceeds the largest double"):
        noise.laplace_mechanism(np.array([1.7e308] * 50), np.array([1e308] * 50), 0.01, 1.8e308, seed=1)


def test_seeded_noise_of_draw_t_is_a_function_of_the_seed_and_t_only():
    all_draws = noise.discrete_laplace_keyed(42, np.arange(1000), 20)
    some = noise.discrete_laplace_keyed(42, [999, 3, 500], 20)
    assert some.tolist() == [all_draws[999], all_draws[3], all_draws[500]]
    assert not np.array_equal(noise.discrete_laplace_keyed(43, np.arange(1000), 20), all_draws)
    values = np.arange(10.0)
    sens = np.ones(10)
    full = noise.laplace_mechanism(values, sens, 1.0, 10.0, seed=7)
    part = noise.laplace_mechanism(values[[2, 7]], sens[[2, 7]], 1.0, 10.0, seed=7, counters=[2, 7])
    assert part.tolist() == full[[2, 7]].tolist()
    # dp_laplace: record t's noise depends on (seed, t); a prefix of the column gets the same noise
    x = np.random.default_rng(1).uniform(0, 100, 300)
    np.testing.assert_array_equal(dp.dp_laplace(x[:40], 1.0, 0, 100, seed=9), dp.dp_laplace(x, 1.0, 0, 100, seed=9)[:40])


def test_cluster_t_draws_its_own_noise_whatever_comes_before():
    """The noise of cluster t is drawn from (seed, t), not from the position of its draw in one stream:
    a first cluster that needs no noise (all equal: sensitivity 0) or needs some leaves the second
    cluster's noise alone."""
    rest = [10.0, 11.0, 13.0, 20.0, 21.0, 25.0]
    constant = dp.idp_cbls(np.array([5.0, 5.0, 5.0] + rest), 3, 1.0, seed=4)
    varied = dp.idp_cbls(np.array([4.0, 5.0, 6.0] + rest), 3, 1.0, seed=4)
    assert constant[0] == 5.0 and varied[0] != 5.0
    np.testing.assert_array_equal(constant[3:], varied[3:])


def test_dp_um_centroids_are_the_per_record_means_in_rank_order():
    rng = np.random.default_rng(12)
    x = rng.uniform(0, 1000, 103)
    sizes, means = dp.dp_um_centroids(x, 10, 1.0, 0, 1000, seed=6)
    assert sizes.tolist() == [10] * 9 + [13]  # a function of n and k only
    per_record = dp.dp_um(x, 10, 1.0, 0, 1000, seed=6)
    ranked = per_record[np.argsort(x, kind="stable")]
    np.testing.assert_array_equal(ranked, np.repeat(means, sizes))
    with pytest.raises(SdcError, match=r"^dp_um_centroids: lb must not be NULL \(the sensitivity is defined by the domain \[lb, ub\]"):
        dp.dp_um_centroids(x, 10, 1.0, None, 1000)
