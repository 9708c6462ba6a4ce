"""duckdb_sdc: statistical disclosure control of numeric microdata, as SQL in DuckDB.

    import duckdb_sdc
    con = duckdb_sdc.connect()          # or duckdb_sdc.register(existing_connection)
    con.sql("SELECT region, mdav_round(list(income), 5) FROM people GROUP BY region")

Layers: `duckdb_sdc.methods` (masking on numpy arrays), `duckdb_sdc.measures` (information loss and
disclosure risk on numpy arrays), `duckdb_sdc.sql` (the SQL binding). `connect` and `register` load
the binding (and with it every method and measure) when first used, so that `import duckdb_sdc` and
the command line's --help and --version stay fast (`SdcError`, `__version__` and `release_frame`
too). `release_frame(frame, spec)` releases a pandas, polars or Arrow frame with a release spec
(`duckdb_sdc.frames`).
"""

from __future__ import annotations

__all__ = ["SdcError", "__version__", "connect", "register", "release_frame"]


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
        from ._version import __version__

        return __version__
    if name == "release_frame":  # a pandas, polars or Arrow frame released with a spec (duckdb_sdc.frames)
        from .frames import release_frame

        return release_frame
    raise AttributeError(f"module 'duckdb_sdc' has no attribute {name!r}")
