"""A Spark release refuses [masking] small_strata other than 'refuse', naming the key (real Spark,
local[2]); it refuses a too-small stratum itself, naming it, as before."""

from __future__ import annotations

import pytest
from spark_helpers import spark, write_parquet  # noqa: F401 (fixture)
from spark.test_release import BASE, doc, records

from duckdb_sdc.release import SpecError, parse_spec
from duckdb_sdc.spark import release as spark_release


@pytest.mark.parametrize("masking", [{"small_strata": "nearest"}, {"small_strata": "rest", "rest_stratum": "other"}])
def test_a_spark_release_refuses_small_strata_pooling_by_key(tmp_path, spark, masking):
    write_parquet(records(60), tmp_path / "people.parquet")
    d = doc("out", {**BASE, **{c: "drop" for c in ("age", "expenses", "savings", "height", "weight", "g1", "g2",
                                                   "b1", "b2")}, "income": {"method": "mdav_round", "k": 5}})
    d["masking"].update(masking)
    with pytest.raises(SpecError, match=r"masking.small_strata: a Spark release does not pool small strata"):
        spark_release(parse_spec(d, base=tmp_path), spark)
    assert not (tmp_path / "out").exists()
