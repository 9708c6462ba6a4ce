"""dbt-duckdb plugin: every duckdb_sdc function in dbt models and tests.

In profiles.yml:

    outputs:
      dev:
        type: duckdb
        path: warehouse.duckdb
        plugins:
          - module: duckdb_sdc.dbt_plugin

dbt-duckdb calls `configure_connection` once on its connection and `configure_cursor` on each cursor
it hands to a thread. The Python UDFs live in the database instance (registered once); the public
names are TEMP macros, which belong to one connection, so every cursor gets them again. Materialise
masked models as tables (the default here): a view that calls a Python UDF fails in any client that
has not registered duckdb_sdc.

Needs the `dbt` extra: pip install "duckdb-sdc[dbt]".
"""

from __future__ import annotations

from dbt.adapters.duckdb.plugins import BasePlugin

from .sql import register


class Plugin(BasePlugin):
    def configure_connection(self, conn) -> None:
        register(conn)

    def configure_cursor(self, cursor) -> None:
        register(cursor)

    def default_materialization(self) -> str:
        return "table"
