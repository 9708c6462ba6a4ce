"""Multivariate MDAV, Mondrian, suppression and dynamic k through SQL: alignment, strata, NULLs, types,
errors, table forms."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from duckdb_sdc.methods import multivariate as mv
from duckdb_sdc.methods import protection
from duckdb_sdc.methods import sensitivity as sv
from methods.test_sensitivity_protection import audited

COLS = ["income", "expenses", "savings"]


@pytest.fixture
def people(con):
    rng = np.random.default_rng(0)
    n = 500
    df = pd.DataFrame({
        "id": np.arange(n),
        "region": rng.choice(["north", "south", "east"], n),
        "income": np.round(rng.lognormal(10, 0.8, n)),
        "expenses": np.round(rng.lognormal(9, 0.5, n)),
        "savings": np.round(rng.lognormal(8, 1.0, n), 2),
    })
    df.loc[rng.choice(n, 12, replace=False), "income"] = np.nan
    df.loc[rng.choice(n, 8, replace=False), "savings"] = np.nan
    con.execute("CREATE TABLE people AS SELECT id, region, income::BIGINT AS income, expenses::INTEGER AS expenses, "
                "savings::DECIMAL(12,2) AS savings FROM df")
    return df


METHODS = [
    ("mdav_multi", "", lambda X, k: mv.mdav_multi_partition(X, k)),
    ("mdav_multi", ", remainder := 'nearest'", lambda X, k: mv.mdav_multi_partition(X, k, remainder="nearest")),
    ("mdav_multi", ", standardise := false", lambda X, k: mv.mdav_multi_partition(X, k, standardise=False)),
    ("mondrian", "", lambda X, k: mv.mondrian_partition(X, k)),
    ("mondrian", ", mode := 'relaxed'", lambda X, k: mv.mondrian_partition(X, k, "relaxed")),
]
IDS = ["mdav", "mdav-nearest", "mdav-raw", "mondrian-strict", "mondrian-relaxed"]


def _complete(df):
    sub = df.sort_values("id")
    ok = sub[COLS].notna().all(axis=1).to_numpy()
    return sub, ok


@pytest.mark.parametrize("method, opts, partition", METHODS, ids=IDS)
def test_each_record_carries_its_own_clusters_centroid_whatever_the_input_order(con, people, method, opts, partition):
    sql = (f"SELECT unnest(l).id, unnest({method}_round(list_transform(l, lambda s: [s.income, s.expenses, s.savings]), "
           f"4{opts})) FROM (SELECT list(struct_pack(id := id, income := income, expenses := expenses, "
           "savings := savings) ORDER BY {order}) AS l FROM people)")
    a = dict(con.execute(sql.format(order="id")).fetchall())
    b = dict(con.execute(sql.format(order="income DESC NULLS FIRST, id DESC")).fetchall())
    sub, ok = _complete(people)
    X = sub[COLS].to_numpy(float)[ok]
    expected = mv.centroids(X, (lab := partition(X, 4)))[lab]
    for row_id, value in zip(sub["id"][ok], expected):
        np.testing.assert_allclose(a[row_id], value, rtol=1e-12)
    for row_id in sub["id"][~ok]:
        assert a[row_id] is None
    # the input order decides only ties (none here); the sums may differ in the last bit
    assert a.keys() == b.keys()
    for row_id, value in a.items():
        assert (value is None and b[row_id] is None) or np.allclose(value, b[row_id], rtol=1e-12)


@pytest.mark.parametrize("method, opts, partition", METHODS, ids=IDS)
def test_labels_and_group_by_strata(con, people, method, opts, partition):
    rows = con.execute(f"SELECT region, list(id ORDER BY id), {method}_labels(list([income, expenses, savings] "
                       f"ORDER BY id), 3{opts}) FROM people GROUP BY region").fetchall()
    assert len(rows) == 3
    for region, ids, labels in rows:
        sub, ok = _complete(people[people["region"] == region])
        assert ids == sub["id"].tolist()
        expected = partition(sub[COLS].to_numpy(float)[ok], 3)
        assert [lab for lab, good in zip(labels, ok) if good] == expected.tolist()
        assert all(lab is None for lab, good in zip(labels, ok) if not good)


def test_incomplete_lists(con):
    """(NULL, empty and all-NULL lists are the generated contract's.)"""
    got = con.execute("SELECT mondrian_round([NULL, [1, NULL]]::INT[][], 2), "
                      "mdav_multi_labels([[1, 2], NULL, [3, NULL], [5, 6], [7, 8]], 2)").fetchone()
    assert got == ([None, None], [0, None, None, 0, 0])


@pytest.mark.parametrize("sql_type", ["INTEGER", "BIGINT", "DECIMAL(12,2)", "FLOAT", "DOUBLE", "HUGEINT", "UBIGINT"])
def test_numeric_record_types_are_accepted(con, sql_type):
    got = con.execute(f"SELECT mdav_multi_round(list([x::{sql_type}, (x * 2)::{sql_type}] ORDER BY x), 2) "
                      "FROM (VALUES (1), (2), (10), (12)) t(x)").fetchone()[0]
    assert got == [[1.5, 3.0], [1.5, 3.0], [11.0, 22.0], [11.0, 22.0]]
    fixed = con.execute(f"SELECT mondrian_labels(list([x, x]::{sql_type}[2] ORDER BY x), 2) "
                        "FROM (VALUES (1), (2), (10), (12)) t(x)").fetchone()[0]
    assert fixed == [0, 0, 1, 1]


# bad lists and every invalid value of every parameter's kind are the generated contract's
# (tests/sql/test_contract.py); what it does not build:
@pytest.mark.parametrize("sql, message", [
    ("SELECT mdav_multi_round([[1, 2], [3, 4, 5]], 1)",
     "mdav_multi_round: every record in rows must have the same number of attributes: record 2 has 3, "
     "the first non-NULL one has 2"),
    ("SELECT mdav_multi_labels([[1, 2], [3, 4], [5, NULL]], 3)",
     "mdav_multi_labels: k = 3 is larger than the number of records without NULL attributes (2)"),
    ("SELECT mdav_multi_round([[], []]::INT[][], 1)", "mdav_multi_round: the records in rows must have at least one attribute"),
    ("SELECT dominance_merge([[1], [2]], [0], 1, 0.5)", "dominance_merge: clusters has 1 entries but rows has 2 records"),
    ("SELECT p_percent_merge([[1], [2]], NULL, 0.5)", "p_percent_merge: clusters must not be NULL when rows is not"),
    ("SELECT p_percent_suppress([[1], [-2]], [0, 0], 0.1)", "p_percent_suppress: rows contains -2"),
])
def test_bad_input_gives_a_clear_error(con, sql, message):
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql).fetchall()
    assert message in str(info.value)


