"""Weighted measures (duckdb_sdc.measures.weights) against exact-rational and O(n^2) slow references on
random inputs, in numpy and in SQL: weighted MAE, MSE and IL1s, the estimated population frequencies
F_k (sdcMicro's freqCalc, NULL keys matching any value) and the risk summary."""

from __future__ import annotations

import math
from fractions import Fraction

import duckdb
import numpy as np
import pytest

import duckdb_sdc
from duckdb_sdc import measures
from duckdb_sdc._validate import SdcError
from duckdb_sdc.measures import weights as wm


def ref_loss(x, xm, w):
    """(weighted MAE, weighted MSE, weighted IL1s) with exact sums (the square root in float)."""
    F = [Fraction(v) for v in x]
    FM = [Fraction(v) for v in xm]
    FW = [Fraction(v) for v in w]
    v1 = sum(FW)
    mae = sum(b * abs(a - c) for a, c, b in zip(F, FM, FW)) / v1
    mse = sum(b * (a - c) ** 2 for a, c, b in zip(F, FM, FW)) / v1
    m = sum(b * a for a, b in zip(F, FW)) / v1
    var = sum(b * (a - m) ** 2 for a, b in zip(F, FW)) / (v1 - sum(b * b for b in FW) / v1)
    il1s = float(mae) / (math.sqrt(2) * math.sqrt(float(var)))
    return float(mae), float(mse), il1s


def ref_frequencies(keys, w):
    """O(n^2): for every record the number and the total weight of the records with the same keys."""
    fk, Fk = [], []
    for r in keys:
        same = [i for i, s in enumerate(keys) if s == r]
        fk.append(len(same))
        Fk.append(float(sum(Fraction(w[i]) for i in same)))
    return np.array(fk, float), np.array(Fk)


def test_weighted_loss_against_the_exact_reference():
    rng = np.random.default_rng(31)
    for _ in range(80):
        n = int(rng.integers(2, 40))
        x = rng.integers(-50, 50, n).astype(float)
        if np.ptp(x) == 0:
            continue
        xm = x + rng.integers(-5, 6, n)
        w = rng.integers(1, 20, n).astype(float)
        mae, mse, il1s = ref_loss(x, xm, w)
        assert wm.weighted_mae(x, xm, w) == pytest.approx(mae, rel=1e-13, abs=1e-300)
        assert wm.weighted_mse(x, xm, w) == pytest.approx(mse, rel=1e-13, abs=1e-300)
        assert wm.weighted_il1s(x, xm, w) == pytest.approx(il1s, rel=1e-12, abs=1e-300)


def test_equal_weights_give_the_unweighted_measures():
    rng = np.random.default_rng(2)
    x = rng.normal(100, 30, 70)
    xm = x + rng.normal(0, 3, 70)
    for c in (1.0, 7.0, 1e300, 1e-300):
        w = np.full(70, c)
        assert wm.weighted_mae(x, xm, w) == pytest.approx(measures.mae(x, xm), rel=1e-14)
        assert wm.weighted_mse(x, xm, w) == pytest.approx(measures.mse(x, xm), rel=1e-14)
        assert wm.weighted_il1s(x, xm, w) == pytest.approx(measures.il1s(x, xm), rel=1e-13)


def test_weighted_measures_scale_with_the_data_and_ignore_the_weights_scale():
    rng = np.random.default_rng(6)
    x = rng.normal(0, 1, 50)
    xm = x + rng.normal(0, 0.1, 50)
    w = rng.uniform(0.5, 5, 50)
    mae, mse, il1s = wm.weighted_mae(x, xm, w), wm.weighted_mse(x, xm, w), wm.weighted_il1s(x, xm, w)
    for s, ws in ((2.0 ** 1000, 2.0 ** -1000), (2.0 ** -1020, 2.0 ** 900), (2.0 ** 500, 1e300 / 2 ** 996)):
        assert wm.weighted_mae(x * s, xm * s, w * ws) == pytest.approx(mae * s, rel=1e-15, abs=2.0 ** -1074)
        assert wm.weighted_il1s(x * s, xm * s, w * ws) == pytest.approx(il1s, rel=1e-15)
    assert wm.weighted_mse(x * 2.0 ** 500, xm * 2.0 ** 500, w) == mse * 2.0 ** 1000
    # an MSE of about 1e616 is refused, never inf
    with pytest.raises(SdcError, match="weighted_mse: the weighted mean squared error is larger than the largest"):
        wm.weighted_mse(x * 2.0 ** 1000, xm * 2.0 ** 1000 + 2.0 ** 1020, w)


