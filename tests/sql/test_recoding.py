"""The SQL forms of the recoding family (duckdb_sdc.sql.recoding, sql/70_recoding.sql) against the numpy
layer: value-by-value recodings, the table forms' checks (up to five offending values named), local
suppression on testdata (k-anonymous by the key-risk fk and pairwise), PRAM (types kept, the column's
own categories, the transitions of the same seed) and the generalisation search."""

from __future__ import annotations

import datetime as dt

import duckdb
import numpy as np
import pytest

import duckdb_sdc
from duckdb_sdc import datasets
from duckdb_sdc.measures import keys as km
from duckdb_sdc.methods import generalisation as gz
from duckdb_sdc.methods import recoding as rc
from duckdb_sdc.methods import suppression as sp

KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


@pytest.fixture(scope="module")
def con():
    c = duckdb_sdc.connect()
    c.execute("CREATE TABLE testdata AS SELECT row_number() OVER () AS id, * FROM sdc_dataset('testdata')")
    c.execute("CREATE TABLE h_age AS SELECT a AS age, (a // 10 * 10) || '-' || (a // 10 * 10 + 9) AS decade, "
              "'*' AS top FROM range(0, 121) r(a)")
    yield c
    c.close()


def _error(con, sql: str) -> str:
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql).fetchall()
    return str(info.value)


def test_bands_equal_the_numpy_bands(con):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 121, 300).astype(float)
    x[::7] = np.nan
    for closed in ("right", "left"):
        for breaks in ([0, 18, 65, 120], [0, 0.5, 60.25, 120]):
            values = [None if np.isnan(v) else v for v in x]
            want = rc.band(values, breaks, closed=closed).tolist()
            got = [r[0] for r in con.execute(
                f"SELECT recode_bands(v, {breaks}, closed := '{closed}') FROM (SELECT unnest(?::DOUBLE[]) AS v, "
                "generate_subscripts(?::DOUBLE[], 1) AS i) ORDER BY i", [values, values]).fetchall()]
            assert got == want
    assert con.execute("SELECT recode_bands(30, [0, 18, 65], ['young', 'adult'])").fetchone()[0] == "adult"


def test_the_bands_table_names_the_values_outside(con):
    message = _error(con, "SELECT * FROM recode_bands_table('testdata', 'age', [10, 50])")
    assert "recode_bands_table: breaks do not cover column age: 0, 1, 2, 3, 4 and " in message
    assert "outside [10, 50]" in message
    got = con.execute("SELECT age, count(*) FROM recode_bands_table('testdata', 'age', [0, 18, 65, 130]) "
                      "GROUP BY age ORDER BY age").fetchall()
    ages = datasets.load("testdata")["age"]
    assert dict(got) == {"(18, 65]": int(((ages > 18) & (ages <= 65)).sum()), "(65, 130]": int((ages > 65).sum()),
                         "[0, 18]": int((ages <= 18).sum())}
    assert "recode_bands_table: column sex must be numeric" not in _error(
        con, "SELECT * FROM recode_bands_table('testdata', 'age', [0, 50], labels := ['a', 'b'])")


@pytest.mark.parametrize("sql, message", [
    ("SELECT recode_bands(5, [3, 2])", "recode_bands: breaks must be strictly increasing, got 3 then 2"),
    ("SELECT recode_bands(5, [1])", "recode_bands: breaks must hold at least two numbers (one band), got 1"),
    ("SELECT recode_bands(50, [0, 10])", "recode_bands: breaks do not cover 50, outside [0, 10]"),
    ("SELECT recode_bands('a', [0, 10])", "recode_bands: x must be numeric"),
    ("SELECT recode_bands(5, [0, 10], closed := 'up')", "recode_bands: closed must be one of 'right', 'left'"),
    ("SELECT top_code(5, 'nan'::DOUBLE)", "top_code: top must be a finite number, got nan"),
    ("SELECT merge_categories(1, NULL)", "merge_categories: mapping must not be NULL"),
    ("SELECT merge_categories(1, MAP {'1': NULL::VARCHAR})", "merge_categories: mapping must not map to NULL"),
    ("SELECT truncate_date(DATE '2020-01-01', 'week')", "truncate_date: unit must be one of 'month', 'quarter', 'year'"),
    ("SELECT truncate_date(5, 'year')", "truncate_date: d must be a date or a timestamp, got INTEGER"),
    ("SELECT age_in_years(DATE '2020-01-02', DATE '2020-01-01')",
     "age_in_years: birth 2020-01-02 is after the reference date 2020-01-01"),
])
def test_value_recodings_refuse_bad_input(con, sql, message):
    assert message in _error(con, sql)


