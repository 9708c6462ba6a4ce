"""The Spark engine with a real Spark (local[2]): the same spec gives the same release as DuckDB's,
value for value by key; huge strata are masked bucket by bucket with the numpy method's values; a
stratum too large for a whole-stratum method is refused; the release folder appears atomically."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from pyspark.sql import functions as F
from spark_helpers import previous_release, read_manifest, read_release, spark, tree, write_parquet  # noqa: F401 (fixture)

from duckdb_sdc import methods
from duckdb_sdc.release import SpecError, parse_spec, release, report
from duckdb_sdc.spark import Options
from duckdb_sdc.spark import engine
from duckdb_sdc.kernels.cipher import encrypt, round_keys
from duckdb_sdc.spark import evaluate as spark_evaluate
from duckdb_sdc.spark import release as spark_release


def _rule(key: str):
    """The key's rule: "drop", or kept as a key that identifies no one outside the release (a kept key
    needs the spec to say so)."""
    return {"rule": "keep", "identifying": False} if key == "keep" else key


def records(n: int = 360, seed: int = 3) -> pd.DataFrame:
    """Records with strata, NULLs and many ties in every masked column."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "id": rng.permutation(n).astype(np.int64) * 7 + 1,  # keys not in row order
        "region": rng.choice(["north", "south", "east"], n),
        "age": rng.integers(18, 40, n).astype(np.int64),
        "income": np.round(rng.lognormal(9, 0.5, n), -1),
        "expenses": np.round(rng.uniform(100, 900, n), 1),
        "savings": rng.integers(0, 30, n) * 100.0,
        "height": np.round(rng.normal(170, 10, n), 0),
        "weight": np.round(rng.normal(70, 12, n), 0),
        "g1": np.round(rng.normal(5, 2, n), 1),
        "g2": np.round(rng.normal(50, 10, n), 0),
        "b1": np.round(rng.normal(10, 3, n), 1),
        "b2": np.round(rng.normal(20, 5, n), 1),
        "note": [f"n{i}" for i in range(n)],
    })
    for col in ("income", "expenses", "savings", "height", "g1", "b2"):
        df.loc[rng.random(n) < 0.06, col] = np.nan
    df.loc[rng.random(n) < 0.05, "region"] = None
    return df


def doc(out: str, columns: dict, groups: list | None = None) -> dict:
    d = {"source": {"files": "people.parquet", "key": "id"},
         "output": {"database": out, "table": "people"},
         "masking": {"strata": ["region"]},
         "columns": columns}
    if groups:
        d["groups"] = groups
    return d


BASE = {"id": {"rule": "keep", "identifying": False}, "region": "keep", "note": "drop"}


def both(folder: Path, spark, columns: dict, groups=None, options=None):
    """(DuckDB release, Spark release) of the same spec, both as frames ordered by id."""
    columns = {**BASE, **columns}
    release(parse_spec(doc("duck.duckdb", columns, groups), base=folder))
    con = duckdb.connect(str(folder / "duck.duckdb"), read_only=True)
    duck = con.execute("SELECT * FROM people ORDER BY id").fetchdf()
    con.close()
    spark_release(parse_spec(doc("spark_release", columns, groups), base=folder), spark, options=options)
    return duck, read_release(folder / "spark_release", "people")


@pytest.fixture
def source(tmp_path):
    df = records()
    write_parquet(df, tmp_path / "people.parquet")
    return tmp_path, df