def test_undefined_il1s_and_bad_weights():
    with pytest.raises(wm.UndefinedMeasure, match="constant"):
        wm.weighted_il1s([1.0, 1.0], [1.0, 2.0], [1.0, 2.0])
    with pytest.raises(wm.UndefinedMeasure, match="n = 1"):
        wm.weighted_il1s([1.0], [1.0], [1.0])
    with pytest.raises(SdcError, match="weighted_mae: w must be finite numbers > 0, got 0.0"):
        wm.weighted_mae([1.0, 2.0], [1.0, 2.0], [1.0, 0.0])


def test_frequencies_against_the_quadratic_reference():
    rng = np.random.default_rng(41)
    for _ in range(40):
        n = int(rng.integers(1, 60))
        keys = [tuple(r) for r in rng.integers(0, 3, (n, 2)).tolist()]
        w = rng.integers(1, 50, n).astype(float)
        fk, Fk = wm.frequencies(keys, w)
        rfk, rFk = ref_frequencies(keys, w)
        assert np.array_equal(fk, rfk) and np.array_equal(Fk, rFk)
        s = wm.risk_summary(keys, w, 30)
        assert s["records"] == n and s["combinations"] == len(set(keys))
        assert s["sample_uniques"] == int((rfk == 1).sum()) and s["at_risk"] == int((rFk < 30).sum())
        assert s["expected_reidentifications"] == pytest.approx(float(sum(Fraction(1) / Fraction(v) for v in rFk)),
                                                                rel=1e-13)


def test_a_missing_key_matches_any_value():
    # sdcMicro's freqCalc: a missing key stands for any value, so every record takes part (and needs a weight)
    fk, Fk = wm.frequencies([(1, "a"), (1, None), (1, "a"), (2, "a")], [2.0, 4.0, 3.0, 1.0])
    assert fk.tolist() == [3, 3, 3, 1] and Fk.tolist() == [9.0, 9.0, 9.0, 1.0]
    fk, Fk = wm.frequencies([(1, "a"), (1, None), (1, "a"), (2, "a")], [2.0, 4.0, 3.0, 1.0], nulls="category")
    assert fk.tolist() == [2, 1, 2, 1] and Fk.tolist() == [5.0, 4.0, 5.0, 1.0]
    with pytest.raises(SdcError, match="frequencies: weights must be finite numbers > 0 .* 1 are not: NULL"):
        wm.frequencies([(1, "a"), (1, None)], [1.0, None])


@pytest.fixture(scope="module")
def con():
    c = duckdb_sdc.connect(threads=1)
    rng = np.random.default_rng(9)
    n = 150
    df = {"id": np.arange(n), "a": rng.integers(0, 4, n), "b": rng.choice(["x", "y", "z"], n),
          "x": rng.normal(10, 3, n).round(3), "w": rng.integers(1, 40, n), "label": rng.choice(["p", "q"], n)}
    df["xm"] = (df["x"] + rng.normal(0, 0.5, n)).round(3)
    import pandas as pd

    c.register("df", pd.DataFrame(df))
    c.execute("CREATE TABLE t AS SELECT * FROM df")
    c.execute("UPDATE t SET b = NULL WHERE id = 5")  # a missing key: matches any value of b
    c.execute("UPDATE t SET xm = NULL WHERE id = 6")  # a missing value: left out of the loss
    yield c
    c.close()


def test_sql_aggregates_equal_numpy(con):
    rows = con.execute("SELECT x, xm, w FROM t WHERE xm IS NOT NULL ORDER BY id").fetchall()
    x, xm, w = (np.array([r[i] for r in rows], dtype=float) for i in range(3))
    got = con.execute("SELECT weighted_mae(x, xm, w), weighted_mse(x, xm, w), weighted_il1s(x, xm, w) FROM t").fetchone()
    mae, mse, il1s = ref_loss(x, xm, w)
    assert got[0] == pytest.approx(mae, rel=1e-12) and got[1] == pytest.approx(mse, rel=1e-12)
    assert got[2] == pytest.approx(il1s, rel=1e-12)
    with pytest.raises(duckdb.Error, match="weighted_mae: w has a NULL weight where x and xm have values"):
        con.execute("SELECT weighted_mae(x, x, CASE WHEN id = 3 THEN NULL ELSE w END) FROM t").fetchall()


