"""The Spark engine: run a release spec on a SparkSession and get the same release as DuckDB's.

    from duckdb_sdc.release import load_spec
    from duckdb_sdc.spark import local_session, release
    release(load_spec("people.toml"), local_session("local[2]"))

pyspark is an optional dependency (`pip install 'duckdb-sdc[spark]'`), imported only when these
functions are used. Modules: `engine` (the release), `stratum` (one whole stratum through the numpy
layer, shared with the DuckDB release), `planner` (the driver's passes that place the buckets of a
huge stratum), `intervals` (equal-width and equal-frequency discretisation of a huge stratum in Spark
SQL), `kernel` (what the executors run), `report` (the measures and k-anonymity of a release in Spark
SQL), `evaluation` (`evaluate`: those on a release and its source), `gate` (the policy gate),
`preflight` (what is checked before Spark starts), `files` (the atomic folder swap, leftovers of killed
runs), `session` (a local session). The engine-free numpy parts (buckets of a huge stratum, summaries,
sets of attraction, the row-order cipher) are in `duckdb_sdc.kernels`. See docs/spark.md.
"""

from __future__ import annotations

from .session import SparkUnavailable, local_session, require_pyspark

__all__ = ["Options", "SparkUnavailable", "evaluate", "local_session", "release"]


def __getattr__(name):
    if name in ("release", "Options", "SparkReleaseResult", "evaluate"):
        require_pyspark()  # a clear message (pip install 'duckdb-sdc[spark]') instead of an ImportError
    if name in ("release", "Options", "SparkReleaseResult"):
        from . import engine

        return getattr(engine, name)
    if name == "evaluate":
        from .evaluation import evaluate

        return evaluate
    raise AttributeError(name)
