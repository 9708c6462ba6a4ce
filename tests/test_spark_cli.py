"""`duckdb-sdc release spec.toml --engine spark`: the release folder, the summary line, the exit codes
(run in-process, on the test run's Spark session)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from spark_helpers import read_release, spark, write_parquet  # noqa: F401 (fixture)

from duckdb_sdc import cli

SPEC = """
[source]
files = "people.parquet"
key = "id"

[output]
database = "out/release"
table = "people"

[columns]
id = {{ rule = "keep", identifying = false }}
x = {{ method = "mdav_round", k = {k} }}
"""


def _source(folder: Path) -> pd.DataFrame:
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"id": np.arange(50, dtype=np.int64), "x": np.round(rng.normal(10, 2, 50), 1)})
    write_parquet(df, folder / "people.parquet")
    return df


def test_release_with_the_spark_engine(tmp_path, spark, capsys):
    _source(tmp_path)
    (tmp_path / "spec.toml").write_text(SPEC.format(k=5))
    assert cli.main(["release", str(tmp_path / "spec.toml"), "--engine", "spark", "--master", "local[2]"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("released 50 rows x 2 columns (1 masked: x) with Spark to ") and "out/release" in out
    assert read_release(tmp_path / "out" / "release", "people")["x"].nunique() <= 10


def test_a_spark_release_error_is_one_line_and_exit_code_2(tmp_path, spark, capsys):
    _source(tmp_path)
    (tmp_path / "spec.toml").write_text(SPEC.format(k=60))
    assert cli.main(["release", str(tmp_path / "spec.toml"), "--engine", "spark"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["duckdb-sdc release: error: spec.toml: columns.x: mdav_round: k = 60 is larger than the number "
                   "of non-NULL values (50)"]
    assert list((tmp_path / "out").iterdir()) == []  # no release, no hidden leftovers


def test_dry_run_is_refused_for_spark(tmp_path, capsys):
    _source(tmp_path)
    (tmp_path / "spec.toml").write_text(SPEC.format(k=5))
    assert cli.main(["release", str(tmp_path / "spec.toml"), "--engine", "spark", "--dry-run"]) == 2
    assert "a Spark release has no script to print" in capsys.readouterr().err
