"""Global recodings in releases (duckdb_sdc.recodings): each recoding releases its SQL function applied to
the source column, NULLs in place, in the record's released type; parameters and types are refused before
any SQL; the policy gate measures the recoded column; the manifest, the ledger and Spark's preflight."""

from __future__ import annotations

import dataclasses
import datetime
import json
import tomllib
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

import duckdb_sdc
from duckdb_sdc import guarantees as g
from duckdb_sdc import recodings
from duckdb_sdc.release import SpecError, parse_spec, release
from duckdb_sdc.release import ledger, manifest
from duckdb_sdc.release.plan import resolve
from duckdb_sdc.release.report import report
from duckdb_sdc.spark import preflight

ROOT = Path(__file__).resolve().parents[2]
N = 240


def _source(n: int = N, seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    born = pd.Timestamp("1950-01-01") + pd.to_timedelta(rng.integers(0, 365 * 40, n), unit="D")
    df = pd.DataFrame({
        "id": np.arange(1, n + 1, dtype=np.int64),
        "born": born.date,
        "seen": pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 10 ** 8, n), unit="s"),
        "age": rng.integers(0, 100, n).astype(np.int32),
        "income": np.round(rng.uniform(0, 200_000, n), 2),
        "job": rng.choice(["nurse", "doctor", "clerk", "baker"], n),
        "code": rng.integers(1, 6, n),
    })
    for col, every in (("born", 13), ("seen", 11), ("age", 7), ("income", 9), ("job", 5), ("code", 17)):
        df[col] = df[col].astype(object)
        df.loc[::every, col] = None
    df["born"] = pd.to_datetime(df["born"]).dt.date
    df["age"] = df["age"].astype("Int32")
    df["income"] = df["income"].astype(float)
    df["code"] = df["code"].astype("Int64")
    df["seen"] = pd.to_datetime(df["seen"])
    return df


def _write(path: Path, df: pd.DataFrame) -> None:
    con = duckdb.connect(str(path))
    con.register("df_view", df)
    con.execute("CREATE TABLE people AS SELECT id, born::DATE AS born, seen::TIMESTAMP AS seen, age::INTEGER AS age, "
                "income, job, code::BIGINT AS code FROM df_view")
    con.close()


# (column, rule, the SQL function applied to the source column, the released type)
CASES = [
    ("born", {"method": "truncate_date", "unit": "year"}, "truncate_date(born, 'year')", "DATE"),
    ("seen", {"method": "truncate_date", "unit": "quarter"}, "truncate_date(seen, 'quarter')", "DATE"),
    ("born", {"method": "age_in_years", "reference": datetime.date(2024, 6, 30)},
     "age_in_years(born, DATE '2024-06-30')", "INTEGER"),
    ("age", {"method": "recode_bands", "breaks": [0, 18, 65, 100]}, "recode_bands(age, [0, 18, 65, 100])", "VARCHAR"),
    ("age", {"method": "recode_bands", "breaks": [0, 18, 65, 100], "labels": ["young", "adult", "old"],
             "closed": "left"},
     "recode_bands(age, [0, 18, 65, 100], labels := ['young', 'adult', 'old'], closed := 'left')", "VARCHAR"),
    ("age", {"method": "top_code", "top": 80}, "top_code(age, 80)", "INTEGER"),
    ("age", {"method": "bottom_code", "bottom": 16, "replacement": 15}, "bottom_code(age, 16, 15)", "INTEGER"),
    ("income", {"method": "top_code", "top": 150000.5}, "top_code(income, 150000.5)", "DOUBLE"),
    ("age", {"method": "top_code", "top": 80.5}, "top_code(age, 80.5)::DOUBLE", "DOUBLE"),
    ("job", {"method": "merge_categories", "mapping": {"nurse": "health", "doctor": "health"}},
     "merge_categories(job, MAP {'nurse': 'health', 'doctor': 'health'})", "VARCHAR"),
    ("code", {"method": "merge_categories", "mapping": {"1": "low", "2": "low"}},
     "merge_categories(code, MAP {'1': 'low', '2': 'low'})", "VARCHAR"),
]


def _doc(folder: Path, rules: dict, **extra) -> dict:
    columns = {"id": {"rule": "keep", "identifying": False}, "born": "drop", "seen": "drop", "age": "drop",
               "income": "drop", "job": "drop", "code": "drop"}
    columns.update(rules)
    return {"source": {"database": str(folder / "src.duckdb"), "table": "people", "key": "id"},
            "output": {"database": str(folder / "out" / "release.duckdb"), "table": "people"},
            "columns": columns, **extra}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("recoding")
    _write(folder / "src.duckdb", _source())
    return folder


