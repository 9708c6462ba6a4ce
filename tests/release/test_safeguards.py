"""What a release checks and adds besides masking: sets of attraction, what 'auto' resolved to,
decimals, a spec without a key, unlinked DP-UM centroids, and the guarantees the manifest states."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from release_helpers import base_doc, people, write_db, write_spec

from duckdb_sdc import guarantees
from duckdb_sdc.methods import dp
from duckdb_sdc.release import SpecError, load_spec, parse_spec, release, report
from duckdb_sdc import datasets


@pytest.fixture
def source(tmp_path):
    df = people()
    write_db(tmp_path / "src.duckdb", "people", df)
    return tmp_path, df


def _manifest(path, *columns):
    plain = duckdb.connect(str(path), read_only=True)
    rows = {r[0]: r[1:] for r in plain.execute(
        f"SELECT column_name, {', '.join(columns)} FROM release_manifest").fetchall()}
    plain.close()
    return rows


def _table(path, query="SELECT * FROM people"):
    plain = duckdb.connect(str(path), read_only=True)
    out = plain.execute(query).df()
    plain.close()
    return out


# ---------------------------------------------------------------------------------------------
# sets of attraction


def test_a_discretisation_leaving_a_set_of_one_record_is_refused_naming_column_stratum_and_size(source):
    folder, _ = source
    doc = base_doc()
    doc["columns"]["income"] = {"method": "ewd_round", "c": 400}  # more intervals than records per region
    with pytest.raises(SpecError, match=r"columns\.income: ewd_round: stratum region = '(east|north|south)' has a "
                                        r"released value of income shared by 1 record: a set of attraction below 2"):
        release(load_spec(write_spec(folder, doc)))
    assert not (folder / "out" / "release.duckdb").exists()


def test_a_discretisation_states_the_smallest_set_it_measured(source):
    folder, df = source
    doc = base_doc()
    doc["columns"]["income"] = {"method": "efd_round", "c": 6}
    release(load_spec(write_spec(folder, doc)))
    rel = _table(folder / "out" / "release.duckdb")
    smallest = int(rel.dropna(subset=["income"]).groupby(["region", "income"]).size().min())
    assert smallest >= 2
    model, words = _manifest(folder / "out" / "release.duckdb", "privacy_model", "guarantee")["income"]
    assert model == "k-anonymity"
    assert words == guarantees.sentence("efd_round", k=smallest, columns=["income"], strata=["region"])
    assert words.startswith(f"{smallest}-anonymity of income within each stratum of region, as measured on this release")


# ---------------------------------------------------------------------------------------------
# 'auto'


@pytest.mark.parametrize("region", ["keep", "drop"])
def test_the_manifest_records_what_auto_resolved_to_per_stratum(source, region):
    folder, df = source
    doc = base_doc()
    doc["columns"]["region"] = region
    doc["columns"]["income"] = {"method": "mdav_round", "k": "auto"}
    doc["columns"]["expenses"] = {"method": "efd_round", "c": "auto"}
    release(load_spec(write_spec(folder, doc)))
    con = duckdb.connect()
    con.execute(f"ATTACH '{folder / 'src.duckdb'}' AS s (READ_ONLY)")
    from duckdb_sdc.sql import register

    register(con)
    k = dict(con.execute("SELECT region, fd_group_size(income) FROM s.people GROUP BY region").fetchall())
    c = dict(con.execute("SELECT region, fd_intervals(expenses) FROM s.people GROUP BY region").fetchall())
    con.close()
    manifest = _manifest(folder / "out" / "release.duckdb", "parameters", "guarantee")
    income, expenses = json.loads(manifest["income"][0]), json.loads(manifest["expenses"][0])
    assert income["k"] == "auto" and expenses["c"] == "auto"
    if region == "keep":
        assert income["resolved"] == {"k": [{"region": r, "k": k[r]} for r in sorted(k)]}
        assert expenses["resolved"] == {"c": [{"region": r, "c": c[r]} for r in sorted(c)]}
    else:  # the stratum values of a dropped column are not released in the manifest either
        assert income["resolved"] == {"k": {"min": min(k.values()), "max": max(k.values())}}
        assert "north" not in manifest["income"][0] and "north" not in manifest["income"][1]
    assert manifest["income"][1].startswith(f"{min(k.values())}-anonymity of income")


# ---------------------------------------------------------------------------------------------
# decimals


def test_decimals_round_released_values_after_masking(source):
    folder, df = source
    doc = base_doc()
    doc["masking"]["decimals"] = 1
    doc["columns"]["expenses"] = {"method": "mdav_round", "k": 4, "decimals": -2}  # to hundreds
    release(load_spec(write_spec(folder, doc)))
    path = folder / "out" / "release.duckdb"
    rel = _table(path).dropna(subset=["income"])
    doc.pop("masking")
    doc["masking"] = {"strata": ["region"]}
    doc["columns"]["expenses"] = {"method": "mdav_round", "k": 4}
    doc["output"]["database"] = "out/unrounded.duckdb"
    release(load_spec(write_spec(folder, doc, "unrounded.toml")))
    raw = _table(folder / "out" / "unrounded.duckdb").set_index("id")
    for row in rel.itertuples():
        assert row.income == round(raw.loc[row.id, "income"], 1)
        assert row.expenses == round(raw.loc[row.id, "expenses"], -2) and row.expenses % 100 == 0
    manifest = _manifest(path, "parameters", "guarantee")
    assert json.loads(manifest["income"][0])["decimals"] == 1 and json.loads(manifest["expenses"][0])["decimals"] == -2
    assert manifest["income"][1].endswith("; values rounded to 1 decimals after masking")


@pytest.mark.parametrize("change, message", [
    (lambda d: d["masking"].update(decimals=2.5), r"masking\.decimals: must be an integer in \[-15, 15\]"),
    (lambda d: d["masking"].update(decimals=16), r"masking\.decimals: must be an integer in \[-15, 15\]"),
    (lambda d: d["columns"].update(income={"method": "mdav_round", "k": 5, "decimals": "two"}),
     r"columns\.income\.decimals: must be an integer"),
    (lambda d: d["columns"].update(income={"method": "box_release", "k": 5, "characteristic": "mean(income)",
                                           "decimals": 1}), r"columns\.income\.decimals: box_release releases box bounds"),
    (lambda d: d["columns"].update(income={"method": "dp_laplace", "epsilon": 1.0, "lb": 0, "ub": 1, "cells":
                                           {"rule": "dominance", "action": "suppress"}}),
     r"columns\.income\.cells: dp_laplace adds noise"),
    (lambda d: d["columns"].update(income={"method": "mdav_round", "k": 5, "cells": {"rule": "p%"}}),
     r"columns\.income\.cells\.rule: must be \"dominance\", \"p_percent\", \"pq\" or \"threshold\""),
    (lambda d: d["columns"].update(income={"method": "mdav_round", "k": 5, "cells": {"rule": "dominance",
                                                                                  "action": "hide"}}),
     r"columns\.income\.cells\.action: must be \"suppress\", \"merge\" or \"remove\""),
    (lambda d: d["columns"].update(income={"method": "mdav_round", "k": 5, "cells": {"rule": "pq", "p": 0.2,
                                                                                  "action": "suppress"}}),
     r"columns\.income\.cells: rule = \"pq\" needs q"),
    (lambda d: d["columns"].update(income={"method": "mdav_round", "k": 5, "cells": {"rule": "pq", "p": 0.5, "q": 0.4,
                                                                                  "action": "suppress"}}),
     r"columns\.income\.cells\.p: p must be less than q, got p = 0.5 and q = 0.4"),
    (lambda d: d["columns"].update(income={"method": "mdav_round", "k": 5, "cells": {"rule": "threshold", "n": 3,
                                                                                  "action": "suppress"}}),
     r"columns\.income\.cells: rule = \"threshold\" needs safety"),
    (lambda d: d["columns"].update(income={"method": "mdav_round", "k": 5, "cells": {"rule": "dominance", "r": 1.5,
                                                                                  "action": "suppress"}}),
     r"columns\.income\.cells\.r: r must be in \(0, 1\], got 1.5"),
    (lambda d: d["columns"].update(income={"method": "mdav_round", "k": 5, "cells": {"rule": "p_percent",
                                                                                  "action": "suppress", "cost": "few"}}),
     r"columns\.income\.cells\.cost: must be \"cells\" or \"value\", got 'few'"),
    (lambda d: d["columns"].update(income={"method": "mdav_round", "k": 5, "cells": {"rule": "p_percent",
                                                                                  "action": "merge", "cost": "cells"}}),
     r"columns\.income\.cells: unknown key 'cost'"),
    (lambda d: d["columns"].update(income={"method": "mdav_round", "k": 5, "centroids_table": "x"}),
     r"columns\.income\.centroids_table: only dp_um releases its cluster means unlinked"),
    (lambda d: d["columns"].update(income={"method": "mdav_round", "k": 5, "reproducible_noise": "yes"}),
     r"columns\.income\.reproducible_noise: must be true or false"),
    (lambda d: d["output"].update(linkage="out/release.duckdb"), r"output\.linkage: must be a separate file"),
])
def test_release_setting_mistakes(source, change, message):
    folder, _ = source
    doc = base_doc()
    change(doc)
    with pytest.raises(SpecError, match=message):
        load_spec(write_spec(folder, doc))


# ---------------------------------------------------------------------------------------------
# no key


def _keyless(tmp_path, df, name="src.duckdb"):
    write_db(tmp_path / name, "people", df)
    return {"source": {"database": name, "table": "people"},
            "output": {"database": f"out/{name}", "table": "people", "linkage": f"private/{name}"},
            "masking": {"strata": ["region"]},
            "columns": {"region": "keep", "age": "keep", "note": "drop",
                        "income": {"method": "mdav_round", "k": 5}, "expenses": {"method": "oma_round", "k": 4}}}


def test_a_spec_without_a_key_masks_by_a_surrogate_that_is_never_released(tmp_path):
    df = people().drop(columns=["id"])
    doc = _keyless(tmp_path, df)
    spec = load_spec(write_spec(tmp_path, doc))
    assert spec.source.key is None
    release(spec)
    path = tmp_path / "out" / "src.duckdb"
    rel = _table(path)
    assert list(rel.columns) == ["region", "age", "income", "expenses"]
    assert set(_manifest(path, "rule")) == {"region", "age", "note", "income", "expenses"}
    # deterministic: the same source, in another physical order, gives the same released records
    shuffled = df.sample(frac=1, random_state=4).reset_index(drop=True)
    doc2 = _keyless(tmp_path, shuffled, "shuffled.duckdb")
    release(load_spec(write_spec(tmp_path, doc2, "shuffled.toml")))
    other = _table(tmp_path / "out" / "shuffled.duckdb")
    ordered = ["region", "age", "income", "expenses"]
    key = lambda frame: frame.sort_values(ordered).reset_index(drop=True)  # noqa: E731
    pd.testing.assert_frame_equal(key(rel), key(other))
    # evaluated through the private linkage file (it holds the surrogates)
    rows = report(spec)
    assert rows[(rows["measure"] == "k_anonymity") & (rows["column"] == "income")]["value"].iloc[0] >= 5
    link = duckdb.connect(str(tmp_path / "private" / "src.duckdb"), read_only=True)
    assert link.execute("SELECT DISTINCT key_column FROM release_linkage").fetchall() == [(None,)]
    link.close()


def test_a_spec_without_a_key_refuses_a_view_without_key(tmp_path):
    doc = _keyless(tmp_path, people().drop(columns=["id"]))
    doc["output"]["view_without_key"] = "v"
    with pytest.raises(SpecError, match=r"output\.view_without_key: the spec has no source\.key"):
        load_spec(write_spec(tmp_path, doc))


# ---------------------------------------------------------------------------------------------
# unlinked DP-UM centroids


def _stream(seed: int, column: str, region: str, regions) -> int:
    """The stratum's seed, params.stratum_seed of its position among the strata values (ascending)."""
    from duckdb_sdc.params import stratum_seed

    return stratum_seed(seed, column, sorted(regions).index(region))


