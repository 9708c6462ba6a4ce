"""The installed package's version, from its metadata ("0.0.0+unknown" when running from a source tree
that is not installed): what `duckdb_sdc.__version__` gives and what releases, reports and the dbt
plugin record."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("duckdb-sdc")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"
