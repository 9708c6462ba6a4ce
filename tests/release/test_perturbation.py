"""The new methods as release methods: the release vocabulary picks up add_noise, add_noise_multi,
rank_swap and base_round from the registry, and a spec releases with them."""

from __future__ import annotations

import duckdb
import numpy as np
from release_helpers import base_doc, people, write_db, write_spec

from duckdb_sdc.release import METHODS, load_spec, release


def test_the_release_vocabulary_has_the_new_methods():
    assert {"add_noise", "add_noise_multi", "rank_swap", "base_round"} <= set(METHODS)
    assert METHODS["add_noise_multi"].kind == "rows"
    assert [p.name for p in METHODS["rank_swap"].params] == ["p", "top_percent", "bottom_percent", "seed"]
    assert [p.name for p in METHODS["base_round"].params] == ["alpha", "unit", "base"]


def test_a_spec_releases_with_rank_swapping_noise_and_base_rounding(tmp_path):
    df = people(400)
    write_db(tmp_path / "src.duckdb", "people", df)
    doc = base_doc()
    doc["columns"]["income"] = {"method": "rank_swap", "p": 10}
    doc["columns"]["expenses"] = {"method": "add_noise", "level": 0.05}
    doc["columns"]["age"] = {"method": "base_round", "alpha": 5}
    result = release(load_spec(write_spec(tmp_path, doc)))
    assert sorted(result.masked) == ["age", "expenses", "income"]
    plain = duckdb.connect(str(tmp_path / "out" / "release.duckdb"))
    out = plain.execute("SELECT id, region, age, income, expenses FROM people ORDER BY id").df()
    plain.close()
    src = df.sort_values("id").reset_index(drop=True)
    for region, part in src.groupby("region"):
        got = out[out["region"] == region]
        # rank swapping keeps each stratum's multiset of incomes (NULLs in place)
        np.testing.assert_array_equal(np.sort(got["income"].dropna()), np.sort(part["income"].dropna()))
        assert got["income"].isna().tolist() == part["income"].isna().tolist()
        # base rounding: every released age is shared by at least 5 records of its stratum
        assert got["age"].value_counts().min() >= 5
    assert (out["income"].fillna(-1) != src["income"].fillna(-1)).mean() > 0.8
    noise = out["expenses"] - src["expenses"]
    assert 0 < noise.abs().mean() < src["expenses"].std()


def test_a_spec_releases_rank_swapping_with_top_and_bottom_coding(tmp_path):
    """sdcMicro's TopPercent and BottomPercent as rule parameters: in each stratum the floor(5 % of n)
    largest incomes are released as their mean, the rest keeps its multiset."""
    df = people(400)
    write_db(tmp_path / "src.duckdb", "people", df)
    doc = base_doc()
    doc["columns"]["income"] = {"method": "rank_swap", "p": 10, "top_percent": 5, "bottom_percent": 0}
    release(load_spec(write_spec(tmp_path, doc)))
    plain = duckdb.connect(str(tmp_path / "out" / "release.duckdb"))
    out = plain.execute("SELECT region, income FROM people").df()
    plain.close()
    for region, part in df.groupby("region"):
        v = np.sort(part["income"].dropna().to_numpy())
        t = len(v) * 5 // 100
        got = np.sort(out.loc[out["region"] == region, "income"].dropna().to_numpy())
        np.testing.assert_allclose(got[-t:], v[-t:].mean(), rtol=1e-15)
        np.testing.assert_array_equal(got[:-t], v[:-t])
