"""The release job of the sdc_release materialization (duckdb_sdc.dbt_plugin.release_model) on a plain
connection, as the materialization calls it from dbt (tests/integration/test_dbt_example.py runs it through dbt):
what it writes, and that every refusal leaves its message for the materialization, nothing written,
no temporary copy and a usable connection."""

from __future__ import annotations

import duckdb
import pytest

pytest.importorskip("dbt.adapters.duckdb", reason="the dbt extra is not installed (pip install -e '.[dbt]')")

import duckdb_sdc  # noqa: E402
from duckdb_sdc.dbt_plugin import OUTCOME, Plugin, release_model  # noqa: E402

SPEC = {"source": {"key": "id"}, "masking": {"strata": ["region"]},
        "columns": {"id": "drop", "region": "keep", "income": {"method": "mdav_round", "k": 3}},
        "policy": {"min_k": 3}}


@pytest.fixture
def plugin():
    """The plugin as dbt-duckdb makes it from a profile without settings; its workspace ends with the test."""
    made = Plugin(name="dbt_plugin", plugin_config={})
    yield made
    if made.workspace is not None:
        made.workspace.close()


def _connect(plugin, path=":memory:", creds=None):
    """A connection opened as dbt-duckdb opens it: the plugin's connection config, then its set-up."""
    config = {}
    plugin.update_connection_config(creds, config)
    con = duckdb.connect(path, config=config)
    plugin.configure_connection(con)
    return con


@pytest.fixture
def people(plugin):
    con = _connect(plugin)
    con.execute("CREATE TABLE people AS SELECT i AS id, ['a', 'b'][1 + i % 2] AS region, (i * 37 % 101) * 10.0 AS income "
                "FROM range(40) r(i)")
    yield con
    con.close()


def _payload(spec=SPEC, sql="select * from people", empty=False, manifest="people_release_manifest") -> dict:
    return {"name": "people_release", "alias": "people_release", "spec": spec, "sql": sql, "empty": empty,
            "release": ["memory", "main", "people_release__dbt_tmp"],
            "manifest": ["memory", "main", f"{manifest}__dbt_tmp"],
            "target": ["memory", "main", "people_release"], "target_manifest": ["memory", "main", manifest],
            "depends_on": ["seed.project.people"]}


def _outcome(con, payload) -> str | None:
    release_model(con, payload)
    return con.execute(f"SELECT message FROM {OUTCOME}").fetchall()[0][0]


def _notes(con) -> list[str]:
    notes = con.execute(f"SELECT notes FROM {OUTCOME}").fetchall()[0][0]
    return [] if notes is None else notes.split("\n")


def _left(con, *also: str) -> list[tuple]:
    """Relations other than the source, the outcome and `also`, temporary or not."""
    return con.execute("SELECT database_name, table_name FROM duckdb_tables() WHERE table_name NOT IN ('people', ?) "
                       "AND NOT list_contains(?, table_name) "
                       "UNION ALL SELECT database_name, view_name FROM duckdb_views() WHERE NOT internal",
                       [OUTCOME, list(also)]).fetchall()


def _swap_in(con) -> None:
    """What the materialization does after the job: the new tables renamed to the model's names."""
    for name in ("people_release", "people_release_manifest"):
        con.execute(f"DROP TABLE IF EXISTS {name}")
        con.execute(f"ALTER TABLE {name}__dbt_tmp RENAME TO {name}")


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
    registered = duckdb_sdc.connect()  # the functions, but DuckDB's own temporary directory
    registered.execute("CREATE TABLE people AS SELECT 1 AS id, 'a' AS region, 1.0 AS income")
    assert _outcome(registered, _payload()).startswith(
        "people_release: DuckDB's temporary directory '.tmp' is not the plugin's private workspace")
    registered.close()
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


