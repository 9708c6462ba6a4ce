"""The Spark bucket paths of individual ranking and univariate MDAV at the ends of the doubles: values
near 1.8e308 and subnormal numbers. A huge stratum cut into buckets must give the numpy method's
values, which are the rescaled values of the same data in the normal range (`duckdb_sdc._numerics`):
the planner measures the stratum's binary exponent and every bucket works on values scaled by it."""

from __future__ import annotations

import json
import math

import duckdb
import numpy as np
import pandas as pd
from spark_helpers import spark, write_parquet  # noqa: F401 (fixture)

from duckdb_sdc import methods
from duckdb_sdc.methods.freedman_diaconis import group_size_sorted
from duckdb_sdc.release import parse_spec
from duckdb_sdc.spark import Options
from duckdb_sdc.spark import release as spark_release

HUGE, TINY = 1019, -1070  # 15 * 2^1019 = 8.4e307; 2^-1070 is subnormal (below 2.2e-308)


def test_huge_and_subnormal_strata_in_buckets_equal_the_rescaled_numpy_methods(tmp_path, spark):
    """Two strata, one near 1.8e308 and one subnormal (each stratum has its own scale), each cut into
    buckets: MDAV and individual ranking equal the numpy methods, which equal the normal-range values
    scaled back. The old bucket path summed unscaled values: -inf and inf near 1.8e308."""
    rng = np.random.default_rng(11)
    n = 300
    base = rng.integers(-15, 16, (2, n)).astype(float)  # ties everywhere, across the bucket boundaries
    base[rng.random((2, n)) < 0.25] = 3.0  # a long run at the median
    values = np.concatenate([np.ldexp(base[0], HUGE), np.ldexp(base[1], TINY)])
    assert np.abs(values).max() > 8e307 and 0 < np.abs(values[n:][base[1] != 0]).min() < 2.2e-308
    frame = pd.DataFrame({"id": np.arange(2 * n, dtype=np.int64), "s": ["huge"] * n + ["tiny"] * n,
                          "x": values, "y": values})
    write_parquet(frame, tmp_path / "ext.parquet")
    rules = {"x": ("mdav_round", 5), "y": ("ranking_round", 4)}
    spec = parse_spec({"source": {"files": "ext.parquet", "key": "id"}, "output": {"database": "ext", "table": "t"},
                       "masking": {"strata": ["s"]},
                       "columns": {"id": {"rule": "keep", "identifying": False}, "s": "keep",
                                   **{c: {"method": m, "k": k} for c, (m, k) in rules.items()}}}, base=tmp_path)
    spark_release(spec, spark, options=Options(bucket_rows=60, max_stratum_rows=100, sample_rows=80, guard_rows=12))
    out = duckdb.connect().execute(f"SELECT * FROM read_parquet('{tmp_path}/ext/t/*.parquet') ORDER BY id").fetchnumpy()
    for column, (method, k) in rules.items():
        fn = getattr(methods, method)
        for i, scale in enumerate((HUGE, TINY)):
            part = slice(i * n, (i + 1) * n)
            rescaled = np.ldexp(fn(base[i], k), scale)  # the same data in the normal range, scaled back
            np.testing.assert_array_equal(fn(values[part], k), rescaled)
            assert np.isfinite(out[column][part]).all()
            np.testing.assert_array_equal(out[column][part], rescaled, err_msg=f"{column}, 2^{scale}")
    assert math.isfinite(float(out["x"].max()))


def test_auto_group_size_of_huge_and_subnormal_strata_in_buckets(tmp_path, spark):
    """k = 'auto' on a split stratum: the planner resolves Freedman-Diaconis' group size from the
    collected order statistics (`planner._with_positions`), without the column. Near 1.8e308 and among
    subnormal numbers it must resolve the k the numpy method resolves (the normal-range data's k: the
    rule is scale-free), mask to the rescaled normal-range values, and write that k in the manifest."""
    rng = np.random.default_rng(5)
    n = 400
    # skewed, with ties, in sixteenths (exact at 2^-1070, where the spacing of the doubles is 2^-1074)
    base = np.round(rng.lognormal(2.0, 1.0, (2, n)) * 16) / 16
    values = np.concatenate([np.ldexp(base[0], HUGE - 6), np.ldexp(base[1], TINY)])
    assert np.abs(values).max() > 1e307 and 0 < np.abs(values[n:]).min() < 2.2e-308
    frame = pd.DataFrame({"id": np.arange(2 * n, dtype=np.int64), "s": ["huge"] * n + ["tiny"] * n,
                          "x": values, "y": values})
    write_parquet(frame, tmp_path / "auto.parquet")
    rules = {"x": "mdav_round", "y": "ranking_round"}
    spec = parse_spec({"source": {"files": "auto.parquet", "key": "id"}, "output": {"database": "auto", "table": "t"},
                       "masking": {"strata": ["s"]},
                       "columns": {"id": {"rule": "keep", "identifying": False}, "s": "keep", **{c: {"method": m, "k": "auto"} for c, m in rules.items()}}},
                      base=tmp_path)
    spark_release(spec, spark, options=Options(bucket_rows=70, max_stratum_rows=100, sample_rows=90, guard_rows=12))
    con = duckdb.connect()
    out = con.execute(f"SELECT * FROM read_parquet('{tmp_path}/auto/t/*.parquet') ORDER BY id").fetchnumpy()
    manifest = con.execute(f"SELECT column_name, parameters FROM read_parquet('{tmp_path}/auto/release_manifest/*.parquet')"
                           " WHERE rule = 'mask' ORDER BY column_name").fetchall()
    expected = [{"s": s, "k": int(group_size_sorted(np.sort(b)))} for s, b in zip(("huge", "tiny"), base)]
    assert all(e["k"] > 3 for e in expected), expected  # 'auto' is not the minimum group size here
    for column, parameters in manifest:
        assert json.loads(parameters)["resolved"]["k"] == expected, column
    for column, method in rules.items():
        fn = getattr(methods, method)
        for i, scale in enumerate((HUGE - 6, TINY)):
            part = slice(i * n, (i + 1) * n)
            rescaled = np.ldexp(fn(base[i], "auto"), scale)
            np.testing.assert_array_equal(fn(values[part], "auto"), rescaled)
            np.testing.assert_array_equal(out[column][part], rescaled, err_msg=f"{column}, 2^{scale}")
