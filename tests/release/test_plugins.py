"""New masking families plug into releases through their registry rows alone, and the merged
families release as their numpy layer computes.

The rows below are a test stand-in (a simple SQL macro, not an SDC method): one method over a group
of columns (`rows DOUBLE[][]`, as multivariate methods take them) with its table form, plugged in
as a new family would add it. The real families are tested too: multivariate MDAV over a group,
idp_cbls with a split budget, efd_round and kmd_round with c = 'auto'.
"""

from __future__ import annotations

import json
import math

import duckdb
import numpy as np
import pytest
from release_helpers import base_doc, people, write_db, write_spec

import duckdb_sdc
from duckdb_sdc import guarantees, masking, methods
from duckdb_sdc.methods import dp
from duckdb_sdc.params import stratum_seed
from duckdb_sdc.release import SpecError, dry_run, load_spec, release
from duckdb_sdc.release import methods as release_methods
from duckdb_sdc.release import source as release_source
from duckdb_sdc.release.plan import parse_back
from duckdb_sdc.sql.registry import REGISTRY, Param, SqlFunction

_K = Param("k", "INTEGER")
FAKE_ROWS = (
    SqlFunction("test_rows_round", "scalar", (Param("rows", "DOUBLE[][]"), _K), "DOUBLE[][]", "test"),
    SqlFunction("test_rows_round_table", "table", (), "table", "test"),
    SqlFunction("test_helper", "scalar", (Param("xs", "DOUBLE[]"),), "DOUBLE[]", "no table form: not a method"),
)
MACROS = (
    # each coordinate rounded to a multiple of k: shows which value lands in which column
    "CREATE OR REPLACE TEMP MACRO test_rows_round(rows, k) AS "
    "list_transform(rows, lambda r: list_transform(r, lambda v: round(v / k) * k))",
)


# the stand-in's record (rounding to multiples of k: a discretisation, whose smallest set of attraction the
# release measures): a method is released only with a record that states its guarantee
FAKE_RECORD = masking.MaskingMethod("test_rows_round", masking.RECORDS, (Param("k", "INTEGER"),),
                                    lambda X, k: np.round(X / k) * k, guarantees.DISCRETISATION)


@pytest.fixture
def plugged(monkeypatch, tmp_path, request):
    assert "test_rows_round" not in release_methods.derive(REGISTRY + FAKE_ROWS)  # no record: not a method
    masking.register(FAKE_RECORD)
    request.addfinalizer(lambda: masking.unregister(FAKE_RECORD.name))
    derived = release_methods.derive(REGISTRY + FAKE_ROWS)
    assert "test_helper" not in derived
    monkeypatch.setitem(release_methods.METHODS, "test_rows_round", derived["test_rows_round"])
    assert derived["test_rows_round"].kind == "rows"
    assert derived["test_rows_round"].guarantee is guarantees.DISCRETISATION

    def connect(*args, **config):
        con = duckdb_sdc.connect(*args, **config)
        for macro in MACROS:
            con.execute(macro)
        return con

    monkeypatch.setattr(release_source, "connect", connect)  # what private_connection (a release's) calls
    # no NULL income: a record alone with (NULL, age) would be a set of attraction of one, refused
    write_db(tmp_path / "src.duckdb", "people", people(90).fillna({"income": 45_000.0}))
    return tmp_path


def _doc_with_group():
    doc = base_doc()
    del doc["columns"]["age"], doc["columns"]["income"]
    doc["groups"] = [{"columns": ["income", "age"], "method": "test_rows_round", "k": 20_000}]
    return doc