def test_the_connection_spills_into_the_plugins_private_workspace(tmp_path):
    """DuckDB's temporary directory is the spill folder of the plugin's workspace (mode 0700), made inside
    the profile's temp_directory, which is taken out of the settings dbt-duckdb sets on every cursor
    (DuckDB cannot move its temporary directory once it has spilled); the workspace is gone when it
    ends."""
    from types import SimpleNamespace

    settings = {"temp_directory": str(tmp_path / "spills"), "memory_limit": "40MB", "threads": "1"}
    creds = SimpleNamespace(settings=settings)
    plugin = Plugin(name="dbt_plugin", plugin_config=dict(settings))
    con = _connect(plugin, creds=creds)
    try:
        spill = plugin.workspace.spill
        assert con.execute("SELECT current_setting('temp_directory')").fetchall()[0][0] == str(spill)
        assert spill.parent.parent.parent == tmp_path / "spills" and oct(spill.stat().st_mode & 0o777) == "0o700"
        assert settings == {"memory_limit": "40MB", "threads": "1"}
        cursor = con.cursor()
        for key, value in settings.items():  # as dbt-duckdb sets up each cursor
            cursor.execute(f"SET {key} = '{value}'")
        plugin.configure_cursor(cursor)
        cursor.execute("CREATE TABLE people AS SELECT i AS id, ['a', 'b'][1 + i % 2] AS region, "
                       "(i * 7919 % 100003) * 1.0 AS income FROM range(4000) r(i)")
        assert _outcome(cursor, _payload()) is None
        assert cursor.execute("SELECT count(*) FROM people_release__dbt_tmp").fetchall() == [(4000,)]
        cursor.close()
    finally:
        con.close()
    folder = plugin.workspace.path
    plugin.workspace.close()
    assert not folder.exists()


def test_a_kept_key_is_refused_unless_the_spec_says_it_identifies_no_one(people):
    con = people
    kept = {**SPEC, "columns": {**SPEC["columns"], "id": "keep"}}
    assert _outcome(con, _payload(spec=kept)).startswith(
        "people_release: columns.id: the key 'id' links every released record to its source record")
    assert _left(con) == []
    exempt = {**SPEC, "columns": {**SPEC["columns"], "id": {"rule": "keep", "identifying": False}}}
    assert _outcome(con, _payload(spec=exempt)) is None
    assert [d[0] for d in con.execute("SELECT * FROM people_release__dbt_tmp").description] == ["id", "region", "income"]
    assert any(n.startswith("the key 'id' is released") for n in _notes(con)), _notes(con)
    assert con.execute("SELECT column_name, quasi_identifier FROM people_release_manifest__dbt_tmp "
                       "ORDER BY position").fetchall() == [("id", False), ("region", True), ("income", True)]


def test_the_gate_counts_every_released_column(people):
    """A text column released unchanged is a quasi-identifier of the gate (as in a release): one value per
    record fails min_k; `identifying = false` exempts it, and the release says so."""
    con = people
    spec = {**SPEC, "columns": {**SPEC["columns"], "label": "keep"}}
    sql = "select *, 'person ' || id as label from people"
    assert _outcome(con, _payload(spec=spec, sql=sql)).startswith(
        "people_release: the release breaches its policy; nothing was written\n  k_anonymity = 1 breaches min_k = 3")
    assert _left(con) == []
    spec = {**SPEC, "columns": {**SPEC["columns"], "label": {"rule": "keep", "identifying": False}}}
    assert _outcome(con, _payload(spec=spec, sql=sql)) is None
    assert any("label (columns.label: identifying = false)" in n for n in _notes(con)), _notes(con)


