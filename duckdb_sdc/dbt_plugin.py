"""dbt-duckdb plugin: every duckdb_sdc function in dbt models and tests, and the release job of the dbt
package's `sdc_release` materialization.

In profiles.yml:

    outputs:
      dev:
        type: duckdb
        path: warehouse.duckdb
        plugins:
          - module: duckdb_sdc.dbt_plugin

dbt-duckdb calls `update_connection_config` before it opens its connection, `configure_connection`
once on it and `configure_cursor` on each cursor it hands to a thread (one per node). Before the
connection opens, the plugin makes a private workspace (duckdb_sdc.workspace: a folder of mode 0700,
removed when dbt ends, by a watchdog if dbt is killed) and makes its spill folder DuckDB's
`temp_directory`, so that whatever DuckDB spills to disk during the run, raw records included, is
readable by no one else; a `temp_directory` in the profile's settings or the plugin's config is
where the workspace is made. The spill files are encrypted as a release's are: where DuckDB's httpfs
extension is installed (release.source.encrypt_spills).

The Python UDFs live in the database instance (registered once). The public macros, which
`register` makes TEMP macros of one connection, are created once more in an in-memory database
attached to the instance, FUNCTIONS_DB, and each cursor reaches them through its search path:
creating the ~400 TEMP macros on every cursor took 0.25 s of CPU per node, 6 of the 8 s of a build
of examples/dbt. Nothing is written into the warehouse. Materialise masked models as
tables (the default here): a view that calls a Python UDF fails in any client that has not
registered duckdb_sdc.

`release_model` is what the `sdc_release` materialization (dbt_duckdb_sdc/macros/sdc_release.sql)
runs, as dbt-duckdb runs a Python model: in dbt's process, on the model's own connection. It releases
the model's query with the release pipeline of duckdb_sdc.release (the same spec checks, plan,
safeguards, policy gate and manifest rows as `duckdb-sdc release`) and writes the release table and
its manifest table into the warehouse under the names the materialization gives, in one transaction
of its own. It replaces nothing but a previous release of the same model (and its manifest), and
its temporary tables spill only into the plugin's private workspace. A refusal (a spec error, a
breached policy) rolls that transaction back and is handed to the materialization as text, which
fails the model with it: nothing is written.

Needs the `dbt` extra: pip install "duckdb-sdc[dbt]".
"""

from __future__ import annotations

import atexit
import copy
import secrets
import uuid
from datetime import datetime, timezone

import duckdb
from dbt.adapters.duckdb.plugins import BasePlugin
from sqlglot import exp

from ._validate import SdcError, error_message
from ._version import __version__
from .release import manifest, run
from .release.source import encrypt_spills, run_step
from .release.plan import (DIALECT, POSITION, RAW, RELEASED, column, keyed_step, released_columns, table,
                           temporary)
from .release.policy import PolicyBreach
from .release.spec import CENTROIDS, SpecError, parse_spec
from .sql import REGISTRY, register, sql_files
from .workspace import Workspace

FUNCTIONS_DB = "__sdc_functions"  # the attached in-memory database of the shared macros
CONFIG = "release_spec"  # the model config that holds the spec (the TOML tables but [output])
OUTCOME = "__sdc_dbt_outcome"  # the temporary table the job leaves its outcome in: one row, message and notes
TEMP_DIRECTORY = "temp_directory"
_SPILLS: set[str] = set()  # the spill folders of the plugin's workspaces in this process


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def install_shared(conn) -> None:
    """Every public macro of duckdb_sdc, created in FUNCTIONS_DB (attached in memory to `conn`'s
    database instance, so every cursor of it sees them); the UDFs they call must be registered."""
    database, schema = conn.execute("SELECT current_database(), current_schema()").fetchall()[0]
    conn.execute(f"ATTACH IF NOT EXISTS ':memory:' AS {FUNCTIONS_DB}")
    conn.execute(f"USE {FUNCTIONS_DB}")
    try:
        for _, text in sql_files():
            conn.execute(text)
        for row in REGISTRY:
            if row.source is None:
                conn.execute(row.macro_sql().replace("CREATE OR REPLACE TEMP MACRO", "CREATE OR REPLACE MACRO", 1))
    finally:
        conn.execute(f"USE {_quoted(database)}.{_quoted(schema)}")


def reach_shared(cursor) -> None:
    """Put FUNCTIONS_DB's macros on `cursor`'s search path, after its own default schema."""
    database, schema = cursor.execute("SELECT current_database(), current_schema()").fetchall()[0]
    path = f"{_quoted(database)}.{_quoted(schema)},{FUNCTIONS_DB}.main"
    cursor.execute(f"SET search_path = '{path.replace(chr(39), chr(39) * 2)}'")


