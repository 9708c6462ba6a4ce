"""Sampling weights: weighted representatives (duckdb_sdc.methods.weights) against exact-rational slow
references on random inputs, equal weights bit for bit, scale invariance of data and weights, the
weighted median's tie rule, and the SQL list and table forms."""

from __future__ import annotations

from fractions import Fraction

import re

import duckdb
import numpy as np
import pytest

import duckdb_sdc
from duckdb_sdc import masking, methods
from duckdb_sdc._validate import SdcError
from duckdb_sdc.methods import multivariate
from duckdb_sdc.methods import weights as W

# ---------------------------------------------------------------------------------------------
# slow references (exact rational arithmetic)


def ref_weighted_mean(v, w) -> Fraction:
    return sum(Fraction(a) * Fraction(b) for a, b in zip(v, w)) / sum(Fraction(b) for b in w)


def ref_weighted_median(v, w) -> Fraction:
    """The smallest value where the cumulative weight reaches half the total; the midpoint with the
    next value when it is exactly half."""
    pairs = sorted(zip(v, w), key=lambda p: p[0])
    total = sum(Fraction(b) for _, b in pairs)
    left = Fraction(0)
    for j, (a, b) in enumerate(pairs):
        left += Fraction(b)
        if 2 * left >= total:
            if 2 * left == total and j + 1 < len(pairs):
                return (Fraction(a) + Fraction(pairs[j + 1][0])) / 2
            return Fraction(a)
    raise AssertionError("unreachable")


def ref_represent(x, w, labels, rep):
    out = np.empty(len(x))
    for g in set(labels.tolist()):
        idx = labels == g
        r = ref_weighted_mean(x[idx], w[idx]) if rep == "mean" else ref_weighted_median(x[idx], w[idx])
        out[idx] = float(r)
    return out


def _close(got, expected, x):
    tol = 1e-13 * max(1.0, float(np.max(np.abs(x))))
    assert np.all(np.abs(got - expected) <= tol), (got, expected)


# ---------------------------------------------------------------------------------------------
# weighted representatives against the references


@pytest.mark.parametrize("method", W.MICRO_METHODS)
def test_weighted_microaggregation_is_the_weighted_mean_or_median_of_the_unweighted_groups(method):
    rng = np.random.default_rng(17)
    for _ in range(60):
        n = int(rng.integers(2, 30))
        k = int(rng.integers(2, n + 1))
        x = rng.integers(-15, 15, n).astype(float)  # ties
        w = rng.integers(1, 6, n).astype(float)  # integer weights: the float sums are exact
        labels = methods.partition(x, k, method)
        for rep in ("mean", "median"):
            got = W.microaggregate_weighted(x, w, k, method, rep)
            _close(got, ref_represent(x, w, labels, rep), x)


@pytest.mark.parametrize("method", W.DISC_METHODS)
def test_weighted_discretisation_points_are_weighted_over_the_unweighted_intervals(method):
    rng = np.random.default_rng(23)
    for _ in range(60):
        n = int(rng.integers(1, 30))
        c = int(rng.integers(1, 6))
        x = rng.integers(-15, 15, n).astype(float)
        w = rng.integers(1, 6, n).astype(float)
        labels = methods.discretise_labels(x, c, method)
        for rep in ("mean", "median"):
            _close(W.discretise_weighted(x, w, c, method, rep), ref_represent(x, w, labels, rep), x)
        # the midpoint does not depend on the values: the unweighted result
        assert np.array_equal(W.discretise_weighted(x, w, c, method, "midpoint"),
                              methods.discretise(x, c, method, "midpoint"))


def test_weighted_median_tie_rule_on_hand_cases():
    # exactly half the weight at or below 2 (1 + 1 of 4): the midpoint of 2 and 3
    assert W.microaggregate_weighted([1.0, 2.0, 3.0], [1, 1, 2], 3, "ranking", "median").tolist() == [2.5] * 3
    assert W.microaggregate_weighted([1.0, 2.0, 3.0], [1, 2, 1], 3, "ranking", "median").tolist() == [2.0] * 3
    assert W.microaggregate_weighted([1.0, 2.0, 3.0], [3, 1, 1], 3, "ranking", "median").tolist() == [1.0] * 3
    # an even number of equal weights: the ordinary median
    assert W.microaggregate_weighted([4.0, 1.0, 3.0, 2.0], [5, 5, 5, 5.0], 4, "ranking", "median").tolist() == [2.5] * 4
    # non-integer weights that split exactly in half: 0.25 + 0.25 = 0.5 = 0.125 + 0.375
    got = W.microaggregate_weighted([1.0, 2.0, 3.0, 4.0], [0.25, 0.25, 0.125, 0.375], 4, "ranking", "median")
    assert got.tolist() == [2.5] * 4
    # the tie also holds when values repeat: half the weight at or below 5
    got = W.microaggregate_weighted([5.0, 5.0, 7.0, 9.0], [1, 1, 1, 1], 4, "ranking", "median")
    assert got.tolist() == [6.0] * 4