def test_a_group_of_columns_is_masked_together_and_put_back_in_place(plugged):
    spec = _load(plugged, _doc_with_group())
    script = dry_run(spec)
    assert "[CAST(\"income\" AS DOUBLE), CAST(\"age\" AS DOUBLE)]" in script
    assert '"__sdc_m2"."__sdc_value"[2] AS "age"' in script
    assert len(parse_back(script)) == 56  # with the strata counted (small strata), 36 COMMENT ON
    release(spec)
    plain = duckdb.connect(str(plugged / "out" / "release.duckdb"))
    got = plain.execute("SELECT id, age, income FROM people ORDER BY id").fetchall()
    manifest = dict(plain.execute("SELECT column_name, masked_with FROM release_manifest").fetchall())
    methods_used = dict(plain.execute("SELECT column_name, method FROM release_manifest").fetchall())
    plain.close()
    src = duckdb.connect(str(plugged / "src.duckdb"), read_only=True)
    original = src.execute("SELECT id, age, income FROM people ORDER BY id").fetchall()
    src.close()
    def rounded(v):  # DuckDB's round: halves away from zero (the values are positive)
        return math.floor(v / 20_000 + 0.5) * 20_000

    assert len({income for _, _, income in got}) > 2  # income and age land in their own columns
    for (i, age, income), (j, age0, income0) in zip(got, original):
        assert i == j and age == rounded(age0) == 0
        assert income == pytest.approx(rounded(income0))
    assert manifest["age"] == manifest["income"] == ["income", "age"] and manifest["expenses"] is None
    assert methods_used["age"] == "test_rows_round"


def test_group_mistakes(plugged):
    doc = _doc_with_group()
    doc["columns"]["age"] = "keep"
    with pytest.raises(SpecError, match=r"groups\[0\]: column 'age' already has a rule \(columns\.age\)"):
        _load(plugged, doc)
    doc = _doc_with_group()
    doc["groups"][0]["columns"] = ["age"]
    doc["columns"]["income"] = "keep"
    with pytest.raises(SpecError, match="at least two columns"):
        _load(plugged, doc)
    doc = _doc_with_group()
    doc["groups"][0]["method"] = "mdav_round"
    with pytest.raises(SpecError, match=r"mdav_round masks one column: declare it in \[columns\]"):
        _load(plugged, doc)
    doc = base_doc()
    doc["columns"]["income"] = {"method": "test_rows_round", "k": 3}
    with pytest.raises(SpecError, match=r"test_rows_round masks a group of columns: declare it in \[\[groups\]\]"):
        _load(plugged, doc)


def _load(folder, doc):
    """A spec with [[groups]] through the TOML writer of the helpers (arrays of tables by hand)."""
    groups = doc.pop("groups", [])
    path = write_spec(folder, doc)
    text = path.read_text()
    for g in groups:
        text += "\n[[groups]]\n" + "".join(f"{json.dumps(k)} = {json.dumps(v)}\n" for k, v in g.items())
    path.write_text(text)
    return load_spec(path)


def _per_stratum(df, column, fn, **kw) -> dict:
    """The numpy layer on each region's non-NULL values in key order, as {id: released value}; a
    seed is turned into each stratum's stream as the release does: stratum_seed(seed, column, i) for
    the i-th region in ascending order."""
    out = {}
    for i, (region, part) in enumerate(df.sort_values("id").groupby("region")):
        present = part[column].notna().to_numpy()
        args = dict(kw, seed=stratum_seed(kw["seed"], column, i)) if kw.get("seed") is not None else kw
        values = fn(part[column].to_numpy(dtype=float)[present], **args)
        out.update({int(i): v for i, v in zip(part["id"].to_numpy()[present], values)})
        out.update({int(i): None for i in part["id"].to_numpy()[~present]})
    return out


def _released(path, columns) -> dict:
    plain = duckdb.connect(str(path), read_only=True)  # nothing registered
    rows = plain.execute(f"SELECT id, {', '.join(columns)} FROM people").fetchall()
    plain.close()
    return {c: {r[0]: r[j + 1] for r in rows} for j, c in enumerate(columns)}


def _assert_equal(got: dict, expected: dict) -> None:
    assert got.keys() == expected.keys()
    for i, v in expected.items():
        assert (got[i] is None) == (v is None), i
        if v is not None:
            assert got[i] == pytest.approx(v, rel=1e-12), i


@pytest.fixture
def source(tmp_path):
    df = people(150)
    write_db(tmp_path / "src.duckdb", "people", df)
    return tmp_path, df