def test_a_stratum_smaller_than_k_is_an_error(con, people):
    with pytest.raises(duckdb.Error, match="mdav_multi_round: k = 400 is larger than the number of records"):
        con.execute("SELECT region, mdav_multi_round(list([income, savings]), 400) FROM people GROUP BY region").fetchall()
    with pytest.raises(duckdb.Error, match="mondrian_round_table: k = 400 is larger"):
        con.execute("SELECT * FROM mondrian_round_table('people', ['income'], 400, strata := 'region')").fetchall()


@pytest.mark.parametrize("method, opts, partition", METHODS[:1] + METHODS[3:4], ids=["mdav", "mondrian"])
def test_table_form_masks_the_columns_in_place_per_stratum(con, people, method, opts, partition):
    got = con.execute(f"SELECT * FROM {method}_round_table('people', ['income', 'expenses', 'savings'], 3"
                      f"{opts}, strata := 'region') ORDER BY id").df()
    assert list(got.columns) == ["id", "region", "income", "expenses", "savings"]
    assert got["region"].tolist() == people.sort_values("id")["region"].tolist()
    for region, sub in people.groupby("region"):
        sub, ok = _complete(sub)
        X = sub[COLS].to_numpy(float)[ok]
        expected = mv.centroids(X, (lab := partition(X, 3)))[lab]
        mine = got.set_index("id").loc[sub["id"]]
        np.testing.assert_allclose(mine[COLS].to_numpy(float)[ok], expected, rtol=1e-12)
        assert mine[COLS].isna().to_numpy()[~ok].all()
    same = con.execute(f"SELECT * FROM {method}_round_table('people', ['income', 'expenses', 'savings'], 3"
                       f"{opts}, strata := ['region']) ORDER BY id").df()
    pd.testing.assert_frame_equal(got, same)


