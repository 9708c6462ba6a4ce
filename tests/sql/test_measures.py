"""The measures through SQL: equal to the numpy layer, per stratum with GROUP BY, NULLs excluded
pairwise (per column) or listwise (row vectors), undefined results NULL, bad input a clear error."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from duckdb_sdc import measures as m

PURE = ["mae", "mse", "il1", "il1s", "il1s_sum", "sse_sst"]
RANKED = ["rank_mae", "rank_mse", "rank_bounded_mae", "rank_bounded_mse"]
VECTOR = ["interval_disclosure", "sd_interval_disclosure", "rank_interval_disclosure", "record_linkage",
          "global_linkage", "il_dr_score"]


@pytest.fixture
def pairs(con):
    rng = np.random.default_rng(0)
    n = 400
    x = np.round(rng.lognormal(8, 1, (n, 3)))
    xm = np.round(x * rng.normal(1, 0.1, (n, 3)) / 10) * 10
    x[:7, 0] = 0
    df = pd.DataFrame({"id": np.arange(n), "g": rng.choice(["a", "b", "c"], n),
                       "a": x[:, 0], "b": x[:, 1], "c": x[:, 2], "am": xm[:, 0], "bm": xm[:, 1], "cm": xm[:, 2]})
    con.execute("CREATE TABLE j AS SELECT id, g, a::BIGINT AS a, b, c, am, bm, cm FROM df")
    return df


def _one(con, sql, params=None):
    return con.execute(sql, params or []).fetchall()[0][0]


@pytest.mark.parametrize("name", PURE + RANKED)
def test_per_column_measures_equal_numpy_per_stratum(con, pairs, name):
    got = dict(con.execute(f"SELECT g, {name}(a, am) FROM j GROUP BY g").fetchall())
    for g, sub in pairs.groupby("g"):
        assert got[g] == pytest.approx(getattr(m, name)(sub["a"].to_numpy(), sub["am"].to_numpy()), rel=1e-12)


@pytest.mark.parametrize("name", VECTOR)
def test_row_vector_measures_equal_numpy(con, pairs, name):
    got = _one(con, f"SELECT {name}([a, b, c], [am, bm, cm]) FROM j")
    want = getattr(m, name)(pairs[["a", "b", "c"]].to_numpy(), pairs[["am", "bm", "cm"]].to_numpy())
    assert got == pytest.approx(want, rel=1e-12)


def test_struct_measures_equal_numpy(con, pairs):
    x, xm = pairs[["a", "b", "c"]].to_numpy(), pairs[["am", "bm", "cm"]].to_numpy()
    il, reg = con.execute("SELECT il_metrics([a, b, c], [am, bm, cm]), regression_utility([a, b, c], [am, bm, cm]) "
                          "FROM j").fetchall()[0]
    assert il == pytest.approx(m.il_metrics(x, xm), rel=1e-12)
    assert reg == pytest.approx(m.regression_utility(x, xm), rel=1e-12)
    assert _one(con, "SELECT (il_metrics([a], [am])).correlations FROM j") is None


def test_entropy_is_duckdbs_builtin(con, pairs):
    got = _one(con, "SELECT entropy(am) + entropy(bm) FROM j")
    assert got == pytest.approx(m.entropy(pairs[["am", "bm"]].to_numpy()), rel=1e-12)


def test_parameters_reach_numpy(con, pairs):
    x, xm = pairs[["a", "b"]].to_numpy(), pairs[["am", "bm"]].to_numpy()
    assert (_one(con, "SELECT interval_disclosure([a, b], [am, bm], half_width := 0.5) FROM j")
            == m.interval_disclosure(x, xm, 0.5))
    assert (_one(con, "SELECT interval_disclosure([a, b], [am, bm], max_outside := 1) FROM j")
            == m.interval_disclosure(x, xm, max_outside=1))
    assert _one(con, "SELECT record_linkage([a, b], [am, bm], rank := 2) FROM j") == m.record_linkage(x, xm, 2)
    assert _one(con, "SELECT il_dr_score([a, b], [am, bm], 0.2) FROM j") == pytest.approx(m.il_dr_score(x, xm, 0.2), rel=1e-12)
    for ties, seed in (("first", 0), ("random", 7)):
        got = _one(con, f"SELECT rank_bounded_mae(a, am, ties := '{ties}', seed := {seed}) FROM (FROM j ORDER BY id)")
        if ties == "random":  # 'first' depends on the order rows reach the aggregate
            assert got == m.rank_bounded_mae(pairs["a"].to_numpy(), pairs["am"].to_numpy(), ties, seed)


def test_random_ties_repeat_whatever_the_row_order(con, pairs):
    a = _one(con, "SELECT rank_bounded_mse(a, am) FROM (FROM j ORDER BY id)")
    b = _one(con, "SELECT rank_bounded_mse(a, am) FROM (FROM j ORDER BY hash(id))")
    assert a == b == m.rank_bounded_mse(pairs["a"].to_numpy(), pairs["am"].to_numpy())


def test_nulls_are_left_out_pairwise_for_columns_and_listwise_for_row_vectors(con, pairs):
    con.execute("UPDATE j SET am = NULL WHERE id % 9 = 0")
    con.execute("UPDATE j SET b = NULL WHERE id % 11 = 0")
    keep = pairs["id"] % 9 != 0
    for name in PURE + RANKED:
        got = _one(con, f"SELECT {name}(a, am) FROM j")
        assert got == pytest.approx(getattr(m, name)(pairs.loc[keep, "a"].to_numpy(), pairs.loc[keep, "am"].to_numpy()), rel=1e-12)
    both = keep & (pairs["id"] % 11 != 0)
    got = _one(con, "SELECT record_linkage([a, b], [am, bm]) FROM j")
    assert got == m.record_linkage(pairs.loc[both, ["a", "b"]].to_numpy(), pairs.loc[both, ["am", "bm"]].to_numpy())
    got = _one(con, "SELECT record_linkage(CASE WHEN id % 2 = 0 THEN [a, b] END, [am, bm]) FROM j")
    even = both & (pairs["id"] % 2 == 0)
    assert got == m.record_linkage(pairs.loc[even, ["a", "b"]].to_numpy(), pairs.loc[even, ["am", "bm"]].to_numpy())


@pytest.mark.parametrize("name", PURE + RANKED + ["record_linkage", "interval_disclosure"])
def test_no_complete_pair_gives_null(con, name):
    args = "[x], [xm]" if name in VECTOR else "x, xm"
    assert _one(con, f"SELECT {name}({args}) FROM (VALUES (1, NULL), (NULL, 2)) t(x, xm)") is None
    assert _one(con, f"SELECT {name}({args}) FROM (SELECT 1 AS x, 2 AS xm) WHERE false") is None


@pytest.mark.parametrize("name", ["il1s", "il1s_sum", "sse_sst"])
def test_undefined_standardised_measures_are_null(con, name):
    assert _one(con, f"SELECT {name}(x, xm) FROM (VALUES (5, 1), (5, 2)) t(x, xm)") is None  # S = 0
    assert _one(con, f"SELECT {name}(x, xm) FROM (VALUES (5, 1)) t(x, xm)") is None  # n = 1
    assert _one(con, "SELECT il_dr_score([x], [xm]) FROM (VALUES (5, 1), (5, 2)) t(x, xm)") is None


def test_documented_results_for_degenerate_input(con):
    assert _one(con, "SELECT il1(x, xm) FROM (VALUES (0, 1), (0, 2)) t(x, xm)") is None
    assert _one(con, "SELECT il1(x, xm) FROM (VALUES (0, 1), (2, 1)) t(x, xm)") == 0.5
    assert con.execute("SELECT mae(x, xm), rank_bounded_mae(x, xm), record_linkage([x], [xm]) "
                       "FROM (VALUES (3, 5)) t(x, xm)").fetchall() == [(2.0, 0.0, 1.0)]


def test_il1s_is_stable_under_a_large_offset(con):
    rng = np.random.default_rng(1)
    x = rng.normal(size=5000)
    xm = x + rng.normal(scale=0.2, size=5000)
    con.register("shifted", pd.DataFrame({"x": x + 1e9, "xm": xm + 1e9}))
    got = _one(con, "SELECT il1s(x, xm) FROM shifted")
    assert got == pytest.approx(m.il1s(x, xm), rel=1e-6)


@pytest.mark.parametrize("sql_type", ["INTEGER", "BIGINT", "DECIMAL(12,2)", "FLOAT", "HUGEINT", "UBIGINT"])
def test_numeric_types_are_accepted(con, sql_type):
    got = con.execute(f"SELECT mae(x::{sql_type}, xm::{sql_type}), il1s(x::{sql_type}, xm), "
                      f"record_linkage([x::{sql_type}], [xm::{sql_type}]) "
                      "FROM (VALUES (1, 2), (3, 3), (10, 8)) t(x, xm)").fetchall()[0]
    assert got[0] == pytest.approx(1.0)
    assert got[1] == pytest.approx(m.il1s([1, 3, 10], [2, 3, 8]))


@pytest.mark.parametrize("sql, message", [
    ("SELECT mae('a', 'b')", "mae: x and xm must be numbers, got VARCHAR"),
    ("SELECT il1s(x, 'b') FROM (VALUES (1), (2)) t(x)", "il1s: x and xm must be numbers, got VARCHAR"),
    ("SELECT mse(x, 'nan'::DOUBLE) FROM (VALUES (1), (2)) t(x)", "mse: x or xm contains NaN or an infinity"),
    ("SELECT il1(x, 'inf'::DOUBLE) FROM (VALUES (1), (2)) t(x)", "il1: x or xm contains NaN or an infinity"),
    ("SELECT rank_bounded_mae(x, 'nan'::DOUBLE) FROM (VALUES (1), (2)) t(x)", "rank_bounded_mae: xm contains nan"),
    ("SELECT record_linkage([x, x], [x]) FROM (VALUES (1), (2)) t(x)",
     "record_linkage: x and xm must have the same number of values per record, got 2 and 1"),
    ("SELECT record_linkage(CASE WHEN x = 1 THEN [x, x] ELSE [x] END, [x]) FROM (VALUES (1), (2)) t(x)",
     "record_linkage: x row vectors must all have the same length"),
    ("SELECT record_linkage(x, x) FROM (VALUES (1), (2)) t(x)",
     "record_linkage: x must be a list of numbers such as list(column) gives, got INTEGER"),
])  # every invalid value of every parameter's kind is the generated contract's (tests/sql/test_contract.py)
def test_bad_input_gives_a_clear_error(con, sql, message):
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql).fetchall()
    assert message in str(info.value)


def test_evaluate_masking_returns_the_tidy_table(con, pairs):
    con.execute("CREATE TABLE o AS SELECT id, a, b, c FROM j")
    con.execute('CREATE TABLE "masked t" AS SELECT id, am AS a, bm AS b, cm AS c FROM j ORDER BY random()')
    got = con.execute("SELECT * FROM evaluate_masking('o', 'masked t', 'id')").df()
    assert list(got.columns) == ["measure", "column", "value", "note"]
    want = m.evaluate(pairs[["a", "b", "c"]].to_numpy(), pairs[["am", "bm", "cm"]].to_numpy(), ["a", "b", "c"])
    assert len(got) == len(want)
    for (_, row), w in zip(got.iterrows(), want):
        assert (row["measure"], None if pd.isna(row["column"]) else row["column"]) == (w.measure, w.column)
        assert row["value"] == pytest.approx(w.value, rel=1e-12)
    named = con.execute("SELECT value FROM evaluate_masking('o', 'masked t', ['id'], columns := ['c', 'a']) "
                        "WHERE measure = 'record_linkage' AND \"column\" IS NULL").fetchall()
    assert named == [(m.record_linkage(pairs[["c", "a"]].to_numpy(), pairs[["cm", "am"]].to_numpy()),)]


def test_evaluate_masking_reports_undefined_measures_and_mismatched_columns(con):
    con.execute("CREATE TABLE o AS SELECT i AS id, i * 1.5 AS x, 7 AS k FROM range(20) r(i)")
    con.execute("CREATE TABLE m1 AS SELECT id, round(x) AS x, 7 AS k FROM o")
    rows = {(r[0], r[1]): r[2:] for r in con.execute("FROM evaluate_masking('o', 'm1', 'id')").fetchall()}
    assert rows["il1s", "k"][0] is None and "constant" in rows["il1s", "k"][1]
    assert rows["il1s", "x"][0] == pytest.approx(m.il1s(np.arange(20) * 1.5, np.round(np.arange(20) * 1.5)))
    con.execute("CREATE TABLE m2 AS SELECT id, k, round(x) AS x FROM o")
    with pytest.raises(duckdb.Error, match="evaluate_masking: the original table's columns"):
        con.execute("FROM evaluate_masking('o', 'm2', 'id')").fetchall()
    assert len(con.execute("FROM evaluate_masking('o', 'm2', 'id', columns := ['x'])").fetchall()) > 0


def test_evaluate_masking_quotes_names_and_never_executes_them(con):
    con.execute('CREATE TABLE "o""; DROP TABLE keep; --" ("my id" INTEGER, "select" DOUBLE, "x\'y" DOUBLE)')
    con.execute("CREATE TABLE keep AS SELECT 1 AS a")
    con.execute('INSERT INTO "o""; DROP TABLE keep; --" VALUES (1, 1, 10), (2, 2, 20), (3, 4, 25)')
    con.execute('CREATE TABLE m AS SELECT "my id", "select" + 0.5 AS "select", "x\'y" FROM "o""; DROP TABLE keep; --"')
    rows = con.execute("""SELECT "column", value FROM evaluate_masking('o"; DROP TABLE keep; --', 'm', 'my id')
                          WHERE measure = 'mae'""").fetchall()
    assert rows == [("select", 0.5), ("x'y", 0.0), (None, 0.25)]
    assert con.execute("SELECT * FROM keep").fetchall() == [(1,)]


def test_pure_sql_measures_work_in_a_plain_duckdb_connection():
    from duckdb_sdc.sql import sql_files

    plain = duckdb.connect()
    for _, text in sql_files():
        plain.execute(text)
    got = plain.execute("SELECT mae(x, xm), il1s(x, xm), sse_sst(x, xm) FROM (VALUES (1, 2), (3, 3), (10, 8)) t(x, xm)").fetchall()[0]
    assert got == pytest.approx((1.0, m.il1s([1, 3, 10], [2, 3, 8]), m.sse_sst([1, 3, 10], [2, 3, 8])))
    plain.close()