def test_whole_strata_equal_the_duckdb_release(source, spark):
    """Methods that take a whole stratum, a group method and boxes, with strata and NULLs."""
    folder, df = source
    columns = {"age": {"method": "ranking_round", "k": 3, "strata": []},
               "income": {"method": "mdav_round", "k": 5},
               "expenses": {"method": "oma_round", "k": 4, "representative": "median"},
               "savings": {"method": "efd_round", "c": 5},
               "height": {"method": "vmdav_round", "k": 3},
               "weight": {"method": "kmd_round", "c": 2}}
    groups = [{"columns": ["g1", "g2"], "method": "mdav_multi_round", "k": 4},
              {"columns": ["b1", "b2"], "method": "box_release", "k": 6, "characteristic": "mean(b1)"}]
    duck, sp = both(folder, spark, columns, groups)
    assert list(sp.columns) == list(duck.columns)
    assert list(sp["id"]) == sorted(df["id"])
    pd.testing.assert_frame_equal(sp, duck, check_dtype=False)
    assert sp["income"].isna().sum() == df["income"].isna().sum() > 0  # NULLs stay NULL
    assert sp["b2_lower"].isna().sum() == df["b2"].isna().sum() > 0
    manifest = read_manifest(folder / "spark_release")
    con = duckdb.connect(str(folder / "duck.duckdb"), read_only=True)
    duck_manifest = con.execute("SELECT * FROM release_manifest").fetchdf()
    con.close()
    assert list(manifest.columns) == list(duck_manifest.columns)
    same = [c for c in manifest.columns if c not in ("duckdb_version", "created_at", "spec", "release_id")]
    pd.testing.assert_frame_equal(manifest[same], duck_manifest[same], check_dtype=False)
    specs = [json.loads(t) for t in (manifest["spec"][0], duck_manifest["spec"][0])]
    assert [s["output"]["database"] for s in specs] == ["spark_release", "duck.duckdb"]
    assert specs[0] | {"output": None} == specs[1] | {"output": None}
    assert set(manifest["duckdb_version"]) == {f"spark {spark.version}"}


def test_huge_strata_in_buckets_equal_the_duckdb_release(source, spark):
    """Position-based methods with strata split into buckets of 40 records, and equal-width and
    equal-frequency discretisation above max_stratum_rows in Spark SQL."""
    folder, _ = source
    columns = {"age": {"method": "ranking_round", "k": 3, "strata": []},
               "income": {"method": "mdav_round", "k": 5},
               "expenses": {"method": "mdav_round", "k": 3, "representative": "median", "strata": []},
               "savings": {"method": "efd_round", "c": 5},
               "height": {"method": "ewd_round", "c": 4},
               "weight": {"method": "ewd_round", "c": 3, "representative": "median"},
               "g1": {"method": "ewd_round", "c": 3, "representative": "midpoint"},
               "g2": {"method": "efd_round", "c": "auto", "representative": "midpoint", "strata": []},
               "b1": {"method": "ranking_round", "k": "auto"}, "b2": "keep"}
    options = Options(bucket_rows=40, max_stratum_rows=50, sample_rows=60, guard_rows=12)
    duck, sp = both(folder, spark, columns, options=options)
    pd.testing.assert_frame_equal(sp, duck, check_dtype=False)


@pytest.mark.parametrize("options", [None, Options(bucket_rows=40, max_stratum_rows=200, sample_rows=60, guard_rows=12)],
                         ids=["whole strata", "buckets"])
def test_seeded_noise_equals_the_duckdb_release(source, spark, options):
    """With reproducible_noise = true and a seed, noise methods give the DuckDB release's values on
    Spark: each stratum's seed is stratum_seed(seed, column, stratum index), and a DP cluster's draw is
    a function of (stratum seed, cluster), whether the stratum is masked whole or in buckets (DP
    mechanisms; add_noise and rank_swap always take a whole stratum, within max_stratum_rows)."""
    folder, _ = source
    columns = {"age": "keep",
               "income": {"method": "dp_laplace", "epsilon": 1.0, "lb": 0, "ub": 60000, "seed": 11},
               "expenses": {"method": "idp_cbls", "k": 5, "epsilon": 2.0, "seed": 12},
               "savings": {"method": "dp_um", "k": 4, "epsilon": 1.0, "lb": 0, "ub": 3000, "seed": 13},
               "height": {"method": "add_noise", "level": 0.1, "seed": 14},
               "weight": {"method": "rank_swap", "p": 10, "seed": 15},
               "g1": "keep", "g2": "keep", "b1": "keep", "b2": "keep"}
    full = {**BASE, **columns}
    specs = []
    for out in ("duck.duckdb", "spark_release"):
        d = doc(out, full)
        d["masking"]["reproducible_noise"] = True
        d["ledger"] = {"repeat_dp": True}  # the DuckDB release spent their epsilons on the same source
        specs.append(parse_spec(d, base=folder))
    release(specs[0])
    con = duckdb.connect(str(folder / "duck.duckdb"), read_only=True)
    duck = con.execute("SELECT * FROM people ORDER BY id").fetchdf()
    con.close()
    spark_release(specs[1], spark, options=options)
    sp = read_release(folder / "spark_release", "people")
    pd.testing.assert_frame_equal(sp, duck, check_dtype=False)


