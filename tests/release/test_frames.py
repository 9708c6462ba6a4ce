"""Releases of data frames (duckdb_sdc.frames): a pandas, polars or Arrow frame goes through the same
release as a file (same masked values, manifest, policy gate, secret order), missing values are what
the frame's library says they are, and what cannot be released is refused with a clear message."""

from __future__ import annotations

import copy

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from release_helpers import people, write_db, write_spec

import duckdb_sdc
from duckdb_sdc import SdcError
from duckdb_sdc.cli import main
from duckdb_sdc.frames import frame_spec
from duckdb_sdc.release import PolicyBreach, SpecError, format_report, load_spec, release, report
from duckdb_sdc.release.manifest import MANIFEST_COLUMNS

DOC = {
    "source": {"frame": "people", "key": "id"},
    "output": {"database": "out/release.duckdb", "table": "people", "linkage": "private/link.duckdb"},
    "masking": {"strata": ["region"]},
    "columns": {"id": "drop", "region": "keep", "age": "keep", "note": "drop",
                "income": {"method": "mdav_round", "k": 5}, "expenses": {"method": "oma_round", "k": 4}},
}
KINDS = {"pandas": lambda df: df, "polars": pl.from_pandas, "arrow": lambda df: pa.Table.from_pandas(df)}


def _doc(**source):
    doc = copy.deepcopy(DOC)
    if source:
        doc["source"] = {"key": "id", **source}
    return doc


def _read(path, query):
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def _manifest(path):
    names = [n for n, _ in MANIFEST_COLUMNS if n not in ("source", "spec", "release_id", "created_at")]
    return _read(path, f"SELECT {', '.join(names)} FROM release_manifest ORDER BY column_name")


@pytest.fixture(scope="module")
def from_file(tmp_path_factory):
    """The same records released from a DuckDB file, the reference every frame release must equal."""
    folder = tmp_path_factory.mktemp("file")
    df = people(300)
    write_db(folder / "src.duckdb", "people", df)
    spec = load_spec(write_spec(folder, _doc(database="src.duckdb", table="people")))
    path = release(spec).path
    return df, spec, path


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_frame_release_is_the_file_release_of_the_same_records(kind, from_file, tmp_path):
    df, file_spec, file_release = from_file
    spec = write_spec(tmp_path, DOC)
    result = duckdb_sdc.release_frame(KINDS[kind](df), spec)
    assert (result.rows, result.columns, result.masked) == (300, 4, ["income", "expenses"])
    query = "SELECT * FROM people ORDER BY ALL"
    assert _read(result.path, query) == _read(file_release, query)
    assert _manifest(result.path) == _manifest(file_release)
    assert _read(result.path, "SELECT DISTINCT source FROM release_manifest") == [(f"{kind} data frame 'people'",)]
    # NULL incomes (NaN in the pandas frame, null in the others) stay NULL, in place
    assert _read(result.path, "SELECT count(*) FROM people WHERE income IS NULL") == [(int(df["income"].isna().sum()),)]
    # the report of the frame release is the report of the file release
    frame_report = report(frame_spec(KINDS[kind](df), spec))
    assert format_report(frame_report) == format_report(report(file_spec))


def test_rows_are_in_a_secret_order_and_the_comments_are_written(tmp_path):
    df = people(300)
    doc = _doc(frame="people")
    doc["columns"]["id"] = {"rule": "keep", "identifying": False}
    spec = write_spec(tmp_path, doc)
    orders = []
    for _ in range(2):
        path = duckdb_sdc.release_frame(df, spec).path
        orders.append([r[0] for r in _read(path, "SELECT id FROM people")])
    assert sorted(orders[0]) == list(range(1, 301))
    assert orders[0] != sorted(orders[0]) and orders[0] != orders[1]
    assert _read(path, "SELECT comment FROM duckdb_tables() WHERE table_name = 'people'")[0][0].startswith(
        "Masked release of pandas data frame 'people', written by duckdb-sdc")


def test_the_policy_gate_refuses_a_frame_release_and_nothing_is_written(tmp_path):
    doc = _doc(frame="people")
    doc["policy"] = {"min_k": 50}
    with pytest.raises(PolicyBreach, match="k_anonymity = 1 breaches min_k = 50"):
        duckdb_sdc.release_frame(people(300), write_spec(tmp_path, doc))
    assert [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "spec.toml"] == []


def test_the_frame_is_read_once_when_the_release_starts(tmp_path):
    df = people(100)
    spec = frame_spec(df, write_spec(tmp_path, DOC))
    df.loc[:, "income"] = 1.0  # after binding, before releasing: the release reads the frame now
    path = release(spec).path
    assert _read(path, "SELECT count(DISTINCT income) FROM people") == [(1,)]


# ---------------------------------------------------------------------------------------------
# missing values: what the frame's library calls missing

def _kept_doc(columns):
    doc = {"source": {"frame": "t"}, "output": {"database": "out/r.duckdb", "table": "t"},
           "columns": {c: "keep" for c in columns}}
    doc["columns"]["x"] = {"method": "mdav_round", "k": 2}
    return doc


