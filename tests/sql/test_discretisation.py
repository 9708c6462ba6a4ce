"""The discretisation functions through SQL: against the numpy layer, strata, NULLs, seeds, errors,
table form, and the pure-SQL Freedman-Diaconis aggregates."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from duckdb_sdc.methods import discretisation as disc
from duckdb_sdc.methods import microaggregate
from duckdb_sdc.methods.freedman_diaconis import freedman_diaconis, group_size_sorted
from duckdb_sdc.params import stratum_seed

METHODS = list(disc.METHODS)


def _by_id(con, sql):
    return dict(con.execute(sql).fetchall())


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("rep", ["mean", "median", "midpoint"])
def test_round_equals_the_numpy_layer_whatever_the_input_order(con, people, method, rep):
    sql = (f"SELECT unnest(l).id, unnest({method}_round(list_transform(l, lambda s: s.x), 5, '{rep}', seed := 3)) "
           f"FROM (SELECT list(struct_pack(id := id, x := income) ORDER BY {{order}}) AS l FROM people)")
    a = _by_id(con, sql.format(order="id"))
    x = people.dropna().sort_values("id")
    expected = disc.discretise(x["income"].to_numpy(), 5, method, rep, seed=3)
    for row_id, value in zip(x["id"], expected):
        assert a[row_id] == pytest.approx(value, rel=1e-12)
    for row_id in people.loc[people["income"].isna(), "id"]:
        assert a[row_id] is None
    if method != "rbd":  # deterministic: the same rounding whatever the order of the list
        assert _by_id(con, sql.format(order="hash(id)")) == a


@pytest.mark.parametrize("method", METHODS)
def test_labels_and_sizes_equal_the_numpy_layer(con, method):
    x = np.random.default_rng(1).integers(0, 30, 200).astype(float)
    extra = ", seed := 5" if method == "rbd" else ""
    labels, sizes = con.execute(f"SELECT {method}_labels(?::DOUBLE[], 4{extra}), {method}_sizes(?::DOUBLE[], 4{extra})",
                                [x.tolist(), x.tolist()]).fetchall()[0]
    np.testing.assert_array_equal(labels, disc.discretise_labels(x, 4, method, seed=5))
    np.testing.assert_array_equal(sizes, disc.attraction_sizes(x, 4, method, seed=5))


def test_labels_and_sizes_keep_nulls_in_place(con):
    got = con.execute("SELECT efd_labels([5, NULL, 1, 9, NULL, 2, 8, 3], 3), "
                      "efd_sizes([5, NULL, 1, 9, NULL, 2, 8, 3], 3)").fetchall()[0]
    assert got == ([1, None, 0, 2, None, 0, 2, 1], [2, None, 2, 2, None, 2, 2, 2])


@pytest.mark.parametrize("method", METHODS)
def test_group_by_rounds_each_stratum_independently(con, people, method):
    rows = con.execute(
        f"SELECT region, list(id ORDER BY id), {method}_round(list(income ORDER BY id), 4, seed := 9) "
        "FROM people GROUP BY region").fetchall()
    assert len(rows) == 3
    for region, ids, masked in rows:
        sub = people[people["region"] == region].sort_values("id")
        assert ids == sub["id"].tolist()
        valid = sub["income"].notna().to_numpy()
        expected = disc.discretise(sub["income"].to_numpy()[valid], 4, method, seed=9)
        got = np.array([m for m, ok in zip(masked, valid) if ok], dtype=float)
        np.testing.assert_allclose(got, expected, rtol=1e-12)
        assert all(m is None for m, ok in zip(masked, valid) if not ok)


def test_named_arguments_stochastic_and_seed(con):
    x = [1, 2, 3, 4, 10, 11, 12, 13, 30, 31]
    a = con.execute("SELECT kmd_round(?::DOUBLE[], 3, stochastic := true, seed := 42)", [x]).fetchall()[0][0]
    b = con.execute("SELECT kmd_round(?::DOUBLE[], c := 3, seed := 42, stochastic := true)", [x]).fetchall()[0][0]
    assert a == b
    np.testing.assert_array_equal(a, disc.kmd_round(np.array(x, float), 3, stochastic=True, seed=42))
    got = con.execute("SELECT rbd_round(?::DOUBLE[], 2, groups := 2, centroid := 'median', seed := 1)", [x]).fetchall()[0][0]
    np.testing.assert_array_equal(got, disc.rbd_round(np.array(x, float), 2, groups=2, centroid="median", seed=1))


def test_unseeded_random_functions_are_not_folded_into_one_call(con):
    # side_effects: two calls in one query, or one call per row, draw independently
    rows = con.execute("SELECT rbd_round(list_transform(range(200), lambda i: i::DOUBLE), 5) "
                       "FROM range(3)").fetchall()
    assert len({tuple(r[0]) for r in rows}) > 1
    a, b = con.execute("SELECT efd_round(l, 5, stochastic := true), efd_round(l, 5, stochastic := true) "
                       "FROM (SELECT list_transform(range(200), lambda i: i::DOUBLE) AS l)").fetchall()[0]
    assert a != b


def test_auto_is_accepted_wherever_c_or_k_is(con, people):
    x = people["income"].dropna().to_numpy()
    c = freedman_diaconis(x)
    k = group_size_sorted(np.sort(x))
    got = con.execute("SELECT efd_round(list(income ORDER BY id), 'auto'), mdav_round(list(income ORDER BY id), 'auto'), "
                      "fd_intervals(income), fd_group_size(income) FROM people").fetchall()[0]
    ordered = people.dropna().sort_values("id")["income"].to_numpy()
    np.testing.assert_allclose([v for v in got[0] if v is not None], disc.efd_round(ordered, c), rtol=1e-12)
    np.testing.assert_allclose([v for v in got[1] if v is not None], microaggregate(ordered, k, "mdav"), rtol=1e-12)
    assert got[2:] == (c, k)
    table = con.execute("SELECT count(*) FROM efd_round_table('people', 'income', 'auto', strata := 'region')").fetchall()
    assert table == [(600,)]
    # exact k-means with the Freedman-Diaconis c puts a skewed stratum's largest income alone: refused
    with pytest.raises(duckdb.Error, match=r"kmd_round_table: c = 'auto' chose \d+ intervals \(Freedman-Diaconis\) "
                                           r"and left a set of attraction of 1 value"):
        con.execute("SELECT count(*) FROM kmd_round_table('people', 'income', 'auto', strata := 'region')").fetchall()


def test_auto_on_0_to_199_and_one_outlier_is_refused_in_sql(con):
    """Issue 33 item 5's reproduction: efd_round(list(v), 'auto') returned all 201 values unchanged."""
    with pytest.raises(duckdb.Error, match=r"efd_round: c = 'auto' chose 29289 intervals"):
        con.execute("SELECT efd_round(list(v), 'auto') FROM (SELECT unnest(range(200))::DOUBLE AS v "
                    "UNION ALL SELECT 1e6)").fetchall()
    sizes = con.execute("SELECT list_min(efd_sizes(list(v), 'auto')) FROM (SELECT unnest(range(200))::DOUBLE AS v "
                        "UNION ALL SELECT 1e6)").fetchall()
    assert sizes == [(1,)]


