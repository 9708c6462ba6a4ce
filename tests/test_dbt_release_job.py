"""The release job of the sdc_release materialization (duckdb_sdc.dbt_plugin.release_model) on a plain
connection, as the materialization calls it from dbt (tests/test_dbt_example.py runs it through dbt):
what it writes, and that every refusal leaves its message for the materialization, nothing written,
no temporary copy and a usable connection."""

from __future__ import annotations

import duckdb
import pytest

pytest.importorskip("dbt.adapters.duckdb", reason="the dbt extra is not installed (pip install -e '.[dbt]')")

from duckdb_sdc.dbt_plugin import OUTCOME, release_model  # noqa: E402

SPEC = {"source": {"key": "id"}, "masking": {"strata": ["region"]},
        "columns": {"id": "drop", "region": "keep", "income": {"method": "mdav_round", "k": 3}},
        "policy": {"min_k": 3}}


@pytest.fixture
def people(con):
    con.execute("CREATE TABLE people AS SELECT i AS id, ['a', 'b'][1 + i % 2] AS region, (i * 37 % 101) * 10.0 AS income "
                "FROM range(40) r(i)")
    return con


def _payload(spec=SPEC, sql="select * from people", empty=False) -> dict:
    return {"name": "people_release", "alias": "people_release", "spec": spec, "sql": sql, "empty": empty,
            "release": ["memory", "main", "people_release__dbt_tmp"],
            "manifest": ["memory", "main", "people_release_manifest__dbt_tmp"],
            "depends_on": ["seed.project.people"]}


def _outcome(con, payload) -> str | None:
    release_model(con, payload)
    return con.execute(f"SELECT message FROM {OUTCOME}").fetchall()[0][0]


def _left(con) -> list[tuple]:
    """Relations other than the source and the outcome, temporary or not."""
    return con.execute("SELECT database_name, table_name FROM duckdb_tables() WHERE table_name NOT IN ('people', ?) "
                       "UNION ALL SELECT database_name, view_name FROM duckdb_views() WHERE NOT internal",
                       [OUTCOME]).fetchall()


def test_the_job_writes_the_release_and_its_manifest_and_nothing_else(people):
    con = people
    assert _outcome(con, _payload()) is None
    assert sorted(_left(con)) == [("memory", "people_release__dbt_tmp"), ("memory", "people_release_manifest__dbt_tmp")]
    rows = con.execute("SELECT region, income FROM people_release__dbt_tmp").fetchall()
    assert [d[0] for d in con.execute("SELECT * FROM people_release__dbt_tmp").description] == ["region", "income"]
    assert len(rows) == 40 and min(c for (c,) in con.execute(
        "SELECT count(*) FROM people_release__dbt_tmp GROUP BY region, income").fetchall()) >= 3
    manifest = con.execute("SELECT release_table, column_name, rule, source FROM people_release_manifest__dbt_tmp "
                           "ORDER BY position NULLS FIRST").fetchall()
    assert manifest == [("people_release", "id", "key", "dbt model people_release (from seed.project.people)"),
                        ("people_release", "region", "keep", "dbt model people_release (from seed.project.people)"),
                        ("people_release", "income", "mask", "dbt model people_release (from seed.project.people)")]
    con.execute("SELECT 1").fetchall()  # no transaction left open or aborted


@pytest.mark.parametrize("payload, message", [
    (_payload(sql="select *, income::varchar as income_text from people"),
     "people_release: source column without a rule in [columns] (declare each as \"keep\", \"drop\" or a masking "
     "method): 'income_text'"),
    (_payload(spec={**SPEC, "policy": {"min_k": 30}}),
     "people_release: the release breaches its policy; nothing was written\n  k_anonymity = "),
    (_payload(spec={**SPEC, "columns": {**SPEC["columns"], "income": {"method": "mdav_round", "k": 30}}}),
     "people_release: columns.income: mdav_round: k = 30 is larger than the number of non-NULL values (20) of income "
     "in stratum region = 'a'"),
    (_payload(sql="select * from nowhere"), "people_release: the model's query: Catalog Error: Table with name nowhere "
                                            "does not exist!"),
    (_payload(spec={**SPEC, "output": {"table": "x"}}), "people_release: release_spec.output: the release is the model "
                                                        "itself"),
    (_payload(spec={}), "people_release: sdc_release needs the config release_spec"),
    (_payload(spec={**SPEC, "source": {"key": "id", "table": "people"}}),
     "people_release: source: unknown key 'table'; allowed: key, weight"),
    (_payload(spec={**SPEC, "columns": {**SPEC["columns"], "income": {
        "method": "dp_um", "k": 3, "epsilon": 1.0, "lb": 0, "ub": 1010, "centroids_table": "means"}}}),
     "people_release: columns.income.centroids_table: a model writes one release table and its manifest"),
    (_payload(sql="select * from people where false"),
     "people_release: the release breaches its policy; nothing was written\n  k_anonymity could not be measured"),
])
def test_a_refusal_writes_nothing_and_leaves_its_message(people, payload, message):
    con = people
    got = _outcome(con, payload)
    assert got is not None and got.startswith(message), got
    assert _left(con) == []
    con.execute("SELECT 1").fetchall()


