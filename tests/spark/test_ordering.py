"""The boundary comparisons of the Spark planner written as SQL text (`ordering.sql_literal`,
`Order.ranked`, `intervals.lookup`): every literal reads back as the same value, and the search and the
trees give the ranks of a slow Python reference (bisect over the records' sort keys), with ties,
signed zeros, both ends of the doubles, and keys that need quoting."""

from __future__ import annotations

import bisect
import datetime
import math

import numpy as np
import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T
from spark_helpers import spark  # noqa: F401 (fixture)

from duckdb_sdc.spark.intervals import lookup
from duckdb_sdc.spark.ordering import S, V, Order, sql_literal

DOUBLES = [0.0, -0.0, 0.1, -0.1, 1 / 3, 5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308,
           1.7976931348623157e308, -1.7976931348623157e308, 1e-300, 123456789.125, 2.0**53 + 2, 1e22, 1e23]
INTS = [0, 1, -1, 2**31 - 1, 2**31, -(2**31) - 1, 2**63 - 1, -(2**63)]
TEXTS = ["", "a", "O'Brien", "back\\slash", "\\'", '"', "line\nbreak", "tab\t", "%_*", "${x}", "ümlaut",
         "日本", "emoji \U0001f600", "--", "/*", "`x`"]


def test_literals_read_back_exactly(spark):
    rng = np.random.default_rng(3)
    doubles = DOUBLES + [float(x) for x in rng.standard_normal(20) * 10.0 ** rng.integers(-300, 300, 20)]
    doubles += [float(x) for x in np.frombuffer(rng.bytes(8 * 40), np.float64) if np.isfinite(x)]
    values = doubles + INTS + TEXTS
    row = spark.range(1).select(*[F.expr(sql_literal(v)).alias(f"c{i}") for i, v in enumerate(values)]).first()
    for i, v in enumerate(values):
        got = row[f"c{i}"]
        assert type(got) is type(v) and got == v, (v, got)
        if isinstance(v, float):
            assert math.copysign(1.0, got) == math.copysign(1.0, v), v


def test_values_without_an_exact_literal_are_not_rendered():
    for v in (math.inf, -math.inf, math.nan, 2**63, -(2**63) - 1, True, datetime.date(2020, 1, 1), b"x", None):
        assert sql_literal(v) is None, v


def _records(rng, n, keys):
    pool = np.array([-2.5, -0.0, 0.0, 1.0, 1.0, 3.0, 5e-324, 1.7976931348623157e308, -1.7976931348623157e308])
    values = [float(x) for x in rng.choice(pool, n)]
    return [(v, keys[i]) for i, v in enumerate(values)]


@pytest.mark.parametrize("kind", ["int", "text", "date"])
def test_ranked_counts_the_boundaries_at_or_before_each_record(spark, kind):
    """`Order.ranked`: the binary search (int and text keys) and the Column tree (a date key, which has
    no literal here) against bisect over the Python sort key of `Order`, per stratum, with ties in key
    order below tie_split and in reverse key order above it; numbers of boundaries around powers of
    two (the padding), a stratum without boundaries, and records of a stratum outside the search
    (the default)."""
    rng = np.random.default_rng({"int": 1, "text": 2, "date": 3}[kind])
    n = 120
    if kind == "int":
        keys = [int(k) for k in rng.choice(np.array(sorted(set(INTS) | set(range(-100, 100))), dtype=object), n, replace=False)]
        key_type = T.LongType()
    elif kind == "text":
        keys = list(rng.choice(np.array(TEXTS + [f"k{i}'\\" for i in range(120)], dtype=object), n, replace=False))
        key_type = T.StringType()
    else:
        keys = [datetime.date(2000, 1, 1) + datetime.timedelta(days=int(d)) for d in rng.permutation(5000)[:n]]
        key_type = T.DateType()
    strata = [int(s) for s in rng.integers(0, 4, n)]
    records = [(s, *r) for s, r in zip(strata, _records(rng, n, keys))]
    schema = T.StructType([T.StructField(S, T.IntegerType()), T.StructField(V, T.DoubleType()),
                           T.StructField("the key", key_type)])
    df = spark.createDataFrame(records, schema)
    for split, sizes in ((math.inf, {0: 17, 1: 0, 2: 1}), (1.0, {0: 7, 1: 8, 2: 16}), (-0.0, {0: 15, 2: 2}),
                         (1.0, {1: 8, 3: 8}), (math.inf, {})):  # 31 entries: no padding; 16: the most
        order = Order("the key", {0: split, 2: split})
        bounds, base = {}, {}
        for s, size in sizes.items():
            mine = [(v, k) for t, v, k in records if t == s]
            bounds[s] = sorted((mine[i] for i in rng.choice(len(mine), size, replace=False)), key=order.sort_key(s))
            base[s] = 100 * s + 7
        expected = []
        for t, v, k in records:
            if t in bounds:
                ordered = [order.sort_key(t)(b) for b in bounds[t]]
                expected.append(base[t] + bisect.bisect_right(ordered, order.sort_key(t)((v, k))))
            else:
                expected.append(-1)
        got = order.ranked(df, "r", bounds, base, F.lit(-1))
        assert got.columns == df.columns + ["r"]
        assert [r["r"] for r in got.collect()] == expected
        searched = "element_at(__sdc_bv" in got._jdf.queryExecution().analyzed().toString()
        assert searched == (kind != "date" and bool(sizes))  # the SQL search, or Column trees for a key without literals


def test_lookup_is_searchsorted(spark):
    """intervals.lookup: points[number of lows <= V], with ties at the lows and both ends of the doubles."""
    lows = np.array([-1e308, -0.0, 5e-324, 1.0, 2.5, 2.5000000000000004, 1.7976931348623157e308])
    points = np.array([-3.0, -1e-300, 0.0, 1e-320, 2.0, 2.5, 1e300, 1.7976931348623157e308])
    values = [-1.7976931348623157e308, -1e308, -1.0, -0.0, 0.0, 5e-324, 1e-310, 1.0, 2.5, 2.5000000000000004,
              3.0, 1.7976931348623157e308]
    df = spark.createDataFrame([(v,) for v in values], T.StructType([T.StructField(V, T.DoubleType())]))
    got = [r[0] for r in df.select(lookup(lows, points)).collect()]
    assert got == [float(points[np.searchsorted(lows, v, side="right")]) for v in values]
    assert math.copysign(1.0, got[3]) == 1.0  # -0.0 is not below the low -0.0: 0.0 is its point