class Plugin(BasePlugin):
    def initialize(self, plugin_config: dict) -> None:
        self._root = plugin_config.get(TEMP_DIRECTORY)  # the profile's settings and the plugin's config
        self.workspace: Workspace | None = None

    def update_connection_config(self, creds, config: dict) -> None:
        """DuckDB's temporary directory: the spill folder of the plugin's private workspace (made on the
        first connection, inside `temp_directory` when the profile gives one, ended when the process
        ends). The profile's `temp_directory` setting is taken out of the settings dbt-duckdb applies to
        each cursor: DuckDB cannot move its temporary directory once it has spilled."""
        if self.workspace is None:
            self.workspace = Workspace(self._root)
            atexit.register(self.workspace.close)
            _SPILLS.add(str(self.workspace.spill))
        config[TEMP_DIRECTORY] = str(self.workspace.spill)
        settings = getattr(creds, "settings", None)
        if settings and TEMP_DIRECTORY in settings:
            settings.pop(TEMP_DIRECTORY)

    def configure_connection(self, conn) -> None:
        """Every function registered, the shared macros installed, and the spill files encrypted where
        a release's would be (release.source.encrypt_spills: where httpfs is installed)."""
        encrypt_spills(conn)
        register(conn)
        install_shared(conn)

    def configure_cursor(self, cursor) -> None:
        reach_shared(cursor)

    def default_materialization(self) -> str:
        return "table"


def _refuse(name: str, message: str) -> SpecError:
    return SpecError(f"{name}: {message}")


def _spec(payload: dict):
    """The release spec of the model: its `release_spec` config as the TOML tables, [output] table the
    model's name, the source the model's query."""
    name = payload["name"]
    given = payload["spec"]
    if not isinstance(given, dict) or not given:
        raise _refuse(name, f"sdc_release needs the config {CONFIG}: the tables of a release spec ([source] key, "
                            f"[masking], [columns], [[groups]], [evaluation], [policy]) as a mapping, got {given!r}")
    if "output" in given:
        raise _refuse(name, f"{CONFIG}.output: the release is the model itself (its table is the model's, "
                            "the manifest the table named by the config manifest_table); leave [output] out")
    if "resources" in given:
        raise _refuse(name, f"{CONFIG}.resources: a model runs on dbt's connection: set memory_limit and threads in "
                            "the profile's settings, and temp_directory there or in the plugin's config (the plugin "
                            "makes its private workspace inside it)")
    doc = copy.deepcopy(given)
    doc["output"] = {"table": payload["alias"]}
    upstream = ", ".join(payload.get("depends_on") or []) or "no other node"
    spec = parse_spec(doc, base=".", name=name, relation=f"dbt model {name} (from {upstream})")
    for rule in spec.masked():
        if rule.centroids_table is not None:
            raise _refuse(name, f"{rule.where}.{CENTROIDS}: a model writes one release table and its manifest; "
                                "release dp_um's unlinked centroids with duckdb-sdc release")
    return spec


def _execute(con, spec, query: exp.Expression | str, where: str):
    try:
        return con.execute(query if isinstance(query, str) else query.sql(dialect=DIALECT)).fetchall()
    except duckdb.Error as e:
        raise _refuse(spec.name, f"{where}: {error_message(e)}") from None


def _temporary_objects(con) -> list[tuple[str, str]]:
    """The temporary tables and views the release made on `con` (names starting with __sdc_)."""
    return con.execute("""
        SELECT 'VIEW', view_name FROM duckdb_views() WHERE temporary AND NOT internal AND starts_with(view_name, '__sdc_')
        UNION ALL
        SELECT 'TABLE', table_name FROM duckdb_tables() WHERE temporary AND starts_with(table_name, '__sdc_')
        """).fetchall()


def _table_type(con, database: str, schema: str, identifier: str) -> str | None:
    rows = con.execute("SELECT table_type FROM information_schema.tables WHERE table_catalog = ? AND table_schema = ? "
                       "AND lower(table_name) = lower(?)", [database, schema, identifier]).fetchall()
    return rows[0][0] if rows else None


def _check_replaceable(con, spec, payload: dict) -> None:
    """What the model may replace, as `duckdb-sdc release` replaces only a previous release of the same
    table (run.check_outputs): its manifest table only if it is the manifest of a release of this model's
    table (run.previous_release_reason), its table only if such a manifest is beside it. Anything
    else (a seed or a model named by manifest_table, a table of raw records at the model's name, a
    view) is refused: drop it, or name the release otherwise."""
    name, alias = spec.name, spec.output.table
    target, m_target = payload["target"], payload["target_manifest"]
    shown, m_shown = ".".join(map(_quoted, target)), ".".join(map(_quoted, m_target))
    advice = "; an sdc_release model replaces nothing else"
    m_type = _table_type(con, *m_target)
    reason = None
    if m_type is not None:
        reason = ("it is a view" if m_type != "BASE TABLE"
                  else run.previous_release_reason(con, table(m_target[2], m_target[1], m_target[0]), alias))
        if reason is not None:
            raise _refuse(name, f"the manifest table {m_shown} exists and is not the manifest of a release of {alias!r} "
                                f"({reason}){advice}: drop it, or set manifest_table to another name")
    r_type = _table_type(con, *target)
    if r_type is not None and (m_type is None or r_type != "BASE TABLE"):
        why = "it is a view" if r_type != "BASE TABLE" else f"no manifest {m_shown} beside it names it"
        raise _refuse(name, f"{shown} exists and is not a previous release of {alias!r} ({why}){advice}: drop it "
                            "(it may hold records as they were before masking), or give the model another alias")


