"""A Spark release refuses [source] weight naming the key (real Spark, local[2]): masking with sampling
weights runs on DuckDB only, and nothing is written."""

from __future__ import annotations

import pytest
from spark_helpers import spark  # noqa: F401 (fixture)

from duckdb_sdc.release import SpecError, parse_spec
from duckdb_sdc.spark import release as spark_release


def test_a_spark_release_refuses_sampling_weights_by_key(tmp_path, spark):  # noqa: F811
    d = {"source": {"files": "people.parquet", "key": "id", "weight": "w"},
         "output": {"database": "out", "table": "people"},
         "columns": {"id": {"rule": "keep", "identifying": False}, "w": "keep", "income": {"method": "mdav_round", "k": 5}}}
    with pytest.raises(SpecError, match="source.weight: a Spark release does not mask with sampling weights"):
        spark_release(parse_spec(d, base=tmp_path), spark)
    assert not (tmp_path / "out").exists()