def test_dp_um_centroids_are_released_unlinked_and_equal_the_numpy_layer(source):
    folder, df = source
    doc = base_doc()
    doc["columns"]["income"] = {"method": "dp_um", "k": 10, "epsilon": 1.0, "lb": 0, "ub": 100_000, "seed": 5,
                                "reproducible_noise": True, "centroids_table": "income_means"}
    release(load_spec(write_spec(folder, doc)))
    path = folder / "out" / "release.duckdb"
    assert "income" not in _table(path).columns  # not linked to any record
    got = _table(path, "SELECT * FROM income_means")
    assert list(got.columns) == ["region", "cluster", "records", "income"]
    for region, part in df.sort_values("id").groupby("region"):
        x = part["income"].dropna().to_numpy()
        sizes, means = dp.dp_um_centroids(x, 10, 1.0, 0, 100_000, seed=_stream(5, "income", region, df["region"].unique()))
        mine = got[got["region"] == region]
        assert mine["cluster"].tolist() == list(range(1, len(sizes) + 1))
        assert mine["records"].tolist() == sizes.tolist()
        np.testing.assert_allclose(mine["income"].to_numpy(), means, rtol=1e-12)
    manifest = _manifest(path, "release_table", "released_as", "position")
    assert manifest["income"] == ("income_means", "centroids", None)


