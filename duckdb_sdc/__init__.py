"""duckdb_sdc: statistical disclosure control of numeric microdata, as SQL in DuckDB.

    import duckdb_sdc
    con = duckdb_sdc.connect()          # or duckdb_sdc.register(existing_connection)
    con.sql("SELECT region, mdav_round(list(income), 5) FROM people GROUP BY region")

Layers: `duckdb_sdc.methods` (masking on numpy arrays), `duckdb_sdc.measures` (information loss and
disclosure risk on numpy arrays), `duckdb_sdc.sql` (the SQL binding). `connect` and `register` load
the binding (and with it every method and measure) when first used, so that `import duckdb_sdc` and
the command line's --help and --version stay fast (`SdcError` and `__version__` too).
"""

from __future__ import annotations

__all__ = ["SdcError", "__version__", "connect", "register"]


def __getattr__(name: str):
    # everything is loaded when first used, so that `import duckdb_sdc` (and with it the command line,
    # which installs its signal handlers first thing) imports nothing beyond the standard library
    if name in ("connect", "register"):
        from . import sql

        return getattr(sql, name)
    if name == "SdcError":
        from ._validate import SdcError

        return SdcError
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("duckdb-sdc")
        except PackageNotFoundError:  # running from a source tree without installation
            return "0.0.0+unknown"
    raise AttributeError(f"module 'duckdb_sdc' has no attribute {name!r}")