def test_weighted_multivariate_mdav_centroids_are_weighted_means_of_the_unweighted_clusters():
    rng = np.random.default_rng(5)
    for _ in range(20):
        n = int(rng.integers(4, 25))
        X = rng.integers(-9, 9, (n, 3)).astype(float)
        w = rng.integers(1, 5, n).astype(float)
        k = int(rng.integers(2, n // 2 + 1))
        lab = multivariate.mdav_multi_partition(X, k)
        got = W.mdav_multi_round_weighted(X, w, k)
        for j in range(3):
            _close(got[:, j], ref_represent(X[:, j], w, lab, "mean"), X)


def test_weighted_totals_of_each_group_are_preserved():
    rng = np.random.default_rng(8)
    x = rng.normal(1000, 300, 200)
    w = rng.uniform(1, 300, 200)
    lab = methods.partition(x, 5, "mdav")
    got = W.microaggregate_weighted(x, w, 5)
    for g in np.unique(lab):
        i = lab == g
        assert float((w[i] * got[i]).sum()) == pytest.approx(float((w[i] * x[i]).sum()), rel=1e-12)


# ---------------------------------------------------------------------------------------------
# equal weights and scale


EQUAL = [1.0, 0.1, 25.0, 1e300, 1e-300, 5e-324 * 2 ** 60]


@pytest.mark.parametrize("common", EQUAL)
def test_equal_weights_give_the_unweighted_result_bit_for_bit(common):
    rng = np.random.default_rng(3)
    x = np.round(rng.normal(0, 1000, 101), 2)
    w = np.full(x.shape[0], common)
    for m in W.MICRO_METHODS:
        for rep in ("mean", "median"):
            for k in (3, "auto"):
                assert np.array_equal(W.microaggregate_weighted(x, w, k, m, rep), methods.microaggregate(x, k, m, rep))
    for m in W.DISC_METHODS:
        for rep in ("mean", "median", "midpoint"):
            for c in (4, "auto"):
                try:
                    want = methods.discretise(x, c, m, rep)
                except SdcError as e:  # 'auto' would leave a value alone: refused alike
                    with pytest.raises(SdcError, match=re.escape(str(e).split(" chose ")[0])):
                        W.discretise_weighted(x, w, c, m, rep)
                    continue
                assert np.array_equal(W.discretise_weighted(x, w, c, m, rep), want)
            assert np.array_equal(W.discretise_weighted(x, w, 4, m, rep, stochastic=True, seed=9),
                                  methods.discretise(x, 4, m, rep, stochastic=True, seed=9))
    X = np.c_[x, x[::-1]]
    assert np.array_equal(W.mdav_multi_round_weighted(X, w, 4), multivariate.mdav_multi_round(X, 4))


def test_weights_and_data_scaled_by_powers_of_two_give_the_rescaled_result_bit_for_bit():
    rng = np.random.default_rng(12)
    x = rng.normal(0, 1, 80)
    w = rng.uniform(0.1, 10, 80)
    for m in W.MICRO_METHODS:
        for rep in ("mean", "median"):
            base = W.microaggregate_weighted(x, w, 3, m, rep)
            assert np.array_equal(W.microaggregate_weighted(x * 2.0 ** 1000, w * 2.0 ** -1000, 3, m, rep),
                                  base * 2.0 ** 1000)
            assert np.array_equal(W.microaggregate_weighted(x, w * 2.0 ** 1000, 3, m, rep), base)
            # 1.75e308 and subnormal data (the rescaled answer, correctly rounded among subnormals)
            top = W.microaggregate_weighted(x / 4 * 2.0 ** 1023, w, 3, m, rep)
            assert np.array_equal(top, base / 4 * 2.0 ** 1023)
            tiny = W.microaggregate_weighted(x * 2.0 ** -1060, w, 3, m, rep)
            assert np.all(np.abs(tiny - base * 2.0 ** -1060) <= 2.0 ** -1074)
    for m in W.DISC_METHODS:
        base = W.discretise_weighted(x, w, 4, m)
        assert np.array_equal(W.discretise_weighted(x * 2.0 ** 900, w * 2.0 ** 300, 4, m), base * 2.0 ** 900)


def test_weights_of_1e300_and_1e_300_give_the_answer_of_the_same_weights_near_1():
    rng = np.random.default_rng(13)
    x = rng.normal(0, 1, 60)
    w = rng.integers(1, 9, 60).astype(float)
    base = W.microaggregate_weighted(x, w, 4)
    for factor in (1e300, 1e-300):
        assert np.allclose(W.microaggregate_weighted(x, w * factor, 4), base, rtol=0, atol=4e-16 * np.abs(x).max())
        assert np.array_equal(W.microaggregate_weighted(x, w * factor, 4, "mdav", "median"),
                              W.microaggregate_weighted(x, w, 4, "mdav", "median"))


# ---------------------------------------------------------------------------------------------
# errors


@pytest.mark.parametrize("bad, words", [
    ([1.0, 0.0, 1.0], "weights must be finite numbers > 0, got 0.0"),
    ([1.0, -2.0, 1.0], "weights must be finite numbers > 0, got -2.0"),
    ([1.0, np.nan, 1.0], "weights must be finite numbers > 0, got nan"),
    ([1.0, np.inf, 1.0], "weights must be finite numbers > 0, got inf"),
    ([1.0, 1.0], "weights has 2 weights but there are 3 values"),
    (None, "weights must not be NULL"),
    ([1e-300, 1e300, 1.0], "weights span too wide a range"),
])
def test_bad_weights_are_refused_naming_the_function_and_the_parameter(bad, words):
    with pytest.raises(SdcError, match="mdav_round_weighted: " + words.replace("(", r"\(")):
        W.microaggregate_weighted([1.0, 2.0, 3.0], bad, 2)
    with pytest.raises(SdcError, match="efd_round_weighted: "):
        W.discretise_weighted([1.0, 2.0, 3.0], bad, 2, "efd")


def test_a_method_without_weights_is_refused_by_the_masking_layer():
    with pytest.raises(SdcError, match="rank_swap does not take sampling weights"):
        masking.mask_weighted("rank_swap", [1.0, 2.0], [1.0, 1.0], {"p": 50})
    with pytest.raises(SdcError, match="rbd_round does not take sampling weights"):
        masking.mask_weighted("rbd_round", [1.0, 2.0], [1.0, 1.0], {"c": 2})


def test_mask_stratum_weighted_derives_the_seed_as_mask_stratum_does():
    x = np.arange(20.0)
    w = np.ones(20)
    got = masking.mask_stratum_weighted("efd_round", x, w, {"c": 3, "stochastic": True, "seed": 5}, column="x", stratum=2)
    assert np.array_equal(got, masking.mask_stratum("efd_round", x, {"c": 3, "stochastic": True, "seed": 5},
                                                    column="x", stratum=2))


# ---------------------------------------------------------------------------------------------
# SQL


@pytest.fixture(scope="module")
def con():
    c = duckdb_sdc.connect(threads=1)
    rng = np.random.default_rng(4)
    n = 90
    c.execute("CREATE TABLE t AS SELECT * FROM (SELECT unnest(range(?)) AS id, unnest(?) AS x, unnest(?) AS w, "
              "unnest(?) AS s)", [n, np.round(rng.normal(50, 20, n), 3).tolist(), rng.integers(1, 9, n).tolist(),
                                  rng.choice(["a", "b"], n).tolist()])
    c.execute("UPDATE t SET x = NULL WHERE id IN (4, 40)")
    c.execute("UPDATE t SET w = NULL WHERE id = 40")  # no weight needed where x is NULL
    yield c
    c.close()


def _numpy(con, where: str = "TRUE"):
    rows = con.execute(f"SELECT x, w FROM t WHERE x IS NOT NULL AND {where} ORDER BY id").fetchall()
    return np.array([r[0] for r in rows]), np.array([r[1] for r in rows], dtype=float)


def test_sql_list_form_equals_numpy_and_keeps_nulls_in_place(con):
    got = con.execute("SELECT mdav_round_weighted(list(x ORDER BY id), list(w ORDER BY id), 4, "
                      "representative := 'median') FROM t").fetchone()[0]
    x, w = _numpy(con)
    expected = W.microaggregate_weighted(x, w, 4, "mdav", "median")
    assert got[4] is None and got[40] is None
    assert [v for v in got if v is not None] == expected.tolist()
    got = con.execute("SELECT efd_round_weighted(list(x ORDER BY id), list(w ORDER BY id), 5) FROM t").fetchone()[0]
    assert [v for v in got if v is not None] == W.discretise_weighted(x, w, 5, "efd").tolist()


def test_sql_table_form_masks_each_stratum_in_content_order_and_keeps_the_weight(con):
    got = con.execute("SELECT id, x, w FROM vmdav_round_weighted_table('t', 'x', 'w', 3, strata := 's') "
                      "ORDER BY id").fetchall()
    orig = dict(con.execute("SELECT id, w FROM t").fetchall())
    assert all(w == orig[i] for i, _, w in got)
    for s in ("a", "b"):
        rows = con.execute(f"SELECT id, x, w FROM t WHERE s = '{s}' AND x IS NOT NULL "
                           "ORDER BY t").fetchall()  # the whole row's content, as the table form orders it
        x = np.array([r[1] for r in rows])
        w = np.array([r[2] for r in rows], dtype=float)
        expected = dict(zip([r[0] for r in rows], W.microaggregate_weighted(x, w, 3, "vmdav").tolist()))
        assert {i: v for i, v, _ in got if i in expected} == expected
    assert [v for i, v, _ in got if i in (4, 40)] == [None, None]


@pytest.mark.parametrize("sql, words", [
    ("SELECT mdav_round_weighted([1.0, 2.0, 3.0], [1.0, NULL, 1.0], 2)",
     "mdav_round_weighted: weights has a NULL weight where xs has a value"),
    ("SELECT mdav_round_weighted([1.0, 2.0, 3.0], [1.0, 0.0, 1.0], 2)", "mdav_round_weighted: weights must be"),
    ("SELECT mdav_round_weighted([1.0, 2.0, 3.0], NULL, 2)", "mdav_round_weighted: weights must not be NULL"),
    ("SELECT * FROM mdav_round_weighted_table('t', 'x', 'nope', 3)", "mdav_round_weighted_table: weight of table t"),
    ("SELECT * FROM mdav_round_weighted_table('t', 'x', 's', 3)", "mdav_round_weighted_table: column s must be numeric"),
    ("SELECT * FROM mdav_round_weighted_table((SELECT 't'), 'x', 'id', 3)", "mdav_round_weighted_table"),
])
def test_sql_errors_name_the_function_and_the_weights(con, sql, words):
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql).fetchall()
    assert words in str(info.value), str(info.value)
    assert "Traceback" not in str(info.value)


def test_sql_table_form_refuses_a_zero_weight_naming_weight(con):
    con.execute("CREATE OR REPLACE TEMP TABLE tz AS SELECT * REPLACE (CASE WHEN id = 7 THEN 0 ELSE w END AS w) FROM t")
    with pytest.raises(duckdb.Error, match="mdav_round_weighted_table: weight must be finite numbers > 0, got 0.0"):
        con.execute("SELECT * FROM mdav_round_weighted_table('tz', 'x', 'w', 3)").fetchall()


def test_sql_multivariate_list_and_table_forms_equal_numpy(con):
    con.execute("CREATE OR REPLACE TEMP TABLE r AS SELECT id, x, 100 - x + id % 7 AS y, w, s FROM t")
    got = con.execute("SELECT mdav_multi_round_weighted(list([x, y] ORDER BY id), list(w ORDER BY id), 4) "
                      "FROM r").fetchone()[0]
    rows = con.execute("SELECT x, y, w FROM r WHERE x IS NOT NULL ORDER BY id").fetchall()
    A = np.array(rows, dtype=float)
    assert got[4] is None and got[40] is None  # a record with a NULL attribute: NULL, its weight not read
    assert [v for v in got if v is not None] == W.mdav_multi_round_weighted(A[:, :2], A[:, 2], 4).tolist()
    table = con.execute("SELECT id, x, y, w FROM mdav_multi_round_weighted_table('r', ['x', 'y'], 'w', 4) "
                        "ORDER BY id").fetchall()
    ordered = con.execute("SELECT id, x, y, w FROM r WHERE x IS NOT NULL ORDER BY r").fetchall()
    B = np.array([r[1:] for r in ordered], dtype=float)
    expected = dict(zip([r[0] for r in ordered], W.mdav_multi_round_weighted(B[:, :2], B[:, 2], 4).tolist()))
    assert {i: [x, y] for i, x, y, _ in table if i in expected} == expected
