"""Issue 30 on the Spark engine (local[2]): a Spark release records itself in the release ledger with the
DuckDB release's source fingerprint, and is checked against it as a DuckDB release is (the epsilon budget,
a repeated DP column refused without the opt-in, linked releases gated on the union of their
quasi-identifiers), so that releases of one source by either engine compose; a refusal writes nothing,
and a release that fails is not recorded."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from release_helpers import toml_dump
from spark_helpers import spark  # noqa: F401 (fixture)
from sqlglot import exp

from duckdb_sdc.cli import main
from duckdb_sdc.release import load_spec, release
from duckdb_sdc.release.ledger import Ledger, LedgerRefusal, fingerprint
from duckdb_sdc.spark import engine
from duckdb_sdc.spark import ledger as spark_ledger
from duckdb_sdc.spark import preflight
from duckdb_sdc.spark import release as spark_release

N = 300


@pytest.fixture
def folder(tmp_path):
    """people(id, region, income) as people.csv, the same records in another order as copy.parquet; the
    ledger in tmp_path/ledger."""
    rng = np.random.default_rng(30)
    df = pd.DataFrame({"id": np.arange(1, N + 1), "region": rng.choice(["north", "south", "east"], N),
                       "income": np.round(rng.lognormal(10, 1, N), 2)})
    con = duckdb.connect()
    con.register("df", df)
    con.execute(f"COPY df TO '{tmp_path / 'people.csv'}'")
    con.execute(f"COPY (SELECT * FROM df ORDER BY income DESC) TO '{tmp_path / 'copy.parquet'}' (FORMAT parquet)")
    con.close()
    return tmp_path


def _spec(folder: Path, name: str, columns: dict, *, source="people.csv", out: str, policy=None, ledger=None):
    doc = {"source": {"files": source, "key": "id"}, "output": {"database": out, "table": "people"},
           "columns": columns, "ledger": {"path": "ledger", **(ledger or {})}}
    if policy:
        doc["policy"] = policy
    path = folder / f"{name}.toml"
    path.write_text(toml_dump(doc))
    return load_spec(path)


def _duckdb_fingerprint(path: Path, reader: str) -> str:
    """The DuckDB release's fingerprint of a file (release/ledger.py on DuckDB's reading of it)."""
    con = duckdb.connect()
    try:
        relation = exp.Table(this=exp.Anonymous(this=reader, expressions=[exp.Literal.string(str(path))]))
        columns = [(r[0], r[1]) for r in con.execute(f"DESCRIBE SELECT * FROM {reader}('{path}')").fetchall()]
        return fingerprint(con, relation, columns)
    finally:
        con.close()


def _entries(folder: Path):
    return Ledger(folder / "ledger").entries()


DP = {"id": "drop", "region": "keep", "income": {"method": "dp_laplace", "epsilon": 1.0, "lb": 0, "ub": 500000}}
K5 = {"id": {"rule": "keep", "identifying": False}, "region": "drop", "income": {"method": "mdav_round", "k": 5}}


def test_the_fingerprint_is_the_duckdb_releases(folder, spark):
    """Before Spark starts (DuckDB in the driver over the same file) and in the executors (a DataFrame
    given to the release), the fingerprint is the DuckDB release's: CSV and Parquet, in another order,
    are one source; a changed value is another."""
    expected = _duckdb_fingerprint(folder / "people.csv", "read_csv")
    assert _duckdb_fingerprint(folder / "copy.parquet", "read_parquet") == expected
    spec = _spec(folder, "fp", DP, out="out/fp")
    where = preflight.locations(spec)
    local, columns = spark_ledger.local_fingerprint(spec, where)
    assert local == expected and [n for n, _ in columns] == ["id", "region", "income"]
    frame, source_columns = engine.read_source(spark, spec, spark.read.parquet(str(folder / "copy.parquet")))
    assert spark_ledger.spark_fingerprint(frame.repartition(3), source_columns) == expected
    changed = frame.withColumn("income", frame["income"] + (frame["id"] == 7).cast("double"))
    assert spark_ledger.spark_fingerprint(changed, source_columns) not in (expected, None)
    # the same source read by Spark from the CSV file: its types as Spark infers them, the same records
    frame, source_columns = engine.read_source(spark, spec, None)
    assert spark_ledger.spark_fingerprint(frame, source_columns) == expected


def test_a_duckdb_dp_release_then_a_spark_one_is_refused_before_spark_starts(folder, capsys):
    """The DuckDB release of a DP column, then the Spark release of the same column of the same data (as
    Parquet, in another order): refused by the preflight (exit 3, before a session), with the DuckDB
    release's message naming the earlier release; nothing written, nothing recorded."""
    release(_spec(folder, "duck", DP, out="out/duck.duckdb"))
    [earlier] = _entries(folder)
    _spec(folder, "spark", DP, source="copy.parquet", out="out/spark")
    assert main(["release", str(folder / "spark.toml"), "--engine", "spark", "--quiet"]) == 3
    err = capsys.readouterr().err
    fp = earlier.data["fingerprint"]
    assert (f"duckdb-sdc release: spark.toml: income of source {fp} was released with differential privacy before "
            f"(income: {earlier.describe()}); a second release spends its epsilon again (sequential composition: "
            "epsilon 2 in all), so it is refused without a budget; nothing was written.") in err
    assert not (folder / "out" / "spark").exists()
    assert [e.id for e in _entries(folder)] == [earlier.id]