def test_dp_um_centroids_state_epsilon_dp(source):
    folder, _ = source
    doc = base_doc()
    doc["columns"]["income"] = {"method": "dp_um", "k": 10, "epsilon": 0.5, "lb": 0, "ub": 100_000,
                                "centroids_table": "income_means"}
    doc["columns"]["expenses"] = {"method": "dp_um", "k": 10, "epsilon": 0.5, "lb": 0, "ub": 100_000}
    release(load_spec(write_spec(folder, doc)))
    manifest = _manifest(folder / "out" / "release.duckdb", "privacy_model", "guarantee")
    assert manifest["income"][0] == "epsilon-DP"
    assert manifest["income"][1] == ("0.5-differential privacy of the cluster means of income (values in [0, 100000]), "
                                     "within each stratum of region, released in table income_means unlinked from records")
    assert manifest["expenses"][0] == "epsilon-DP for the fixed clustering"


# ---------------------------------------------------------------------------------------------
# guarantees


def test_every_released_column_states_its_guarantee_in_the_words_of_the_module(source):
    folder, _ = source
    doc = base_doc()
    doc["masking"]["total_epsilon"] = 1.0
    doc["columns"]["age"] = {"method": "idp_cbls", "k": 5}
    release(load_spec(write_spec(folder, doc)))
    manifest = _manifest(folder / "out" / "release.duckdb", "privacy_model", "guarantee")
    assert manifest["id"] == ("none", guarantees.sentence(guarantees.KEY))
    assert manifest["region"] == ("none", guarantees.sentence(guarantees.KEEP))
    assert manifest["note"] == (None, "not released")
    assert manifest["income"] == ("k-anonymity", guarantees.sentence("mdav_round", k=5, columns=["income"],
                                                                    strata=["region"]))
    assert manifest["age"] == (guarantees.IDP, guarantees.sentence("idp_cbls", epsilon=1.0, columns=["age"],
                                                                   strata=["region"]))


