"""duckdb_sdc: statistical disclosure control of numeric microdata, as SQL in DuckDB.

    import duckdb_sdc
    con = duckdb_sdc.connect()          # or duckdb_sdc.register(existing_connection)
    con.sql("SELECT region, mdav_round(list(income), 5) FROM people GROUP BY region")

Layers: `duckdb_sdc.methods` (masking on numpy arrays), `duckdb_sdc.measures` (information loss and
disclosure risk on numpy arrays), `duckdb_sdc.sql` (the SQL binding).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from ._validate import SdcError
from .sql import connect, register

try:
    __version__ = version("duckdb-sdc")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

__all__ = ["SdcError", "__version__", "connect", "register"]
