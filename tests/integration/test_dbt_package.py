"""The table macros take a relation as dbt's ref() renders it ('"db"."schema"."table"', every part quoted),
and the dbt package's files are what packages.yml installs (the dbt build itself runs in
integration/test_dbt_example.py)."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

import duckdb_sdc

from duckdb_sdc.sql import REGISTRY
from duckdb_sdc.warmup import _tables

ROOT = Path(__file__).resolve().parents[2]
TABLE_EXAMPLES = [r for r in REGISTRY if r.kind == "table" and r.params and r.params[0].name in ("tbl", "original")]


@pytest.fixture(scope="module")
def tables():
    """One connection with the reference examples' tables for the whole module (registering and making
    the tables for each of the ~60 cases cost more than the cases)."""
    connection = duckdb_sdc.connect()
    _tables(connection)
    connection.execute("SET threads = 1")
    yield connection
    connection.close()


@pytest.mark.parametrize("row", TABLE_EXAMPLES, ids=lambda r: r.name)
def test_every_table_macro_takes_the_name_ref_renders_and_a_cte_name(tables, row):
    """Each table macro's reference example, with its table named as ref() names it, and with the name of
    a CTE over it (what a dbt model gives a table macro so that `dbt build --empty` and unit tests work;
    a unit test's ref() renders as a CTE's name), gives the same rows as with the plain name (random
    methods seeded, so that every call draws the same)."""
    con = tables
    plain = row.example.split("--")[0].strip()
    if any(p.name == "seed" for p in row.params) and "seed :=" not in plain:
        plain = plain[:plain.rindex(")")] + ", seed := 7)"
    table = plain.split(f"{row.name}('")[1].split("'")[0]
    quoted = plain.replace(f"{row.name}('{table}'", f"{row.name}('\"temp\".\"main\".\"{table}\"'", 1)
    cte = (f'WITH "dbt cte" AS (SELECT * FROM "temp"."main"."{table}") '
           + plain.replace(f"{row.name}('{table}'", f"{row.name}('dbt cte'", 1))
    assert quoted != plain and '"dbt cte"' in cte
    expected = sorted(map(repr, con.execute(plain).fetchall()))
    assert sorted(map(repr, con.execute(quoted).fetchall())) == expected
    assert sorted(map(repr, con.execute(cte).fetchall())) == expected
    # ref() with a row limit: a subquery over the quoted name (dbt-duckdb renders no alias); a limit above
    # the table's rows keeps them all
    limited = plain.replace(f"{row.name}('{table}'",
                            f"{row.name}('(select * from \"temp\".\"main\".\"{table}\" limit 1000000)'", 1)
    assert sorted(map(repr, con.execute(limited).fetchall())) == expected


def _outcome(con, query: str):
    try:
        return "rows", con.execute(query).fetchall(), con.execute(f"DESCRIBE {query}").fetchall()
    except duckdb.Error as e:
        return "error", str(e).split("\n")[0]


@pytest.mark.parametrize("row", TABLE_EXAMPLES, ids=lambda r: r.name)
def test_every_table_macro_takes_what_ref_renders_under_dbt_build_empty(tables, row):
    """`dbt build --empty` renders ref('t') as '(select * from "db"."main"."t" where false limit 0)': each
    table macro given that text does what it does on a CTE over the table without a row (the same rows
    and columns, or the same refusal)."""
    con = tables
    plain = row.example.split("--")[0].strip()
    table = plain.split(f"{row.name}('")[1].split("'")[0]
    rendered = plain.replace(f"{row.name}('{table}'",
                             f"{row.name}('(select * from \"temp\".\"main\".\"{table}\" where false limit 0)'", 1)
    cte = (f'WITH "no rows" AS (SELECT * FROM "temp"."main"."{table}" WHERE false) '
           + plain.replace(f"{row.name}('{table}'", f"{row.name}('no rows'", 1))
    text = f'(select * from "temp"."main"."{table}" where false limit 0)'
    got = _outcome(con, rendered)
    if got[0] == "error":  # a refusal names the relation as it was given
        got = ("error", got[1].replace(text, "no rows"))
    assert got == _outcome(con, cte)


@pytest.mark.parametrize("text, from_item", [
    ('(select * from "warehouse"."main"."people" where false limit 0)',
     '(SELECT * FROM "warehouse"."main"."people" WHERE false LIMIT 0)'),
    ('(select * from "w"."main"."my.t""x" limit 10)', '(SELECT * FROM "w"."main"."my.t""x" LIMIT 10)'),
    ('(SELECT * FROM main.people WHERE false LIMIT 0)', '(SELECT * FROM "main"."people" WHERE false LIMIT 0)'),
    # an event-time filter (dbt build --sample, a microbatch batch): that relation with that filter
    ("(select * from \"w\".\"main\".\"events\" where joined >= '2024-01-01 00:00:00+00:00' and joined < '2024-01-02 00:00:00+00:00')",
     "(SELECT * FROM \"w\".\"main\".\"events\" WHERE \"joined\" >= '2024-01-01 00:00:00+00:00' AND \"joined\" < '2024-01-02 00:00:00+00:00')"),
    ("(select * from events where \"Joined At\" < '2024-01-02')", "(SELECT * FROM \"events\" WHERE \"Joined At\" < '2024-01-02')"),
    # anything else is one name, quoted
    ("(select * from a where x >= '1' or 1=1)", "\"(select * from a where x >= '1' or 1=1)\""),
    ("(select * from a where x >= '1'' or ''1')", "\"(select * from a where x >= '1'' or ''1')\""),
    ('(select * from people where x > 1 limit 0)', '"(select * from people where x > 1 limit 0)"'),
    ('(select * from a; drop table b; -- limit 0)', '"(select * from a; drop table b; -- limit 0)"'),
    ('(select * from "a" limit 0) union (select 1)', '"(select * from ""a"" limit 0) union (select 1)"'),
])
def test_what_ref_renders_with_a_limit_is_that_relation_with_that_limit(con, text, from_item):
    assert con.execute("SELECT __sdc_qt(?)", [text]).fetchone() == (from_item,)


def test_a_table_macro_given_an_event_time_filter_reads_that_filter(con):
    """What ref() renders under `dbt build --sample` (and the package's sdc_table passes on, its quotes
    doubled): the table macro masks the records of the filter, as on a CTE holding them."""
    con.execute("CREATE TABLE events AS SELECT i AS id, i % 2 AS region, i * 1.0 AS income, "
                "DATE '2024-01-01' + i::INTEGER AS joined FROM range(20) r(i)")
    text = "(select * from \"memory\".\"main\".\"events\" where joined >= '2024-01-05' and joined < '2024-01-15')"
    filtered = con.execute("SELECT * FROM mdav_round_table(?, 'income', 2, strata := 'region') ORDER BY id",
                           [text]).fetchall()
    cte = con.execute("WITH sample AS (SELECT * FROM events WHERE joined >= '2024-01-05' AND joined < '2024-01-15') "
                      "SELECT * FROM mdav_round_table('sample', 'income', 2, strata := 'region') ORDER BY id").fetchall()
    assert filtered == cte and [r[0] for r in filtered] == list(range(4, 14))


def test_a_cte_takes_the_place_of_the_table_it_is_named_after(con):
    """The pattern of docs/dbt.md: `with people as (select * from {{ ref('people') }})` before a table
    macro given 'people': the macro reads the CTE, not the table of that name (under --empty the CTE
    has no row while the table has them)."""
    con.execute("CREATE TABLE people AS SELECT i AS id, i % 2 AS region, i * 1.0 AS income FROM range(10) r(i)")
    query = ("WITH people AS (SELECT * FROM people WHERE id < {n}) "
             "SELECT count(*) FROM mdav_round_table('people', 'income', 2, strata := 'region')")
    assert con.execute(query.format(n=6)).fetchall() == [(6,)]
    assert con.execute(query.format(n=0)).fetchall() == [(0,)]


@pytest.mark.parametrize("name, quoted", [
    ("people", '"people"'),
    ("main.people", '"main"."people"'),
    ('"example"."main"."people"', '"example"."main"."people"'),
    ('"my.table"', '"my.table"'),  # a dot inside quotes is part of the name
    ('"a""b"', '"a""b"'),
    ('x."y z"', '"x"."y z"'),
    ('a"b', '"a""b"'),  # not a quoted name: one part, its quote escaped
    ('people"; DROP TABLE people; --', '"people""; DROP TABLE people; --"'),
    ('"people"; DROP TABLE people; --"', '"""people""; DROP TABLE people; --"""'),
])
def test_table_names_are_quoted_part_by_part(con, name, quoted):
    assert con.execute("SELECT __sdc_qt(?)", [name]).fetchone() == (quoted,)


def test_a_name_that_injects_sql_stays_one_identifier(con):
    con.execute("CREATE TABLE people AS SELECT i AS id, i * 1.0 AS income FROM range(10) r(i)")
    for name in ('people"; DROP TABLE people; --', '"people"; DROP TABLE people; --"'):
        with pytest.raises(duckdb.CatalogException, match="does not exist"):
            con.execute("SELECT * FROM mdav_round_table(?, 'income', 2)", [name]).fetchall()
    assert con.execute("SELECT count(*) FROM people").fetchall() == [(10,)]


def test_the_dbt_package_is_a_dbt_project_with_its_macros():
    project = (ROOT / "dbt_duckdb_sdc" / "dbt_project.yml").read_text()
    for line in ("name: duckdb_sdc", "config-version: 2", 'macro-paths: ["macros"]'):
        assert f"\n{line}\n" in project, line
    macros = ROOT / "dbt_duckdb_sdc" / "macros"
    text = "".join(p.read_text() for p in macros.glob("*.sql"))
    for block in ("{% test k_anonymous(", "{% test sdc_policy(", "{% macro sdc_names(", "{% macro sdc_whole_number(",
                  "{% macro sdc_fraction(", "{% macro sdc_table(", "{% materialization sdc_release, adapter='duckdb' %}"):
        assert block in text, block
    described = (macros / "duckdb_sdc.yml").read_text()
    for name in ("materialization_sdc_release_duckdb", "test_sdc_policy", "test_k_anonymous", "sdc_names",
                 "sdc_whole_number", "sdc_fraction", "sdc_table"):
        assert f"\n  - name: {name}\n" in described, name
    example = (ROOT / "examples" / "dbt" / "packages.yml").read_text()
    assert "\npackages:\n  - local: ../../dbt_duckdb_sdc\n" in example
    assert not (ROOT / "examples" / "dbt" / "tests" / "generic").exists()  # the example holds no copy


# the key measures and methods refuse a table without records by their contract (role 'keys'), so
# `dbt build --empty` of a model using them fails with that refusal; the others give no row
STRATIFIED = [r for r in REGISTRY if r.kind == "table" and any(p.name == "strata" for p in r.params)
              and "keys" not in (r.contract.reads.values() if r.contract else ())]


def _stratified(row, table: str, extra: str = "") -> str:
    """The reference example of table form `row` on `table`, stratified by its column `stratum`."""
    example = row.example.split("--")[0].strip()
    source = example.split(f"{row.name}('")[1].split("'")[0]
    query = example.replace(f"{row.name}('{source}'", f"{row.name}('{table}'", 1)
    query = re.sub(r", strata := '[^']*'", "", query)
    return query[:query.rindex(")")] + f", strata := 'stratum'{extra})", source


@pytest.mark.parametrize("row", STRATIFIED, ids=lambda r: r.name)
def test_a_stratified_table_form_on_an_empty_table_returns_no_row(tables, row):
    """`dbt build --empty` hands every model an empty relation: a table form with strata gives no row
    and the columns (names and types) it gives on the table with rows; it raised "TypeError:
    'NoneType' object is not iterable" (the strata's lists are NULL on no row). Every small_strata
    choice for two of them (the decision is one function, whatever the method)."""
    con = tables
    choices = [""]
    if row.name in ("mdav_round_table", "mdav_multi_round_table"):
        choices += [", small_strata := 'nearest'", ", small_strata := 'rest', rest_stratum := 'other'"]
    for extra in choices:
        full, source = _stratified(row, "full_t", extra)
        con.execute(f"CREATE OR REPLACE TEMP TABLE full_t AS SELECT *, 'all' AS stratum FROM {source}")
        con.execute("CREATE OR REPLACE TEMP TABLE empty_t AS SELECT * FROM full_t WHERE false")
        empty, _ = _stratified(row, "empty_t", extra)
        expected = con.execute(f"DESCRIBE {full}").fetchall()
        assert con.execute(empty).fetchall() == [], (row.name, extra)
        assert con.execute(f"DESCRIBE {empty}").fetchall() == expected, (row.name, extra)
