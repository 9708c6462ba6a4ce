"""New masking families plug into releases through their registry rows alone.

The rows below are test stand-ins (simple SQL macros), not SDC methods: one method over a group of
columns (`rows DOUBLE[][]`, as multivariate methods take them) and one differentially private
method (an `epsilon` parameter and a `seed`), each with its table form, as a family would add them.
"""

from __future__ import annotations

import json
import math

import duckdb
import pytest
from release_helpers import base_doc, people, write_db, write_spec

import duckdb_sdc
from duckdb_sdc.release import SpecError, dry_run, load_spec, release
from duckdb_sdc.release import methods as release_methods
from duckdb_sdc.release import run as release_run
from duckdb_sdc.release.plan import parse_back
from duckdb_sdc.sql.registry import REGISTRY, Param, SqlFunction

_K = Param("k", "INTEGER")
FAKE_ROWS = (
    SqlFunction("test_rows_round", "scalar", (Param("rows", "DOUBLE[][]"), _K), "DOUBLE[][]", "test"),
    SqlFunction("test_rows_round_table", "table", (), "table", "test"),
    SqlFunction("test_dp_shift", "scalar", (Param("xs", "DOUBLE[]"), _K, Param("epsilon", "DOUBLE"),
                                            Param("seed", "INTEGER", "NULL")), "DOUBLE[]", "test"),
    SqlFunction("test_dp_shift_table", "table", (), "table", "test"),
    SqlFunction("test_helper", "scalar", (Param("xs", "DOUBLE[]"),), "DOUBLE[]", "no table form: not a method"),
)
MACROS = (
    # each coordinate rounded to a multiple of k: shows which value lands in which column
    "CREATE OR REPLACE TEMP MACRO test_rows_round(rows, k) AS "
    "list_transform(rows, lambda r: list_transform(r, lambda v: round(v / k) * k))",
    # adds epsilon: shows the epsilon each column received
    "CREATE OR REPLACE TEMP MACRO test_dp_shift(xs, k, epsilon, seed := NULL) AS "
    "list_transform(xs, lambda v: v + epsilon)",
)


@pytest.fixture
def plugged(monkeypatch, tmp_path):
    derived = release_methods.derive(REGISTRY + FAKE_ROWS)
    assert "test_helper" not in derived
    for name in ("test_rows_round", "test_dp_shift"):
        monkeypatch.setitem(release_methods.METHODS, name, derived[name])
    assert derived["test_rows_round"].kind == "rows" and derived["test_dp_shift"].is_dp

    def connect():
        con = duckdb_sdc.connect()
        for macro in MACROS:
            con.execute(macro)
        return con

    monkeypatch.setattr(release_run, "connect", connect)
    write_db(tmp_path / "src.duckdb", "people", people(90))
    return tmp_path


def _doc_with_group():
    doc = base_doc()
    del doc["columns"]["age"], doc["columns"]["income"]
    doc["groups"] = [{"columns": ["income", "age"], "method": "test_rows_round", "k": 10}]
    return doc


def test_a_group_of_columns_is_masked_together_and_put_back_in_place(plugged):
    spec = _load(plugged, _doc_with_group())
    script = dry_run(spec)
    assert "[CAST(\"income\" AS DOUBLE), CAST(\"age\" AS DOUBLE)]" in script
    assert '"__sdc_m2"."__sdc_value"[2] AS "age"' in script
    assert len(parse_back(script)) == 15
    release(spec)
    plain = duckdb.connect(str(plugged / "out" / "release.duckdb"))
    got = plain.execute("SELECT id, age, income FROM people ORDER BY id").fetchall()
    manifest = dict(plain.execute("SELECT column_name, masked_with FROM release_manifest").fetchall())
    methods_used = dict(plain.execute("SELECT column_name, method FROM release_manifest").fetchall())
    plain.close()
    src = duckdb.connect(str(plugged / "src.duckdb"), read_only=True)
    original = src.execute("SELECT id, age, income FROM people ORDER BY id").fetchall()
    src.close()
    def to_ten(v):  # DuckDB's round: halves away from zero (the values are positive)
        return math.floor(v / 10 + 0.5) * 10

    for (i, age, income), (j, age0, income0) in zip(got, original):
        assert i == j and age == to_ten(age0)
        assert income == (None if income0 is None else pytest.approx(to_ten(income0)))
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


def test_a_total_epsilon_is_split_and_recorded_and_seeds_are_not(plugged):
    doc = base_doc()
    doc["masking"]["total_epsilon"] = 1.0
    doc["columns"]["income"] = {"method": "test_dp_shift", "k": 5, "seed": 12345}
    doc["columns"]["expenses"] = {"method": "test_dp_shift", "k": 5, "epsilon": 0.25, "seed": 678}
    doc["columns"]["age"] = {"method": "test_dp_shift", "k": 5}
    spec = _load(plugged, doc)
    assert {r.column: r.epsilon for r in spec.masked()} == {"income": 0.375, "expenses": 0.25, "age": 0.375}
    release(spec)
    path = plugged / "out" / "release.duckdb"
    plain = duckdb.connect(str(path))
    manifest = {r[0]: r[1:] for r in plain.execute(
        "SELECT column_name, epsilon, parameters, epsilon_total, spec FROM release_manifest").fetchall()}
    shifts = plain.execute("SELECT p.expenses - s.expenses, p.age - s.age FROM people p "
                           "JOIN (SELECT * FROM people) s USING (id) LIMIT 1").fetchall()
    plain.close()
    assert manifest["income"][0] == 0.375 and manifest["expenses"][0] == 0.25 and manifest["region"][0] is None
    assert json.loads(manifest["income"][1]) == {"k": 5, "epsilon": 0.375}
    assert {m[2] for m in manifest.values()} == {1.0}
    assert shifts == [(0.0, 0.0)]
    src = duckdb.connect(str(plugged / "src.duckdb"), read_only=True)
    src.execute("ATTACH ? AS rel (READ_ONLY)", [str(path)])
    moved = src.execute("SELECT min(r.expenses - s.expenses), max(r.age - s.age) "
                        "FROM people s JOIN rel.people r USING (id)").fetchall()[0]
    src.close()
    assert moved[0] == pytest.approx(0.25) and moved[1] == pytest.approx(0.375)
    text = path.read_bytes()
    assert b"12345" not in text and b"seed" not in text and b"678" not in text


@pytest.mark.parametrize("change, message", [
    (lambda d: d["columns"].update(income={"method": "test_dp_shift", "k": 5}),
     r"columns\.income: test_dp_shift needs epsilon \(or set masking\.total_epsilon"),
    (lambda d: (d["masking"].update(total_epsilon=0.5),
                d["columns"].update(income={"method": "test_dp_shift", "k": 5, "epsilon": 0.4},
                                    expenses={"method": "test_dp_shift", "k": 5, "epsilon": 0.2})),
     r"the columns' epsilons add up to 0\.6, more than the total 0\.5"),
    (lambda d: (d["masking"].update(total_epsilon=0.5),
                d["columns"].update(income={"method": "test_dp_shift", "k": 5, "epsilon": 0.5},
                                    expenses={"method": "test_dp_shift", "k": 5})),
     r"nothing is left for columns\.expenses"),
    (lambda d: d["columns"].update(income={"method": "test_dp_shift", "k": 5, "epsilon": "a lot"}),
     r"columns\.income\.epsilon: test_dp_shift expects DOUBLE, got 'a lot'"),
])
def test_epsilon_mistakes(plugged, change, message):
    doc = base_doc()
    change(doc)
    with pytest.raises(SpecError, match=message):
        _load(plugged, doc)
