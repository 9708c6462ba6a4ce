"""The release measures in Spark SQL against DuckDB's report of the same release: the pure-SQL
measures transpiled from sql/10_measures.sql, interval disclosure and the k-anonymity section."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest
from spark_helpers import spark, write_parquet  # noqa: F401 (fixture)
from spark.test_release import records

from duckdb_sdc.release import SpecError, parse_spec, release, report
from duckdb_sdc.spark import evaluate
from duckdb_sdc.spark.report import measure_sql


def test_measure_sql_is_the_duckdb_macro_in_spark_sql():
    text = measure_sql("il1s", "o.x", "m.x")
    assert "REGR_SXX" in text.upper() and "__sdc" not in text and "RAISE_ERROR" in text.upper()


def test_spark_evaluation_equals_the_duckdb_report(tmp_path, spark):
    df = records()
    write_parquet(df, tmp_path / "people.parquet")
    doc = {"source": {"files": "people.parquet", "key": "id"},
           "output": {"database": "duck.duckdb", "table": "people"},
           "masking": {"strata": ["region"]},
           "columns": {"id": {"rule": "keep", "identifying": False}, "region": "keep", "age": "keep", "note": "drop",
                       **{c: "drop" for c in ("savings", "height", "weight", "g1", "g2")},
                       "income": {"method": "mdav_round", "k": 5},
                       "expenses": {"method": "efd_round", "c": 6}},
           "groups": [{"columns": ["b1", "b2"], "method": "box_release", "k": 6, "characteristic": "mean(b1)"}]}
    spec = parse_spec(doc, base=tmp_path)
    release(spec)
    duck = report(spec)
    con = duckdb.connect(str(tmp_path / "duck.duckdb"), read_only=True)
    released = spark.createDataFrame(con.execute("SELECT * FROM people").fetchdf())
    con.close()
    ours = evaluate(spec, spark, released=released)
    assert len(ours) > 20
    for _, row in ours.iterrows():
        column = "" if pd.isna(row["column"]) else row["column"]
        match = duck[(duck["measure"] == row["measure"]) & (duck["column"].fillna("") == column)
                     & (duck["section"] == row["section"])]
        assert len(match) == 1, (row["measure"], row["column"])
        want = match["value"].iloc[0]
        if row["value"] is None or pd.isna(row["value"]):
            assert pd.isna(want)
        else:
            assert row["value"] == pytest.approx(want, rel=1e-12), (row["measure"], row["column"])
    k_rows = ours[ours["section"] == "k-anonymity"]
    assert set(k_rows["measure"]) == {"k_anonymity", "classes", "unique_share"}
    assert set(k_rows["column"].fillna("all")) == {"age", "income", "expenses", "b1", "b2", "b1_b2_box", "all"}


def test_evaluation_needs_the_key(tmp_path, spark):
    df = records(40)
    spec = parse_spec({"source": {"files": "p.parquet", "key": "id"}, "output": {"database": "o", "table": "t"},
                       "columns": {c: "drop" for c in df.columns} | {"income": {"method": "mdav_round", "k": 3}}},
                      base=tmp_path)
    released = spark.createDataFrame(pd.DataFrame({"income": np.arange(40.0)}))
    original = spark.createDataFrame(df[["id", "income"]])
    with pytest.raises(SpecError, match="the release table 't' has no key column to link its records"):
        evaluate(spec, spark, released=released, original=original)