def test_labels_table_adds_or_replaces_the_cluster_column(con, people):
    got = con.execute("SELECT * FROM mdav_multi_labels_table('people', ['income', 'savings'], 4) ORDER BY id").df()
    assert list(got.columns) == ["id", "region", "income", "expenses", "savings", "cluster"]
    sub, _ = _complete(people)
    ok = sub[["income", "savings"]].notna().all(axis=1).to_numpy()
    expected = mv.mdav_multi_partition(sub[["income", "savings"]].to_numpy(float)[ok], 4)
    assert got["cluster"][ok].astype(int).tolist() == expected.tolist()
    assert got["cluster"][~ok].isna().all()
    pd.testing.assert_series_equal(got["income"], con.execute("SELECT income FROM people ORDER BY id").df()["income"])
    con.execute("CREATE TABLE clustered AS SELECT * FROM mondrian_labels_table('people', 'income', 5, label_col := 'region')")
    cols = [r[0] for r in con.execute("DESCRIBE clustered").fetchall()]
    assert cols == ["id", "income", "expenses", "savings", "region"]


def test_table_form_quotes_names_and_never_executes_them(con):
    con.execute('CREATE TABLE "we""ird; DROP TABLE keep; --" ("my col" DOUBLE, "select" INTEGER, "x" INTEGER)')
    con.execute("CREATE TABLE keep AS SELECT 1 AS a")
    con.execute("""INSERT INTO "we""ird; DROP TABLE keep; --" VALUES (1, 1, 10), (2, 1, 20), (3, 2, 5), (10, 2, 7)""")
    got = con.execute("""SELECT * FROM mdav_multi_round_table('we"ird; DROP TABLE keep; --', ['my col', 'x'], 2,
                         strata := 'select') ORDER BY 1""").fetchall()
    assert got == [(1.5, 1, 15.0), (1.5, 1, 15.0), (6.5, 2, 6.0), (6.5, 2, 6.0)]
    assert con.execute("SELECT * FROM keep").fetchall() == [(1,)]
    with pytest.raises(duckdb.Error):
        con.execute("SELECT * FROM mdav_multi_round_table('keep', ['a''); DROP TABLE keep; --'], 1)").fetchall()
    with pytest.raises(duckdb.Error, match="k must be an integer"):
        con.execute("SELECT * FROM mondrian_round_table('keep', ['a'], '1); DROP TABLE keep; --')").fetchall()
    assert con.execute("SELECT * FROM keep").fetchall() == [(1,)]


def test_table_form_errors(con):
    """(Empty tables, missing columns and the names' kinds are the generated contract's.)"""
    con.execute("CREATE TABLE e (id INTEGER, x DOUBLE, y DOUBLE)")
    with pytest.raises(duckdb.Error, match="mdav_multi_round_table: cols names column 'X' twice"):
        con.execute("SELECT * FROM mdav_multi_round_table('e', ['x', 'X'], 3)").fetchall()
    con.execute("CREATE TABLE s (id INTEGER, x VARCHAR, y DOUBLE)")
    con.execute("INSERT INTO s VALUES (1, 'a', 2)")
    with pytest.raises(duckdb.Error, match="mondrian_round_table: column x must be numeric, got VARCHAR"):
        con.execute("SELECT * FROM mondrian_round_table('s', ['x', 'y'], 2)").fetchall()


