"""The dominance and p% rules as pure-SQL aggregate macros, and the sensitivity report."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from duckdb_sdc.methods import multivariate as mv
from duckdb_sdc.methods import protection
from duckdb_sdc.methods import sensitivity as sv
from methods.test_sensitivity import _boundary_cells, _random_cells


def _cells_table(con, cells, name="cells"):
    rows = [(i, v) for i, c in enumerate(cells) for v in c]
    df = pd.DataFrame(rows, columns=["cell", "value"])
    con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT cell, value::BIGINT AS value FROM df")


@pytest.mark.parametrize("n, r", [(1, 0.6), (2, 0.7), (3, 0.55), (2, 0.75), (1, 1.0)])
@pytest.mark.parametrize("r_sql", ["{r}", "{r}::DOUBLE"])
def test_dominance_macro_equals_the_numpy_layer(con, n, r, r_sql):
    cells = list(_random_cells(7, 150)) + list(_boundary_cells(r, "dominance", n))
    _cells_table(con, cells)
    got = dict(con.execute(f"SELECT cell, dominance_sensitive(value, {n}, {r_sql.format(r=r)}) FROM cells "
                           "GROUP BY cell").fetchall())
    assert got == {i: sv.dominance_sensitive(c, n, r) for i, c in enumerate(cells)}


@pytest.mark.parametrize("p", [0.1, 0.25, 0.55, 0.66, 0.7, 2.5])
def test_p_percent_macro_equals_the_numpy_layer(con, p):
    cells = list(_random_cells(8, 150)) + list(_boundary_cells(p, "p%"))
    _cells_table(con, cells)
    got = dict(con.execute(f"SELECT cell, p_percent_sensitive(value, {p}) FROM cells GROUP BY cell").fetchall())
    assert got == {i: sv.p_percent_sensitive(c, p) for i, c in enumerate(cells)}


def test_double_contributions_and_boundaries(con):
    got = con.execute("""
        SELECT cell, dominance_sensitive(v, 1, 0.7), p_percent_sensitive(v, 0.1)
        FROM (VALUES (1, 7.0), (1, 3.0), (2, 10.0), (2, 5.0), (2, 1.0), (3, 7.000001), (3, 3.0))
             t(cell, v) GROUP BY cell ORDER BY cell""").fetchall()
    assert got == [(1, False, True), (2, False, False), (3, True, True)]


def test_nulls_few_contributors_zero_totals(con):
    got = con.execute("""
        SELECT cell, dominance_sensitive(v, 2, 0.9), p_percent_sensitive(v, 0.1)
        FROM (VALUES (1, 5), (1, NULL), (1, 5), (2, 0), (2, 0), (2, 0), (3, NULL), (4, 9))
             t(cell, v) GROUP BY cell ORDER BY cell""").fetchall()
    assert got == [(1, True, True), (2, False, False), (3, None, None), (4, True, True)]


def test_negative_contributions(con):
    with pytest.raises(duckdb.Error, match=r"dominance_sensitive: value contains -5.0; the rule needs contributions >= 0"):
        con.execute("SELECT dominance_sensitive(v, 1, 0.6) FROM (VALUES (10), (-5)) t(v)").fetchall()
    with pytest.raises(duckdb.Error, match=r"p_percent_sensitive: value contains -5"):
        con.execute("SELECT p_percent_sensitive(v, 0.1) FROM (VALUES (10), (-5)) t(v)").fetchall()
    got = con.execute("SELECT dominance_sensitive(v, 1, 0.6, absolute := true), p_percent_sensitive(v, 0.2, "
                      "absolute := true) FROM (VALUES (10), (-5), (3)) t(v)").fetchone()
    assert got == (sv.dominance_sensitive([10, 5, 3], 1, 0.6), sv.p_percent_sensitive([10, 5, 3], 0.2))


# every invalid value of every parameter's kind is the generated contract's (tests/sql/test_contract.py);
# what it does not build:
@pytest.mark.parametrize("sql, message", [
    ("SELECT p_percent_sensitive(v, 'nan') FROM (VALUES (1)) t(v)", "p_percent_sensitive: p must be in (0, 1000000], got nan"),
    ("SELECT p_percent_sensitive(v, 2e6) FROM (VALUES (1)) t(v)", "p_percent_sensitive: p must be in (0, 1000000], got 2000000.0"),
    ("SELECT dominance_sensitive(v, 1, 0.5) FROM (VALUES (1.0), ('nan'::DOUBLE)) t(v)",
     "dominance_sensitive: value contains nan; NaN and infinite values are refused"),
    ("SELECT p_percent_sensitive(v, 0.1) FROM (VALUES (1.0), ('-inf'::DOUBLE)) t(v)",
     "p_percent_sensitive: value contains -inf; NaN and infinite values are refused"),
    ("SELECT p_percent_sensitive(v, 0.1, absolute := true) FROM (VALUES (1.0), ('inf'::DOUBLE)) t(v)",
     "p_percent_sensitive: value contains inf; NaN and infinite values are refused"),
])
def test_bad_parameters(con, sql, message):
    con.execute("CREATE TABLE t (c INTEGER, x INTEGER)")
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql).fetchall()
    assert message in str(info.value)


def test_p_from_r(con):
    got = con.execute("SELECT dominance_to_p_percent(0.8), dominance_to_p_percent(0.5)").fetchone()
    assert got == (pytest.approx(0.25), 1.0)
    assert got[0] == sv.dominance_to_p_percent(0.8)


def test_report_counts_sensitive_cells_per_attribute_and_overall(con):
    rng = np.random.default_rng(3)
    n = 300
    df = pd.DataFrame({"id": np.arange(n), "region": rng.choice(["a", "b"], n),
                       "x": np.round(rng.lognormal(5, 1.5, n)), "y": np.round(rng.lognormal(3, 0.3, n)),
                       "z": np.round(rng.lognormal(4, 1.0, n))})
    df.loc[[3, 17], "y"] = np.nan
    con.execute("CREATE TABLE firms AS SELECT * FROM df")
    con.execute("CREATE TABLE clustered AS SELECT * FROM mdav_multi_labels_table('firms', ['x', 'z'], 4, "
                "strata := 'region')")
    got = con.execute("SELECT * FROM sensitivity_report('clustered', ['x', 'y', 'z'], ['region', 'cluster'], "
                      "2, 0.7, 0.1)").fetchall()
    lab = con.execute("SELECT id, region, cluster FROM clustered ORDER BY id").df()
    key = (lab["region"] + ":" + lab["cluster"].astype(str)).to_numpy()
    expected = []
    totals = np.zeros(5)
    for col in ["x", "y", "z"]:
        ok = df[col].notna().to_numpy()
        _, codes = np.unique(key[ok], return_inverse=True)
        values = df[col].to_numpy()[ok][:, None]
        dom = sv.sensitive_cells(values, codes, sv.dominance_rule(2, 0.7))[:, 0]
        pp = sv.sensitive_cells(values, codes, sv.p_percent_rule(0.1))[:, 0]
        row = (len(dom), dom.sum(), pp.sum())
        expected.append((col, row[0], row[1], row[1] / row[0], row[2], row[2] / row[0]))
        totals += [row[0], row[1], 0, row[2], 0]
    expected.append(("(all)", totals[0], totals[1], totals[1] / totals[0], totals[3], totals[3] / totals[0]))
    assert len(got) == 4
    for g, e in zip(got, expected):
        assert g[0] == e[0] and tuple(g[1:3]) == tuple(e[1:3]) and g[4] == e[4]
        assert g[3] == pytest.approx(e[3]) and g[5] == pytest.approx(e[5])


def test_report_ignores_rows_without_a_cluster(con):
    con.execute("CREATE TABLE c AS SELECT * FROM (VALUES (1, 10), (1, 3), (1, 2), (2, 5), (2, 5), (NULL, 1000)) t(k, x)")
    got = con.execute("SELECT * FROM sensitivity_report('c', 'x', 'k', 1, 0.6, 0.1)").fetchall()
    # cluster 1: 10 > 0.6 * 15 dominates, 15 - 10 - 3 = 2 is not below 0.1 * 10; cluster 2: two
    # contributors know each other's value (p%); the record without a cluster would dominate anything
    assert got == [("x", 2, 1, 0.5, 1, 0.5), ("(all)", 2, 1, 0.5, 1, 0.5)]


def test_report_over_a_mondrian_release(con):
    rng = np.random.default_rng(4)
    X = np.round(rng.lognormal(4, 1, size=(200, 2)))
    df = pd.DataFrame(X, columns=["a", "b"])
    con.execute("CREATE TABLE d AS SELECT * FROM df")
    con.execute("CREATE TABLE m AS SELECT * FROM mondrian_labels_table('d', ['a', 'b'], 5, mode := 'relaxed')")
    got = con.execute("SELECT dominance_cells FROM sensitivity_report('m', ['a', 'b'], 'cluster', 1, 0.5, 0.1)").fetchall()
    lab = mv.mondrian_partition(X, 5, "relaxed")
    cells = sv.sensitive_cells(X, lab, sv.dominance_rule(1, 0.5))
    assert [g[0] for g in got] == [cells[:, 0].sum(), cells[:, 1].sum(), cells.sum()]


def test_rules_and_report_work_in_a_plain_duckdb_connection():
    from duckdb_sdc.sql import sql_files

    plain = duckdb.connect()
    for _, text in sql_files():
        plain.execute(text)
    plain.execute("CREATE TABLE c AS SELECT * FROM (VALUES (1, 10), (1, 3), (1, 2), (2, 5), (2, 5)) t(k, x)")
    assert plain.execute("SELECT k, dominance_sensitive(x, 1, 0.6) FROM c GROUP BY k ORDER BY k").fetchall() == \
        [(1, True), (2, False)]
    assert plain.execute("SELECT cells, dominance_cells FROM sensitivity_report('c', 'x', 'k', 1, 0.6, 0.1)").fetchall() \
        == [(2, 1), (2, 1)]
    plain.close()


@pytest.mark.parametrize("scale", [2.0**990, 2.0**-1040])
def test_macros_answer_at_extreme_scales_as_the_numpy_layer(con, scale):
    cells = [np.asarray(c) * scale for c in _random_cells(12, 120)] + [np.array([1e308, 1e308, 1.0])]
    rows = [(i, float(v)) for i, c in enumerate(cells) for v in c]
    con.execute("CREATE TABLE cells AS SELECT * FROM (SELECT unnest(?) AS cell, unnest(?) AS value)",
                [[r[0] for r in rows], [r[1] for r in rows]])
    got = con.execute("SELECT cell, dominance_sensitive(value, 1, 0.6), dominance_sensitive(value, 2, 0.7), "
                      "p_percent_sensitive(value, 0.25) FROM cells GROUP BY cell ORDER BY cell").fetchall()
    assert got == [(i, sv.dominance_sensitive(c, 1, 0.6), sv.dominance_sensitive(c, 2, 0.7),
                    sv.p_percent_sensitive(c, 0.25)) for i, c in enumerate(cells)]
    # the total of two contributions of 1e308 overflows; the cell is dominated by its two largest
    assert got[-1][1:] == (False, True, True)


# ---------------------------------------------------------------------------------------------
# the pq and threshold rules, suppression with protection levels


def _pq_boundary_cells(p, q):
    """Integer cells with q (T - c1 - c2) exactly p c1, and one unit either side."""
    from fractions import Fraction

    ratio = Fraction(repr(p)) / Fraction(repr(q))
    for m in range(1, 60):
        c1 = ratio.denominator * m
        rest = int(ratio * c1)
        for shift in (-1, 0, 1):
            if rest + shift >= 0:
                yield [c1, c1, rest + shift]


@pytest.mark.parametrize("p, q", [(0.1, 0.5), (0.25, 0.5), (0.3, 0.7), (0.2, 1.0)])
def test_pq_macro_equals_the_numpy_layer_and_the_reference(con, p, q):
    from reference_protection import sensitive_reference

    cells = list(_random_cells(9, 150)) + list(_pq_boundary_cells(p, q))
    _cells_table(con, cells)
    got = dict(con.execute(f"SELECT cell, pq_sensitive(value, {p}, {q}) FROM cells GROUP BY cell").fetchall())
    assert got == {i: sv.pq_sensitive(c, p, q) for i, c in enumerate(cells)}
    assert got == {i: sensitive_reference(c, {"kind": "pq", "p": p, "q": q}) for i, c in enumerate(cells)}
    if q == 1.0:  # the p% rule
        assert got == {i: sv.p_percent_sensitive(c, p) for i, c in enumerate(cells)}


def test_threshold_macro(con):
    got = con.execute("""
        SELECT cell, threshold_sensitive(v, 3), threshold_sensitive(v, 1)
        FROM (VALUES (1, 5), (1, NULL), (1, 5), (2, 0), (2, 0), (2, 0), (3, NULL), (4, 9))
             t(cell, v) GROUP BY cell ORDER BY cell""").fetchall()
    assert got == [(1, True, False), (2, False, False), (3, None, None), (4, True, False)]
    assert [sv.threshold_sensitive(c, 3) for c in ([5, 5], [0, 0, 0], [9])] == [True, False, True]


@pytest.mark.parametrize("sql, message", [
    ("SELECT pq_sensitive(x, 0.5, 0.5) FROM t", "pq_sensitive: p must be less than q, got p = 0.5 and q = 0.5"),
    ("SELECT pq_sensitive(x, 0.1, 2) FROM t", "pq_sensitive: q must be in (0, 1], got 2"),
    ("SELECT pq_sensitive(x, 0, 0.5) FROM t", "pq_sensitive: p must be in (0, 1], got 0"),
    ("SELECT threshold_sensitive(x, 0) FROM t", "threshold_sensitive: n must be an integer >= 1, got 0"),
    ("SELECT p_percent_suppress([[1], [2]], [0, 0], 0.1, cost := 'cheap')",
     "p_percent_suppress: cost must be one of 'cells', 'value', got 'cheap'"),
    ("SELECT pq_suppress([[1], [2]], [0, 0], 0.6, 0.5)", "pq_suppress: p must be less than q, got p = 0.6 and q = 0.5"),
    ("SELECT threshold_suppress([[1], [2]], [0, 0], 3, 0)", "threshold_suppress: safety must be in (0, 1000000], got 0"),
])
def test_bad_parameters_of_the_new_rules(con, sql, message):
    con.execute("CREATE TABLE t AS SELECT * FROM (VALUES (1), (2)) v(x)")
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql).fetchall()
    assert message in str(info.value)


def test_suppression_meets_the_protection_levels_in_sql(con):
    from methods.test_sensitivity_protection import audited

    # the clusters: five zeros, [119, 0, 0, 0, 0] and [50 .. 90]; p% rule at 0.2
    rows = [[v] for v in [0, 0, 0, 0, 0, 119, 0, 0, 0, 0, 50, 60, 70, 80, 90]]
    labels = [0] * 5 + [1] * 5 + [2] * 5
    got = con.execute("SELECT p_percent_suppress(?, ?, 0.2)", [rows, labels]).fetchone()[0]
    assert got["release"] == [[0.0]] * 5 + [[None]] * 10
    assert (got["primary_cells"], got["secondary_cells"], got["unprotected_cells"]) == (1, 1, 0)
    got = con.execute("SELECT p_percent_suppress(?, ?, 0.2, secondary := false)", [rows, labels]).fetchone()[0]
    assert (got["primary_cells"], got["secondary_cells"], got["unprotected_cells"]) == (1, 0, 1)
    # every rule and cost equals the numpy layer, and its pattern passes the LP audit
    rng = np.random.default_rng(4)
    X = np.round(rng.lognormal(4, 1.5, size=(120, 2)))
    X[rng.random(X.shape) < 0.15] *= 25
    lab = mv.mdav_multi_partition(X, 3)
    for sql_rule, rule in (("pq_suppress(r, c, 0.2, 0.6", sv.pq_rule(0.2, 0.6)),
                           ("threshold_suppress(r, c, 4, 0.25", sv.threshold_rule(4, 0.25)),
                           ("dominance_suppress(r, c, 1, 0.5", sv.dominance_rule(1, 0.5)),
                           ("p_percent_suppress(r, c, 0.3", sv.p_percent_rule(0.3))):
        for cost in ("cells", "value"):
            got = con.execute(f"SELECT {sql_rule}, cost := '{cost}') FROM (SELECT ?::DOUBLE[][] AS r, ?::BIGINT[] AS c)",
                              [X.tolist(), lab.tolist()]).fetchone()[0]
            out = protection.suppress(X, lab, rule, cost=cost)
            assert (got["primary_cells"], got["secondary_cells"], got["unprotected_cells"]) == \
                (out.primary.sum(), out.secondary.sum(), 0)
            released = np.array([[np.nan if v is None else v for v in r] for r in got["release"]])
            np.testing.assert_array_equal(np.isnan(released), np.isnan(out.release))
            audited(X, lab, out, False)


def test_new_rules_work_in_a_plain_duckdb_connection():
    from duckdb_sdc.sql import sql_files

    plain = duckdb.connect()
    for _, text in sql_files():
        plain.execute(text)
    got = plain.execute("SELECT pq_sensitive(x, 0.25, 0.5), threshold_sensitive(x, 4) "
                        "FROM (VALUES (100), (20), (30)) t(x)").fetchone()
    assert got == (True, True)
    plain.close()


def test_removal_and_mdav_under_a_rule_equal_the_numpy_layer(con):
    from duckdb_sdc.methods.dominance import mdav_cells_partition, remove_sensitive

    rng = np.random.default_rng(8)
    X = np.round(rng.lognormal(4, 1.5, size=(90, 2)))
    lab = mv.mdav_multi_partition(X, 3)
    args = [X.tolist(), lab.tolist()]
    got = con.execute("SELECT p_percent_remove(?::DOUBLE[][], ?::BIGINT[], 0.2)", args).fetchone()[0]
    out = remove_sensitive(X, lab, sv.p_percent_rule(0.2))
    assert got["clusters"] == [None if c < 0 else c for c in out.labels.tolist()]
    assert (got["removed_records"], got["primary_cells"], got["secondary_cells"], got["unprotected_cells"]) == \
        (out.removed.sum(), out.suppression.primary.sum(), out.suppression.secondary.sum(), 0)
    released = np.array([[np.nan if v is None else v for v in r] for r in got["release"]])
    np.testing.assert_allclose(released, out.release, rtol=1e-12)
    assert out.removed.sum() > 0
    got = con.execute("SELECT dominance_remove(?::DOUBLE[][], ?::BIGINT[], 1, 0.5, min_size := 4)", args).fetchone()[0]
    out = remove_sensitive(X, lab, sv.dominance_rule(1, 0.5), min_size=4)
    assert got["clusters"] == [None if c < 0 else c for c in out.labels.tolist()]
    for sql, rule in (("mdav_p_percent_labels(?::DOUBLE[][], 3, 0.2)", sv.p_percent_rule(0.2)),
                      ("mdav_dominance_labels(?::DOUBLE[][], 3, 2, 0.7)", sv.dominance_rule(2, 0.7))):
        labels = con.execute(f"SELECT {sql}", [X.tolist()]).fetchone()[0]
        assert labels == mdav_cells_partition(X, 3, rule).tolist()
    rounded = con.execute("SELECT mdav_p_percent_round(?::DOUBLE[][], 3, 0.2)", [X.tolist()]).fetchone()[0]
    from duckdb_sdc.methods.dominance import mdav_p_percent_round

    np.testing.assert_allclose(np.array(rounded), mdav_p_percent_round(X, 3, 0.2), rtol=1e-12)
    with pytest.raises(duckdb.Error, match="mdav_p_percent_round: rows contains -1"):
        con.execute("SELECT mdav_p_percent_round([[1], [-1], [3]], 2, 0.2)").fetchall()
