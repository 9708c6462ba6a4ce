"""Releases end to end: spec -> release file -> a plain DuckDB connection reads it."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone

import duckdb
import pytest
from release_helpers import FILE_BYTES, base_doc, people, scan_release, write_db, write_spec

import duckdb_sdc
from duckdb_sdc import masking, methods
from duckdb_sdc.release import METHODS, SpecError, dry_run, load_spec, parse_spec, plan_release, release
from duckdb_sdc.release.plan import DIALECT, parse_back
from duckdb_sdc.sql import connect


@pytest.fixture
def source(tmp_path):
    df = people()
    write_db(tmp_path / "src.duckdb", "people", df)
    return tmp_path, df


def _expected(df, column, k, fn, strata="region", **kw):
    """The numpy layer applied per stratum, as {id: masked value} (NULLs stay None)."""
    out = {}
    for _, part in (df.groupby(strata) if strata else [(None, df)]):
        values = part[column]
        present = values.notna().to_numpy()
        masked = fn(values.to_numpy()[present], k, **kw)
        for i, m in zip(part["id"].to_numpy()[present], masked):
            out[int(i)] = m
        for i in part["id"].to_numpy()[~present]:
            out[int(i)] = None
    return out


def test_release_opens_in_a_plain_connection_and_equals_the_numpy_layer(source):
    folder, df = source
    result = release(load_spec(write_spec(folder, base_doc())))
    assert result.rows == len(df) and result.masked == ["income", "expenses"]
    plain = duckdb.connect(str(folder / "out" / "release.duckdb"))  # nothing registered
    assert [r[0] for r in plain.execute("DESCRIBE people").fetchall()] == ["id", "region", "age", "income", "expenses"]
    rows = plain.execute("SELECT id, region, age, income, expenses FROM people").fetchall()
    assert sorted(r[0] for r in rows) == sorted(df["id"])
    assert [r[0] for r in rows] != sorted(df["id"])  # a secret random order (see release/test_leaks.py)
    income = _expected(df, "income", 5, methods.mdav_round)
    expenses = _expected(df, "expenses", 4, methods.oma_round, representative="median")
    by_id = df.set_index("id")
    for i, region, age, inc, exp_ in rows:
        assert region == by_id.loc[i, "region"] and age == by_id.loc[i, "age"]
        assert (inc is None) == (income[i] is None)
        if inc is not None:
            assert inc == pytest.approx(income[i], rel=1e-12)
        assert exp_ == pytest.approx(expenses[i], rel=1e-12)
    # the view drops the key and works without duckdb_sdc
    view_cols = [r[0] for r in plain.execute("DESCRIBE people_public").fetchall()]
    assert view_cols == ["region", "age", "income", "expenses"]
    assert plain.execute("SELECT count(*) FROM people_public").fetchall() == [(len(df),)]
    # every masked income group has at least k members within its region
    assert plain.execute("SELECT min(n) FROM (SELECT count(*) n FROM people WHERE income IS NOT NULL "
                         "GROUP BY region, income)").fetchall()[0][0] >= 5
    plain.close()


def test_manifest_records_rules_parameters_and_versions(source):
    folder, df = source
    before = datetime.now(timezone.utc).replace(tzinfo=None)
    release(load_spec(write_spec(folder, base_doc())))
    plain = duckdb.connect(str(folder / "out" / "release.duckdb"))
    rows = plain.execute("SELECT column_name, position, rule, method, parameters, strata, epsilon, source_type, "
                         "released_type, package_version, duckdb_version, created_at, spec, epsilon_total "
                         "FROM release_manifest ORDER BY rowid").fetchall()
    plain.close()
    assert [r[0] for r in rows] == list(df.columns)
    table = {r[0]: r for r in rows}
    assert table["id"][1:4] == (1, "key", None)
    assert table["note"][1:4] == (None, "drop", None) and table["note"][8] is None
    assert table["income"][1:4] == (4, "mask", "mdav_round")
    assert json.loads(table["income"][4]) == {"k": 5, "representative": "mean"}  # defaults spelled out
    assert json.loads(table["expenses"][4]) == {"k": 4, "representative": "median"}
    assert table["income"][5] == ["region"] and table["income"][6] is None
    assert table["income"][7:9] == ("DOUBLE", "DOUBLE") and table["age"][8] == "BIGINT"
    assert {r[9] for r in rows} == {duckdb_sdc.__version__}
    assert {r[10] for r in rows} == {duckdb.__version__}
    created = rows[0][11]
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    assert before - timedelta(seconds=1) <= created <= now + timedelta(seconds=1)  # UTC
    assert json.loads(rows[0][12]) == base_doc()
    assert rows[0][13] is None  # no differentially private column


def test_no_raw_value_of_a_masked_column_is_anywhere_in_the_release(source):
    folder, df = source
    doc = base_doc()
    # (a median of an odd-sized group is one of its values: the leak scan needs means)
    doc["columns"]["expenses"] = {"method": "oma_round", "k": 4}
    release(load_spec(write_spec(folder, doc)))
    raw = set(df["income"].dropna()) | set(df["expenses"])
    found = scan_release(folder / "out" / "release.duckdb", raw)
    assert sorted({r for r, _ in found} - {FILE_BYTES[0]}) == ["people", "people_public", "release_manifest"]
    assert len(found) >= 13  # every column of every relation, and the file's bytes as text
    assert {where: v for where, v in found.items() if v} == {}


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_failing_last_column_leaves_no_output_file(source):
    folder, _ = source
    doc = base_doc()
    doc["columns"]["expenses"] = {"method": "oma_round", "k": 100000}  # the data refuse it
    with pytest.raises(SpecError, match=r"columns\.expenses: oma_round: k = 100000 is larger"):
        release(load_spec(write_spec(folder, doc)))
    assert not (folder / "out" / "release.duckdb").exists()
    assert [p.name for p in (folder / "out").iterdir()] == []  # no temporary file left behind


def test_a_failing_release_leaves_the_previous_one_untouched(source):
    folder, _ = source
    release(load_spec(write_spec(folder, base_doc())))
    out = folder / "out" / "release.duckdb"
    digest, mtime = _digest(out), out.stat().st_mtime_ns
    doc = base_doc()
    doc["columns"]["expenses"] = {"method": "oma_round", "k": 4, "representative": "mode"}
    with pytest.raises(SpecError, match="representative must be one of"):
        release(load_spec(write_spec(folder, doc)))
    assert _digest(out) == digest and out.stat().st_mtime_ns == mtime
    assert sorted(p.name for p in out.parent.iterdir()) == ["release.duckdb"]
    # a successful release replaces it
    doc["columns"]["expenses"] = {"method": "ranking_round", "k": 3}
    release(load_spec(write_spec(folder, doc)))
    assert _digest(out) != digest


def test_a_key_that_is_not_unique_stops_the_release(tmp_path):
    df = people(50)
    df.loc[3, "id"] = df.loc[4, "id"]
    df.loc[7, "id"] = None
    write_db(tmp_path / "src.duckdb", "people", df)
    with pytest.raises(SpecError, match=r"'id' must be unique and non-NULL; it has 1 NULL and 1 repeated"):
        release(load_spec(write_spec(tmp_path, base_doc())))
    assert not (tmp_path / "out" / "release.duckdb").exists()


def test_dry_run_prints_sql_that_parses_back_and_writes_nothing(source):
    folder, _ = source
    spec = load_spec(write_spec(folder, base_doc()))
    script = dry_run(spec)
    assert not (folder / "out").exists()
    assert "MDAV_ROUND" in script.upper() and 'GROUP BY\n    "region"' in script
    assert len(parse_back(script)) == 56  # with the strata counted (small strata), and 36 COMMENT ON
    assert "MD5_NUMBER('<a secret salt drawn for each release>'" in script  # never a real salt
    con = connect()
    plan = plan_release(con, spec)
    con.close()
    parsed = parse_back(plan.sql())
    assert len(parsed) == len(plan.statements()) == 56
    for original, back in zip(plan.statements(), parsed):
        if original.key != "detach":  # sqlglot reads DETACH's name as a bare word
            assert back.sql(DIALECT, comments=False) == original.sql(DIALECT, comments=False)


def test_storage_version_option_writes_an_older_format(source):
    folder, _ = source
    doc = base_doc()
    doc["output"]["storage_version"] = "v1.5.0"
    release(load_spec(write_spec(folder, doc)))
    plain = duckdb.connect(str(folder / "out" / "release.duckdb"))
    tags = plain.execute("SELECT tags FROM duckdb_databases() WHERE database_name = 'release'").fetchall()
    assert tags[0][0]["storage_version"].startswith("v1.5.0")
    assert plain.execute("SELECT count(*) FROM people_public").fetchall()[0][0] == 300
    plain.close()


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_file_sources(tmp_path, fmt):
    df = people(120)
    con = duckdb.connect()
    con.register("df", df)
    (tmp_path / "data").mkdir()
    for part in (0, 1):
        con.execute(f"COPY (SELECT * FROM df WHERE id % 2 = {part}) TO '{tmp_path}/data/part{part}.{fmt}' "
                    f"(FORMAT {fmt})")
    con.close()
    doc = base_doc()
    doc["source"] = {"files": [f"data/part*.{fmt}"], "key": "id"}
    release(load_spec(write_spec(tmp_path, doc)))
    plain = duckdb.connect(str(tmp_path / "out" / "release.duckdb"))
    ids = [r[0] for r in plain.execute("SELECT id FROM people").fetchall()]
    manifest_source = plain.execute("SELECT DISTINCT source FROM release_manifest").fetchall()
    plain.close()
    assert sorted(ids) == list(range(1, 121))
    assert manifest_source == [(f"{fmt} files data/part*.{fmt}",)]  # relative to the spec's folder


def test_per_column_strata_override_the_default(source):
    folder, df = source
    doc = base_doc()
    doc["columns"]["expenses"] = {"method": "ranking_round", "k": 3, "strata": []}
    release(load_spec(write_spec(folder, doc)))
    plain = duckdb.connect(str(folder / "out" / "release.duckdb"))
    got = dict(plain.execute("SELECT id, expenses FROM people").fetchall())
    strata = plain.execute("SELECT strata FROM release_manifest WHERE column_name = 'expenses'").fetchall()
    plain.close()
    expected = _expected(df, "expenses", 3, methods.ranking_round, strata=None)
    assert all(got[i] == pytest.approx(v, rel=1e-12) for i, v in expected.items())
    assert strata == [([],)]


def test_releases_are_reproducible(source):
    folder, _ = source
    doc = base_doc()
    doc["columns"]["age"] = {"method": "mdav_round", "k": 3}  # integers: many ties
    spec = load_spec(write_spec(folder, doc))
    release(spec)
    first = duckdb.connect(str(spec.output.database)).execute("SELECT * FROM people").fetchall()
    release(spec)
    second = duckdb.connect(str(spec.output.database)).execute("SELECT * FROM people").fetchall()
    assert sorted(first) == sorted(second)  # the same values by key ...
    assert first != second  # ... in a new secret order each time


# ---------------------------------------------------------------------------------------------
# privacy by default and spec errors


def test_undeclared_columns_stop_the_release_and_are_all_listed(source):
    folder, _ = source
    doc = base_doc()
    del doc["columns"]["note"], doc["columns"]["age"]
    with pytest.raises(SpecError, match=r"source columns without a rule in \[columns\].*'age', 'note'"):
        release(load_spec(write_spec(folder, doc)))
    assert not (folder / "out").exists()


def test_the_key_needs_a_rule_too(source):
    folder, _ = source
    doc = base_doc()
    del doc["columns"]["id"]
    with pytest.raises(SpecError, match="without a rule.*'id'"):
        dry_run(load_spec(write_spec(folder, doc)))


def test_dropping_the_key_keeps_it_out_of_the_table(source):
    folder, _ = source
    doc = base_doc()
    doc["columns"]["id"] = "drop"
    del doc["output"]["view_without_key"]
    release(load_spec(write_spec(folder, doc)))
    plain = duckdb.connect(str(folder / "out" / "release.duckdb"))
    assert [r[0] for r in plain.execute("DESCRIBE people").fetchall()] == ["region", "age", "income", "expenses"]
    assert plain.execute("SELECT rule, position FROM release_manifest WHERE column_name = 'id'").fetchall() == [("key", None)]
    plain.close()


@pytest.mark.parametrize("change, message", [
    (lambda d: d["columns"].update(incme="keep"), r"the source does not have: 'incme'"),
    (lambda d: d["columns"].update(Income="keep"), r"'Income' \(did you mean 'income'\?\)"),
    (lambda d: d["columns"].update(region={"method": "mdav_round", "k": 3}),
     r"stratum column 'region' is masked itself"),
    (lambda d: d["columns"].update(note={"method": "mdav_round", "k": 3}), r"columns\.note: mdav_round masks numbers, column 'note' is VARCHAR"),
    (lambda d: d["columns"].update(income={"method": "mdav", "k": 3}), r"unknown method 'mdav'; known: .*\bmdav_round, oma_round, rank_swap, ranking_round\b"),
    (lambda d: d["columns"].update(income={"method": "mdav_round"}), r"columns\.income: mdav_round needs k"),
    (lambda d: d["columns"].update(income={"method": "mdav_round", "k": 3, "gamma": 1}), r"mdav_round has no parameter 'gamma'; its parameters: k, representative"),
    (lambda d: d["columns"].update(income={"method": "mdav_round", "k": "five"}), r"columns\.income\.k: mdav_round expects INTEGER or 'auto', got 'five'"),
    (lambda d: d["columns"].update(income={"method": "mdav_round", "k": 2.5}), r"expects INTEGER or 'auto', got 2\.5"),
    (lambda d: d["columns"].update(income="hide"), r"unknown method 'hide'"),
    (lambda d: d["columns"].update(id={"method": "mdav_round", "k": 3}), r"the row key can only be kept or dropped"),
    (lambda d: d["columns"].update(__sdc_x="keep"), r"reserved"),
    (lambda d: d["output"].update(table="release_manifest"), r"the manifest's name"),
    (lambda d: d["output"].update(view_without_key="people"), r"must differ from output.table"),
    (lambda d: d["output"].update(storage_version="1.5"), r"must look like \"v1\.5\.0\""),
    (lambda d: d["output"].update(databse="x"), r"unknown key 'databse'"),
    (lambda d: d["masking"].update(total_epsilon=1.0), r"no column uses a differentially private method"),
    (lambda d: d["source"].update(database="missing.duckdb"), r"no such file"),
    (lambda d: d["source"].update(files=["a.parquet"]), r"give either database and table, or files"),
    (lambda d: d["output"].update(database="src.duckdb"), r"is a file of the source: a release never replaces it"),
])
def test_spec_mistakes_are_reported_clearly(source, change, message):
    folder, _ = source
    doc = base_doc()
    change(doc)
    with pytest.raises(SpecError, match=message) as info:
        dry_run(load_spec(write_spec(folder, doc)))
    assert str(info.value).startswith("spec.toml: ")


def test_an_output_folder_that_cannot_be_made_is_a_spec_error(source):
    folder, _ = source
    (folder / "blocker").write_text("a file where a folder should be")
    doc = base_doc(out="blocker/release.duckdb")
    with pytest.raises(SpecError, match=r"output\.database: cannot create"):
        release(load_spec(write_spec(folder, doc)))


def test_invalid_toml_is_a_spec_error(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[source\nkey = 1")
    with pytest.raises(SpecError, match="bad.toml: not valid TOML"):
        load_spec(path)


def test_an_existing_write_ahead_log_is_refused(source):
    folder, _ = source
    (folder / "out").mkdir()
    (folder / "out" / "release.duckdb.wal").write_bytes(b"x")
    with pytest.raises(SpecError, match="write-ahead log"):
        release(load_spec(write_spec(folder, base_doc())))


def test_the_manifest_never_keeps_a_seed():
    doc = base_doc()
    doc["columns"]["income"] = {"method": "mdav_round", "k": 5}
    spec = parse_spec(doc)
    object.__setattr__(spec, "text", {**doc, "columns": {**doc["columns"],
                                                         "income": {"method": "x", "k": 5, "seed": 42}}})
    assert "seed" not in json.dumps(spec.public_text())
    assert spec.text["columns"]["income"]["seed"] == 42  # the spec itself is not changed


def test_method_table_is_derived_from_the_registry():
    # every record with a list function and its table form (tests/declarations/test_masking_records.py: exactly those)
    assert set(METHODS) <= set(masking.METHODS)
    assert METHODS["mdav_multi_round"].kind == "rows" and METHODS["mdav_round"].kind == "column"
    assert METHODS["box_release"].kind == "boxes"
    assert METHODS["idp_cbls"].is_dp and not METHODS["kmd_round"].is_dp
    assert [p.name for p in METHODS["vmdav_round"].params] == ["k", "gamma", "representative"]
    assert METHODS["mdav_round"].required == ("k",) and not METHODS["mdav_round"].is_dp