@pytest.mark.parametrize("kind, args, rule", [
    ("dominance", "2, 0.8", sv.dominance_rule(2, 0.8)),
    ("dominance", "1, 0.6, absolute := true", sv.dominance_rule(1, 0.6, absolute=True)),
    ("p_percent", "0.25", sv.p_percent_rule(0.25)),
])
def test_suppression_and_dynamic_k_equal_the_numpy_layer(con, people, kind, args, rule):
    sub, ok = _complete(people)
    X = sub[COLS].to_numpy(float)[ok]
    labels = mv.mdav_multi_partition(X, 3)
    base = "FROM (SELECT list([income, expenses, savings] ORDER BY id) AS r FROM people)"
    s = con.execute(f"SELECT {kind}_suppress(r, mdav_multi_labels(r, 3), {args}) {base}").fetchone()[0]
    out = protection.suppress(X, labels, rule)
    audited(X, labels, out, rule.absolute)  # the LP audit of the pattern (issue 33)
    assert (s["primary_cells"], s["secondary_cells"], s["unprotected_cells"]) \
        == (out.primary.sum(), out.secondary.sum(), out.unprotected.sum())
    released = [v for v, good in zip(s["release"], ok) if good]
    assert all(v is None for v, good in zip(s["release"], ok) if not good)
    got = np.array([[np.nan if x is None else x for x in v] for v in released])
    np.testing.assert_allclose(got, out.release, rtol=1e-12)
    merged = con.execute(f"SELECT {kind}_merge(r, mdav_multi_labels(r, 3), {args}) {base}").fetchone()[0]
    assert [m for m, good in zip(merged, ok) if good] == sv.merge_sensitive(X, labels, rule).tolist()
    assert all(m is None for m, good in zip(merged, ok) if not good)


def test_records_with_a_null_cluster_take_no_part(con):
    got = con.execute("SELECT dominance_suppress([[1], [2], [100], [4], [5]], [0, 0, NULL, 1, 1], 1, 0.9, "
                      "secondary := false)").fetchone()[0]
    assert got == {"release": [[1.5], [1.5], None, [4.5], [4.5]], "primary_cells": 0, "secondary_cells": 0,
                   "unprotected_cells": 0}
    # 50 > 0.9 (4 + 50): the second cluster merges into the first; 100 has no cluster and is ignored
    assert con.execute("SELECT dominance_merge([[1], [2], [100], [4], [50]], [0, 0, NULL, 1, 1], 1, 0.9)").fetchone()[0] \
        == [0, 0, None, 0, 0]
    assert con.execute("SELECT dominance_merge([[1], [2], [100], [4], [5]], [0, 0, NULL, 7, 7], 1, 0.9)").fetchone()[0] \
        == [0, 0, None, 1, 1]


def test_suppression_and_dynamic_k_per_stratum(con, people):
    rows = con.execute("""
        SELECT region, p_percent_merge(r, mdav_multi_labels(r, 3), 0.5),
               (dominance_suppress(r, mdav_multi_labels(r, 3), 1, 0.6)).primary_cells
        FROM (SELECT region, list([income, expenses, savings] ORDER BY id) AS r FROM people GROUP BY region)""").fetchall()
    assert len(rows) == 3
    for region, merged, primary in rows:
        sub, ok = _complete(people[people["region"] == region])
        X = sub[COLS].to_numpy(float)[ok]
        labels = mv.mdav_multi_partition(X, 3)
        assert [m for m, good in zip(merged, ok) if good] == sv.merge_sensitive(X, labels, sv.p_percent_rule(0.5)).tolist()
        out = protection.suppress(X, labels, sv.dominance_rule(1, 0.6))
        audited(X, labels, out, False)
        assert primary == out.primary.sum()