def test_sql_frequencies_and_summary_equal_numpy(con):
    rows = con.execute("SELECT id, a, b, w, sample_fk, population_fk FROM population_frequencies_table('t', ['a', 'b'], 'w') "
                       "ORDER BY id").fetchall()
    keys = [(r[1], r[2]) for r in rows]
    fk, Fk = wm.frequencies(keys, [r[3] for r in rows])
    assert [r[4] for r in rows] == fk.tolist()
    assert [r[5] for r in rows] == pytest.approx(Fk.tolist(), rel=1e-14)
    assert rows[5][2] is None and rows[5][4] == sum(1 for k in keys if k[0] == keys[5][0])  # b NULL: any b
    got = con.execute("SELECT * FROM weighted_risk_summary('t', ['a', 'b'], 'w', 60)").fetchdf().iloc[0].to_dict()
    expected = wm.risk_summary(keys, [r[3] for r in rows], 60)
    for name, value in expected.items():
        assert got[name] == pytest.approx(value, rel=1e-12), name


@pytest.mark.parametrize("sql, words", [
    ("SELECT * FROM population_frequencies_table('t', ['a'], 'label')",
     "population_frequencies_table: weight column label must be numeric"),
    ("SELECT * FROM population_frequencies_table('t', ['a'], 'nope')", "population_frequencies_table: weight of table t"),
    ("SELECT * FROM population_frequencies_table('t', ['nope'], 'w')", "population_frequencies_table: keys of table t"),
    ("SELECT * FROM population_frequencies_table((SELECT 't'), ['a'], 'w')", "population_frequencies_table"),
    ("SELECT * FROM population_frequencies_table('tn', ['a'], 'w')", "population_frequencies_table: weight column w must hold finite numbers > 0 (NULL is refused: every record takes "
     "part); 1 are not: NULL"),
    ("SELECT * FROM weighted_risk_summary('t', ['a', 'b'], 'w', -1)", "weighted_risk_summary: threshold must be"),
    # a column of the name the function adds would stay beside its own, renamed sample_fk_1 (the summary
    # counts its own combinations and reads no such column)
    ("SELECT * FROM population_frequencies_table('tfk', ['a'], 'w')",
     "population_frequencies_table: table tfk has a column named Sample_FK, a name population_frequencies_table gives "
     "a column of its own: rename it"),
])
def test_sql_risk_errors_name_the_function(con, sql, words):
    con.execute("CREATE OR REPLACE TEMP TABLE tn AS SELECT * REPLACE (CASE WHEN id = 9 THEN NULL ELSE w END AS w) FROM t")
    con.execute("CREATE OR REPLACE TEMP TABLE tfk AS SELECT *, 7 AS Sample_FK FROM t")
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql).fetchall()
    assert words in str(info.value), str(info.value)


def test_a_weight_beside_a_missing_value_is_not_read_but_beside_a_missing_key_it_is(con):
    con.execute("CREATE OR REPLACE TEMP TABLE tw AS SELECT * FROM (VALUES (1, 'a', 2.0, 1.0, 1.5), (2, NULL, 6.0, 2.0, NULL), "
                "(3, 'a', 3.0, 4.0, 4.5), (4, 'b', 1.0, 3.0, 3.0)) v(i, k, w, x, xm)")
    assert con.execute("SELECT i, sample_fk, population_fk FROM population_frequencies_table('tw', ['k'], 'w') "
                       "ORDER BY i").fetchall() == [(1, 3, 11.0), (2, 4, 12.0), (3, 3, 11.0), (4, 2, 7.0)]
    assert con.execute("SELECT weighted_mae(x, xm, CASE WHEN i = 2 THEN NULL ELSE w END) FROM tw").fetchone()[0] == \
        pytest.approx((2 * 0.5 + 3 * 0.5) / 6)
    con.execute("CREATE OR REPLACE TEMP TABLE tw2 AS SELECT * REPLACE (CASE WHEN i = 2 THEN NULL ELSE w END AS w) FROM tw")
    with pytest.raises(duckdb.Error, match="population_frequencies_table: weight column w must hold finite numbers > 0 "
                                           r"\(NULL is refused: every record takes part\); 1 are not: NULL"):
        con.execute("SELECT * FROM population_frequencies_table('tw2', ['k'], 'w')").fetchall()
