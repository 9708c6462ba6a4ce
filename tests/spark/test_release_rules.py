"""The Spark release follows the DuckDB release's rules (real Spark, local[2]): the policy gate (a
breach writes nothing and raises the same error), seeds refused without reproducible_noise,
`decimals`, the surrogate key of a spec without source.key, the manifest's resolved 'auto' values,
base rounding, noise addition and rank swapping per stratum, and the options a Spark release
cannot honour refused naming their key."""

from __future__ import annotations

import re

import duckdb
import numpy as np
import pandas as pd
import pytest
from spark_helpers import read_manifest, spark, write_parquet  # noqa: F401 (fixture)
from spark.test_release import BASE, _leftovers, doc, records

from duckdb_sdc import cli
from duckdb_sdc.methods.base_rounding import base_round
from duckdb_sdc.methods.noise_addition import add_noise
from duckdb_sdc.methods.rank_swap import rank_swap
from duckdb_sdc.release import PolicyBreach, SpecError, parse_spec, release
from duckdb_sdc.release.methods import METHODS
from duckdb_sdc.spark import release as spark_release
from duckdb_sdc.spark.stratum import StratumCall, mask_stratum, stratum_seed

DROP_REST = {c: "drop" for c in ("age", "income", "expenses", "savings", "height", "weight", "g1", "g2", "b1", "b2")}


@pytest.fixture
def source(tmp_path):
    df = records()
    write_parquet(df, tmp_path / "people.parquet")
    return tmp_path, df


def _duck(folder, name, table="people") -> pd.DataFrame:
    con = duckdb.connect(str(folder / name), read_only=True)
    out = con.execute(f'SELECT * FROM "{table}"').fetchdf()
    manifest = con.execute("SELECT * FROM release_manifest").fetchdf()
    con.close()
    return out, manifest


def _spark_table(folder, name, table="people") -> pd.DataFrame:
    con = duckdb.connect()
    out = con.execute(f"SELECT * FROM read_parquet('{folder / name / table}/*.parquet')").fetchdf()
    con.close()
    return out


def _same_manifest(spark_manifest: pd.DataFrame, duck_manifest: pd.DataFrame) -> None:
    same = [c for c in duck_manifest.columns if c not in ("duckdb_version", "created_at", "spec", "release_id")]
    pd.testing.assert_frame_equal(spark_manifest[same], duck_manifest[same], check_dtype=False)


def test_a_policy_breach_writes_nothing_and_raises_the_duckdb_error(source, spark):
    folder, _ = source
    columns = {**BASE, **DROP_REST, "age": "keep", "income": {"method": "mdav_round", "k": 5}}
    d = doc("out", columns)
    d["policy"] = {"min_k": 4, "max_record_linkage": 0.9, "max_sensitive_share": 1.0}
    with pytest.raises(PolicyBreach) as duck:
        release(parse_spec({**d, "output": {"database": "duck.duckdb", "table": "people"}}, base=folder))
    with pytest.raises(PolicyBreach) as ours:
        spark_release(parse_spec(d, base=folder), spark)
    assert str(ours.value) == str(duck.value)
    assert "k_anonymity = 1 breaches min_k = 4" in str(ours.value)  # age is a unique-ish quasi-identifier
    assert not (folder / "out").exists() and _leftovers(folder) == []


def test_kept_text_and_date_columns_count_in_both_gates_with_the_same_figures(tmp_path, spark):
    """Every released column is a quasi-identifier, whatever its type: a kept text column unique per
    record makes every record unique, a kept DATE column (seconds since 1970 in the distances) lets
    record linkage find almost every record. Both engines refuse the same spec with the same figures;
    exempting both columns (identifying = false) lets the same release through both gates."""
    df = records(240)
    df["birth"] = pd.Timestamp("1950-01-01") + pd.to_timedelta(np.random.default_rng(5).permutation(240) * 97, "D")
    con = duckdb.connect()
    con.register("frame", df)
    con.execute(f"COPY (SELECT * REPLACE (birth::DATE AS birth) FROM frame) TO '{tmp_path}/people.parquet' "
                "(FORMAT parquet)")
    con.close()
    columns = {**BASE, **DROP_REST, "id": "drop", "note": "keep", "birth": "keep",
               "income": {"method": "mdav_round", "k": 5}}
    d = doc("out", columns)
    d["policy"] = {"min_k": 2, "max_unique_share": 0.5, "max_record_linkage": 0.5}
    with pytest.raises(PolicyBreach) as duck:
        release(parse_spec({**d, "output": {"database": "duck.duckdb", "table": "people"}}, base=tmp_path))
    with pytest.raises(PolicyBreach) as ours:
        spark_release(parse_spec(d, base=tmp_path), spark)
    assert str(ours.value) == str(duck.value)
    text = str(ours.value)
    assert "k_anonymity = 1 breaches min_k = 2" in text and "unique_share = 1 breaches" in text
    linkage = float(re.search(r"record_linkage = ([0-9.]+) breaches", text).group(1))
    assert linkage > 0.5  # with birth exempted (below), income alone passes max_record_linkage = 0.5
    assert not (tmp_path / "out").exists() and not (tmp_path / "duck.duckdb").exists()
    exempt = {**columns, "note": {"rule": "keep", "identifying": False}, "birth": {"rule": "keep", "identifying": False}}
    d = {**doc("out", exempt), "policy": {"min_k": 2, "max_record_linkage": 0.5}}
    release(parse_spec({**d, "output": {"database": "duck.duckdb", "table": "people"}}, base=tmp_path))
    spark_release(parse_spec(d, base=tmp_path), spark)
    assert (tmp_path / "out" / "people").is_dir() and (tmp_path / "duck.duckdb").is_file()