def one_column_source(folder: Path, n: int) -> np.ndarray:
    """n records in key order: heavy ties (integers with long runs) and some decimals."""
    rng = np.random.default_rng(17)
    x = rng.integers(0, 2_000, n).astype(float)
    x[rng.random(n) < 0.3] = 700.0  # a long run near the median
    frac = rng.random(n) < 0.2
    x[frac] += np.round(rng.random(frac.sum()), 2)
    y = np.round(rng.lognormal(8, 1, n), 0)
    pd_df = pd.DataFrame({"id": np.arange(n, dtype=np.int64), "x": x, "y": y, "z": y.copy()})
    write_parquet(pd_df, folder / "one.parquet")
    return pd_df


def test_one_huge_stratum_of_a_million_values_equals_the_numpy_methods(tmp_path, spark):
    """1M values cut into about 10 buckets (ties cross the bucket boundaries): MDAV and individual
    ranking equal the numpy methods value for value; so does equal frequency in Spark SQL."""
    df = one_column_source(tmp_path, 1_000_000)
    spec = parse_spec({"source": {"files": "one.parquet", "key": "id"},
                       "output": {"database": "big", "table": "t"},
                       "columns": {"id": {"rule": "keep", "identifying": False}, "x": {"method": "mdav_round", "k": 7},
                                   "y": {"method": "ranking_round", "k": 5},
                                   "z": {"method": "efd_round", "c": 20}}}, base=tmp_path)
    options = Options(bucket_rows=100_000, max_stratum_rows=200_000)
    spark_release(spec, spark, options=options)
    out = duckdb.connect().execute(f"SELECT x, y, z FROM read_parquet('{tmp_path}/big/t/*.parquet') ORDER BY id").fetchnumpy()
    np.testing.assert_array_equal(out["x"], methods.mdav_round(df["x"].to_numpy(), 7))
    np.testing.assert_array_equal(out["y"], methods.ranking_round(df["y"].to_numpy(), 5))
    np.testing.assert_array_equal(out["z"], methods.efd_round(df["z"].to_numpy(), 20))


def test_a_stratum_too_large_for_a_whole_stratum_method_is_refused(source, spark):
    folder, _ = source
    columns = {**BASE, "income": {"method": "oma_round", "k": 3}, "age": "keep", "expenses": "drop",
               "savings": "drop", "height": "drop", "weight": "drop", "g1": "drop", "g2": "drop", "b1": "drop",
               "b2": "drop"}
    spec = parse_spec(doc("refused", columns), base=folder)
    with pytest.raises(SpecError, match=r"columns.income: oma_round: stratum region = '(north|south|east)' has "
                                        r"\d+ records to mask, more than max_stratum_rows = 50"):
        spark_release(spec, spark, options=Options(max_stratum_rows=50))
    assert not (folder / "refused").exists() and _leftovers(folder) == []


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


SMALL = {**BASE, "age": "keep", "income": {"method": "mdav_round", "k": 5}, "expenses": "drop", "savings": "drop",
         "height": "drop", "weight": "drop", "g1": "drop", "g2": "drop", "b1": "drop", "b2": "drop"}


def test_a_run_that_fails_midway_leaves_the_previous_release_untouched(source, spark):
    """A stratum too small for k fails inside the executors while the table is being written."""
    folder, df = source
    target = folder / "out"
    before = previous_release(target, "people")
    smallest = int(df.groupby("region", dropna=False)["income"].count().min())
    columns = {**SMALL, "income": {"method": "mdav_round", "k": smallest + 1}}
    with pytest.raises(SpecError, match=rf"columns.income: stratum region = .*: mdav_round: k = {smallest + 1} is "
                                        r"larger than the number of non-NULL values"):
        spark_release(parse_spec(doc("out", columns), base=folder), spark)
    assert tree(target) == before
    assert _leftovers(folder) == []


def test_an_interrupted_run_writes_nothing(source, spark, monkeypatch):
    """Interrupted after the table was written, before the manifest: no folder, no leftovers."""
    folder, _ = source

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "manifest_frame", interrupted)
    with pytest.raises(KeyboardInterrupt):
        spark_release(parse_spec(doc("out", SMALL), base=folder), spark)
    assert not (folder / "out").exists() and _leftovers(folder) == []