def test_every_dp_statement_says_its_neighbours_and_what_is_released_exactly():
    """Issue 33 item 4: each differentially private guarantee states its neighbouring data sets and what
    the release publishes without noise; one that does not cannot be declared."""
    private = [g for g in set(guarantees.GUARANTEES.values())
               if g.model in guarantees.DP_MODELS]
    assert {g.subject for g in private} == {"dp_laplace", "dp_um", "individual ranking with local sensitivity",
                                            guarantees.CENTROIDS}
    for g in private:
        assert "stratum" in g.exact and ("[lb, ub]" in g.neighbours or "any value" in g.neighbours), g.subject
    assert "keeps every record in its cluster" in guarantees.DP_UM.neighbours
    assert "partition into clusters" in guarantees.DP_UM.exact and "partition" in guarantees.INDIVIDUAL_DP.exact
    with pytest.raises(ValueError, match=r"the epsilon-DP guarantee of 'toy' must state its neighbouring data sets"):
        guarantees.Guarantee("toy", guarantees.DP, "statement", "sentence", neighbours="bounded")
    assert guarantees.Guarantee("toy", guarantees.K_ANONYMITY, "statement", "sentence").neighbours == ""


@pytest.mark.parametrize("method", ["dp_laplace", "dp_um", "idp_ls", "idp_cbls"])
def test_a_dp_method_in_groups_is_refused_with_the_reason(method):
    """Multivariate microaggregation with DP or iDP is not offered (issue 33 item 4): the refusal says why."""
    doc = {"source": {"files": ["x.csv"]}, "output": {"database": "o.duckdb", "table": "t"},
           "groups": [{"columns": ["a", "b"], "method": method, "k": 3, "epsilon": 1.0, "lb": 0, "ub": 1}]}
    with pytest.raises(SpecError) as info:
        parse_spec(doc, base=".", name="s.toml")
    assert str(info.value) == f"s.toml: groups[0]: {method} masks one column, not a group: {guarantees.MULTIVARIATE_DP}"


