"""Shared by the Spark test modules: one local[2] session for the whole test run (Spark starts in
about 10 s), failing (not skipping) when Java is missing."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pytest

from duckdb_sdc.spark.session import JAVA_HINT, java_available


@pytest.fixture(scope="session")
def spark():
    if not java_available():
        pytest.fail(f"the Spark tests need Java: {JAVA_HINT}", pytrace=False)
    from duckdb_sdc.spark import local_session

    return local_session("local[2]", config={"spark.sql.shuffle.partitions": "4",
                                              "spark.default.parallelism": "2"})


def write_parquet(df: pd.DataFrame, path: Path) -> None:
    con = duckdb.connect()
    con.register("frame", df)
    con.execute(f"COPY (SELECT * FROM frame) TO '{path}' (FORMAT parquet)")
    con.close()


def read_release(folder: Path, table: str) -> pd.DataFrame:
    """A Spark release's table, read by a plain DuckDB connection, ordered by id."""
    con = duckdb.connect()
    out = con.execute(f"SELECT * FROM read_parquet('{folder / table}/*.parquet') ORDER BY id").fetchdf()
    con.close()
    return out


def read_manifest(folder: Path) -> pd.DataFrame:
    con = duckdb.connect()
    out = con.execute(f"SELECT * FROM read_parquet('{folder}/release_manifest/*.parquet')").fetchdf()
    con.close()
    return out
