"""The table macros take a relation as dbt's ref() renders it ('"db"."schema"."table"', every part quoted),
and the dbt package's files are what packages.yml installs (the dbt build itself runs in
test_dbt_example.py)."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from duckdb_sdc.sql import REGISTRY
from duckdb_sdc.warmup import _tables

ROOT = Path(__file__).resolve().parents[1]
TABLE_EXAMPLES = [r for r in REGISTRY if r.kind == "table" and r.params and r.params[0].name in ("tbl", "original")]


@pytest.mark.parametrize("row", TABLE_EXAMPLES, ids=lambda r: r.name)
def test_every_table_macro_takes_the_name_ref_renders(con, row):
    """Each table macro's reference example, with its table named as ref() names it, gives the same
    rows as with the plain name (random methods seeded, so that both calls draw the same)."""
    _tables(con)
    con.execute("SET threads = 1")
    plain = row.example.split("--")[0].strip()
    if any(p.name == "seed" for p in row.params) and "seed :=" not in plain:
        plain = plain[:plain.rindex(")")] + ", seed := 7)"
    table = plain.split(f"{row.name}('")[1].split("'")[0]
    quoted = plain.replace(f"{row.name}('{table}'", f"{row.name}('\"temp\".\"main\".\"{table}\"'", 1)
    assert quoted != plain
    assert sorted(map(repr, con.execute(quoted).fetchall())) == sorted(map(repr, con.execute(plain).fetchall()))


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
                  "{% macro sdc_fraction("):
        assert block in text, block
    example = (ROOT / "examples" / "dbt" / "packages.yml").read_text()
    assert "\npackages:\n  - local: ../../dbt_duckdb_sdc\n" in example
    assert not (ROOT / "examples" / "dbt" / "tests" / "generic").exists()  # the example holds no copy


STRATIFIED = [r for r in REGISTRY if r.kind == "table" and any(p.name == "strata" for p in r.params)]


def _stratified(row, table: str, extra: str = "") -> str:
    """The reference example of table form `row` on `table`, stratified by its column `stratum`."""
    example = row.example.split("--")[0].strip()
    source = example.split(f"{row.name}('")[1].split("'")[0]
    query = example.replace(f"{row.name}('{source}'", f"{row.name}('{table}'", 1)
    query = re.sub(r", strata := '[^']*'", "", query)
    return query[:query.rindex(")")] + f", strata := 'stratum'{extra})", source


@pytest.mark.parametrize("row", STRATIFIED, ids=lambda r: r.name)
def test_a_stratified_table_form_on_an_empty_table_returns_no_row(con, row):
    """`dbt build --empty` hands every model an empty relation: a table form with strata gives no row
    and the columns (names and types) it gives on the table with rows, with each small_strata choice;
    it raised "TypeError: 'NoneType' object is not iterable" (the strata's lists are NULL on no row)."""
    _tables(con)
    choices = [""]
    if any(p.name == "small_strata" for p in row.params):
        choices += [", small_strata := 'nearest'", ", small_strata := 'rest', rest_stratum := 'other'"]
    for extra in choices:
        full, source = _stratified(row, "full_t", extra)
        con.execute(f"CREATE OR REPLACE TEMP TABLE full_t AS SELECT *, 'all' AS stratum FROM {source}")
        con.execute("CREATE OR REPLACE TEMP TABLE empty_t AS SELECT * FROM full_t WHERE false")
        empty, _ = _stratified(row, "empty_t", extra)
        expected = con.execute(f"DESCRIBE {full}").fetchall()
        assert con.execute(empty).fetchall() == [], (row.name, extra)
        assert con.execute(f"DESCRIBE {empty}").fetchall() == expected, (row.name, extra)