@pytest.fixture(scope="module")
def released(folder):
    """One release per case's column set: the cases grouped so that no column has two rules."""
    out = {}
    batches: list[dict[str, int]] = []
    for i, (col, _, _, _) in enumerate(CASES):
        batch = next((b for b in batches if col not in b), None)
        if batch is None:
            batch = {}
            batches.append(batch)
        batch[col] = i
    for j, batch in enumerate(batches):
        sub = folder / f"batch{j}"
        sub.mkdir()
        doc = _doc(folder, {col: dict(CASES[i][1]) for col, i in batch.items()})
        doc["output"]["database"] = str(sub / "release.duckdb")
        spec = parse_spec(doc, base=sub, name="s.toml")
        release(spec)
        con = duckdb.connect(str(sub / "release.duckdb"), read_only=True)
        types = dict(con.execute("SELECT column_name, data_type FROM information_schema.columns "
                                 "WHERE table_name = 'people'").fetchall())
        for col, i in batch.items():
            values = dict(con.execute(f'SELECT id, "{col}" FROM people').fetchall())
            rows = con.execute("SELECT * FROM release_manifest WHERE column_name = ?", [col]).df().to_dict("records")
            comment = con.execute("SELECT comment FROM duckdb_columns() WHERE table_name = 'people' AND column_name = ?",
                                  [col]).fetchone()[0]
            out[i] = (values, types[col], rows[0], comment, spec)
        con.close()
    return out


@pytest.mark.parametrize("i", range(len(CASES)), ids=[f"{c[0]}-{c[1]['method']}-{n}" for n, c in enumerate(CASES)])
def test_a_recoded_column_is_its_sql_function_on_the_source_with_nulls_in_place(folder, released, i):
    col, rule, sql, released_type = CASES[i]
    values, type_, _, _, _ = released[i]
    con = duckdb.connect()
    duckdb_sdc.register(con)
    con.execute(f"ATTACH '{folder / 'src.duckdb'}' AS src (READ_ONLY)")
    expected = dict(con.execute(f"SELECT id, {sql} FROM src.people").fetchall())
    source = dict(con.execute(f'SELECT id, "{col}" FROM src.people').fetchall())
    assert type_ == released_type
    assert len(values) == N and values == expected
    assert {k for k, v in values.items() if v is None} == {k for k, v in source.items() if v is None} != set()
    assert any(values[k] != source[k] for k in values if source[k] is not None)  # something was recoded


@pytest.mark.parametrize("i", range(len(CASES)), ids=[f"{c[0]}-{c[1]['method']}-{n}" for n, c in enumerate(CASES)])
def test_the_manifest_row_of_a_recoded_column(released, i):
    col, rule, _, released_type = CASES[i]
    _, _, row, comment, _ = released[i]
    record = recodings.RECODINGS[rule["method"]]
    assert row["rule"] == "recode" and row["method"] == rule["method"] and row["released_as"] == "value"
    params = {p.name: p.default_value for p in record.params}
    params.update({k: (v.isoformat() if isinstance(v, datetime.date) else v) for k, v in rule.items() if k != "method"})
    assert json.loads(row["parameters"]) == params
    assert row["privacy_model"] == "none" == record.guarantee.model
    assert row["guarantee"] == record.guarantee.sentence.format(method=rule["method"], columns=col)
    assert row["released_type"] == released_type and row["quasi_identifier"] is True
    assert comment == f"{rule['method']} (none): {row['guarantee']}" == manifest.column_comment(row)
    assert row["strata"] is None and pd.isna(row["epsilon"])


def test_the_guarantees_are_the_sql_functions_words():
    for name, record in recodings.RECODINGS.items():
        assert record.guarantee is g.FUNCTIONS[name] is g.of(name)
    assert g.RECODING.sentence.format(method="truncate_date", columns="born") == (
        "none: truncate_date recodes born by one rule for the whole column; the k-anonymity of the released "
        "combinations is measured by the release")


