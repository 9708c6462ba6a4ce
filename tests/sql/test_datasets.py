"""The bundled reference data sets: duckdb_sdc.datasets.load and the SQL table macro sdc_dataset."""

from __future__ import annotations

import csv
import fnmatch
import tomllib
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from duckdb_sdc import SdcError, datasets
from duckdb_sdc.sql.datasets import read_csv_sql

ROOT = Path(__file__).resolve().parents[2]

# (rows, columns, the first record's first values, the sums of the first three numeric columns), read
# off the CSV files of sdcMicro's data folder once: a changed or truncated file fails here
FACTS = {
    "tarragona": (834, 13, [0, 0, 6670, 112349, 37500, 183077], [87852581, 175401893, 16140292]),
    "census": (1080, 13, [270914, 45554, 4173, 4621, 45527, 1428], [211722997, 60720579, 3426986]),
    "eia": (4092, 15, [0, "State Level Adjustment", "AK", 96, 1, 4776], [40780847, 392832, 26580]),
    "testdata": (4580, 15, [2, 4, 3, 3, 1, 1], [8514, 16859, 12837]),
    "free1": (4000, 34, [36.0, 1.0, 43.0, 4.0, 3.0, 0.0], [342099.0, 6041.0, 164258.0]),
}
PANDAS_TYPES = {"BIGINT": "int64", "DOUBLE": "float64", "VARCHAR": "str"}


def test_the_five_sets_are_declared():
    assert datasets.names() == ("tarragona", "census", "eia", "testdata", "free1")
    assert set(FACTS) == set(datasets.names())


@pytest.mark.parametrize("name", list(FACTS))
def test_load_returns_the_declared_columns_and_the_file_values(name):
    rows, cols, first, sums = FACTS[name]
    df = datasets.load(name)
    declared = datasets.DATASETS[name]
    assert df.shape == (rows, cols) == (declared.rows, len(declared.columns))
    assert [(c, str(t)) for c, t in df.dtypes.items()] == [(c, PANDAS_TYPES[t]) for c, t in declared.columns]
    assert df.iloc[0].tolist()[:6] == first
    assert df.select_dtypes("number").sum().iloc[:3].tolist() == sums
    assert not df.isna().any().any()
    # the header of the file is the declared column list, in order
    with datasets.path(name).open(newline="") as f:
        assert next(csv.reader(f)) == [c for c, _ in declared.columns]


@pytest.mark.parametrize("name", list(FACTS))
def test_sdc_dataset_returns_the_same_table_as_load(con, name):
    table = con.execute(f"FROM sdc_dataset('{name}')").df()
    pd.testing.assert_frame_equal(table, datasets.load(name), check_exact=True)
    types = con.execute(f"SELECT column_name, column_type FROM (DESCRIBE FROM sdc_dataset('{name}'))").fetchall()
    assert types == list(datasets.DATASETS[name].columns)


def test_names_are_case_insensitive(con):
    assert con.execute("SELECT count(*) FROM sdc_dataset('Tarragona')").fetchall() == [(834,)]
    assert len(datasets.load("EIA")) == 4092


def test_the_example_of_the_reference(con):
    assert con.execute("SELECT count(*) FROM sdc_dataset('tarragona')").fetchall() == [(834,)]
    # a bundled set is masked like any table
    con.execute("CREATE TABLE firms AS FROM sdc_dataset('tarragona')")
    sizes = con.execute("SELECT count(*) FROM mdav_round_table('firms', 'SALES', 5) GROUP BY SALES").fetchall()
    assert min(n for (n,) in sizes) >= 5 and sum(n for (n,) in sizes) == 834


@pytest.mark.parametrize("arg, message", [
    ("'nope'", "sdc_dataset: name must be one of 'tarragona', 'census', 'eia', 'testdata', 'free1', got 'nope'"),
    ("NULL", "sdc_dataset: name must not be NULL"),
    ("42", "sdc_dataset: name must be a VARCHAR, got INTEGER"),
    ("['eia']", "sdc_dataset: name must be a VARCHAR, got VARCHAR[]"),
])
def test_sdc_dataset_refuses_other_names(con, arg, message):
    with pytest.raises(duckdb.Error) as raised:
        con.execute(f"FROM sdc_dataset({arg})").fetchall()
    assert message in str(raised.value)


@pytest.mark.parametrize("name", ["nope", None, 3, ""])
def test_load_refuses_other_names(name):
    with pytest.raises(SdcError) as raised:
        datasets.load(name)
    assert str(raised.value) == ("datasets.load: name must be one of 'tarragona', 'census', 'eia', 'testdata', "
                                 f"'free1', got {name!r}")
    with pytest.raises(SdcError, match=r"^datasets\.path: name must be one of"):
        datasets.path(name)


def test_a_plain_duckdb_reads_the_files_with_the_generated_query():
    plain = duckdb.connect()
    for name in datasets.names():
        assert plain.execute(f"SELECT count(*) FROM ({read_csv_sql(name)})").fetchall() == [(FACTS[name][0],)]
    plain.close()


def test_the_shared_data_fixture_is_the_bundled_folder(shared_data):
    assert shared_data == datasets.path("census").parent
    assert sorted(p.name for p in shared_data.glob("*.csv")) == sorted(d.file for d in datasets.DATASETS.values())
    assert "sdcMicro" in (shared_data / "ORIGIN.md").read_text() and "GPL-2" in (shared_data / "ORIGIN.md").read_text()


def test_the_files_are_package_data():
    """A wheel holds what pyproject.toml declares: the package and every file the datasets need."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "duckdb_sdc.datasets" in config["packages"]
    patterns = config["package-data"]["duckdb_sdc.datasets"]
    folder = ROOT / "duckdb_sdc" / "datasets"
    for needed in [d.file for d in datasets.DATASETS.values()] + ["ORIGIN.md"]:
        assert (folder / needed).is_file() and any(fnmatch.fnmatch(needed, p) for p in patterns), needed


def test_no_test_or_example_reads_the_data_next_to_the_repository():
    """Nothing outside the package is needed: no path to ../shared in tests or examples."""
    needles = ("/".join(("..", "shared", "data")), " / ".join(('"shared"', '"data"')))
    offenders = [p.name for folder in ("tests", "examples") for p in (ROOT / folder).rglob("*.py")
                 if any(n in p.read_text() for n in needles)]
    assert offenders == []