def test_a_source_changed_during_the_release_is_refused(source, spark):
    """The source files as the release started are checked before the rename (issue 27's snapshot): a
    source file rewritten while the release reads it (here by the check hook, after the table was
    written) refuses the release; the previous release and the linkage stay as they were."""
    folder, df = source
    before = previous_release(folder / "out", "people")

    def rewrite(spark, released, src):
        write_parquet(df.iloc[::-1], folder / "people.parquet")

    d = doc("out", SMALL)
    with pytest.raises(SpecError, match=r"source.files: '.*people.parquet' changed \(its size, modification time or "
                                        r"inode\) while the release read it; nothing was written"):
        spark_release(parse_spec(d, base=folder), spark, check=rewrite)
    assert tree(folder / "out") == before and _leftovers(folder) == []


def text_keys(df: pd.DataFrame) -> pd.DataFrame:
    """The records with their key as text: the secret order is then md5's, not the cipher's."""
    return df.assign(id=["k" + str(i) for i in df["id"]])


@pytest.mark.parametrize("key_type", ["integer", "text"])
@pytest.mark.parametrize("key", ["keep", "drop"])
def test_a_repeated_key_is_refused_with_the_duckdb_message(tmp_path, spark, key, key_type):
    """Whether the release carries the key or not, and whether the secret order is the cipher's (an
    integer key: a repeated key has a repeated cipher text) or md5's (a text key: the hash and the key)."""
    df = records()
    df.loc[5, "id"] = df.loc[6, "id"]
    write_parquet(df if key_type == "integer" else text_keys(df), tmp_path / "people.parquet")
    with pytest.raises(SpecError, match=r"source.key: 'id' must be unique and non-NULL; it has 0 NULL and 1 "
                                        r"repeated values"):
        spark_release(parse_spec(doc("out", {**SMALL, "id": _rule(key)}), base=tmp_path), spark)
    assert not (tmp_path / "out").exists() and _leftovers(tmp_path) == []


@pytest.mark.parametrize("key_type", ["integer", "text"])
@pytest.mark.parametrize("key", ["keep", "drop"])
def test_a_null_key_is_refused_with_the_duckdb_message(tmp_path, spark, key, key_type):
    """A NULL key on both paths of the secret order: the cipher's (its text is NULL where the key is, so
    the count of its records alone would let it through) and md5's; nothing is written."""
    df = records() if key_type == "integer" else text_keys(records())
    df["id"] = df["id"].astype("Int64" if key_type == "integer" else object)
    df.loc[5, "id"] = None
    write_parquet(df, tmp_path / "people.parquet")
    with pytest.raises(SpecError, match=r"source.key: 'id' must be unique and non-NULL; it has 1 NULL and 0 "
                                        r"repeated values"):
        spark_release(parse_spec(doc("out", {**SMALL, "id": _rule(key)}), base=tmp_path), spark)
    assert not (tmp_path / "out").exists() and _leftovers(tmp_path) == []


@pytest.mark.parametrize("column, where", [("id", "source.key"), ("region", "masking.strata"), ("note", "source")])
def test_a_text_column_under_another_collation_is_refused(source, spark, column, where):
    """Under UTF8_LCASE Spark puts 'a' before 'B' and groups 'North' with 'north'; the executors sort keys
    by their bytes and DuckDB groups strata and classes by them: refused, naming the spec key that uses
    the column (or the source), nothing written."""
    folder, df = source
    frame = spark.read.parquet(str(folder / "people.parquet"))
    text = F.col(column) if column == "region" else F.concat(F.lit("k"), F.col("id").cast("string"))
    frame = frame.withColumn(column, F.collate(text, "UTF8_LCASE"))
    with pytest.raises(SpecError, match=rf"{where}: column '{column}' has collation UTF8_LCASE; a Spark release "
                                        r"compares text byte by byte"):
        spark_release(parse_spec(doc("out", SMALL), base=folder), spark, source=frame)
    assert not (folder / "out").exists() and _leftovers(folder) == []


@pytest.mark.parametrize("key, value, note", [
    ("storage_version", "v1.5.0", "note: output.storage_version is ignored: a Spark release writes Parquet files"),
    ("view_without_key", "public", "note: output.view_without_key is ignored: a Spark release writes Parquet files, "
                                   "which hold no views; the table keeps the key column 'id'"),
])
def test_keys_that_mean_nothing_for_parquet_are_accepted_with_a_note(source, spark, capsys, key, value, note):
    """Before, both were refused (each after Spark had started): the README's quickstart spec, which
    has both, could not run on Spark unchanged."""
    folder, df = source
    d = doc("out", SMALL)
    d["output"][key] = value
    spark_release(parse_spec(d, base=folder), spark)
    assert note in capsys.readouterr().err
    assert len(read_release(folder / "out", "people")) == len(df)