def test_a_spark_release_is_recorded_and_composes_with_duckdb(folder, spark, monkeypatch, capsys):
    """A Spark release within [policy] epsilon_budget is recorded: the DuckDB release's fingerprint, its
    columns with their epsilons, its released values by source key. A DuckDB release that would exceed
    the budget is then refused, and so is a Spark release of the same records given as a DataFrame
    (fingerprinted in the executors, checked under the ledger's lock). A release whose rename fails is
    not recorded."""
    budget = {"epsilon_budget": 1.5}
    spec = _spec(folder, "spark", DP, out="out/spark", policy=budget)

    def refused_rename(fs, tmp, target):
        raise OSError(f"cannot rename {tmp!r} to {target!r}")

    monkeypatch.setattr(engine, "put_in_place", refused_rename)
    with pytest.raises(Exception, match="output.database: cannot rename"):
        spark_release(spec, spark)
    assert _entries(folder) == [] and not (folder / "out" / "spark").exists()
    assert not list((folder / "ledger" / "values").iterdir())
    monkeypatch.undo()

    result = spark_release(spec, spark)
    assert "epsilon spent on source" in result.notes[-1] and "1 of the budget 1.5" in result.notes[-1]
    [entry] = _entries(folder)
    assert entry.data["fingerprint"] == _duckdb_fingerprint(folder / "people.csv", "read_csv")
    assert entry.data["rows"] == N and entry.data["epsilon_total"] == 1.0
    assert entry.data["source_columns"] == ["id", "region", "income"]
    assert [(c["source_column"], c["method"], c["epsilon"]) for c in entry.data["columns"]] == [
        ("id", None, None), ("region", None, None), ("income", "dp_laplace", 1.0)]
    assert entry.data["quasi_identifier_columns"] == ["region", "income"] and not entry.data["key_released"]
    con = duckdb.connect()
    manifest = con.execute(f"SELECT DISTINCT release_id FROM read_parquet('{folder}/out/spark/release_manifest/*.parquet')")
    assert manifest.fetchall() == [(entry.id,)]
    stored = con.execute(f"SELECT * FROM read_parquet('{folder}/ledger/values/{entry.id}.parquet') "
                         "ORDER BY __sdc_key").fetchdf()
    released = con.execute(f"SELECT region, income FROM read_parquet('{folder}/out/spark/people/*.parquet') "
                           "ORDER BY income, region").fetchdf()
    con.close()
    assert list(stored.columns) == ["__sdc_key", "region", "income"] and list(stored["__sdc_key"]) == list(range(1, N + 1))
    source = pd.read_csv(folder / "people.csv")
    assert list(stored["region"]) == list(source["region"])  # kept: the source's value of each key
    pd.testing.assert_frame_equal(stored[["region", "income"]].sort_values(["income", "region"]).reset_index(drop=True),
                                  released, check_dtype=False)  # the very values released, by key

    with pytest.raises(LedgerRefusal) as duck:
        release(_spec(folder, "duck", DP, out="out/duck.duckdb", policy=budget))
    with pytest.raises(LedgerRefusal) as ours:
        spark_release(_spec(folder, "spark2", DP, out="out/spark2", policy=budget), spark,
                      source=spark.read.parquet(str(folder / "copy.parquet")))
    fp = entry.data["fingerprint"]
    for refusal, name in ((duck, "duck.toml"), (ours, "spark2.toml")):
        assert str(refusal.value) == (
            f"{name}: the release would spend epsilon 1 of source {fp}, which earlier releases spent 1 of: 2 in all "
            f"exceeds [policy] epsilon_budget = 1.5 (sequential composition); nothing was written. Earlier "
            f"releases: {entry.describe()}")
    assert not (folder / "out" / "duck.duckdb").exists() and not (folder / "out" / "spark2").exists()
    assert [e.id for e in _entries(folder)] == [entry.id]


