"""Noise addition (Brand 2002): the numpy layer against a slow reference with the same draws, the
noise's variance and covariance checked statistically with bounds from their sampling
distributions, the exact power-of-two scaling, and the SQL forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from duckdb_sdc import SdcError
from duckdb_sdc.methods import noise_addition as na
from inputs import random_columns

# a check that is wrong with probability below 1e-9 per entry when the code is right (6 standard
# errors of a nearly normal estimate); the seeds are fixed, so the tests are deterministic
Z = 6.0


def reference_add_noise(x, level, seed):
    """x_i + sqrt(level) S z_i with S the sample sd by exact summation (math.fsum) and z the draws."""
    x = [float(v) for v in x]
    n = len(x)
    mean = math.fsum(x) / n
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in x) / (n - 1))
    z = na.normals(n, seed)
    return np.array([v + math.sqrt(level) * sd * float(z[i]) for i, v in enumerate(x)])


def test_draws_come_from_one_generator_per_block_of_2_to_the_20():
    count = na.BLOCK * 2 + 12345  # three blocks, two threads
    got = na.normals(count, 42)
    for b in range(3):
        gen = np.random.Generator(np.random.PCG64(np.random.SeedSequence(42, spawn_key=(b,))))
        want = gen.standard_normal(min(count, (b + 1) * na.BLOCK) - b * na.BLOCK)
        np.testing.assert_array_equal(got[b * na.BLOCK:(b + 1) * na.BLOCK], want)
    np.testing.assert_array_equal(na.normals(1000, 42), got[:1000])  # a prefix is the same draws


def test_add_noise_equals_the_reference_on_random_columns():
    for rng, x in random_columns(seed=1, count=600, max_n=60):
        if len(x) < 2:
            continue
        level = float(rng.choice([0.01, 0.1, 1.0, 2.5]))
        seed = int(rng.integers(0, 2**63))
        np.testing.assert_allclose(na.add_noise(x, level, seed=seed), reference_add_noise(x, level, seed),
                                   rtol=1e-12, atol=1e-12 * (1 + float(np.abs(x).max())), err_msg=f"x={x.tolist()}")


def test_level_scales_the_variance_not_the_sd():
    x = np.random.default_rng(2).lognormal(5, 1, 200_000)
    S = x.std(ddof=1)
    for level in (0.04, 0.25, 1.0):
        noise = na.add_noise(x, level, seed=3) - x
        ratio = noise.var(ddof=1) / (level * S * S)
        # the sample variance of N normal draws has relative sd sqrt(2 / N)
        assert abs(ratio - 1) <= Z * math.sqrt(2 / x.size), (level, ratio)
        assert abs(noise.mean()) <= Z * math.sqrt(level) * S / math.sqrt(x.size)


def _records():
    rng = np.random.default_rng(4)
    a = rng.normal(10, 3, 500)
    b = 0.8 * a + rng.normal(0, 1, 500)
    c = -2 * a + 0.5 * b + 1e6  # an exact linear combination: singular covariance
    return np.column_stack([a, b, c])


@pytest.mark.parametrize("correlated", [True, False])
def test_noise_covariance_is_level_times_the_data_covariance(correlated):
    X = _records()
    level = 0.3
    sigma = np.cov(X, rowvar=False, ddof=1)
    target = level * (sigma if correlated else np.diag(np.diag(sigma)))
    noise = np.concatenate([na.add_noise_multi(X, level, correlated=correlated, seed=s) - X for s in range(400)])
    N = noise.shape[0]
    estimate = noise.T @ noise / N  # the noise has mean 0: no centring
    diag = np.diag(level * sigma)
    for j in range(3):
        for k in range(3):
            # Var of the mean of e_j e_k for a Gaussian vector: (C_jk^2 + C_jj C_kk) / N
            tolerance = Z * math.sqrt((target[j, k] ** 2 + diag[j] * diag[k]) / N)
            assert abs(estimate[j, k] - target[j, k]) <= tolerance, (j, k, estimate[j, k], target[j, k])


def test_correlated_noise_keeps_the_correlations_and_is_reproducible():
    X = _records()[:, :2]
    out = na.add_noise_multi(X, 0.5, seed=9)
    np.testing.assert_array_equal(out, na.add_noise_multi(X, 0.5, seed=9))
    assert not np.array_equal(out, na.add_noise_multi(X, 0.5, seed=10))
    r_before = np.corrcoef(X, rowvar=False)[0, 1]
    r_after = np.corrcoef(out, rowvar=False)[0, 1]
    r_independent = np.corrcoef(na.add_noise_multi(X, 0.5, correlated=False, seed=9), rowvar=False)[0, 1]
    assert abs(r_after - r_before) < 0.05 < abs(r_independent - r_before)


def test_noise_root_squares_to_the_covariance_and_has_a_fixed_sign():
    rng = np.random.default_rng(5)
    for p in (1, 2, 4):
        A = rng.normal(size=(30, p))
        cov = np.cov(A, rowvar=False).reshape(p, p)
        R = na.noise_root(cov)
        np.testing.assert_allclose(R @ R.T, cov, atol=1e-12 * np.abs(cov).max())
        np.testing.assert_array_equal(R, na.noise_root(cov))
    assert na.noise_root(np.array([[4.0]])).tolist() == [[2.0]]


@pytest.mark.parametrize("k", [-1000, -600, 600, 1000])
def test_power_of_two_scaling_scales_the_noise_exactly(k):
    x = np.random.default_rng(6).normal(3, 2, 1000)
    np.testing.assert_array_equal(na.add_noise(np.ldexp(x, k), 0.2, seed=1), np.ldexp(na.add_noise(x, 0.2, seed=1), k))
    X = _records()
    np.testing.assert_array_equal(na.add_noise_multi(np.ldexp(X, k), 0.2, seed=1),
                                  np.ldexp(na.add_noise_multi(X, 0.2, seed=1), k))


def test_extreme_values_do_not_overflow_or_refuse_clearly():
    x = np.array([1.7e308, -1.7e308, 1.0e308, 0.0])
    out = na.add_noise(x, 1e-6, seed=1)
    assert np.isfinite(out).all()
    with pytest.raises(SdcError, match="add_noise: a noisy value is beyond the float64 range"):
        na.add_noise(x, 100.0, seed=1)
    tiny = np.array([1e-310, 3e-310, 2e-310])
    assert np.isfinite(na.add_noise(tiny, 0.1, seed=1)).all()
    assert (na.add_noise(tiny, 0.1, seed=1) != tiny).any()


def test_a_constant_column_gets_no_noise():
    np.testing.assert_array_equal(na.add_noise([4.0, 4.0, 4.0], 0.5, seed=1), [4.0, 4.0, 4.0])


@pytest.mark.parametrize("call, message", [
    (lambda: na.add_noise([1.0, 2.0], 0), "add_noise: level must be a finite number > 0, got 0"),
    (lambda: na.add_noise([1.0, 2.0], -1), "add_noise: level must be a finite number > 0, got -1"),
    (lambda: na.add_noise([1.0, 2.0], None), "add_noise: level must not be NULL"),
    (lambda: na.add_noise([1.0, 2.0], 0.1, seed=-1), "add_noise: seed must be an integer in"),
    (lambda: na.add_noise([1.0, np.nan], 0.1), "add_noise: x contains nan"),
    (lambda: na.add_noise([1.0], 0.1), "add_noise: needs at least 2 values"),
    (lambda: na.add_noise_multi([[1.0, 2.0]], 0.1), "add_noise_multi: needs at least 2 values"),
    (lambda: na.add_noise_multi([1.0, 2.0], 0.1), "add_noise_multi: X must be an n x p array"),
    (lambda: na.add_noise_multi([[1.0, 2.0], [3.0, 4.0]], 0.1, correlated="maybe"),
     "add_noise_multi: correlated must be true or false, got 'maybe'"),
])
def test_bad_input_is_refused(call, message):
    with pytest.raises(SdcError, match=message):
        call()


# --- SQL --------------------------------------------------------------------------------------


def test_sql_list_form_matches_numpy_and_keeps_nulls(con):
    got = con.execute("SELECT add_noise([3, NULL, 1, 4, 1, NULL, 5]::INTEGER[], 0.2, seed := 11)").fetchone()[0]
    want = na.add_noise([3.0, 1, 4, 1, 5], 0.2, seed=11)
    assert got[1] is None and got[5] is None
    np.testing.assert_array_equal([v for v in got if v is not None], want)
    assert con.execute("SELECT add_noise([NULL, NULL]::DOUBLE[], 0.2)").fetchone()[0] == [None, None]
    assert con.execute("SELECT add_noise(NULL::DOUBLE[], 0.2)").fetchone()[0] is None


def test_sql_seeded_noise_repeats_and_unseeded_differs(con):
    one = con.execute("SELECT add_noise(list(x), 0.3, seed := 5) FROM range(100) t(x)").fetchone()[0]
    two = con.execute("SELECT add_noise(list(x), 0.3, seed := 5) FROM range(100) t(x)").fetchone()[0]
    assert one == two
    a = con.execute("SELECT add_noise(list(x), 0.3) FROM range(100) t(x)").fetchone()[0]
    b = con.execute("SELECT add_noise(list(x), 0.3) FROM range(100) t(x)").fetchone()[0]
    assert a != b


def test_sql_table_forms_mask_each_stratum_with_its_own_spread(con):
    con.execute("CREATE TABLE t AS SELECT i AS id, i % 2 AS g, CASE WHEN i % 2 = 0 THEN i ELSE 1000 * i END AS x, "
                "i * 1.0 AS y FROM range(400) r(i)")
    out = con.execute("SELECT g, stddev_samp(n.x - t.x) / stddev_samp(t.x) FROM add_noise_table('t', 'x', 0.25, "
                      "seed := 1, strata := 'g') n JOIN t USING (id, g) GROUP BY g ORDER BY g").fetchall()
    for _, ratio in out:  # sqrt(0.25) = 0.5 of each stratum's own sd; 200 draws: relative sd 1/20
        assert abs(ratio - 0.5) < 0.5 * Z * math.sqrt(1 / 400)
    cols = con.execute("SELECT * FROM add_noise_multi_table('t', ['x', 'y'], 0.1, seed := 2) LIMIT 0").description
    assert [c[0] for c in cols] == ["id", "g", "x", "y"]


def test_sql_multi_form_keeps_incomplete_records_null(con):
    got = con.execute("SELECT add_noise_multi([[1, 2], NULL, [2, NULL], [4, 9], [5, 1]], 0.5, seed := 3)").fetchone()[0]
    assert got[1] is None and got[2] is None
    want = na.add_noise_multi([[1.0, 2], [4, 9], [5, 1]], 0.5, seed=3)
    np.testing.assert_array_equal([got[0], got[3], got[4]], want)


def test_sql_errors_name_the_function(con):
    with pytest.raises(Exception, match="add_noise: level must be a finite number > 0, got 0"):
        con.execute("SELECT add_noise([1, 2, 3], 0)").fetchall()
    with pytest.raises(Exception, match="add_noise: needs at least 2 values"):
        con.execute("SELECT add_noise([1], 0.1)").fetchall()
