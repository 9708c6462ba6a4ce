"""Sampling weights in a release: [source] weight = "column" masks every rule with weighted
representatives (the same values as the weighted list functions per stratum, the partition of the
unweighted method), the manifest records the weight column, a method without weights is refused
naming the column and the method unless its rule says weighted = false, and the report adds its
weighted measures."""

from __future__ import annotations

import json

import duckdb
import numpy as np
import pytest
from release_helpers import base_doc, people, write_db, write_spec

from duckdb_sdc.methods import weights as W
from duckdb_sdc.release import SpecError, load_spec, parse_spec, release, report


@pytest.fixture
def source(tmp_path):
    df = people(200, seed=11)
    df["w"] = np.random.default_rng(3).integers(1, 9, len(df))
    write_db(tmp_path / "src.duckdb", "people", df)
    return tmp_path, df


def _doc(**columns) -> dict:
    doc = base_doc()
    doc["source"]["weight"] = "w"
    doc["columns"]["w"] = "keep"
    doc["columns"].update(columns)
    return doc


def _expected(df, column, fn, **kw) -> dict:
    """The weighted numpy function per region, values in key order, as {id: value}."""
    out = {}
    for _, part in df.sort_values("id").groupby("region"):
        present = part[column].notna().to_numpy()
        masked = fn(part[column].to_numpy()[present], part["w"].to_numpy()[present].astype(float), **kw)
        out.update(zip(part["id"].to_numpy()[present].tolist(), masked.tolist()))
        out.update({int(i): None for i in part["id"].to_numpy()[~present]})
    return out


def test_a_weighted_release_equals_the_weighted_functions_per_stratum_and_records_the_weight(source):
    folder, df = source
    doc = _doc(expenses={"method": "efd_round", "c": 4, "representative": "median"})
    release(load_spec(write_spec(folder, doc)))
    plain = duckdb.connect(str(folder / "out" / "release.duckdb"), read_only=True)
    rows = plain.execute("SELECT id, income, expenses, w FROM people").fetchall()
    income = _expected(df, "income", lambda x, w: W.microaggregate_weighted(x, w, 5, "mdav"))
    expenses = _expected(df, "expenses", lambda x, w: W.discretise_weighted(x, w, 4, "efd", "median"))
    by_id = df.set_index("id")
    for i, inc, exp_, w in rows:
        assert inc == income[i] and exp_ == expenses[i] and w == by_id.loc[i, "w"]
    params = dict(plain.execute("SELECT column_name, parameters FROM release_manifest WHERE rule = 'mask'").fetchall())
    assert json.loads(params["income"])["weights"] == "w" and json.loads(params["expenses"])["weights"] == "w"
    spec_json = json.loads(plain.execute("SELECT any_value(spec) FROM release_manifest").fetchone()[0])
    assert spec_json["source"]["weight"] == "w"
    # the partition is the unweighted one: every released income is shared by at least k = 5 records
    assert plain.execute("SELECT min(n) FROM (SELECT count(*) n FROM people WHERE income IS NOT NULL "
                         "GROUP BY region, income)").fetchone()[0] >= 5
    plain.close()


def test_equal_weights_release_the_unweighted_values(source):
    folder, df = source
    df["w"] = 7
    (folder / "src.duckdb").unlink()
    write_db(folder / "src.duckdb", "people", df)
    release(load_spec(write_spec(folder, _doc())))
    weighted = duckdb.connect(str(folder / "out" / "release.duckdb"), read_only=True)
    got = dict(weighted.execute("SELECT id, income FROM people").fetchall())
    weighted.close()
    doc = base_doc(out="out/plain.duckdb")
    doc["columns"]["w"] = "keep"
    release(load_spec(write_spec(folder, doc, "plain.toml")))
    plain = duckdb.connect(str(folder / "out" / "plain.duckdb"), read_only=True)
    assert dict(plain.execute("SELECT id, income FROM people").fetchall()) == got
    plain.close()


def test_a_method_without_weights_is_refused_naming_the_column_unless_weighted_is_false(source):
    folder, _ = source
    with pytest.raises(SpecError, match=r"columns\.expenses: rank_swap does not take sampling weights \(source.weight = "
                                        r"'w'\), so 'expenses' cannot be masked with them; set weighted = false"):
        parse_spec(_doc(expenses={"method": "rank_swap", "p": 5}), folder)
    spec = parse_spec(_doc(expenses={"method": "rank_swap", "p": 5, "weighted": False}), folder)
    assert spec.rules["expenses"].weighted is False
    with pytest.raises(SpecError, match=r"columns\.income\.weighted: the source has no sampling weights"):
        doc = base_doc()
        doc["columns"]["w"] = "keep"
        doc["columns"]["income"] = {"method": "mdav_round", "k": 5, "weighted": True}
        parse_spec(doc, folder)


def test_weighted_false_masks_that_column_without_weights(source):
    folder, df = source
    doc = _doc(income={"method": "mdav_round", "k": 5, "weighted": False})
    release(load_spec(write_spec(folder, doc)))
    plain = duckdb.connect(str(folder / "out" / "release.duckdb"), read_only=True)
    got = dict(plain.execute("SELECT id, income FROM people").fetchall())
    params = json.loads(plain.execute("SELECT parameters FROM release_manifest WHERE column_name = 'income'").fetchone()[0])
    plain.close()
    expected = _expected(df, "income", lambda x, w: W.microaggregate_weighted(x, np.ones_like(w), 5))
    assert got == expected and "weights" not in params


