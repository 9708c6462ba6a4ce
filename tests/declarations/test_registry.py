"""The registry is the single source of truth: what register() installs, and the README."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import duckdb
import pytest

import duckdb_sdc
from duckdb_sdc.sql import REGISTRY, sql_files


def test_every_registry_row_is_installed_with_its_parameters(con):
    rows = con.execute(
        "SELECT function_name, parameters FROM duckdb_functions() "
        "WHERE function_type IN ('macro', 'table_macro')").fetchall()
    installed = {name: params for name, params in rows}
    for row in REGISTRY:
        assert row.name in installed, row.name
        assert installed[row.name] == [p.name for p in row.params], row.name


def test_every_macro_in_the_sql_files_is_internal_or_in_the_registry():
    names = {row.name for row in REGISTRY}
    for file_name, text in sql_files():
        for name in re.findall(r"CREATE OR REPLACE MACRO (\w+)", text):
            assert name.startswith("__sdc_") or name in names, f"{file_name}: {name} missing from the registry"
        assert "CREATE MACRO" not in text and "TEMP MACRO" not in text, file_name


def test_sql_files_work_in_a_plain_connection():
    plain = duckdb.connect()
    for _, text in sql_files():
        plain.execute(text)
    assert plain.execute("SELECT __sdc_qi('a\"b')").fetchone() == ('"a""b"',)
    plain.close()


def test_register_twice_and_on_cursors_is_harmless():
    con = duckdb_sdc.connect()
    duckdb_sdc.register(con)
    duckdb_sdc.register(con)
    cur = duckdb_sdc.register(con.cursor())
    assert cur.execute("SELECT mdav_round([1, 2, 3, 4], 2)").fetchone() == ([1.5, 1.5, 3.5, 3.5],)
    assert con.execute("SELECT mdav_round([1, 2, 3, 4], 2)").fetchone() == ([1.5, 1.5, 3.5, 3.5],)
    con.close()


def test_nothing_is_written_into_the_database_file(tmp_path):
    path = tmp_path / "x.duckdb"
    con = duckdb_sdc.connect(str(path))
    con.execute("CREATE TABLE t AS SELECT 1 AS a")
    con.close()
    plain = duckdb.connect(str(path))
    names = [r[0] for r in plain.execute(
        "SELECT function_name FROM duckdb_functions() WHERE function_name LIKE '%mdav%'").fetchall()]
    plain.close()
    assert names == []


def test_udf_survives_the_registering_connection_being_closed(tmp_path):
    """DuckDB 2.0 crashed (segfault) when a second connection to the same file called a UDF after
    the connection that registered it was closed. Run the scenario in a child process."""
    script = textwrap.dedent(f"""
        import gc, duckdb, duckdb_sdc
        path = {str(tmp_path / "shared.duckdb")!r}
        first = duckdb_sdc.connect(path)
        second = duckdb.connect(path)
        first.close()
        del first
        gc.collect()
        duckdb_sdc.register(second)
        print(second.execute("SELECT mdav_round([1, 2, 3, 10, 11, 12], 3)").fetchone()[0])
        print(second.execute("SELECT __sdc_mdav_round('mdav_round', [1.0, 2.0, 3.0, 4.0], '2', 'mean')").fetchone()[0])
        second.close()
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["[2.0, 2.0, 2.0, 11.0, 11.0, 11.0]", "[1.5, 1.5, 3.5, 3.5]"]


def test_connect_passes_configuration():
    con = duckdb_sdc.connect(threads=1)
    assert con.execute("SELECT current_setting('threads')").fetchone() == (1,)
    con.close()


@pytest.mark.parametrize("row", REGISTRY, ids=lambda r: r.name)
def test_every_row_is_documented(row):
    assert row.doc and row.example and row.group
    assert all(p.doc for p in row.params)