def test_a_policy_that_holds_lets_the_release_through(source, spark):
    folder, _ = source
    columns = {**BASE, **DROP_REST, "income": {"method": "mdav_round", "k": 5}}
    d = doc("out", columns)
    d["policy"] = {"min_k": 2, "max_unique_share": 0.0, "max_record_linkage": 0.9, "max_interval_disclosure": 1.0,
                   "max_sensitive_share": 1.0}
    spark_release(parse_spec(d, base=folder), spark)
    assert (folder / "out" / "people").is_dir()


def test_the_cli_exits_3_on_a_policy_breach(source, spark, capsys):
    folder, _ = source
    (folder / "spec.toml").write_text(
        '[source]\nfiles = "people.parquet"\nkey = "id"\n[output]\ndatabase = "out"\ntable = "people"\n'
        '[masking]\nstrata = ["region"]\n[policy]\nmin_k = 50\n[columns]\nid = { rule = "keep", identifying = false }\nregion = "keep"\n'
        'note = "drop"\nincome = { method = "mdav_round", k = 5 }\n'
        + "".join(f'{c} = "drop"\n' for c in DROP_REST if c != "income"))
    assert cli.main(["release", str(folder / "spec.toml"), "--engine", "spark"]) == 3
    err = capsys.readouterr().err
    assert "the release breaches its policy; nothing was written" in err and "min_k = 50" in err
    assert not (folder / "out").exists()


def test_a_seed_without_reproducible_noise_is_refused_as_duckdb_refuses_it(source, spark):
    folder, _ = source
    columns = {**BASE, **DROP_REST, "income": {"method": "dp_laplace", "epsilon": 1.0, "lb": 0, "ub": 1e5,
                                                "seed": 7}}
    with pytest.raises(SpecError) as duck:
        release(parse_spec(doc("duck.duckdb", columns), base=folder))
    with pytest.raises(SpecError) as ours:
        spark_release(parse_spec(doc("out", columns), base=folder), spark)
    assert str(ours.value) == str(duck.value) and "reproducible_noise = true" in str(ours.value)
    assert not (folder / "out").exists()


def test_decimals_and_auto_equal_the_duckdb_release(source, spark):
    """[masking] decimals and a rule's own (negative) decimals round as DuckDB's round(); the manifest's
    parameters carry the per-stratum values 'auto' resolved to, and the measured sets of attraction."""
    folder, _ = source
    columns = {**BASE, **DROP_REST, "income": {"method": "mdav_round", "k": "auto", "decimals": -2},
               "expenses": {"method": "ranking_round", "k": 3},
               "savings": {"method": "efd_round", "c": "auto"}, "b1": {"method": "base_round", "alpha": 4}}
    d = doc("duck.duckdb", columns)
    d["masking"]["decimals"] = 1
    release(parse_spec(d, base=folder))
    duck, duck_manifest = _duck(folder, "duck.duckdb")
    spark_release(parse_spec({**d, "output": {"database": "out", "table": "people"}}, base=folder), spark)
    ours = _spark_table(folder, "out")
    pd.testing.assert_frame_equal(ours.sort_values("id").reset_index(drop=True),
                                  duck.sort_values("id").reset_index(drop=True), check_dtype=False)
    assert (ours["income"].dropna() % 100 == 0).all() and (ours["expenses"].dropna() * 10 % 1 != 0).sum() == 0
    manifest = read_manifest(folder / "out")
    _same_manifest(manifest, duck_manifest)
    assert '"resolved": {"k": [{' in manifest.set_index("column_name").loc["income", "parameters"]