def test_it_replaces_only_a_previous_release_of_the_model(people):
    """As a release replaces only a previous release file of its table: the model's previous release is
    replaced; a raw table at the model's name, a manifest_table naming the seed or another release's
    manifest, or a view, is refused with nothing written and the relation as it was."""
    con = people
    assert _outcome(con, _payload()) is None
    _swap_in(con)
    assert _outcome(con, _payload()) is None  # the previous release: replaced
    _swap_in(con)
    con.execute("UPDATE people_release_manifest SET release_table = 'other'")
    assert _outcome(con, _payload()).startswith(
        'people_release: the manifest table "memory"."main"."people_release_manifest" exists and is not the manifest '
        "of a release of 'people_release' (it has a release of another table); an sdc_release model replaces "
        "nothing else: drop it, or set manifest_table to another name")
    con.execute("DROP TABLE people_release_manifest")
    assert _outcome(con, _payload()).startswith(
        "people_release: \"memory\".\"main\".\"people_release\" exists and is not a previous release of 'people_release' "
        '(no manifest "memory"."main"."people_release_manifest" beside it names it); an sdc_release model replaces '
        "nothing else: drop it (it may hold records as they were before masking), or give the model another alias")
    assert _left(con, "people_release") == []
    con.execute("DROP TABLE people_release")
    assert _outcome(con, _payload(manifest="people")).startswith(
        "people_release: the manifest table \"memory\".\"main\".\"people\" exists and is not the manifest of a release "
        "of 'people_release' (it has no release_table column)")
    assert con.execute("SELECT count(*) FROM people").fetchall() == [(40,)]
    con.execute("CREATE VIEW people_release AS SELECT * FROM people")
    assert _outcome(con, _payload()).startswith(
        "people_release: \"memory\".\"main\".\"people_release\" exists and is not a previous release of 'people_release' "
        "(it is a view)")
    assert _left(con) == [("memory", "people_release")]


def test_resources_belong_to_the_profile(people):
    assert _outcome(people, _payload(spec={**SPEC, "resources": {"threads": 1}})).startswith(
        "people_release: release_spec.resources: a model runs on dbt's connection")


def test_the_release_spills_into_the_private_workspace_encrypted_where_a_release_is(tmp_path):
    """What is on disk while a release job spills (a memory limit far below its records): every file
    DuckDB writes is in the spill folder of the plugin's workspace (mode 0700, in the base folder of
    mode 0700), nothing elsewhere under the temporary directory; the spill files are encrypted exactly
    where `duckdb-sdc release` encrypts them (source.encrypt_spills: where httpfs is installed), so a raw
    value of the records is in them in the clear only where the connection's temp_file_encryption is
    off; the workspace is gone when it ends."""
    import threading
    from types import SimpleNamespace

    from duckdb_sdc.release.source import encrypt_spills

    settings = {"temp_directory": str(tmp_path / "spills")}
    plugin = Plugin(name="dbt_plugin", plugin_config=dict(settings))
    con = _connect(plugin, creds=SimpleNamespace(settings=settings))
    seen: dict = {}
    stop = threading.Event()

    def watch():  # the largest content each file had while the job ran
        while not stop.is_set():
            for path in tmp_path.rglob("*"):
                try:
                    if path.is_file() and path.stat().st_size > len(seen.get(path, b"")) or path not in seen:
                        seen[path] = path.read_bytes() if path.is_file() else b""
                except OSError:
                    continue
            stop.wait(0.002)

    try:
        encrypted = con.execute("SELECT current_setting('temp_file_encryption')").fetchall()[0][0]
        reference = duckdb.connect()
        assert encrypted == encrypt_spills(reference)  # the release's decision, on this machine
        reference.close()
        con.execute("SET memory_limit = '100MB'")
        con.execute("SET threads = 1")
        con.execute("CREATE TABLE people AS SELECT i AS id, ['a', 'b'][1 + i % 2] AS region, "
                    "(i * 7919 % 100003) * 1.0 AS income, 'raw-' || (i * 31 % 1000003) || repeat('x', 400) AS label "
                    "FROM range(300000) r(i)")
        spec = {**SPEC, "columns": {**SPEC["columns"], "label": {"rule": "keep", "identifying": False}}}
        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            assert _outcome(con, _payload(spec=spec)) is None
        finally:
            stop.set()
            watcher.join()
        workspace = plugin.workspace.path
        spills = {p: d for p, d in seen.items() if p.name.endswith(".tmp")}
        assert spills, sorted(seen)  # it spilled
        assert all(p.parent == plugin.workspace.spill for p in spills), sorted(spills)
        assert all(p == workspace or workspace in p.parents or p in workspace.parents for p in seen), sorted(seen)
        for folder in (plugin.workspace.spill, workspace, workspace.parent):
            assert oct(folder.stat().st_mode & 0o777) == "0o700", folder
        assert any(b"raw-" in d for d in spills.values()) is not encrypted
    finally:
        con.close()
    plugin.workspace.close()
    assert not workspace.exists()