def test_an_empty_build_writes_the_empty_release_without_the_gate(people):
    """dbt build --empty: no record, nothing published; the gate, which cannot measure, is left out only
    then (the same empty source without --empty is refused by the gate: see above)."""
    con = people
    assert _outcome(con, _payload(sql="select * from people where false", empty=True)) is None
    assert con.execute("SELECT count(*) FROM people_release__dbt_tmp").fetchall() == [(0,)]
    assert con.execute("SELECT count(*) FROM people_release_manifest__dbt_tmp").fetchall() == [(3,)]
    con.execute("DROP TABLE people_release__dbt_tmp; DROP TABLE people_release_manifest__dbt_tmp")
    assert _outcome(con, _payload(empty=True)) is None  # --empty with records (a query without ref): gated
    assert _outcome(con, _payload(spec={**SPEC, "policy": {"min_k": 30}}, empty=True)).startswith(
        "people_release: the release breaches its policy")


def test_the_job_needs_the_plugin_and_a_connection_without_a_transaction(people):
    plain = duckdb.connect()
    plain.execute("CREATE TABLE people AS SELECT 1 AS id, 'a' AS region, 1.0 AS income")
    assert _outcome(plain, _payload()).startswith(
        "people_release: the masking functions mdav_round are not registered on dbt's connection: load the plugin")
    plain.close()
    con = people
    con.execute("BEGIN TRANSACTION")
    assert _outcome(con, _payload()).startswith(
        "people_release: sdc_release runs the release in a transaction of its own, and the connection has one open")
    con.execute("COMMIT")
    assert _left(con) == []


def test_the_plugin_registers_once_and_every_cursor_reaches_the_functions(tmp_path):
    """configure_connection registers duckdb_sdc and creates the macros once in an attached in-memory
    database; configure_cursor only puts them on the cursor's search path, after its default schema
    (unqualified names still resolve there); nothing is written into the warehouse file."""
    from duckdb_sdc.dbt_plugin import FUNCTIONS_DB, Plugin

    plugin = Plugin(name="dbt_plugin", plugin_config={})
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"))
    plugin.configure_connection(con)
    cursor = con.cursor()
    plugin.configure_cursor(cursor)
    assert cursor.execute("SELECT mdav_round([1.0, 2.0, 10.0, 11.0], 2)").fetchall() == [([1.5, 1.5, 10.5, 10.5],)]
    cursor.execute("CREATE TABLE people AS SELECT i AS id, i % 2 AS region, i * 1.0 AS income FROM range(8) r(i)")
    assert cursor.execute("SELECT table_catalog FROM information_schema.tables WHERE table_name = 'people'"
                          ).fetchall() == [("warehouse",)]
    assert cursor.execute("SELECT sum(income) FROM mdav_round_table('people', 'income', 2, strata := 'region')"
                          ).fetchall() == [(28.0,)]
    assert cursor.execute("SELECT DISTINCT database_name FROM duckdb_functions() WHERE function_name = 'mdav_round_table'"
                          ).fetchall() == [(FUNCTIONS_DB,)]
    assert plugin.default_materialization() == "table"
    cursor.close()
    con.close()
    plain = duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True)
    assert plain.execute("SELECT function_name FROM duckdb_functions() WHERE function_name LIKE '%mdav%'").fetchall() == []
    assert plain.execute("SELECT table_name FROM information_schema.tables").fetchall() == [("people",)]
    plain.close()