@pytest.mark.parametrize("change, words", [
    (lambda df: df.rename(columns={"w": "weight_x"}), "source.weight: the source has no column 'w'"),
    (lambda df: df.assign(w=df["w"].astype(str)), "source.weight: the sampling weights must be numbers"),
    (lambda df: df.assign(w=np.where(df["id"] == 3, 0, df["w"])), "mdav_round_weighted: weights must be finite numbers > 0"),
])
def test_bad_weight_columns_are_refused_and_nothing_is_written(source, change, words):
    folder, df = source
    bad = change(df)
    (folder / "src.duckdb").unlink()
    write_db(folder / "src.duckdb", "people", bad)
    doc = _doc()
    if "weight_x" in bad:
        doc["columns"]["weight_x"] = "keep"
        del doc["columns"]["w"]
    with pytest.raises(SpecError, match=words):
        release(load_spec(write_spec(folder, doc)))
    assert not (folder / "out" / "release.duckdb").exists()


def _fewer(folder, df, n: int = 60):
    """The first n records as the source (the report's measures cost time per record)."""
    df = df.head(n).copy()
    (folder / "src.duckdb").unlink()
    write_db(folder / "src.duckdb", "people", df)
    return df


def test_the_report_adds_the_weighted_measures(source):
    folder, df = source
    df = _fewer(folder, df)
    spec = load_spec(write_spec(folder, _doc()))
    release(spec)
    df_report = report(spec)
    rows = df_report[df_report.measure.isin(["weighted_mae", "weighted_mse", "weighted_il1s",
                                             "expected_reidentifications", "expected_reidentification_share"])]
    assert set(rows.measure) == {"weighted_mae", "weighted_mse", "weighted_il1s", "expected_reidentifications",
                                 "expected_reidentification_share"}
    plain = duckdb.connect(str(folder / "out" / "release.duckdb"), read_only=True)
    released = dict(plain.execute("SELECT id, income FROM people").fetchall())
    plain.close()
    part = df[df["income"].notna()]
    x = part["income"].to_numpy()
    xm = np.array([released[i] for i in part["id"]])
    w = part["w"].to_numpy().astype(float)
    mae = rows[(rows.measure == "weighted_mae") & (rows.column == "income")].value.iloc[0]
    assert mae == pytest.approx(float((w * np.abs(x - xm)).sum() / w.sum()), rel=1e-12)
    # the unweighted measures are still there, unchanged in name
    assert {"mae", "k_anonymity"} <= set(df_report.measure)


def test_a_weighted_group_rule_uses_weighted_centroids(source):
    folder, df = source
    doc = _doc()
    del doc["columns"]["income"], doc["columns"]["expenses"]
    doc["groups"] = [{"columns": ["income", "expenses"], "method": "mdav_multi_round", "k": 4}]
    release(parse_spec(doc, folder))
    plain = duckdb.connect(str(folder / "out" / "release.duckdb"), read_only=True)
    got = {i: [a, b] for i, a, b in plain.execute("SELECT id, income, expenses FROM people").fetchall()}
    params = json.loads(plain.execute("SELECT parameters FROM release_manifest WHERE column_name = 'income'").fetchone()[0])
    plain.close()
    assert params["weights"] == "w"
    for _, part in df.sort_values("id").groupby("region"):
        part = part[part["income"].notna()]
        masked = W.mdav_multi_round_weighted(part[["income", "expenses"]].to_numpy(), part["w"].to_numpy().astype(float), 4)
        assert {int(i): m for i, m in zip(part["id"], masked.tolist())} == {int(i): got[int(i)] for i in part["id"]}


def test_cell_merging_with_weights_is_refused_and_suppression_is_not(source):
    folder, _ = source
    merge = {"method": "mdav_round", "k": 5, "cells": {"rule": "dominance", "n": 2, "r": 0.7, "action": "merge"}}
    with pytest.raises(SpecError, match=r"columns\.income\.cells: action = \"merge\" releases a merged cluster as the "
                                        r"unweighted mean"):
        parse_spec(_doc(income=merge), folder)
    parse_spec(_doc(income={**merge, "weighted": False}), folder)
    parse_spec(_doc(income={**merge, "cells": {**merge["cells"], "action": "suppress"}}), folder)


def test_a_missing_weight_makes_the_weighted_risk_undefined_not_the_report_fail(source):
    folder, df = source
    df = df.head(60).copy()
    df["w"] = df["w"].astype(float)
    df.loc[df["income"].isna(), "w"] = np.nan  # no weight where income is NULL: masking needs none there
    assert df["income"].isna().any()
    (folder / "src.duckdb").unlink()
    write_db(folder / "src.duckdb", "people", df)
    doc = _doc(expenses={"method": "oma_round", "k": 4, "weighted": False})  # it has values beside the NULL weights
    doc["policy"] = {"quasi_identifiers": ["region", "age"]}  # records with a NULL income count
    spec = parse_spec(doc, folder)
    release(spec)
    rows = report(spec)
    risk = rows[rows.measure == "expected_reidentifications"].iloc[0]
    assert risk.value is None or np.isnan(risk.value)
    assert "weight column __sdc_eval_weight must hold finite numbers > 0 (NULL is refused" in risk.note
    assert rows[(rows.measure == "weighted_mae") & (rows.column == "income")].value.notna().all()
    assert rows[(rows.measure == "weighted_mae") & (rows.column == "expenses")].empty  # masked without weights