def test_idp_cbls_with_a_total_epsilon_split_and_recorded_and_seeds_are_not(source):
    folder, df = source
    doc = base_doc()
    doc["masking"]["total_epsilon"] = 1.0
    doc["masking"]["reproducible_noise"] = True  # the seeds are for the test: the manifest says "none"
    doc["columns"]["income"] = {"method": "idp_cbls", "k": 5, "seed": 12345}
    doc["columns"]["expenses"] = {"method": "idp_cbls", "k": 5, "epsilon": 0.25, "seed": 678}
    doc["columns"]["age"] = {"method": "idp_cbls", "k": 4, "seed": 91011}
    spec = load_spec(write_spec(folder, doc))
    assert {r.column: r.epsilon for r in spec.masked()} == {"income": 0.375, "expenses": 0.25, "age": 0.375}
    release(spec)
    path = folder / "out" / "release.duckdb"
    plain = duckdb.connect(str(path))
    manifest = {r[0]: r[1:] for r in plain.execute(
        "SELECT column_name, epsilon, parameters, epsilon_total, spec FROM release_manifest").fetchall()}
    plain.close()
    assert manifest["income"][0] == 0.375 and manifest["expenses"][0] == 0.25 and manifest["region"][0] is None
    assert json.loads(manifest["income"][1]) == {"k": 5, "epsilon": 0.375, "lb": None, "ub": None}
    assert json.loads(manifest["age"][1]) == {"k": 4, "epsilon": 0.375, "lb": None, "ub": None}
    assert {m[2] for m in manifest.values()} == {1.0}
    # each column is idp_cbls with its share of the budget (the seeded noise scales with 1 / epsilon)
    got = _released(path, ["income", "expenses", "age"])
    for column, k, eps, seed in (("income", 5, 0.375, 12345), ("expenses", 5, 0.25, 678), ("age", 4, 0.375, 91011)):
        _assert_equal(got[column], _per_stratum(df, column, dp.idp_cbls, k=k, epsilon=eps, seed=seed))
    other = _per_stratum(df, "expenses", dp.idp_cbls, k=5, epsilon=0.375, seed=678)
    assert any(got["expenses"][i] != pytest.approx(v) for i, v in other.items() if v is not None)
    # the seed given is not the stream used: every (column, stratum) draws its own
    raw = _per_stratum(df, "income", lambda x, **kw: dp.idp_cbls(x, seed=12345, **kw), k=5, epsilon=0.375)
    assert any(got["income"][i] != pytest.approx(v) for i, v in raw.items() if v is not None)
    text = path.read_bytes()
    assert b"12345" not in text and b"91011" not in text and b"678," not in text
    assert all("seed" not in json.loads(m[1]) for m in manifest.values() if m[1])  # the word is in the guarantee only
    plain = duckdb.connect(str(path))
    words = dict(plain.execute("SELECT column_name, guarantee FROM release_manifest").fetchall())
    plain.close()
    assert words["income"] == ("none: reproducible noise (idp_cbls with a seed): whoever holds the seed can remove "
                               "the noise; not private")


def test_discretisation_with_c_auto(source):
    folder, df = source
    doc = base_doc()
    doc["columns"]["income"] = {"method": "efd_round", "c": "auto"}
    doc["columns"]["expenses"] = {"method": "kmd_round", "c": "auto", "representative": "median"}
    release(load_spec(write_spec(folder, doc)))
    path = folder / "out" / "release.duckdb"
    got = _released(path, ["income", "expenses"])
    _assert_equal(got["income"], _per_stratum(df, "income", methods.efd_round, c="auto"))
    _assert_equal(got["expenses"], _per_stratum(df, "expenses", methods.kmd_round, c="auto", representative="median"))
    assert len(set(got["income"].values())) < len(df) // 3  # rounded to a few values per region
    plain = duckdb.connect(str(path), read_only=True)
    params = dict(plain.execute("SELECT column_name, parameters FROM release_manifest WHERE rule = 'mask'").fetchall())
    plain.close()
    assert json.loads(params["income"])["c"] == "auto"