def test_coding_merging_dates_and_ages_equal_numpy(con):
    rng = np.random.default_rng(2)
    x = rng.integers(0, 100, 200)
    got = con.execute("SELECT list(top_code(v, 60) ORDER BY i), list(bottom_code(v, 10, -1) ORDER BY i), "
                      "list(merge_categories(v % 5, MAP {'1': 'one', '2': 'two'}) ORDER BY i) "
                      "FROM (SELECT unnest(?) AS v, generate_subscripts(?, 1) AS i)", [x.tolist(), x.tolist()]).fetchone()
    assert got[0] == rc.top_code(x, 60).tolist() and got[1] == rc.bottom_code(x, 10, -1).tolist()
    assert got[2] == rc.merge_categories([str(v) for v in x % 5], {"1": "one", "2": "two"}).tolist()
    days = rng.integers(-30000, 30000, 300)
    dates = [dt.date(1970, 1, 1) + dt.timedelta(days=int(d)) for d in days]
    ref = dt.date(2100, 6, 30)
    for unit in ("month", "quarter", "year"):
        got = con.execute(f"SELECT list(truncate_date(d, '{unit}') ORDER BY i) FROM "
                          "(SELECT unnest(?::DATE[]) AS d, generate_subscripts(?, 1) AS i)", [dates, dates]).fetchone()[0]
        want = rc.truncate_dates(np.array(dates, dtype="datetime64[D]"), unit)
        assert [np.datetime64(g) for g in got] == list(want)
    ages = con.execute("SELECT list(age_in_years(d, ?::DATE) ORDER BY i) FROM (SELECT unnest(?::DATE[]) AS d, "
                       "generate_subscripts(?, 1) AS i)", [ref, dates, dates]).fetchone()[0]
    assert ages == rc.age_in_years(dates, ref).astype(int).tolist()
    stamp = con.execute("SELECT truncate_date(TIMESTAMP '2024-05-17 13:45:00', 'quarter')").fetchone()[0]
    assert stamp == dt.date(2024, 4, 1)


def test_generalise_table_with_a_table_and_an_arx_file(con, tmp_path):
    got = con.execute("SELECT age, count(*) FROM generalise_table('testdata', 'age', 'h_age', 1) GROUP BY age "
                      "ORDER BY age").fetchall()
    ages = datasets.load("testdata")["age"]
    want = {}
    for a in ages:
        key = f"{a // 10 * 10}-{a // 10 * 10 + 9}"
        want[key] = want.get(key, 0) + 1
    assert dict(got) == want
    path = tmp_path / "sex.csv"
    path.write_text("1;male;*\n2;female;*\n", encoding="utf-8")
    got = con.execute(f"SELECT sex, count(*) FROM generalise_table('testdata', 'sex', '{path}', 1) GROUP BY sex "
                      "ORDER BY sex").fetchall()
    assert [g for g, _ in got] == ["female", "male"]
    small = tmp_path / "small.csv"
    small.write_text("1;a;*\n", encoding="utf-8")
    assert "generalise_table: hierarchy of column sex lacks '2'" in _error(
        con, f"SELECT * FROM generalise_table('testdata', 'sex', '{small}', 1)")
    bad = tmp_path / "bad.csv"
    bad.write_text("1;a;*\n2;a;+\n", encoding="utf-8")
    assert ("generalise_table: hierarchy of column sex is not a tree: 'a' at level 1 has two parents at level 2, "
            "'*' and '+'") in _error(con, f"SELECT * FROM generalise_table('testdata', 'sex', '{bad}', 2)")
    con.execute("CREATE OR REPLACE TABLE h_adults AS SELECT * FROM h_age WHERE age >= 18")
    assert "generalise_table: hierarchy of column age lacks '0', '1', '10', '11', '12' and 13 more" in _error(
        con, "SELECT * FROM generalise_table('testdata', 'age', 'h_adults', 1)")
    assert "generalise_table: hierarchy of column age is not a tree" in _error(
        con, "SELECT * FROM generalise_table('testdata', 'age', 'testdata', 1)")


def test_local_suppression_of_testdata_in_sql(con):
    """The table form gives the numpy layer's counts (146 at k = 3, proved optimal), keeps the keys'
    types, and its output has fk >= 3 by the key-risk measures and by a pairwise count."""
    report = con.execute("SELECT records, unsafe, suppressed, per_key, optimal, lower_bound, algorithm FROM "
                         f"local_suppression_report('testdata', {KEYS}, 3)").fetchall()
    assert report == [(4580, 281, 146, sp.local_suppression(datasets.load("testdata")[KEYS], 3).per_key, True, 146,
                       "integer program")]
    out = con.execute(f"SELECT * FROM local_suppression_table('testdata', {KEYS}, 3) ORDER BY id").df()
    assert int(out[KEYS].isna().sum().sum()) == 146 and len(out) == 4580
    assert str(out["urbrur"].dtype).startswith(("Int", "int", "float"))
    fk = km.key_frequencies(out[KEYS]).fk
    assert fk.min() >= 3
    codes = out[KEYS].fillna(-1).to_numpy(dtype=np.int64)
    pair = np.array([((codes == r) | (codes < 0) | (r < 0)).all(axis=1).sum() for r in codes])
    assert pair.min() >= 3 and (pair == fk).all()
    original = datasets.load("testdata")
    kept = out[KEYS].notna().to_numpy()
    assert (out[KEYS].to_numpy()[kept] == original[KEYS].to_numpy()[kept]).all()