def test_spark_release_of_a_duckdb_table_source(tmp_path, spark):
    """A spec whose source is a DuckDB table: sent to Spark through memory (no file anywhere, nothing
    inside or beside the output folder but the release), then released; a dropped column nothing needs
    is never read."""
    df = records()
    con = duckdb.connect(str(tmp_path / "src.duckdb"))
    con.register("frame", df)
    con.execute("CREATE TABLE people AS SELECT * FROM frame")
    con.close()
    d = doc("out", SMALL)
    d["source"] = {"database": "src.duckdb", "table": "people", "key": "id"}
    plans = []
    spark_release(parse_spec(d, base=tmp_path), spark,
                  check=lambda spark, released, src: plans.append(src._jdf.queryExecution().executedPlan().toString()))
    assert "FileScan" not in plans[0] and ("Scan ExistingRDD" in plans[0] or "InMemoryTableScan" in plans[0])
    assert "note" not in plans[0] and "expenses" not in plans[0]  # dropped, and nothing needs them
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "src.duckdb"]
    out = read_release(tmp_path / "out", "people")
    assert len(out) == len(df) and _leftovers(tmp_path) == []
    expected = {}
    for _, part in df.sort_values("id").groupby("region", dropna=False):
        vals = part["income"].to_numpy()
        ok = ~np.isnan(vals)
        expected.update(zip(part["id"][ok], methods.mdav_round(vals[ok], 5)))
    got = dict(zip(out["id"], out["income"]))
    assert all(got[i] == v for i, v in expected.items())


def test_release_row_order_is_not_the_key_order(source, spark):
    folder, _ = source
    spark_release(parse_spec(doc("out", SMALL), base=folder), spark)
    con = duckdb.connect()
    ids = [r[0] for r in con.execute(f"SELECT id FROM read_parquet('{folder}/out/people/*.parquet')").fetchall()]
    con.close()
    assert sorted(ids) != ids and abs(np.corrcoef(np.argsort(np.argsort(ids)), np.arange(len(ids)))[0, 1]) < 0.2
    assert sorted(os.listdir(folder / "out")) == ["people", "release_manifest"]


def _written_plans(monkeypatch, text) -> list[str]:
    """A list that gets text(query execution) of each table a release writes (`engine.shuffled`'s)."""
    plans = []
    real = engine.shuffled

    def capture(*args, **kwargs):
        out = real(*args, **kwargs)
        plans.append(text(out._jdf.queryExecution()))
        return out

    monkeypatch.setattr(engine, "shuffled", capture)
    return plans


SECRET = bytes.fromhex("5a1f" * 8)


@pytest.mark.parametrize("key_type", ["integer", "text"])
def test_the_secret_is_not_in_the_plan_spark_shows_and_logs(source, spark, monkeypatch, key_type):
    """The secret of the row order reaches the executors as data (the md5 path: a one-row table), or
    inside the masking kernel's pickled function (the cipher's round keys), never as a literal of the
    query plan (Spark's UI and event logs show plan text); the plans of the written table are captured."""
    folder, df = source
    monkeypatch.setattr(engine.secrets, "token_hex", lambda n: SECRET.hex())
    monkeypatch.setattr(engine.secrets, "token_bytes", lambda n: SECRET)
    plans = _written_plans(monkeypatch, lambda e: e.toString() + e.executedPlan().toString())
    frame = spark.createDataFrame(df if key_type == "integer" else text_keys(df))
    spark_release(parse_spec(doc("out", SMALL), base=folder), spark, source=frame)
    assert len(plans) == 1 and ("__sdc_salt" in plans[0]) == (key_type == "text")
    secrets = [SECRET.hex(), SECRET.hex().upper(), *(str(k) for k in round_keys(SECRET) if k > 9999)]
    assert not any(s in plans[0] for s in secrets)


def _files_in_order(folder: Path) -> list[pd.DataFrame]:
    con = duckdb.connect()
    files = sorted(str(p) for p in (folder / "out" / "people").glob("*.parquet"))
    out = [con.execute(f"SELECT * FROM read_parquet('{f}')").fetchdf() for f in files]
    con.close()
    return out


