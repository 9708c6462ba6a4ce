"""Box anonymisation through SQL: the record functions against the numpy layer (alignment, strata,
NULLs), the table form, the weights, the pure-SQL aggregates, errors."""

from __future__ import annotations

import time

import duckdb
import numpy as np
import pandas as pd
import pytest

from duckdb_sdc.methods import boxes as bx
from duckdb_sdc.release.methods import METHODS
from duckdb_sdc.sql import sql_files

COLS = ["income", "savings"]


@pytest.fixture
def people(con):
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame({
        "id": np.arange(n),
        "region": rng.choice(["north", "south"], n),
        "income": np.round(rng.lognormal(10, 0.8, n)),
        "savings": np.round(rng.lognormal(8, 1.0, n), 2),
        "w": rng.random(n),
    })
    df.loc[rng.choice(n, 10, replace=False), "income"] = np.nan
    df.loc[rng.choice(n, 6, replace=False), "w"] = np.nan
    con.execute("CREATE TABLE people AS SELECT id, region, income::BIGINT AS income, savings::DECIMAL(12,2) AS savings, "
                "w FROM df")
    return df


def _group(df):
    sub = df.sort_values("id")
    ok = sub[COLS].notna().all(axis=1).to_numpy()
    return sub, ok, sub[COLS].to_numpy(float)[ok]


RECORD_CALLS = [
    ("box_density(r, 4)", lambda X: bx.density(X, 4)),
    ("box_c(r, 5, 'corr(1, 2)')", lambda X: bx.optimal_boxes(X, "corr(1, 2)", 5).c),
    ("box_c(r, 5, 'var(income) + 2 * mean(savings) / 100', l := 2, eps := [50, 5], m := 7, "
     "names := ['income', 'savings'])",
     lambda X: bx.optimal_boxes(X, "var(1) + 2 * mean(2) / 100", 5, 2, [50, 5], 7).c),
    ("box_half_widths(r, 3, 'cov(1, 2)', l := 3, eps := 10)",
     lambda X: bx.optimal_boxes(X, "cov(1, 2)", 3, 3, 10).half_widths),
]


@pytest.mark.parametrize("call, expected", RECORD_CALLS, ids=["density", "c", "c-l-names", "half-widths"])
def test_record_functions_equal_the_numpy_layer_per_stratum(con, people, call, expected):
    rows = con.execute(f"SELECT region, ids, {call} FROM (SELECT region, list(id ORDER BY id) AS ids, "
                       "list([income, savings] ORDER BY id) AS r FROM people GROUP BY region)").fetchall()
    assert len(rows) == 2
    for region, ids, got in rows:
        sub, ok, X = _group(people[people["region"] == region])
        assert ids == sub["id"].tolist()
        want = expected(X)
        present = [v for v, good in zip(got, ok) if good]
        np.testing.assert_allclose(np.array(present, dtype=float), want, rtol=1e-12)
        assert all(v is None for v, good in zip(got, ok) if not good)


def test_box_release_list_form(con, people):
    rows = con.execute("SELECT region, box_release(list([income, savings] ORDER BY id), 4, "
                       "'corr(income, savings)', l := 2, eps := 100, names := ['income', 'savings']) "
                       "FROM people GROUP BY region").fetchall()
    for region, got in rows:
        sub, ok, X = _group(people[people["region"] == region])
        rel = bx.box_release(X, "corr(1, 2)", 4, 2, 100)
        present = [b for b, good in zip(got, ok) if good]
        assert [b["box"] for b in present] == rel.labels.tolist()
        np.testing.assert_array_equal([b["lower"] for b in present], rel.lower)
        np.testing.assert_array_equal([b["upper"] for b in present], rel.upper)
        assert all(b is None for b, good in zip(got, ok) if not good)


def test_incomplete_lists(con):
    """(NULL, empty and all-NULL lists are the generated contract's.)"""
    got = con.execute("SELECT box_c([NULL, [1, NULL]]::INT[][], 2, 'mean(1)'), "
                      "box_release([[1, 2], NULL, [3, NULL], [5, 6]], 2, 'mean(1)')").fetchone()
    assert got[0] == [None, None]
    assert got[1] == [{"box": 0, "lower": [1.0, 2.0], "upper": [5.0, 6.0]}, None, None,
                      {"box": 0, "lower": [1.0, 2.0], "upper": [5.0, 6.0]}]


def test_rows_of_one_chunk_stay_apart(con):
    got = con.execute("SELECT box_release(r, 2, 'mean(1)'), box_density(r, 2) FROM (VALUES (NULL), ([[1, 2], [3, 4]]), "
                      "([]), ([NULL, [5, 6], [7, 8]])) t(r)").fetchall()
    box = lambda lo, hi: {"box": 0, "lower": lo, "upper": hi}  # noqa: E731
    assert got == [(None, None), ([box([1.0, 2.0], [3.0, 4.0])] * 2, [0.125, 0.125]), ([], []),
                   ([None] + [box([5.0, 6.0], [7.0, 8.0])] * 2, [None, 0.125, 0.125])]