def test_a_spec_without_a_key_gets_the_duckdb_surrogate(tmp_path, spark):
    """No source.key: both engines key the records by their rank over all columns, so the releases
    hold the same rows (compared as sorted sets: the surrogate is never released) and manifests."""
    df = records(300).drop(columns=["id"])
    df = pd.concat([df, df.iloc[:20]], ignore_index=True)  # records equal in every column
    write_parquet(df, tmp_path / "people.parquet")
    columns = {"region": "keep", "note": "drop", **DROP_REST, "age": "keep",
               "income": {"method": "mdav_round", "k": 4}, "expenses": {"method": "ranking_round", "k": 3}}
    d = doc("duck.duckdb", columns)
    del d["source"]["key"]
    release(parse_spec(d, base=tmp_path))
    duck, duck_manifest = _duck(tmp_path, "duck.duckdb")
    spark_release(parse_spec({**d, "output": {"database": "out", "table": "people"}}, base=tmp_path), spark)
    ours = _spark_table(tmp_path, "out")
    by = list(duck.columns)
    pd.testing.assert_frame_equal(ours[by].sort_values(by).reset_index(drop=True),
                                  duck.sort_values(by).reset_index(drop=True), check_dtype=False)
    _same_manifest(read_manifest(tmp_path / "out"), duck_manifest)


def test_noise_and_rank_swapping_on_whole_strata_with_the_stratum_seeds(source, spark):
    """add_noise and rank_swap (reproducible_noise opted in) on each stratum: the numpy method on the
    stratum's values in key order with stratum_seed(seed, column, stratum index), strata numbered in
    ascending order of their values, NULLs last; NULLs stay in place; the manifest marks both."""
    folder, df = source
    columns = {**BASE, **DROP_REST, "income": {"method": "rank_swap", "p": 10, "seed": 5},
               "expenses": {"method": "add_noise", "level": 0.1, "seed": 6}}
    d = doc("out", columns)
    d["masking"]["reproducible_noise"] = True
    result = spark_release(parse_spec(d, base=folder), spark)
    assert sorted(result.not_private) == ["expenses", "income"]
    ours = _spark_table(folder, "out").set_index("id")
    ordered = df.sort_values("id")
    strata = sorted(ordered["region"].dropna().unique()) + [None]
    for index, region in enumerate(strata):
        part = ordered[ordered["region"].isna()] if region is None else ordered[ordered["region"] == region]
        for column, fn in (("income", lambda v, s: rank_swap(v, 10, seed=s)),
                           ("expenses", lambda v, s: add_noise(v, 0.1, seed=s))):
            ok = part[column].notna().to_numpy()
            want = fn(part[column].to_numpy()[ok], stratum_seed(5 if column == "income" else 6, column, index))
            np.testing.assert_array_equal(ours.loc[part["id"].to_numpy()[ok], column].to_numpy(), want)
            assert ours.loc[part["id"].to_numpy()[~ok], column].isna().all()
    manifest = read_manifest(folder / "out").set_index("column_name")
    assert manifest.loc["income", "guarantee"].startswith("none: reproducible noise (rank_swap")
    assert manifest.loc["expenses", "guarantee"].startswith("none: reproducible noise (add_noise")


@pytest.mark.parametrize("method, params, fn", [
    ("add_noise", {"level": 0.2, "seed": 11}, lambda v, s: add_noise(v, 0.2, seed=s)),
    ("rank_swap", {"p": 15, "seed": 11}, lambda v, s: rank_swap(v, 15, seed=s)),
    ("base_round", {"alpha": 3}, lambda v, s: base_round(v, 3)),
])
def test_the_per_stratum_adapter_runs_the_numpy_method_with_the_stratum_seed(method, params, fn):
    """mask_stratum, the one per-stratum masking function of the engine: the numpy method on the
    stratum's values, a seed replaced by stratum_seed(seed, column, stratum index)."""
    rng = np.random.default_rng(4)
    values = np.round(rng.normal(100, 20, 80), 0)
    call = StratumCall(METHODS[method], params, ("income",))
    for stratum in (0, 3):
        seed = stratum_seed(11, "income", stratum) if "seed" in params else None
        np.testing.assert_array_equal(mask_stratum(call, values, stratum), fn(values, seed))


@pytest.mark.parametrize("where, value, message", [
    ("linkage", "out/links", "output.linkage: .* is inside the release folder or holds it"),
    ("cells", {"rule": "dominance", "action": "suppress"}, "columns.income.cells: a Spark release does not protect"),
    ("centroids_table", "centroids", "columns.income.centroids_table: a Spark release does not write"),
])
def test_options_a_spark_release_cannot_honour_are_refused_by_key(tmp_path, spark, where, value, message):
    columns = {**BASE, **DROP_REST}
    if where == "centroids_table":
        columns["income"] = {"method": "dp_um", "k": 5, "epsilon": 1.0, "lb": 0, "ub": 1e5, where: value}
    else:
        columns["income"] = {"method": "mdav_round", "k": 5}
        if where == "cells":
            columns["income"][where] = value
    d = doc("out", columns)
    if where == "linkage":
        d["output"]["linkage"] = value
    with pytest.raises(SpecError, match=message):
        spark_release(parse_spec(d, base=tmp_path), spark)
    assert not (tmp_path / "out").exists()