def test_pandas_missing_values_are_null_exactly_where_isna_says():
    frame = pd.DataFrame({
        "x": [1.0, np.nan, 3.0, 4.0, np.nan, 6.0],                                           # NumPy float64
        "f32": np.array([np.nan, 1, 2, 3, 4, 5], dtype=np.float32),
        "nullable": pd.array([1.5, None, 2.5, None, 3.5, 4.5], dtype="Float64"),
        "ints": pd.array([1, None, 3, 4, 5, None], dtype="Int64"),
        "objects": pd.Series([1.5, None, np.nan, 2.5, 3.5, 4.5], dtype=object),
        "text": pd.Series(["a", None, "c", np.nan, "e", "f"]),
        "day": pd.to_datetime(["2020-01-01", None, "2020-01-03", None, "2020-01-05", "2020-01-06"]),
        "row": range(6),
    })
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        spec = write_spec(Path(folder), _kept_doc([c for c in frame.columns if c != "x"]))
        path = duckdb_sdc.release_frame(frame, spec).path
        names = [c for c in frame.columns if c != "row"]
        got = _read(path, f"SELECT row, {', '.join(f'{c} IS NULL' for c in names)} FROM t ORDER BY row")
    assert [list(r[1:]) for r in got] == frame[names].isna().to_numpy().tolist()
    assert frame[names].isna().to_numpy().sum() == 13


def test_nan_that_is_a_value_reaches_the_masking_and_is_refused(tmp_path):
    """In polars, Arrow and pyarrow-backed pandas columns NaN is a number, not a missing value."""
    nan_frames = {
        "polars": pl.DataFrame({"x": [1.0, float("nan"), 3.0, None]}),
        "arrow": pa.table({"x": pa.array([1.0, float("nan"), 3.0, None])}),
        "pandas, pyarrow-backed": pd.DataFrame({"x": pd.Series(pa.array([1.0, float("nan"), 3.0, None]),
                                                               dtype=pd.ArrowDtype(pa.float64()))}),
    }
    spec = write_spec(tmp_path, _kept_doc([]))
    for kind, frame in nan_frames.items():
        with pytest.raises(SpecError, match=r"columns\.x: mdav_round: xs contains nan; NaN and infinite values are "
                                            r"refused \(use NULL for a missing value\)"):
            duckdb_sdc.release_frame(frame, spec)
        assert [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "spec.toml"] == [], kind
    # the null beside it is missing: without the NaN the release goes through, NULL in place
    path = duckdb_sdc.release_frame(pl.DataFrame({"x": [1.0, 2.0, 3.0, None]}), spec).path
    assert _read(path, "SELECT count(x), count(*) FROM t") == [(3, 4)]


def test_the_numpy_layer_still_refuses_nan():
    from duckdb_sdc import methods

    with pytest.raises(SdcError, match="mdav_round: x contains nan; NaN and infinite values are refused"):
        methods.mdav_round(np.array([1.0, np.nan, 3.0, 4.0]), 2)


# ---------------------------------------------------------------------------------------------
# what is refused

@pytest.mark.parametrize("frame, message", [
    ([1, 2, 3], "release_frame: frame must be a data frame, got a builtins.list; pass a pandas DataFrame"),
    (pl.DataFrame({"x": [1.0]}).lazy(), r"got a polars\..*LazyFrame: collect it first \(frame.collect\(\)\)"),
    (pd.DataFrame({"x": [1.0, 2.0]}).rename_axis("person_id"),
     r"frame has a named index \('person_id'\), whose values a release does not read; make it columns with "
     r"frame.reset_index\(\)"),
    (pd.DataFrame({0: [1.0], 1: [2.0]}), r"frame has column names that are not text: \[0, 1\]"),
    (pd.DataFrame([[1.0, 2.0]], columns=["x", "x"]), "frame has columns named twice: 'x'"),
])
def test_what_cannot_be_released_is_refused_clearly(frame, message, tmp_path):
    with pytest.raises(SdcError, match=message):
        duckdb_sdc.release_frame(frame, write_spec(tmp_path, _kept_doc([])))


def test_a_spec_that_reads_files_is_not_a_frame_spec_and_the_cli_cannot_release_a_frame(tmp_path, capsys):
    doc = _doc(files=["people.csv"])
    with pytest.raises(SdcError, match=r"release_frame: spec.toml: \[source\] reads files; a spec for a frame says "
                                       r"\[source\] frame = \"<a name for it>\""):
        duckdb_sdc.release_frame(people(20), write_spec(tmp_path, doc))
    with pytest.raises(SpecError, match=r"source: a frame source reads the frame it is given; files apply to"):
        load_spec(write_spec(tmp_path, _doc(frame="people", files=["people.csv"])))
    assert main(["release", str(write_spec(tmp_path, DOC))]) == 2
    assert ("source.frame: the source is a data frame ('people'), which a spec file cannot hold; release it from "
            "Python: duckdb_sdc.release_frame(frame, spec)") in capsys.readouterr().err


def test_a_spec_as_a_parsed_document(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = duckdb_sdc.release_frame(people(50), copy.deepcopy(DOC))
    assert result.path == tmp_path / "out" / "release.duckdb" and result.rows == 50
    with pytest.raises(SdcError, match="release_frame: spec must be a Spec, the path of a TOML spec or a parsed TOML "
                                       "document"):
        duckdb_sdc.release_frame(people(50), 42)