def test_an_integer_key_puts_the_records_in_the_order_of_its_cipher_text(source, spark, monkeypatch):
    """Each file of the release holds its records in the order of their keys' Speck64/128 cipher text
    under the secret (fixed here), Spark sorting on that one BIGINT: no md5 and no sort on the key in
    the executed plan. With the key dropped, ROW_KEY does not go through the shuffle either (HASH is
    NULL where the key is), and the records are the same, in the same files and order."""
    folder, df = source
    monkeypatch.setattr(engine.secrets, "token_bytes", lambda n: SECRET)
    plans = _written_plans(monkeypatch, lambda e: e.executedPlan().toString())
    cipher = dict(zip(df["id"], encrypt(df["id"].to_numpy(np.int64), round_keys(SECRET))))
    layouts = {}
    for key in ("keep", "drop"):
        spark_release(parse_spec(doc("out", {**SMALL, "id": _rule(key)}), base=folder), spark)
        files = [f for f in _files_in_order(folder) if len(f)]
        assert sum(len(f) for f in files) == len(df) and len(files) > 1
        assert ("id" in files[0].columns) == (key == "keep")
        layouts[key] = [list(zip(f["region"], f["age"])) for f in files]
        if key == "keep":
            for f in files:
                assert np.all(np.diff([cipher[i] for i in f["id"]]) > 0)
    assert layouts["keep"] == layouts["drop"]
    for plan in plans:
        assert "md5" not in plan and "__sdc_rid" not in plan and "__sdc_salt" not in plan
        sorts = [s for s in re.findall(r"Sort \[([^\]]*)\]", plan) if "__sdc_b" not in s]
        assert len(sorts) == 1 and re.fullmatch(r"__sdc_h#\d+L ASC NULLS FIRST", sorts[0])  # one key: radix


@pytest.mark.parametrize("key", ["keep", "drop"])
def test_the_md5_order_shuffles_the_key_once(source, spark, monkeypatch, key):
    """A text key (the md5 path): a released key goes through the secret-order shuffle as its own
    column only (not also as the ROW_KEY copy that the policy gate joins on); a dropped one as
    ROW_KEY. The executed plan of the written table is read; both releases hold every record once."""
    folder, df = source
    plans = _written_plans(monkeypatch, lambda e: e.executedPlan().toString())
    frame = spark.createDataFrame(text_keys(df))
    spark_release(parse_spec(doc("out", {**SMALL, "id": _rule(key)}), base=folder), spark, source=frame)
    assert len(plans) == 1 and "md5" in plans[0] and ("__sdc_rid" in plans[0]) == (key == "drop")
    con = duckdb.connect()
    got = con.execute(f"SELECT * FROM read_parquet('{folder}/out/people/*.parquet')").fetchdf()
    con.close()
    assert ("id" in got.columns) == (key == "keep") and len(got) == len(df)
    if key == "keep":
        assert sorted(got["id"]) == sorted(text_keys(df)["id"])


def test_a_check_on_the_would_be_release_can_refuse_it(source, spark):
    """The policy gate's hook: it sees the written table before it is put in place; refusing leaves
    nothing at the target. The source here is a DataFrame given by the caller."""
    from duckdb_sdc.spark import evaluate

    folder, df = source
    spec = parse_spec(doc("gated", SMALL), base=folder)
    seen = {}

    def gate(spark, released, original):
        rows = evaluate(spec, spark, released=released, original=original)
        k = rows[(rows["measure"] == "k_anonymity") & (rows["column"] == "income")]["value"].iloc[0]
        seen["k"] = k
        if k < 6:
            raise SpecError(f"policy: min_k = 6, but k_anonymity of income is {k:g}")

    frame = spark.read.parquet(str(folder / "people.parquet"))
    with pytest.raises(SpecError, match=r"policy: min_k = 6, but k_anonymity of income is 5"):
        spark_release(spec, spark, source=frame, check=gate)
    assert seen["k"] == 5
    assert not (folder / "gated").exists() and _leftovers(folder) == []


