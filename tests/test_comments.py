"""Every public function shows its registry doc in duckdb_functions() (the `comment` column)."""

from __future__ import annotations

import duckdb
import pytest

import duckdb_sdc
from duckdb_sdc.sql import REGISTRY, Param, SqlFunction
from duckdb_sdc.sql.comments import comment_sql, describe


def test_every_public_function_has_its_doc_as_comment(con):
    rows = dict(con.execute("SELECT function_name, comment FROM duckdb_functions() "
                            "WHERE function_type IN ('macro', 'table_macro') AND database_name = 'temp'").fetchall())
    for row in REGISTRY:
        assert rows[row.name] == " ".join(row.doc.split()), row.name


def test_a_cursor_and_a_second_registration_see_the_comments():
    con = duckdb_sdc.connect()
    cur = duckdb_sdc.register(con.cursor())
    query = "SELECT comment FROM duckdb_functions() WHERE function_name = 'mdav_round'"
    expected = [(" ".join(next(r for r in REGISTRY if r.name == "mdav_round").doc.split()),)]
    assert cur.execute(query).fetchall() == expected
    duckdb_sdc.register(con)
    assert con.execute(query).fetchall() == expected
    con.close()


def test_quotes_and_line_breaks_in_a_doc():
    fake = SqlFunction(name="sdc_quote_test", kind="scalar", params=(Param("x", "DOUBLE", doc="x"),),
                       returns="DOUBLE", doc="It's 'quoted';\n  and   spread -- over lines", body="x + 1")
    plain = duckdb.connect()
    plain.execute(fake.macro_sql())
    describe(plain, (fake,))
    assert plain.execute("SELECT comment FROM duckdb_functions() WHERE function_name = 'sdc_quote_test'"
                         ).fetchall() == [("It's 'quoted'; and spread -- over lines",)]
    plain.close()


@pytest.mark.parametrize("kind, statement", [("table", "COMMENT ON MACRO TABLE"), ("scalar", "COMMENT ON MACRO"),
                                             ("aggregate", "COMMENT ON MACRO")])
def test_the_statement_names_the_macro_kind(kind, statement):
    row = next(r for r in REGISTRY if r.kind == kind)
    assert comment_sql(row).startswith(f"{statement} {row.name} IS '")


def test_the_sql_files_carry_the_descriptions_of_their_macros():
    """sql/90_descriptions.sql is generated from the registry (python -m duckdb_sdc.sql.docs), so that a
    plain DuckDB shell that reads the files shows the same descriptions (tests/test_compat_sql.py)."""
    from duckdb_sdc.sql.docs import DESCRIPTIONS, render_descriptions

    assert DESCRIPTIONS.read_text(encoding="utf-8") == render_descriptions(), "run: python -m duckdb_sdc.sql.docs"
