from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import duckdb_sdc
from duckdb_sdc import datasets


@pytest.fixture
def con():
    connection = duckdb_sdc.connect()
    yield connection
    connection.close()


@pytest.fixture
def shared_data() -> Path:
    """The folder of the reference microdata sets bundled in the package (duckdb_sdc.datasets), with
    their sdcMicro file names (Tarragona.csv, CASCrefmicrodata.csv, EIA.csv, testdata.csv, free1.csv):
    present in every clone and every installation, so no test skips."""
    return datasets.path("tarragona").parent


@pytest.fixture
def people(con):
    """Table people(id, region, income BIGINT) of 600 records, 25 incomes NULL; returns the frame (NaN
    for NULL). Test modules that need other columns define their own."""
    rng = np.random.default_rng(0)
    n = 600
    df = pd.DataFrame({
        "id": np.arange(n),
        "region": rng.choice(["north", "south", "east"], n),
        "income": np.round(rng.lognormal(10, 0.8, n)),
    })
    df.loc[rng.choice(n, 25, replace=False), "income"] = np.nan  # NULLs in the table
    con.execute("CREATE TABLE people AS SELECT id, region, income::BIGINT AS income FROM df")
    return df
