"""The executors' kernel (duckdb_sdc.spark.kernel.StageKernel.masked, the scalar iterator Arrow UDF)
without Spark: a partition sorted by bucket id, in batches that cut buckets anywhere, gives per record
the numpy method's value on its bucket, aligned with the records as they came, NULL values passed
through in place; and the Spark version check the engine makes before a release."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from duckdb_sdc import methods
from duckdb_sdc.release.methods import METHODS
from duckdb_sdc.spark.kernel import SPLIT, WHOLE, BucketTask, Part, StageKernel, key_order
from duckdb_sdc.spark.ordering import B
from duckdb_sdc.kernels.positional import Bucket, RankingPlan
from duckdb_sdc.spark.session import SparkUnavailable, check_spark_version
from duckdb_sdc.spark.stratum import StratumCall


def _run(kernel: StageKernel, ids, keys, x, batch_rows: int) -> np.ndarray:
    arrays = [pa.array(ids, pa.int64()), pa.array(keys, pa.int64()), pa.array(x, pa.float64(), mask=np.isnan(x))]
    batches = [tuple(a.slice(i, batch_rows) for a in arrays) for i in range(0, len(ids), batch_rows)]
    out = pa.concat_arrays(list(kernel.masked(iter(batches))))
    assert out.type == pa.struct([("x", pa.float64())]) and len(out) == len(ids)
    return np.asarray(out.field("x").fill_null(np.nan).to_numpy(zero_copy_only=False))


@pytest.mark.parametrize("seed", range(6))
def test_the_udf_masks_each_bucket_and_keeps_the_records_in_place(seed):
    """Two pieces of one stratum (individual ranking, cut at a multiple of k), a whole stratum (MDAV)
    and records of NULL value (negative bucket ids), sorted by bucket id as Spark hands them over,
    records in any order within a bucket."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(40, 400)), int(rng.integers(2, 6))
    x = np.round(rng.normal(0, 3, n), 0)  # ties
    keys = rng.permutation(10 * n)[:n].astype(np.int64)
    order = np.lexsort((keys, x))  # (value, key): the stratum's order
    cut = (n // k // 2) * k
    plan = RankingPlan(n, k, float(x[order][(n - 1) // 2]))
    ids = np.empty(n, np.int64)
    ids[order[:cut]], ids[order[cut:]] = 10, 11
    expected = np.empty(n)
    expected[order] = methods.ranking_round(x[order], k=k)
    m = int(rng.integers(10, 60))  # a whole stratum of m records, masked by MDAV in key order
    wx = np.round(rng.normal(5, 2, m), 0)
    wkeys = 10 * n + rng.permutation(10 * m)[:m]
    by_key = np.argsort(wkeys)
    wexpected = np.empty(m)
    wexpected[by_key] = methods.mdav_round(wx[by_key], k=3)
    nulls = int(rng.integers(0, 20))
    all_ids = np.concatenate((ids, np.full(m, 3), -1 - rng.integers(0, 3, nulls)))
    all_keys = np.concatenate((keys, wkeys, 20 * n + 10 * m + np.arange(nulls)))
    all_x = np.concatenate((x, wx, np.full(nulls, np.nan)))
    all_expected = np.concatenate((expected, wexpected, np.full(nulls, np.nan)))
    arrival = np.lexsort((rng.permutation(all_ids.shape[0]), all_ids))  # grouped by bucket id, any order inside
    tasks = {10: BucketTask(SPLIT, 0, plan, Bucket(0)), 11: BucketTask(SPLIT, 0, plan, Bucket(cut))}
    parts = (Part(StratumCall(METHODS["ranking_round"], {"k": k}, ("x",)), ("x",), "x"),)
    kernel = StageKernel(parts=parts, key="id", tasks=tasks, schema=pa.schema([("x", pa.float64())]),
                         arguments=(B, "id", "x"), value="x")
    whole = StageKernel(parts=(Part(StratumCall(METHODS["mdav_round"], {"k": 3}, ("x",)), ("x",), "x"),),
                        key="id", tasks={3: BucketTask(WHOLE, 1)}, schema=pa.schema([("x", pa.float64())]),
                        arguments=(B, "id", "x"), value="x")
    # the split stage masks the pieces and passes the NULLs; a whole stage masks the whole stratum
    split_rows = arrival[all_ids[arrival] != 3]
    got = _run(kernel, all_ids[split_rows], all_keys[split_rows], all_x[split_rows], int(rng.integers(1, 50)))
    np.testing.assert_array_equal(got, all_expected[split_rows])
    whole_rows = arrival[all_ids[arrival] == 3]
    got = _run(whole, all_ids[whole_rows], all_keys[whole_rows], all_x[whole_rows], int(rng.integers(1, 50)))
    np.testing.assert_array_equal(got, all_expected[whole_rows])


@pytest.mark.parametrize("version, ok", [("4.1.0", True), ("4.3.0", True), ("5.0.0-preview1", True),
                                         ("4.0.1", False), ("3.5.4", False), ("", False), ("dev", False)])
def test_a_release_needs_spark_4_1_or_newer(version, ok):
    if ok:
        check_spark_version(version)
        return
    with pytest.raises(SparkUnavailable, match=r"needs Spark 4\.1 or newer .*this session runs Spark " + repr(version)):
        check_spark_version(version)


def test_a_bucket_whose_records_come_in_two_pieces_is_refused():
    """A partition not sorted by bucket id (e.g. if Spark dropped the sort) must fail the task, not mask
    each piece as a bucket (groups of fewer than k records)."""
    plan = RankingPlan(9, 3, 0.0)
    kernel = StageKernel(parts=(Part(StratumCall(METHODS["ranking_round"], {"k": 3}, ("x",)), ("x",), "x"),),
                         key="id", tasks={10: BucketTask(SPLIT, 0, plan, Bucket(0))},
                         schema=pa.schema([("x", pa.float64())]), arguments=(B, "id", "x"), value="x")
    ids = np.array([10, 10, 10, 10, -1, 10, 10, 10, 10, 10])
    x = np.arange(10.0)
    x[4] = np.nan
    with pytest.raises(RuntimeError, match="bucket 10 did not come together"):
        _run(kernel, ids, np.arange(10), x, 3)


INT_TYPES = [(pa.int8(), 8), (pa.int16(), 16), (pa.int32(), 32), (pa.int64(), 64)]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(INT_TYPES), st.data())
def test_key_order_sorts_integer_keys_stably(int_type, data):
    """numpy's path for integer keys without NULLs, Arrow's with NULLs: ascending, equal keys in the
    order they came, NULLs last; against Python's stable sort. Runs of ascending keys (as records read
    in key order arrive) and the type's extremes included."""
    dtype, bits = int_type
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    value = st.integers(lo, hi) | st.sampled_from([lo, hi, 0, -1])
    runs = data.draw(st.lists(st.lists(value, max_size=30), max_size=6))
    keys = [v for run in runs for v in (sorted(run) if data.draw(st.booleans()) else run)]
    if keys and data.draw(st.booleans()):
        keys[data.draw(st.integers(0, len(keys) - 1))] = None
    expected = sorted(range(len(keys)), key=lambda i: (keys[i] is None, keys[i] or 0))
    got = key_order(pa.array(keys, dtype))
    assert got.tolist() == expected


@pytest.mark.parametrize("keys, expected", [(["b", "a", None, "ab", "a"], [1, 4, 3, 0, 2]),
                                            ([2.5, -0.5, 1e308, -1e308], [3, 1, 0, 2])])
def test_key_order_of_other_key_types_is_arrows(keys, expected):
    assert key_order(pa.array(keys)).tolist() == expected
