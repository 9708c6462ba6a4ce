"""The DP / iDP functions through SQL: equal to the numpy layer at a seed, NULLs, strata, fresh noise
without a seed, the table forms and the budget split, errors."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from duckdb_sdc.methods import dp
from duckdb_sdc.params import stratum_seed

CALLS = {  # SQL arguments after xs, and the numpy call with the same meaning
    "idp_cbls": ("5, 0.8, seed := {seed}", lambda x, s: dp.idp_cbls(x, 5, 0.8, seed=s)),
    "idp_ls": ("5, 0.8, 0, 2e5, seed := {seed}", lambda x, s: dp.idp_ls(x, 5, 0.8, 0, 2e5, seed=s)),
    "dp_um": ("5, 0.8, 0, 2e5, seed := {seed}", lambda x, s: dp.dp_um(x, 5, 0.8, 0, 2e5, seed=s)),
    "dp_laplace": ("0.8, 0, 2e5, seed := {seed}", lambda x, s: dp.dp_laplace(x, 0.8, 0, 2e5, seed=s)),
}


@pytest.fixture
def people(con):
    rng = np.random.default_rng(0)
    n = 600
    df = pd.DataFrame({
        "id": np.arange(n),
        "region": rng.choice(["north", "south", "east"], n),
        "income": np.round(rng.lognormal(10, 0.8, n)),
        "savings": np.round(rng.lognormal(8, 1.0, n)),
    })
    df.loc[rng.choice(n, 25, replace=False), "income"] = np.nan
    con.execute("CREATE TABLE people AS SELECT id, region, income::BIGINT AS income, savings FROM df")
    return df


@pytest.mark.parametrize("name", list(CALLS))
def test_list_function_equals_numpy_at_a_seed_with_nulls_in_place(con, people, name):
    args, numpy_call = CALLS[name]
    got = con.execute(f"SELECT {name}(list(income ORDER BY id), {args.format(seed=42)}) FROM people").fetchall()[0][0]
    x = people.sort_values("id")["income"].to_numpy()
    valid = ~np.isnan(x)
    expected = numpy_call(x[valid], 42)
    assert [g for g, ok in zip(got, valid) if not ok] == [None] * int((~valid).sum())
    np.testing.assert_array_equal(np.array([g for g, ok in zip(got, valid) if ok]), expected)


@pytest.mark.parametrize("name", list(CALLS))
def test_group_by_releases_each_stratum_with_its_own_call(con, people, name):
    args, numpy_call = CALLS[name]
    rows = con.execute(f"SELECT region, list(id ORDER BY id), {name}(list(income ORDER BY id), "
                       f"{args.format(seed='hash(region) % 1000')}), hash(region) % 1000 "
                       "FROM people GROUP BY region").fetchall()
    assert len(rows) == 3
    for region, ids, released, seed in rows:
        sub = people[people["region"] == region].sort_values("id")
        assert ids == sub["id"].tolist()
        x = sub["income"].to_numpy()
        valid = ~np.isnan(x)
        got = np.array([r for r, ok in zip(released, valid) if ok])
        np.testing.assert_array_equal(got, numpy_call(x[valid], int(seed)))


def test_without_a_seed_every_call_draws_fresh_noise(con, people):
    a, b = con.execute("SELECT idp_cbls(list(income ORDER BY id), 5, 1.0), idp_cbls(list(income ORDER BY id), 5, 1.0) "
                       "FROM people").fetchall()[0]
    c = con.execute("SELECT idp_cbls(list(income ORDER BY id), 5, 1.0) FROM people").fetchall()[0][0]
    assert a != b and a != c
    d, e = con.execute("SELECT idp_cbls(list(income ORDER BY id), 5, 1.0, seed := 3), "
                       "idp_cbls(list(income ORDER BY id), 5, 1.0, seed := 3) FROM people").fetchall()[0]
    assert d == e


def test_random_functions_are_registered_with_side_effects(con):
    rows = dict(con.execute("SELECT function_name, has_side_effects FROM duckdb_functions() "
                            "WHERE function_name IN ('__sdc_idp_cbls', '__sdc_idp_ls', '__sdc_dp_um', "
                            "'__sdc_dp_laplace', '__sdc_idp_sensitivity')").fetchall())
    assert rows == {"__sdc_idp_cbls": True, "__sdc_idp_ls": True, "__sdc_dp_um": True,
                    "__sdc_dp_laplace": True, "__sdc_idp_sensitivity": False}


def test_a_cluster_shares_one_released_value(con):
    got = con.execute("SELECT idp_cbls([1, 2, 3, 10, 11, 12, 20, 21, 22, 23], 3, 1.0)").fetchall()[0][0]
    assert got[0] == got[1] == got[2] and got[3] == got[4] == got[5] and len(set(got[6:])) == 1
    assert len(set(got)) == 3


def test_idp_sensitivity_equals_numpy(con, people):
    x = people.dropna().sort_values("id")["income"].to_numpy()
    for mechanism in dp.MECHANISMS:
        got = con.execute(f"SELECT idp_sensitivity(list(income ORDER BY id), 4, '{mechanism}', 0, 2e5) "
                          "FROM people WHERE income IS NOT NULL").fetchall()[0][0]
        np.testing.assert_array_equal(got, dp.idp_sensitivity(x, 4, mechanism, 0, 2e5))
    assert con.execute("SELECT idp_sensitivity([1, 2, 2, 5, 9, 30], 6, 'idp_cbls')").fetchall()[0][0] == [49 / 6] * 6


def test_dp_budget_reports_the_split(con):
    equal = con.execute("SELECT * FROM dp_budget(['a', 'b', 'c'], 0.9)").fetchall()
    assert [r[0] for r in equal] == ["a", "b", "c"]
    assert [r[1] for r in equal] == pytest.approx([0.3, 0.3, 0.3])
    got = con.execute("SELECT * FROM dp_budget(['a', 'b'], 1.0, split := [1, 3])").fetchall()
    assert got == [("a", 0.25), ("b", 0.75)]
    assert con.execute("SELECT * FROM dp_budget('a', 2)").fetchall() == [("a", 2.0)]
    budgets = dp.split_epsilon(0.7, ["a", "b", "c"], [1, 2, 4])
    sql = dict(con.execute("SELECT * FROM dp_budget(['a', 'b', 'c'], 0.7, split := [1, 2, 4])").fetchall())
    assert sql == budgets  # exactly the same floating-point budgets




def test_table_form_releases_columns_in_place_with_the_split_budget(con, people):
    got = con.execute("SELECT * FROM dp_um_table('people', ['income', 'savings'], 5, 1.0, 0, [2e5, 1e5], "
                      "split := [3, 1], seed := 11) ORDER BY id").df()
    assert list(got.columns) == ["id", "region", "income", "savings"]  # nothing else is written
    assert got["region"].tolist() == people.sort_values("id")["region"].tolist()
    # rows are listed in the order of their whole content: (id, ...) here, so by id; column c of the
    # only stratum draws with stratum_seed(11, c, 0)
    seeds = [stratum_seed(11, "income", 0), stratum_seed(11, "savings", 0)]
    x = people.sort_values("id")
    valid = x["income"].notna().to_numpy()
    income = dp.dp_um(x["income"].to_numpy()[valid], 5, 0.75, 0, 2e5, seed=seeds[0])
    savings = dp.dp_um(x["savings"].to_numpy(), 5, 0.25, 0, 1e5, seed=seeds[1])
    np.testing.assert_array_equal(got["income"].to_numpy()[valid], income)
    assert got["income"].isna().to_numpy().tolist() == (~valid).tolist()
    np.testing.assert_array_equal(got["savings"].to_numpy(), savings)


def test_table_form_with_strata_and_seed_repeats_whatever_the_physical_order(con, people):
    con.execute("CREATE TABLE shuffled AS SELECT * FROM people ORDER BY hash(id)")
    sql = ("SELECT id, income, savings FROM idp_cbls_table('{t}', ['income', 'savings'], 4, 2.0, lb := 0, "
           "seed := 5, strata := 'region') ORDER BY id")
    a = con.execute(sql.format(t="people")).fetchall()
    b = con.execute(sql.format(t="shuffled")).fetchall()
    assert a == b
    got = {row[0]: row[1:] for row in a}
    for i, (region, sub) in enumerate(sorted(people.groupby("region"))):  # strata numbered in value order
        sub = sub.sort_values("id")
        seeds = [stratum_seed(5, "income", i), stratum_seed(5, "savings", i)]
        valid = sub["income"].notna().to_numpy()
        income = dp.idp_cbls(sub["income"].to_numpy()[valid], 4, 1.0, lb=0, seed=seeds[0])
        savings = dp.idp_cbls(sub["savings"].to_numpy(), 4, 1.0, lb=0, seed=seeds[1])
        np.testing.assert_array_equal([got[i][0] for i in sub["id"][valid]], income)
        np.testing.assert_array_equal([got[i][1] for i in sub["id"]], savings)


def test_table_form_without_a_seed_differs_between_runs(con, people):
    sql = "SELECT id, savings FROM dp_laplace_table('people', 'savings', 1.0, 0, 1e5) ORDER BY id"
    assert con.execute(sql).fetchall() != con.execute(sql).fetchall()


def test_table_form_of_each_mechanism_runs_and_clamps(con, people):
    for name, args in [("idp_cbls", "3, 0.5, 0, 1e5"), ("idp_ls", "3, 0.5, 0, 1e5"),
                       ("dp_um", "3, 0.5, 0, 1e5"), ("dp_laplace", "0.5, 0, 1e5")]:
        lo, hi = con.execute(f"SELECT min(savings), max(savings) FROM {name}_table('people', 'savings', {args})").fetchall()[0]
        assert 0 <= lo and hi <= 1e5


# NULL, empty and all-NULL lists, bad lists, every invalid value of every parameter's kind and missing
# columns are the generated contract's (tests/sql/test_contract.py); what it does not build:
@pytest.mark.parametrize("sql, message", [
    ("SELECT idp_cbls([1, NULL, 3], 3, 1)", "idp_cbls: k = 3 is larger than the number of non-NULL values (2)"),
    ("SELECT dp_um([1, 2, 3], 1, 1, 5, 5)", "dp_um: lb = 5 must be smaller than ub = 5"),
    ("SELECT * FROM dp_budget(['a', 'b'], 1, split := [1, -1])", "dp_budget: split weight must be a finite number > 0, got -1.0"),
])
def test_bad_input_gives_a_clear_error(con, people, sql, message):
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql).fetchall()
    assert message in str(info.value)