def test_half_widths_keep_the_infinite_limit(con):
    got = con.execute("SELECT box_half_widths([[0, 0], [1, 5], [2, 1], [3, 7]], 2, 'mean(1)')").fetchone()[0]
    assert all(h[0] == 0 and h[1] == float("inf") for h in got)


def test_weights_equal_the_numpy_layer_and_keep_nulls_in_place(con):
    cs = [0.3, None, 0.1, 2.0, 0.1, 0.7]
    present = np.array([c for c in cs if c is not None])
    fuzzy, crisp = con.execute("SELECT fuzzy_weights($1, 2, 1.5), crisp_weights($1::DECIMAL(6,2)[], 2, 1.5)",
                               [cs]).fetchone()
    assert fuzzy[1] is None and crisp[1] is None
    np.testing.assert_allclose([v for v in fuzzy if v is not None], bx.fuzzy_weights(present, 2, 1.5), rtol=1e-14)
    np.testing.assert_array_equal([v for v in crisp if v is not None], bx.crisp_weights(present, 2, 1.5))


def test_table_form_returns_box_columns_and_never_the_values(con, people):
    df = con.execute("SELECT * FROM box_release_table('people', ['income', 'savings'], 5, "
                     "'0.5 * corr(income, savings) + 0.5 * mean(2) / 1000', strata := 'region', "
                     "box_col := 'cell') ORDER BY id").df()
    assert list(df.columns) == ["id", "region", "w", "income_lower", "income_upper", "savings_lower",
                                "savings_upper", "cell"]
    for region in ("north", "south"):
        sub, ok, X = _group(people[people["region"] == region])
        rel = bx.box_release(X, "0.5 * corr(1, 2) + 0.5 * mean(2) / 1000", 5)
        got = df[df["region"] == region].sort_values("id")
        assert got["id"].tolist() == sub["id"].tolist()
        np.testing.assert_array_equal(got[["income_lower", "savings_lower"]].to_numpy()[ok], rel.lower)
        np.testing.assert_array_equal(got[["income_upper", "savings_upper"]].to_numpy()[ok], rel.upper)
        assert got["cell"].to_numpy()[ok].tolist() == rel.labels.tolist()
        assert got[["income_lower", "savings_upper", "cell"]][~ok].isna().all().all()


def test_table_form_l_diversity_and_replaced_columns(con):
    con.execute("CREATE TABLE t AS SELECT i AS id, (i * 7919) % 101 AS a, (i * 104729) % 53 AS b, 'x' AS box, "
                "0 AS a_lower FROM range(300) r(i)")
    df = con.execute("SELECT * FROM box_release_table('t', ['a', 'b'], 6, 'var(a) + var(b)', l := 3, "
                     "eps := [5, 2])").df()
    assert list(df.columns) == ["id", "a_lower", "a_upper", "b_lower", "b_upper", "box"]
    X = con.execute("SELECT a, b FROM t ORDER BY id").fetchnumpy()
    X = np.c_[X["a"], X["b"]].astype(float)
    rel = bx.box_release(X, "var(1) + var(2)", 6, 3, [5, 2])
    got = df.sort_values("id")
    np.testing.assert_array_equal(got[["a_lower", "b_lower"]].to_numpy(), rel.lower)
    assert got["box"].tolist() == rel.labels.tolist()


def test_weighted_aggregates_equal_the_numpy_layer(con, people):
    rows = con.execute("SELECT region, weighted_mean(income, w), weighted_var(income, w), "
                       "weighted_cov(income, savings, w), weighted_corr(income, savings, w), weighted_var(savings, w) "
                       "FROM people GROUP BY region").fetchall()
    for region, mean, var, cov, corr, var_s in rows:
        d = people[people["region"] == region]
        both = d.dropna(subset=["income", "savings", "w"])
        one = d.dropna(subset=["income", "w"])
        assert mean == pytest.approx(bx.weighted_mean(one.income, one.w), rel=1e-13)
        assert var == pytest.approx(bx.weighted_var(one.income, one.w), rel=1e-12)
        assert cov == pytest.approx(bx.weighted_cov(both.income, both.savings, both.w), rel=1e-12)
        assert corr == pytest.approx(bx.weighted_corr(both.income, both.savings, both.w), rel=1e-12)
        s = d.dropna(subset=["savings", "w"])
        assert var_s == pytest.approx(bx.weighted_var(s.savings, s.w), rel=1e-12)


def test_weighted_variance_keeps_precision_under_a_large_offset(con):
    got = con.execute("SELECT weighted_var(1e9 + x, w), weighted_var(x, w) FROM (VALUES (1, 1), (2, 3), (4, 0.5)) "
                      "t(x, w)").fetchone()
    assert got[0] == pytest.approx(got[1], rel=1e-9)