def test_a_recoding_without_a_guarantee_or_with_unknown_types_cannot_be_declared():
    with pytest.raises(Exception, match=r"recodings.register: recoding 'foo' states no guarantee \(guarantee = None\)"):
        recodings.Recoding("foo", frozenset({recodings.TEXT}), (), lambda t, p: "VARCHAR")
    with pytest.raises(Exception, match=r"recoding 'foo': accepts must name some of numbers, text, dates, got \['bits'\]"):
        recodings.Recoding("foo", frozenset({"bits"}), (), lambda t, p: "VARCHAR", g.RECODING)
    with pytest.raises(Exception, match="recoding 'truncate_date' is declared twice"):
        recodings.register(recodings.RECODINGS["truncate_date"])


def test_the_docs_table_of_recodings_is_the_records():
    page = (ROOT / "docs" / "methods" / "index.md").read_text()
    assert recodings.markdown() in page, "docs/methods/index.md: paste duckdb_sdc.recodings.markdown() again"
    assert recodings.markdown().count("\n| `") == len(recodings.RECODINGS)


def test_the_spec_pages_recoding_rules_parse(tmp_path):
    page = (ROOT / "docs" / "releases" / "spec.md").read_text()
    block = page.split("#### Global recoding", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
    columns = tomllib.loads(block)
    doc = {"source": {"database": "s.duckdb", "table": "t"}, "output": {"database": "o.duckdb", "table": "t"},
           "columns": columns}
    spec = parse_spec(doc, base=tmp_path)
    assert {c: r.recoding.name for c, r in spec.rules.items()} == {
        "birth_date": "truncate_date", "birth": "age_in_years", "age": "recode_bands", "income": "top_code",
        "region": "merge_categories"}


# ---------------------------------------------------------------------------------------------
# refusals before any SQL


def _refused(tmp_path, rule, column="age"):
    doc = _doc(tmp_path, {column: rule})
    with pytest.raises(SpecError) as e:
        parse_spec(doc, base=tmp_path, name="s.toml")
    return str(e.value)


@pytest.mark.parametrize("rule, message", [
    ({"method": "truncate_date", "unit": "year", "digits": 2},
     "s.toml: columns.age: truncate_date has no parameter 'digits'; its parameters: unit"),
    ({"method": "truncate_date"}, "s.toml: columns.age: truncate_date needs unit"),
    ({"method": "truncate_date", "unit": 3}, "s.toml: columns.age.unit: truncate_date expects VARCHAR, got 3"),
    ({"method": "truncate_date", "unit": "week"},
     "s.toml: columns.age.unit: truncate_date: unit must be one of 'month', 'quarter', 'year', got 'week' "
     "(got 'week')"),
    ({"method": "recode_bands", "breaks": [0, "x"]},
     "s.toml: columns.age.breaks: recode_bands expects DOUBLE[], got [0, 'x']"),
    ({"method": "recode_bands", "breaks": [10, 5]},
     "s.toml: columns.age.breaks: recode_bands: breaks must be strictly increasing, got 10 then 5 (got [10, 5])"),
    ({"method": "recode_bands", "breaks": [0]},
     "s.toml: columns.age.breaks: recode_bands: breaks must hold at least two numbers (one band), got 1 (got [0])"),
    ({"method": "recode_bands", "breaks": [0, float("inf")]},
     "s.toml: columns.age.breaks: recode_bands: breaks must be finite, got inf (got [0, inf])"),
    ({"method": "recode_bands", "breaks": [0, 18, 65], "labels": ["young"]},
     "s.toml: columns.age: recode_bands: labels must give one label per band (2), got 1"),
    ({"method": "recode_bands", "breaks": [0, 18], "closed": "both"},
     "s.toml: columns.age.closed: recode_bands: closed must be one of 'right', 'left', got 'both' (got 'both')"),
    ({"method": "top_code", "top": "high"}, "s.toml: columns.age.top: top_code expects DOUBLE, got 'high'"),
    ({"method": "top_code", "top": float("nan")},
     "s.toml: columns.age.top: top_code expects DOUBLE, got nan"),
    ({"method": "bottom_code", "bottom": 1, "replacement": True},
     "s.toml: columns.age.replacement: bottom_code expects DOUBLE, got True"),
    ({"method": "merge_categories", "mapping": {"a": 1}},
     "s.toml: columns.age.mapping: merge_categories expects MAP(VARCHAR, VARCHAR), got {'a': 1}"),
    ({"method": "merge_categories", "mapping": {}}, "s.toml: columns.age: merge_categories: mapping must name at "
                                                   "least one category"),
    ({"method": "age_in_years", "reference": "2024-06-30"},
     "s.toml: columns.age.reference: age_in_years expects DATE, got '2024-06-30'"),
    ({"method": "age_in_years", "reference": datetime.datetime(2024, 6, 30, 12)},
     "s.toml: columns.age.reference: age_in_years expects DATE, got datetime.datetime(2024, 6, 30, 12, 0)"),
])
def test_a_recoding_parameter_is_checked_against_its_kind(tmp_path, rule, message):
    assert _refused(tmp_path, rule) == message


def test_an_unknown_method_lists_the_recodings_and_a_group_cannot_recode(tmp_path):
    assert _refused(tmp_path, {"method": "truncate_dates", "unit": "year"}, column="born").endswith(
        "; recodings (one column): recode_bands, top_code, bottom_code, merge_categories, truncate_date, age_in_years")
    doc = _doc(tmp_path, {})
    doc["groups"] = [{"columns": ["born", "seen"], "method": "truncate_date", "unit": "year"}]
    del doc["columns"]["born"], doc["columns"]["seen"]
    with pytest.raises(SpecError) as e:
        parse_spec(doc, base=tmp_path, name="s.toml")
    assert str(e.value) == "s.toml: groups[0]: truncate_date recodes one column: declare it in [columns]"


def test_the_key_and_the_strata_cannot_be_recoded(tmp_path):
    assert _refused(tmp_path, {"method": "merge_categories", "mapping": {"1": "x"}}, column="id") == (
        "s.toml: columns.id: the row key can only be kept or dropped, not recoded")
    doc = _doc(tmp_path, {"job": {"method": "merge_categories", "mapping": {"nurse": "health"}},
                          "income": {"method": "mdav_round", "k": 5}}, masking={"strata": ["job"]})
    with pytest.raises(SpecError, match=r"^s.toml: columns.\w+: stratum column 'job' is recoded itself; strata "
                                        r"must be kept or dropped$"):
        parse_spec(doc, base=tmp_path, name="s.toml")


@pytest.mark.parametrize("column, type_, rule, words", [
    ("job", "VARCHAR", {"method": "truncate_date", "unit": "year"}, "truncate_date recodes dates"),
    ("born", "DATE", {"method": "top_code", "top": 3}, "top_code recodes numbers"),
    ("born", "DATE", {"method": "merge_categories", "mapping": {"a": "b"}}, "merge_categories recodes numbers or text"),
    ("age", "INTEGER", {"method": "age_in_years", "reference": datetime.date(2024, 1, 1)}, "age_in_years recodes dates"),
    ("flag", "BOOLEAN", {"method": "merge_categories", "mapping": {"true": "yes"}},
     "merge_categories recodes numbers or text"),
])
def test_a_recoding_of_a_column_of_another_type_is_refused_naming_it(tmp_path, column, type_, rule, words):
    doc = _doc(tmp_path, {column: rule})
    if column == "flag":
        doc["columns"]["flag"] = rule
    spec = parse_spec(doc, base=tmp_path, name="s.toml")
    columns = [("id", "BIGINT"), ("born", "DATE"), ("seen", "TIMESTAMP"), ("age", "INTEGER"), ("income", "DOUBLE"),
               ("job", "VARCHAR"), ("code", "BIGINT")] + ([("flag", "BOOLEAN")] if column == "flag" else [])
    with pytest.raises(SpecError) as e:
        resolve(spec, columns)
    assert str(e.value) == f"s.toml: columns.{column}: {words}, column {column!r} is {type_}"


def test_breaks_that_leave_a_value_outside_refuse_the_release_and_write_nothing(folder, tmp_path):
    doc = _doc(folder, {"age": {"method": "recode_bands", "breaks": [0, 18, 65]}})
    doc["output"]["database"] = str(tmp_path / "out" / "release.duckdb")
    with pytest.raises(Exception, match=r"recode_bands: breaks do not cover \d+, outside \[0, 65\]"):
        release(parse_spec(doc, base=tmp_path, name="s.toml"))
    assert not (tmp_path / "out" / "release.duckdb").exists()


def test_top_coding_an_integer_with_a_replacement_outside_its_type_releases_doubles(tmp_path):
    record = recodings.RECODINGS["top_code"]
    assert record.released_type("TINYINT", {"top": 100}) == "TINYINT"
    assert record.released_type("TINYINT", {"top": 100, "replacement": 1000}) == "DOUBLE"
    assert record.released_type("UTINYINT", {"top": -1}) == "DOUBLE"
    assert record.released_type("DECIMAL(5,2)", {"top": 1}) == "DOUBLE"
    assert record.released_type("FLOAT", {"top": 1}) == "DOUBLE"


# ---------------------------------------------------------------------------------------------
# the policy gate, the report, the ledger, Spark


def _births(folder: Path, n: int = 300, seed: int = 5) -> None:
    rng = np.random.default_rng(seed)
    born = pd.Timestamp("1960-01-01") + pd.to_timedelta(rng.choice(365 * 6, n, replace=False), unit="D")
    df = pd.DataFrame({"id": np.arange(1, n + 1), "born": born.date, "sex": rng.choice(["f", "m"], n)})
    df.loc[::31, "born"] = None
    con = duckdb.connect(str(folder / "births.duckdb"))
    con.register("d", df)
    con.execute("CREATE TABLE people AS SELECT id, born::DATE AS born, sex FROM d")
    con.close()


def test_a_raw_birth_date_fails_min_k_and_passes_truncated_to_the_year(tmp_path):
    _births(tmp_path)
    doc = {"source": {"database": str(tmp_path / "births.duckdb"), "table": "people", "key": "id"},
           "output": {"database": str(tmp_path / "out" / "births.duckdb"), "table": "people"},
           "columns": {"id": {"rule": "keep", "identifying": False}, "born": "keep", "sex": "keep"},
           "policy": {"min_k": 5}}
    with pytest.raises(Exception, match=r"k_anonymity = 1 breaches min_k = 5") as e:
        release(parse_spec(doc, base=tmp_path, name="raw.toml"))
    assert type(e.value).__name__ == "PolicyBreach"
    assert not (tmp_path / "out" / "births.duckdb").exists()
    doc["columns"]["born"] = {"method": "truncate_date", "unit": "year"}
    spec = parse_spec(doc, base=tmp_path, name="year.toml")
    release(spec)
    con = duckdb.connect(str(tmp_path / "births.duckdb"), read_only=True)
    classes = [n for (n,) in con.execute("SELECT count(*) FROM people GROUP BY year(born), sex").fetchall()]
    con.close()
    assert min(classes) >= 5
    df = report(spec)
    together = df[(df.measure == "k_anonymity") & df.column.isna()]
    assert float(together.value.iloc[0]) == min(classes)  # the gate's figure is the recoded column's
    out = duckdb.connect(str(tmp_path / "out" / "births.duckdb"), read_only=True)
    assert out.execute("SELECT min(n) FROM (SELECT count(*) n FROM people GROUP BY born, sex)").fetchone()[0] == min(classes)
    assert out.execute("SELECT count(*) FROM people WHERE born IS NOT NULL AND (month(born) <> 1 OR day(born) <> 1)"
                       ).fetchone()[0] == 0
    out.close()


def test_the_ledger_signature_of_a_recoded_column_is_its_recoding(tmp_path):
    doc = _doc(tmp_path, {"born": {"method": "truncate_date", "unit": "year"}})
    spec = parse_spec(doc, base=tmp_path)
    assert json.loads(ledger.signature(spec, "born")) == {"recode": "truncate_date", "parameters": {"unit": "year"}}
    other = parse_spec(_doc(tmp_path, {"born": {"method": "truncate_date", "unit": "month"}}), base=tmp_path)
    assert ledger.signature(other, "born") != ledger.signature(spec, "born")


def test_spark_refuses_a_recoding_before_spark_starts(folder):
    doc = _doc(folder, {"born": {"method": "truncate_date", "unit": "year"}})
    doc["output"]["database"] = str(folder / "spark_out")
    with pytest.raises(SpecError) as e:
        preflight.check(parse_spec(doc, base=folder, name="s.toml"))
    assert str(e.value) == ("s.toml: columns.born: method truncate_date (a global recoding) runs on the DuckDB "
                            "engine only; run the release with DuckDB")


def test_a_release_without_recodings_keeps_the_manifests_words(tmp_path):
    spec = parse_spec(_doc(tmp_path, {}), base=tmp_path)
    assert not any(r.action == "recode" for r in spec.rules.values())
    rule_words = manifest.MANIFEST_DESCRIPTIONS["rule"]
    assert rule_words == "'key', 'keep', 'drop' or 'mask'" and "recode" in manifest.RULE_WITH_RECODE
    assert dataclasses.is_dataclass(recodings.RECODINGS["truncate_date"])
