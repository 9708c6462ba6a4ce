"""The microaggregation functions through SQL: alignment, strata, NULLs, types, errors, table form."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import duckdb

from duckdb_sdc.methods import microaggregate, partition

METHODS = ["mdav", "vmdav", "oma", "ranking"]


def _masked_by_id(con, sql):
    return dict(con.execute(sql).fetchall())


@pytest.mark.parametrize("method", METHODS)
def test_each_row_carries_its_own_groups_value_whatever_the_input_order(con, people, method):
    sql = (f"SELECT unnest(l).id, unnest({method}_round(list_transform(l, lambda s: s.x), 5)) "
           f"FROM (SELECT list(struct_pack(id := id, x := income) ORDER BY {{order}}) AS l FROM people)")
    a = _masked_by_id(con, sql.format(order="id"))
    b = _masked_by_id(con, sql.format(order="hash(id)"))
    c = _masked_by_id(con, sql.format(order="income DESC NULLS FIRST, id DESC"))
    assert a == b == c
    x = people.dropna().sort_values("id")
    expected = microaggregate(x["income"].to_numpy(), 5, method)
    for row_id, value in zip(x["id"], expected):
        assert a[row_id] == pytest.approx(value, rel=1e-12)
    for row_id in people.loc[people["income"].isna(), "id"]:
        assert a[row_id] is None


@pytest.mark.parametrize("method", METHODS)
def test_group_by_masks_each_stratum_independently(con, people, method):
    rows = con.execute(
        f"SELECT region, list(id ORDER BY id), {method}_round(list(income ORDER BY id), 4) "
        "FROM people GROUP BY region").fetchall()
    assert len(rows) == 3
    for region, ids, masked in rows:
        sub = people[people["region"] == region].sort_values("id")
        assert ids == sub["id"].tolist()
        valid = sub["income"].notna().to_numpy()
        expected = microaggregate(sub["income"].to_numpy()[valid], 4, method)
        got = np.array([m for m, ok in zip(masked, valid) if ok], dtype=float)
        np.testing.assert_allclose(got, expected, rtol=1e-12)
        assert all(m is None for m, ok in zip(masked, valid) if not ok)


@pytest.mark.parametrize("method", METHODS)
def test_labels_function_gives_the_partition(con, method):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 30, 200).astype(float)
    got = con.execute(f"SELECT {method}_labels(?::DOUBLE[], 3)", [x.tolist()]).fetchone()[0]
    np.testing.assert_array_equal(got, partition(x, 3, method))


def test_labels_keep_nulls_in_place(con):
    got = con.execute("SELECT mdav_labels([5, NULL, 1, 9, NULL, 2, 8, 3], 3)").fetchone()[0]
    assert got == [1, None, 0, 1, None, 0, 1, 0]


@pytest.mark.parametrize("sql_type", ["INTEGER", "BIGINT", "DECIMAL(12,2)", "FLOAT", "DOUBLE", "HUGEINT",
                                      "SMALLINT", "UBIGINT"])
def test_numeric_column_types_are_accepted(con, sql_type):
    got = con.execute(f"SELECT mdav_round(list(x::{sql_type} ORDER BY x), 2) "
                      "FROM (VALUES (1), (2), (10), (12)) t(x)").fetchone()[0]
    assert got == [1.5, 1.5, 11.0, 11.0]


def test_median_representative_and_named_arguments(con):
    got = con.execute("SELECT oma_round([1, 2, 9, 20, 21, 22], 3, representative := 'median'), "
                      "vmdav_round([1, 2, 9, 20, 21, 22], k := 3, gamma := 0.5)").fetchone()
    assert got[0] == [2.0, 2.0, 2.0, 21.0, 21.0, 21.0]
    assert got[1] == [4.0, 4.0, 4.0, 21.0, 21.0, 21.0]


# NULL, empty and all-NULL lists, lists of the wrong type, NaN and infinities, and every invalid value of
# every parameter's kind are the generated contract's (tests/sql/test_contract.py); what it does not build:
@pytest.mark.parametrize("sql, message", [
    ("SELECT ranking_round([1, NULL, NULL], 2)", "ranking_round: k = 2 is larger than the number of non-NULL values (1)"),
])
def test_bad_input_gives_a_clear_error(con, sql, message):
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql).fetchall()
    assert message in str(info.value)


@pytest.mark.parametrize("method", METHODS)
def test_table_form_masks_the_column_in_place(con, people, method):
    got = con.execute(f"SELECT * FROM {method}_round_table('people', 'income', 5) ORDER BY id").df()
    assert list(got.columns) == ["id", "region", "income"]
    assert got["region"].tolist() == people.sort_values("id")["region"].tolist()
    listed = _masked_by_id(con, f"SELECT unnest(l).id, unnest({method}_round(list_transform(l, lambda s: s.x), 5)) "
                                "FROM (SELECT list(struct_pack(id := id, x := income)) AS l FROM people)")
    for row_id, value in zip(got["id"], got["income"]):
        if listed[row_id] is None:
            assert pd.isna(value)
        else:
            assert value == pytest.approx(listed[row_id], rel=1e-12)


def test_table_form_with_strata_equals_group_by(con, people):
    got = dict(con.execute("SELECT id, income FROM mdav_round_table('people', 'income', 4, strata := 'region')").fetchall())
    also = dict(con.execute("SELECT id, income FROM mdav_round_table('people', 'income', 4, strata := ['region'])").fetchall())
    assert got == also
    for region, sub in people.groupby("region"):
        sub = sub.sort_values("id").dropna()
        expected = microaggregate(sub["income"].to_numpy(), 4, "mdav")
        for row_id, value in zip(sub["id"], expected):
            assert got[row_id] == pytest.approx(value, rel=1e-12)


def test_table_form_quotes_names_and_never_executes_them(con):
    con.execute('CREATE TABLE "we""ird; DROP TABLE keep; --" ("my col" DOUBLE, "select" INTEGER)')
    con.execute("CREATE TABLE keep AS SELECT 1 AS a")
    con.execute('INSERT INTO "we""ird; DROP TABLE keep; --" VALUES (1, 1), (2, 1), (3, 2), (10, 2)')
    got = con.execute("SELECT * FROM mdav_round_table('we\"ird; DROP TABLE keep; --', 'my col', 2, "
                      "strata := 'select') ORDER BY 1").fetchall()
    assert got == [(1.5, 1), (1.5, 1), (6.5, 2), (6.5, 2)]
    assert con.execute("SELECT * FROM keep").fetchall() == [(1,)]
    with pytest.raises(duckdb.Error):
        con.execute("SELECT * FROM mdav_round_table('keep', 'a''); DROP TABLE keep; --', 1)").fetchall()
    with pytest.raises(duckdb.Error, match="k must be an integer"):
        con.execute("SELECT * FROM mdav_round_table('keep', 'a', '1); DROP TABLE keep; --')").fetchall()
    assert con.execute("SELECT * FROM keep").fetchall() == [(1,)]


def test_table_form_accepts_a_qualified_name(con, people):
    got = con.execute("SELECT count(*) FROM ranking_round_table('main.people', 'income', 5)").fetchone()
    assert got == (len(people),)


def test_table_form_reports_a_missing_column_and_keeps_an_empty_table_empty(con):
    con.execute("CREATE TABLE e (id INTEGER, x DOUBLE)")
    assert con.execute("SELECT * FROM mdav_round_table('e', 'x', 3)").fetchall() == []
    with pytest.raises(duckdb.BinderException,
                       match='Table "mdav_round_table: col of table e" does not have a column named "y"'):
        con.execute("SELECT * FROM mdav_round_table('e', 'y', 3)").fetchall()
    with pytest.raises(duckdb.BinderException,
                       match='Table "mdav_round_table: strata of table e" does not have a column named "r"'):
        con.execute("SELECT * FROM mdav_round_table('e', 'x', 3, strata := 'r')").fetchall()
    con.execute("CREATE TABLE s (id INTEGER, x VARCHAR)")
    con.execute("INSERT INTO s VALUES (1, '2')")
    with pytest.raises(duckdb.Error, match="mdav_round_table: column x must be numeric, got VARCHAR"):
        con.execute("SELECT * FROM mdav_round_table('s', 'x', 2)").fetchall()


def test_large_strata_masked_concurrently_match_numpy(con):
    # two strata of 300k values each: DuckDB's threads call the UDF at the same time and both take
    # the two-core sort path, which runs under one lock
    con.execute("SET threads = 2")
    con.execute("CREATE TABLE big AS SELECT i AS id, i % 2 AS g, floor(random() * 100000) AS x "
                "FROM range(600000) r(i)")
    rows = con.execute("SELECT g, list(x ORDER BY id), mdav_round(list(x ORDER BY id), 5) "
                       "FROM big GROUP BY g").fetchall()
    assert len(rows) == 2
    for _, xs, masked in rows:
        np.testing.assert_allclose(masked, microaggregate(np.array(xs), 5, "mdav"), rtol=1e-12)


def test_table_form_reads_views(con, people):
    con.execute("CREATE VIEW north AS SELECT * FROM people WHERE region = 'north'")
    got = con.execute("SELECT count(*), count(income) FROM oma_round_table('north', 'income', 3)").fetchall()
    assert got == con.execute("SELECT count(*), count(income) FROM north").fetchall()


def test_table_form_keeps_list_and_struct_columns_intact(con):
    con.execute("CREATE TABLE nested AS SELECT i AS id, [i, i + 1] AS tags, {'a': i, 'b': [i]} AS info, "
                "i * 1.0 AS x FROM range(6) r(i)")
    got = con.execute("SELECT * FROM mdav_round_table('nested', 'x', 3) ORDER BY id").fetchall()
    assert got == [(i, [i, i + 1], {"a": i, "b": [i]}, 1.0 if i < 3 else 4.0) for i in range(6)]


def test_multivariate_and_dp_table_forms_keep_nested_columns_intact(con):
    con.execute("CREATE TABLE nested AS SELECT i AS id, [i, i + 1] AS tags, {'a': i} AS info, "
                "i * 1.0 AS x, i * 2.0 AS y FROM range(6) r(i)")
    got = con.execute("SELECT id, tags, info FROM mdav_multi_round_table('nested', ['x', 'y'], 3) "
                      "ORDER BY id").fetchall()
    assert got == [(i, [i, i + 1], {"a": i}) for i in range(6)]
    got = con.execute("SELECT id, tags, info FROM idp_cbls_table('nested', 'x', 3, 1.0, seed := 1) "
                      "ORDER BY id").fetchall()
    assert got == [(i, [i, i + 1], {"a": i}) for i in range(6)]