def test_fd_aggregates_equal_the_numpy_rule_on_many_columns(con):
    rng = np.random.default_rng(2)
    cases = [rng.lognormal(0, s, n) for s, n in ((0.5, 50), (1.5, 3000), (3, 777))]
    cases += [np.r_[np.zeros(n0), rng.exponential(5, n1)] for n0, n1 in ((800, 200), (990, 10), (5, 0))]
    cases += [rng.integers(0, 4, 100).astype(float), np.array([7.0])]
    for x in cases:
        got = con.execute("SELECT fd_intervals(v), fd_group_size(v) FROM (SELECT unnest(?::DOUBLE[]) AS v)",
                          [x.tolist()]).fetchall()[0]
        # 'auto' group sizes are at least 2, the smallest group size the methods take
        assert got == (freedman_diaconis(x), max(2, group_size_sorted(np.sort(x)))), x[:10]


def test_constant_column_and_one_distinct_value(con):
    got = con.execute("SELECT ewd_round([4, 4, 4], 3), efd_labels([4, NULL, 4], 3), kmd_sizes([4, 4], 'auto'), "
                      "rbd_round([4, 4, 4], 2, seed := 1), efd_round([4, 4], 2, stochastic := true, seed := 1)").fetchall()[0]
    assert got == ([4.0, 4.0, 4.0], [0, None, 0], [2, 2], [4.0, 4.0, 4.0], [4.0, 4.0])


@pytest.mark.parametrize("stochastic", [False, True])
@pytest.mark.parametrize("method", METHODS)
def test_table_form_rounds_the_column_in_place(con, people, method, stochastic):
    """The table form hands the list function the rows in the order of their whole content (here the
    id order, id being the first column) and the seed stratum_seed(seed, column, 0)."""
    got = con.execute(f"SELECT * FROM {method}_round_table('people', 'income', 5, stochastic := {stochastic}, "
                      "seed := 1) ORDER BY id").df()
    assert list(got.columns) == ["id", "region", "income"]
    seed = stratum_seed(1, "income", 0)
    listed = _by_id(con, f"SELECT unnest(l).id, unnest({method}_round(list_transform(l, lambda s: s.x), 5, "
                         f"stochastic := {stochastic}, seed := {seed})) "
                         "FROM (SELECT list(struct_pack(id := id, x := income) ORDER BY id) AS l FROM people)")
    for row_id, value in zip(got["id"], got["income"]):
        if listed[row_id] is None:
            assert pd.isna(value)
        else:
            assert value == pytest.approx(listed[row_id], rel=1e-12)


def test_table_form_with_strata_and_options_equals_group_by(con, people):
    got = dict(con.execute("SELECT id, income FROM efd_round_table('people', 'income', 3, 'midpoint', "
                           "strata := ['region'])").fetchall())
    for region, sub in people.groupby("region"):
        sub = sub.sort_values("id").dropna()
        expected = disc.efd_round(sub["income"].to_numpy(), 3, "midpoint")
        for row_id, value in zip(sub["id"], expected):
            assert got[row_id] == pytest.approx(value, rel=1e-12)
