"""Hostile names and values in a spec are released correctly or refused, and never execute."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest
from release_helpers import people, write_db, write_spec

from duckdb_sdc import methods
from duckdb_sdc.release import SpecError, dry_run, load_spec, release
from duckdb_sdc.release.plan import parse_back

TABLE = 'peo"ple; DROP TABLE sentinel; --'
KEY = "select"
KEPT = "from where"
STRATUM = 'a"b'
MASKED1 = "it's"
MASKED2 = "x; DROP TABLE sentinel; --"
DROPPED = "dot.ted"
UNICODE = "Ωmega \\ back"
OUT_TABLE = 'order"; DROP TABLE sentinel; --'
VIEW = "'); DROP VIEW x; --"


def _source(folder):
    df = people(200)
    nasty = pd.DataFrame({
        KEY: df["id"], KEPT: df["note"], STRATUM: df["region"], MASKED1: df["income"],
        MASKED2: df["expenses"], DROPPED: df["age"], UNICODE: df["age"],
    })
    write_db(folder / "s'rc;.duckdb", TABLE, nasty, extra_tables=("sentinel",))
    return nasty


def _doc(**masked2):
    return {
        "source": {"database": "s'rc;.duckdb", "table": TABLE, "key": KEY},
        "output": {"database": "we ird;dir/o'ut \"x\".duckdb", "table": OUT_TABLE, "view_without_key": VIEW},
        "masking": {"strata": [STRATUM]},
        "columns": {
            KEY: {"rule": "keep", "identifying": False}, KEPT: "keep", STRATUM: "keep", UNICODE: "keep", DROPPED: "drop",
            MASKED1: {"method": "mdav_round", "k": 3},
            MASKED2: {"method": "vmdav_round", "k": 4, **masked2},
        },
    }


def _q(name):
    return '"' + name.replace('"', '""') + '"'


def test_hostile_names_are_released_exactly(tmp_path):
    df = _source(tmp_path)
    spec = load_spec(write_spec(tmp_path, _doc()))
    script = dry_run(spec)
    assert len(parse_back(script)) == 58  # nothing smuggled in (strata counted for small strata): the statements the plan has, 38 of them COMMENT ON
    release(spec)
    path = tmp_path / "we ird;dir" / "o'ut \"x\".duckdb"
    plain = duckdb.connect(str(path), read_only=True)
    tables = sorted(r[0] for r in plain.execute("SELECT table_name FROM duckdb_tables()").fetchall())
    views = [r[0] for r in plain.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()]
    assert tables == sorted([OUT_TABLE, "release_manifest"]) and views == [VIEW]
    assert [r[0] for r in plain.execute(f"DESCRIBE {_q(OUT_TABLE)}").fetchall()] == \
        [KEY, KEPT, STRATUM, MASKED1, MASKED2, UNICODE]
    assert [r[0] for r in plain.execute(f"DESCRIBE {_q(VIEW)}").fetchall()] == [KEPT, STRATUM, MASKED1, MASKED2, UNICODE]
    got = {r[0]: r[1:] for r in plain.execute(
        f"SELECT {_q(KEY)}, {_q(MASKED1)}, {_q(MASKED2)}, {_q(KEPT)} FROM {_q(OUT_TABLE)}").fetchall()}
    manifest = plain.execute("SELECT column_name, rule FROM release_manifest").fetchall()
    plain.close()
    assert manifest == [(KEY, "key"), (KEPT, "keep"), (STRATUM, "keep"), (MASKED1, "mask"), (MASKED2, "mask"),
                        (DROPPED, "drop"), (UNICODE, "keep")]
    for _, part in df.groupby(STRATUM):
        ok = part[MASKED1].notna().to_numpy()
        m1 = methods.mdav_round(part[MASKED1].to_numpy()[ok], 3)
        for key, value in zip(part[KEY].to_numpy()[ok], m1):
            assert got[key][0] == pytest.approx(value, rel=1e-12)
        m2 = methods.vmdav_round(part[MASKED2].to_numpy(), 4)
        for key, value, note in zip(part[KEY], m2, part[KEPT]):
            assert got[key][1] == pytest.approx(value, rel=1e-12) and got[key][2] == note
    source = duckdb.connect(str(tmp_path / "s'rc;.duckdb"), read_only=True)
    assert source.execute("SELECT * FROM sentinel").fetchall() == [(1,)]
    source.close()


def test_a_hostile_parameter_value_is_refused_and_never_executes(tmp_path):
    _source(tmp_path)
    spec = load_spec(write_spec(tmp_path, _doc(representative="mean'); DROP TABLE sentinel; --")))
    assert "'mean''); DROP TABLE sentinel; --'" in dry_run(spec)  # a string literal, nothing more
    with pytest.raises(SpecError, match=r"representative must be one of 'mean', 'median'"):
        release(spec)
    assert not (tmp_path / "we ird;dir" / "o'ut \"x\".duckdb").exists()
    source = duckdb.connect(str(tmp_path / "s'rc;.duckdb"), read_only=True)
    assert source.execute("SELECT * FROM sentinel").fetchall() == [(1,)]
    source.close()


@pytest.mark.parametrize("name, message", [
    ("", "must be a non-empty name"),
    ("a\x00b", "NUL"),
    ("__SDC_value", "reserved"),
])
def test_unusable_names_are_refused(tmp_path, name, message):
    _source(tmp_path)
    doc = _doc()
    doc["output"]["table"] = name
    with pytest.raises(SpecError, match=message):
        load_spec(write_spec(tmp_path, doc))


def test_a_non_numeric_parameter_type_is_refused_before_any_sql(tmp_path):
    doc = _doc()
    doc["columns"][MASKED1] = {"method": "mdav_round", "k": "3; DROP TABLE sentinel"}
    with pytest.raises(SpecError, match="expects INTEGER"):
        load_spec(write_spec(tmp_path, doc))