def test_weighted_aggregates_take_linear_time(con):
    # a lambda that captures the means evaluates them again per element: 200k rows would take minutes
    con.execute("CREATE TABLE big AS SELECT random() AS x, random() AS y, random() AS w FROM range(200000)")
    start = time.perf_counter()
    got = con.execute("SELECT weighted_corr(x, y, w), weighted_var(x, w) FROM big").fetchone()
    assert time.perf_counter() - start < 10 and abs(got[0]) < 0.05 and got[1] == pytest.approx(1 / 12, rel=0.05)


def test_weighted_aggregate_edges(con):
    got = con.execute("SELECT weighted_mean(x, w), weighted_corr(x, 1, w) FROM (VALUES (1, 0), (2, 0)) t(x, w)").fetchone()
    assert got == (None, None)
    got = con.execute("SELECT weighted_corr(x, 5, w), weighted_mean(x, w) FROM (VALUES (1, 1), (2, 1)) t(x, w)").fetchone()
    assert got == (None, 1.5)
    assert con.execute("SELECT weighted_mean(x, w) FROM (SELECT 1 AS x, 1 AS w WHERE false)").fetchone() == (None,)


def test_mean_bounds_from_boxes(con):
    got = con.execute("SELECT box_mean_bounds(lo, hi), box_weighted_mean_bounds(lo, hi, w) FROM "
                      "(VALUES (1, 3, 1), (2, 2, 3), (NULL, 5, 1), (0, 10, NULL)) t(lo, hi, w)").fetchone()
    assert got[0] == {"lower": 1.0, "upper": 5.0}
    assert got[1] == {"lower": 7 / 4, "upper": 9 / 4}


def test_the_aggregates_work_in_a_plain_duckdb_connection():
    plain = duckdb.connect()
    for _, text in sql_files():
        plain.execute(text)
    got = plain.execute("SELECT weighted_mean(x, w), box_mean_bounds(x, x + 1) FROM (VALUES (1, 1), (3, 3)) t(x, w)")
    assert got.fetchall() == [(2.5, {"lower": 2.0, "upper": 3.0})]
    plain.close()


def test_box_release_is_the_only_box_release_method():
    # derived from its types (rows DOUBLE[][] in, a box per record out) and its table form; the
    # other record functions return values, not boxes, and have no table form
    assert [m for m in METHODS if m.startswith("box") or "weights" in m] == ["box_release"]
    assert METHODS["box_release"].kind == "boxes"


# bad lists, every invalid value of every parameter's kind, missing tables and columns are the generated
# contract's (tests/sql/test_contract.py); what it does not build:
@pytest.mark.parametrize("sql, message", [
    ("SELECT box_release([[1, 2], [3, 4]], 2, 'mean(1)', l := 3, eps := 1)", "box_release: l = 3 is larger than k = 2"),
    ("SELECT box_release([[1, 2], [3, 4]], 2, 'mean(1)', l := 2, eps := [1, -1])",
     "box_release: eps must be a finite number > 0, got -1"),
    ("SELECT box_release([[1, 2], [3, 4]], 2, 'mean(1)', l := 2)", "box_release: eps must be given with l"),
    ("SELECT box_release([[1, 2], [3, 4]], 2, 'median(1)')", "box_release: characteristic 'median(1)': unknown statistic"),
    ("SELECT box_release([[1, 2], [3, 4]], 2, 'mean(x)')",
     "box_release: characteristic 'mean(x)': unknown attribute 'x'; use positions 1..2"),
    ("SELECT box_c([[1, 2], [3, 4]], 2, 'mean(1)', m := 3)",
     "box_c: m = 3 is larger than the number of records (2)"),
    ("SELECT box_density([[1, 2]], 2)", "box_density: m = 2 is larger than the number of records (1)"),
    ("SELECT box_c([[1, 2], [3, 4]], 2, 'mean(a)', names := 'a')", "box_c: names must be a list of attribute names"),
    ("SELECT fuzzy_weights([1, -2], 2, 1)", "fuzzy_weights: cs must be >= 0"),
    ("SELECT weighted_mean(x, w) FROM (VALUES (1, -1)) t(x, w)", "weighted_mean: weights must be >= 0, got -1"),
    ("SELECT weighted_var(x, 1) FROM (VALUES ('a')) t(x)", "weighted_var: x must be numbers, got VARCHAR"),
    ("SELECT weighted_corr(x, y, 1) FROM (VALUES (1, 'nan'::DOUBLE)) t(x, y)", "weighted_corr: y contains NaN or infinity"),
    ("SELECT box_mean_bounds(lo, hi) FROM (VALUES (3, 1)) t(lo, hi)",
     "box_mean_bounds: lower bound 3 is above its upper bound 1"),
    ("SELECT * FROM box_release_table('people', ['region'], 2, 'mean(1)')",
     "box_release_table: column region must be numeric, got VARCHAR"),
])
def test_errors(con, people, sql, message):
    with pytest.raises(duckdb.Error) as err:
        con.execute(sql).fetchall()
    assert message in str(err.value)