@pytest.mark.parametrize("change, message", [
    (lambda d: d["columns"].update(income={"method": "idp_cbls", "k": 5}),
     r"columns\.income: idp_cbls needs epsilon \(or set masking\.total_epsilon"),
    (lambda d: (d["masking"].update(total_epsilon=0.5),
                d["columns"].update(income={"method": "idp_cbls", "k": 5, "epsilon": 0.4},
                                    expenses={"method": "dp_um", "k": 5, "epsilon": 0.2, "lb": 0, "ub": 1e5})),
     r"the columns' epsilons add up to 0\.6, more than the total 0\.5"),
    (lambda d: (d["masking"].update(total_epsilon=0.5),
                d["columns"].update(income={"method": "idp_cbls", "k": 5, "epsilon": 0.5},
                                    expenses={"method": "idp_cbls", "k": 5})),
     r"nothing is left for columns\.expenses"),
    (lambda d: d["columns"].update(income={"method": "idp_cbls", "k": 5, "epsilon": "a lot"}),
     r"columns\.income\.epsilon: idp_cbls expects DOUBLE, got 'a lot'"),
])
def test_epsilon_mistakes(tmp_path, change, message):
    doc = base_doc()
    change(doc)
    with pytest.raises(SpecError, match=message):
        load_spec(write_spec(tmp_path, doc))


def test_mdav_multi_round_masks_a_group_and_makes_it_k_anonymous(source):
    from duckdb_sdc.methods.multivariate import mdav_multi_round
    from duckdb_sdc.release import report
    from duckdb_sdc.release.report import K_ANONYMITY

    folder, df = source
    doc = base_doc()
    del doc["columns"]["income"], doc["columns"]["expenses"]
    doc["groups"] = [{"columns": ["income", "expenses"], "method": "mdav_multi_round", "k": 4}]
    doc["policy"] = {"quasi_identifiers": ["region", "income", "expenses"]}  # not the kept age
    spec = _load(folder, doc)
    release(spec)
    got = _released(folder / "out" / "release.duckdb", ["income", "expenses"])
    expected = {"income": {}, "expenses": {}}
    for _, part in df.sort_values("id").groupby("region"):
        complete = part[["income", "expenses"]].notna().all(axis=1).to_numpy()
        masked = mdav_multi_round(part[["income", "expenses"]].to_numpy(dtype=float)[complete], 4)
        for j, col in enumerate(("income", "expenses")):
            expected[col].update({int(i): v for i, v in zip(part["id"].to_numpy()[complete], masked[:, j])})
            expected[col].update({int(i): None for i in part["id"].to_numpy()[~complete]})
    for col in ("income", "expenses"):
        _assert_equal(got[col], expected[col])
    rep = report(spec)
    k_rows = rep[(rep["section"] == K_ANONYMITY) & (rep["measure"] == "k_anonymity")]
    assert k_rows[k_rows["column"].notna()]["value"].min() >= 4  # every column within each region
    # the group as a whole, NULL a value: records with a NULL in the group are released NULL in both
    rel = duckdb.connect(str(folder / "out" / "release.duckdb"), read_only=True).execute(
        "SELECT region, income, expenses FROM people").df().fillna(-1.0)
    assert k_rows[k_rows["column"].isna()]["value"].iloc[0] == rel.groupby(["region", "income", "expenses"]).size().min()


def test_columns_and_strata_given_one_seed_draw_independent_noise(tmp_path):
    df = people(150)
    df["expenses"] = df["income"]  # two identical columns: one shared stream would release them identically
    write_db(tmp_path / "src.duckdb", "people", df)
    doc = base_doc()
    doc["columns"]["income"] = {"method": "idp_cbls", "k": 5, "epsilon": 1.0, "seed": 7, "reproducible_noise": True}
    doc["columns"]["expenses"] = {"method": "idp_cbls", "k": 5, "epsilon": 1.0, "seed": 7, "reproducible_noise": True}
    spec = load_spec(write_spec(tmp_path, doc))
    release(spec)
    plain = duckdb.connect(str(tmp_path / "out" / "release.duckdb"))
    same = plain.execute("SELECT count(*) FILTER (income = expenses), count(income) FROM people").fetchall()[0]
    plain.close()
    assert same[1] > 100 and same[0] == 0
    assert len({stratum_seed(7, "income", i) for i in range(3)}) == 3
    assert stratum_seed(7, "income", 0) != stratum_seed(7, "expenses", 0)