def test_linked_releases_across_engines_are_gated_on_the_union(folder, spark):
    """The intersection attack across engines: mdav_round k = 5 by DuckDB, then k = 6 by Spark, the key
    kept in both, [policy] min_k = 5: refused after masking (nothing written, nothing recorded), naming
    the DuckDB release; with [ledger] allow_linked = true written, with the warning, recorded."""
    policy = {"min_k": 5}
    release(_spec(folder, "k5", K5, out="out/k5.duckdb", policy=policy))
    [k5] = _entries(folder)
    k6 = {**K5, "income": {"method": "mdav_round", "k": 6}}
    with pytest.raises(LedgerRefusal) as refused:
        spark_release(_spec(folder, "k6", k6, out="out/k6", policy=policy), spark)
    text = str(refused.value)
    assert text.startswith("k6.toml: the release can be linked with earlier releases of its source and together "
                           "they breach min_k = 5 (the intersection attack): k-anonymity 1, unique share ")
    assert f"joined record by record: {k5.describe()}, both release the key 'id'; nothing was written." in text
    assert not (folder / "out" / "k6").exists() and [e.id for e in _entries(folder)] == [k5.id]

    result = spark_release(_spec(folder, "k6", k6, out="out/k6", policy=policy, ledger={"allow_linked": True}), spark)
    [warning] = result.warnings
    assert f"joined record by record: {k5.describe()}, both release the key 'id'" in warning
    assert warning.endswith("breaches min_k = 5 ([ledger] allow_linked = true released it anyway)")
    # the reference: the two releases joined by key, their incomes' classes counted
    con = duckdb.connect()
    con.execute(f"ATTACH '{folder}/out/k5.duckdb' AS k5 (READ_ONLY)")
    k, share = con.execute(
        f"SELECT min(n), sum(n) FILTER (WHERE n = 1) / sum(n) FROM (SELECT count(*) AS n FROM "
        f"k5.people AS a JOIN read_parquet('{folder}/out/k6/people/*.parquet') AS b USING (id) "
        "GROUP BY a.income, b.income)").fetchall()[0]
    con.close()
    assert k == 1 and share > 0
    measured = f"k-anonymity 1, unique share {share:.4g} over the quasi-identifiers"
    assert measured in warning and measured in text
    k5_entry, k6_entry = _entries(folder)
    assert k6_entry.data["linked"] == [{"release_id": k5.id, "why": "both release the key 'id'"}]
    assert k6_entry.data["warnings"] == [warning] and k6_entry.data["key_released"]
    assert k6_entry.data["fingerprint"] == k5.data["fingerprint"]
    assert json.loads(k6_entry.data["signatures"]["income"])["parameters"]["k"] == 6