def _release(con, payload: dict) -> list[str]:
    spec = _spec(payload)
    name = spec.name
    functions = {r[0] for r in con.execute("SELECT function_name FROM duckdb_functions()").fetchall()}
    missing = sorted({r.method.name for r in spec.masked()} - functions)
    if missing:
        raise _refuse(name, f"the masking functions {', '.join(missing)} are not registered on dbt's connection: "
                            "load the plugin in the profile (plugins: [{module: duckdb_sdc.dbt_plugin}])")
    spill = con.execute(f"SELECT current_setting('{TEMP_DIRECTORY}')").fetchall()[0][0]
    if spill not in _SPILLS:
        raise _refuse(name, f"DuckDB's temporary directory {spill!r} is not the plugin's private workspace, and the "
                            "release's raw records may spill there: load the plugin in the profile (plugins: "
                            "[{module: duckdb_sdc.dbt_plugin}]), which makes one before dbt opens its connection")
    database, schema, identifier = payload["release"]
    m_database, m_schema, m_identifier = payload["manifest"]
    # two statements see one transaction id only inside an explicit transaction (a failed BEGIN would
    # abort the caller's)
    if len({con.execute("SELECT txid_current()").fetchall()[0][0] for _ in range(2)}) == 1:
        raise _refuse(name, "sdc_release runs the release in a transaction of its own, and the connection has one "
                            "open (a pre-hook inside a transaction?)")
    con.execute("BEGIN TRANSACTION")
    try:
        _check_replaceable(con, spec, payload)
        query = payload["sql"].strip().rstrip(";")
        # the model's query read once into a temporary table: every step sees the same records
        _execute(con, spec, f"CREATE TEMPORARY TABLE {RAW} AS SELECT * FROM (\n{query}\n)", "the model's query")
        source_columns = [(r[0], r[1]) for r in _execute(con, spec, exp.Describe(this=table(RAW)), "the model's query")]
        run_step(con, keyed_step(spec, source_columns), spec)
        records = _execute(con, spec, exp.select(exp.Count(this=exp.Star())).from_(table(RAW)), "counting")[0][0]
        # dbt build --empty: an empty relation publishes nothing, and the gate cannot measure it
        steps, facts, _ = run.prepare(spec, source_columns, salt=secrets.token_hex(16),
                                      gate=not (payload.get("empty") and records == 0))
        for step in steps:
            run_step(con, step, spec)
        target = table(identifier, schema, database)
        names = [c.name for c in released_columns(spec, source_columns)]
        body = exp.select(*(column(n) for n in names)).from_(table(RELEASED)).order_by(column(POSITION))
        m_target = table(m_identifier, m_schema, m_database)
        writes = [exp.Drop(tables=[target.copy()], kind="TABLE", exists=True),
                  exp.Drop(tables=[m_target.copy()], kind="TABLE", exists=True),
                  exp.Create(this=target.copy(), kind="TABLE", expression=body)]
        for statement in writes:
            _execute(con, spec, statement, "writing the release table")
        created_at = datetime.now(timezone.utc)
        release_id = str(uuid.UUID(bytes=secrets.token_bytes(16), version=4))
        for step in manifest.steps(lambda: manifest.rows(spec, source_columns, facts, release_id=release_id,
                                                         package_version=__version__,
                                                         duckdb_version=duckdb.__version__, created_at=created_at),
                                   target=m_target):
            run_step(con, step, spec)
        # the raw copies go before the commit: they are never committed to the connection's catalog
        for kind, relation in _temporary_objects(con):
            con.execute(exp.Drop(tables=[table(relation, "main", "temp")], kind=kind).sql(dialect=DIALECT))
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return manifest.release_notes(spec, facts)


def _text(value: str | None) -> exp.Expression:
    return exp.Cast(this=exp.Literal.string(value) if value is not None else exp.Null(), to=exp.DataType.build("VARCHAR"))


def release_model(con, payload: dict):
    """The sdc_release materialization's job (see the module): release the model's query and leave the
    outcome in the temporary table OUTCOME: `message` NULL, or the refusal; `notes` what the release
    says of itself (manifest.release_notes, one a line; NULL for none), which dbt prints. Returns a
    relation, as a dbt-duckdb Python model does."""
    message, notes = None, []
    try:
        notes = _release(con, payload)
    except (SdcError, PolicyBreach) as e:
        message = str(e)
    body = exp.select(_text(message).as_("message"), _text("\n".join(notes) if notes else None).as_("notes"))
    con.execute(temporary(OUTCOME, body, replace=True).sql(dialect=DIALECT))
    return con.sql(f"SELECT * FROM {OUTCOME}")