def test_the_release_limits_generated_methods_to_what_the_jvm_compiles_and_restores_the_session(source, spark):
    """While a release runs, whole-stage code generation is limited to 8000-byte methods (the boundary
    comparisons of many buckets would otherwise run as interpreted bytecode, see
    `session.jit_sized_codegen`); the session's setting is back afterwards, unset or as it was, also
    when the release is refused."""
    from duckdb_sdc.spark.session import HUGE_METHOD

    folder, _ = source
    spec = parse_spec(doc("jit", SMALL), base=folder)
    seen = []

    def look(spark, released, original):
        seen.append(spark.conf.get(HUGE_METHOD))

    assert spark.conf.get(HUGE_METHOD, None) is None
    spark_release(spec, spark, check=look)
    assert seen == ["8000"] and spark.conf.get(HUGE_METHOD, None) is None
    spark.conf.set(HUGE_METHOD, "20000")
    try:
        def refuse(spark, released, original):
            look(spark, released, original)
            raise SpecError("refused by the check")

        with pytest.raises(SpecError, match="refused by the check"):
            spark_release(spec, spark, check=refuse)
        assert seen == ["8000", "8000"] and spark.conf.get(HUGE_METHOD) == "20000"
        spark.conf.set(HUGE_METHOD, "4000")  # a lower limit is the session's own choice: kept
        spark_release(spec, spark, check=look)
        assert seen[-1] == "4000"
    finally:
        spark.conf.unset(HUGE_METHOD)


@pytest.mark.parametrize("strata", [["region"], ["age"]])
def test_strata_index_as_a_case_equals_the_join(source, spark, monkeypatch, strata):
    """Up to INLINE_STRATA strata of one text or integer column get their index from a CASE on the
    value (no join in every pass); it gives every record the index the broadcast join gives (NULL
    strata values included: region has some)."""
    folder, df = source
    spec = parse_spec({**doc("idx", SMALL), "masking": {"strata": strata}}, base=folder)
    src, source_columns = engine.read_source(spark, spec, None, None)
    engine.resolve(spec, source_columns)

    def index(inline: int):
        monkeypatch.setattr(engine, "INLINE_STRATA", inline)
        out, st = engine.compute_strata(spark, src, spec, spec.masked())
        name = st[tuple(strata)].index_column
        assert ("CASE WHEN" in out.select(name)._jdf.queryExecution().analyzed().toString()) == (inline > 0)
        return out.select("id", name).toPandas().sort_values("id").reset_index(drop=True), st[tuple(strata)].labels

    (case, labels), (join, join_labels) = index(64), index(0)
    assert labels == join_labels and len(labels) == df[strata[0]].nunique(dropna=False)
    pd.testing.assert_frame_equal(case, join, check_dtype=False)
    assert case.iloc[:, 1].notna().all()


def test_an_empty_source_with_strata_gives_an_empty_release(tmp_path, spark):
    """No records, so no strata and no buckets: the Spark release writes the empty table and the
    manifest, as the DuckDB release does (it raised an AttributeError on the strata index, then an
    AnalysisException on an empty bucket map)."""
    empty = pd.DataFrame({"id": np.arange(0, dtype=np.int64), "s": pd.Series([], dtype=object), "x": np.zeros(0)})
    write_parquet(empty, tmp_path / "empty.parquet")
    doc = {"source": {"files": "empty.parquet", "key": "id"}, "masking": {"strata": ["s"]},
           "columns": {"id": {"rule": "keep", "identifying": False}, "s": "keep", "x": {"method": "mdav_round", "k": 3}}}
    release(parse_spec({**doc, "output": {"database": "duck.duckdb", "table": "t"}}, base=tmp_path))
    result = spark_release(parse_spec({**doc, "output": {"database": "out", "table": "t"}}, base=tmp_path), spark)
    assert result.rows == 0
    out = read_release(tmp_path / "out", "t")
    assert list(out.columns) == ["id", "s", "x"] and len(out) == 0
    duck = duckdb.connect(str(tmp_path / "duck.duckdb"), read_only=True).execute("SELECT * FROM t").fetchdf()
    assert list(duck.columns) == list(out.columns) and len(duck) == 0
    assert len(read_manifest(tmp_path / "out")) == 3



def _linked(con, table: str, linkage: str) -> pd.DataFrame:
    """The rows of `table` (a DuckDB table, in its row order) with their keys from `linkage`."""
    return con.execute(f"SELECT l.key AS __key, t.* EXCLUDE (position) FROM (SELECT rowid + 1 AS position, * "
                       f"FROM {table}) t JOIN {linkage} l USING (position) ORDER BY l.key").fetchdf()


