"""Out-of-core masking of one column (duckdb_sdc.outofcore) against the numpy methods: DuckDB's sort,
the sorted rows streamed in small chunks through the position-based kernels, equal value for value;
equal-width and equal-frequency rounding from summaries and key-ordered sums."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from duckdb_sdc import methods, outofcore
from duckdb_sdc._validate import SdcError


def table(con, n: int, seed: int, kind: str) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    if kind == "ties":
        x = rng.integers(0, 40, n).astype(float)
        x[rng.random(n) < 0.3] = 17.0  # a long run near the median
    elif kind == "cents":
        x = np.round(rng.lognormal(4, 1, n), 1)
    else:
        x = rng.normal(0, 1, n) * 1e6 + 3e9
    df = pd.DataFrame({"id": rng.permutation(n).astype(np.int64) * 3 + 5,
                       "region": rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1]), "x": x})
    df.loc[rng.random(n) < 0.05, "x"] = np.nan
    df.loc[rng.random(n) < 0.03, "region"] = None
    con.execute("CREATE OR REPLACE TABLE t AS SELECT * FROM df")
    return df


def expected(df: pd.DataFrame, fn, strata: bool) -> dict:
    out = {}
    parts = df.sort_values("id").groupby("region", dropna=False) if strata else [(None, df.sort_values("id"))]
    for _, part in parts:
        ok = part["x"].notna().to_numpy()
        if ok.any():
            out.update(zip(part["id"].to_numpy()[ok], fn(part["x"].to_numpy()[ok])))
    return out


def masked(con, **kw) -> dict:
    outofcore.mask_column(con, "t", key="id", column="x", target="m", **kw)
    return dict(con.execute("SELECT id, x FROM m").fetchall())


CASES = [
    ("ranking_round", {"k": 4}, lambda x: methods.ranking_round(x, 4)),
    ("ranking_round", {"k": 3, "representative": "median"}, lambda x: methods.ranking_round(x, 3, "median")),
    ("mdav_round", {"k": 5}, lambda x: methods.mdav_round(x, 5)),
    ("mdav_round", {"k": 2, "representative": "median"}, lambda x: methods.mdav_round(x, 2, "median")),
    ("mdav_round", {"k": "auto"}, lambda x: methods.microaggregate(x, "auto", "mdav")),
    ("efd_round", {"c": 7}, lambda x: methods.efd_round(x, 7)),
    ("efd_round", {"c": "auto", "representative": "median"}, lambda x: methods.efd_round(x, "auto", "median")),
    ("ewd_round", {"c": 6}, lambda x: methods.ewd_round(x, 6)),
    ("ewd_round", {"c": 5, "representative": "midpoint"}, lambda x: methods.ewd_round(x, 5, "midpoint")),
    ("ewd_round", {"c": "auto", "representative": "median"}, lambda x: methods.ewd_round(x, "auto", "median")),
]


@pytest.mark.parametrize("kind", ["ties", "cents", "offset"])
@pytest.mark.parametrize("method, params, fn", CASES, ids=[f"{m}-{p}" for m, p, _ in CASES])
def test_out_of_core_equals_the_numpy_method(kind, method, params, fn):
    con = duckdb.connect()
    df = table(con, 3000, seed=len(kind) * 7 + len(method), kind=kind)
    for strata in (True, False):
        try:
            want = expected(df, fn, strata)
        except SdcError as e:  # c = 'auto' refused (it would leave a value alone): refused alike, in its words
            with pytest.raises(SdcError) as got_error:
                masked(con, method=method, params=params, strata=["region"] if strata else [], chunk_rows=97)
            assert str(got_error.value).split(" chose ")[0] == str(e).split(" chose ")[0]
            assert "left a set of attraction of 1 value" in str(got_error.value)
            continue
        got = masked(con, method=method, params=params, strata=["region"] if strata else [], chunk_rows=97)
        assert got.keys() == want.keys()
        assert all(got[i] == want[i] for i in want), method
    con.close()


def test_chunks_are_cut_many_times_and_still_equal(monkeypatch):
    """The stream is cut (the counter shows it) and the long runs near the median stay whole."""
    con = duckdb.connect()
    df = table(con, 5000, seed=3, kind="ties")
    taken = []
    original = outofcore._Stratum.take

    def counting(self, method, params, upto, schema):
        taken.append(upto)
        return original(self, method, params, upto, schema)

    monkeypatch.setattr(outofcore._Stratum, "take", counting)
    got = masked(con, method="mdav_round", params={"k": 3}, strata=[], chunk_rows=200)
    assert sum(u is not None for u in taken) > 10
    want = expected(df, lambda x: methods.mdav_round(x, 3), strata=False)
    assert all(got[i] == want[i] for i in want)


def test_order_statistics_are_exact():
    con = duckdb.connect()
    rng = np.random.default_rng(1)
    x = np.round(rng.lognormal(0, 2, 20000), 3)
    con.execute("CREATE TABLE t AS SELECT unnest(?) AS x", [x.tolist()])
    v = np.sort(x)
    stats = outofcore.OrderStatistics(con, "t", "x", "true", x.shape[0])
    for i in (0, 1, 4999, 10000, 19999, -1):
        assert stats[i] == v[i]


def test_errors_name_the_function_and_parameter():
    con = duckdb.connect()
    table(con, 200, seed=1, kind="ties")
    with pytest.raises(SdcError, match=r"mdav_round: k = 500 is larger than the number of non-NULL values"):
        outofcore.mask_column(con, "t", key="id", column="x", method="mdav_round", params={"k": 500}, target="m",
                              chunk_rows=50)
    con.execute("UPDATE t SET x = 'inf'::DOUBLE WHERE id = (SELECT min(id) FROM t)")
    with pytest.raises(SdcError, match=r"ranking_round: xs contains inf; NaN and infinite values are refused"):
        outofcore.mask_column(con, "t", key="id", column="x", method="ranking_round", params={"k": 3}, target="m")
    with pytest.raises(SdcError, match=r"oma_round: is not available out of core"):
        outofcore.mask_column(con, "t", key="id", column="x", method="oma_round", params={"k": 3}, target="m")


@pytest.mark.parametrize("key", ["id", None])
def test_mask_rule_gives_the_planner_its_mask_table(tmp_path, key):
    """The temporary table the release planner joins: (__sdc_key, __sdc_value) from the planner's keyed
    view __sdc_source, keyed by the spec's key or (no source.key) the surrogate, here in id order."""
    from duckdb_sdc.release import parse_spec
    from duckdb_sdc.release.plan import RAW, keyed_step

    con = duckdb.connect()
    df = table(con, 500, seed=2, kind="cents")
    con.execute(f"CREATE TEMP VIEW {RAW} AS SELECT * FROM t")
    source = {"database": "x.duckdb", "table": "t"} | ({"key": key} if key else {})
    spec = parse_spec({"source": source, "output": {"database": "o.duckdb", "table": "t"},
                       "masking": {"strata": ["region"]},
                       "columns": {"id": {"rule": "keep", "identifying": False}, "region": "keep", "x": {"method": "mdav_round", "k": 4}}},
                      base=tmp_path)
    columns = [("id", "BIGINT"), ("region", "VARCHAR"), ("x", "DOUBLE")]
    con.execute(keyed_step(spec, columns).expression().sql(dialect="duckdb"))
    outofcore.mask_rule(con, spec, spec.rules["x"], 1, chunk_rows=60)
    got = dict(con.execute("SELECT __sdc_key, __sdc_value FROM __sdc_mask_1").fetchall())
    want = expected(df, lambda x: methods.mdav_round(x, 4), strata=True)
    if key is None:  # the surrogate: the rank of (id, region, x), which is the rank of id here
        rank = {i: r for r, i in enumerate(sorted(df["id"]), start=1)}
        want = {rank[i]: v for i, v in want.items()}
    assert got == want


@pytest.mark.parametrize("method, params, fn", [
    ("efd_round", {"c": 9}, lambda x: methods.efd_round(x, 9)),
    ("ewd_round", {"c": 4}, lambda x: methods.ewd_round(x, 4)),
])
def test_many_intervals_go_through_an_asof_join(monkeypatch, method, params, fn):
    """Above CASE_INTERVALS intervals a record's point comes from an ASOF join: the same values."""
    monkeypatch.setattr(outofcore, "CASE_INTERVALS", 0)
    con = duckdb.connect()
    df = table(con, 2000, seed=5, kind="cents")
    got = masked(con, method=method, params=params, strata=["region"])
    want = expected(df, fn, strata=True)
    assert got == want