def test_local_suppression_within_strata_and_its_errors(con):
    got = con.execute("SELECT urbrur, suppressed, optimal FROM local_suppression_report('testdata', "
                      "['water', 'relat', 'sex'], 3, strata := 'urbrur')").fetchall()
    data = datasets.load("testdata")
    for urbrur, total, _ in got:
        part = data[data["urbrur"] == urbrur][["water", "relat", "sex"]]
        assert total == sp.local_suppression(part, 3).total
    assert "local_suppression_table: k = 9999 is larger than the number of records (" in _error(
        con, "SELECT * FROM local_suppression_table('testdata', ['sex'], 9999, strata := 'urbrur')")
    assert "of stratum urbrur = '1'" in _error(
        con, "SELECT * FROM local_suppression_table('testdata', ['sex'], 9999, strata := 'urbrur')")
    assert 'does not have a column named "nope"' in _error(
        con, "SELECT * FROM local_suppression_table('testdata', ['nope'], 3)")
    assert "local_suppression_table: importance must give one integer per key (2), got 1" in _error(
        con, "SELECT * FROM local_suppression_table('testdata', ['sex', 'relat'], 3, importance := [1])")
    assert "local_suppression_table: urbrur is both a key and a strata column" in _error(
        con, "SELECT * FROM local_suppression_table('testdata', ['urbrur', 'sex'], 3, strata := 'urbrur')")


def test_pram_keeps_the_type_and_the_categories_and_matches_its_transitions(con):
    out = con.execute("SELECT id, relat FROM pram_table('testdata', 'relat', seed := 5) ORDER BY id").fetchall()
    original = con.execute("SELECT id, relat FROM testdata ORDER BY id").fetchall()
    assert {r for _, r in out} <= {r for _, r in original}
    assert con.execute("SELECT typeof(relat) FROM pram_table('testdata', 'relat', seed := 5) LIMIT 1").fetchone()[0] \
        == con.execute("SELECT typeof(relat) FROM testdata LIMIT 1").fetchone()[0]
    changed = sum(a != b for (_, a), (_, b) in zip(out, original))
    trans = con.execute("SELECT \"from\", \"to\", probability, records FROM pram_transitions_table('testdata', "
                        "'relat', seed := 5)").fetchall()
    assert sum(r for f, t, _, r in trans if f != t) == changed
    moved = {}
    for (_, a), (_, b) in zip(original, out):
        moved[(a, b)] = moved.get((a, b), 0) + 1
    assert {(f, t): r for f, t, _, r in trans if r} == moved
    rows = {}
    for f, _, p, _ in trans:
        rows[f] = rows.get(f, 0.0) + p
    assert all(abs(v - 1) < 1e-12 for v in rows.values())
    again = con.execute("SELECT id, relat FROM pram_table('testdata', 'relat', seed := 5) ORDER BY id").fetchall()
    assert again == out
    strata = con.execute("SELECT count(DISTINCT urbrur) FROM pram_transitions_table('testdata', 'relat', "
                         "strata := 'urbrur', seed := 5)").fetchone()[0]
    assert strata == 2


def test_the_generalisation_search_in_sql_equals_numpy(con, tmp_path):
    d = datasets.load("testdata")
    for c in ("urbrur", "sex"):
        con.execute(f"CREATE OR REPLACE TABLE h_{c} AS SELECT DISTINCT {c}, '*' AS top FROM testdata")
    keys = ["urbrur", "sex", "age"]
    lattice = con.execute(f"SELECT * FROM generalisation_search_table('testdata', {keys}, ['h_urbrur', 'h_sex', "
                          "'h_age'], 5, 0.02)").fetchall()
    star = lambda c: [[str(v), "*"] for v in sorted(set(d[c]))]  # noqa: E731
    hage = [[str(a), f"{a // 10 * 10}-{a // 10 * 10 + 9}", "*"] for a in range(121)]
    frame = d[keys].astype(str)
    want = gz.generalisation_search(frame, [star("urbrur"), star("sex"), hage], 5, 0.02)
    chosen = [r for r in lattice if r[-1]]
    assert len(chosen) == 1 and tuple(chosen[0][:3]) == want.levels and chosen[0][5] == pytest.approx(want.loss)
    assert len(lattice) == len(want.lattice)
    released = con.execute(f"SELECT urbrur, sex, age FROM generalise_keys_table('testdata', {keys}, "
                           "['h_urbrur', 'h_sex', 'h_age'], 5, 0.02) ORDER BY id").fetchall()
    classes = {}
    for r in released:
        if r != (None, None, None):
            classes[r] = classes.get(r, 0) + 1
    assert min(classes.values()) >= 5
    assert sum(r == (None, None, None) for r in released) == int(want.suppressed.sum())