@pytest.mark.parametrize("key", ["id", None])
def test_the_linkage_gives_each_released_row_its_record(source, spark, key):
    """output.linkage on Spark: a folder release_linkage/ with the DuckDB linkage file's columns, whose
    positions are the rows' places as DuckDB reads the release folder (its files in name order); joined
    back to the source by key, every row's kept values are its record's and its masked values the
    DuckDB release's for that record. Without a key, the key is the surrogate (the record's rank in all
    its columns, NULLs last) that both engines compute."""
    folder, df = source
    columns = {**SMALL, "id": "drop" if key else "keep", "savings": {"method": "ranking_round", "k": 4}}

    def spec(out, link):
        d = doc(out, columns)
        if key is None:
            del d["source"]["key"]
        d["output"]["linkage"] = link
        return parse_spec(d, base=folder)

    release(spec("duck.duckdb", "private/duck_link.duckdb"))
    result = spark_release(spec("out", "private/spark_link"), spark)
    assert result.linkage == str(folder / "private" / "spark_link")
    assert sorted(os.listdir(folder / "private" / "spark_link")) == ["release_linkage"]
    assert sorted(os.listdir(folder / "out")) == ["people", "release_manifest"] and _leftovers(folder / "private") == []
    con = duckdb.connect()
    con.execute("SET threads = 2")
    con.execute(f"CREATE TABLE spark_rel AS SELECT * FROM read_parquet('{folder}/out/people/*.parquet')")
    con.execute("CREATE TABLE spark_link AS SELECT * FROM "
                f"read_parquet('{folder}/private/spark_link/release_linkage/*.parquet')")
    con.execute(f"ATTACH '{folder}/duck.duckdb' AS duck (READ_ONLY)")
    con.execute(f"ATTACH '{folder}/private/duck_link.duckdb' AS duck_link (READ_ONLY)")
    assert len(list((folder / "out" / "people").glob("*.parquet"))) > 1  # positions run across files
    # the same columns and types (DuckDB types key_column NULL when the spec has no key; Spark VARCHAR)
    duck_types = [(r[0], r[1]) for r in con.execute("DESCRIBE duck_link.release_linkage").fetchall()]
    assert [(r[0], r[1]) for r in con.execute("DESCRIBE spark_link").fetchall()] == [
        (n, "VARCHAR" if t == '"NULL"' else t) for n, t in duck_types]
    manifest = read_manifest(folder / "out")
    assert con.execute("SELECT DISTINCT release_id, release_table, key_column FROM spark_link").fetchall() == [
        (manifest["release_id"][0], "people", key)]
    assert con.execute("SELECT count(*), min(position), max(position), count(DISTINCT position), count(DISTINCT key) "
                       "FROM spark_link").fetchone() == (len(df), 1, len(df), len(df), len(df))
    spark_rows = _linked(con, "spark_rel", "spark_link")
    pd.testing.assert_frame_equal(spark_rows, _linked(con, "duck.people", "duck_link.release_linkage"),
                                  check_dtype=False)
    order = ", ".join(f'"{c}" NULLS LAST' for c in df.columns)
    keyed = con.execute(f"SELECT {'id' if key else f'row_number() OVER (ORDER BY {order})'} AS __key, * "
                        f"FROM read_parquet('{folder}/people.parquet') ORDER BY __key").fetchdf()
    con.close()
    kept = ["region", "age"] + ([] if key else ["id"])
    pd.testing.assert_frame_equal(spark_rows[["__key", *kept]], keyed[["__key", *kept]], check_dtype=False)
    for (_, rows), (_, originals) in zip(spark_rows.groupby("region", dropna=False), keyed.groupby("region", dropna=False)):
        for column, method, k in (("income", methods.mdav_round, 5), ("savings", methods.ranking_round, 4)):
            x = originals.sort_values("__key")[column].to_numpy()
            ok = ~np.isnan(x)
            got = rows.sort_values("__key")[column].to_numpy()
            assert np.isnan(got[~ok]).all() and (got[ok] == method(x[ok], k)).all()
    # evaluate links the records through the linkage folder as DuckDB's report does through its file
    ours = spark_evaluate(spec("out", "private/spark_link"), spark)
    duck = report(spec("duck.duckdb", "private/duck_link.duckdb"))
    on = ["section", "measure", "column"]
    both_ = ours.fillna({"column": ""}).merge(duck.fillna({"column": ""}), on=on, how="left", suffixes=("", "_duck"))
    assert len(both_) == len(ours) > 20 and both_["value_duck"].notna().sum() == both_["value"].notna().sum()
    np.testing.assert_allclose(both_["value"].astype(float), both_["value_duck"].astype(float), rtol=1e-12)