def test_docs_state_the_guarantees_of_the_module():
    page = (Path(__file__).resolve().parents[2] / "docs" / "releases" / "guarantees.md").read_text(encoding="utf-8")
    assert guarantees.markdown() in page, "docs/releases/guarantees.md: paste guarantees.markdown() again"


# ---------------------------------------------------------------------------------------------
# cells: suppression with protection levels (issue 33)

DATA = datasets.path("tarragona").parent  # the bundled reference data (duckdb_sdc.datasets)


def _stratum_patterns(df, strata_col, column, k, rule):
    """Per stratum: (ids, originals, labels by released mdav_round value, numpy suppression)."""
    from duckdb_sdc import methods
    from duckdb_sdc.methods import protection
    from duckdb_sdc.methods import sensitivity as sv

    out = {}
    for s, part in df.sort_values("id").groupby(strata_col):
        part = part[part[column].notna()]
        x = part[column].to_numpy(float)
        labels = np.unique(methods.mdav_round(x, k), return_inverse=True)[1]
        out[s] = (part["id"].to_numpy(), x, labels, protection.suppress(x[:, None], labels, rule))
    return out


def test_a_tarragona_release_meets_the_protection_levels(tmp_path):
    # the release of the issue: DEPRECIATION by mdav_round (k = 3) in two strata (the first and the
    # second half of the firms), p% rule at 0.2; stratum b's cell [120, 0, 0] had a cell of zeros as
    # its secondary and so no protection at all; now every sensitive cell's feasible total, audited by
    # linear programming on the written release's pattern, covers its protection levels
    from methods.test_sensitivity_protection import audited

    from duckdb_sdc.methods import sensitivity as sv

    df = pd.read_csv(DATA / "Tarragona.csv")[["DEPRECIATION", "SALES"]]
    df.insert(0, "id", np.arange(1, len(df) + 1))
    df.insert(1, "half", np.where(np.arange(len(df)) < len(df) // 2, "a", "b"))
    write_db(tmp_path / "src.duckdb", "firms", df)
    doc = {"source": {"database": "src.duckdb", "table": "firms", "key": "id"},
           "output": {"database": "out.duckdb", "table": "firms"}, "masking": {"strata": ["half"]},
           "columns": {"id": {"rule": "keep", "identifying": False}, "half": "keep", "SALES": "drop",
                       "DEPRECIATION": {"method": "mdav_round", "k": 3,
                                        "cells": {"rule": "p_percent", "p": 0.2, "action": "suppress"}}}}
    release(load_spec(write_spec(tmp_path, doc)))
    got = _table(tmp_path / "out.duckdb", "SELECT id, DEPRECIATION FROM firms").set_index("id")["DEPRECIATION"]
    manifest = _manifest(tmp_path / "out.duckdb", "parameters", "guarantee")["DEPRECIATION"]
    rule = sv.p_percent_rule(0.2, absolute=True)
    primary = secondary = 0
    for s, (ids, x, labels, out) in _stratum_patterns(df, "half", "DEPRECIATION", 3, rule).items():
        released = got.loc[ids].to_numpy()
        np.testing.assert_array_equal(np.isnan(released), np.isnan(out.release[:, 0]))  # the same pattern
        pattern = np.array([[np.isnan(released[labels == c]).all()] for c in range(labels.max() + 1)])
        assert (pattern == out.suppressed).all()
        low, high = audited(x[:, None], labels, out, True)
        for a in np.flatnonzero(out.primary[:, 0]):
            y = x[labels == a].sum()
            assert high[a, 0] >= min(y + out.upper[a, 0], 0 if y < 0 else np.inf) and low[a, 0] <= y - out.lower[a, 0]
        primary, secondary = primary + out.primary.sum(), secondary + out.secondary.sum()
        if s == "b":
            (a,) = np.flatnonzero(out.primary[:, 0])
            assert sorted(x[labels == a]) == [0.0, 0.0, 120.0] and high[a, 0] - 120 >= 24
    params = json.loads(manifest[0])["cells"]
    assert params == {"rule": "p_percent", "action": "suppress", "p": 0.2, "cost": "cells",
                      "primary_cells": primary, "secondary_cells": secondary, "protection_levels": "met"}
    assert manifest[1].endswith(guarantees.cells_sentence("suppress", rule="the p% rule with p = 0.2",
                                                          kind="p_percent", primary=2, secondary=2))
    assert "none can be estimated more precisely than its protection level (p c(1) - (T - c(1) - c(2))" in manifest[1]


def _heavy(tmp_path):
    df = people(240, seed=11)
    rng = np.random.default_rng(11)
    present = df["income"].notna()
    df.loc[present, "income"] = np.round(np.exp(rng.normal(8, 2.5, int(present.sum()))), 4)
    write_db(tmp_path / "src.duckdb", "people", df)
    return df


@pytest.mark.parametrize("cells, rule", [
    ({"rule": "pq", "p": 0.2, "q": 0.5, "action": "suppress", "cost": "value"}, ("pq", 0.2, 0.5)),
    ({"rule": "threshold", "n": 4, "safety": 0.3, "action": "suppress"}, ("threshold", 4, 0.3)),
])
def test_the_pq_and_threshold_rules_protect_a_release(tmp_path, cells, rule):
    from methods.test_sensitivity_protection import audited

    from duckdb_sdc.methods import protection
    from duckdb_sdc.methods import sensitivity as sv

    df = _heavy(tmp_path)
    doc = base_doc()
    doc["columns"]["income"] = {"method": "mdav_round", "k": 3, "cells": cells}
    release(load_spec(write_spec(tmp_path, doc)))
    got = _table(tmp_path / "out" / "release.duckdb", "SELECT id, income FROM people").set_index("id")["income"]
    method_rule = (sv.pq_rule(rule[1], rule[2], absolute=True) if rule[0] == "pq"
                   else sv.threshold_rule(rule[1], rule[2], absolute=True))
    primary = 0
    for _, (ids, x, labels, _) in _stratum_patterns(df, "region", "income", 3, method_rule).items():
        out = protection.suppress(x[:, None], labels, method_rule, cost=cells.get("cost", "cells"))
        np.testing.assert_array_equal(np.isnan(got.loc[ids].to_numpy()), np.isnan(out.release[:, 0]))
        audited(x[:, None], labels, out, True)
        primary += out.primary.sum()
    assert primary > 0
    params = json.loads(_manifest(tmp_path / "out" / "release.duckdb", "parameters")["income"][0])["cells"]
    assert params["primary_cells"] == primary and params["protection_levels"] == "met"
    rep = report(load_spec(tmp_path / "spec.toml"))
    row = rep[(rep["measure"] == "suppressed_records") & (rep["column"] == "income")].iloc[0]
    assert row["value"] == (got.isna() & df.set_index("id")["income"].notna()).sum() > 0
    assert row["note"].endswith("protection levels met, audited when the release was written (see its manifest)")
    assert {k: params[k] for k in ("rule", "action", "cost")} == {"rule": rule[0], "action": "suppress",
                                                                  "cost": cells.get("cost", "cells")}


def test_a_stratum_that_no_suppression_can_protect_is_refused(tmp_path):
    # stratum a: one firm holds nearly all of the stratum's total, so even with every cell suppressed
    # the total gives its cell away to within 20%
    df = pd.DataFrame({"id": np.arange(1, 10), "region": ["a"] * 6 + ["b"] * 3,
                       "income": [9000.5, 1.5, 2.5, 3.5, 4.5, 5.5, 10.5, 11.5, 12.25]})
    write_db(tmp_path / "src.duckdb", "people", df)
    doc = {"source": {"database": "src.duckdb", "table": "people", "key": "id"},
           "output": {"database": "out.duckdb", "table": "people"}, "masking": {"strata": ["region"]},
           "columns": {"id": "drop", "region": "keep",
                       "income": {"method": "mdav_round", "k": 3,
                                  "cells": {"rule": "p_percent", "p": 0.2, "action": "suppress"}}}}
    with pytest.raises(SpecError, match=r"columns\.income: cells: stratum region = 'a' has 1 sensitive cell\(s\) of "
                                        r"income that no suppression can protect"):
        release(load_spec(write_spec(tmp_path, doc)))
    assert not (tmp_path / "out.duckdb").exists()


def test_docs_state_the_cell_guarantees_of_the_module():
    page = (Path(__file__).resolve().parents[2] / "docs" / "releases" / "guarantees.md").read_text(encoding="utf-8")
    assert guarantees.cells_markdown() in page, "docs/releases/guarantees.md: paste guarantees.cells_markdown() again"


def test_cells_removed_from_the_spec_equal_the_numpy_layer(tmp_path):
    from methods.test_sensitivity_protection import audited

    from duckdb_sdc import methods
    from duckdb_sdc.methods import sensitivity as sv
    from duckdb_sdc.methods.dominance import remove_sensitive

    df = _heavy(tmp_path)
    doc = base_doc()
    doc["columns"]["income"] = {"method": "mdav_round", "k": 3,
                                "cells": {"rule": "dominance", "n": 1, "r": 0.45, "action": "remove"}}
    release(load_spec(write_spec(tmp_path, doc)))
    got = _table(tmp_path / "out" / "release.duckdb", "SELECT id, income FROM people").set_index("id")["income"]
    rule = sv.dominance_rule(1, 0.45, absolute=True)
    removed = primary = secondary = 0
    for _, part in df.sort_values("id").groupby("region"):
        part = part[part["income"].notna()]
        x = part["income"].to_numpy(float)
        masked = methods.mdav_round(x, 3)
        labels = np.unique(masked, return_inverse=True)[1]
        out = remove_sensitive(x[:, None], labels, rule)
        audited(x[:, None], np.where(out.removed, out.labels.max() + 1, out.labels), out.suppression, True)
        expected = np.where(np.isnan(out.release[:, 0]), np.nan, masked)
        for c in np.unique(out.labels[~out.removed]):  # a changed cluster: its centroid
            members = out.labels == c
            if len(np.unique(labels[members])) > 1 or members.sum() != (labels == labels[members][0]).sum():
                expected[members] = out.release[members, 0]
        np.testing.assert_allclose(got.loc[part["id"]].to_numpy(), expected, rtol=1e-12)
        removed, primary = removed + out.removed.sum(), primary + out.suppression.primary.sum()
        secondary += out.suppression.secondary.sum()
    assert removed > 3
    params = json.loads(_manifest(tmp_path / "out" / "release.duckdb", "parameters")["income"][0])["cells"]
    assert params == {"rule": "dominance", "action": "remove", "n": 1, "r": 0.45, "cost": "cells",
                      "removed_records": removed, "primary_cells": primary, "secondary_cells": secondary,
                      "protection_levels": "met"}


def test_mdav_under_a_rule_releases_groups_without_sensitive_cells(tmp_path):
    from duckdb_sdc.methods import sensitivity as sv
    from duckdb_sdc.methods.dominance import mdav_cells_partition

    df = _heavy(tmp_path)
    doc = base_doc()
    del doc["columns"]["income"], doc["columns"]["expenses"]
    spec = write_spec(tmp_path, doc)  # [[groups]] by hand: the helpers write no arrays of tables
    spec.write_text(spec.read_text() + '\n[[groups]]\ncolumns = ["income", "expenses"]\n'
                    'method = "mdav_p_percent_round"\nk = 3\np = 0.2\nabsolute = true\n')
    release(load_spec(spec))
    got = _table(tmp_path / "out" / "release.duckdb", "SELECT id, income, expenses FROM people").set_index("id")
    rule = sv.p_percent_rule(0.2, absolute=True)
    for _, part in df.sort_values("id").groupby("region"):
        part = part[part["income"].notna() & part["expenses"].notna()]
        X = part[["income", "expenses"]].to_numpy(float)
        labels = mdav_cells_partition(X, 3, rule)
        assert not sv.sensitive_cells(X, labels, rule).any() and np.bincount(labels).min() >= 3
        released = got.loc[part["id"], ["income", "expenses"]].to_numpy()
        cells = np.unique(released, axis=0, return_inverse=True)[1].ravel()
        assert not sv.sensitive_cells(X, cells, rule).any()  # the released cells themselves
        np.testing.assert_allclose(released, np.array([X[labels == c].mean(axis=0) for c in labels]), rtol=1e-12)
    manifest = _manifest(tmp_path / "out" / "release.duckdb", "guarantee")["income"][0]
    assert manifest == guarantees.sentence("mdav_p_percent_round", k=3, columns=["income", "expenses"],
                                           strata=["region"], method="mdav_p_percent_round")
